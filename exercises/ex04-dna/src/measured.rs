//! ex04's memory spaces judged by what the kernel does (kit::measure): it
//! searches seeded strings on a private simulator, of three lengths drawn by
//! the run's secret across the simulated range (each must pass), and the
//! checks count global loads and shared loads per start position,
//! constant-cache passes per constant load and the bytes of `dna` per load
//! request. v1 reads 2 x SEQ_LEN letters per position from global memory; a
//! staged window brings the string's share to about 1 per position; `seq` in
//! constant memory is read as broadcasts (one pass per warp load).
//!
//! Known limit: `shared-window` does not tell the loads of `dna` and of `seq`
//! (both global in v2) apart, so a v2 that stages `seq` instead of the window
//! can pass it; the stand-in does (by the addresses of each load).

use std::ops::RangeInclusive;

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, BlockSample};
use kit::Ctx;
use rand::Rng;

use crate::{cpu, inputs, Variant, SEQ_LEN, THREADS};

/// Blocks of start positions the checks measure: the range the correctness
/// strings cover on the simulator (one block to the seed's 64). Three lengths
/// are drawn from it by the run's secret, one from each third on a log scale
/// (`kit::measure::sizes_across`), and each must pass: every figure is per
/// position, the same at every length for a kernel that does not look at it.
pub const MEASURE_BLOCKS: RangeInclusive<usize> = 2..=64;
/// Lengths measured per check, one from each stratum of [`MEASURE_BLOCKS`].
pub const MEASURED_LENGTHS: usize = 3;
/// Global loads per position a staged window stays at or under: the window
/// (~1) plus `seq` read from global memory (SEQ_LEN) in v2; v1 reads 2 x SEQ_LEN.
pub const MAX_STAGED_LOADS: f64 = SEQ_LEN as f64 + 2.0;
/// Shared loads per position at or above which the comparisons read the window
/// (an early exit on the first mismatch reads ~1.3).
pub const MIN_SHARED_LOADS: f64 = 0.5;
/// v3: global loads per position at or under which `seq` comes from elsewhere.
pub const MAX_V3_GLOBAL_LOADS: f64 = 2.0;
/// Constant-cache passes per constant load the v3 stand-in allows (1: broadcasts).
pub const MAX_CONST_PASSES: f64 = 1.5;
/// Bytes of `dna` per warp-level load request at or above which whole warps
/// copy the window: 29 for the reference (a warp of byte loads asks for 32,
/// the 7 letters of the halo for 7), 86 for `uchar4` words, 8 when eight
/// threads copy it, 4 for four and 1 for thread 0 alone. Bytes, not lanes: a
/// window copied as words by a quarter of the threads is as fast as the
/// reference's. See CALIBRATION.md.
pub const MIN_WINDOW_BYTES_PER_REQUEST: f64 = 16.0;
/// Active lanes per request of the window's loads under which a few threads
/// copy it (what the message then says): the reference has 29, eight copying threads 8.
pub const FEW_LANES: f64 = 12.0;

/// Blocks the simulator runs of the timed search ([`crate::PERF_LETTERS`]
/// letters, 262 144 blocks), drawn by the run's secret: block 0 (of the first
/// wave, BlockSample::at_timed_size) and three of the later ones. A kernel can tell the measured strings (at
/// most 64 blocks) from the timed one by its grid or length alone; at the
/// timed size it takes its timed path.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;

/// A kernel's memory behaviour on one measured string, its start positions,
/// and where its `dna` was (to tell its loads from those of `seq`).
pub struct Measured {
    pub m: kit::measure::Measurement,
    pub positions: usize,
    pub dna: (kit::backend::DevPtr, usize),
}

impl std::ops::Deref for Measured {
    type Target = kit::measure::Measurement;
    fn deref(&self) -> &Self::Target {
        &self.m
    }
}

/// Runs the part's kernel once on a seeded string of `blocks` whole blocks
/// of positions with a seeded sequence.
pub fn measure_on(ctx: &Ctx, v: Variant, blocks: usize) -> Result<Measured> {
    let letters = blocks * THREADS + SEQ_LEN - 1;
    let mut rng = ctx.rng();
    let seq = inputs::random_seq(&mut rng);
    let dna = inputs::random_dna(&mut rng, letters);
    search_measured(ctx, v, &dna, &seq)
}

/// One measured run of the part's kernel searching `dna` for `seq`, its
/// output checked.
fn search_measured(ctx: &Ctx, v: Variant, dna: &[u8], seq: &inputs::Seq) -> Result<Measured> {
    let letters = dna.len();
    // Where `dna` lies: the simulator's run, the last (a GPU witness runs first).
    let at = std::cell::Cell::new((0, 0));
    let m = ctx.measure(v.kernel(), |module| {
        let gpu = module.gpu();
        let d_dna = gpu.upload("dna", dna)?;
        at.set((d_dna.ptr(), d_dna.bytes()));
        let d_seq = gpu.upload("seq", seq)?;
        let found = gpu.poisoned::<u8>("found", cpu::positions(letters))?;
        v.prepare(module, seq)?;
        v.launch_async(module, &d_dna, &d_seq, &found)?;
        gpu.finish()?;
        kit::measure::require_right_result(kit::check::exact("found", &cpu::found(dna, seq), &found.read()?))
    })?;
    Ok(Measured { m, positions: cpu::positions(letters), dna: at.get() })
}

/// The part's kernel run once on the simulator at the timed size
/// ([`crate::PERF_LETTERS`]), [`TIMED_SAMPLED_BLOCKS`] of its blocks: the
/// string generated where they read it (kit::Gpu::upload_generated), and
/// what they wrote checked, wherever they wrote it. Its `positions` are
/// those the sampled blocks search.
pub fn measure_at_timed_size(ctx: &Ctx, v: Variant) -> Result<Measured> {
    let letters = crate::PERF_LETTERS;
    let (positions, cfg) = (cpu::positions(letters), crate::launch_config(letters));
    let (first, later) = TIMED_SAMPLED_BLOCKS;
    let sample =
        BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), cfg.grid.0 as u64, (first, later));
    // The outputs the README gives the sampled blocks: what the figures are per.
    let computed = sample.linear_elements(THREADS, positions);
    let mut rng = ctx.rng_for("timed-size string");
    let seq = inputs::random_seq(&mut rng);
    let dna = inputs::TimedDna::new(&rng);
    let found_at = |p: usize| {
        let mut window = [0u8; SEQ_LEN];
        dna.fill(p, &mut window);
        u8::from(window == seq)
    };
    // Where `dna` lies: the simulator's run, the last (a GPU witness runs first).
    let at = std::cell::Cell::new((0, 0));
    let m = kit::measure::measure_ptx_sampled(&ctx.build.ptx, v.kernel(), &sample, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into `dna`.
        let (d_dna, d_seq, found) = gpu.unwatched(|| {
            let d = dna.clone();
            let d_dna = gpu.upload_generated("dna", letters, move |first, out: &mut [u8]| d.fill(first, out));
            let d_seq = gpu.upload("seq", &seq);
            let found = gpu.poisoned_generated::<u8>("found", positions);
            (d_dna, d_seq, found)
        });
        let (d_dna, d_seq, found) = (d_dna?, d_seq?, found?);
        at.set((d_dna.ptr(), d_dna.bytes()));
        v.prepare(module, &seq)?;
        v.launch_async(module, &d_dna, &d_seq, &found)?;
        gpu.finish()?;
        let written = kit::measure::sampled_writes(&found, || computed.clone())?;
        let right = kit::check::exact_at("found", positions, &written, found_at);
        kit::measure::require_right_result_at_timed_size(right, &format!("{letters} letters"), sample.blocks().len())
    })?;
    Ok(Measured { m, positions: computed.len(), dna: at.get() })
}

/// `judge` on each length drawn from [`MEASURE_BLOCKS`] (the worst case:
/// each must pass), then at the timed size: the first failure, named with
/// its length, or the figures of the last measured length.
pub fn on_every_length(ctx: &Ctx, v: Variant, judge: impl Fn(&Measured) -> Result<String>) -> Result<String> {
    let lengths = kit::measure::sizes_across(ctx, "blocks", MEASURE_BLOCKS, MEASURED_LENGTHS);
    let unit = |blocks: usize| format!("a string of {} start positions", blocks * THREADS);
    let line = kit::measure::on_every_size(&lengths, unit, |blocks| judge(&measure_on(ctx, v, blocks)?))?;
    let grid = crate::launch_config(crate::PERF_LETTERS).grid.0 as u64;
    let note = kit::measure::judge_at_timed_size(
        (&format!("{} letters", crate::PERF_LETTERS), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, grid),
        &format!("on the measured strings {line}"),
        || measure_at_timed_size(ctx, v),
        judge,
    )?;
    Ok(line + &note)
}

/// The structure check `barrier`'s run: a string whose last block has fewer
/// start positions than threads (how many fewer drawn from the seed), so
/// that some threads have no position to compare. Every thread must still
/// reach the `__syncthreads()` (its letter is part of the window): a kernel
/// whose threads without a position return before the barrier fails here,
/// naming the `return` and the barrier.
pub fn every_thread_at_barrier(ctx: &Ctx, v: Variant) -> Result<()> {
    let mut rng = ctx.rng_for("barrier shape");
    let short = rng.random_range(1..THREADS / 2);
    let letters = rng.random_range(2..=3) * THREADS + SEQ_LEN - 1 - short;
    let seq = inputs::random_seq(&mut rng);
    let dna = inputs::random_dna(&mut rng, letters);
    let m = search_measured(ctx, v, &dna, &seq)?;
    kit::measure::require_every_thread_at_barriers(&m)
}

impl Measured {
    fn per_position(&self, count: u64) -> f64 {
        count as f64 / self.positions as f64
    }
    /// The loads that read `dna` (the window's copy, in v2 and v3).
    pub fn window_loads(&self) -> kit::measure::Loads<'_> {
        self.m.global_loads_from(self.dna.0, self.dna.1)
    }
}

fn figures(m: &Measured) -> String {
    let window = m.window_loads();
    format!(
        "per start position: {:.2} global loads, {:.2} shared loads, {:.2} constant loads ({:.2} constant-cache \
         passes per load); the loads of `dna`: {:.1} bytes per warp request ({:.1} active lanes of {:.1} bytes)",
        m.per_position(m.thread_global_loads()),
        m.per_position(m.thread_shared_loads()),
        m.per_position(m.thread_const_loads()),
        m.const_passes_per_request(),
        window.bytes_per_request(),
        window.lanes_per_request(),
        window.bytes_per_lane()
    )
}

/// v1: global memory only.
pub fn global_only(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(on_every_length(ctx, Variant::V1, |m| {
        if m.shared_requests() > 0 {
            bail!(
                "search_v1 uses shared memory. v1 is the global-memory-only version that v2 and v3 are compared \
                 with: read dna[p + k] and seq[k] straight from global memory here ({})",
                figures(m)
            );
        }
        if m.thread_global_loads() == 0 {
            bail!("search_v1 reads nothing from global memory: compare dna[p + k] with seq[k], both in global memory");
        }
        Ok(figures(m))
    }))
}

/// v2 and v3: the comparisons read a window staged in shared memory.
pub fn window(m: &Measured) -> Result<String> {
    let global = m.per_position(m.thread_global_loads());
    let shared = m.per_position(m.thread_shared_loads());
    if global > MAX_STAGED_LOADS || shared < MIN_SHARED_LOADS {
        bail!(
            "{}: {global:.2} global and {shared:.2} shared loads per start position (staged: about 1 + the \
             sequence's {SEQ_LEN} global, and {SEQ_LEN} shared){}: the comparisons still read `dna` from global \
             memory. Copy the block's window ({} letters) into a __shared__ array, one letter per thread, and \
             compare window[threadIdx.x + k] with the sequence",
            m.kernel,
            worst_at(m.worst_global(AccessKind::GlobalLoad)),
            THREADS + SEQ_LEN - 1
        );
    }
    Ok(figures(m))
}

pub fn shared_window(ctx: &Ctx, v: Variant) -> Result<String> {
    unless_unmeasurable(on_every_length(ctx, v, window))
}

/// v3: `seq` read from constant memory, not global.
pub fn constant(m: &Measured) -> Result<String> {
    let global = m.per_position(m.thread_global_loads());
    if m.stats.const_load_requests == 0 || global > MAX_V3_GLOBAL_LOADS {
        bail!(
            "search_v3: {global:.2} global loads and {:.2} constant loads per start position: the sequence is not \
             read from constant memory. Compare the window with seq[k], the `__constant__` array the host fills",
            m.per_position(m.thread_const_loads())
        );
    }
    Ok(figures(m))
}

/// Stand-in for v2's and v3's `share-of-v1`: whole warps copy the window
/// (its loads move many bytes per request: no thread copies it alone), and
/// for v3 constant reads are broadcasts.
pub fn stand_in(ctx: &Ctx, v: Variant) -> Result<String> {
    on_every_length(ctx, v, |m| {
        window(m)?;
        copied_by_warps(m)?;
        if v == Variant::V3 && m.const_passes_per_request() > MAX_CONST_PASSES {
            bail!(
                "search_v3: {:.2} constant-cache passes per constant load (a broadcast: 1): the threads of a warp \
                 read different letters of `seq` at once, and constant memory serves them one address at a time. \
                 Let every thread read seq[k] at the same step k",
                m.const_passes_per_request()
            );
        }
        Ok(figures(m))
    })
}

/// The window's loads move at least [`MIN_WINDOW_BYTES_PER_REQUEST`] bytes
/// per warp request; the message says why not, from the figures: few lanes
/// (a few threads copy), or many lanes asking for little each.
pub fn copied_by_warps(m: &Measured) -> Result<()> {
    let window = m.window_loads();
    let per_request = window.bytes_per_request();
    if per_request >= MIN_WINDOW_BYTES_PER_REQUEST {
        return Ok(());
    }
    let lanes = window.lanes_per_request();
    let why = if lanes < FEW_LANES {
        format!(
            "{lanes:.1} active lanes per request: a few threads copy the window while the rest of the block waits, \
             one load after another. Let every thread copy its own letter (or a word of four letters)"
        )
    } else {
        format!(
            "{lanes:.1} active lanes per request, {:.1} bytes each: the lanes of a warp read letters far apart, so \
             each request brings few of the window's bytes. Let consecutive threads copy consecutive letters",
            window.bytes_per_lane()
        )
    };
    bail!(
        "{}: the loads of `dna` move {per_request:.1} bytes per warp request (the reference: 29, as `uchar4` words: \
         86; at least {MIN_WINDOW_BYTES_PER_REQUEST}){}; {why}",
        m.kernel,
        worst_at(window.narrowest)
    )
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    #[test]
    fn memory_spaces_are_measured() {
        let ex = crate::exercise();
        passes(&ex, "v1", "global-only", Run::Check, "reference/ex04-dna/kernels/search_v1.cu");
        for (part, file) in [
            ("v2", "reference/ex04-dna/kernels/search_v2.cu"),
            ("v3", "reference/ex04-dna/kernels/search_v3.cu"),
            ("v3", "exercises/ex04-dna/calibration/search_v3_unrolled.cu"),
        ] {
            passes(&ex, part, "shared-window", Run::Check, file);
            passes(&ex, part, "share-of-v1", Run::StandIn, file);
        }
        passes(&ex, "v3", "sequence-in-constant", Run::Check, "reference/ex04-dna/kernels/search_v3.cu");
        for (part, file) in [
            ("v2", "reference/slow/ex04-dna/kernels/search_v2.cu"),
            ("v3", "reference/slow/ex04-dna/kernels/search_v3.cu"),
        ] {
            passes(&ex, part, "shared-window", Run::Check, file);
            fails(&ex, part, "share-of-v1", Run::StandIn, file);
        }
        let variant = |case: &str, file: &str| kit::trial::variant_file(case, &format!("ex04-dna/kernels/{file}"));
        // The window as uchar4 words and an early exit: fewer lanes per load, more bytes per request.
        let words = variant("ex04-v2-uchar4-window-early-exit", "search_v2.cu");
        passes(&ex, "v2", "shared-window", Run::Check, &words);
        if let Some(note) = passes(&ex, "v2", "share-of-v1", Run::StandIn, &words) {
            assert!(note.contains(" active lanes of 4.0 bytes)"), "{note}");
        }
        // A few threads copy the window: the message says so, from the figures.
        for (part, file, says) in [
            ("v2", "reference/slow/ex04-dna/kernels/search_v2.cu".to_string(), "1.0 bytes per warp request"),
            ("v2", variant("ex04-v2-slow-four-threads-stage", "search_v2.cu"), "4.0 bytes per warp request"),
            ("v3", variant("ex04-v3-slow-eight-threads-stage", "search_v3.cu"), "8.0 bytes per warp request"),
            // Every thread copies only on the strings the README once named for the measurement.
            (
                "v2",
                "grader/tests/cheats/ex04-v2-window-by-warps-only-in-band/exercises/ex04-dna/kernels/search_v2.cu"
                    .to_string(),
                "a few threads copy the window",
            ),
        ] {
            if let Some(msg) = fails(&ex, part, "share-of-v1", Run::StandIn, &file) {
                assert!(msg.contains(says) && msg.contains("a few threads copy the window"), "{file}: {msg}");
                assert!(msg.starts_with("measured on a string of "), "{msg}");
            }
        }
        let unused = "exercises/ex04-dna/calibration/search_v2_unused_window.cu";
        fails(&ex, "v2", "shared-window", Run::Check, unused);
        fails(&ex, "v2", "share-of-v1", Run::StandIn, unused);
        // The window staged only on grids of at most 65536 blocks: every measured string, not the timed one.
        let small = "grader/tests/cheats/ex04-v2-window-only-on-small-grids/exercises/ex04-dna/kernels/search_v2.cu";
        for (check, what) in [("shared-window", Run::Check), ("share-of-v1", Run::StandIn)] {
            if let Some(msg) = fails(&ex, "v2", check, what, small) {
                assert!(msg.starts_with("at 67108864 letters (the timed size: 4 of its 262144 blocks"), "{msg}");
                assert!(msg.contains("16.00 global and 0.00 shared loads per start position"), "{msg}");
            }
        }
    }

    /// Threads with no start position that return before the barrier fail `barrier` (the
    /// reference, whose every thread reaches it, passes), naming both lines.
    #[test]
    fn every_thread_reaches_the_barrier() {
        let ex = crate::exercise();
        for (part, file) in
            [("v2", "reference/ex04-dna/kernels/search_v2.cu"), ("v3", "reference/ex04-dna/kernels/search_v3.cu")]
        {
            passes(&ex, part, "barrier", Run::Check, file);
        }
        let early = "grader/tests/variants/ex04-v2-returns-before-barrier/exercises/ex04-dna/kernels/search_v2.cu";
        if let Some(msg) = fails(&ex, "v2", "barrier", Run::Check, early) {
            for says in
                ["return at line", "before the __syncthreads() at line", "every thread of the block must reach it"]
            {
                assert!(msg.contains(says), "{says:?} in {msg}");
            }
            assert!(
                msg.contains("search_v2.cu:20") && msg.contains("search_v2.cu:22"),
                "the return's and the barrier's lines: {msg}"
            );
        }
        passes(&ex, "v2", "shared-window", Run::Check, early);
    }
}
