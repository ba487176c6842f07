//! `grader make-class DIR` (hidden): a class of submissions (reference, stubs,
//! broken variants) for tests and throughput runs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use grader::{batch, registry};

#[derive(clap::Args)]
pub struct Args {
    dir: PathBuf,
    #[arg(long, default_value_t = 50)]
    students: usize,
    #[arg(long, default_value = "all", value_delimiter = ',')]
    exercises: Vec<String>,
    #[arg(long)]
    root: Option<PathBuf>,
    /// Give every student's kernels a PTX of their own (a device variable
    /// named after the student), so that no cache shares work between
    /// students, as in a class whose students all wrote their own kernels.
    #[arg(long)]
    distinct: bool,
}

pub fn run(Args { dir, students, exercises, root, distinct }: Args) -> Result<ExitCode> {
    let exercises = registry::select(&exercises)?;
    let root = super::root_or_default(root)?;
    let class = batch::make_class::generate(&root, &dir, students, &exercises, distinct)?;
    println!(
        "{} in {} (variants listed in {})",
        grader::words::count(class.len(), "submission"),
        dir.display(),
        dir.join(".class.json").display()
    );
    Ok(ExitCode::SUCCESS)
}
