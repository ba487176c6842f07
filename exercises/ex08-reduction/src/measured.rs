//! ex08's two trees told apart by what they do (kit::measure): each kernel sums
//! a few blocks of values on a private simulator (how many, and the values,
//! drawn from the check's seed), and the checks count divergent
//! warp branches per block. Interleaved addressing (`t % (2*stride) == 0`)
//! leaves busy and idle threads side by side in every warp for the first five
//! steps, so most of its 8 warps diverge at every step; sequential addressing
//! (`t < stride`) keeps whole warps busy or idle until stride < 32, so only the
//! last warp's few steps diverge. A warp-shuffle finish is sequential too.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, BlockSample, Measurement};
use kit::{args, Ctx};

use crate::{blocks, launch_config, THREADS};

/// Full blocks of the measured input, drawn from the seed.
pub const MEASURE_BLOCKS: std::ops::RangeInclusive<u32> = 6..=12;
/// Divergent branches per block at or above which a tree is interleaved. The
/// slides' interleaved tree diverges in every warp at strides 1..16 (5 x 8) and
/// in a few at strides 32..128: about 48 per block. See CALIBRATION.md.
pub const MIN_INTERLEAVED_DIVERGENCE: f64 = 24.0;
/// Divergent branches per block at or under which a tree is sequential: the
/// slides' sequential tree diverges only in its last warp (strides 16..1), about
/// 6 per block. See CALIBRATION.md.
pub const MAX_SEQUENTIAL_DIVERGENCE: f64 = 16.0;
/// Shared atomics per element a tree stays at or under: one per warp (warp
/// sums combined with atomicAdd); adding every element with one is 1.0.
pub const MAX_SHARED_ATOMICS_PER_ELEMENT: f64 = 1.0 / 32.0;
/// Shared passes per request at or above which a tree is interleaved with a
/// strided index (thread t works on 2*stride*t: no divergence, but bank
/// conflicts); sequential addressing has 1.
pub const MIN_STRIDED_PASSES: f64 = 1.5;

/// A measurement and the number of elements it summed.
pub struct Measured {
    pub m: Measurement,
    pub n: usize,
}

/// The measured input's length, drawn from the check's seed: whole blocks.
pub fn measured_n(ctx: &Ctx) -> usize {
    rand::Rng::random_range(&mut ctx.rng_for("measured shape"), MEASURE_BLOCKS) as usize * THREADS as usize
}

/// Runs `kernel` on the measured length of this check's seed.
pub fn measure(ctx: &Ctx, kernel: &str) -> Result<Measured> {
    measure_on(ctx, kernel, measured_n(ctx))
}

/// Runs `kernel` once on `n` values from the check's seeded generator.
pub fn measure_on(ctx: &Ctx, kernel: &str, n: usize) -> Result<Measured> {
    let values = crate::values(&mut ctx.rng(), n);
    let m = ctx.measure(kernel, |module| {
        let gpu = module.gpu();
        let input = gpu.upload("in", &values)?;
        let partial = gpu.poisoned::<i32>("partial", blocks(n) as usize)?;
        module.launch(kernel, launch_config(n), &args![&input, n as i32, &partial])?;
        let expected = crate::block_sums(&values);
        kit::measure::require_right_result(kit::check::exact("partial", &expected, &partial.read()?))
    })?;
    Ok(Measured { m, n })
}

/// Blocks the simulator runs of the sequential part's timed launch
/// ([`crate::PERF_N`] values, 262 144 blocks), drawn by the run's secret:
/// block 0 and three of the later waves' (kit::measure::BlockSample::
/// at_timed_size). A kernel can tell the measured lengths (6 to 12 blocks)
/// from the timed one by `n` or its grid alone; at the timed size it takes
/// its timed path. The interleaved part is not timed.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;

/// `kernel` run once on the simulator at the timed size ([`crate::PERF_N`]),
/// [`TIMED_SAMPLED_BLOCKS`] of its blocks: the input generated where they
/// read it (kit::Gpu::upload_generated), and what they wrote checked,
/// wherever they wrote it. Its `n` is the values those blocks sum.
pub fn measure_at_timed_size(ctx: &Ctx, kernel: &str) -> Result<Measured> {
    let n = crate::PERF_N;
    let cfg = launch_config(n);
    let sample =
        BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), cfg.grid.0 as u64, TIMED_SAMPLED_BLOCKS);
    // In 1..MAX_VALUE like the correctness inputs'.
    let values = kit::inputs::IntsIn::new(&ctx.rng_for("timed-size input"), 1, crate::MAX_VALUE - 1);
    let block_sum = |b: usize| {
        let mut block = [0i32; THREADS as usize];
        values.fill(b * THREADS as usize, &mut block);
        crate::block_sums(&block)[0]
    };
    let m = kit::measure::measure_ptx_sampled(&ctx.build.ptx, kernel, &sample, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into `in`.
        let (input, partial) = gpu.unwatched(|| {
            let v = values.clone();
            let input = gpu.upload_generated("in", n, move |first, out: &mut [i32]| v.fill(first, out));
            let partial = gpu.poisoned_generated::<i32>("partial", cfg.grid.0 as usize);
            (input, partial)
        });
        let (input, partial) = (input?, partial?);
        module.launch(kernel, cfg, &args![&input, n as i32, &partial])?;
        let readme = || sample.blocks().iter().map(|&b| b as usize).collect();
        let written = kit::measure::sampled_writes(&partial, readme)?;
        let right = kit::check::exact_at("partial", cfg.grid.0 as usize, &written, block_sum);
        kit::measure::require_right_result_at_timed_size(right, &format!("n = {n}"), sample.blocks().len())
    })?;
    Ok(Measured { m, n: sample.blocks().len() * THREADS as usize })
}

/// `judge` of the check's measured length, then, for the timed part
/// (sequential), of the timed size.
pub fn here_and_timed(ctx: &Ctx, kernel: &str, judge: impl Fn(&Measured) -> Result<String>) -> Result<String> {
    let measured = measure(ctx, kernel)?;
    let line = judge(&measured)?;
    if kernel != crate::SEQUENTIAL_KERNEL {
        return Ok(line);
    }
    let grid = blocks(crate::PERF_N) as u64;
    let note = kit::measure::judge_at_timed_size(
        (&format!("n = {}", crate::PERF_N), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, grid),
        &format!("at n = {} (the measured length) {line}", measured.n),
        || measure_at_timed_size(ctx, kernel),
        judge,
    )?;
    Ok(line + &note)
}

impl Measured {
    /// Divergent warp branches per block.
    pub fn divergence(&self) -> f64 {
        self.m.stats.divergent_branches as f64 / blocks(self.n) as f64
    }

    fn figures(&self) -> String {
        let m = &self.m;
        format!(
            "{:.1} divergent warp branches per block of {THREADS} ({} of {} warp branches); {:.1} active lanes and \
             {:.2} passes per shared access",
            self.divergence(),
            m.stats.divergent_branches,
            m.stats.branches,
            m.shared_lanes_per_request(),
            m.shared_passes_per_request()
        )
    }
}

/// `interleaved`: the tree must be the interleaved one, divergence and all.
pub fn interleaved(measured: &Measured) -> Result<String> {
    let (m, d) = (&measured.m, measured.divergence());
    if d < MIN_INTERLEAVED_DIVERGENCE && m.shared_passes_per_request() < MIN_STRIDED_PASSES {
        bail!(
            "{}: {d:.1} divergent warp branches per block (the interleaved tree has about 48; at least \
             {MIN_INTERLEAVED_DIVERGENCE} expected), and no bank conflicts of a strided index: this is not interleaved addressing. At step `stride`, the \
             working threads are those with t % (2*stride) == 0, adding partialSum[t + stride] into partialSum[t]; \
             working threads t < stride is the sequential tree of the next part. ({})",
            m.kernel,
            measured.figures()
        );
    }
    Ok(measured.figures())
}

/// `sequential`: whole warps busy or idle; no interleaved divergence.
pub fn sequential(measured: &Measured) -> Result<String> {
    let (m, d) = (&measured.m, measured.divergence());
    if d > MAX_SEQUENTIAL_DIVERGENCE {
        bail!(
            "{}: {d:.1} divergent warp branches per block (the sequential tree has about 6; at most \
             {MAX_SEQUENTIAL_DIVERGENCE}){}: busy and idle threads still alternate inside the warps, as in the \
             interleaved tree. Let the first `stride` threads work (if (t < stride) partialSum[t] += \
             partialSum[t + stride], stride halving from blockDim.x / 2), so that whole warps are busy or idle",
            m.kernel,
            worst_at(m.worst_branch())
        );
    }
    Ok(measured.figures())
}

/// The structure check `shared-tree` of either part: a block reduction
/// (shared memory, barriers: the PTX names them better), then the pattern.
pub fn shared_tree(ctx: &Ctx, kernel: &str, pattern: fn(&Measured) -> Result<String>) -> Result<String> {
    let k = ctx.kernel_ptx(kernel)?;
    if !k.uses_shared() {
        bail!(
            "{kernel} does not use shared memory: the PTX has no access to a `__shared__` array. The block's \
             partial sums live in `__shared__ int partialSum[256]`, where every thread can read the others' values"
        );
    }
    unless_unmeasurable(here_and_timed(ctx, kernel, |m| {
        let figures = pattern(m)?;
        tree_not_atomics(m)?;
        Ok(figures)
    }))
}

/// A tree adds pairs of sums, level by level; adding every element into one
/// shared word with atomicAdd has no levels (and little divergence, so the
/// pattern checks alone let it pass). One shared atomic per warp (warp sums
/// combined in a shared word) is still a tree below it.
pub fn tree_not_atomics(Measured { m, n }: &Measured) -> Result<()> {
    let per_element = m.stats.shared_atomics as f64 / *n as f64;
    if per_element > MAX_SHARED_ATOMICS_PER_ELEMENT {
        bail!(
            "{}: {per_element:.2} shared atomics per element (a tree: none; at most one per warp, \
             {MAX_SHARED_ATOMICS_PER_ELEMENT:.3}){}: the elements are added one by one into a shared accumulator, \
             not combined in a tree. Keep one partial sum per thread in `__shared__ int partialSum[256]` and halve \
             the number of working threads at each step, with __syncthreads() between steps",
            m.kernel,
            worst_at(m.rows(|k| k == AccessKind::SharedAtomic).max_by_key(|r| r.thread_accesses))
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};
    use kit::{Ctx, PartBuild, RunEnv};

    use super::*;

    const VARIANTS: &str = "grader/tests/variants";

    /// `shared-tree`'s measured verdict (`pattern`, then no atomics) on
    /// `file`, measured on each length in `ns` with seed `seed`'s values: a
    /// pass, or a failure whose message holds `fails_with`.
    fn judged(file: &str, pattern: fn(&Measured) -> Result<String>, ns: &[usize], fails_with: Option<&str>) {
        let Some(compiler) = kit::trial::compiler() else { return };
        let options = ptx_build::CompileOptions { line_info: true, ..Default::default() };
        let ptx = kit::trial::ptx_of(&compiler, file, &options);
        let env = RunEnv::new(ns.len() as u64, None, Some(compiler), options);
        let build = PartBuild::new(ptx);
        let ctx = Ctx::new("ex08::part::structure::shared-tree", &env, &build);
        let kernel = if file.contains("interleaved") { "reduce_interleaved" } else { "reduce_sequential" };
        for &n in ns {
            let verdict = measure_on(&ctx, kernel, n)
                .and_then(|m| pattern(&m).and_then(|f| tree_not_atomics(&m).map(|_| f)))
                .map_err(|e| format!("{e:#}"));
            eprintln!("{file} on {n}: {verdict:?}");
            match (fails_with, verdict) {
                (None, Ok(_)) => {}
                (Some(phrase), Err(e)) if e.contains(phrase) => {}
                (_, v) => panic!("{file} on {n}: {v:?}"),
            }
        }
    }

    /// Every length the seed may draw keeps the check's verdicts.
    #[test]
    fn every_measured_length_keeps_the_verdicts() {
        let ns =
            [*MEASURE_BLOCKS.start() as usize * THREADS as usize, *MEASURE_BLOCKS.end() as usize * THREADS as usize];
        let variant =
            |case: &str, file: &str| format!("{VARIANTS}/ex08-{case}/exercises/ex08-reduction/kernels/{file}");
        for file in [
            format!("{REF}/reduce_interleaved.cu"),
            format!("{MINE}/reduce_interleaved_mask.cu"),
            variant("interleaved-strided-index", "reduce_interleaved.cu"),
        ] {
            judged(&file, interleaved, &ns, None);
        }
        for file in [
            format!("{MINE}/reduce_interleaved_is_sequential.cu"),
            variant("interleaved-is-sequential", "reduce_interleaved.cu"),
        ] {
            judged(&file, interleaved, &ns, Some("not interleaved addressing"));
        }
        let sequential_file = |case: &str| variant(&format!("sequential-{case}"), "reduce_sequential.cu");
        for file in [
            format!("{REF}/reduce_sequential.cu"),
            format!("{MINE}/reduce_sequential_shuffle.cu"),
            format!("{MINE}/reduce_sequential_warps.cu"),
            sequential_file("warp-shuffle"),
            sequential_file("syncwarp-tail"),
            sequential_file("restrict-ldg"),
        ] {
            judged(&file, sequential, &ns, None);
        }
        judged(&format!("{SLOW}/reduce_sequential.cu"), sequential, &ns, Some("divergent warp branches per block"));
        judged(&sequential_file("shared-atomic-accumulator"), sequential, &ns, Some("1.00 shared atomics per element"));
    }

    #[test]
    fn the_measured_length_is_drawn_from_the_seed() {
        let build = PartBuild::new(String::new());
        let lengths: std::collections::BTreeSet<usize> = (0..20)
            .map(|seed| {
                let env = RunEnv::new(seed, None, None, Default::default());
                let n = measured_n(&Ctx::new("ex08::sequential::structure::shared-tree", &env, &build));
                assert!(n % THREADS as usize == 0 && MEASURE_BLOCKS.contains(&blocks(n)), "{n}");
                n
            })
            .collect();
        assert!(lengths.len() >= 5, "{lengths:?}");
    }

    const REF: &str = "reference/ex08-reduction/kernels";
    const SLOW: &str = "reference/slow/ex08-reduction/kernels";
    const MINE: &str = "exercises/ex08-reduction/calibration";

    #[test]
    fn interleaved_and_sequential_are_told_apart_by_their_divergence() {
        let ex = crate::exercise();
        for file in [format!("{REF}/reduce_interleaved.cu"), format!("{MINE}/reduce_interleaved_mask.cu")] {
            passes(&ex, "interleaved", "shared-tree", Run::Check, &file);
        }
        if let Some(msg) =
            fails(&ex, "interleaved", "shared-tree", Run::Check, &format!("{MINE}/reduce_interleaved_is_sequential.cu"))
        {
            assert!(msg.contains("not interleaved addressing"), "{msg}");
        }
        for file in [
            format!("{REF}/reduce_sequential.cu"),
            format!("{MINE}/reduce_sequential_shuffle.cu"),
            format!("{MINE}/reduce_sequential_warps.cu"),
        ] {
            passes(&ex, "sequential", "shared-tree", Run::Check, &file);
            passes(&ex, "sequential", "faster-than-interleaved", Run::StandIn, &file);
        }
        let slow = format!("{SLOW}/reduce_sequential.cu");
        if let Some(msg) = fails(&ex, "sequential", "shared-tree", Run::Check, &slow) {
            assert!(msg.contains("reduce_sequential.cu:"), "names the line: {msg}");
        }
        fails(&ex, "sequential", "faster-than-interleaved", Run::StandIn, &slow);
        // no tree at all: one shared accumulator and an atomicAdd per element
        let atomics =
            "grader/tests/variants/ex08-sequential-shared-atomic-accumulator/exercises/ex08-reduction/kernels/\
                       reduce_sequential.cu";
        if let Some(msg) = fails(&ex, "sequential", "shared-tree", Run::Check, atomics) {
            assert!(msg.contains("1.00 shared atomics per element"), "{msg}");
        }
    }
}
