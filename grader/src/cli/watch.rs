//! `grader watch`: re-grade an exercise whenever one of its .cu files is saved.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::ValueEnum as _;
use grader::grade::BackendChoice;
use grader::{registry, student};

#[derive(clap::Args)]
pub struct Args {
    /// The exercise graded at the start (default: wait for a save).
    pub exercise: Option<String>,
    #[arg(long)]
    root: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
}

pub fn run(Args { exercise, root, backend }: Args) -> Result<ExitCode> {
    let root = super::root_or_default(root)?;
    let first = exercise.map(|e| registry::select(&[e])).transpose()?;
    let first = first.and_then(|v| v.first().and_then(|e| student::exercises().iter().find(|a| a.id == e.id)));
    let backend = backend.to_possible_value().expect("named").get_name().to_string();
    student::watch::run(student::watch::Options {
        root,
        first,
        exe: std::env::current_exe().context("finding the grader's own binary")?,
        grade_args: vec!["--backend".into(), backend],
    })?;
    Ok(ExitCode::SUCCESS)
}
