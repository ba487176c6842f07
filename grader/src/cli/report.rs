//! `grader report`: a grades JSON (or a batch's submissions/<key>.json) as a
//! course platform's results.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::format::{write_format, Format, Printed};

#[derive(clap::Args)]
pub struct Args {
    json: PathBuf,
    #[arg(long, value_enum)]
    format: Format,
    /// As for the grading run.
    #[arg(long)]
    github_output: Option<PathBuf>,
    /// As for the grading run (default: results.json, or junit.xml, in the current folder).
    #[arg(long)]
    results: Option<PathBuf>,
    /// Also write the HTML report with pictures here (e.g. for a CI artifact).
    #[arg(long)]
    html: Option<PathBuf>,
    /// As for the grading run.
    #[arg(long, value_enum)]
    maximum: Option<grader::platforms::Maximum>,
    /// Where cuda-lab.toml is read from (default: the current folder when
    /// it holds the exercises, else the workspace).
    #[arg(long)]
    root: Option<PathBuf>,
}

pub fn run(Args { json, format, github_output, results, html, maximum, root }: Args) -> Result<ExitCode> {
    let report = super::read_grades(&json)?;
    let root = super::root_or_default(root)?;
    let maximum = grader::platforms::config::maximum(&root, maximum)?;
    let grade = grader::platforms::Grade::of(&report, maximum);
    // First: Autolab's autoresult must stay the last line printed.
    if let Some(path) = html {
        super::write_html(&report, &PathBuf::from(&report.source_root), &path);
    }
    let results = results.unwrap_or_else(|| PathBuf::from(format.default_file()));
    write_format(&grade, format, github_output, &results, Printed::Nothing)?;
    Ok(ExitCode::SUCCESS)
}
