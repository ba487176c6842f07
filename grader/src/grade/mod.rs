//! One grading run: compile every selected part, turn every check into a
//! libtest-mimic trial, run them, and score what came back.
//!
//! Split by concern, each file one step a reader may want to change alone:
//! `environment` finds the GPU and the compiler, `compile` compiles the
//! student's files, `start` turns checks into trials and runs them,
//! `trial` is one check's trial, `profile` gathers the simulator's memory
//! profiles, `finish` folds the sanitizer pass, the policy and the scores
//! into the report, and `no_compiler` is the run where nothing compiles.
//! What a failure's verdict is lives in `crate::verdict`.

mod compile;
mod environment;
mod finish;
mod no_compiler;
pub mod profile;
mod side_by_side;
mod start;
mod trial;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use kit::Exercise;
use libtest_mimic::{Arguments, Conclusion};

use crate::policy::Policy;
use crate::report::GradeReport;
use crate::sanitize::Sanitize;

pub use compile::{compile_options, compile_stuck, COMPILE_TIMEOUT_ENV};
pub use environment::{keep_environment, PTX_CACHE_ENV};
pub use finish::Pending;
pub use no_compiler::{nothing_compiled, EXIT_NO_COMPILER};
pub use profile::{Clock, PartTime};
pub use start::start;

/// Which machine runs the kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// The GPU if there is one, otherwise the simulator.
    Auto,
    /// A CUDA GPU; fail if there is none.
    Cuda,
    /// The PTX simulator on the CPU: no timing, but races and memory profiles.
    Sim,
    /// Compile and check structure only; run nothing.
    None,
    /// For tests of the sanitizer pass: the simulator without race detection
    /// plays a GPU whose race fell the right way, and the pass must catch it.
    #[value(name = "lucky-sim", hide = true)]
    LuckySim,
}

pub struct Options {
    /// Folder holding `exercises/` (the student's work) and `reference/`.
    pub root: PathBuf,
    /// Folder under `root` whose `<exercise folder>/<part file>` are graded:
    /// `exercises` (the student's work), `reference`, or a calibration variant.
    pub sources: String,
    pub seed: u64,
    pub backend: BackendChoice,
    /// How long one kernel may run before it is declared stuck.
    pub timeout: Duration,
    pub test_args: Arguments,
    /// Whether a GPU grade also replays the correctness cases on the simulator.
    pub sanitize: Sanitize,
    /// What performance checks mean where kernels cannot be timed.
    pub policy: Policy,
    /// Where performance thresholds come from on a GPU (`--calibration`).
    pub calibration: crate::calibrate::Choice,
    /// How timed checks give their points (`--credit`; else the course's cuda-lab.toml).
    pub credit: Option<crate::credit::Credit>,
}

/// Compiles, runs and scores `exercises`. Prints as it goes; with
/// `CUDA_LAB_PROFILE=1`, where the run's time went (to stderr), in the same
/// buckets as a batch part's.
pub fn run(exercises: &[Exercise], opts: &Options) -> Result<(GradeReport, Conclusion)> {
    let mut clock = Clock::start();
    let pending = start(exercises, opts)?;
    clock.checked();
    let finish_started = std::time::Instant::now();
    let (report, conclusion) = pending.finish();
    if profile::wanted() && !exercises.is_empty() {
        let time = clock.finished(finish_started, &report);
        eprint!("{}", time.table());
        if time.named() > 1.05 * time.wall {
            // Only where checks ran on several threads (side_by_side): a batch part runs on one.
            eprintln!(
                "  (parts and correctness cases ran side by side on the simulator: the buckets are seconds summed \
                 over their threads)"
            );
        }
    }
    Ok((report, conclusion))
}
