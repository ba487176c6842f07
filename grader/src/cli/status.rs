//! `grader status` (and `grader` alone): every exercise and part with its last result.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use grader::student;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    pub root: Option<PathBuf>,
}

pub fn run(Args { root }: Args) -> Result<ExitCode> {
    let root = super::root_or_default(root)?;
    let results = student::status::last_results(&root.join("target").join("grades"));
    print!("{}", student::status::render(student::exercises(), &results, &root));
    Ok(ExitCode::SUCCESS)
}
