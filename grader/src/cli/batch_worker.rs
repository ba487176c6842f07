//! `grader batch-worker` (hidden): grade parts sent as JSON lines on stdin,
//! one process for many (started by `grader batch`).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use grader::batch;
use grader::grade::BackendChoice;
use grader::policy::{self, Audience};

use super::grading_flags::GradingFlags;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    seed: u64,
    #[arg(long, value_enum)]
    backend: BackendChoice,
    #[arg(long)]
    timeout: f64,
    #[command(flatten)]
    grading: GradingFlags,
}

pub fn run(Args { seed, backend, timeout, grading }: Args) -> Result<ExitCode> {
    // The batch passes its resolved policy as the flag, so the course file is not read again.
    let policy = policy::resolve(Path::new("."), grading.perf_without_gpu, Audience::Gradescope)?;
    let settings = batch::worker::Settings {
        seed,
        backend,
        timeout: Duration::from_secs_f64(timeout),
        sanitize: grading.sanitize,
        policy,
        calibration: grading.calibration,
        credit: grading.credit,
    };
    batch::worker::serve(&settings)?;
    Ok(ExitCode::SUCCESS)
}
