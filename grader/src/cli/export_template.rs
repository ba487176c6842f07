//! `grader export-template DIR`: the students' template repository (no reference solutions).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use grader::{registry, template};

#[derive(clap::Args)]
pub struct Args {
    dir: PathBuf,
    /// The exercises its Classroom workflow grades, e.g. `ex01,ex02`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    exercises: Vec<String>,
    /// The workspace to export (default: as for grading).
    #[arg(long)]
    root: Option<PathBuf>,
}

pub fn run(Args { dir, exercises, root }: Args) -> Result<ExitCode> {
    let exercises = registry::select(&exercises)?;
    let root = super::root_or_default(root)?;
    let done = template::export(&root, &dir, &exercises)?;
    println!(
        "template written to {}: {}, {} KiB",
        dir.display(),
        grader::words::count(done.files, "file"),
        done.bytes / 1024
    );
    Ok(ExitCode::SUCCESS)
}
