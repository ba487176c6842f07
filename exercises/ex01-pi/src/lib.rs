//! ex01: Monte Carlo pi (seed 000, "piApproximation", twice): count the random
//! points inside the unit circle, first with global atomics, then per block in
//! shared memory with one global update per block.

pub mod measured;

use anyhow::Result;
use kit::{args, check, Check, Ctx, Exercise, LaunchConfig, Part, SIM_MAX_ELEMENTS};
use rand::Rng;

pub const THREADS: u32 = 256;
/// The grid is capped, so large inputs need a grid-stride loop.
pub const MAX_BLOCKS: u32 = 1024;
/// Sizes tested for correctness: less than a block, not a multiple of the block,
/// and more points than the capped grid has threads. No single point: its count
/// (0 or 1) could be guessed.
pub const SIZES: [usize; 5] = [100, 255, 65_537, 1_000_003, 4_194_311];
/// Points for the timing: 256 MiB of input, far beyond any L2 cache.
pub const PERF_POINTS: usize = 1 << 25;
/// The timing's points are this many, repeated: x and y repeat together, so
/// every pair is a point of the block.
pub const PERF_BLOCK: usize = 1 << 16;
/// `shared` must beat the one-atomic-per-hit pattern by this factor.
/// Measured on an H100: see CALIBRATION.md in this folder.
pub const MIN_SPEEDUP: f64 = 2.0;

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex01",
        slug: "pi",
        title: "Monte Carlo pi: global atomics, then per-block counts in shared memory",
        dir: "exercises/ex01-pi",
        parts: vec![
            part("global", "kernels/pi_global.cu", &["pi_global"]),
            part("shared", "kernels/pi_shared.cu", &["pi_shared"]),
        ],
    }
}

fn part(name: &'static str, file: &'static str, kernels: &'static [&'static str]) -> Part {
    let kernel = kernels[0];
    let mut part = Part::new(name, file, kernels, 10.0);
    for n in SIZES {
        part = part.check(
            Check::correctness(format!("n={n}"), move |ctx| count_hits(ctx, kernel, n)).heavy_if(n > SIM_MAX_ELEMENTS),
        );
    }
    if kernel == "pi_global" {
        part.check(Check::structure("global-atomics", measured::global_atomics))
    } else {
        part.check(Check::structure("shared-counter", measured::shared_counter)).check(
            Check::performance("faster-than-global-atomics", shared_speedup)
                // The timing compares contention on one global counter: count it.
                .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::few_atomics_per_hit(ctx))),
        )
    }
}

/// Random points in [0,1)^2, none within 1e-5 of the circle (so that a kernel's
/// float rounding, with or without FMA, cannot change the count), and at least
/// one inside (so that an empty kernel never passes).
pub fn points(rng: &mut impl Rng, n: usize) -> (Vec<f32>, Vec<f32>) {
    let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut inside = 0;
    while x.len() < n {
        let (px, py) = (rng.random::<f32>(), rng.random::<f32>());
        let r2 = (px as f64).powi(2) + (py as f64).powi(2);
        let last_must_hit = x.len() + 1 == n && inside == 0;
        if (r2 - 1.0).abs() < 1e-5 || (last_must_hit && r2 > 1.0) {
            continue;
        }
        inside += (r2 <= 1.0) as usize;
        x.push(px);
        y.push(py);
    }
    (x, y)
}

/// The CPU reference, in f64.
pub fn cpu_hits(x: &[f32], y: &[f32]) -> u32 {
    x.iter().zip(y).filter(|(&a, &b)| (a as f64).powi(2) + (b as f64).powi(2) <= 1.0).count() as u32
}

pub fn launch_config(n: usize) -> LaunchConfig {
    LaunchConfig::linear((n as u32).div_ceil(THREADS).clamp(1, MAX_BLOCKS), THREADS)
}

fn count_hits(ctx: &Ctx, kernel: &str, n: usize) -> Result<String> {
    // The same for every student of a batch: drawn and counted once per seed.
    let inputs = ctx.shared("points+hits", || {
        let (x, y) = points(&mut ctx.rng(), n);
        let hits = cpu_hits(&x, &y);
        (x, y, hits)
    });
    let (x, y, expected) = (&inputs.0, &inputs.1, inputs.2);
    let module = ctx.kernel_module(kernel)?;
    let gpu = module.gpu();
    let (dx, dy) = (gpu.upload("x", x)?, gpu.upload("y", y)?);
    let hits = gpu.zeros::<u32>("hits", 1)?;
    module.launch(kernel, launch_config(n), &args![&dx, &dy, n as i32, &hits])?;
    let got = hits.read()?[0];
    if got == 0 {
        anyhow::bail!("`hits`: expected {expected}, got 0: no point was counted (is the TODO done?)");
    }
    check::scalar("hits", expected, got)?;
    Ok(format!("pi ~= {:.5}", 4.0 * got as f64 / n as f64))
}

fn shared_speedup(ctx: &Ctx) -> Result<String> {
    let module = ctx.kernel_module("pi_shared")?;
    let baseline = ctx.yardstick("pi_global_atomics", include_str!("../yardsticks/pi_global_atomics.cu"))?;
    let gpu = module.gpu();
    // One block of points repeated on the device: drawing and uploading 256 MiB
    // took most of a second; the kernels read every address all the same.
    let block = ctx.shared("points", || points(&mut ctx.rng(), PERF_BLOCK));
    let (dx, dy) = (gpu.upload_repeated("x", &block.0, PERF_POINTS)?, gpu.upload_repeated("y", &block.1, PERF_POINTS)?);
    let hits = gpu.zeros::<u32>("hits", 1)?;
    let cfg = launch_config(PERF_POINTS);
    let a = args![&dx, &dy, PERF_POINTS as i32, &hits];
    let shared = ctx.time(|| module.launch_async("pi_shared", cfg, &a))?;
    let global = ctx.time_yardstick("pi_global_atomics", || baseline.launch_async("pi_global_atomics", cfg, &a))?;
    kit::perf::require_speedup("pi_shared", &shared, &global, "one atomicAdd per hit", MIN_SPEEDUP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    #[test]
    fn cpu_reference_counts_the_quarter_disc() {
        assert_eq!(cpu_hits(&[0.0, 0.6, 0.9, 1.0], &[0.0, 0.7, 0.9, 0.0]), 3);
    }

    #[test]
    fn points_avoid_the_boundary_and_always_hit() {
        for n in [1, 2, 255, 10_000] {
            let (x, y) = points(&mut rng_for(42, &format!("n={n}")), n);
            assert_eq!(x.len(), n);
            assert!(cpu_hits(&x, &y) > 0, "n={n} has no hit: an empty kernel would pass");
            assert!(x.iter().zip(&y).all(|(a, b)| ((*a as f64).powi(2) + (*b as f64).powi(2) - 1.0).abs() >= 1e-5));
        }
        let (x, y) = points(&mut rng_for(1, "big"), 1_000_000);
        let pi = 4.0 * cpu_hits(&x, &y) as f64 / 1e6;
        assert!((pi - std::f64::consts::PI).abs() < 0.01, "{pi}");
    }

    #[test]
    fn launch_is_capped_so_a_grid_stride_loop_is_needed() {
        assert_eq!(launch_config(SIZES[0]).grid.0, 1);
        assert_eq!(launch_config(257).grid.0, 2);
        assert_eq!(launch_config(SIZES[4]).grid.0, MAX_BLOCKS);
        assert!(SIZES[4] > (MAX_BLOCKS * THREADS) as usize);
        assert!(SIZES.iter().all(|n| n % THREADS as usize != 0));
    }
}
