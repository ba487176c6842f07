//! ex01's atomics judged by what the kernel does (kit::measure): it counts a
//! small set of points on a private simulator (their number, the grid and the
//! points drawn from the check's seed), and the checks count its global
//! atomics per hit and per block. `global` updates the global counter
//! atomically; `shared` counts each block's hits in shared memory and makes one
//! global update per block, whatever the spelling (a shared counter, a shared
//! tree, warp votes or shuffles). Both parts' loads of x and y must be
//! coalesced: the input has several points per thread and is not a multiple
//! of the block, so threads that each count a contiguous slice of points
//! (lanes four points apart: 16 sectors per warp request) are told from a
//! grid-stride loop (4); with one point per thread the two are the same.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, BlockSample, Measurement};
use kit::{args, Ctx};

use kit::LaunchConfig;

use crate::{cpu_hits, points};

/// The measured launch's grid and length, drawn from the check's seed
/// ([`kit::measure::slices_of_four`]): each thread's contiguous slice is four
/// elements long and fills whole warps, and n is not a multiple of the block.
pub fn measured_shape(ctx: &Ctx) -> (u32, usize) {
    kit::measure::slices_of_four(ctx, crate::THREADS)
}

/// 32-byte sectors the loads of x and y touch per active lane, at or under
/// which they are coalesced. Per lane, not per byte of each request: with
/// clang, the lanes of a correct grid-stride loop drift an iteration apart (a
/// branch in the loop), so a warp's 32 points are loaded by two requests of
/// a few lanes each, and per-request sector use reads 47-48 %; its sectors
/// per lane stay near those of the loop's addresses. A grid-stride loop:
/// 0.125 with NVRTC, at most 0.27 with clang; slices of four points per
/// thread: 0.5 with either. See CALIBRATION.md.
pub const MAX_SECTORS_PER_LANE: f64 = 0.375;
/// Global atomics per block that `shared` may make: one per block is the
/// lesson; one more leaves room for a reset. The slow variant makes ~600. See CALIBRATION.md.
pub const MAX_ATOMICS_PER_BLOCK: f64 = 2.0;
/// Stand-in for the timing against one atomicAdd per hit: at most this many
/// global atomics per hit (the yardstick makes 1; the reference 32 in 6400 hits).
pub const MAX_ATOMICS_PER_HIT: f64 = 0.1;

pub struct Counted {
    pub m: Measurement,
    pub hits: u32,
    pub blocks: u32,
}

/// Runs `kernel` on the measured shape of this check's seed.
pub fn measure(ctx: &Ctx, kernel: &str) -> Result<Counted> {
    measure_on(ctx, kernel, measured_shape(ctx))
}

/// Runs `kernel` once on `n` points (from the check's seeded generator) in `blocks` blocks.
pub fn measure_on(ctx: &Ctx, kernel: &str, (blocks, n): (u32, usize)) -> Result<Counted> {
    let (x, y) = points(&mut ctx.rng(), n);
    let expected = cpu_hits(&x, &y);
    let m = ctx.measure(kernel, |module| {
        let gpu = module.gpu();
        let (dx, dy) = (gpu.upload("x", &x)?, gpu.upload("y", &y)?);
        let hits = gpu.zeros::<u32>("hits", 1)?;
        let cfg = LaunchConfig::linear(blocks, crate::THREADS);
        module.launch(kernel, cfg, &args![&dx, &dy, n as i32, &hits])?;
        kit::measure::require_right_result(kit::check::scalar("hits", expected, hits.read()?[0]))
    })?;
    Ok(Counted { m, hits: expected, blocks })
}

/// Blocks the simulator runs of the shared part's timed launch
/// ([`crate::PERF_POINTS`] points, 1024 blocks of 32 768 points each), drawn
/// by the run's secret: block 0 and three of the later waves'
/// (kit::measure::BlockSample::at_timed_size). A kernel can tell the measured
/// inputs (a few thousand points) from the timed one by `n` alone; at the
/// timed size it takes its timed path. The global part is not timed.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;

/// `kernel` run once on the simulator at the timed size
/// ([`crate::PERF_POINTS`] points), [`TIMED_SAMPLED_BLOCKS`] of its blocks:
/// x and y generated where they read them (kit::Gpu::upload_generated,
/// uniform in [0, 1) with 24 random bits, as the timed points), and `*hits`
/// checked against the points they read, whichever the kernel gave them:
/// the grader's count in double, within those near the circle
/// ([`crate::PERF_NEAR`]), or 0 where every sampled block made a global
/// atomic (the last-block pattern's total is written by the last block to
/// finish, which a sample never runs, and each block takes its ticket with
/// one): blocks that left `*hits` at 0 without one did not count.
pub fn measure_at_timed_size(ctx: &Ctx, kernel: &str) -> Result<Counted> {
    let n = crate::PERF_POINTS;
    let cfg = crate::launch_config(n);
    let sample =
        BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), cfg.grid.0 as u64, TIMED_SAMPLED_BLOCKS);
    let coordinates = |stream: &str| kit::inputs::UniformF32s::new(&ctx.rng_for(stream), 0.0, 1.0);
    let (x, y) = (coordinates("timed-size x"), coordinates("timed-size y"));
    let left_at_zero = std::cell::Cell::new(false);
    let m = kit::measure::measure_ptx_sampled(&ctx.build.ptx, kernel, &sample, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into x and y.
        let (dx, dy) = gpu.unwatched(|| {
            let (fx, fy) = (x.clone(), y.clone());
            let dx = gpu.upload_generated("x", n, move |first, out: &mut [f32]| fx.fill(first, out));
            let dy = gpu.upload_generated("y", n, move |first, out: &mut [f32]| fy.fill(first, out));
            (dx, dy)
        });
        let (dx, dy) = (dx?, dy?);
        let hits = gpu.zeros::<u32>("hits", 1)?;
        module.launch(kernel, cfg, &args![&dx, &dy, n as i32, &hits])?;
        let read = kit::measure::in_both(&kit::measure::sampled_reads(&dx)?, &kit::measure::sampled_reads(&dy)?);
        let (expected, near) = hits_of(&x, &y, &read);
        let got = hits.read()?[0];
        // Untouched: a kernel whose last block writes the total (a ticket counts the blocks
        // that finished) writes nothing where only some of them run.
        left_at_zero.set(got == 0);
        let right = if got.abs_diff(expected) <= near || got == 0 {
            Ok(())
        } else {
            let points = read.iter().map(|r| r.len()).sum::<usize>();
            Err(anyhow::anyhow!(
                "`*hits` is {got}, where the sampled blocks read {points} of the points, which hold {expected} hits (the \
                 grader's count in double; {near} of them lie within 2^-20 of the circle, where float rounding may \
                 count them either way)"
            ))
        };
        kit::measure::require_right_result_at_timed_size(right, &format!("n = {n}"), sample.blocks().len())
    })?;
    let blocks = sample.blocks().len();
    if left_at_zero.get() && m.stats.global_atomics < blocks as u64 {
        let zero = Err(anyhow::anyhow!(
            "`*hits` is 0 and the {blocks} sampled blocks made {} global atomics: a block that adds its count to \
             `*hits`, or takes a ticket to learn whether it is the last one to finish, makes at least one. These \
             blocks counted nothing at this size",
            m.stats.global_atomics
        ));
        kit::measure::require_right_result_at_timed_size(zero, &format!("n = {n}"), blocks)?;
    }
    // Per hit: the hits of the sampled blocks' share of the points (a GPU's run counts them all).
    let share = n as f64 * blocks as f64 / cfg.grid.0 as f64;
    Ok(Counted { m, hits: (share * std::f64::consts::FRAC_PI_4) as u32, blocks: blocks as u32 })
}

/// The hits among the points `at` of the generated x and y (in double), and
/// the points among them within [`crate::PERF_NEAR`] of the circle.
fn hits_of(x: &kit::inputs::UniformF32s, y: &kit::inputs::UniformF32s, at: &[std::ops::Range<usize>]) -> (u32, u32) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let (mut hits, mut near) = (0, 0);
    for (start, len) in kit::measure::in_pieces(at) {
        xs.resize(len, 0.0);
        ys.resize(len, 0.0);
        x.fill(start, &mut xs);
        y.fill(start, &mut ys);
        for (&a, &b) in xs.iter().zip(&ys) {
            let r2 = (a as f64).powi(2) + (b as f64).powi(2);
            hits += (r2 <= 1.0) as u32;
            near += ((r2 - 1.0).abs() <= crate::PERF_NEAR) as u32;
        }
    }
    (hits, near)
}

/// `judge` of `pi_shared` on the check's measured shape, then `timed_judge` on the timed one.
fn shared_here_and_timed(
    ctx: &Ctx,
    judge: fn(&Counted) -> Result<String>,
    timed_judge: fn(&Counted) -> Result<String>,
) -> Result<String> {
    let c = measure(ctx, "pi_shared")?;
    let line = judge(&c)?;
    let n = crate::PERF_POINTS;
    let note = kit::measure::judge_at_timed_size(
        (&format!("n = {n}"), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, crate::launch_config(n).grid.0 as u64),
        &format!("at n = {} in {} blocks (the measured input) {line}", measured_shape(ctx).1, c.blocks),
        || measure_at_timed_size(ctx, "pi_shared"),
        timed_judge,
    )?;
    Ok(line + &note)
}

impl Counted {
    pub fn per_hit(&self) -> f64 {
        self.m.stats.global_atomics as f64 / self.hits as f64
    }
    pub fn per_block(&self) -> f64 {
        self.m.stats.global_atomics as f64 / self.blocks as f64
    }
    fn figures(&self) -> String {
        format!(
            "{} global atomics for {} hits in {} blocks ({:.3} per hit, {:.1} per block); {} shared atomics; loads \
             of x and y {:.1} sectors per request, {:.3} per lane ({:.0}% of the bytes of the sectors used)",
            self.m.stats.global_atomics,
            self.hits,
            self.blocks,
            self.per_hit(),
            self.per_block(),
            self.m.stats.shared_atomics,
            self.m.load_sectors_per_request(),
            self.m.global_load_sectors_per_lane(),
            100.0 * self.m.global_load_efficiency()
        )
    }

    /// The loads of x and y are coalesced.
    fn coalesced(&self) -> Result<()> {
        let per_lane = self.m.global_load_sectors_per_lane();
        if per_lane > MAX_SECTORS_PER_LANE {
            bail!(
                "{}: the loads of x and y touch {per_lane:.3} sectors per lane ({:.1} sectors per warp request; a \
                 grid-stride loop: 4 per request, 0.125 per lane; at most {MAX_SECTORS_PER_LANE} per lane){}. \
                 Neighbouring threads read points far apart, as when each thread counts its own contiguous slice: \
                 every warp request then touches many sectors for a few bytes each. Let consecutive threads read \
                 consecutive points: start at blockIdx.x * blockDim.x + threadIdx.x and step by \
                 gridDim.x * blockDim.x",
                self.m.kernel,
                self.m.load_sectors_per_request(),
                kit::measure::worst_at(self.m.least_efficient_global_load())
            );
        }
        Ok(())
    }
}

/// `global`: the counter is updated with global atomics.
pub fn global_atomics(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(measure(ctx, "pi_global").and_then(|c| updates_atomically(&c)))
}

/// `global`'s measured judgement.
pub fn updates_atomically(c: &Counted) -> Result<String> {
    if c.m.stats.global_atomics == 0 {
        bail!(
            "pi_global made no atomic update of global memory ({}). Thousands of threads add to one counter: \
             without atomicAdd(hits, 1), updates are lost",
            c.figures()
        );
    }
    c.coalesced()?;
    Ok(c.figures())
}

/// `shared`: one global update per block.
pub fn per_block(c: &Counted) -> Result<String> {
    atomics_per_block(c)?;
    c.coalesced()?;
    Ok(c.figures())
}

/// [`per_block`]'s atomics alone: what the timed size judges. The loads'
/// coalescing is judged on the measured input only: with clang, the lanes of
/// a grid-stride loop with a branch in it drift further apart the more points
/// a thread counts (variant `ex01-shared-branch-in-loop`: 0.259 sectors per
/// lane on the measured input, 0.786 at the timed size's 128 points a thread,
/// on the simulator), while NVRTC's code keeps them together.
pub fn atomics_per_block(c: &Counted) -> Result<String> {
    if c.per_block() > MAX_ATOMICS_PER_BLOCK {
        bail!(
            "{}: {:.1} global atomics per block (one per block is the lesson; at most {MAX_ATOMICS_PER_BLOCK}); \
             {}. Count the block's hits in a `__shared__` counter (atomicAdd on shared memory is cheap), then \
             after __syncthreads() let thread 0 add the block's count to *hits once",
            c.m.kernel,
            c.per_block(),
            c.figures()
        );
    }
    Ok(c.figures())
}

/// The structure check `few-global-atomics-per-block`.
pub fn few_global_atomics_per_block(ctx: &Ctx) -> Result<String> {
    let result = shared_here_and_timed(ctx, per_block, atomics_per_block);
    if let (Err(e), false) = (&result, ctx.kernel_ptx("pi_shared")?.uses_shared()) {
        bail!(
            "pi_shared does not use shared memory: the PTX has no access to a `__shared__` variable. Count each \
             block's hits in a `__shared__` counter ({})",
            e
        );
    }
    unless_unmeasurable(result)
}

/// Stand-in for `perf::faster-than-global-atomics`: contention on the one global counter is the cost.
pub fn few_atomics_per_hit(ctx: &Ctx) -> Result<String> {
    shared_here_and_timed(ctx, few_per_hit, few_per_hit)
}

/// The stand-in's judgement.
pub fn few_per_hit(c: &Counted) -> Result<String> {
    if c.per_hit() > MAX_ATOMICS_PER_HIT {
        bail!(
            "pi_shared: {:.3} global atomics per hit (the one-atomic-per-hit pattern: 1; at most \
             {MAX_ATOMICS_PER_HIT}): the block's threads still queue on the global counter. {}",
            c.per_hit(),
            c.figures()
        );
    }
    Ok(c.figures())
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    use super::*;

    const VARIANTS: &str = "grader/tests/variants";

    /// Runs `judge` on `file`'s `kernel`, measured on `shape`, with seed `seed`'s points.
    fn judged(file: &str, kernel: &str, seed: u64, shapes: &[(u32, usize)], judge: fn(&Counted) -> Result<String>) {
        kit::trial::with_measured_ctx(file, seed, "ex01::shared::structure::few-global-atomics-per-block", |ctx| {
            for &shape in shapes {
                let verdict = measure_on(ctx, kernel, shape).and_then(|c| judge(&c));
                eprintln!("{file} on {shape:?}: {:?}", verdict.as_ref().map_err(|e| e.to_string()));
                let wrong = |e: &anyhow::Error| format!("{e:#}").contains("16.0 sectors per warp request");
                match (file.contains("slow") || file.contains("global-only") || file.contains("slices"), verdict) {
                    (false, Ok(_)) => {}
                    (true, Err(e)) if !file.contains("slices") || wrong(&e) => {}
                    (_, v) => panic!("{file} on {shape:?}: {v:?}"),
                }
            }
        });
    }

    /// Every shape the seed may draw keeps the checks' verdicts: the
    /// references and correct variants pass, the slow ones and the
    /// uncoalesced one fail (with the figure the variants corpus expects).
    #[test]
    fn every_measured_shape_keeps_the_verdicts() {
        let shapes = kit::measure::slices_of_four_extremes(crate::THREADS);
        let shared = |case: &str| format!("{VARIANTS}/ex01-shared-{case}/exercises/ex01-pi/kernels/pi_shared.cu");
        let mut files: Vec<String> = vec![
            "reference/ex01-pi/kernels/pi_shared.cu".into(),
            "exercises/ex01-pi/calibration/pi_shared_warp_votes.cu".into(),
            "reference/slow/ex01-pi/kernels/pi_shared.cu".into(),
        ];
        let cases =
            ["warp-shuffle", "per-warp-slots", "warpsize-slots", "unrolled-ldg", "if-converted-read", "branch-in-loop"];
        files.extend(cases.iter().chain(&["global-only", "contiguous-slices"]).map(|c| shared(c)));
        for (seed, file) in files.iter().enumerate() {
            judged(file, "pi_shared", seed as u64, &shapes, per_block);
        }
        judged("reference/ex01-pi/kernels/pi_shared.cu", "pi_shared", 9, &shapes, few_per_hit);
        judged("reference/slow/ex01-pi/kernels/pi_shared.cu", "pi_shared", 9, &shapes, few_per_hit);
        for file in [
            "reference/ex01-pi/kernels/pi_global.cu",
            "exercises/ex01-pi/calibration/pi_global_ballot.cu",
            &format!("{VARIANTS}/ex01-global-recursive-count/exercises/ex01-pi/kernels/pi_global.cu"),
            &format!("{VARIANTS}/ex01-global-while-unsigned/exercises/ex01-pi/kernels/pi_global.cu"),
            &format!("{VARIANTS}/ex01-global-early-continue/exercises/ex01-pi/kernels/pi_global.cu"),
            &format!("{VARIANTS}/ex01-global-contiguous-slices/exercises/ex01-pi/kernels/pi_global.cu"),
        ] {
            judged(file, "pi_global", 3, &shapes, updates_atomically);
        }
    }

    #[test]
    fn atomics_are_counted() {
        let ex = crate::exercise();
        passes(&ex, "global", "global-atomics", Run::Check, "reference/ex01-pi/kernels/pi_global.cu");
        passes(&ex, "global", "global-atomics", Run::Check, "exercises/ex01-pi/calibration/pi_global_ballot.cu");
        for file in ["reference/ex01-pi/kernels/pi_shared.cu", "exercises/ex01-pi/calibration/pi_shared_warp_votes.cu"]
        {
            passes(&ex, "shared", "few-global-atomics-per-block", Run::Check, file);
            passes(&ex, "shared", "faster-than-global-atomics", Run::StandIn, file);
        }
        let slow = "reference/slow/ex01-pi/kernels/pi_shared.cu";
        if let Some(msg) = fails(&ex, "shared", "few-global-atomics-per-block", Run::Check, slow) {
            assert!(msg.contains("global atomics per block"), "{msg}");
        }
        fails(&ex, "shared", "faster-than-global-atomics", Run::StandIn, slow);
        fails(
            &ex,
            "shared",
            "faster-than-global-atomics",
            Run::StandIn,
            "exercises/ex01-pi/calibration/pi_shared_is_global.cu",
        );
        // At the timed size a 0 in `*hits` passes where the sampled blocks took their tickets
        // (the last-block pattern), not where they returned at once.
        let cheat =
            |case: &str| format!("grader/tests/cheats/ex01-shared-{case}/exercises/ex01-pi/kernels/pi_shared.cu");
        passes(&ex, "shared", "few-global-atomics-per-block", Run::Check, &cheat("last-block-total"));
        if let Some(msg) =
            fails(&ex, "shared", "few-global-atomics-per-block", Run::Check, &cheat("nothing-when-large"))
        {
            assert!(msg.contains("`*hits` is 0 and the 4 sampled blocks made 0 global atomics"), "{msg}");
        }
        // The right count, but each thread counts its own slice: uncoalesced.
        let slices = format!("{VARIANTS}/ex01-shared-contiguous-slices/exercises/ex01-pi/kernels/pi_shared.cu");
        if let Some(msg) = fails(&ex, "shared", "few-global-atomics-per-block", Run::Check, &slices) {
            assert!(msg.contains("16.0 sectors per warp request") && msg.contains("pi_shared.cu:"), "{msg}");
        }
    }
}
