//! Where a batch's time went, written into `batch.json` under `time`: the
//! grading phase's wall-clock time and, summed over workers and children,
//! compiling, setting up, structure measurements on the simulator, CPU
//! references, GPU correctness work, GPU timing, waiting for the GPU lock,
//! waiting behind the parts before, the sanitizer, process start-up and the
//! remainder (`other_s`), and an estimate of how long each GPU sat idle. For
//! the parts graded in workers the buckets add up to `parts_wall_s` (each
//! part's own, in the timeline's `time`, to its `wall`). Also every yardstick
//! re-measurement (`drift`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::worker::PartTime;
use crate::report::GradeReport;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Breakdown {
    /// "workers" (the default) or "isolate".
    pub mode: String,
    pub workers_per_gpu: usize,
    /// Seconds of the grading phase (this run).
    pub wall_s: f64,
    /// Compiling ahead in the batch process (overlaps everything else).
    pub compile_ahead_s: f64,
    /// Compiling (or taking from the PTX cache) in workers.
    pub compile_s: f64,
    /// Opening the environment, making trials and the test runner's work
    /// outside every check, in workers.
    #[serde(default)]
    pub setup_s: f64,
    /// Structure measurements on a private simulator (loading the PTX and the
    /// measured launches), in workers.
    #[serde(default)]
    pub sim_measure_s: f64,
    /// Reading the GPU's hardware counters (the profiler's runs, one per
    /// submission, and the waits of the submission's other parts for it), in workers.
    #[serde(default)]
    pub counters_s: f64,
    /// Seeded inputs and CPU references computed (once per seed and check).
    pub cpu_reference_s: f64,
    /// Correctness and structure checks, and the untimed work of performance checks.
    pub gpu_correctness_s: f64,
    /// Warm-ups and timed launches.
    pub gpu_timing_s: f64,
    /// Waiting, after a part's checks, for its simulator sanitizer pass (in
    /// workers this overlaps the next part's checks).
    pub sanitizer_s: f64,
    /// Checked parts waiting for the finishing thread to be done with the
    /// parts before them (overlaps the next part's checks).
    #[serde(default)]
    pub queued_s: f64,
    /// Parts' wall time in no named bucket (writing results, bookkeeping).
    #[serde(default)]
    pub other_s: f64,
    /// The walls of the parts graded in workers, summed: their buckets above
    /// (less `process_overhead_s`, `compile_ahead_s`, `stuck_kernels_s`) add up to it.
    #[serde(default)]
    pub parts_wall_s: f64,
    /// Starting workers (process and CUDA context) and isolated children's time outside their checks.
    pub process_overhead_s: f64,
    /// Waiting for the GPU lock while another worker timed kernels.
    pub lock_wait_s: f64,
    /// Parts whose kernel got stuck (until `--timeout`), in workers: while such
    /// a kernel spins, nothing on its GPU can be timed.
    pub stuck_kernels_s: f64,
    /// Per GPU: wall time minus the time some worker or child used it (an estimate:
    /// overlapping correctness work of two workers counts twice).
    pub idle_gpu_s: BTreeMap<String, f64>,
    pub parts_in_workers: usize,
    /// Parts graded (in workers or children) per GPU entry.
    pub parts_by_gpu: BTreeMap<String, usize>,
    /// Parts graded in a child of their own (`--isolate`, or none of the below).
    pub parts_isolated: usize,
    /// Parts a worker could not finish (crash, stuck kernel, hang, death), regraded alone.
    pub parts_regraded_alone: usize,
    pub workers_started: usize,
    /// Why each part regraded alone was (`<result file>: <why>`).
    pub regraded: Vec<String>,
    /// Yardstick re-measurements: how far each median moved.
    pub drift: Vec<DriftRecord>,
    /// Parts graded again at the end because a timing was disturbed, the
    /// grader's own kernel beside it too (batch::retime).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub parts_retimed: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DriftRecord {
    pub gpu: String,
    pub yardstick: String,
    pub before_ms: f64,
    pub after_ms: f64,
    pub change: f64,
}

/// Collects a [`Breakdown`] from every grading thread, and writes the
/// timeline (`<out>/workers/timeline.jsonl`, one line per event as it ends),
/// which survives a batch that is killed.
#[derive(Default)]
pub struct Recorder {
    inner: Mutex<Breakdown>,
    busy: Mutex<BTreeMap<String, f64>>,
    timeline: Option<Mutex<std::fs::File>>,
    started: Option<std::time::Instant>,
}

/// One line of the timeline: what a grading slot did, from `start_s` to `end_s`
/// (seconds since the grading phase started).
#[derive(Debug, Serialize)]
pub struct Event<'a> {
    pub slot: usize,
    /// `worker-start`, `worker-part`, `alone`, `regrade`, `worker-stop`.
    pub what: &'a str,
    pub part: Option<String>,
    pub start_s: f64,
    pub end_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<PartTime>,
}

pub fn gpu_name(gpu: Option<&str>) -> String {
    gpu.unwrap_or("default").to_string()
}

impl Recorder {
    /// A recorder that also writes this run's timeline to `path` (best effort).
    pub fn with_timeline(path: &std::path::Path) -> Recorder {
        let file = path.parent().map(std::fs::create_dir_all).and_then(|_| std::fs::File::create(path).ok());
        Recorder { timeline: file.map(Mutex::new), started: Some(std::time::Instant::now()), ..Default::default() }
    }

    /// Seconds since the recorder was made.
    pub fn now(&self) -> f64 {
        self.started.map(|s| s.elapsed().as_secs_f64()).unwrap_or(0.0)
    }

    /// Appends one event that started at `start_s` and ends now.
    pub fn event(&self, slot: usize, what: &str, part: Option<&std::path::Path>, start_s: f64, time: Option<PartTime>) {
        let Some(file) = &self.timeline else { return };
        let part = part.map(|p| {
            let key = p.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned());
            format!("{}/{}", key.unwrap_or_default(), p.file_stem().map(|n| n.to_string_lossy()).unwrap_or_default())
        });
        let event = Event { slot, what, part, start_s, end_s: self.now(), time };
        if let Ok(mut line) = serde_json::to_string(&event) {
            line.push('\n');
            use std::io::Write;
            let _ = file.lock().unwrap_or_else(|p| p.into_inner()).write_all(line.as_bytes());
        }
    }

    fn with(&self, f: impl FnOnce(&mut Breakdown)) {
        f(&mut self.inner.lock().unwrap_or_else(|p| p.into_inner()));
    }

    fn busy(&self, gpu: Option<&str>, s: f64) {
        *self.busy.lock().unwrap_or_else(|p| p.into_inner()).entry(gpu_name(gpu)).or_default() += s;
        self.with(|b| *b.parts_by_gpu.entry(gpu_name(gpu)).or_default() += 1);
    }

    pub fn regraded(&self, result: &std::path::Path, why: &str) {
        let name = result.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let key = result.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
        self.with(|b| b.regraded.push(format!("{}/{name}: {why}", key.unwrap_or_default())));
    }

    pub fn worker_started(&self, startup_s: f64) {
        self.with(|b| {
            b.workers_started += 1;
            b.process_overhead_s += startup_s;
        });
    }

    pub fn worker_part(&self, gpu: Option<&str>, t: &PartTime, drift: &[kit::shared::Drift], stuck: bool) {
        self.busy(gpu, t.gpu_correctness + t.gpu_timing);
        self.with(|b| {
            b.parts_in_workers += 1;
            b.parts_wall_s += t.wall;
            b.compile_s += t.compile;
            b.setup_s += t.setup;
            b.sim_measure_s += t.sim_measure;
            b.counters_s += t.counters;
            b.queued_s += t.queued;
            b.other_s += t.other;
            b.cpu_reference_s += t.cpu_reference;
            b.gpu_correctness_s += t.gpu_correctness;
            b.gpu_timing_s += t.gpu_timing;
            b.lock_wait_s += t.lock_wait;
            b.sanitizer_s += t.sanitizer;
            if stuck {
                b.stuck_kernels_s += t.wall;
            }
            b.drift.extend(drift.iter().map(|d| DriftRecord {
                gpu: gpu_name(gpu),
                yardstick: d.yardstick.clone(),
                before_ms: d.before_ms,
                after_ms: d.after_ms,
                change: d.change,
            }));
        });
    }

    /// A part graded in a child of its own, which took `wall_s`.
    pub fn isolated_part(&self, gpu: Option<&str>, wall_s: f64, report: Option<&GradeReport>, regraded: bool) {
        let tests = report.iter().flat_map(|r| &r.exercises).flat_map(|e| &e.parts).flat_map(|p| &p.tests);
        let checks: f64 = tests.map(|t| t.duration_ms / 1e3).sum();
        self.busy(gpu, checks);
        self.with(|b| {
            if regraded {
                b.parts_regraded_alone += 1;
            } else {
                b.parts_isolated += 1;
            }
            b.gpu_correctness_s += checks;
            b.process_overhead_s += (wall_s - checks).max(0.0);
        });
    }

    pub fn finish(
        &self,
        mode: &str,
        per_gpu: usize,
        gpus: &[Option<&str>],
        wall_s: f64,
        compile_ahead_s: f64,
    ) -> Breakdown {
        let busy = self.busy.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut b = self.inner.lock().unwrap_or_else(|p| p.into_inner()).clone();
        b.mode = mode.into();
        b.workers_per_gpu = per_gpu;
        b.wall_s = wall_s;
        b.compile_ahead_s = compile_ahead_s;
        for gpu in gpus {
            let name = gpu_name(*gpu);
            let used = busy.get(&name).copied().unwrap_or(0.0);
            b.idle_gpu_s.insert(name, (wall_s - used).max(0.0));
        }
        b
    }
}
