//! ex06: two vectors into one dynamically sized shared buffer (seed 004, the
//! `compute(out, in1, in2)` exercise). Each block copies its pair of SIZE-byte
//! vectors into one `extern __shared__` buffer whose size the host gives at
//! launch (2*SIZE bytes), one element of each per thread, then computes from
//! it. The seed leaves the computation open; here it is a circular
//! cross-correlation, which reads all 2*SIZE bytes in every thread, so staging
//! them (2 global loads per thread instead of 512) pays.

pub mod cpu;
pub mod measured;

use std::sync::Arc;

use anyhow::{anyhow, Result};
use kit::timed::Fresh;
use kit::{args, check, require, Arg, Check, Ctx, DeviceBuffer, Exercise, LaunchConfig, Module, Part};

/// Elements of each vector (the seed's `#define SIZE 256`), and threads per block.
pub const SIZE: usize = 256;
/// One thread per element: thread t copies in1[t] and in2[t].
pub const THREADS: u32 = SIZE as u32;
/// Dynamic shared memory per block: both vectors, `2*SIZE*sizeof(unsigned char)`
/// (the seed's `2*SIZE`). Exactly this, so a kernel that needs more is not hidden.
pub const SHARED_BYTES: u32 = (2 * SIZE * std::mem::size_of::<u8>()) as u32;
/// Independent blocks (pairs) for the random cases: one, a few, many. (The
/// CPU reference costs SIZE^2 products per block; the timed run's 32768 blocks,
/// many waves on any GPU, are checked on the device against the grader's kernel.)
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
    ctx.kernel_ptx(KERNEL)?; // a missing or misspelled kernel, before anything is computed
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
    // Taken after the inputs: a check run ahead of the GPU (grader/src/ahead.rs) stops here.
    let module = ctx.kernel_module(KERNEL)?;
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

/// Random bytes for the timing, every value 0..=255 as likely: the
/// distribution of [`cpu::random_pairs`], drawn on the device.
pub fn byte_table() -> Vec<u8> {
    let uniform: Vec<(u8, f64)> = (0..=255).map(|b| (b, 1.0)).collect();
    kit::timed::byte_table(&uniform).expect("256 bytes of weight 1")
}

/// The buffers of one timing: launch `l` correlates the pairs
/// [`Fresh::fill`] draws for it (from the run's secret key), and the grader's
/// global-memory kernel computes what every output must be.
struct TimedCorrelation {
    blocks: u32,
    in1: Fresh<u8>,
    in2: Fresh<u8>,
    out: DeviceBuffer<u32>,
    /// The grader's correlation of the launch being checked.
    expected: DeviceBuffer<u32>,
    global: Arc<Module>,
}

impl TimedCorrelation {
    fn new(ctx: &Ctx, blocks: u32) -> Result<Self> {
        let gpu = ctx.gpu()?;
        let (n, table) = (blocks as usize * SIZE, byte_table());
        Ok(Self {
            blocks,
            in1: Fresh::bytes(ctx, "in1", n, &table)?,
            in2: Fresh::bytes(ctx, "in2", n, &table)?,
            out: gpu.poisoned::<u32>("out", n)?,
            expected: gpu.poisoned::<u32>("out (compute_global)", n)?,
            global: ctx.yardstick("compute_global", include_str!("../yardsticks/compute_global.cu"))?,
        })
    }

    /// The kernel's arguments, writing into `out`.
    fn args(&self, out: &DeviceBuffer<u32>) -> [Arg; 3] {
        [out.arg(), self.in1.arg(), self.in2.arg()]
    }

    /// Launch `launch`'s pairs, and `out` poisoned (not timed).
    fn prepare(&self, launch: usize) -> Result<()> {
        self.in1.fill(launch)?;
        self.in2.fill(launch)?;
        self.out.poison()
    }

    /// Both vectors are still launch `launch`'s, and every output is the
    /// grader's correlation of them, compared on the device.
    fn check(&self, launch: usize) -> Result<()> {
        self.in1.intact(launch)?;
        self.in2.intact(launch)?;
        self.expected.poison()?;
        self.global.launch("compute_global", launch_config(self.blocks), &self.args(&self.expected))?;
        kit::timed::same_as_expected("out", &self.expected, &self.out, |i| {
            format!(" (block {}, lag {})", i / SIZE, i % SIZE)
        })
    }
}

fn faster_than_global_reads(ctx: &Ctx) -> Result<String> {
    let module = ctx.kernel_module(KERNEL)?;
    let gpu = module.gpu();
    let timed = TimedCorrelation::new(ctx, PERF_BLOCKS)?;
    let cfg = launch_config(PERF_BLOCKS);
    let mine = kit::timed::student(
        gpu,
        |launch| timed.prepare(launch),
        |_| module.launch_async(KERNEL, cfg, &timed.args(&timed.out)),
        |launch| timed.check(launch),
    )?;
    timed.in1.fill(0)?;
    timed.in2.fill(0)?;
    let yardstick =
        ctx.time_yardstick(&timed.global, "compute_global", cfg, &timed.args(&timed.out), || timed.out.poison())?;
    kit::perf::require_speedup(
        KERNEL,
        &mine,
        &yardstick,
        "reading in1 and in2 from global memory on every use",
        MIN_SPEEDUP_VS_GLOBAL,
    )
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

    /// Runs `f` in the context of `file`'s timed check on the simulator.
    fn on_sim(file: &str, f: impl FnOnce(&Ctx, &Module)) {
        kit::trial::on_sim(
            "ex06::load::perf::faster-than-global-reads",
            file,
            |text| text,
            |ctx| f(ctx, ctx.kernel_module(KERNEL).unwrap()),
        );
    }

    fn launch(t: &TimedCorrelation, module: &Module) {
        module.launch(KERNEL, launch_config(t.blocks), &t.args(&t.out)).unwrap();
    }

    #[test]
    fn timed_launches_are_checked_in_full_against_the_global_kernel() {
        on_sim("reference/ex06-shared-load/kernels/shared_load.cu", |ctx, module| {
            let t = TimedCorrelation::new(ctx, 5).unwrap();
            let n = 5 * SIZE;
            for l in 0..3 {
                t.prepare(l).unwrap();
                launch(&t, module);
                t.check(l).unwrap_or_else(|e| panic!("launch {l}: {e:#}"));
                let (a, b) = (t.in1.host_values(l, 0, n), t.in2.host_values(l, 0, n));
                assert!(a.iter().any(|&x| x >= 128), "bytes above 127 catch a signed `char`");
                assert_eq!(t.out.read().unwrap(), cpu::correlate(&a, &b), "launch {l}");
            }
            // Launch 0's output, checked as launch 1's.
            t.prepare(0).unwrap();
            launch(&t, module);
            t.in1.fill(1).unwrap();
            t.in2.fill(1).unwrap();
            let e = format!("{:#}", t.check(1).unwrap_err());
            assert!(e.contains("`out`[0] (block 0, lag 0): expected"), "{e}");
            // A kernel that wrote into its second vector.
            t.prepare(2).unwrap();
            launch(&t, module);
            t.in2.overwrite_one(2, 777).unwrap();
            let e = t.check(2).unwrap_err();
            let modified = e.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
            assert_eq!((modified.buffer.as_str(), modified.index), ("in2", 777));
            // One output of the last block never written.
            t.prepare(1).unwrap();
            launch(&t, module);
            t.out.write_at(4 * SIZE + 3, &[u32::MAX]).unwrap();
            let e = format!("{:#}", t.check(1).unwrap_err());
            assert!(e.contains("(block 4, lag 3)") && e.contains("nothing (never written)"), "{e}");
        });
    }

    #[test]
    fn timed_bytes_are_uniform() {
        let table = byte_table();
        assert!((0..=255u8).all(|b| table.iter().filter(|&&x| x == b).count() == table.len() / 256));
    }

    /// The cheat cases (grader/tests/cheats) act only at the timed size: on the
    /// simulator they pass every other check of the part, and the stand-in.
    #[test]
    fn the_cheats_pass_every_check_but_the_timing_on_the_simulator() {
        let file = "grader/tests/cheats/ex06-copies-next-block/exercises/ex06-shared-load/kernels/shared_load.cu";
        kit::trial::passes_every_check_on_sim(&exercise(), exercise().parts[0].name, file);
    }

    /// A module shaped like NVRTC's output for this file.
    fn ptx(module_scope: &str, body: &str) -> String {
        kit::trial::nvrtc_like_ptx("compute", module_scope, body)
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
