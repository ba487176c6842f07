//! ex05: 1D stencil of radius 3 (seed 004, "Opération de type stencil 1D").
//! Each block stages its inputs plus a halo of RADIUS elements on each side in
//! shared memory, then every thread averages its 2*RADIUS+1 neighbours from
//! there: each input is read once from global memory and used 7 times.
//!
//! Borders (the seed ignores them): the host pads the input with RADIUS
//! elements on each side, so `in` has n + 2*RADIUS elements and `out[i]` is the
//! mean of `in[i ..= i + 2*RADIUS]`. No output needs a special case; only the
//! loads of the last block must stay inside the padded array.

pub mod cpu;
pub mod measured;

use std::sync::Arc;

use anyhow::{anyhow, Result};
use kit::timed::Fresh;
use kit::{args, check, require, Arg, Check, Ctx, DeviceBuffer, Exercise, LaunchConfig, Module, Part};

pub const RADIUS: usize = 3;
/// Inputs per output: 2*RADIUS + 1.
pub const WINDOW: usize = 2 * RADIUS + 1;
/// Threads per block, `BLOCK_SIZE` in the `.cu` file (the seed's value). The
/// shared array is sized at compile time, so the host launches exactly this.
pub const THREADS: u32 = 512;
/// Shared memory the block's window needs: BLOCK_SIZE + 2*RADIUS ints.
pub const WINDOW_SHARED_BYTES: usize = (THREADS as usize + 2 * RADIUS) * 4;
/// Outputs tested for correctness: one, fewer than the radius, one short of a
/// block, one block, one past, and large primes spanning many blocks.
pub const SIZES: [usize; 8] = [1, 2, 7, 511, 512, 513, 65_537, 1_000_003];
/// The stencil must move data at this share of the copy bandwidth or more
/// (bytes: n + 2*RADIUS ints read, n written). Provisional: see CALIBRATION.md.
pub const MIN_COPY_SHARE: f64 = 0.45;
const KERNEL: &str = "stencil_1d";

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex05",
        slug: "stencil",
        title: "1D stencil of radius 3 with the halo in shared memory",
        dir: "exercises/ex05-stencil",
        parts: vec![part()],
    }
}

fn part() -> Part {
    let mut part = Part::new("stencil", "kernels/stencil.cu", &[KERNEL], 10.0);
    for n in SIZES {
        part = part.check(Check::correctness(format!("n={n}"), move |ctx| correct(ctx, n)));
    }
    part.check(Check::structure("few-global-loads-per-output", measured::shared_halo)).check(
        Check::performance("share-of-copy", share_of_copy)
            // Bandwidth needs warp-wide loads; the global-memory stencil, fast thanks to L1, passes this too.
            .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::warp_wide_loads(ctx))),
    )
}

/// `ceil(n / BLOCK_SIZE)` blocks of BLOCK_SIZE threads; no dynamic shared memory.
pub fn launch_config(n: usize) -> LaunchConfig {
    LaunchConfig::linear(n.div_ceil(THREADS as usize) as u32, THREADS)
}

/// Bytes a stencil over `n` outputs must move at least: the padded input once, the output once.
pub fn stencil_bytes(n: usize) -> usize {
    (2 * n + 2 * RADIUS) * std::mem::size_of::<i32>()
}

fn correct(ctx: &Ctx, n: usize) -> Result<String> {
    ctx.kernel_ptx(KERNEL)?; // a missing or misspelled kernel, before anything is computed
                             // The same for every student of a batch: drawn and computed once per seed.
    let inputs = ctx.shared("in+out", || {
        let input = cpu::padded_input(&mut ctx.rng(), n);
        let expected = cpu::stencil(&input);
        (input, expected)
    });
    // Taken after the inputs: a check run ahead of the GPU (grader/src/ahead.rs) stops here.
    let module = ctx.kernel_module(KERNEL)?;
    let (input, expected) = (&inputs.0, &inputs.1);
    let gpu = module.gpu();
    let d_in = gpu.upload("in", input)?;
    let d_out = gpu.poisoned::<i32>("out", n)?;
    module.launch(KERNEL, launch_config(n), &args![&d_in, &d_out, n as i32])?;
    check::exact("out", expected, &d_out.read()?)?;
    Ok(format!("{} block(s)", launch_config(n).grid.0))
}

/// The structure check on a compiled module's PTX.
pub fn shared_halo_in(ptx: &str) -> Result<String> {
    let k = kit::inspect::kernel(ptx, KERNEL).ok_or_else(|| anyhow!("no kernel named `{KERNEL}`"))?;
    require(k.writes_shared(), || {
        "stencil_1d does not use shared memory: the PTX has no store to it. Copy the block's inputs and \
         both halos into a `__shared__ int tmp[BLOCK_SIZE + 2 * RADIUS]`, then compute from it: each \
         input is then read once from global memory instead of 2*RADIUS+1 times. (If you did copy them, \
         the compiler removed the copies because the sums never read them: read the sums from `tmp`)"
            .into()
    })?;
    let declared = k.static_shared_bytes();
    require(declared >= WINDOW_SHARED_BYTES, || {
        format!(
            "stencil_1d declares {declared} bytes of shared memory, but the block's window is BLOCK_SIZE + \
             2*RADIUS = {} ints ({WINDOW_SHARED_BYTES} bytes): stage both halos too, not only the block's own \
             elements, so that no neighbour has to come from global memory",
            WINDOW_SHARED_BYTES / 4
        )
    })?;
    require(k.has_barrier(), || {
        "stencil_1d has no barrier. Call __syncthreads() between filling the shared array and reading it: \
         a thread's neighbours are loaded by other threads (other warps), which may not have run yet"
            .into()
    })?;
    require(k.reads_shared(), || {
        "stencil_1d fills shared memory but never reads it: compute the sums from the shared array, not \
         from `in`"
            .into()
    })?;
    Ok(format!("{declared} bytes of shared memory, barrier, sums read from shared memory"))
}

/// Outputs for the timing: half the kit's bandwidth size for each array, so
/// input and output together are 8x the L2 cache (4x each).
fn perf_outputs(gpu: &kit::Gpu) -> usize {
    outputs_of(kit::exercise::bandwidth_elements(gpu))
}

/// [`perf_outputs`] of a GPU whose bandwidth size is `elements`.
pub fn outputs_of(elements: usize) -> usize {
    (elements / 2).min(i32::MAX as usize - 2 * RADIUS)
}

/// The buffers of one timing: launch `l` reads the padded input
/// [`Fresh::fill`] draws for it (from the run's secret key, in the range of
/// the correctness inputs), and the grader's global-memory stencil computes
/// what every output must be.
struct TimedStencil {
    n: usize,
    input: Fresh<i32>,
    out: DeviceBuffer<i32>,
    /// The grader's stencil of the launch being checked.
    expected: DeviceBuffer<i32>,
    global: Arc<Module>,
}

impl TimedStencil {
    fn new(ctx: &Ctx, n: usize) -> Result<Self> {
        let gpu = ctx.gpu()?;
        Ok(Self {
            n,
            input: Fresh::ints(ctx, "in", n + 2 * RADIUS, -cpu::MAX_ABS, cpu::MAX_ABS - 1)?,
            out: gpu.poisoned::<i32>("out", n)?,
            expected: gpu.poisoned::<i32>("out (stencil_global)", n)?,
            global: ctx.yardstick("stencil_global", include_str!("../yardsticks/stencil_global.cu"))?,
        })
    }

    /// The kernel's arguments, writing into `out`.
    fn args(&self, out: &DeviceBuffer<i32>) -> [Arg; 3] {
        [self.input.arg(), out.arg(), (self.n as i32).into()]
    }

    /// Launch `launch`'s input, and `out` poisoned (not timed).
    fn prepare(&self, launch: usize) -> Result<()> {
        self.input.fill(launch)?;
        self.out.poison()
    }

    /// The input is still launch `launch`'s, and every output is the grader's
    /// stencil of it, compared on the device.
    fn check(&self, launch: usize) -> Result<()> {
        self.input.intact(launch)?;
        self.expected.poison()?;
        self.global.launch("stencil_global", launch_config(self.n), &self.args(&self.expected))?;
        let n = self.n;
        kit::timed::same_as_expected("out", &self.expected, &self.out, |_| format!(" (n = {n})"))
    }
}

fn share_of_copy(ctx: &Ctx) -> Result<String> {
    let module = ctx.kernel_module(KERNEL)?;
    let gpu = module.gpu();
    let copy_gbps = ctx.copy_bandwidth_gbps()?;
    let n = perf_outputs(gpu);
    let timed = TimedStencil::new(ctx, n)?;
    let cfg = launch_config(n);
    let mine = kit::timed::student(
        gpu,
        |launch| timed.prepare(launch),
        |_| module.launch_async(KERNEL, cfg, &timed.args(&timed.out)),
        |launch| timed.check(launch),
    )?;
    timed.input.fill(0)?;
    let yardstick =
        ctx.time_yardstick(&timed.global, "stencil_global", cfg, &timed.args(&timed.out), || timed.out.poison())?;

    let bytes = stencil_bytes(n);
    let note = format!(
        "(n = {n}; for comparison, a stencil reading all 7 inputs from global memory: {:.0} GB/s)",
        yardstick.gb_per_s(bytes)
    );
    match kit::perf::require_share(KERNEL, mine.gb_per_s(bytes), "copy", copy_gbps, MIN_COPY_SHARE) {
        Ok(line) => Ok(format!("{line} {note}")),
        Err(e) => Err(anyhow!("{e} {note}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_covers_every_output_with_whole_blocks() {
        assert_eq!(launch_config(1).grid.0, 1);
        assert_eq!(launch_config(512).grid.0, 1);
        assert_eq!(launch_config(513).grid.0, 2);
        assert_eq!(launch_config(1_000_003).grid.0, 1954);
        assert_eq!(launch_config(7).block.0, THREADS);
        assert_eq!(launch_config(7).shared_bytes, 0);
    }

    #[test]
    fn sizes_cover_the_edge_cases() {
        let t = THREADS as usize;
        assert!(SIZES.iter().any(|&n| n < 2 * RADIUS), "a size whose halos overlap");
        assert!(SIZES.iter().any(|&n| n < t), "smaller than one block");
        assert!(SIZES.contains(&t), "exactly one block");
        assert!(SIZES.iter().any(|&n| n % t == 1), "one element in the last block");
        assert!(SIZES.iter().any(|&n| n / t > 1000), "many blocks");
        assert!(SIZES.iter().filter(|&&n| n % t != 0).count() >= 6);
    }

    #[test]
    fn bytes_and_shared_window() {
        assert_eq!(stencil_bytes(10), (10 + 6 + 10) * 4);
        assert_eq!(WINDOW_SHARED_BYTES, 2072);
        assert_eq!(WINDOW, 7);
    }

    /// Runs `f` in the context of `file`'s timed check on the simulator.
    fn on_sim(file: &str, f: impl FnOnce(&Ctx, &Module)) {
        kit::trial::on_sim(
            "ex05::stencil::perf::share-of-copy",
            file,
            |text| text,
            |ctx| f(ctx, ctx.kernel_module(KERNEL).unwrap()),
        );
    }

    /// Prepares, launches and checks launch `l`, as kit::timed::student does.
    fn timed_launch(t: &TimedStencil, module: &Module, l: usize) -> Result<()> {
        t.prepare(l)?;
        module.launch(KERNEL, launch_config(t.n), &t.args(&t.out))?;
        t.check(l)
    }

    #[test]
    fn timed_launches_are_checked_in_full_against_the_global_stencil() {
        on_sim("reference/ex05-stencil/kernels/stencil.cu", |ctx, module| {
            let n = 3 * THREADS as usize + 100;
            let t = TimedStencil::new(ctx, n).unwrap();
            for l in 0..3 {
                timed_launch(&t, module, l).unwrap_or_else(|e| panic!("launch {l}: {e:#}"));
                let padded = t.input.host_values(l, 0, n + 2 * RADIUS);
                assert!(padded.iter().all(|x| (-cpu::MAX_ABS..cpu::MAX_ABS).contains(x)));
                assert_eq!(t.out.read().unwrap(), cpu::stencil(&padded), "launch {l}");
            }
            // Launch 0's output, checked as launch 1's.
            t.prepare(0).unwrap();
            module.launch(KERNEL, launch_config(n), &t.args(&t.out)).unwrap();
            t.input.fill(1).unwrap();
            let e = format!("{:#}", t.check(1).unwrap_err());
            assert!(e.contains("`out`[0] (n = 1636): expected"), "{e}");
            // A kernel that wrote into its input.
            t.prepare(2).unwrap();
            module.launch(KERNEL, launch_config(n), &t.args(&t.out)).unwrap();
            t.input.overwrite_one(2, n + 5).unwrap();
            let e = t.check(2).unwrap_err();
            let modified = e.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
            assert_eq!((modified.buffer.as_str(), modified.index), ("in", n + 5));
            // The last output never written.
            t.prepare(1).unwrap();
            module.launch(KERNEL, launch_config(n), &t.args(&t.out)).unwrap();
            t.out.write_at(n - 1, &[-1]).unwrap();
            let e = format!("{:#}", t.check(1).unwrap_err());
            assert!(e.contains(&format!("`out`[{}]", n - 1)) && e.contains("nothing (never written)"), "{e}");
        });
    }

    /// Two timing tricks of the cheat corpus (grader/tests/cheats) act only at
    /// the timed size, where the structure check now measures a few blocks
    /// too: both race there, on a global that block 0 writes and the other
    /// blocks read.
    #[test]
    fn tricks_that_act_only_at_the_timed_size_show_there_on_the_simulator() {
        use kit::trial::{fails, Run};
        let (ex, check) = (exercise(), "few-global-loads-per-output");
        let case = |name: &str| format!("grader/tests/cheats/{name}/exercises/ex05-stencil/kernels/stencil.cu");
        let at = "at 52428800 outputs (the timed size: 4 of its 102400 blocks on the simulator)";
        if let Some(msg) = fails(&ex, "stencil", check, Run::Check, &case("ex05-stencil-shifts-last-output")) {
            // Block 0 (always sampled at the timed size) writes what the others read: a race.
            assert!(msg.starts_with(at) && msg.contains("data race between blocks"), "{msg}");
        }
        if let Some(msg) = fails(&ex, "stencil", check, Run::Check, &case("ex05-stencil-pattern-from-index")) {
            assert!(msg.starts_with(at) && msg.contains("data race between blocks"), "{msg}");
        }
    }

    /// A module shaped like NVRTC's output for this file.
    fn ptx(body: &str) -> String {
        kit::trial::nvrtc_like_ptx("stencil_1d", "", body)
    }

    const WINDOW_DECL: &str = "\t.shared .align 4 .b8 _ZZ10stencil_1dE3tmp[2072];";
    const STAGE: &str = "\tld.global.u32 \t%r7, [%rd1];\n\tst.shared.u32 \t[%rd2], %r7;";
    const SUM: &str = "\tld.shared.u32 \t%r11, [%rd2];\n\tld.shared.u32 \t%r12, [%rd2+24];";

    #[test]
    fn structure_accepts_the_staged_window() {
        let good = ptx(&format!("{WINDOW_DECL}\n{STAGE}\n\tbar.sync \t0;\n{SUM}"));
        assert!(shared_halo_in(&good).unwrap().contains("2072 bytes"));
    }

    #[test]
    fn structure_explains_what_is_missing() {
        let err = |p: String| shared_halo_in(&p).unwrap_err().to_string();
        // The empty stub, or a global-memory-only kernel.
        assert!(err(ptx("\tld.global.u32 \t%r7, [%rd1];")).contains("does not use shared memory"));
        // Only the block's own elements staged: the halos come from global memory.
        let no_halo = format!("\t.shared .align 4 .b8 _ZZ10stencil_1dE3tmp[2048];\n{STAGE}\n\tbar.sync \t0;\n{SUM}");
        assert!(err(ptx(&no_halo)).contains("declares 2048 bytes"));
        // No barrier between the copies and the sums.
        assert!(err(ptx(&format!("{WINDOW_DECL}\n{STAGE}\n{SUM}"))).contains("no barrier"));
        // Copies kept (e.g. read once) but the sums come from global memory.
        assert!(err(ptx(&format!("{WINDOW_DECL}\n{STAGE}\n\tbar.sync \t0;"))).contains("never reads it"));
    }

    #[test]
    fn exercise_has_one_part_with_every_kind_of_check() {
        let ex = exercise();
        assert_eq!((ex.id, ex.slug, ex.dir), ("ex05", "stencil", "exercises/ex05-stencil"));
        let names: Vec<_> = ex.parts[0].checks.iter().map(|c| c.name.as_str()).collect();
        assert!(
            names.contains(&"n=1000003")
                && names.contains(&"few-global-loads-per-output")
                && names.contains(&"share-of-copy")
        );
    }
}
