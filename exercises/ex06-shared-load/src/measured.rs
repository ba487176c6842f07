//! ex06's staging judged by what it does (kit::measure): the kernel runs on a
//! few seeded blocks on a private simulator, and the checks count global loads
//! per thread. Staged once, each thread reads 2 bytes from global memory (one
//! of each vector) and all of its 512 operands from shared memory; reading
//! in1 and in2 on every use is 512 global loads per thread.

use std::collections::{HashMap, HashSet};
use std::ops::RangeInclusive;

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, BlockSample};
use kit::{args, Ctx};
use rand::Rng;

use crate::{cpu, launch_config, KERNEL, SIZE, THREADS};

/// Blocks (pairs of vectors) of the measured input, drawn from the seed
/// (CALIBRATION.md's figures are for 4): every figure is per thread.
pub const MEASURE_BLOCKS: RangeInclusive<u32> = 3..=6;
/// Global loads per thread a staged kernel stays at or under: 2 for the
/// reference, 512 without staging or when every thread copies both whole
/// vectors. See CALIBRATION.md.
pub const MAX_LOADS_PER_THREAD: f64 = 8.0;

/// Blocks the simulator runs of the timed launch ([`crate::PERF_BLOCKS`]),
/// drawn by the run's secret: block 0 (of the first wave, kit::measure::BlockSample::at_timed_size) and three of the later
/// ones. A kernel can tell the measured launches (3 to 6 blocks) from the
/// timed one by its grid alone; at the timed size it takes its timed path.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;

/// A kernel's memory behaviour on the measured input, and its blocks.
pub struct Measured {
    pub m: kit::measure::Measurement,
    pub blocks: u32,
}

impl std::ops::Deref for Measured {
    type Target = kit::measure::Measurement;
    fn deref(&self) -> &Self::Target {
        &self.m
    }
}

impl Measured {
    fn threads(&self) -> f64 {
        (self.blocks * THREADS) as f64
    }
}

/// Runs the kernel once on seeded random pairs, as many as drawn from [`MEASURE_BLOCKS`].
pub fn measure(ctx: &Ctx) -> Result<Measured> {
    let blocks = ctx.rng_for("measured shape").random_range(MEASURE_BLOCKS);
    let (in1, in2) = cpu::random_pairs(&mut ctx.rng(), blocks);
    let m = ctx.measure(KERNEL, |module| {
        let gpu = module.gpu();
        let (d1, d2) = (gpu.upload("in1", &in1)?, gpu.upload("in2", &in2)?);
        let out = gpu.poisoned::<u32>("out", in1.len())?;
        module.launch(KERNEL, launch_config(blocks), &args![&out, &d1, &d2])?;
        kit::measure::require_right_result(kit::check::exact("out", &cpu::correlate(&in1, &in2), &out.read()?))
    })?;
    Ok(Measured { m, blocks })
}

/// The kernel run once on the simulator at the timed grid
/// ([`crate::PERF_BLOCKS`]), [`TIMED_SAMPLED_BLOCKS`] of its blocks: the
/// pairs generated where they read them (kit::Gpu::upload_generated), and
/// what they wrote checked, wherever they wrote it. Its `blocks` are those
/// that ran.
pub fn measure_at_timed_size(ctx: &Ctx) -> Result<Measured> {
    let blocks = crate::PERF_BLOCKS;
    let (first, later) = TIMED_SAMPLED_BLOCKS;
    let sample = BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), blocks as u64, (first, later));
    let pairs = cpu::TimedPairs::new(&ctx.rng_for("timed-size pairs"), blocks);
    let n = blocks as usize * SIZE;
    let expected: HashMap<usize, Vec<u32>> =
        sample.blocks().iter().map(|&b| (b as usize, pairs.correlate_block(b as usize))).collect();
    let m = kit::measure::measure_ptx_sampled(&ctx.build.ptx, KERNEL, &sample, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into the pairs.
        let (d1, d2, out) = gpu.unwatched(|| {
            let (p1, p2) = (pairs.in1.clone(), pairs.in2.clone());
            let d1 =
                gpu.upload_generated("in1", n, move |first, out: &mut [u8]| cpu::TimedPairs::fill(&p1, first, out));
            let d2 =
                gpu.upload_generated("in2", n, move |first, out: &mut [u8]| cpu::TimedPairs::fill(&p2, first, out));
            let out = gpu.poisoned_generated::<u32>("out", n);
            (d1, d2, out)
        });
        let (d1, d2, out) = (d1?, d2?, out?);
        module.launch(KERNEL, launch_config(blocks), &args![&out, &d1, &d2])?;
        let written = kit::measure::sampled_writes(&out, || sample.linear_elements(SIZE, n))?;
        // An element of a block not sampled is that block's (computed here when asked).
        let right = kit::check::exact_at("out", n, &written, |i| match expected.get(&(i / SIZE)) {
            Some(block) => block[i % SIZE],
            None => pairs.correlate_block(i / SIZE)[i % SIZE],
        });
        kit::measure::require_right_result_at_timed_size(right, &format!("{blocks} blocks"), sample.blocks().len())
    })?;
    Ok(Measured { m, blocks: sample.blocks().len() as u32 })
}

/// [`staged_once`] of the timed launch too (after `measured`, which passed with `line`).
fn staged_once_when_timed(ctx: &Ctx, line: &str) -> Result<String> {
    let blocks = crate::PERF_BLOCKS as u64;
    kit::measure::judge_at_timed_size(
        (&format!("{blocks} blocks"), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, blocks),
        &format!("on the measured launch {line}"),
        || measure_at_timed_size(ctx),
        staged_once,
    )
}

fn figures(m: &Measured) -> String {
    format!(
        "{:.1} global loads and {:.1} shared loads per thread (staged once: 2 global loads; unstaged: {})",
        m.thread_global_loads() as f64 / m.threads(),
        m.thread_shared_loads() as f64 / m.threads(),
        2 * SIZE
    )
}

/// Each thread copies its element of each vector and computes from shared memory.
pub fn staged_once(m: &Measured) -> Result<String> {
    let per = m.thread_global_loads() as f64 / m.threads();
    if per > MAX_LOADS_PER_THREAD {
        bail!(
            "{KERNEL}: {per:.1} global loads per thread (staged once: 2; at most {MAX_LOADS_PER_THREAD}){}: {}. \
             Thread t copies in1[t] and in2[t] of its block into the shared buffer, once; after __syncthreads() \
             every operand comes from the buffer",
            worst_at(m.worst_global(AccessKind::GlobalLoad)),
            if m.thread_shared_loads() == 0 {
                "the computation never reads shared memory"
            } else {
                "the vectors are read from global memory far more than once per block"
            }
        );
    }
    Ok(figures(m))
}

/// The measured half of `dynamic-shared` (the PTX half checks the `extern __shared__` declaration).
pub fn dynamic_shared(ctx: &Ctx) -> Result<String> {
    let measured = measure(ctx);
    match &measured {
        // Only what the README's launch executes: a `case 512:` it never takes
        // may reach past 512 bytes without ever touching them.
        Ok(m) => {
            let executed: HashSet<usize> = m.stats.per_instruction.iter().map(|r| r.ptx_line).collect();
            crate::dynamic_shared_where(&ctx.build.ptx, |line| executed.contains(&line))?
        }
        Err(_) => crate::dynamic_shared_in(&ctx.build.ptx)?,
    };
    unless_unmeasurable(measured.and_then(|m| {
        let line = staged_once(&m)?;
        let note = staged_once_when_timed(ctx, &line)?;
        Ok(line + &note)
    }))
}

/// Stand-in for `perf::faster-than-global-reads`: the global reads are what the staging saves.
pub fn stand_in(ctx: &Ctx) -> Result<String> {
    let line = staged_once(&measure(ctx)?)?;
    let note = staged_once_when_timed(ctx, &line)?;
    Ok(line + &note)
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    #[test]
    fn staging_is_measured_as_global_loads_per_thread() {
        let ex = crate::exercise();
        for file in [
            "reference/ex06-shared-load/kernels/shared_load.cu",
            "exercises/ex06-shared-load/calibration/shared_load_words.cu",
        ] {
            passes(&ex, "load", "dynamic-shared", Run::Check, file);
            passes(&ex, "load", "faster-than-global-reads", Run::StandIn, file);
        }
        let slow = "reference/slow/ex06-shared-load/kernels/shared_load.cu";
        if let Some(msg) = fails(&ex, "load", "dynamic-shared", Run::Check, slow) {
            // Every thread writes the same bytes: the simulator may call that a race before counting loads.
            assert!(msg.contains("global loads per thread") || msg.contains("race"), "{msg}");
        }
        fails(&ex, "load", "faster-than-global-reads", Run::StandIn, slow);
        // a `case 512:` the launch never takes reaches past the 512 bytes: not judged
        let switch =
            "grader/tests/variants/ex06-switch-on-block-size/exercises/ex06-shared-load/kernels/shared_load.cu";
        passes(&ex, "load", "dynamic-shared", Run::Check, switch);
        let unused = "exercises/ex06-shared-load/calibration/shared_load_unused.cu";
        fails(&ex, "load", "dynamic-shared", Run::Check, unused);
        fails(&ex, "load", "faster-than-global-reads", Run::StandIn, unused);
    }

    /// The cheat case ex06-load-staged-only-on-the-simulator: stages and reads shared memory
    /// only where `%nsmid` is 1; the simulator shows a GPU's SMs, so it reads global memory there.
    #[test]
    fn a_kernel_that_stages_only_on_a_one_sm_device_fails() {
        let ex = crate::exercise();
        let file = "grader/tests/cheats/ex06-load-staged-only-on-the-simulator/exercises/ex06-shared-load/kernels/\
                    shared_load.cu";
        if let Some(msg) = fails(&ex, "load", "dynamic-shared", Run::Check, file) {
            assert!(msg.contains("global loads per thread"), "{msg}");
        }
        fails(&ex, "load", "faster-than-global-reads", Run::StandIn, file);
    }

    /// Staged only on grids of at most 4096 blocks: every measured launch, not the timed one.
    #[test]
    fn a_kernel_that_stages_only_on_small_grids_fails_at_the_timed_grid() {
        let ex = crate::exercise();
        let file = "grader/tests/cheats/ex06-load-staged-only-on-small-grids/exercises/ex06-shared-load/kernels/\
                    shared_load.cu";
        for (check, what) in [("dynamic-shared", Run::Check), ("faster-than-global-reads", Run::StandIn)] {
            if let Some(msg) = fails(&ex, "load", check, what, file) {
                assert!(msg.starts_with("at 32768 blocks (the timed size: 4 of its 32768 blocks"), "{msg}");
                assert!(msg.contains("(staged once: 2 global loads") && msg.contains("512.0 global loads"), "{msg}");
            }
        }
    }
}
