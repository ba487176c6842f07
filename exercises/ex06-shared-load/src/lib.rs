//! ex06: two vectors into one dynamically sized shared buffer (seed 004, the
//! `compute(out, in1, in2)` exercise). Each block copies its pair of SIZE-byte
//! vectors into one `extern __shared__` buffer whose size the host gives at
//! launch (2*SIZE bytes), one element of each per thread, then computes from
//! it. The seed leaves the computation open; here it is a circular
//! cross-correlation, which reads all 2*SIZE bytes in every thread, so staging
//! them (2 global loads per thread instead of 512) pays.

pub mod cpu;
pub mod measured;

use anyhow::{anyhow, Result};
use kit::timed::{window_room, window_step, Windowed};
use kit::{args, check, require, Check, Ctx, Exercise, LaunchConfig, Part};
use rand::Rng;

/// Elements of each vector (the seed's `#define SIZE 256`), and threads per block.
pub const SIZE: usize = 256;
/// One thread per element: thread t copies in1[t] and in2[t].
pub const THREADS: u32 = SIZE as u32;
/// Dynamic shared memory per block: both vectors, `2*SIZE*sizeof(unsigned char)`
/// (the seed's `2*SIZE`). Exactly this, so a kernel that needs more is not hidden.
pub const SHARED_BYTES: u32 = (2 * SIZE * std::mem::size_of::<u8>()) as u32;
/// Independent blocks (pairs) for the random cases: one, a few, many. (The
/// CPU reference costs SIZE^2 products per block; the timed run's 32768 blocks,
/// many waves on any GPU, are spot-checked too.)
pub const BLOCKS: [u32; 3] = [1, 3, 263];
/// Blocks for the case where in2 is in1 rotated by a planted lag.
pub const ROTATED_BLOCKS: u32 = 64;
/// Blocks for the all-255 case (the largest outputs).
pub const SATURATED_BLOCKS: u32 = 16;
/// Blocks for the timing: 8 MiB per input; each launch runs well above the launch
/// overhead (the work is 512 reads per thread, not the memory traffic).
pub const PERF_BLOCKS: u32 = 1 << 15;
/// `compute` must reach this multiple of the speed of the same computation reading
/// in1 and in2 from global memory on every use. Correct kernels span 1.15x-2.1x on
/// the H100 (a compare instead of `%` costs half), one that copies the whole vectors
/// per thread 0.67x; reading from global (0.95x) is a structure failure, not a timing
/// one. See CALIBRATION.md.
pub const MIN_SPEEDUP_VS_GLOBAL: f64 = 0.9;
/// Blocks whose outputs are checked after the timed run (spread over the grid).
const SPOT_BLOCKS: u32 = 16;
const KERNEL: &str = "compute";

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex06",
        slug: "shared-load",
        title: "Two vectors into one dynamically sized shared buffer",
        dir: "exercises/ex06-shared-load",
        parts: vec![part()],
    }
}

/// The inputs of one correctness case.
#[derive(Clone, Copy)]
enum Case {
    Random(u32),
    Rotated,
    Saturated,
}

fn part() -> Part {
    let mut part = Part::new("load", "kernels/shared_load.cu", &[KERNEL], 10.0);
    let random = BLOCKS.map(|b| (format!("blocks={b}"), Case::Random(b)));
    let planted = [("rotated".to_string(), Case::Rotated), ("saturated".to_string(), Case::Saturated)];
    for (name, case) in random.into_iter().chain(planted) {
        part = part.check(Check::correctness(name, move |ctx| correct(ctx, case)));
    }
    part.check(Check::structure("dynamic-shared", measured::dynamic_shared)).check(
        Check::performance("faster-than-global-reads", faster_than_global_reads)
            // The yardstick differs only in reading in1 and in2 on every use: count the global reads.
            .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::stand_in(ctx))),
    )
}

/// One block of SIZE threads per pair, with exactly SHARED_BYTES of dynamic shared memory.
pub fn launch_config(blocks: u32) -> LaunchConfig {
    LaunchConfig::linear(blocks, THREADS).with_shared(SHARED_BYTES)
}

fn correct(ctx: &Ctx, case: Case) -> Result<String> {
    let module = ctx.kernel_module(KERNEL)?;
    // The same for every student of a batch: drawn and correlated once per seed.
    let inputs = ctx.shared("in1+in2+lags+out", || {
        let mut rng = ctx.rng();
        let (in1, in2, lags) = match case {
            Case::Random(blocks) => {
                let (a, b) = cpu::random_pairs(&mut rng, blocks);
                (a, b, None)
            }
            Case::Rotated => {
                let (a, b, lags) = cpu::rotated_pairs(&mut rng, ROTATED_BLOCKS);
                (a, b, Some(lags))
            }
            Case::Saturated => {
                let (a, b) = cpu::saturated_pairs(&mut rng, SATURATED_BLOCKS);
                (a, b, None)
            }
        };
        let expected = cpu::correlate(&in1, &in2);
        (in1, in2, lags, expected)
    });
    let (in1, in2, lags, expected) = (&inputs.0, &inputs.1, &inputs.2, &inputs.3);
    let gpu = module.gpu();
    let (d1, d2) = (gpu.upload("in1", in1)?, gpu.upload("in2", in2)?);
    let out = gpu.poisoned::<u32>("out", in1.len())?;
    let blocks = (in1.len() / SIZE) as u32;
    module.launch(KERNEL, launch_config(blocks), &args![&out, &d1, &d2])?;
    let got = out.read()?;
    check::exact("out", expected, &got)?;
    Ok(match lags {
        Some(lags) => format!("{} of {blocks} blocks peak at their planted lag", cpu::peaks_at_lag(&got, lags)),
        None => format!("{blocks} block(s)"),
    })
}

/// The structure check on a compiled module's PTX.
pub fn dynamic_shared_in(ptx: &str) -> Result<String> {
    dynamic_shared_where(ptx, |_| true)
}

/// [`dynamic_shared_in`], the buffer's bounds judged on the PTX lines `executed` accepts.
pub fn dynamic_shared_where(ptx: &str, executed: impl Fn(usize) -> bool) -> Result<String> {
    let k = kit::inspect::kernel(ptx, KERNEL).ok_or_else(|| anyhow!("no kernel named `{KERNEL}`"))?;
    require(k.declares_dynamic_shared(), || {
        "compute declares no dynamic shared memory. The host gives the buffer's size at launch \
         (<<<grid, block, 2*SIZE>>>), so declare it without a size: `extern __shared__ unsigned char in[];`. \
         (`extern __shared__ char *in;`, as in the slides, declares a pointer, not a buffer)"
            .into()
    })?;
    let fixed = k.static_shared_bytes();
    require(fixed < SHARED_BYTES as usize, || {
        format!(
            "compute declares {fixed} bytes of fixed-size shared memory: the vectors belong in the \
             `extern __shared__` buffer the host sizes at launch, not in an array whose size is set at compile time"
        )
    })?;
    require(k.writes_shared() && k.reads_shared(), || {
        "compute must copy in1 and in2 into the shared buffer and then read them back from it: the PTX \
         has no store to shared memory, or no load from it"
            .into()
    })?;
    within_launch_bytes(&k, executed)?;
    require(k.has_barrier(), || {
        "compute has no barrier. Call __syncthreads() after the copies: every thread reads bytes that \
         other threads (other warps) copied"
            .into()
    })?;
    Ok(format!("extern __shared__ buffer, written, read back after a barrier, within {SHARED_BYTES} bytes"))
}

/// The launch gives exactly SHARED_BYTES; on a GPU an access past them may not
/// crash, so look for one in the PTX: a shared access at a constant offset
/// whose last byte lies past the buffer, whatever the (non-negative) index.
fn within_launch_bytes(k: &kit::inspect::KernelPtx, executed: impl Fn(usize) -> bool) -> Result<()> {
    let Some((end, instruction)) = k.furthest_shared_access_where(executed) else { return Ok(()) };
    require(end <= SHARED_BYTES as usize, || {
        format!(
            "compute accesses shared memory up to {end} bytes past the start of its buffer (`{instruction}`), \
             but the launch gives only 2*SIZE*sizeof(unsigned char) = {SHARED_BYTES} bytes: the access lands outside the block's \
             buffer. Declare the buffer with 1-byte elements (`extern __shared__ unsigned char in[];`), in1 at \
             offset 0 and in2 at offset SIZE"
        )
    })
}

fn faster_than_global_reads(ctx: &Ctx) -> Result<String> {
    // Drawn once per process (first, so that it can be built ahead of the
    // GPU), uploaded fresh for every student, with room for every launch's
    // window (kit::timed): a window starts a whole number of blocks further on.
    let inputs = ctx.shared("in1+in2", || cpu::random_pairs(&mut ctx.rng(), PERF_BLOCKS + ROOM_BLOCKS));
    let module = ctx.kernel_module(KERNEL)?;
    let gpu = module.gpu();
    let global = ctx.yardstick("compute_global", include_str!("../yardsticks/compute_global.cu"))?;
    let (in1, in2) = (&inputs.0, &inputs.1);
    let n = PERF_BLOCKS as usize * SIZE;
    let (d1, d2) = (Windowed::upload(gpu, "in1", in1, n)?, Windowed::upload(gpu, "in2", in2, n)?);
    let out = gpu.poisoned::<u32>("out", n)?;
    let cfg = launch_config(PERF_BLOCKS);
    let a = |launch| [out.arg(), d1.arg(launch), d2.arg(launch)];

    let mine = kit::timed::student(
        gpu,
        |_| out.poison(),
        |launch| module.launch_async(KERNEL, cfg, &a(launch)),
        |launch| {
            let mut rng = ctx.rng_for(&format!("launch {launch}"));
            let blocks = spot_blocks(PERF_BLOCKS).into_iter().chain((0..4).map(|_| rng.random_range(0..PERF_BLOCKS)));
            let start = d1.at(launch, 0);
            spot_check(&in1[start..], &in2[start..], blocks, |b| out.read_range(b as usize * SIZE, SIZE))
        },
    )?;
    let yardstick = ctx.time_yardstick(&global, "compute_global", cfg, &a(0), || out.poison())?;
    kit::perf::require_speedup(
        KERNEL,
        &mine,
        &yardstick,
        "reading in1 and in2 from global memory on every use",
        MIN_SPEEDUP_VS_GLOBAL,
    )
}

/// Checks the outputs of `blocks` (read by `read`) against the CPU, for the
/// inputs `in1` and `in2` of the launch.
fn spot_check(
    in1: &[u8],
    in2: &[u8],
    blocks: impl IntoIterator<Item = u32>,
    read: impl Fn(u32) -> Result<Vec<u32>>,
) -> Result<()> {
    for b in blocks {
        let at = b as usize * SIZE;
        let expected = cpu::correlate_block(&in1[at..at + SIZE], &in2[at..at + SIZE]);
        check::exact(&format!("out of block {b}"), &expected, &read(b)?)?;
    }
    Ok(())
}

/// Blocks of input past the timed ones: room for every launch's window.
const ROOM_BLOCKS: u32 = (window_room::<u8>() / SIZE) as u32;
const _: () = assert!(window_step::<u8>() % SIZE == 0, "a window starts at a block boundary");

/// The blocks checked after the timed run: the first, the last, and evenly spaced ones.
pub fn spot_blocks(blocks: u32) -> Vec<u32> {
    let mut picked: Vec<u32> = (0..SPOT_BLOCKS).map(|i| i * blocks / SPOT_BLOCKS).collect();
    picked.push(blocks - 1);
    picked.dedup();
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_gives_exactly_two_vectors_of_shared_memory() {
        let cfg = launch_config(7);
        assert_eq!((cfg.grid.0, cfg.block.0, cfg.shared_bytes), (7, 256, 512));
        assert_eq!(SHARED_BYTES as usize, 2 * SIZE);
    }

    #[test]
    fn many_blocks_are_tested() {
        assert!(BLOCKS.contains(&1));
        assert!(BLOCKS.iter().any(|&b| b > 256), "many blocks");
        const { assert!(PERF_BLOCKS > 132 * 8 * 10, "the timed run needs many waves of blocks on an H100") };
    }

    #[test]
    fn spot_blocks_cover_both_ends() {
        let picked = spot_blocks(PERF_BLOCKS);
        assert_eq!(picked.first(), Some(&0));
        assert_eq!(picked.last(), Some(&(PERF_BLOCKS - 1)));
        assert_eq!(picked.len(), SPOT_BLOCKS as usize + 1);
        assert_eq!(spot_blocks(1), vec![0]);
    }

    #[test]
    fn spot_check_names_the_wrong_block() {
        let (in1, in2) = cpu::random_pairs(&mut kit::inputs::rng_for(5, "spot"), 20);
        let mut out = cpu::correlate(&in1, &in2);
        fn read(out: &[u32]) -> impl Fn(u32) -> Result<Vec<u32>> + '_ {
            move |b| Ok(out[b as usize * SIZE..][..SIZE].to_vec())
        }
        assert!(spot_check(&in1, &in2, spot_blocks(20), read(&out)).is_ok());
        out[19 * SIZE + 3] = u32::MAX;
        let err = spot_check(&in1, &in2, spot_blocks(20), read(&out)).unwrap_err().to_string();
        assert!(err.contains("block 19") && err.contains("never written"), "{err}");
    }

    /// A module shaped like NVRTC's output for this file.
    fn ptx(module_scope: &str, body: &str) -> String {
        format!(
            ".version 8.8\n.target sm_75\n.address_size 64\n{module_scope}\n.visible .entry compute(\n\t.param .u64 \
             compute_param_0\n)\n{{\n{body}\n\tret;\n}}\n"
        )
    }

    const EXTERN: &str = ".extern .shared .align 16 .b8 in[];";
    const STAGE: &str = "\tst.shared.u8 \t[%rd12], %rs1;\n\tst.shared.u8 \t[%rd12+256], %rs2;";
    const USE: &str = "\tld.shared.v4.u32 \t{%r1, %r2, %r3, %r4}, [%rd50];\n\tld.shared.u8 \t%r32, [%rd16+256];";

    #[test]
    fn structure_accepts_the_staged_dynamic_buffer() {
        let good = ptx(EXTERN, &format!("{STAGE}\n\tbar.sync \t0;\n{USE}"));
        let note = dynamic_shared_in(&good).unwrap();
        assert!(note.contains("within 512 bytes"), "{note}");
    }

    #[test]
    fn structure_explains_what_is_missing() {
        let err = |p: String| dynamic_shared_in(&p).unwrap_err().to_string();
        // The empty stub.
        assert!(err(ptx("", "")).contains("no dynamic shared memory"));
        // A fixed-size array instead of the launch-sized buffer.
        let fixed = ptx("", &format!("\t.shared .align 1 .b8 _ZZ7computeE2in[512];\n{STAGE}\n\tbar.sync \t0;\n{USE}"));
        assert!(err(fixed).contains("no dynamic shared memory"));
        let both =
            ptx(EXTERN, &format!("\t.shared .align 1 .b8 _ZZ7computeE3buf[512];\n{STAGE}\n\tbar.sync \t0;\n{USE}"));
        assert!(err(both).contains("512 bytes of fixed-size shared memory"));
        // Staged, never read back (or the reverse).
        assert!(err(ptx(EXTERN, &format!("{STAGE}\n\tbar.sync \t0;"))).contains("no load from it"));
        // No barrier.
        assert!(err(ptx(EXTERN, &format!("{STAGE}\n{USE}"))).contains("no barrier"));
        // An `unsigned int` buffer: in2 at byte 1024, past the 512 bytes of the launch.
        let wide = "\tst.shared.u32 \t[%rd12], %r16;\n\tst.shared.u32 \t[%rd12+1024], %r17;\n\tbar.sync \t0;\n\
                    \tld.shared.u32 \t%r27, [%rd17+1024];";
        let e = err(ptx(EXTERN, wide));
        assert!(e.contains("1028 bytes past the start") && e.contains("512 bytes"), "{e}");
    }

    #[test]
    fn exercise_has_one_part_with_every_kind_of_check() {
        let ex = exercise();
        assert_eq!((ex.id, ex.slug, ex.dir), ("ex06", "shared-load", "exercises/ex06-shared-load"));
        let names: Vec<_> = ex.parts[0].checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "blocks=1",
                "blocks=3",
                "blocks=263",
                "rotated",
                "saturated",
                "dynamic-shared",
                "faster-than-global-reads"
            ]
        );
    }
}
