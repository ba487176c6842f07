//! Techniques graded by what they do to memory, not by how they are spelled.
//!
//! A structure check runs one of the student's kernels on a private ptx-sim
//! instance, on a small fixed input the exercise chooses, and judges the memory
//! profile: sectors per global request, bank-conflict passes per shared request,
//! divergent branches, global traffic per useful operation, constant-memory
//! reads, atomics. The simulator is deterministic, so the figures are the same on
//! every backend: with a GPU, on the simulator and with `--backend none`.
//!
//! A kernel that reaches the behaviour with another technique (a swizzled tile, a
//! warp-shuffle reduction) passes; one that declares the technique without its
//! effect (a padded tile it never uses) fails.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::ops::RangeInclusive;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use anyhow::{anyhow, bail, Context as _, Result};
pub use ptx_sim::{AccessKind, InstrStats, Stats};

use crate::backend::sim::SimBackend;
use crate::backend::BackendError;
use crate::exercise::Ctx;
use crate::gpu::{Gpu, Module};
use crate::skip::Skip;

mod sample;
pub use sample::{in_both, in_pieces, sampled_reads, sampled_writes, BlockSample, TIMED_SIZE_SAMPLE};

/// The simulator could not run the student's PTX (an instruction it does not
/// know, say): the behaviour is not measured here and the PTX checks judge alone.
#[derive(Debug, thiserror::Error)]
#[error("the simulator cannot run this kernel ({0})")]
pub struct Unmeasurable(pub String);

/// The memory behaviour of one kernel over the launches of one measurement.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub kernel: String,
    pub launches: u64,
    /// Totals and per-instruction rows, merged over the launches.
    pub stats: Stats,
    /// The first of its launches' barriers released while threads of the
    /// block had exited without reaching it ([`require_every_thread_at_barriers`]).
    pub barrier_after_exit: Option<ptx_sim::BarrierAfterExit>,
}

impl Ctx<'_> {
    /// Runs `run` (which uploads a small fixed input and launches `kernel`) on a
    /// private simulator and returns `kernel`'s memory behaviour.
    pub fn measure(&self, kernel: &str, run: impl Fn(&Module) -> Result<()>) -> Result<Measurement> {
        self.kernel_ptx(kernel)?; // explains a missing or misspelled kernel
        measure_ptx(&self.build.ptx, kernel, run)
    }

    /// [`Ctx::measure`] for several kernels launched by one `run` (a sequence
    /// of launches, such as a hierarchical scan's): each kernel's behaviour, in
    /// the order of `kernels`, from one simulated run.
    pub fn measure_each(&self, kernels: &[&str], run: impl Fn(&Module) -> Result<()>) -> Result<Vec<Measurement>> {
        for kernel in kernels {
            self.kernel_ptx(kernel)?;
        }
        measure_ptx_each(&self.build.ptx, kernels, run)
    }
}

/// Sizes a measured check runs on, so that no kernel can single out the
/// measured launch by its shape: `range` (the whole range the correctness
/// checks test on the simulator, in the exercise's unit: elements, blocks,
/// sections) is cut into `count` strata of equal ratio (a log scale: 2..=1024
/// in three gives 2..=16, 17..=128, 129..=1024), and one size is drawn
/// uniformly from each, by the run's secret ([`Ctx::secret_rng`]), not its
/// seed. A check asks every size to pass (the worst case over them): a kernel
/// that takes the lesson's path only in some band of sizes is measured outside
/// it, and one that takes it only at sizes it could predict cannot predict
/// these. Ascending; `count` at least 1.
pub fn sizes_across(ctx: &Ctx, what: &str, range: RangeInclusive<usize>, count: usize) -> Vec<usize> {
    use rand::Rng;
    let mut rng = ctx.secret_rng(&format!("measured sizes/{what}"));
    strata(range, count).into_iter().map(|s| rng.random_range(s)).collect()
}

/// `judge(size)` on every one of `sizes` ([`sizes_across`]), the worst case:
/// the first failure, named with its size (`unit` says it in words: "4096
/// start positions"), or the last note and the sizes that all passed.
pub fn on_every_size(
    sizes: &[usize],
    unit: impl Fn(usize) -> String,
    mut judge: impl FnMut(usize) -> Result<String>,
) -> Result<String> {
    let mut note = String::new();
    for &size in sizes {
        note = judge(size).with_context(|| format!("measured on {}", unit(size)))?;
    }
    let all: Vec<String> = sizes.iter().map(|&s| unit(s)).collect();
    Ok(format!("{note} (measured on {}: each passes)", all.join("; ")))
}

/// The strata of [`sizes_across`]: `count` ranges that cover `range` with no
/// gap, each `(hi / lo)^(1 / count)` times as long as the one before.
pub fn strata(range: RangeInclusive<usize>, count: usize) -> Vec<RangeInclusive<usize>> {
    let (lo, hi) = (*range.start().max(&1), *range.end());
    assert!(lo <= hi && count >= 1, "strata of {range:?}");
    let ratio = (hi as f64 / lo as f64).powf(1.0 / count as f64);
    let mut start = lo;
    let mut out = Vec::with_capacity(count);
    for i in 1..=count {
        let end = if i == count { hi } else { ((lo as f64 * ratio.powi(i as i32)).round() as usize).clamp(start, hi) };
        out.push(start..=end);
        start = (end + 1).min(hi);
    }
    out
}

/// Blocks of a [`slices_of_four`] launch, drawn from the seed: fewer than an
/// exercise's grid would have for the input (a grid-stride loop works with
/// any grid), so that each thread has several elements while the simulator
/// runs a small input, and a kernel that never finishes (or prints in a loop)
/// is stopped as soon as before.
pub const SLICE_BLOCKS: RangeInclusive<u32> = 24..=40;

/// A measured launch's grid and length for a kernel that may loop over its
/// input, drawn from `ctx`'s seed: blocks from [`SLICE_BLOCKS`], three
/// elements per thread of the grid, then one more and a seeded number of
/// whole warps' worth (128 elements) that have a fourth. Whatever the draw, a
/// thread's contiguous slice is four elements long and fills whole warps (16
/// sectors per warp request for 4-byte elements, where a grid-stride loop
/// touches 4), and n is not a multiple of the block.
pub fn slices_of_four(ctx: &Ctx, threads_per_block: u32) -> (u32, usize) {
    use rand::Rng;
    let mut rng = ctx.rng_for("measured shape");
    let blocks = rng.random_range(SLICE_BLOCKS);
    let threads = (blocks * threads_per_block) as usize;
    (blocks, 3 * threads + 1 + 128 * rng.random_range(0..=blocks as usize))
}

/// The extremes of what [`slices_of_four`] draws: the fewest and the most
/// blocks, each with no whole warp of fourth elements and with the most.
pub fn slices_of_four_extremes(threads_per_block: u32) -> [(u32, usize); 4] {
    let (lo, hi) = (*SLICE_BLOCKS.start(), *SLICE_BLOCKS.end());
    let n = |blocks: u32, warps: u32| 3 * (blocks * threads_per_block) as usize + 1 + 128 * warps as usize;
    [(lo, n(lo, 0)), (lo, n(lo, lo)), (hi, n(hi, 0)), (hi, n(hi, hi))]
}

/// Warp instructions one measured launch may execute: the measured inputs need
/// at most a few hundred thousand, and a kernel that never finishes must not
/// hold up a run (about a second of CPU).
pub const MEASURE_MAX_STEPS: u64 = 5_000_000;

/// [`Ctx::measure`] on a module's PTX text. The measurement's figures go into
/// the running check's record (the grades JSON's `tests[].measured`).
pub fn measure_ptx(ptx: &str, kernel: &str, run: impl Fn(&Module) -> Result<()>) -> Result<Measurement> {
    Ok(measure_ptx_each(ptx, &[kernel], run)?.remove(0))
}

/// [`measure_ptx`] of a launch too large to simulate whole: on the simulator
/// only `sample`'s blocks run (`run` checks the result there only); on a GPU
/// whose counters are read, the whole launch. Figures per block, request or
/// lane mean the same; totals are the sample's ([`Stats::blocks`] counts it).
pub fn measure_ptx_sampled(
    ptx: &str,
    kernel: &str,
    sample: &BlockSample,
    run: impl Fn(&Module) -> Result<()>,
) -> Result<Measurement> {
    let measure = || measure_now(ptx, &[kernel], Some(sample), run);
    Ok(crate::stats::timed(crate::stats::Counter::SimMeasure, measure)?.remove(0))
}

/// [`measure_ptx_sampled`], remembered in this process under `key` (which
/// names what `run` does besides the PTX, the kernel and the sample: its
/// inputs' seed and stream, [`Ctx::part_rng_for`]): checks of a part that
/// judge one launch on different figures (ex10 `coarse`'s merged-once and
/// interleaved-reads at the timed size, about 0.3 s each on the simulator)
/// simulate it once, and each records its figures. Failures are not
/// remembered (each check gets its own), nor anything where the GPU's
/// counters are read (each measurement there has counters of its own).
pub fn measure_ptx_sampled_once(
    ptx: &str,
    kernel: &str,
    sample: &BlockSample,
    key: &str,
    run: impl Fn(&Module) -> Result<()>,
) -> Result<Measurement> {
    type Memo = Mutex<HashMap<u64, Measurement>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    if crate::counters::in_play() {
        return measure_ptx_sampled(ptx, kernel, sample, run);
    }
    let id = {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (ptx, kernel, sample.blocks(), key).hash(&mut h);
        h.finish()
    };
    let memo = MEMO.get_or_init(Memo::default);
    if let Some(m) = memo.lock().unwrap_or_else(|p| p.into_inner()).get(&id).cloned() {
        let profile = m.profile();
        crate::record::with(|r| r.measured.push(profile));
        return Ok(m);
    }
    let m = measure_ptx_sampled(ptx, kernel, sample, run)?;
    let mut memo = memo.lock().unwrap_or_else(|p| p.into_inner());
    // A batch's students each bring their own PTX: keep the newest few.
    if memo.len() >= 64 {
        memo.clear();
    }
    memo.insert(id, m.clone());
    Ok(m)
}

/// [`measure_ptx`] for each of `kernels`, from one run.
pub fn measure_ptx_each(ptx: &str, kernels: &[&str], run: impl Fn(&Module) -> Result<()>) -> Result<Vec<Measurement>> {
    // The batch's `sim_measure` bucket (kit::stats).
    crate::stats::timed(crate::stats::Counter::SimMeasure, || measure_now(ptx, kernels, None, run))
}

fn measure_now(
    ptx: &str,
    kernels: &[&str],
    sample: Option<&BlockSample>,
    run: impl Fn(&Module) -> Result<()>,
) -> Result<Vec<Measurement>> {
    let keys = crate::counters::keys_here(kernels);
    if let Some(why) = keys.as_ref().and_then(|k| k.first()).and_then(|k| crate::counters::stuck_for(&k.check)) {
        bail!(why);
    }
    if let (Some(keys), true) = (&keys, crate::counters::collecting()) {
        crate::counters::collect(keys.clone(), ptx, &run);
    }
    let (mut backend, log) = SimBackend::recording(MEASURE_MAX_STEPS);
    if let Some(sample) = sample {
        backend = backend.only_blocks(sample.shared());
    }
    let gpu = Gpu::new(Box::new(backend), Duration::MAX);
    let module = gpu.load(ptx).map_err(unmeasurable)?;
    let names = kernels.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(" and ");
    run(&module)
        .with_context(|| format!("running {names} on the simulator to measure its memory accesses"))
        .map_err(unmeasurable)?;
    let mut log = log.lock().unwrap();
    let runs: Vec<Stats> = log.stats.drain(..).collect();
    let barriers: Vec<_> = log.barriers_after_exit.drain(..).collect();
    drop(log);
    let mut measured = Vec::with_capacity(kernels.len());
    for (i, &kernel) in kernels.iter().enumerate() {
        let mut stats = Stats { kernel: kernel.to_string(), ..Stats::default() };
        let mut launches = 0;
        for s in runs.iter().filter(|s| s.kernel == kernel) {
            stats.merge(s);
            launches += 1;
        }
        let barrier_after_exit = barriers.iter().find(|b| b.kernel == kernel).cloned();
        let mut m = Measurement { kernel: kernel.to_string(), launches, stats, barrier_after_exit };
        let mut profile = m.profile();
        // Where the GPU's counters were read for this measurement, they grade what
        // they count; the simulator's figures stay beside them in the record.
        if let Some(gpu) = keys.as_ref().and_then(|k| crate::counters::for_key(&k[i])) {
            // The GPU ran the whole launch, the simulator a sample of its blocks.
            let gpu = sample.map_or(gpu.clone(), |s| gpu.scaled(s.share()));
            m.stats = gpu.overlay(&m.stats);
            profile.gpu = Some(gpu);
        }
        crate::record::with(|r| r.measured.push(profile));
        measured.push(m);
    }
    Ok(measured)
}

/// An error that says the simulator cannot run the PTX (it does not parse, or
/// it holds an instruction the simulator lacks, named) becomes [`Unmeasurable`]:
/// no fault of the kernel, and the PTX or the timing judges instead.
fn unmeasurable(e: anyhow::Error) -> anyhow::Error {
    let why = e.chain().find_map(|c| match c.downcast_ref::<BackendError>() {
        Some(BackendError::LoadFailed(why)) => Some(why.clone()),
        Some(BackendError::NotSimulated(what)) => Some(format!("it lacks {what}")),
        _ => None,
    });
    match why {
        Some(why) => anyhow!(Unmeasurable(why)),
        None => e,
    }
}

/// Every thread of a block reaches each `__syncthreads()` the kernel's
/// measured launches released: a thread that returns before a barrier leaves
/// it undefined (the PTX ISA; the CUDA guide allows `__syncthreads()` in
/// conditional code only where the whole block takes the same path). A GPU
/// releases such a barrier, so correctness cannot show it: the structure
/// check that asks for the barrier fails, naming the `return` and the barrier.
pub fn require_every_thread_at_barriers(m: &Measurement) -> Result<()> {
    match &m.barrier_after_exit {
        Some(b) => Err(anyhow!(crate::backend::sim::barrier_after_exit_text(b))),
        None => Ok(()),
    }
}

/// The measured run's result must be right: a kernel that does nothing has an
/// ideal memory profile, so the technique is judged only on a kernel that works.
pub fn require_right_result(result: Result<()>) -> Result<()> {
    result.map_err(|e| {
        e.context(
            "on the small fixed input the structure is measured on, the kernel's result is wrong, so its memory \
             behaviour says nothing yet; make the correctness tests pass first",
        )
    })
}

/// A measured run at the size the kernel is timed at wrote a wrong result: the
/// verdict of a timed launch's wrong output (`wrong-when-timed`), which fails
/// the part's correctness, found on the simulator as on a GPU.
#[derive(Debug, thiserror::Error)]
#[error(
    "wrong when timed: at the size the kernel is timed at ({size}; {blocks} of its blocks on the simulator) it \
     wrote a wrong result: {what}. The correctness checks are smaller: does the kernel do something else at this \
     size (a size or a grid it special-cases)? A wrong output is wrong at any size: this part's correctness fails \
     with it, as a correctness check's would"
)]
pub struct WrongAtTimedSize {
    pub size: String,
    pub blocks: usize,
    pub what: String,
}

/// `judge` of the measurement `measure` makes at the size a kernel is timed
/// at (`timed`, as "8192x6400"; `blocks` of its `of` blocks on the
/// simulator, [`BlockSample`]), after the measured shapes passed with
/// `measured` (as "at 304x256 (the measured shape) 4.0 sectors …"). A kernel
/// that tells the measured shapes from the timed launch by its grid or sizes
/// shows its timed path there; the failure names both sizes. What to add to
/// the check's line: nothing, or where the sampled blocks ran past the
/// simulator's step limit ([`MEASURE_MAX_STEPS`]: one block that does all the
/// work, as the slow one-block kernels do, is a legitimate kernel there), why
/// the timed size was not measured: the measured shapes judge alone then, as
/// before the timed size was measured, and the timed launch on a GPU judges
/// its time.
pub fn judge_at_timed_size<M>(
    (timed, blocks, of): (&str, usize, u64),
    measured: &str,
    measure: impl FnOnce() -> Result<M>,
    judge: impl FnOnce(&M) -> Result<String>,
) -> Result<String> {
    let at = format!("at {timed} (the timed size: {blocks} of its {of} blocks on the simulator)");
    let m = match measure() {
        Err(e) if matches!(e.downcast_ref::<BackendError>(), Some(BackendError::Timeout(_))) => {
            return Ok(format!(" (not measured {at}: {e}; judged on the measured sizes alone)"));
        }
        m => m.with_context(|| at.clone())?,
    };
    judge(&m).map(|_| String::new()).with_context(|| format!("{at}, though {measured}"))
}

/// [`require_right_result`] of a measured run at the timed size (`size`, of
/// which `blocks` ran): a wrong result there is [`WrongAtTimedSize`].
pub fn require_right_result_at_timed_size(result: Result<()>, size: &str, blocks: usize) -> Result<()> {
    result.map_err(|e| WrongAtTimedSize { size: size.to_string(), blocks, what: format!("{e:#}") }.into())
}

/// A measured check's result where the simulator cannot run the kernel: the
/// PTX checks (already passed) judge alone, and the note says so.
pub fn unless_unmeasurable(result: Result<String>) -> Result<String> {
    match result {
        // The simulator's own words, also where a context names the measured size.
        Err(e) if e.downcast_ref::<Unmeasurable>().is_some() => {
            let why = e.downcast_ref::<Unmeasurable>().expect("just matched");
            Ok(format!("{why}: judged by the PTX only, not by measured memory behaviour"))
        }
        other => other,
    }
}

/// A stand-in's result where the simulator cannot run the kernel: not graded
/// here (a [`Skip`]), since there is nothing measured to stand in with.
pub fn skip_unmeasurable(result: Result<String>) -> Result<String> {
    match result {
        Err(e) if e.downcast_ref::<Unmeasurable>().is_some() => {
            let why = e.downcast_ref::<Unmeasurable>().expect("just matched");
            Err(Skip(format!("{why}: no measured stand-in")).into())
        }
        other => other,
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn is_shared(k: AccessKind) -> bool {
    matches!(k, AccessKind::SharedLoad | AccessKind::SharedStore)
}

impl Measurement {
    /// The figures a report keeps (the grades JSON's `measured`), as a simulated run's profile.
    pub fn profile(&self) -> crate::profile::MemoryProfile {
        crate::profile::MemoryProfile::of_stats(&self.kernel, self.launches, &self.stats)
    }
    /// 32-byte sectors per warp-level global load; 4 when a warp reads 32 consecutive floats.
    pub fn load_sectors_per_request(&self) -> f64 {
        self.stats.global_load_sectors_per_request()
    }
    pub fn store_sectors_per_request(&self) -> f64 {
        self.stats.global_store_sectors_per_request()
    }
    pub fn shared_requests(&self) -> u64 {
        self.stats.shared_load_requests + self.stats.shared_store_requests
    }
    /// Passes of the shared-memory unit per warp-level shared load or store:
    /// 1 without bank conflicts, up to 32 when every lane hits the same bank.
    pub fn shared_passes_per_request(&self) -> f64 {
        let wavefronts = self.stats.shared_load_wavefronts + self.stats.shared_store_wavefronts;
        ratio(wavefronts, self.shared_requests())
    }
    /// Thread-level global loads (accesses of active lanes), however they are
    /// spelled: generic loads whose lanes reached global memory count too, so a
    /// kernel compiled by clang (which turns `c ? tile[i] : in[i]` into one
    /// generic load) is measured as the same kernel compiled by NVRTC.
    pub fn thread_global_loads(&self) -> u64 {
        self.stats.global_load_lanes
    }
    pub fn thread_shared_loads(&self) -> u64 {
        self.rows(|k| k == AccessKind::SharedLoad).map(|r| r.thread_accesses).sum()
    }
    /// Warp-level shared loads in 4-byte words: an `ld.shared.v4.f32` counts
    /// four, as the four scalar loads a compiler may merge into it, so that
    /// the figure does not depend on the compiler. The simulator's PTX
    /// decides, or the GPU's count where its counters were read and count
    /// more: they count SASS instructions, in which ptxas merges a thread's
    /// walk over consecutive floats into 128-bit loads, so for the same
    /// kernel they count fewer (a quarter there), and more only for a kernel
    /// that does more on the GPU than on the simulator.
    pub fn shared_load_words(&self) -> u64 {
        let simulated: u64 = self
            .rows(|k| k == AccessKind::SharedLoad)
            .map(|r| r.executions * (access_bytes(&r.instruction) / 4).max(1) as u64)
            .sum();
        simulated.max(self.stats.shared_load_requests)
    }
    pub fn thread_shared_stores(&self) -> u64 {
        self.rows(|k| k == AccessKind::SharedStore).map(|r| r.thread_accesses).sum()
    }
    /// Active lanes per warp-level shared access: 32 when whole warps work.
    /// Both counts are the simulator's rows: where the GPU's counters were
    /// read, `shared_requests` is the GPU's count of SASS instructions, in
    /// which ptxas may have merged loads, and no GPU counter has the lanes.
    pub fn shared_lanes_per_request(&self) -> f64 {
        let (lanes, requests) =
            self.rows(is_shared).fold((0, 0), |(l, q), r| (l + r.thread_accesses, q + r.executions));
        ratio(lanes, requests)
    }
    /// Constant-cache passes per warp-level constant load: 1 when every load is a
    /// broadcast (all lanes read one address), up to 32.
    pub fn const_passes_per_request(&self) -> f64 {
        ratio(self.stats.const_load_passes, self.stats.const_load_requests)
    }
    /// Active lanes per warp-level global load: 32 when whole warps load together.
    pub fn global_lanes_per_load(&self) -> f64 {
        ratio(self.thread_global_loads(), self.stats.global_load_requests)
    }
    /// Bytes the threads moved to and from local memory (a per-thread array
    /// the compiler could not keep in registers, or spilled registers).
    pub fn local_bytes(&self) -> u64 {
        self.stats.local_load_bytes + self.stats.local_store_bytes
    }
    /// Where the per-thread arrays are read or written: the local loads and
    /// stores with the most thread accesses, at most `most` of them
    /// (`kernels/x.cu:12 (`ld.local.u32`)`).
    pub fn local_accesses(&self, most: usize) -> Vec<String> {
        let mut rows: Vec<&InstrStats> =
            self.rows(|k| matches!(k, AccessKind::LocalLoad | AccessKind::LocalStore)).collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.thread_accesses));
        let mut places: Vec<String> = Vec::new();
        for place in rows.into_iter().map(at) {
            if places.len() < most && !places.contains(&place) {
                places.push(place);
            }
        }
        places
    }
    /// Fails when the kernel moved more than `max_per_item` bytes of local
    /// memory per `item` of its input (`items` of them): data a lesson wants in
    /// registers or shared memory kept in an array of each thread's own, which
    /// the compiler puts in local memory (device memory, one copy per thread)
    /// when it cannot keep it in registers. `instead` says where it belongs.
    pub fn require_little_local(&self, items: u64, item: &str, max_per_item: f64, instead: &str) -> Result<()> {
        let bytes = self.local_bytes();
        let per = bytes as f64 / items.max(1) as f64;
        if per <= max_per_item {
            return Ok(());
        }
        let places = self.local_accesses(3);
        let place = if places.is_empty() { String::new() } else { format!(", at {}", places.join(", ")) };
        Err(anyhow!(
            "{}: {bytes} bytes of local memory loaded and stored for {items} {item}s ({per:.1} per {item}, at most \
             {max_per_item}){place}: an array each thread keeps of its own lives in local memory, one copy per \
             thread in device memory, when the compiler cannot keep it in registers (an index it cannot resolve at \
             compile time, or too many elements). {instead}",
            self.kernel
        ))
    }
    pub fn thread_const_loads(&self) -> u64 {
        self.rows(|k| k == AccessKind::ConstLoad).map(|r| r.thread_accesses).sum()
    }

    /// Blocks that ran, over the launches.
    pub fn blocks(&self) -> u64 {
        self.stats.blocks
    }
    /// The most global atomics any one block made to one address: 1 for a
    /// privatized histogram merged once per bin per block, as many as a
    /// block's bytes of that value for one global atomic per byte.
    ///
    /// ```no_run
    /// # fn check(m: kit::measure::Measurement) -> anyhow::Result<()> {
    /// kit::exercise::require(m.max_global_atomics_per_block_address() <= 1, || {
    ///     format!("{} global atomics on one bin from one block: merge the block's private copy once per bin",
    ///         m.max_global_atomics_per_block_address())
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn max_global_atomics_per_block_address(&self) -> u64 {
        self.stats.max_global_atomics_per_block_address
    }
    /// Distinct (block, address) pairs that got a global atomic, summed over
    /// blocks: at most 256 per block for a histogram of 256 bins merged once.
    pub fn global_atomic_block_addresses(&self) -> u64 {
        self.stats.global_atomic_block_addresses
    }
    /// The most global (shared) atomics one block performed.
    pub fn max_block_global_atomics(&self) -> u64 {
        self.stats.max_block_global_atomics
    }
    pub fn max_block_shared_atomics(&self) -> u64 {
        self.stats.max_block_shared_atomics
    }
    /// Contention: per warp-level atomic (global and shared), the lanes whose
    /// address another lane of the same instruction also hit, which the
    /// hardware serves one after another. 0 when every lane's address differs;
    /// 31 when a whole warp adds to one counter.
    pub fn atomic_contention(&self) -> f64 {
        ratio(self.stats.atomic_same_address_lanes, self.stats.atomic_requests)
    }
    /// The most lanes of one warp-level atomic on one address (32: a whole warp on one counter).
    pub fn max_lanes_per_atomic_address(&self) -> u32 {
        self.stats.max_lanes_per_atomic_address
    }
    /// Thread-level additions of values loaded from memory or computed from
    /// them (not index arithmetic): the work of a scan or a reduction, however
    /// it is written (shared memory, registers, shuffles). Divide by the
    /// elements for additions per element: a Kogge-Stone scan of a 1024-element
    /// section makes about 9 per element, a Brent-Kung one fewer than 2.
    ///
    /// ```no_run
    /// # fn check(m: kit::measure::Measurement, n: usize) -> anyhow::Result<()> {
    /// let per_element = m.data_additions() as f64 / n as f64;
    /// kit::exercise::require(per_element <= 3.0, || {
    ///     format!("{per_element:.1} additions per element: a work-efficient scan makes fewer than 2")
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn data_additions(&self) -> u64 {
        self.stats.data_additions
    }

    /// Bytes the active lanes asked for per byte of the 32-byte sectors their
    /// global loads touched: 1.0 when every warp reads consecutive elements
    /// (whatever their width: `float`, `float4`), 0.25 when each lane reads a
    /// `float` 16 bytes from its neighbour's (threads summing contiguous
    /// slices of four elements), 1/8 or less when lanes are a sector apart.
    /// 1.0 when there are no global loads.
    pub fn global_load_efficiency(&self) -> f64 {
        let touched = self.stats.global_load_sectors * 32;
        if touched == 0 {
            1.0
        } else {
            self.stats.global_load_bytes as f64 / touched as f64
        }
    }
    /// 32-byte sectors the global loads touch per active lane: 1/8 when warps
    /// read consecutive floats, up to 1 when every lane reads a sector of its
    /// own. Per lane, not per request: where the lanes of a loop drift an
    /// iteration apart (clang's code for a branch in the loop), a warp's
    /// element is loaded by two requests of a few lanes each, and the figure
    /// stays that of the loop's addresses.
    pub fn global_load_sectors_per_lane(&self) -> f64 {
        ratio(self.stats.global_load_sectors, self.stats.global_load_lanes)
    }

    /// The global loads that read the buffer of `bytes` bytes at `start` (a
    /// `DeviceBuffer`'s `ptr()` and `bytes()`): each load instruction is told
    /// by the addresses of the widest warp the simulator sampled for it, so
    /// that a kernel's loads of one input (the window it copies) are measured
    /// apart from its loads of another (a sequence every lane reads at once).
    pub fn global_loads_from(&self, start: crate::backend::DevPtr, bytes: usize) -> Loads<'_> {
        let end = start + bytes as u64;
        let reads = |r: &InstrStats| {
            r.first_warp.as_ref().is_some_and(|w| w.lanes.iter().flatten().any(|&a| a >= start && a < end))
        };
        let loads = self.rows(|k| matches!(k, AccessKind::GlobalLoad | AccessKind::GenericLoad)).filter(|r| reads(r));
        Loads::of(loads)
    }

    /// The global load that wastes the most of the sectors it touches.
    pub fn least_efficient_global_load(&self) -> Option<&InstrStats> {
        let efficiency =
            |r: &InstrStats| ratio(r.thread_accesses * access_bytes(&r.instruction) as u64, r.sectors * 32);
        self.rows(|k| k == AccessKind::GlobalLoad).min_by(|a, b| efficiency(a).total_cmp(&efficiency(b)))
    }

    /// The executed rows of one kind of access.
    pub fn rows(&self, kind: impl Fn(AccessKind) -> bool) -> impl Iterator<Item = &InstrStats> {
        self.stats.per_instruction.iter().filter(move |r| kind(r.kind) && r.executions > 0)
    }

    /// The global load (or store) with the most sectors per request, and where it is.
    pub fn worst_global(&self, kind: AccessKind) -> Option<&InstrStats> {
        self.rows(|k| k == kind).max_by(|a, b| a.sectors_per_request().total_cmp(&b.sectors_per_request()))
    }
    /// The shared access with the most passes per request.
    pub fn worst_shared(&self) -> Option<&InstrStats> {
        self.rows(is_shared)
            .max_by(|a, b| ratio(a.wavefronts, a.executions).total_cmp(&ratio(b.wavefronts, b.executions)))
    }
    /// The global load with the fewest active lanes per request (a few threads loading alone).
    pub fn narrowest_global_load(&self) -> Option<&InstrStats> {
        self.rows(|k| k == AccessKind::GlobalLoad)
            .min_by(|a, b| ratio(a.thread_accesses, a.executions).total_cmp(&ratio(b.thread_accesses, b.executions)))
    }
    /// The branch that diverged most often.
    pub fn worst_branch(&self) -> Option<&InstrStats> {
        self.rows(|k| k == AccessKind::Branch).max_by_key(|r| r.divergent)
    }
}

/// What a set of global load instructions moved: warp-level requests, active
/// lanes and the bytes those lanes asked for (a `uchar4` lane asks for 4, a
/// `float4` lane 16), and the narrowest of them.
#[derive(Debug, Clone, Default)]
pub struct Loads<'a> {
    pub requests: u64,
    pub lanes: u64,
    pub bytes: u64,
    /// The load with the fewest bytes per request.
    pub narrowest: Option<&'a InstrStats>,
}

impl<'a> Loads<'a> {
    /// The sum over `rows`; a row's bytes per lane come from its sampled warp
    /// (the simulator's own count), else from its spelling ([`access_bytes`]).
    pub fn of(rows: impl IntoIterator<Item = &'a InstrStats>) -> Self {
        let mut loads = Loads::default();
        let mut narrowest = f64::INFINITY;
        for r in rows {
            let width = r.first_warp.as_ref().map(|w| w.bytes as u64).unwrap_or(access_bytes(&r.instruction) as u64);
            let bytes = r.thread_accesses * width;
            loads.requests += r.executions;
            loads.lanes += r.thread_accesses;
            loads.bytes += bytes;
            if ratio(bytes, r.executions) < narrowest {
                narrowest = ratio(bytes, r.executions);
                loads.narrowest = Some(r);
            }
        }
        loads
    }
    /// Bytes asked for per warp-level request: 32 for a warp of byte loads, 128
    /// for a warp of `uchar4` (or `float`) loads; 1 for a thread copying bytes alone.
    pub fn bytes_per_request(&self) -> f64 {
        ratio(self.bytes, self.requests)
    }
    /// Active lanes per warp-level request: 32 when whole warps load together.
    pub fn lanes_per_request(&self) -> f64 {
        ratio(self.lanes, self.requests)
    }
    /// Bytes each active lane asked for per load: 1 for bytes, 4 for `uchar4`.
    pub fn bytes_per_lane(&self) -> f64 {
        ratio(self.bytes, self.lanes)
    }
}

/// The loads that fill a shared tile are coalesced: no global load touches
/// more than `limits.0` sectors per warp request and `limits.1` per active
/// lane at once. A tile filled down its columns, or in a contiguous chunk per
/// thread, does both: consecutive threads far apart, every lane paying for a
/// sector of its own or half of one. Either figure alone misreads a correct
/// fill: a narrow tile (16 x 4) filled along its short rows touches 8 to 11
/// sectors per request, shared by four lanes each; a tile one element deep
/// touches a sector per lane, but with 2 lanes a request. `coalesced` says
/// what a coalesced fill gives (for the message), `change` what to write.
pub fn require_coalesced_fill(m: &Measurement, limits: (f64, f64), coalesced: &str, change: &str) -> Result<()> {
    let per_lane = |r: &InstrStats| ratio(r.sectors, r.thread_accesses);
    let scattered = |r: &&InstrStats| r.sectors_per_request() > limits.0 && per_lane(r) > limits.1;
    let worst = m.rows(|k| k == AccessKind::GlobalLoad).filter(scattered);
    let Some(worst) = worst.max_by(|a, b| a.sectors_per_request().total_cmp(&b.sectors_per_request())) else {
        return Ok(());
    };
    Err(anyhow!(
        "{}: the global load at {} touches {:.1} sectors per warp request, {:.2} per lane (a coalesced fill: \
         {coalesced}; at most {} per request or {} per lane): consecutive threads read addresses far apart, so \
         every request fetches many sectors for a few bytes each. {change}",
        m.kernel,
        at(worst),
        worst.sectors_per_request(),
        per_lane(worst),
        limits.0,
        limits.1
    ))
}

/// Bytes one lane moves with a PTX memory instruction such as
/// `ld.global.nc.v4.f32` (16) or `ld.global.u8` (1); 4 when the type is not
/// spelled in a way this knows.
pub fn access_bytes(instruction: &str) -> usize {
    let mut lanes = 1;
    let mut width = 4;
    for part in instruction.split('.') {
        match part {
            "v2" => lanes = 2,
            "v4" => lanes = 4,
            "v8" => lanes = 8,
            "b8" | "u8" | "s8" => width = 1,
            "b16" | "u16" | "s16" | "f16" | "bf16" => width = 2,
            "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" => width = 4,
            "b64" | "u64" | "s64" | "f64" => width = 8,
            "b128" => width = 16,
            _ => {}
        }
    }
    lanes * width
}

/// Where an instruction is, for a message: "kernels/x.cu:12" when the PTX has
/// line info, else its PTX line.
pub fn at(row: &InstrStats) -> String {
    match &row.source {
        Some(s) => format!("{} (`{}`)", crate::backend::sim::relative_source(s), row.instruction),
        None => format!("PTX line {} (`{}`)", row.ptx_line, row.instruction),
    }
}

/// ", worst at kernels/x.cu:12 (`ld.global.f32`)", or nothing.
pub fn worst_at(row: Option<&InstrStats>) -> String {
    row.map(|r| format!(", worst at {}", at(r))).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args;
    use crate::backend::LaunchConfig;

    /// A copy kernel `$name(p_in, p_out)` with `$rd` 64-bit registers, both
    /// pointers loaded into %rd1 and %rd2; `$body` follows.
    macro_rules! copy_kernel {
        ($name:literal, $rd:literal, $body:literal) => {
            concat!(
                ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry ",
                $name,
                "(.param .u64 p_in, .param .u64 p_out)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<",
                $rd,
                ">;\n\t.reg .f32 %f<2>;\n\tld.param.u64 %rd1, [p_in];\n\tld.param.u64 %rd2, [p_out];\n",
                $body
            )
        };
    }

    /// Column-wise copy: lane i reads row i, so a warp touches 32 sectors.
    const PTX: &str = copy_kernel!(
        "strided",
        8,
        r#"
	cvta.to.global.u64 %rd3, %rd1;
	cvta.to.global.u64 %rd4, %rd2;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd5, %r1, 128;
	add.s64 %rd6, %rd3, %rd5;
	ld.global.f32 %f1, [%rd6];
	mul.wide.u32 %rd5, %r1, 4;
	add.s64 %rd7, %rd4, %rd5;
	st.global.f32 [%rd7], %f1;
	ret;
}
"#
    );

    #[test]
    fn measures_sectors_per_request_on_a_private_simulator() {
        let m = measure_ptx(PTX, "strided", |module| {
            let gpu = module.gpu();
            let input = gpu.zeros::<f32>("in", 32 * 32)?;
            let out = gpu.zeros::<f32>("out", 32)?;
            module.launch("strided", LaunchConfig::linear(2, 32), &args![&input, &out])
        })
        .unwrap();
        assert_eq!(m.launches, 1);
        assert_eq!(m.load_sectors_per_request(), 32.0);
        assert_eq!(m.store_sectors_per_request(), 4.0);
        assert_eq!(m.thread_global_loads(), 64);
        assert!(worst_at(m.worst_global(AccessKind::GlobalLoad)).contains("ld.global.f32"));
    }

    /// The same copy through generic loads (no `.global`: clang's spelling of
    /// a load that may read shared or global memory).
    const GENERIC: &str = copy_kernel!(
        "generic_copy",
        6,
        r#"
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.f32 %f1, [%rd4];
	add.s64 %rd5, %rd2, %rd3;
	st.f32 [%rd5], %f1;
	ret;
}
"#
    );

    #[test]
    fn a_part_whose_measurement_got_stuck_on_the_gpu_fails_there_and_only_there() {
        let why = "on the GPU, this part's measured launches did not finish";
        let stuck = [("ex99::stuck".to_string(), why.to_string())].into();
        crate::counters::install(Default::default(), stuck);
        let launch = |module: &Module| {
            let gpu = module.gpu();
            let input = gpu.zeros::<f32>("in", 32 * 32)?;
            let out = gpu.zeros::<f32>("out", 32)?;
            module.launch("strided", LaunchConfig::linear(1, 32), &args![&input, &out])
        };
        let in_check = |check: &str| {
            let recorder = std::sync::Arc::new(crate::record::Recorder::for_check(check));
            let _on = recorder.install();
            measure_ptx(PTX, "strided", launch).map(|m| m.launches)
        };
        let e = in_check("ex99::stuck::structure::coalesced").unwrap_err().to_string();
        assert!(e.contains("did not finish"), "{e}");
        assert_eq!(in_check("ex99::other::structure::coalesced").unwrap(), 1, "another part measures as before");
        crate::counters::clear();
    }

    #[test]
    fn generic_loads_that_reach_global_memory_are_global_loads() {
        let m = measure_ptx(GENERIC, "generic_copy", |module| {
            let gpu = module.gpu();
            let input = gpu.zeros::<f32>("in", 64)?;
            let out = gpu.zeros::<f32>("out", 64)?;
            module.launch("generic_copy", LaunchConfig::linear(1, 64), &args![&input, &out])
        })
        .unwrap();
        assert_eq!((m.thread_global_loads(), m.stats.global_load_requests), (64, 2));
        assert_eq!(m.global_lanes_per_load(), 32.0);
    }

    #[test]
    fn load_efficiency_counts_bytes_asked_against_sectors_touched() {
        assert_eq!(access_bytes("ld.global.f32"), 4);
        assert_eq!(access_bytes("ld.global.nc.v4.f32"), 16);
        assert_eq!(access_bytes("ld.global.u8"), 1);
        assert_eq!(access_bytes("ld.global.v2.f64"), 16);
        // Lane i reads row i of 32 floats: 32 lanes x 4 bytes over 32 sectors.
        let m = measure_ptx(PTX, "strided", |module| {
            let gpu = module.gpu();
            let input = gpu.zeros::<f32>("in", 32 * 32)?;
            let out = gpu.zeros::<f32>("out", 32)?;
            module.launch("strided", LaunchConfig::linear(1, 32), &args![&input, &out])
        })
        .unwrap();
        assert_eq!(m.global_load_efficiency(), 128.0 / (32.0 * 32.0));
        assert!(m.least_efficient_global_load().unwrap().instruction.starts_with("ld.global"));
    }

    #[test]
    fn a_fill_is_scattered_only_with_many_sectors_per_request_and_per_lane() {
        let strided = |blocks| {
            measure_ptx(PTX, "strided", |module| {
                let gpu = module.gpu();
                let input = gpu.zeros::<f32>("in", 32 * 32)?;
                let out = gpu.zeros::<f32>("out", 32)?;
                module.launch("strided", LaunchConfig::linear(blocks, 32), &args![&input, &out])
            })
            .unwrap()
        };
        // Lane i reads row i: 32 sectors per request, one per lane.
        let e = require_coalesced_fill(&strided(1), (8.0, 0.42), "4", "Walk along a row").unwrap_err().to_string();
        assert!(e.contains("32.0 sectors per warp request, 1.00 per lane") && e.contains("ld.global.f32"), "{e}");
        // Either figure alone is not enough.
        assert!(require_coalesced_fill(&strided(1), (32.0, 0.42), "4", "").is_ok());
        assert!(require_coalesced_fill(&strided(1), (8.0, 1.0), "4", "").is_ok());
    }

    #[test]
    fn slices_of_four_are_drawn_from_the_seed() {
        let build = crate::PartBuild::new(String::new());
        let shapes: std::collections::BTreeSet<(u32, usize)> = (0..20)
            .map(|seed| {
                let env = crate::RunEnv::new(seed, None, None, Default::default());
                let (blocks, n) = slices_of_four(
                    &Ctx::new("ex01::shared::structure::few-global-atomics-per-block", &env, &build),
                    256,
                );
                let threads = (blocks * 256) as usize;
                assert!(SLICE_BLOCKS.contains(&blocks) && n > 3 * threads && n < 4 * threads - 128, "{n}");
                assert!(n % 256 != 0);
                (blocks, n)
            })
            .collect();
        assert!(shapes.len() >= 15, "{shapes:?}");
        for (blocks, n) in slices_of_four_extremes(256) {
            assert!(n > 3 * (blocks as usize * 256) && n % 256 != 0, "{n}");
        }
    }

    #[test]
    fn strata_cover_the_range_on_a_log_scale_and_sizes_are_drawn_in_each() {
        assert_eq!(strata(2..=1024, 3), vec![2..=16, 17..=128, 129..=1024]);
        assert_eq!(strata(5..=5, 2), vec![5..=5, 5..=5]);
        let build = crate::PartBuild::new(String::new());
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..50 {
            // The same seed, another run: another secret.
            let env = crate::RunEnv::new(1, None, None, Default::default());
            let sizes = sizes_across(&Ctx::new("exNN::part::structure::x", &env, &build), "n", 2..=1024, 3);
            for (size, stratum) in sizes.iter().zip(strata(2..=1024, 3)) {
                assert!(stratum.contains(size), "{size} in {stratum:?}");
            }
            seen.insert(sizes);
        }
        assert!(seen.len() > 40, "{} draws", seen.len());
        // Runs given one shapes secret (a batch's parts, a run and its
        // profiler's child) measure the same sizes, whatever the seed of their timed inputs.
        let shared: std::collections::BTreeSet<Vec<usize>> = (0..5)
            .map(|_| {
                let env = crate::RunEnv::new(1, None, None, Default::default()).with_shapes_secret(0x5eed);
                sizes_across(&Ctx::new("exNN::part::structure::x", &env, &build), "n", 2..=1024, 3)
            })
            .collect();
        assert_eq!(shared.len(), 1, "{shared:?}");
        let all = on_every_size(&[3, 30], |n| format!("{n} elements"), |n| Ok(format!("ok {n}"))).unwrap();
        assert_eq!(all, "ok 30 (measured on 3 elements; 30 elements: each passes)");
        let e = on_every_size(
            &[3, 30],
            |n| format!("{n} elements"),
            |n| {
                if n > 10 {
                    Err(anyhow!(Unmeasurable("x".into())))
                } else {
                    Ok(String::new())
                }
            },
        )
        .unwrap_err();
        assert!(format!("{e:#}").starts_with("measured on 30 elements: "), "{e:#}");
        assert!(e.downcast_ref::<Unmeasurable>().is_some(), "still told apart");
        let note = unless_unmeasurable(Err(e)).unwrap();
        assert!(note.starts_with("the simulator cannot run this kernel (x): judged by the PTX only"), "{note}");
    }

    #[test]
    fn a_module_the_simulator_cannot_load_is_unmeasurable_not_failed() {
        let e = measure_ptx("this is not PTX", "k", |_| Ok(())).unwrap_err();
        assert!(e.downcast_ref::<Unmeasurable>().is_some(), "{e:#}");
        let note = unless_unmeasurable(Err(e)).unwrap();
        assert!(note.contains("judged by the PTX only"), "{note}");
    }

    #[test]
    fn an_instruction_the_simulator_lacks_is_unmeasurable_and_named() {
        // A launch that meets one (the simulator also refuses them on load).
        let e = measure_ptx(PTX, "strided", |_| {
            Err(anyhow::Error::new(BackendError::NotSimulated("`tex.1d.v4.f32.s32` (PTX line 9)".into())))
        })
        .unwrap_err();
        assert!(e.downcast_ref::<Unmeasurable>().is_some(), "{e:#}");
        let note = unless_unmeasurable(Err(e)).unwrap();
        assert!(note.contains("it lacks `tex.1d.v4.f32.s32`") && note.contains("judged by the PTX only"), "{note}");
        let skipped = skip_unmeasurable(Err(anyhow!(Unmeasurable("x".into())))).unwrap_err();
        assert!(skipped.downcast_ref::<Skip>().is_some());
    }
}
