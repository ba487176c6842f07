//! `grader merge`: combine the gradebooks of several shards (or batches) into one.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use grader::batch::gradebook;

use super::lms::LmsArgs;

#[derive(clap::Args)]
pub struct Args {
    /// The gradebook.json of each shard.
    #[arg(required = true)]
    gradebooks: Vec<PathBuf>,
    /// Where the combined gradebook.json and gradebook.csv go.
    #[arg(long)]
    out: PathBuf,
    /// Merge even when shards are missing (their students are left out).
    #[arg(long)]
    partial: bool,
    #[command(flatten)]
    lms: LmsArgs,
}

pub fn run(Args { gradebooks, out, partial, lms }: Args) -> Result<ExitCode> {
    if !partial {
        gradebook::check_all_shards(&gradebooks)?;
    }
    let merged = gradebook::merge(&gradebooks, &out)?;
    println!(
        "{} from {} in {}",
        grader::words::count(merged.students.len(), "student"),
        grader::words::count(gradebooks.len(), "gradebook"),
        out.join(gradebook::CSV_NAME).display()
    );
    // The whole class's report (similarity needs the shards' staged files: none here).
    grader::class_report::after_batch(&out);
    lms.write(&out)?;
    Ok(ExitCode::SUCCESS)
}
