//! ex04's memory spaces judged by what the kernel does (kit::measure): it
//! searches a small seeded string on a private simulator and the checks count
//! global loads and shared loads per start position, and constant-cache passes
//! per constant load. v1 reads 2 x SEQ_LEN letters per position from global
//! memory; a staged window brings the string's share to about 1 per position;
//! `seq` in constant memory is read as broadcasts (one pass per warp load).
//!
//! Known limit: the loads of `dna` and of `seq` (both global in v2) are not told
//! apart, so a v2 that stages `seq` instead of the window can pass.

use std::ops::RangeInclusive;

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind};
use kit::Ctx;
use rand::Rng;

use crate::{cpu, inputs, Variant, SEQ_LEN, THREADS};

/// Blocks of start positions of the measured string, drawn from the seed
/// (CALIBRATION.md's figures are for 16): every figure is per position.
pub const MEASURE_BLOCKS: RangeInclusive<usize> = 12..=20;
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
/// Active lanes per global load at or above which whole warps load together.
pub const MIN_LANES_PER_LOAD: f64 = 16.0;

/// A kernel's memory behaviour on the measured string, and its start positions.
pub struct Measured {
    pub m: kit::measure::Measurement,
    pub positions: usize,
}

impl std::ops::Deref for Measured {
    type Target = kit::measure::Measurement;
    fn deref(&self) -> &Self::Target {
        &self.m
    }
}

/// Runs the part's kernel once on a seeded string of whole blocks of
/// positions (their number drawn from [`MEASURE_BLOCKS`]) with a seeded sequence.
pub fn measure(ctx: &Ctx, v: Variant) -> Result<Measured> {
    let blocks = ctx.rng_for("measured shape").random_range(MEASURE_BLOCKS);
    let letters = blocks * THREADS + SEQ_LEN - 1;
    let mut rng = ctx.rng();
    let seq = inputs::random_seq(&mut rng);
    let dna = inputs::random_dna(&mut rng, letters);
    let m = ctx.measure(v.kernel(), |module| {
        let gpu = module.gpu();
        let d_dna = gpu.upload("dna", &dna)?;
        let d_seq = gpu.upload("seq", &seq)?;
        let found = gpu.poisoned::<u8>("found", cpu::positions(letters))?;
        v.prepare(module, &seq)?;
        v.launch_async(module, &d_dna, &d_seq, &found)?;
        gpu.finish()?;
        kit::measure::require_right_result(kit::check::exact("found", &cpu::found(&dna, &seq), &found.read()?))
    })?;
    Ok(Measured { m, positions: cpu::positions(letters) })
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
    let m = ctx.measure(v.kernel(), |module| {
        let gpu = module.gpu();
        let d_dna = gpu.upload("dna", &dna)?;
        let d_seq = gpu.upload("seq", &seq)?;
        let found = gpu.poisoned::<u8>("found", cpu::positions(letters))?;
        v.prepare(module, &seq)?;
        v.launch_async(module, &d_dna, &d_seq, &found)?;
        gpu.finish()?;
        kit::measure::require_right_result(kit::check::exact("found", &cpu::found(&dna, &seq), &found.read()?))
    })?;
    kit::measure::require_every_thread_at_barriers(&m)
}

impl Measured {
    fn per_position(&self, count: u64) -> f64 {
        count as f64 / self.positions as f64
    }
}

fn figures(m: &Measured) -> String {
    format!(
        "per start position: {:.2} global loads, {:.2} shared loads, {:.2} constant loads ({:.2} constant-cache \
         passes per load); {:.1} active lanes per global load",
        m.per_position(m.thread_global_loads()),
        m.per_position(m.thread_shared_loads()),
        m.per_position(m.thread_const_loads()),
        m.const_passes_per_request(),
        m.global_lanes_per_load()
    )
}

/// v1: global memory only.
pub fn global_only(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(measure(ctx, Variant::V1).and_then(|m| {
        if m.shared_requests() > 0 {
            bail!(
                "search_v1 uses shared memory. v1 is the global-memory-only version that v2 and v3 are compared \
                 with: read dna[p + k] and seq[k] straight from global memory here ({})",
                figures(&m)
            );
        }
        if m.thread_global_loads() == 0 {
            bail!("search_v1 reads nothing from global memory: compare dna[p + k] with seq[k], both in global memory");
        }
        Ok(figures(&m))
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
    unless_unmeasurable(measure(ctx, v).and_then(|m| window(&m)))
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

/// Stand-in for v2's and v3's `share-of-v1`: whole warps load (no
/// thread copies the window alone), and for v3 constant reads are broadcasts.
pub fn stand_in(ctx: &Ctx, v: Variant) -> Result<String> {
    let m = measure(ctx, v)?;
    window(&m)?;
    let lanes = m.global_lanes_per_load();
    if lanes < MIN_LANES_PER_LOAD {
        bail!(
            "{}: {lanes:.1} active lanes per global load (at least {MIN_LANES_PER_LOAD}){}: a few threads copy the \
             window while the rest of the block waits. Let every thread copy its own letter",
            m.kernel,
            worst_at(m.narrowest_global_load())
        );
    }
    if v == Variant::V3 && m.const_passes_per_request() > MAX_CONST_PASSES {
        bail!(
            "search_v3: {:.2} constant-cache passes per constant load (a broadcast: 1): the threads of a warp read \
             different letters of `seq` at once, and constant memory serves them one address at a time. Let every \
             thread read seq[k] at the same step k",
            m.const_passes_per_request()
        );
    }
    Ok(figures(&m))
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
        let unused = "exercises/ex04-dna/calibration/search_v2_unused_window.cu";
        fails(&ex, "v2", "shared-window", Run::Check, unused);
        fails(&ex, "v2", "share-of-v1", Run::StandIn, unused);
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
