//! The GPU's own witness of a structure check: hardware counters for the
//! launches a measurement makes ([`crate::measure`]), read by Nsight Compute,
//! beside the simulator's figures.
//!
//! A measurement replays the student's kernel on ptx-sim. On a GPU that lets
//! its counters be read, the grader first runs the same measurements on the GPU
//! in a child process under Nsight Compute's `ncu` (the grader's `counters`
//! module runs it and reads its rows): every measurement there runs its
//! launches on the simulator *and* on the GPU, and writes which launches it
//! made (`Mode::Collect`). The grading run then loads the counters per
//! measurement (`Mode::Apply`) and [`crate::measure::measure_ptx`] grades the
//! figures the GPU counts (global requests and sectors, shared-memory requests
//! and wavefronts, local memory) from the GPU's counters, keeping the
//! simulator's for what only it can see (lanes, per-instruction rows, atomics
//! per address). Both figures go into the record, side by side.
//!
//! A measurement is known in both runs by the check it belongs to and its
//! place among that check's measurements ([`Key`]): the shapes and inputs come
//! from the run's seed and the check's name, so both runs make the same ones.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use ptx_sim::Stats;
use serde::{Deserialize, Serialize};

pub mod cache;

/// Set in the child run under `ncu`: the file its measurements' launches are written to.
pub const COLLECT_ENV: &str = "CUDA_LAB_COUNTERS_COLLECT";
/// `off` turns the GPU's counters off, `on` reads them also in a batch's
/// workers; unset (or `auto`), a run reads them where it can and a batch does
/// not ([`BATCH_DEFAULT`]).
pub const ENV: &str = "CUDA_LAB_COUNTERS";
/// What a batch's workers set [`ENV`] to when the TA left it unset: every part
/// would start the profiler once more (seconds a part), so a batch reads
/// counters only when asked (`CUDA_LAB_COUNTERS=on`).
pub const BATCH_DEFAULT: &str = "batch-default";

/// A measurement: the check's full name, the kernel, and how many
/// measurements that check made before this one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Key {
    pub check: String,
    pub kernel: String,
    pub ordinal: usize,
}

pub use crate::profile::GpuCounters;

impl GpuCounters {
    fn add(&mut self, o: &GpuCounters) {
        self.launches += o.launches;
        self.global_load_requests += o.global_load_requests;
        self.global_load_sectors += o.global_load_sectors;
        self.global_store_requests += o.global_store_requests;
        self.global_store_sectors += o.global_store_sectors;
        self.shared_load_requests += o.shared_load_requests;
        self.shared_store_requests += o.shared_store_requests;
        self.shared_load_wavefronts += o.shared_load_wavefronts;
        self.shared_store_wavefronts += o.shared_store_wavefronts;
        self.local_load_requests += o.local_load_requests;
        self.local_store_requests += o.local_store_requests;
        self.branches += o.branches;
        self.divergent_branches += o.divergent_branches;
        self.global_atomic_requests += o.global_atomic_requests;
        self.shared_atomic_requests += o.shared_atomic_requests;
    }

    /// These counts scaled by `share` (rounded): a whole launch's counts as
    /// the share of its blocks the simulator ran of it
    /// ([`crate::measure::BlockSample::share`]), so that figures over the
    /// simulator's lanes, elements or blocks mean the same with them. Until
    /// 2026-12-07 a sample's figures per lane took the whole launch's sectors:
    /// on an H100 an honest ex01 kernel read 32 sectors per lane at the timed
    /// size (256 times the simulator's 0.125) and failed with counters.
    pub fn scaled(&self, share: f64) -> GpuCounters {
        let s = |v: u64| (v as f64 * share).round() as u64;
        GpuCounters {
            launches: self.launches,
            global_load_requests: s(self.global_load_requests),
            global_load_sectors: s(self.global_load_sectors),
            global_store_requests: s(self.global_store_requests),
            global_store_sectors: s(self.global_store_sectors),
            shared_load_requests: s(self.shared_load_requests),
            shared_store_requests: s(self.shared_store_requests),
            shared_load_wavefronts: s(self.shared_load_wavefronts),
            shared_store_wavefronts: s(self.shared_store_wavefronts),
            local_load_requests: s(self.local_load_requests),
            local_store_requests: s(self.local_store_requests),
            branches: s(self.branches),
            divergent_branches: s(self.divergent_branches),
            global_atomic_requests: s(self.global_atomic_requests),
            shared_atomic_requests: s(self.shared_atomic_requests),
        }
    }

    /// `sim` with the figures the GPU counts replaced by the GPU's: what a
    /// structure check grades where counters were read. Branches stay the
    /// simulator's: the GPU counts SASS branches, and the compiler turns many
    /// of the PTX's short branches into predicated instructions, so the two
    /// counts are not of the same thing (docs/grading-accuracy.md).
    pub fn overlay(&self, sim: &Stats) -> Stats {
        Stats {
            global_load_requests: self.global_load_requests,
            global_load_sectors: self.global_load_sectors,
            global_store_requests: self.global_store_requests,
            global_store_sectors: self.global_store_sectors,
            shared_load_requests: self.shared_load_requests,
            shared_store_requests: self.shared_store_requests,
            shared_load_wavefronts: self.shared_load_wavefronts,
            shared_store_wavefronts: self.shared_store_wavefronts,
            local_load_requests: self.local_load_requests,
            local_store_requests: self.local_store_requests,
            ..sim.clone()
        }
    }
}

/// One measured run's launches in the child run, in the order they ran: the
/// measurements it makes (one per kernel measured from it) and every launch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Launches {
    pub keys: Vec<Key>,
    /// Every kernel launched on the GPU by the measurement, in order (the
    /// measured kernel and any other kernel of the module it calls).
    pub kernels: Vec<String>,
    /// Why the GPU's run of the measurement failed, if it did (its launches
    /// then grade nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// One launch as the profiler counted it: the kernel's name and its counters.
#[derive(Debug, Clone, PartialEq)]
pub struct CountedLaunch {
    pub kernel: String,
    pub counters: GpuCounters,
}

/// What this process does with counters.
enum Mode {
    /// The child under `ncu`: run each measurement on the GPU too, and write its launches here.
    Collect { log: PathBuf, gpu: Option<crate::Gpu> },
    /// The grading run: the GPU's counters per measurement, and why each
    /// part whose measurement got stuck on the GPU has none.
    Apply { figures: HashMap<Key, GpuCounters>, stuck: HashMap<String, String> },
}

static MODE: OnceLock<Mutex<Option<Mode>>> = OnceLock::new();

fn mode() -> &'static Mutex<Option<Mode>> {
    MODE.get_or_init(|| {
        let collect = std::env::var_os(COLLECT_ENV).map(|log| Mode::Collect { log: PathBuf::from(log), gpu: None });
        Mutex::new(collect)
    })
}

/// In the child run: the compute capability of the GPU its measurements run
/// on, which it compiles for, as the grading run does (the same PTX, so the
/// same kernels are counted as are graded and kept by digest: [`cache`]).
pub fn collecting_arch() -> Option<(u32, u32)> {
    let mut guard = mode().lock().unwrap_or_else(|p| p.into_inner());
    let Some(Mode::Collect { gpu, .. }) = &mut *guard else { return None };
    opened(gpu).map(|g| g.info().compute_capability)
}

/// The child run's GPU, opened on first use.
fn opened(gpu: &mut Option<crate::Gpu>) -> Option<crate::Gpu> {
    if gpu.is_none() {
        *gpu = crate::Gpu::cuda(std::time::Duration::from_secs(20)).ok();
    }
    gpu.clone()
}

/// Whether this process is the child run whose measurements the counters are read for.
pub fn collecting() -> bool {
    std::env::var_os(COLLECT_ENV).is_some()
}

/// Why the counters are off here ([`ENV`]), if they are: the header's words.
pub fn turned_off() -> Option<&'static str> {
    match std::env::var(ENV).as_deref() {
        Ok("off" | "0") => Some("CUDA_LAB_COUNTERS=off"),
        Ok(BATCH_DEFAULT) => {
            Some("a batch reads them only with CUDA_LAB_COUNTERS=on: each part would start the profiler")
        }
        _ => None,
    }
}

/// The grading run's counters, per measurement, and the parts (`ex03::rect`)
/// whose measurements never finished on the GPU under the profiler, with why
/// (replacing any earlier).
pub fn install(figures: HashMap<Key, GpuCounters>, stuck: HashMap<String, String>) {
    *mode().lock().unwrap_or_else(|p| p.into_inner()) = Some(Mode::Apply { figures, stuck });
}

/// Why the measurement of `check` never finished on the GPU, where it did not:
/// the kernel caused that where it is measured, so the check fails with it.
pub(crate) fn stuck_for(check: &str) -> Option<String> {
    match &*mode().lock().unwrap_or_else(|p| p.into_inner()) {
        Some(Mode::Apply { stuck, .. }) => stuck.get(&cache::part_of(check)).cloned(),
        _ => None,
    }
}

/// Forgets the installed counters (the next exercise's run installs its own).
pub fn clear() {
    if !collecting() {
        *mode().lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// The key of the measurement about to be recorded in the running check, if
/// a graded check runs on this thread (a sanitizer replay or work done ahead
/// records nowhere, and gets no counters).
/// Whether this run reads or applies the GPU's counters (each measurement
/// then has figures of its own).
pub(crate) fn in_play() -> bool {
    mode().lock().unwrap_or_else(|p| p.into_inner()).is_some()
}

pub(crate) fn keys_here(kernels: &[&str]) -> Option<Vec<Key>> {
    let check = crate::record::check_name().filter(|_| crate::record::recording())?;
    let mut first = 0;
    crate::record::with(|r| first = r.measured.len());
    let key = |(i, k): (usize, &&str)| Key { check: check.clone(), kernel: k.to_string(), ordinal: first + i };
    Some(kernels.iter().enumerate().map(key).collect())
}

/// The GPU's counters for the measurement `key`, where the grading run has them.
pub(crate) fn for_key(key: &Key) -> Option<GpuCounters> {
    match &*mode().lock().unwrap_or_else(|p| p.into_inner()) {
        Some(Mode::Apply { figures, .. }) => figures.get(key).cloned(),
        _ => None,
    }
}

/// In the child run: runs the measurement `run` on the GPU as well (its
/// launches are what `ncu` profiles) and writes which kernels it launched.
pub(crate) fn collect(keys: Vec<Key>, ptx: &str, run: impl FnOnce(&crate::Module) -> anyhow::Result<()>) {
    let mut guard = mode().lock().unwrap_or_else(|p| p.into_inner());
    let Some(Mode::Collect { log, gpu }) = &mut *guard else { return };
    // A part whose figures for this PTX are kept is not profiled again.
    let kept = cache::Cache::from_env();
    if keys.first().is_some_and(|k| kept.is_some_and(|c| c.has(&cache::part_of(&k.check), &cache::digest(ptx)))) {
        return;
    }
    let Some(gpu) = opened(gpu) else { return };
    let log = log.clone();
    drop(guard);
    if let Some(k) = keys.first() {
        cache::mark_started(&log, &cache::part_of(&k.check), ptx);
    }
    gpu.log_launches(true);
    let outcome = gpu.load(ptx).and_then(|module| run(&module));
    let kernels = gpu.log_launches(false);
    let entry = Launches { keys, kernels, failed: outcome.err().map(|e| format!("{e:#}")) };
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&log) {
        let _ = writeln!(f, "{}", serde_json::to_string(&entry).unwrap_or_default());
    }
}

/// The counters of each measurement: the child's launches (in order) matched
/// with `ncu`'s rows (one per profiled launch, in the same order). Rows of
/// kernels no measurement launched (the grader's own, comparing outputs on
/// the device) lie between and are passed over; launches of other kernels
/// than the measured one are left out of its figures, as the simulator's
/// measurement leaves them out. Where a launch has no row, matching stops:
/// what follows cannot be told apart, and keeps the simulator's figures.
pub fn per_measurement(launches: &[Launches], rows: &[CountedLaunch]) -> Matched {
    let mut figures = HashMap::new();
    let mut rows = rows.iter();
    for m in launches {
        let mut mine = Vec::with_capacity(m.kernels.len());
        for kernel in &m.kernels {
            match rows.by_ref().find(|r| r.kernel == *kernel) {
                Some(row) => mine.push(row),
                None => return Matched { figures, complete: false },
            }
        }
        if m.failed.is_some() {
            continue;
        }
        for key in &m.keys {
            let mut total = GpuCounters::default();
            for row in mine.iter().filter(|r| r.kernel == key.kernel) {
                total.add(&row.counters);
            }
            if total.launches > 0 {
                figures.insert(key.clone(), total);
            }
        }
    }
    Matched { figures, complete: true }
}

/// The counters of each measurement, and whether every launch found its row
/// (only then may they be kept for later runs: [`cache`]).
#[derive(Debug, Default)]
pub struct Matched {
    pub figures: HashMap<Key, GpuCounters>,
    pub complete: bool,
}

/// A figure per request, 0 where nothing was requested.
fn per(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Whether two witnesses' figures per request tell different stories: apart by
/// more than a quarter and by more than half a sector or pass (the references
/// and the slow families agree far closer: docs/grading-accuracy.md).
pub fn disagree(gpu: f64, sim: f64) -> bool {
    let gap = (gpu - sim).abs();
    gap > 0.5 && gap > 0.25 * gpu.max(sim)
}

/// The GPU's figures beside the simulator's, one line per measured kernel
/// whose counters were read: what a structure check's message adds, so that
/// a student sees what graded and where the two witnesses part.
pub fn side_by_side(measured: &[crate::profile::MemoryProfile]) -> Vec<String> {
    measured
        .iter()
        .filter_map(|p| {
            let g = p.gpu.as_ref()?;
            let pairs = [
                (
                    "global loads",
                    per(g.global_load_sectors, g.global_load_requests),
                    per(p.global_load_sectors, p.global_load_requests),
                    "sectors per request",
                ),
                (
                    "global stores",
                    per(g.global_store_sectors, g.global_store_requests),
                    per(p.global_store_sectors, p.global_store_requests),
                    "sectors per request",
                ),
                (
                    "shared memory",
                    per(
                        g.shared_load_wavefronts + g.shared_store_wavefronts,
                        g.shared_load_requests + g.shared_store_requests,
                    ),
                    per(p.shared_wavefronts, p.shared_requests),
                    "passes per request",
                ),
            ];
            let shown: Vec<String> = pairs
                .iter()
                .filter(|(_, gpu, sim, _)| *gpu > 0.0 || *sim > 0.0)
                .map(|(what, gpu, sim, unit)| format!("{what} {gpu:.2} {unit} (simulator {sim:.2})"))
                .collect();
            let parted: Vec<&str> =
                pairs.iter().filter(|(_, gpu, sim, _)| disagree(*gpu, *sim)).map(|(what, ..)| *what).collect();
            let mut line = format!("counted on the GPU for `{}`: {}", p.kernel, shown.join(", "));
            if !parted.is_empty() {
                line.push_str(&format!(
                    "; the kernel behaved differently on the simulator ({}): the GPU's figures graded",
                    parted.join(", ")
                ));
            }
            Some(line)
        })
        .collect()
}

/// Reads the child's launch log.
pub fn read_launches(path: &std::path::Path) -> anyhow::Result<Vec<Launches>> {
    let text = std::fs::read_to_string(path)?;
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| Ok(serde_json::from_str(l)?)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &str, sectors: u64) -> CountedLaunch {
        CountedLaunch {
            kernel: kernel.into(),
            counters: GpuCounters {
                launches: 1,
                global_load_requests: 4,
                global_load_sectors: sectors,
                ..Default::default()
            },
        }
    }

    fn launches(check: &str, kernel: &str, ordinal: usize, kernels: &[&str]) -> Launches {
        Launches {
            keys: vec![Key { check: check.into(), kernel: kernel.into(), ordinal }],
            kernels: kernels.iter().map(|k| k.to_string()).collect(),
            failed: None,
        }
    }

    #[test]
    fn rows_are_matched_to_measurements_in_launch_order_and_other_kernels_left_out() {
        let log = vec![
            launches("a", "scan", 0, &["scan", "add_sums", "scan"]),
            launches("b", "transpose", 0, &["transpose"]),
        ];
        let rows = vec![row("scan", 16), row("add_sums", 99), row("scan", 16), row("transpose", 128)];
        let f = per_measurement(&log, &rows).figures;
        let a = &f[&log[0].keys[0]];
        assert_eq!((a.launches, a.global_load_sectors, a.global_load_requests), (2, 32, 8));
        assert_eq!(f[&log[1].keys[0]].global_load_sectors, 128);
    }

    #[test]
    fn the_graders_own_kernels_between_are_passed_over_and_a_lost_row_stops_the_match() {
        let log = vec![launches("a", "k", 0, &["k"]), launches("b", "t", 0, &["t"])];
        let matched = per_measurement(&log, &[row("first_difference", 1), row("k", 8), row("gather", 1), row("t", 4)]);
        assert!(matched.complete);
        let f = matched.figures;
        assert_eq!((f[&log[0].keys[0]].global_load_sectors, f[&log[1].keys[0]].global_load_sectors), (8, 4));
        // A row lost (ncu skipped a launch): nothing after it is trusted.
        let f = per_measurement(&log, &[row("t", 4)]);
        assert!(f.figures.is_empty() && !f.complete, "{f:?}");
    }

    #[test]
    fn the_overlay_takes_the_gpus_memory_figures_and_keeps_the_simulators_branches() {
        let sim = Stats { global_load_sectors: 4, branches: 7, global_load_lanes: 32, ..Default::default() };
        let gpu = GpuCounters { global_load_sectors: 32, branches: 1, ..Default::default() };
        let s = gpu.overlay(&sim);
        assert_eq!((s.global_load_sectors, s.branches, s.global_load_lanes), (32, 7, 32));
    }

    /// A whole launch of 1024 blocks counted on the GPU beside 4 of them on
    /// the simulator: scaled to the sample's share, the GPU's sectors over the
    /// simulator's lanes read what they read on the simulator (0.125 a lane
    /// for coalesced floats), where unscaled they read 256 times that.
    #[test]
    fn a_whole_launchs_counts_scaled_to_a_sample_mean_the_same_per_lane() {
        let lanes = 4 * 256 * 128;
        let sim = Stats { global_load_sectors: lanes / 8, global_load_lanes: lanes, ..Default::default() };
        let whole = GpuCounters {
            launches: 1,
            global_load_requests: 256 * lanes / 32,
            global_load_sectors: 256 * lanes / 8,
            ..Default::default()
        };
        let per_lane = |s: &Stats| s.global_load_sectors as f64 / s.global_load_lanes as f64;
        assert_eq!(per_lane(&whole.overlay(&sim)), 32.0);
        let scaled = whole.scaled(4.0 / 1024.0);
        assert_eq!((per_lane(&scaled.overlay(&sim)), scaled.launches), (0.125, 1));
        assert_eq!(scaled.global_load_sectors, 4 * scaled.global_load_requests, "4 sectors a request, as before");
    }
}
