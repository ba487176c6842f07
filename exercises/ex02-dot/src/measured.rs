//! ex02's block reduction judged by what it does (kit::measure): the kernel
//! runs on a small input (its length, grid and values drawn from the check's
//! seed) on a private simulator and the check counts
//! global atomics per element and shared loads per block. A tree (or warp
//! shuffles) combines the block's 256 sums in a few dozen warp-level shared
//! loads; thread 0 adding them one by one takes 255; atomics per product skip
//! the reduction altogether. The loads of a and b must be coalesced: the input
//! has several elements per thread and is not a multiple of the block, so
//! threads that each sum a contiguous slice (lanes four elements apart, 16
//! sectors per warp request) are told from a grid-stride loop (4 sectors);
//! with one element per thread the two layouts are the same.
//!
//! No stand-in for `perf::share-of-copy-bandwidth`: its slow variant leaves all
//! blocks but one idle, which changes nothing in a memory profile (the same
//! sectors per request, the same loads per element); only a GPU's many
//! multiprocessors show the cost.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, AccessKind, BlockSample, Measurement};
use kit::{args, Ctx};

use kit::LaunchConfig;

use crate::uniform;

/// The measured launch's grid and length, drawn from the check's seed
/// ([`kit::measure::slices_of_four`]): each thread's contiguous slice is four
/// elements long and fills whole warps, and n is not a multiple of the block.
pub fn measured_shape(ctx: &Ctx) -> (u32, usize) {
    kit::measure::slices_of_four(ctx, crate::THREADS)
}

/// Bytes the loads of a and b ask for per byte of the sectors they touch, at
/// or above which they are coalesced (a grid-stride loop: about 1.0; slices of
/// four elements per thread: 0.25). See CALIBRATION.md.
pub const MIN_LOAD_EFFICIENCY: f64 = 0.5;
/// Warp-level shared loads per block a tree stays at or under (the reference:
/// 25; thread 0 alone: 255+), besides [`staged_loads`]. See CALIBRATION.md.
pub const MAX_SHARED_LOADS_PER_BLOCK: f64 = 64.0;
/// Global atomics per element a reduction stays at or under (one per block at most).
pub const MAX_ATOMICS_PER_ELEMENT: f64 = 0.01;

/// A measurement and the shape it was made on.
pub struct Measured {
    pub m: Measurement,
    pub blocks: u32,
    pub n: usize,
}

/// Runs `dot` on the measured shape of this check's seed.
pub fn measure(ctx: &Ctx) -> Result<Measured> {
    measure_on(ctx, measured_shape(ctx))
}

/// Runs `dot` once on `n` elements (from the check's seeded generator) in `blocks` blocks.
pub fn measure_on(ctx: &Ctx, (blocks, n): (u32, usize)) -> Result<Measured> {
    let mut rng = ctx.rng();
    let (a, b) = (uniform(&mut rng, n), uniform(&mut rng, n));
    let m = ctx.measure("dot", |module| {
        let gpu = module.gpu();
        let (da, db) = (gpu.upload("a", &a)?, gpu.upload("b", &b)?);
        let partial = gpu.poisoned::<f32>("partial", blocks as usize)?;
        let cfg = LaunchConfig::linear(blocks, crate::THREADS);
        module.launch("dot", cfg, &args![&da, &db, n as i32, &partial])?;
        let got: f64 = partial.read()?.iter().map(|&p| p as f64).sum();
        let (expected, abs_sum) = crate::cpu_dot(&a, &b);
        // crate::roundings for the measured grid: 4 products per thread, up to 255 to combine a block.
        let per_thread = n.div_ceil((blocks * crate::THREADS) as usize);
        let bound = crate::gamma(1 + per_thread + crate::THREADS as usize) * abs_sum;
        kit::measure::require_right_result(if (got - expected).abs() <= bound {
            Ok(())
        } else {
            Err(anyhow::anyhow!("dot = {got}, expected {expected}"))
        })
    })?;
    Ok(Measured { m, blocks, n })
}

/// Blocks the simulator runs of the timed launch (1024 blocks of 51 200
/// elements each at an H100's timed size, [`timed_len`]), drawn by the run's
/// secret: block 0 and three of the later waves' (kit::measure::BlockSample::
/// at_timed_size). A kernel can tell the measured lengths (a few thousand
/// elements) from the timed one by `n` alone; at the timed size it takes its
/// timed path.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;

/// The timed length on an H100 (kit::exercise::TIMED_L2_BYTES): a and b
/// together 8x its L2 cache.
pub fn timed_len() -> usize {
    (kit::exercise::timed_bandwidth_elements() / 2).min(i32::MAX as usize)
}

/// `dot` run once on the simulator at the timed length ([`timed_len`]),
/// [`TIMED_SAMPLED_BLOCKS`] of its 1024 blocks: a and b generated where they
/// read them (kit::Gpu::upload_generated), and the partial sums they wrote,
/// wherever they wrote them, within the rounding bound of the products of
/// the elements they read (whichever elements the kernel gave its blocks;
/// block b writes `partial[b]`, as the README says).
pub fn measure_at_timed_size(ctx: &Ctx) -> Result<Measured> {
    let n = timed_len();
    let cfg = crate::launch_config(n);
    let sample =
        BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), cfg.grid.0 as u64, TIMED_SAMPLED_BLOCKS);
    let values = |stream: &str| kit::inputs::UniformF32s::new(&ctx.rng_for(stream), 0.0, 1.0);
    let (a, b) = (values("timed-size a"), values("timed-size b"));
    let m = kit::measure::measure_ptx_sampled(&ctx.build.ptx, "dot", &sample, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into a and b.
        let (da, db) = gpu.unwatched(|| {
            let (fa, fb) = (a.clone(), b.clone());
            let da = gpu.upload_generated("a", n, move |first, out: &mut [f32]| fa.fill(first, out));
            let db = gpu.upload_generated("b", n, move |first, out: &mut [f32]| fb.fill(first, out));
            (da, db)
        });
        let partial = gpu.poisoned::<f32>("partial", cfg.grid.0 as usize);
        let (da, db, partial) = (da?, db?, partial?);
        module.launch("dot", cfg, &args![&da, &db, n as i32, &partial])?;
        // Block b writes partial[b] (the README): poison (NaN) there was never written.
        let at = sample.blocks().iter().map(|&b| b as usize);
        let got: f64 = partial.read_elements(at)?.into_iter().map(|p| p as f64).sum();
        let read = kit::measure::in_both(&kit::measure::sampled_reads(&da)?, &kit::measure::sampled_reads(&db)?);
        let (expected, abs_sum) = dot_of(&a, &b, &read);
        let bound = crate::gamma(crate::roundings(n)) * abs_sum;
        let right = if (got - expected).abs() <= bound {
            Ok(())
        } else {
            let blocks: Vec<String> = sample.blocks().iter().map(|b| format!("partial[{b}]")).collect();
            Err(anyhow::anyhow!(
                "{} add up to {got}{}, where the {} elements of a and b the sampled blocks read give {expected}",
                blocks.join(" + "),
                if got.is_nan() { " (NaN: one of them was never written)" } else { "" },
                read.iter().map(|r| r.len()).sum::<usize>()
            ))
        };
        kit::measure::require_right_result_at_timed_size(right, &format!("n = {n}"), sample.blocks().len())
    })?;
    // Per element: the sampled blocks' share of the timed length.
    let handled = n * sample.blocks().len() / cfg.grid.0 as usize;
    Ok(Measured { m, blocks: sample.blocks().len() as u32, n: handled })
}

/// [`crate::cpu_dot`] of the elements `at` of the generated a and b.
fn dot_of(a: &kit::inputs::UniformF32s, b: &kit::inputs::UniformF32s, at: &[std::ops::Range<usize>]) -> (f64, f64) {
    let (mut xa, mut xb) = (Vec::new(), Vec::new());
    let mut sums = (0.0, 0.0);
    for (start, len) in kit::measure::in_pieces(at) {
        xa.resize(len, 0.0);
        xb.resize(len, 0.0);
        a.fill(start, &mut xa);
        b.fill(start, &mut xb);
        let (s, abs) = crate::cpu_dot(&xa, &xb);
        sums = (sums.0 + s, sums.1 + abs);
    }
    sums
}

/// Warp-level shared loads per block in 4-byte words (kit's
/// `shared_load_words`, also where the GPU's counters were read), besides
/// those that read back what the kernel staged.
fn tree_loads(m: &Measurement, blocks: u32) -> f64 {
    (m.shared_load_words() as f64 - staged_loads(m) as f64) / blocks as f64
}

fn figures(Measured { m, blocks, n }: &Measured) -> String {
    let staged = staged_loads(m) as f64 / *blocks as f64;
    format!(
        "{:.1} warp-level shared loads per block (a 16-byte load counts four){}, {:.3} global atomics per element, \
         global loads {:.1} sectors per request ({:.0}% of the bytes of the sectors used)",
        tree_loads(m, *blocks),
        if staged > 0.0 { format!(" (and {staged:.1} reading back what it staged)") } else { String::new() },
        m.stats.global_atomics as f64 / *n as f64,
        m.load_sectors_per_request(),
        100.0 * m.global_load_efficiency()
    )
}

/// Warp-level shared loads that read back what the kernel staged itself: one
/// per warp-level `cp.async` into shared memory (`cooperative_groups::
/// memcpy_async` copying a and b, each element read once by its product).
/// These are not the tree's, and a kernel that stages nothing gets none.
pub fn staged_loads(m: &Measurement) -> u64 {
    m.rows(|k| k == AccessKind::SharedStore)
        .filter(|r| r.instruction.starts_with("cp.async"))
        .map(|r| r.executions)
        .sum()
}

pub fn tree(measured: &Measured) -> Result<String> {
    let Measured { m, blocks, n } = measured;
    let atomics = m.stats.global_atomics as f64 / *n as f64;
    if atomics > MAX_ATOMICS_PER_ELEMENT {
        bail!(
            "dot: {atomics:.2} global atomics per element (a block reduction: at most one per block): the products \
             are added to the result with atomics instead of being reduced in the block. Sum in a register, put \
             the sum in `__shared__ float cache[256]`, reduce the cache with a tree, and let thread 0 write \
             partial[blockIdx.x]"
        );
    }
    let staged = staged_loads(m) as f64 / *blocks as f64;
    let loads = tree_loads(m, *blocks);
    if loads > MAX_SHARED_LOADS_PER_BLOCK {
        bail!(
            "dot: {loads:.0} warp-level shared loads per block (a 16-byte load counts four; a tree: about 25; at most \
             {MAX_SHARED_LOADS_PER_BLOCK}{}): \
             the block's 256 sums are added one after another. Halve the number of working threads at each step \
             (if (t < s) cache[t] += cache[t + s], with __syncthreads() between steps)",
            if staged > 0.0 {
                format!(", besides {staged:.0} that read back what the kernel staged")
            } else {
                String::new()
            }
        );
    }
    let efficiency = m.global_load_efficiency();
    if efficiency < MIN_LOAD_EFFICIENCY {
        bail!(
            "dot: the loads of a and b use {:.0}% of the bytes of the 32-byte sectors they touch ({:.1} sectors per \
             warp request; a grid-stride loop: 4 and 100%; at least {:.0}%){}. Neighbouring threads read elements \
             far apart, as when each thread sums its own contiguous slice: every warp request then touches many \
             sectors for a few bytes each. Let consecutive threads read consecutive elements: start at \
             blockIdx.x * blockDim.x + threadIdx.x and step by gridDim.x * blockDim.x",
            100.0 * efficiency,
            m.load_sectors_per_request(),
            100.0 * MIN_LOAD_EFFICIENCY,
            kit::measure::worst_at(m.least_efficient_global_load())
        );
    }
    Ok(figures(measured))
}

/// The structure check `parallel-block-reduction`.
pub fn parallel_block_reduction(ctx: &Ctx) -> Result<String> {
    let k = ctx.kernel_ptx("dot")?;
    if !k.uses_shared() && !k.uses("shfl") {
        bail!(
            "dot does not use shared memory: the PTX has no access to a `__shared__` array. Each thread puts its \
             sum in `__shared__ float cache[256]` so that the block can add the 256 sums together"
        );
    }
    unless_unmeasurable(tree_here_and_timed(ctx))
}

/// [`tree`] of the check's measured launch, then of the timed one.
fn tree_here_and_timed(ctx: &Ctx) -> Result<String> {
    let measured = measure(ctx)?;
    let line = tree(&measured)?;
    let sampled = TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1;
    let note = kit::measure::judge_at_timed_size(
        (&format!("n = {}", timed_len()), sampled, crate::blocks(timed_len()) as u64),
        &format!("at n = {} (the measured length) {line}", measured.n),
        || measure_at_timed_size(ctx),
        tree,
    )?;
    Ok(line + &note)
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    use super::*;

    const VARIANTS: &str = "grader/tests/variants";

    /// `tree`'s verdict on `file` measured on each of `shapes` with seed
    /// `seed`'s values: a pass, or a failure whose message holds `fails_with`.
    fn judged(file: &str, seed: u64, shapes: &[(u32, usize)], fails_with: Option<&str>) {
        kit::trial::with_measured_ctx(file, seed, "ex02::dot::structure::parallel-block-reduction", |ctx| {
            for &shape in shapes {
                let verdict = measure_on(ctx, shape).and_then(|m| tree(&m)).map_err(|e| format!("{e:#}"));
                eprintln!("{file} on {shape:?}: {verdict:?}");
                match (fails_with, verdict) {
                    (None, Ok(_)) => {}
                    (Some(phrase), Err(e)) if e.contains(phrase) => {}
                    (_, v) => panic!("{file} on {shape:?}: {v:?}"),
                }
            }
        });
    }

    /// Every shape the seed may draw keeps the check's verdicts: the
    /// references and correct variants pass, the serial, atomic and
    /// uncoalesced ones fail (with the figures the variants corpus expects).
    #[test]
    fn every_measured_shape_keeps_the_verdicts() {
        let shapes = kit::measure::slices_of_four_extremes(crate::THREADS);
        let variant = |case: &str| format!("{VARIANTS}/ex02-dot-{case}/exercises/ex02-dot/kernels/dot.cu");
        let mut passing: Vec<String> = vec![
            "reference/ex02-dot/kernels/dot.cu".into(),
            "reference/slow/ex02-dot/kernels/dot.cu".into(),
            "exercises/ex02-dot/calibration/dot_shuffle.cu".into(),
        ];
        passing
            .extend(["warp-shuffle", "unrolled-accumulators", "restrict-ldg", "threadfence-last-block"].map(variant));
        for (seed, file) in passing.iter().enumerate() {
            judged(file, seed as u64, &shapes, None);
        }
        for (file, phrase) in [
            ("reference/slow/ex02-dot/extra/dot_atomic.cu".into(), "global atomics per element"),
            ("exercises/ex02-dot/calibration/dot_serial.cu".into(), "warp-level shared loads per block"),
            (variant("tree-then-serial"), "warp-level shared loads per block"),
            (variant("tree-then-serial-float4"), "76 warp-level shared loads per block"),
            (variant("contiguous-slices"), "16.0 sectors per warp request"),
        ] {
            judged(&file, 5, &shapes, Some(phrase));
        }
    }

    /// The GPU's counters count SASS instructions, in which ptxas merged thread
    /// 0's walk over the sums into 16-byte loads (28 per block for
    /// tree-then-serial on an H100, 2026-12-06, where the PTX has 76): a count
    /// under the words the simulator saw keeps the simulator's figure, a
    /// count over them (a kernel that walks only on the GPU) grades.
    #[test]
    fn the_gpus_count_grades_only_where_it_is_the_larger() {
        let shape = kit::measure::slices_of_four_extremes(crate::THREADS)[0];
        let case = |c: &str| format!("{VARIANTS}/ex02-dot-{c}/exercises/ex02-dot/kernels/dot.cu");
        let judged_with = |file: &str, gpu_per_block: u64| {
            let mut verdict = Ok(String::new());
            kit::trial::with_measured_ctx(file, 1, "ex02::dot::structure::parallel-block-reduction", |ctx| {
                let mut m = measure_on(ctx, shape).unwrap();
                m.m.stats.shared_load_requests = gpu_per_block * m.blocks as u64;
                verdict = tree(&m).map_err(|e| format!("{e:#}"));
            });
            verdict
        };
        let merged = judged_with(&case("tree-then-serial"), 28);
        assert!(merged.as_ref().is_err_and(|e| e.contains("76 warp-level shared loads per block")), "{merged:?}");
        let walked_on_the_gpu = judged_with("reference/ex02-dot/kernels/dot.cu", 90);
        assert!(walked_on_the_gpu.as_ref().is_err_and(|e| e.contains("90 warp-level")), "{walked_on_the_gpu:?}");
        assert!(judged_with("reference/ex02-dot/kernels/dot.cu", 20).is_ok());
    }

    #[test]
    fn the_block_reduction_is_measured() {
        let ex = crate::exercise();
        for file in ["reference/ex02-dot/kernels/dot.cu", "exercises/ex02-dot/calibration/dot_shuffle.cu"] {
            passes(&ex, "dot", "parallel-block-reduction", Run::Check, file);
        }
        // Only block 0 works, over all of a and b: at the timed size the simulator's step limit
        // stops it, and the line says the measured lengths judged alone.
        if let Some(line) =
            passes(&ex, "dot", "parallel-block-reduction", Run::Check, "reference/slow/ex02-dot/kernels/dot.cu")
        {
            assert!(
                line.contains("(not measured at n = 52428800 (the timed size") && line.contains("measured sizes alone"),
                "{line}"
            );
        }
        for file in [
            "reference/slow/ex02-dot/extra/dot_atomic.cu",
            "exercises/ex02-dot/calibration/dot_serial.cu",
            // 76 loads per block: under the old allowance of 113, over the README's 64
            "grader/tests/variants/ex02-dot-tree-then-serial/exercises/ex02-dot/kernels/dot.cu",
            "grader/tests/variants/ex02-dot-tree-then-serial-float4/exercises/ex02-dot/kernels/dot.cu",
        ] {
            fails(&ex, "dot", "parallel-block-reduction", Run::Check, file);
        }
        // Right numbers, but each thread sums its own slice: uncoalesced.
        let slices = format!("{VARIANTS}/ex02-dot-contiguous-slices/exercises/ex02-dot/kernels/dot.cu");
        if let Some(msg) = fails(&ex, "dot", "parallel-block-reduction", Run::Check, &slices) {
            assert!(msg.contains("16.0 sectors per warp request") && msg.contains("dot.cu:"), "{msg}");
        }
    }
}
