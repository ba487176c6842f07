//! `grader class-report OUT`: OUT/class-report.html from a batch's output folder.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use grader::batch::gradebook;

use super::lms::LmsArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The batch's output folder (with gradebook.json).
    out: PathBuf,
    /// Students' names in the leaderboards (default: anonymous keys).
    #[arg(long)]
    names: bool,
    /// No leaderboards (a course turns them off with `[class-report] leaderboard = false` in cuda-lab.toml).
    #[arg(long)]
    no_leaderboard: bool,
    /// The course's folder: stubs and reference for similarity and the memory lessons, cuda-lab.toml.
    #[arg(long)]
    root: Option<PathBuf>,
    #[command(flatten)]
    lms: LmsArgs,
}

pub fn run(Args { out, names, no_leaderboard, root, lms }: Args) -> Result<ExitCode> {
    let opts = grader::class_report::Options {
        names,
        leaderboard: no_leaderboard.then_some(false),
        root: root.or_else(|| super::default_root().ok()),
        exe: None,
    };
    gradebook::write_parts_csv(&out)?;
    let path = grader::class_report::write(&out, &opts)?;
    println!("class report: {}", path.display());
    lms.write(&out)?;
    Ok(ExitCode::SUCCESS)
}
