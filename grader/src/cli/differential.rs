//! `grader differential` (hidden): the differential corpus on one backend, one
//! output digest per buffer, for compare-digests.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use grader::grade::BackendChoice;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_enum)]
    backend: BackendChoice,
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    root: Option<PathBuf>,
}

pub fn run(Args { backend, out, seed, root }: Args) -> Result<ExitCode> {
    let root = super::root_or_default(root)?;
    let passed = grader::differential::command(&root, backend, seed, &out)?;
    Ok(if passed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
