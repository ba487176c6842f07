//! `grader hint`: the next hint for the first failing check of an exercise (or of one part).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use grader::{registry, student};

#[derive(clap::Args)]
pub struct Args {
    pub exercise: String,
    pub part: Option<String>,
    #[arg(long)]
    root: Option<PathBuf>,
}

pub fn run(Args { exercise, part, root }: Args) -> Result<ExitCode> {
    let root = super::root_or_default(root)?;
    let ex = registry::select(&[exercise])?;
    let ex = student::exercises().iter().find(|a| a.id == ex[0].id).expect("selected from all");
    print!("{}", student::hint::next_hint(&root, ex, part.as_deref())?);
    Ok(ExitCode::SUCCESS)
}
