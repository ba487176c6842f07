//! The flags that say how a grade is judged, shared by a single run, a batch
//! (which passes them on to every child) and a batch's workers.

use grader::policy::PerfWithoutGpu;
use grader::sanitize::Sanitize;

/// How a grade is judged, for a single run and for every child of a batch.
#[derive(clap::Args, Clone)]
pub struct GradingFlags {
    /// On a GPU, also run every correctness case that fits the simulator on
    /// ptx-sim (on the other CPU cores): a race, an out-of-bounds access or an
    /// uninitialised read it finds fails the test, even where the GPU's
    /// numbers came out right.
    #[arg(long, value_enum, default_value_t = Sanitize::On)]
    pub sanitize: Sanitize,
    /// What performance checks count for where kernels cannot be timed (the
    /// simulator, no GPU). Default: cuda-lab.toml, else `exclude` (`simulate`
    /// with --format gradescope and in batches).
    #[arg(long, value_enum)]
    pub perf_without_gpu: Option<PerfWithoutGpu>,
    /// Where performance thresholds come from on a GPU: `auto` (this GPU
    /// model's calibration under calibration/ or in the cache, else the nearest
    /// model's), `off` (the constants compiled into the exercises), a
    /// calibration file, or a folder of them (docs/grading-accuracy.md).
    #[arg(long, default_value = "auto", value_name = "auto|off|FILE|DIR")]
    pub calibration: grader::calibrate::Choice,
    /// How a timed check graded by the clock gives its points: `threshold`
    /// (all or nothing at the calibrated bar) or `scaled` (by speed, between
    /// the slow family and the reference). Default: cuda-lab.toml's
    /// [performance] credit, else `threshold`.
    #[arg(long, value_enum)]
    pub credit: Option<grader::credit::Credit>,
}
