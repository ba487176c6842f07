//! ex12: 2D convolution: naive, constant mask, tiled.
//!
//! Written by `grader new exercise` (docs/authoring.md): one part whose kernel
//! scales a vector, `out[i] = FACTOR * in[i]`, with a correctness check at
//! sizes that are not multiples of the block, a performance check against a
//! yardstick timed in the same run, and that check's measured stand-in for
//! machines that cannot time (src/measured.rs). Replace the task and keep the
//! shape: every check explains what was expected, what came back and what to
//! change.

pub mod measured;

use anyhow::Result;
use kit::timed::Windowed;
use kit::{args, check, Check, Ctx, Exercise, LaunchConfig, Part};
use rand::Rng;

/// Threads per block, fixed by the grader's launch.
pub const THREADS: u32 = 256;
/// Sizes tested for correctness: one element, one short of a block, one past a
/// block, and a large prime spanning many blocks.
pub const SIZES: [usize; 4] = [1, 255, 257, 1_000_003];
/// What the kernel multiplies by.
pub const FACTOR: f32 = 2.0;
/// The kernel must move data at this share of the yardstick's bandwidth or
/// more (yardsticks/copy_linear.cu). Provisional: see CALIBRATION.md.
pub const MIN_SHARE_OF_COPY: f64 = 0.5;
pub const KERNEL: &str = "convolution";
const YARDSTICK: &str = "copy_linear";

pub fn exercise() -> Exercise {
    let mut part = Part::new("convolution", "kernels/convolution.cu", &[KERNEL], 10.0);
    for n in SIZES {
        part = part.check(Check::correctness(format!("n={n}"), move |ctx| correct(ctx, n)));
    }
    part = part.check(
        Check::performance("share-of-copy", share_of_copy)
            // Where nothing can be timed: the lesson judged from the simulator's memory profile.
            .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::coalesced(ctx))),
    );
    Exercise {
        id: "ex12",
        slug: "convolution",
        title: "2D convolution: naive, constant mask, tiled",
        dir: "exercises/ex12-convolution",
        parts: vec![part],
    }
}

/// `ceil(n / THREADS)` blocks of THREADS threads.
pub fn launch_config(n: usize) -> LaunchConfig {
    LaunchConfig::linear(n.div_ceil(THREADS as usize) as u32, THREADS)
}

/// The CPU reference, in f64.
pub fn cpu(input: &[f32]) -> Vec<f64> {
    input.iter().map(|&x| FACTOR as f64 * x as f64).collect()
}

fn correct(ctx: &Ctx, n: usize) -> Result<String> {
    let module = ctx.kernel_module(KERNEL)?;
    // The same for every student of a batch: drawn and computed once per seed.
    let inputs = ctx.shared("in+out", || {
        let input = kit::inputs::uniform_f32(&mut ctx.rng(), n, -1.0, 1.0);
        let expected = cpu(&input);
        (input, expected)
    });
    let gpu = module.gpu();
    let d_in = gpu.upload("in", &inputs.0)?;
    // Poisoned: an element the kernel never writes shows as "never written".
    let d_out = gpu.poisoned::<f32>("out", n)?;
    module.launch(KERNEL, launch_config(n), &args![&d_in, &d_out, n as i32])?;
    // FACTOR * x is exact in float: no tolerance.
    check::close("out", &inputs.1, &d_out.read()?, 0.0, 0.0)?;
    Ok(format!("{} block(s)", launch_config(n).grid.0))
}

fn share_of_copy(ctx: &Ctx) -> Result<String> {
    let module = ctx.kernel_module(KERNEL)?;
    // Measured once per run; where nothing can be timed this says so (not
    // graded) before anything large is allocated.
    let copy_gbps = ctx.copy_bandwidth_gbps()?;
    let gpu = module.gpu();
    let yardstick = ctx.yardstick(YARDSTICK, include_str!("../yardsticks/copy_linear.cu"))?;
    // 8x the L2 cache in all, so that DRAM, not the cache, is measured.
    let n = (kit::exercise::bandwidth_elements(gpu) / 2).min(i32::MAX as usize);
    // A random block repeated on the device (drawing tens of millions of
    // values would take longer than the timing; zeros would let a kernel that
    // writes nothing "compute" 2 x 0). kit::timed gives every launch a window
    // of it further on, resets the output before each launch and checks what
    // each launch wrote: the one way to time a student's kernel.
    let block = ctx.shared("perf-block", || kit::inputs::uniform_f32(&mut ctx.rng(), 65_521, -1.0, 1.0));
    let d_in = Windowed::repeated(gpu, "in", &block, n)?;
    let d_out = gpu.poisoned::<f32>("out", n)?;
    let cfg = launch_config(n);
    let a = |launch| [d_in.arg(launch), d_out.arg(), (n as i32).into()];
    let student = kit::timed::student(
        gpu,
        |_| d_out.poison(),
        |launch| module.launch_async(KERNEL, cfg, &a(launch)),
        |launch| {
            // The last element, then elements drawn for this launch.
            let mut rng = ctx.rng_for(&format!("launch {launch}"));
            let at: Vec<usize> = std::iter::once(n - 1).chain((0..256).map(|_| rng.random_range(0..n))).collect();
            let got = d_out.read_elements(at.iter().copied())?;
            let expected: Vec<f64> = at.iter().map(|&i| cpu(&[block[d_in.at(launch, i) % block.len()]])[0]).collect();
            check::close("out (a sample)", &expected, &got, 0.0, 0.0)
        },
    )?;
    let copy = ctx.time_yardstick(&yardstick, YARDSTICK, cfg, &a(0), || d_out.poison())?;
    let bytes = 2 * n * 4;
    let line = kit::perf::require_share(
        &format!("{KERNEL} on {n} floats"),
        student.gb_per_s(bytes),
        "a plain copy",
        copy.gb_per_s(bytes),
        MIN_SHARE_OF_COPY,
    )?;
    Ok(format!("{line} (the kit's float4 copy: {copy_gbps:.0} GB/s)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_covers_every_element() {
        assert_eq!(launch_config(1).grid.0, 1);
        assert_eq!(launch_config(256).grid.0, 1);
        assert_eq!(launch_config(257).grid.0, 2);
        assert!(SIZES.iter().filter(|&&n| n % THREADS as usize != 0).count() >= 3);
    }

    #[test]
    fn cpu_reference_scales() {
        assert_eq!(cpu(&[1.0, -0.5]), vec![2.0, -1.0]);
    }

    #[test]
    fn one_part_with_a_correctness_and_a_timed_check() {
        let ex = exercise();
        assert_eq!((ex.id, ex.dir), ("ex12", "exercises/ex12-convolution"));
        let names: Vec<_> = ex.parts[0].checks.iter().map(|c| c.name.as_str()).collect();
        assert!(names.contains(&"n=1000003") && names.contains(&"share-of-copy"), "{names:?}");
    }
}
