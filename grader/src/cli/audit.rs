//! `grader audit`: regrade a class and list every score Classroom recorded
//! that differs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use grader::batch;

use super::batch::BatchArgs;

#[derive(clap::Args)]
pub struct Args {
    /// How to regrade: DIR holds the downloaded repositories (docs/classroom.md).
    #[command(flatten)]
    batch: BatchArgs,
    /// Classroom's grades CSV of the assignment (the assignment page's download).
    #[arg(long)]
    classroom_csv: PathBuf,
    /// Points by which a recorded score may differ from the regrade.
    #[arg(long, default_value_t = grader::audit::DEFAULT_TOLERANCE)]
    tolerance: f64,
}

/// Exit status 1 when the audit finds a difference, 2 when it cannot run.
pub fn run(args: Args) -> Result<ExitCode> {
    let out = args.batch.out.clone().unwrap_or_else(|| batch::default_out(&args.batch.dir).with_file_name("audit"));
    let batch = batch::Options { shard: None, ..super::batch::batch_options(args.batch, out)? };
    if !batch.dir.is_dir() {
        anyhow::bail!("{} is not a folder of repositories", batch.dir.display());
    }
    let opts = grader::audit::Options { batch, classroom_csv: args.classroom_csv, tolerance: args.tolerance };
    let audit = grader::audit::run(&opts)?;
    print!("{audit}");
    println!("  written to {}", opts.batch.out.join("audit.json").display());
    Ok(if audit.is_clean() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
