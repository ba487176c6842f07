//! ex10's lessons judged by what the kernels do to memory (kit::measure): each
//! kernel counts a small fixed input of text-like bytes on a private
//! simulator, and the checks read
//!
//! - global atomics per byte (`global`: exactly one: every byte once);
//! - the most global atomics one block made to one bin (`private`, `coarse`:
//!   at most one, the block's private bins merged once; one atomic per byte
//!   makes as many as the block's most frequent byte, a space, about 50);
//! - the sectors per lane of the byte reads (`coarse`: a warp reading
//!   consecutive bytes touches one sector for 32 lanes, consecutive `int4` 16;
//!   a contiguous chunk per thread makes every lane touch a sector of its own,
//!   whatever the width of its reads).
//!
//! The text-like input repeats bins inside every block, so that one atomic per
//! byte shows as many per bin. Deterministic for a seed: the same on every backend.

use anyhow::{anyhow, bail, Result};
use kit::backend::sim::names_ptx_line;
use kit::backend::BackendError;
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, BlockSample, Measurement};
use kit::{args, Ctx};

use crate::cpu::{self, Bytes};
use crate::{coarse_config, launch_config, COARSE, GLOBAL};

/// Bytes of the measured input of `global` and `private`: about 32 blocks of
/// 256, the exact length drawn from the seed.
pub const MEASURE_N: std::ops::RangeInclusive<usize> = 6_000..=10_000;
/// Bytes of `coarse`'s measured input, drawn from the seed, on a grid of 2
/// blocks of 256 threads: at least 36 bytes per thread, so that a contiguous
/// chunk per thread puts every lane of a warp in a sector of its own, even
/// read 16 bytes (`int4`) at a time.
pub const COARSE_MEASURE_N: std::ops::RangeInclusive<usize> = 18_500..=40_000;
pub const COARSE_MEASURE_BLOCKS: u32 = 2;
/// The most global atomics one block may make to one bin: its private count, added once.
pub const MAX_ATOMICS_PER_BLOCK_BIN: u64 = 1;
/// Bytes of local memory per byte counted: none in a kernel whose counters are
/// in shared memory; a 256-counter array per thread moves 8 per byte (a load
/// and a store per count) plus 2 KiB per thread to clear and merge it.
pub const MAX_LOCAL_BYTES_PER_BYTE: f64 = 1.0;
/// 32-byte sectors per lane's read of `data`, at or under which the reads are
/// interleaved: a warp reading consecutive bytes touches 1 sector for its 32
/// lanes (1/32 per lane), consecutive `uchar4` 4 (1/8), consecutive `int4` 16
/// (1/2); a contiguous chunk of 64 bytes per thread puts every lane in a sector
/// of its own (1 per lane), whatever the width of its reads. Per lane, not per
/// byte used: a loop whose lanes drift apart by an iteration or two (a
/// divergent branch in the loop, as clang compiles PMPP's aggregation) touches
/// a few sectors per request, partly used, and is still interleaved.
/// See CALIBRATION.md.
pub const MAX_SECTORS_PER_LANE: f64 = 0.75;

/// The measured input: text-like bytes drawn from `rng`.
pub fn measured_bytes(rng: &mut impl rand::Rng, n: usize) -> Vec<u8> {
    cpu::bytes(rng, n, Bytes::Text)
}

/// A kernel's measurement and the bytes it counted.
pub struct Measured {
    pub m: Measurement,
    pub n: usize,
}

/// Runs `kernel` once on its measured input (and checks its bins): a length
/// drawn from the seed in [`MEASURE_N`] (or [`COARSE_MEASURE_N`]).
pub fn measure(ctx: &Ctx, kernel: &str) -> Result<Measured> {
    let mut rng = ctx.rng_for("measured shape");
    let range = if kernel == COARSE { COARSE_MEASURE_N } else { MEASURE_N };
    let n = rand::Rng::random_range(&mut rng, range);
    let cfg = if kernel == COARSE { coarse_config(n, COARSE_MEASURE_BLOCKS) } else { launch_config(n) };
    let data = measured_bytes(&mut rng, n);
    let m = ctx.measure(kernel, |module| {
        let gpu = module.gpu();
        let input = gpu.upload("data", &data)?;
        let bins = gpu.zeros::<u32>("bins", cpu::BINS)?;
        module.launch(kernel, cfg, &args![&input, n as u32, &bins])?;
        let got = bins.read()?;
        kit::measure::require_right_result(cpu::compare("text-like bytes", n, &cpu::histogram(&data), &got))
    })?;
    Ok(Measured { m, n })
}

/// Blocks the simulator runs of `private`'s timed launch (one block per 256
/// bytes, 1 638 400 blocks at an H100's timed size, [`timed_bytes`]), drawn
/// by the run's secret: block 0 and three of the later waves'
/// (kit::measure::BlockSample::at_timed_size). A kernel can tell the measured
/// inputs (a few thousand bytes) from the timed one by `n` or its grid
/// alone; at the timed size it takes its timed path. The `global` part is
/// not timed.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;
/// The same for `coarse`, whose timed grid (8 blocks per SM of the simulated
/// GPU) gives each block about 400 000 bytes: block 0 and one other, about
/// 0.2 s on the simulator each.
pub const COARSE_TIMED_SAMPLED_BLOCKS: (usize, usize) = (1, 1);

fn timed_sampled_blocks(kernel: &str) -> (usize, usize) {
    if kernel == COARSE {
        COARSE_TIMED_SAMPLED_BLOCKS
    } else {
        TIMED_SAMPLED_BLOCKS
    }
}

/// The timed input's bytes on an H100 (kit::exercise::TIMED_L2_BYTES), as
/// [`crate::perf_bytes`] gives them there.
pub fn timed_bytes() -> usize {
    (kit::exercise::timed_bandwidth_elements() * 4).min(u32::MAX as usize & !1023)
}

/// The timed launch of `kernel` (`private` or `coarse`) on `n` bytes, as the timing makes it.
fn timed_config(kernel: &str, n: usize) -> kit::LaunchConfig {
    if kernel == COARSE {
        coarse_config(n, kit::backend::sim::shown_gpu().multiprocessors * crate::COARSE_BLOCKS_PER_SM)
    } else {
        launch_config(n)
    }
}

/// Text-like bytes at the timed size, any stretch of them on its own
/// (kit::inputs::Words, one word a byte, through [`cpu::text_table`]).
#[derive(Clone)]
pub struct TimedBytes {
    words: kit::inputs::Words,
    table: std::sync::Arc<[u8]>,
}

impl TimedBytes {
    pub fn new(rng: &kit::inputs::ChaCha8Rng) -> Self {
        TimedBytes { words: kit::inputs::Words::new(rng), table: cpu::text_table().into() }
    }

    /// Bytes `first..first + out.len()`.
    pub fn fill(&self, first: usize, out: &mut [u8]) {
        let mut words = vec![0u32; out.len()];
        self.words.fill(first, &mut words);
        let shift = 32 - self.table.len().trailing_zeros();
        for (o, w) in out.iter_mut().zip(words) {
            *o = self.table[(w >> shift) as usize];
        }
    }

    /// The histogram of the bytes `at`.
    pub fn histogram(&self, at: &[std::ops::Range<usize>]) -> Vec<u32> {
        let (mut bins, mut piece) = (vec![0u32; cpu::BINS], Vec::new());
        for (start, len) in kit::measure::in_pieces(at) {
            piece.resize(len, 0);
            self.fill(start, &mut piece);
            piece.iter().for_each(|&b| bins[b as usize] += 1);
        }
        bins
    }
}

/// `kernel` (`private` or `coarse`) run once on the simulator at the timed
/// size ([`timed_bytes`]), [`timed_sampled_blocks`] of its blocks: the bytes
/// generated where they read them (kit::Gpu::upload_generated), and the bins
/// checked against the histogram of the bytes they read, whichever the kernel
/// gave them. Its `n` is the sampled blocks' share of the bytes.
pub fn measure_at_timed_size(ctx: &Ctx, kernel: &str) -> Result<Measured> {
    let n = timed_bytes();
    let cfg = timed_config(kernel, n);
    // Of the part, not the check: a part's checks judge one launch, simulated once.
    let blocks = timed_sampled_blocks(kernel);
    let sample = BlockSample::at_timed_size(&mut ctx.part_secret_rng("timed-size blocks"), cfg.grid.0 as u64, blocks);
    let bytes = TimedBytes::new(&ctx.part_rng_for("timed-size bytes"));
    let key = format!("ex10 {kernel} timed size, seed {}", ctx.env.seed);
    let m = kit::measure::measure_ptx_sampled_once(&ctx.build.ptx, kernel, &sample, &key, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into `data`.
        let data = gpu.unwatched(|| {
            let b = bytes.clone();
            gpu.upload_generated("data", n, move |first, out: &mut [u8]| b.fill(first, out))
        })?;
        let bins = gpu.zeros::<u32>("bins", cpu::BINS)?;
        module.launch(kernel, cfg, &args![&data, n as u32, &bins])?;
        let read = kit::measure::sampled_reads(&data)?;
        let what = format!(
            "the {} text-like bytes the sampled blocks read (of {n})",
            read.iter().map(|r| r.len()).sum::<usize>()
        );
        let right = cpu::compare(&what, n, &bytes.histogram(&read), &bins.read()?);
        kit::measure::require_right_result_at_timed_size(right, &format!("{n} bytes"), sample.blocks().len())
    })?;
    Ok(Measured { m, n: n * sample.blocks().len() / cfg.grid.0 as usize })
}

/// `judge` of `kernel` on its measured input, then on the timed one.
fn here_and_timed(ctx: &Ctx, kernel: &str, judge: impl Fn(&Measured) -> Result<String>) -> Result<String> {
    let measured = measure(ctx, kernel)?;
    let line = judge(&measured)?;
    let (n, (first, later)) = (timed_bytes(), timed_sampled_blocks(kernel));
    let note = kit::measure::judge_at_timed_size(
        (&format!("{n} bytes"), first + later, timed_config(kernel, n).grid.0 as u64),
        &format!("on {} bytes (the measured input) {line}", measured.n),
        || measure_at_timed_size(ctx, kernel),
        judge,
    )?;
    Ok(line + &note)
}

/// Sectors touched per lane's global load (see [`MAX_SECTORS_PER_LANE`]).
pub fn sectors_per_lane(m: &Measurement) -> f64 {
    let (sectors, lanes) =
        m.rows(|k| k == AccessKind::GlobalLoad).fold((0, 0), |(s, l), r| (s + r.sectors, l + r.thread_accesses));
    if lanes == 0 {
        0.0
    } else {
        sectors as f64 / lanes as f64
    }
}

/// The global load that touches the most sectors per lane.
fn widest_spread_load(m: &Measurement) -> Option<&kit::measure::InstrStats> {
    let per_lane = |r: &kit::measure::InstrStats| r.sectors as f64 / r.thread_accesses.max(1) as f64;
    m.rows(|k| k == AccessKind::GlobalLoad).max_by(|a, b| per_lane(a).total_cmp(&per_lane(b)))
}

/// What the report shows of a measurement of `n` bytes.
pub fn figures(m: &Measurement, n: usize) -> String {
    let n = n as f64;
    format!(
        "per byte: {:.3} global atomics, {:.3} shared atomics; at most {} global atomic(s) by one block on one bin; \
         {:.2} lanes contending per atomic; byte reads: {:.1} sectors per request, {:.3} per lane, {:.0}% of each \
         sector used ({} blocks, {} bytes)",
        m.stats.global_atomics as f64 / n,
        m.stats.shared_atomics as f64 / n,
        m.max_global_atomics_per_block_address(),
        m.atomic_contention(),
        m.load_sectors_per_request(),
        sectors_per_lane(m),
        100.0 * m.global_load_efficiency(),
        m.blocks(),
        n
    )
}

fn worst_atomic(m: &Measurement, kind: AccessKind) -> String {
    worst_at(m.rows(|k| k == kind).max_by_key(|r| r.thread_accesses))
}

/// `global`: exactly one global atomic per byte.
pub fn one_per_byte(Measured { m, n }: &Measured) -> Result<String> {
    let figures = |m: &Measurement| figures(m, *n);
    let n = *n as u64;
    let atomics = m.stats.global_atomics;
    if atomics > n {
        bail!(
            "{GLOBAL}: {atomics} global atomics for {n} bytes{}: more than one per byte. Each thread adds its own \
             byte once, `atomicAdd(&bins[data[i]], 1)`, and nothing else touches the bins. ({})",
            worst_atomic(m, AccessKind::GlobalAtomic),
            figures(m)
        );
    }
    if atomics < n {
        bail!(
            "{GLOBAL}: {atomics} global atomics for {n} bytes (one per byte expected){}: the bytes are counted \
             another way first. This part is the baseline the next two are timed against: one \
             `atomicAdd(&bins[data[i]], 1)` per byte on the global bins. Keep private bins in shared memory for \
             the `private` part ({})",
            if m.stats.shared_atomics > 0 { ", and shared atomics" } else { "" },
            figures(m)
        );
    }
    Ok(figures(m))
}

/// The structure check `one-atomic-per-byte` of `global`.
pub fn one_atomic_per_byte(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(measure(ctx, GLOBAL).and_then(|m| one_per_byte(&m)))
}

/// `private`, `coarse`: each block adds to each global bin at most once.
pub fn merged_once(Measured { m, n }: &Measured) -> Result<String> {
    let figures = |m: &Measurement| figures(m, *n);
    let shared = "Keep one copy of the counters per block, in `__shared__` memory, and count with shared atomics";
    m.require_little_local(*n as u64, "byte", MAX_LOCAL_BYTES_PER_BYTE, shared)
        .map_err(|e| anyhow!("{e} ({})", figures(m)))?;
    let most = m.max_global_atomics_per_block_address();
    if most > MAX_ATOMICS_PER_BLOCK_BIN {
        let every_byte = m.stats.global_atomics >= *n as u64;
        bail!(
            "{}: one block made {most} global atomics on one bin (at most {MAX_ATOMICS_PER_BLOCK_BIN}: the block's \
             count of that bin, added once){}. {} Count the block's bytes in `__shared__ unsigned int` bins \
             (zeroed by the block, then `__syncthreads()`), count with shared atomics, `__syncthreads()`, and \
             then let one thread per bin add the block's count: `atomicAdd(&bins[b], local[b])`. ({})",
            m.kernel,
            worst_atomic(m, AccessKind::GlobalAtomic),
            if every_byte {
                "Every byte still reaches the global bins with an atomic of its own, as in the `global` part: \
                 all the blocks of the grid contend for the few frequent bins."
            } else {
                "The private bins are added to the global ones more than once per bin."
            },
            figures(m)
        );
    }
    Ok(figures(m))
}

/// The structure check `merged-once-per-bin` of `private` and `coarse`.
pub fn merged_once_check(ctx: &Ctx, kernel: &str) -> Result<String> {
    unless_unmeasurable(here_and_timed(ctx, kernel, merged_once))
}

/// Stand-in for `private`'s timing: a kernel the simulator cannot run is not graded.
pub fn merged_once_stand_in(ctx: &Ctx, kernel: &str) -> Result<String> {
    here_and_timed(ctx, kernel, merged_once)
}

/// Bytes of the race diagnosis's input: nine blocks of text-like bytes (a few for `coarse`'s grid).
const RACE_N: usize = 9 * crate::THREADS as usize - 37;

/// A privatized kernel's race between counting and merging, in the
/// exercise's words: the kernel counts [`RACE_N`] text-like bytes on the
/// measuring simulator, whose race check pairs a plain read of a shared word
/// with another thread's atomic on it when no barrier orders the two. Where
/// its report pairs a shared atomic (the count) with a shared load (the
/// merge), the error names both lines and says where the barrier goes.
/// `None` when the report names no such pair (another race keeps the
/// simulator's own message), or the kernel cannot run.
pub fn merge_race(ctx: &Ctx, kernel: &str) -> Option<anyhow::Error> {
    let data = measured_bytes(&mut ctx.rng_for("warps race"), RACE_N);
    let blocks =
        if kernel == COARSE { crate::COARSE_TEST_BLOCKS } else { RACE_N.div_ceil(crate::THREADS as usize) as u32 };
    let report = std::cell::RefCell::new(None);
    let m = ctx
        .measure(kernel, |module| {
            let gpu = module.gpu();
            let (input, bins) = (gpu.upload("data", &data)?, gpu.zeros::<u32>("bins", cpu::BINS)?);
            let cfg = kit::LaunchConfig::linear(blocks, crate::THREADS);
            if let Err(e) = module.launch(kernel, cfg, &args![&input, RACE_N as u32, &bins]) {
                let Some(text) = shared_race(&e).map(str::to_string) else { return Err(e) };
                *report.borrow_mut() = Some(text);
            }
            Ok(())
        })
        .ok()?;
    let report = report.into_inner()?;
    let named = |r: &&kit::measure::InstrStats| names_ptx_line(&report, r.ptx_line);
    let count = m.rows(|k| k == AccessKind::SharedAtomic).find(named)?;
    let merge = m.rows(|k| k == AccessKind::SharedLoad).find(named)?;
    Some(anyhow!(BackendError::SharedRace(format!(
        "{kernel}: the warps of a block race on its shared bins: the merge at {} reads bins that other threads of \
         the block count into at {}, with no __syncthreads() between counting and merging (the simulator's race \
         check, on {RACE_N} text-like bytes). A warp that reaches the merge first adds a bin to the global ones \
         before the later warps of its block have counted into it, and their counts are lost. Add \
         __syncthreads() before the merge (after the counting loop), so that every warp has counted before any \
         thread reads the block's bins",
        kit::measure::at(merge),
        kit::measure::at(count),
    ))))
}

/// The text of a launch's shared-memory race, if that is what failed it.
pub fn shared_race(e: &anyhow::Error) -> Option<&str> {
    e.chain().find_map(|c| match c.downcast_ref::<BackendError>() {
        Some(BackendError::SharedRace(text)) => Some(text.as_str()),
        _ => None,
    })
}

/// `coarse`: the byte reads interleaved across the grid.
pub fn interleaved(Measured { m, n }: &Measured) -> Result<String> {
    let figures = |m: &Measurement| figures(m, *n);
    let per_lane = sectors_per_lane(m);
    if per_lane > MAX_SECTORS_PER_LANE {
        let per_thread = n / (m.blocks().max(1) as usize * crate::THREADS as usize);
        bail!(
            "{COARSE}: the reads of `data` touch {per_lane:.2} 32-byte sectors per lane (interleaved reads: 1/32 \
             for bytes, at most 1/2 for int4; at most {MAX_SECTORS_PER_LANE}), {:.1} sectors per request, {:.0}% \
             of each sector used{}: the lanes of a warp read bytes far apart, as when each thread counts a \
             contiguous chunk of its own (here {per_thread} bytes per thread). The result is right, but every \
             warp-wide read touches a sector per lane. Interleave: at each step the whole grid reads consecutive \
             bytes, i = blockIdx.x * blockDim.x + threadIdx.x, then i += blockDim.x * gridDim.x. ({})",
            m.load_sectors_per_request(),
            100.0 * m.global_load_efficiency(),
            worst_at(widest_spread_load(m)),
            figures(m)
        );
    }
    Ok(figures(m))
}

/// The structure check `interleaved-reads` of `coarse`.
pub fn interleaved_check(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(here_and_timed(ctx, COARSE, interleaved))
}

/// Stand-in for `coarse`'s timing: interleaved reads and one merge per bin,
/// what the grader's coarse kernel has.
pub fn interleaved_stand_in(ctx: &Ctx) -> Result<String> {
    here_and_timed(ctx, COARSE, |m| merged_once(m).and_then(|_| interleaved(m)))
}

#[cfg(test)]
mod tests {
    use crate::cpu::Bytes;
    use crate::COARSE;
    use kit::trial::{fails, passes, Run};

    const REF: &str = "reference/ex10-histogram/kernels";
    const SLOW: &str = "reference/slow/ex10-histogram/kernels";
    const MINE: &str = "exercises/ex10-histogram/calibration";

    /// The grader's kernels are only timed on a GPU; here they must compile,
    /// count right, and have the profile they stand for.
    #[test]
    fn the_yardsticks_count_right_with_their_profiles() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let source = ptx_build::SourceFile::from_text(
            "<grader>/histogram_patterns.cu",
            include_str!("../yardsticks/histogram_patterns.cu"),
        );
        let ptx = compiler.compile(&source, &ptx_build::CompileOptions::default()).unwrap().text;
        let n = super::MEASURE_N.end() + 7;
        let data = super::measured_bytes(&mut kit::inputs::rng_for(1, "t"), n);
        let run = |kernel: &str, cfg: kit::LaunchConfig| {
            kit::measure::measure_ptx(&ptx, kernel, |module| {
                let gpu = module.gpu();
                let input = gpu.upload("data", &data)?;
                let bins = gpu.zeros::<u32>("bins", 256)?;
                module.launch(kernel, cfg, &kit::args![&input, n as u32, &bins])?;
                crate::cpu::compare("t", n, &crate::cpu::histogram(&data), &bins.read()?)
            })
            .unwrap()
        };
        let global = run("global_pattern", crate::launch_config(n));
        assert_eq!(global.stats.global_atomics, n as u64);
        assert!(global.max_global_atomics_per_block_address() > 16);
        let coarse = run("coarse_pattern", crate::coarse_config(n, 3));
        assert_eq!(coarse.max_global_atomics_per_block_address(), 1);
        assert!(super::sectors_per_lane(&coarse) < 0.1, "{}", super::figures(&coarse, n));
    }

    #[test]
    fn one_atomic_per_byte_is_measured() {
        let ex = crate::exercise();
        for file in [format!("{REF}/histogram_global.cu"), format!("{MINE}/histogram_global_grid_stride.cu")] {
            passes(&ex, "global", "one-atomic-per-byte", Run::Check, &file);
        }
        // privatized in the baseline part
        if let Some(msg) =
            fails(&ex, "global", "one-atomic-per-byte", Run::Check, &format!("{MINE}/histogram_global_is_private.cu"))
        {
            assert!(msg.contains("(one per byte expected), and shared atomics"), "{msg}");
        }
    }

    #[test]
    fn one_merge_per_bin_is_measured_not_spelled() {
        let ex = crate::exercise();
        for file in [
            format!("{REF}/histogram_private.cu"),
            format!("{MINE}/histogram_private_warp_aggregated.cu"),
            format!("{MINE}/histogram_private_all_bins.cu"),
        ] {
            passes(&ex, "private", "merged-once-per-bin", Run::Check, &file);
            passes(&ex, "private", "faster-than-global-atomics", Run::StandIn, &file);
        }
        let slow = format!("{SLOW}/histogram_private.cu");
        if let Some(msg) = fails(&ex, "private", "merged-once-per-bin", Run::Check, &slow) {
            assert!(msg.contains("global atomics on one bin") && msg.contains("histogram_private.cu:"), "{msg}");
        }
        fails(&ex, "private", "faster-than-global-atomics", Run::StandIn, &slow);
        // one global atomic per byte under the private name
        let global = format!("{MINE}/histogram_private_is_global.cu");
        if let Some(msg) = fails(&ex, "private", "merged-once-per-bin", Run::Check, &global) {
            assert!(msg.contains("Every byte still reaches the global bins"), "{msg}");
        }
    }

    /// A merge before the block has counted loses counts: reported as the
    /// race it is (a shared-memory race, naming both lines), in `private` and
    /// in `coarse`; a kernel wrong for another reason is not called racy.
    #[test]
    fn a_merge_before_the_block_has_counted_is_a_race() {
        let variant =
            |case: &str, file: &str| kit::trial::variant_file(case, &format!("ex10-histogram/kernels/{file}"));
        for (kernel, file) in [
            (crate::PRIVATE, variant("ex10-private-no-sync-before-merge", "histogram_private.cu")),
            (crate::PRIVATE, variant("ex10-private-no-sync-before-merge-loop", "histogram_private.cu")),
            (crate::PRIVATE, variant("ex10-private-barrier-only-in-warp-0", "histogram_private.cu")),
            (COARSE, variant("ex10-coarse-no-sync-before-merge", "histogram_coarse.cu")),
        ] {
            kit::trial::on_sim(
                "ex10::x::correct::n=4099",
                &file,
                |t| t,
                |ctx| {
                    let e = crate::correct(ctx, kernel, 4099, Bytes::Text).expect_err("loses counts");
                    let race = super::shared_race(&e).is_some();
                    let msg = format!("{e:#}");
                    let lines = msg.contains("the merge at") && msg.contains("count into at");
                    assert!(race && lines && msg.contains("Add __syncthreads() before the merge"), "{file}: {msg}");
                },
            );
        }
        // Counted once per thread only: wrong with no race, and none named.
        let wrong = variant("ex10-coarse-one-byte-per-thread", "histogram_coarse.cu");
        kit::trial::on_sim(
            "ex10::x::correct::n=4099",
            &wrong,
            |t| t,
            |ctx| {
                let msg = format!("{:#}", crate::correct(ctx, COARSE, 4099, Bytes::Text).expect_err("wrong"));
                assert!(!msg.contains("race") && msg.contains("were not counted"), "{msg}");
            },
        );
    }

    #[test]
    fn interleaved_reads_are_measured_whatever_their_width() {
        let ex = crate::exercise();
        for file in [
            format!("{REF}/histogram_coarse.cu"),
            format!("{MINE}/histogram_coarse_uchar4.cu"),
            format!("{MINE}/histogram_coarse_int4.cu"),
        ] {
            passes(&ex, "coarse", "interleaved-reads", Run::Check, &file);
            passes(&ex, "coarse", "merged-once-per-bin", Run::Check, &file);
            passes(&ex, "coarse", "share-of-coarse", Run::StandIn, &file);
        }
        for file in [format!("{SLOW}/histogram_coarse.cu"), format!("{MINE}/histogram_coarse_chunked_int4.cu")] {
            if let Some(msg) = fails(&ex, "coarse", "interleaved-reads", Run::Check, &file) {
                assert!(msg.contains("contiguous chunk") && msg.contains("histogram_coarse"), "{msg}");
            }
            fails(&ex, "coarse", "share-of-coarse", Run::StandIn, &file);
        }
    }
}
