//! ex10: a 256-bin histogram of a byte stream (Kirk & Hwu, *Programming
//! Massively Parallel Processors*, chapter 9), three times:
//!
//! - `global`: one `atomicAdd` on the global bins per byte, one byte per thread;
//! - `private`: each block counts its bytes in its own bins in shared memory
//!   (`__shared__ unsigned int`), then adds them to the global bins with at
//!   most one atomic per bin (privatization);
//! - `coarse`: privatized, and a small fixed grid in which every thread counts
//!   many bytes, read interleaved (the whole grid reads consecutive bytes at
//!   each step: coalesced), so that the merge is paid once per many bytes.
//!
//! The checks: every bin exact against the CPU on seeded inputs of every kind
//! of size (0, 1, 31, not a multiple of the block, millions) and distribution
//! (uniform, text-like, one byte over and over); the lesson measured on the
//! simulator (src/measured.rs): global atomics per byte, the most global
//! atomics one block makes to one bin, the load sectors of the byte reads;
//! and two timings against the grader's kernels in the same run: the private
//! bins against one global atomic per byte, the coarse kernel against the
//! grader's coarse kernel.

pub mod cpu;
pub mod measured;

use anyhow::Result;
use cpu::Bytes;
use kit::timed::Fresh;
use kit::{args, Check, Ctx, Exercise, LaunchConfig, Part, SIM_MAX_ELEMENTS};

/// Threads per block, fixed by the grader's launch.
pub const THREADS: u32 = 256;
/// Correctness cases: one byte (after a launch on no byte at all, one block
/// that must count nothing: [`EMPTY_FIRST`]), less than a warp, one short of a block, one past it, a prime
/// number of blocks' worth, and millions (the last too large for the
/// simulator). Distributions alternate so that each part meets contention
/// (text, one repeated byte) and bytes from 0x80 up (uniform, one repeated
/// byte from 0x80 up); uniform and text inputs hold the bytes 0x00 and 0xFF
/// ([`cpu::EDGES`]). Every input is drawn from the seed.
pub const SIZES: [(usize, Bytes); 8] = [
    (1, Bytes::Same(0x80)),
    (31, Bytes::Text),
    (255, Bytes::Uniform),
    (257, Bytes::Text),
    (4099, Bytes::Text),
    (65_537, Bytes::Uniform),
    // One byte a million times: each of the coarse part's 7 blocks counts
    // more than 65 535 of it, so bins of 16 bits (or a counter of 16 bits
    // per thread) overflow.
    (1_000_003, Bytes::Same(0)),
    (4_194_319, Bytes::Uniform),
];
/// The coarse part's grid in the correctness checks: at most this many
/// blocks, so that each thread of a million-byte check counts hundreds of
/// bytes (7: no power of two, so that a kernel must use gridDim.x).
pub const COARSE_TEST_BLOCKS: u32 = 7;
/// Blocks per multiprocessor of the coarse part's timed grid: 8 blocks of 256
/// threads fill an SM of 2048 threads, once.
pub const COARSE_BLOCKS_PER_SM: u32 = 8;
/// `private` must be this much faster than one global atomic per byte
/// (yardsticks/histogram_patterns.cu, `global_pattern`) on text-like bytes.
/// The compiled value, chosen by reasoning; the GPUs grade with the threshold
/// calibrated per model (calibration/*.toml: 2.97 on an H100, 2.96 on an
/// H200, where correct kernels reach 6.4x-7.8x and the slow one 1.38x). See
/// CALIBRATION.md.
pub const MIN_SPEEDUP_OVER_GLOBAL: f64 = 1.25;
/// `coarse` must count bytes at this share of the rate of the grader's coarse
/// privatized kernel (`coarse_pattern`) on the same grid. The compiled value,
/// chosen by reasoning; calibrated per model (calibration/*.toml): 0.863 on an
/// H200, not graded by the clock on an H100, where the contiguous-chunk slow
/// kernel is as fast as the correct ones (the measured `interleaved-reads`
/// carries the lesson). See CALIBRATION.md.
pub const MIN_SHARE_OF_COARSE: f64 = 0.6;

pub const GLOBAL: &str = "histogram_global";
pub const PRIVATE: &str = "histogram_private";
pub const COARSE: &str = "histogram_coarse";
const PATTERNS: &str = "histogram_patterns";

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex10",
        slug: "histogram",
        title: "A 256-bin histogram with privatized bins",
        dir: "exercises/ex10-histogram",
        parts: vec![global_part(), private_part(), coarse_part()],
    }
}

/// The check of this size first launches the kernel on no byte at all: the
/// bins must stay 0 (and nothing be read). A check of its own would pass an
/// empty stub.
pub const EMPTY_FIRST: usize = 1;

/// A correctness check's name: `n=1000003`, and `n=0-then-1` for [`EMPTY_FIRST`].
pub fn check_name(n: usize) -> String {
    if n == EMPTY_FIRST {
        format!("n=0-then-{n}")
    } else {
        format!("n={n}")
    }
}

fn with_correctness(mut part: Part, kernel: &'static str) -> Part {
    for (n, kind) in SIZES {
        part = part.check(
            Check::correctness(check_name(n), move |ctx| correct(ctx, kernel, n, kind)).heavy_if(n > SIM_MAX_ELEMENTS),
        );
    }
    part
}

fn global_part() -> Part {
    // No timing: this part is the slow pattern the others are timed against;
    // what could go wrong in it besides the result (more or fewer atomics than
    // bytes) the measured check sees on any machine.
    with_correctness(Part::new("global", "kernels/histogram_global.cu", &[GLOBAL], 10.0), GLOBAL)
        .check(Check::structure("one-atomic-per-byte", measured::one_atomic_per_byte))
}

fn private_part() -> Part {
    with_correctness(Part::new("private", "kernels/histogram_private.cu", &[PRIVATE], 10.0), PRIVATE)
        .check(Check::structure("merged-once-per-bin", |ctx| measured::merged_once_check(ctx, PRIVATE)))
        .check(
            Check::performance("faster-than-global-atomics", private_speedup)
                // The time goes into global atomics on a few hot bins: count them.
                .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::merged_once_stand_in(ctx, PRIVATE))),
        )
}

fn coarse_part() -> Part {
    with_correctness(Part::new("coarse", "kernels/histogram_coarse.cu", &[COARSE], 10.0), COARSE)
        .check(Check::structure("merged-once-per-bin", |ctx| measured::merged_once_check(ctx, COARSE)))
        .check(Check::structure("interleaved-reads", measured::interleaved_check))
        .check(
            Check::performance("share-of-coarse", coarse_share)
                // Coalesced reads are what the grader's coarse kernel has and contiguous chunks lack.
                .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::interleaved_stand_in(ctx))),
        )
}

/// `global` and `private`: one thread per byte, `ceil(n / 256)` blocks of 256
/// threads, and one block when there is no byte at all.
pub fn launch_config(n: usize) -> LaunchConfig {
    let blocks = u32::try_from(n.div_ceil(THREADS as usize).max(1)).expect("the grid fits in gridDim.x");
    LaunchConfig::linear(blocks, THREADS)
}

/// `coarse`: at most `max_blocks` blocks of 256 threads (fewer for small
/// inputs), each thread counting every `gridDim.x * blockDim.x`-th byte.
pub fn coarse_config(n: usize, max_blocks: u32) -> LaunchConfig {
    let blocks = launch_config(n).grid.0.min(max_blocks);
    LaunchConfig::linear(blocks, THREADS)
}

/// The launch a part's kernel gets for `n` bytes in the correctness checks.
pub fn test_config(kernel: &str, n: usize) -> LaunchConfig {
    if kernel == COARSE {
        coarse_config(n, COARSE_TEST_BLOCKS)
    } else {
        launch_config(n)
    }
}

fn correct(ctx: &Ctx, kernel: &str, n: usize, kind: Bytes) -> Result<String> {
    ctx.kernel_ptx(kernel)?; // a missing or misspelled kernel, before anything is computed
                             // The same for every student of a batch: drawn and counted once per seed.
    let inputs = ctx.shared("bytes+bins", || {
        let data = cpu::correctness_bytes(&mut ctx.rng(), n, kind);
        let bins = cpu::histogram(&data);
        (data, bins)
    });
    // Taken after the inputs: a check run ahead of the GPU (grader/src/ahead.rs) stops here.
    let module = ctx.kernel_module(kernel)?;
    let gpu = module.gpu();
    // Zero, as the README promises: the kernel adds to the bins.
    let bins = gpu.zeros::<u32>("bins", cpu::BINS)?;
    if n == EMPTY_FIRST {
        // No byte: one block, which must read nothing and count nothing.
        let empty = gpu.upload::<u8>("data (n = 0)", &[])?;
        module.launch(kernel, test_config(kernel, 0), &args![&empty, 0u32, &bins])?;
        cpu::compare("bytes (n = 0, one block launched)", 0, &[0; cpu::BINS], &bins.read()?)?;
    }
    let data = gpu.upload("data", &inputs.0)?;
    let cfg = test_config(kernel, n);
    let result = match module.launch(kernel, cfg, &args![&data, n as u32, &bins]) {
        Ok(()) => cpu::compare(&kind.describe(), n, &inputs.1, &bins.read()?),
        // the simulator's race check; any other failure is the launch's own
        Err(e) if measured::shared_race(&e).is_some() => Err(e),
        Err(e) => return Err(e),
    };
    if result.is_err() && kernel != GLOBAL {
        // Warps that merge before their block has counted: the race, in the exercise's words.
        if let Some(race) = measured::merge_race(ctx, kernel) {
            return Err(race);
        }
    }
    result?;
    Ok(format!("256 bins exact; {} block(s) of {THREADS}", cfg.grid.0))
}

/// Bytes of a timed input: 8x the L2 cache (`bandwidth_elements` counts
/// 4-byte elements), so that DRAM, not the cache, feeds the kernel.
pub fn perf_bytes(gpu: &kit::Gpu) -> usize {
    (kit::exercise::bandwidth_elements(gpu) * 4).min(u32::MAX as usize & !1023)
}

/// Times `kernel` of the student's module with `cfg` on `n` timed bytes, every
/// launch on text-like bytes of its own (kit::timed::Fresh), its bins zeroed
/// before and all 256 checked after against the grader's coarse kernel on the
/// same bytes; then `yardstick` of the grader's patterns the same way.
fn time_both(
    ctx: &Ctx,
    kernel: &str,
    yardstick: &str,
    cfg: LaunchConfig,
) -> Result<(kit::perf::Timing, kit::perf::Timing, usize)> {
    let module = ctx.kernel_module(kernel)?;
    let gpu = module.gpu();
    let patterns = ctx.yardstick(PATTERNS, include_str!("../yardsticks/histogram_patterns.cu"))?;
    let n = perf_bytes(gpu);
    let data = Fresh::bytes(ctx, "data", n, &cpu::text_table())?;
    let bins = gpu.zeros::<u32>("bins", cpu::BINS)?;
    let expected = gpu.zeros::<u32>("expected bins", cpu::BINS)?;
    let zero = || bins.write(&[0u32; cpu::BINS]);
    let a = [data.arg(), (n as u32).into(), bins.arg()];
    let student = kit::timed::student(
        gpu,
        |launch| {
            data.fill(launch)?;
            zero()
        },
        |_| module.launch_async(kernel, cfg, &a),
        |launch| check_launch(&patterns, &data, &bins, &expected, launch),
    )?;
    data.fill(0)?;
    let pattern = ctx.time_yardstick(&patterns, yardstick, cfg, &a, zero)?;
    Ok((student, pattern, n))
}

/// What every timed launch is checked with: `data` as launch `launch` got
/// it, then all 256 bins against the grader's coarse kernel's count of the
/// same bytes (into `expected`).
pub fn check_launch(
    patterns: &kit::Module,
    data: &Fresh<u8>,
    bins: &kit::DeviceBuffer<u32>,
    expected: &kit::DeviceBuffer<u32>,
    launch: usize,
) -> Result<()> {
    data.intact(launch)?;
    let n = data.len();
    expected.write(&[0u32; cpu::BINS])?;
    let blocks = patterns.gpu().info().multiprocessors * COARSE_BLOCKS_PER_SM;
    patterns.launch("coarse_pattern", coarse_config(n, blocks), &args![data.arg(), n as u32, expected])?;
    cpu::compare(&format!("timed text-like bytes (launch {launch})"), n, &expected.read()?, &bins.read()?)
}

fn private_speedup(ctx: &Ctx) -> Result<String> {
    // Where nothing can be timed this says so before anything large is allocated.
    let copy_gbps = ctx.copy_bandwidth_gbps()?;
    let n = perf_bytes(ctx.gpu()?);
    let (private, global, n) = time_both(ctx, PRIVATE, "global_pattern", launch_config(n))?;
    let line = kit::perf::require_speedup(
        &format!("{PRIVATE} on {n} text-like bytes"),
        &private,
        &global,
        "one global atomicAdd per byte",
        MIN_SPEEDUP_OVER_GLOBAL,
    )?;
    Ok(format!("{line} (the kit's float4 copy: {copy_gbps:.0} GB/s)"))
}

/// The coarse part's timed grid: a fixed number of blocks per multiprocessor.
pub fn coarse_perf_config(gpu: &kit::Gpu, n: usize) -> LaunchConfig {
    coarse_config(n, gpu.info().multiprocessors * COARSE_BLOCKS_PER_SM)
}

fn coarse_share(ctx: &Ctx) -> Result<String> {
    let copy_gbps = ctx.copy_bandwidth_gbps()?;
    let gpu = ctx.gpu()?;
    let cfg = coarse_perf_config(gpu, perf_bytes(gpu));
    let (coarse, pattern, n) = time_both(ctx, COARSE, "coarse_pattern", cfg)?;
    let line = kit::perf::require_share(
        &format!("{COARSE} on {n} text-like bytes, {} blocks", cfg.grid.0),
        coarse.gb_per_s(n),
        "the grader's coarse privatized kernel",
        pattern.gb_per_s(n),
        MIN_SHARE_OF_COARSE,
    )?;
    Ok(format!("{line} (the kit's float4 copy: {copy_gbps:.0} GB/s)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_cover_every_byte_and_the_empty_input() {
        assert_eq!(launch_config(0).grid.0, 1, "no byte: one block, which must count nothing");
        assert_eq!(launch_config(1).grid.0, 1);
        assert_eq!(launch_config(256).grid.0, 1);
        assert_eq!(launch_config(257).grid.0, 2);
        assert_eq!(coarse_config(1_000_003, COARSE_TEST_BLOCKS).grid.0, 7);
        assert_eq!(coarse_config(300, COARSE_TEST_BLOCKS).grid.0, 2);
        assert!(SIZES.iter().filter(|&&(n, _)| n % THREADS as usize != 0).count() >= 7);
        assert!(SIZES.iter().any(|&(n, _)| n > SIM_MAX_ELEMENTS), "millions, on a GPU");
        for kind in [Bytes::Uniform, Bytes::Text] {
            assert!(SIZES.iter().filter(|&&(_, k)| k == kind).count() >= 3, "{kind:?}");
        }
        assert!(SIZES.iter().any(|&(_, k)| matches!(k, Bytes::Same(_))));
        // One byte repeated past what 16 bits count, in every block of the coarse grid, on the simulator.
        let blocks = COARSE_TEST_BLOCKS as usize;
        assert!(SIZES
            .iter()
            .any(|&(n, k)| matches!(k, Bytes::Same(_)) && n / blocks > u16::MAX as usize && n <= SIM_MAX_ELEMENTS));
    }

    #[test]
    fn the_timed_input_outgrows_the_l2_and_fits_an_unsigned_n() {
        let gpu = kit::Gpu::simulator();
        let n = perf_bytes(&gpu);
        assert!(n >= 8 * gpu.info().l2_cache_bytes as usize - 4096 && n < u32::MAX as usize);
        assert_eq!(coarse_perf_config(&gpu, n).grid.0, COARSE_BLOCKS_PER_SM);
    }

    /// The timing itself needs a GPU; its launches and their checks run here:
    /// the references and the grader's kernels on fresh bytes, each launch's
    /// bins right for its own bytes and wrong for another launch's, and a
    /// kernel that writes into its bytes caught.
    #[test]
    fn timed_launches_are_checked_in_full_against_the_graders_kernel() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let compile = |path: &str, text: String| {
            let source = ptx_build::SourceFile::from_text(path, text);
            compiler.compile(&source, &ptx_build::CompileOptions::default()).unwrap().text
        };
        let reference = |file: &str| {
            let path = format!("reference/ex10-histogram/kernels/{file}");
            compile(&path, std::fs::read_to_string(kit::trial::workspace_file(&path)).unwrap())
        };
        let patterns_ptx =
            compile("<grader>/histogram_patterns.cu", include_str!("../yardsticks/histogram_patterns.cu").into());
        let env = kit::RunEnv::new(1, Some(kit::Gpu::simulator()), Some(compiler.clone()), Default::default());
        let build = kit::PartBuild::new(String::new());
        let ctx = Ctx::new("ex10::private::perf::faster-than-global-atomics", &env, &build);
        ctx.run(|ctx| {
            let gpu = ctx.gpu().unwrap();
            let patterns = ctx.yardstick(PATTERNS, include_str!("../yardsticks/histogram_patterns.cu")).unwrap();
            let n = 12_345;
            let data = Fresh::bytes(ctx, "data", n, &cpu::text_table()).unwrap();
            let bins = gpu.zeros::<u32>("bins", cpu::BINS).unwrap();
            let expected = gpu.zeros::<u32>("expected bins", cpu::BINS).unwrap();
            for (ptx, kernel, cfg) in [
                (&patterns_ptx, "global_pattern", launch_config(n)),
                (&reference("histogram_private.cu"), PRIVATE, launch_config(n)),
                (&reference("histogram_coarse.cu"), COARSE, coarse_config(n, 3)),
            ] {
                let module = gpu.load(ptx).unwrap();
                for launch in [0, 1, 5] {
                    data.fill(launch).unwrap();
                    bins.write(&[0; cpu::BINS]).unwrap();
                    module.launch(kernel, cfg, &args![data.arg(), n as u32, &bins]).unwrap();
                    check_launch(&patterns, &data, &bins, &expected, launch)
                        .unwrap_or_else(|e| panic!("{kernel}, launch {launch}: {e:#}"));
                    // The same bins against the next launch's bytes.
                    data.fill(launch + 1).unwrap();
                    let err = check_launch(&patterns, &data, &bins, &expected, launch + 1).unwrap_err().to_string();
                    assert!(err.contains(&format!("(launch {})", launch + 1)), "{kernel}: {err}");
                }
            }
            // A kernel that counts right but writes into its bytes.
            let writes = compile(
                "w.cu",
                "extern \"C\" __global__ void w(unsigned char *d, unsigned n, unsigned *bins) {
                     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
                     if (i < n) { atomicAdd(&bins[d[i]], 1u); d[i] = 0; } }"
                    .into(),
            );
            let module = gpu.load(&writes).unwrap();
            data.fill(2).unwrap();
            bins.write(&[0; cpu::BINS]).unwrap();
            module.launch("w", launch_config(n), &args![data.arg(), n as u32, &bins]).unwrap();
            let err = check_launch(&patterns, &data, &bins, &expected, 2).unwrap_err();
            assert!(err.downcast_ref::<kit::gpu::InputModified>().is_some(), "{err:#}");
        });
    }

    #[test]
    fn three_parts_with_their_checks() {
        let ex = exercise();
        assert_eq!((ex.id, ex.dir), ("ex10", "exercises/ex10-histogram"));
        let names = |p: usize| ex.parts[p].checks.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert!(names(0).contains(&"one-atomic-per-byte".into()) && !names(0).iter().any(|n| n.contains("faster")));
        assert!(
            names(1).contains(&"merged-once-per-bin".into()) && names(1).contains(&"faster-than-global-atomics".into())
        );
        assert!(names(2).contains(&"interleaved-reads".into()) && names(2).contains(&"share-of-coarse".into()));
        assert!(names(2).contains(&"n=0-then-1".into()) && names(2).contains(&"n=4194319".into()));
    }
}
