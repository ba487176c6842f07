//! ex05's halo judged by what it does to global memory (kit::measure): the
//! kernel runs on a small seeded input on a private simulator and the check
//! counts global loads per output. Staged in shared memory, each input is read
//! about once (512 + 6 loads per 512 outputs); read from global memory on every
//! use, 2*RADIUS+1 = 7 times.

use std::ops::RangeInclusive;

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, BlockSample};
use kit::{args, Ctx};

use crate::{cpu, launch_config, KERNEL, RADIUS, THREADS, WINDOW};

/// Outputs of the measured inputs: from a few blocks of 512 to twice the
/// correctness checks' 65 537 (256 blocks; their 1 000 003 would cost each
/// measured check seconds of simulation). Three lengths are drawn from it by
/// the run's secret, one from each third on a log scale
/// (`kit::measure::sizes_across`), and each must pass: the figures are per
/// output and per request, the same at every length for a kernel that does
/// not look at it.
pub const MEASURE_N: RangeInclusive<usize> = 1_600..=131_072;
/// Lengths each measured check runs on.
pub const MEASURED_LENGTHS: usize = 3;
/// Global loads per output a staged window stays at or under (1.01 for the
/// reference; 7 without staging). See CALIBRATION.md.
pub const MAX_LOADS_PER_OUTPUT: f64 = 2.0;
/// Sectors per warp request and per active lane of the loads that fill the
/// window, one of which a coalesced fill stays at or under
/// (kit::measure::require_coalesced_fill): 32 consecutive ints are 4 sectors
/// (5 where the block's first input is not 32-byte aligned), 0.125 to 0.16
/// per lane; a window filled in a contiguous chunk of four per thread, or down
/// the columns of a 2D view, 13 to 16, 0.5 or more per lane. See CALIBRATION.md.
pub const MAX_FILL_SECTORS: (f64, f64) = (8.0, 0.3);
/// Stand-in for `share-of-copy`: active lanes per global load request at or
/// above which the loads are warp-wide (32 for the reference; 1 when one thread
/// loads the window alone).
pub const MIN_LANES_PER_LOAD: f64 = 16.0;

/// Blocks the simulator runs of the stencil at its timed size
/// ([`crate::outputs_of`] an H100's bandwidth size: 52 428 800 outputs,
/// 102 400 blocks), drawn by the run's secret: block 0 (of the first wave, kit::measure::BlockSample::at_timed_size) and three
/// of the later ones. A kernel can tell the measured lengths (at most 256
/// blocks) from the timed launch by its grid or `n` alone; at the timed size
/// it takes its timed path.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;

/// A kernel's memory behaviour on the measured input, and the outputs its
/// measured blocks compute.
pub struct Measured {
    pub m: kit::measure::Measurement,
    pub n: usize,
}

impl std::ops::Deref for Measured {
    type Target = kit::measure::Measurement;
    fn deref(&self) -> &Self::Target {
        &self.m
    }
}

/// Runs the kernel once on a seeded padded input of `n` outputs.
pub fn measure_on(ctx: &Ctx, n: usize) -> Result<Measured> {
    let values = cpu::padded_input(&mut ctx.rng(), n);
    let m = ctx.measure(KERNEL, |module| {
        let gpu = module.gpu();
        let input = gpu.upload("in", &values)?;
        let out = gpu.poisoned::<i32>("out", n)?;
        module.launch(KERNEL, launch_config(n), &args![&input, &out, n as i32])?;
        kit::measure::require_right_result(kit::check::exact("out", &cpu::stencil(&values), &out.read()?))
    })?;
    Ok(Measured { m, n })
}

/// Outputs of the timed launch on an H100 (kit::exercise::TIMED_L2_BYTES).
pub fn timed_outputs() -> usize {
    crate::outputs_of(kit::exercise::timed_bandwidth_elements())
}

/// The kernel run once on the simulator at its timed size
/// ([`timed_outputs`]), [`TIMED_SAMPLED_BLOCKS`] of its blocks: the input
/// generated where they read it (kit::Gpu::upload_generated), and what they
/// wrote checked, wherever they wrote it. Its `n` is the outputs those blocks
/// compute.
pub fn measure_at_timed_size(ctx: &Ctx) -> Result<Measured> {
    let n = timed_outputs();
    let cfg = launch_config(n);
    let (first, later) = TIMED_SAMPLED_BLOCKS;
    let sample =
        BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), cfg.grid.0 as u64, (first, later));
    // The outputs the README gives the sampled blocks: what the figures are per.
    let computed = sample.linear_elements(THREADS as usize, n);
    let values = cpu::TimedInput::new(&ctx.rng_for("timed-size input"));
    let m = kit::measure::measure_ptx_sampled(&ctx.build.ptx, KERNEL, &sample, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into `in`.
        let (input, out) = gpu.unwatched(|| {
            let v = values.clone();
            let input = gpu.upload_generated("in", n + 2 * RADIUS, move |first, out: &mut [i32]| v.fill(first, out));
            let out = gpu.poisoned_generated::<i32>("out", n);
            (input, out)
        });
        let (input, out) = (input?, out?);
        module.launch(KERNEL, cfg, &args![&input, &out, n as i32])?;
        let written = kit::measure::sampled_writes(&out, || computed.clone())?;
        let right = kit::check::exact_at("out", n, &written, |i| values.stencil_at(i));
        kit::measure::require_right_result_at_timed_size(right, &format!("n = {n}"), sample.blocks().len())
    })?;
    Ok(Measured { m, n: computed.len() })
}

/// `judge` on each length drawn from [`MEASURE_N`] (the worst case: each must
/// pass), then at the timed size: the first failure, named with its length,
/// or the figures of the last measured length.
pub fn on_every_length(ctx: &Ctx, judge: impl Fn(&Measured) -> Result<String>) -> Result<String> {
    let lengths = kit::measure::sizes_across(ctx, "outputs", MEASURE_N, MEASURED_LENGTHS);
    let line = kit::measure::on_every_size(&lengths, |n| format!("{n} outputs"), |n| judge(&measure_on(ctx, n)?))?;
    let n = timed_outputs();
    let note = kit::measure::judge_at_timed_size(
        (&format!("{n} outputs"), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, launch_config(n).grid.0 as u64),
        &format!("on the measured lengths {line}"),
        || measure_at_timed_size(ctx),
        judge,
    )?;
    Ok(line + &note)
}

pub fn loads_per_output(m: &Measured) -> f64 {
    m.thread_global_loads() as f64 / m.n as f64
}

fn figures(m: &Measured) -> String {
    format!(
        "{:.2} global loads per output (staged: ~1; unstaged: {WINDOW}); {:.1} active lanes per global load",
        loads_per_output(m),
        m.global_lanes_per_load()
    )
}

/// The structure check `few-global-loads-per-output`: each input read from global memory about once.
pub fn shared_halo(ctx: &Ctx) -> Result<String> {
    let result = on_every_length(ctx, |m| {
        let per = loads_per_output(m);
        if per > MAX_LOADS_PER_OUTPUT {
            bail!(
                "{KERNEL}: {per:.2} global loads per output (a window staged in shared memory: ~1; at most \
                 {MAX_LOADS_PER_OUTPUT}){}: the sums still read their neighbours from global memory. Copy the \
                 block's inputs and both halos ({RADIUS} on each side) into the shared array once, then compute \
                 every sum from it",
                worst_at(m.worst_global(AccessKind::GlobalLoad))
            );
        }
        kit::measure::require_coalesced_fill(
            m,
            MAX_FILL_SECTORS,
            "4 or 5 per request, 0.125 to 0.16 per lane",
            "Let consecutive threads copy consecutive inputs: thread t copies tmp[t] = in[base + t] (and the \
             halo with the first threads, or a loop over j = t, t + blockDim.x, ...)",
        )?;
        Ok(figures(m))
    });
    if let Err(e) = &result {
        // The PTX names the missing piece better (no shared stores, too small an array, no barrier).
        crate::shared_halo_in(&ctx.build.ptx).map_err(|p| p.context(format!("{e:#}")))?;
    }
    unless_unmeasurable(result)
}

/// Stand-in for `perf::share-of-copy`: the loads are warp-wide, as the copy's are.
pub fn warp_wide_loads(ctx: &Ctx) -> Result<String> {
    on_every_length(ctx, |m| {
        let lanes = m.global_lanes_per_load();
        if lanes < MIN_LANES_PER_LOAD {
            bail!(
                "{KERNEL}: {lanes:.1} active lanes per global load (warp-wide loads: 32; at least \
                 {MIN_LANES_PER_LOAD}){}: a few threads load the window while the others wait. Let every thread \
                 load its own element (and the first {RADIUS} threads the halos), so that each warp reads 32 \
                 neighbouring ints at once",
                worst_at(m.narrowest_global_load())
            );
        }
        Ok(figures(m))
    })
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    #[test]
    fn staging_is_measured_as_loads_per_output() {
        let ex = crate::exercise();
        for file in
            ["reference/ex05-stencil/kernels/stencil.cu", "exercises/ex05-stencil/calibration/stencil_strided_fill.cu"]
        {
            passes(&ex, "stencil", "few-global-loads-per-output", Run::Check, file);
            passes(&ex, "stencil", "share-of-copy", Run::StandIn, file);
        }
        let slow = "reference/slow/ex05-stencil/kernels/stencil.cu";
        passes(&ex, "stencil", "few-global-loads-per-output", Run::Check, slow);
        fails(&ex, "stencil", "share-of-copy", Run::StandIn, slow);
        // Every thread copies only on the lengths the README once named for the measurement.
        let cheat = "grader/tests/cheats/ex05-stencil-warp-wide-only-in-band/exercises/ex05-stencil/kernels/stencil.cu";
        passes(&ex, "stencil", "few-global-loads-per-output", Run::Check, cheat);
        if let Some(msg) = fails(&ex, "stencil", "share-of-copy", Run::StandIn, cheat) {
            assert!(msg.starts_with("measured on ") && msg.contains("1.0 active lanes per global load"), "{msg}");
        }
        if let Some(msg) = fails(
            &ex,
            "stencil",
            "few-global-loads-per-output",
            Run::Check,
            "exercises/ex05-stencil/calibration/stencil_unused_window.cu",
        ) {
            assert!(msg.contains("global loads per output"), "{msg}");
        }
        // Staged only on grids of at most 4096 blocks: every measured length, not the timed one.
        let small =
            "grader/tests/cheats/ex05-stencil-staged-only-on-small-grids/exercises/ex05-stencil/kernels/stencil.cu";
        if let Some(msg) = fails(&ex, "stencil", "few-global-loads-per-output", Run::Check, small) {
            assert!(msg.contains("outputs (the timed size: 4 of its 102400 blocks"), "{msg}");
            assert!(msg.contains("7.00 global loads per output") && msg.contains("1.01 global loads"), "{msg}");
        }
        // Staged, but filled in a chunk per thread or down the columns of a 2D view: uncoalesced.
        for case in ["ex05-chunk-fill", "ex05-column-fill"] {
            let file = kit::trial::variant_file(case, "ex05-stencil/kernels/stencil.cu");
            if let Some(msg) = fails(&ex, "stencil", "few-global-loads-per-output", Run::Check, &file) {
                assert!(msg.contains("sectors per warp request") && msg.contains("stencil.cu:"), "{msg}");
            }
        }
    }
}
