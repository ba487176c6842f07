//! `grader gpu-load`: a noisy neighbour for trying grading on a shared GPU.

use std::process::ExitCode;

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// How long (at most a day).
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
}

pub fn run(Args { seconds }: Args) -> Result<ExitCode> {
    let done = grader::gpu_load::run(seconds, &mut |line| println!("{line}"))?;
    println!(
        "gpu-load: stopped after {:.1} s, {}, {:.0} GB/s on average",
        done.seconds,
        grader::words::count(done.launches as usize, "copy"),
        done.gbps
    );
    Ok(ExitCode::SUCCESS)
}
