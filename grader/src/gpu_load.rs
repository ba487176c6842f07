//! `grader gpu-load --seconds N`: a noisy neighbour for trying how grading
//! holds up on a shared GPU. It streams memory with the kit's copy yardstick
//! in a loop, on a context of its own in its own process, for N seconds and
//! then stops by itself. It takes no part in the batch's GPU lock (it opens
//! the device directly), so it keeps loading the GPU while kernels are timed,
//! as another user's job would.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use kit::backend::cuda::CudaBackend;
use kit::{args, Gpu, LaunchConfig};
use ptx_build::{Compiler, SourceFile};

/// The longest load one command makes (a day): it always ends by itself.
pub const MAX_SECONDS: f64 = 86_400.0;
/// Launches between two waits: short enough to stop on time, long enough to keep the GPU busy.
const LAUNCHES_PER_WAIT: usize = 16;

/// What the load did.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    pub seconds: f64,
    pub launches: u64,
    /// Average bandwidth (bytes read + written per second), GB/s.
    pub gbps: f64,
}

/// Loads the first visible GPU for `seconds` (at most [`MAX_SECONDS`]); `progress` hears every few seconds.
pub fn run(seconds: f64, progress: &mut dyn FnMut(&str)) -> Result<Done> {
    let seconds = seconds.clamp(0.0, MAX_SECONDS);
    let backend = CudaBackend::new(0).context("gpu-load needs a CUDA GPU")?;
    let gpu = Gpu::new(Box::new(backend), Duration::from_secs(10));
    let compiler = Compiler::from_env().context("gpu-load compiles its copy kernel")?;
    let options = crate::grade::compile_options(Some(gpu.info().compute_capability));
    let source = SourceFile::from_text("<grader>/copy.cu", include_str!("../../exercises/kit/kernels/copy.cu"));
    let ptx = compiler.compile(&source, &options).context("compiling the copy kernel")?;
    let module = gpu.load(&ptx.text)?;
    let floats = kit::exercise::bandwidth_elements(&gpu);
    let input = gpu.zeros::<f32>("load.in", floats)?;
    let output = gpu.zeros::<f32>("load.out", floats)?;
    let n4 = (floats / 4) as u64;
    let cfg = LaunchConfig::linear(gpu.info().multiprocessors * 8, 256);
    progress(&format!(
        "gpu-load: copying {} MiB back and forth on {} for {seconds:.0} s",
        (floats * 4) >> 20,
        gpu.info().name
    ));
    let start = Instant::now();
    let mut launches = 0u64;
    let mut said = 0u64;
    while start.elapsed().as_secs_f64() < seconds {
        // Each round is a check of its own for the kit's time limits: one
        // check's launches may together run only as long as one launch may,
        // which stopped the load after 10 s (H100, 2026-11-26).
        gpu.begin_check();
        for _ in 0..LAUNCHES_PER_WAIT {
            module.launch_async("copy_f32", cfg, &args![&input, &output, n4])?;
        }
        gpu.finish()?;
        launches += LAUNCHES_PER_WAIT as u64;
        let now = start.elapsed().as_secs();
        if now >= said + 5 {
            said = now;
            progress(&format!("gpu-load: {now} s, {:.0} GB/s", rate(launches, floats, start.elapsed())));
        }
    }
    let elapsed = start.elapsed();
    Ok(Done { seconds: elapsed.as_secs_f64(), launches, gbps: rate(launches, floats, elapsed) })
}

fn rate(launches: u64, floats: usize, elapsed: Duration) -> f64 {
    launches as f64 * 2.0 * floats as f64 * 4.0 / elapsed.as_secs_f64().max(1e-9) / 1e9
}
