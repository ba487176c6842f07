//! Profiles of a run. The simulator's memory profiles of one check's
//! launches, one per kernel (apart because the backend keeps them across
//! checks: each trial must drop what earlier work left and gather only its
//! own). And where a run's time went ([`PartTime`]): named buckets that add up
//! to its wall, the same for a batch worker's part (the timeline, batch.json)
//! and for one `grader exNN` run (`CUDA_LAB_PROFILE=1` prints them).

use std::time::{Duration, Instant};

use kit::profile::MemoryProfile;
use kit::stats::{self, Counter};
use kit::RunEnv;
use serde::{Deserialize, Serialize};

use crate::report::GradeReport;

/// Set (to anything but `0`): `grader exNN` prints where the run's time went.
pub const PROFILE_ENV: &str = "CUDA_LAB_PROFILE";

/// Drops profiles left by earlier work (the copy-bandwidth calibration, say).
pub(super) fn discard_profiles(env: &RunEnv) {
    if let Some(gpu) = &env.gpu {
        gpu.backend().take_profiles();
    }
}

/// The simulator's memory profiles of this check's launches, one per kernel.
pub(super) fn collect_profiles(env: &RunEnv) -> Vec<MemoryProfile> {
    let mut per_kernel: Vec<MemoryProfile> = Vec::new();
    for p in env.gpu.as_ref().map(|g| g.backend().take_profiles()).unwrap_or_default() {
        match per_kernel.iter_mut().find(|k| k.kernel == p.kernel) {
            Some(k) => k.add(&p),
            None => per_kernel.push(p),
        }
    }
    per_kernel
}

/// Where one run's (or a batch part's) time went, in seconds: named buckets
/// that add up to `wall` (`other` is the remainder, and stays small). Read
/// from the thread that ran the checks (`kit::stats::here`), so a sanitizer
/// pass running beside them (a batch worker's part before) is not counted twice.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct PartTime {
    pub wall: f64,
    /// Compiling (or taking from the PTX cache) the sources.
    pub compile: f64,
    /// Opening the environment, making the trials, and the test runner's own
    /// work outside every check.
    #[serde(default)]
    pub setup: f64,
    /// Structure measurements on a private simulator (kit::measure): loading
    /// the PTX and the measured launches.
    #[serde(default)]
    pub sim_measure: f64,
    /// Reading the GPU's hardware counters for the structure checks
    /// (crate::counters: the profiler's run, or waiting for another worker's).
    #[serde(default)]
    pub counters: f64,
    /// Seeded inputs and CPU references (kit::shared).
    pub cpu_reference: f64,
    /// Checks' time that was neither timing, CPU references, structure
    /// measurements nor waiting: correctness launches and their comparisons
    /// (on the simulator too, with `--backend sim`).
    pub gpu_correctness: f64,
    /// Warm-ups and timed launches.
    pub gpu_timing: f64,
    /// Waiting for the GPU lock while another worker timed.
    pub lock_wait: f64,
    /// In a batch worker: checked, waiting for the finishing thread to be done
    /// with the parts before (their sanitizer passes); the GPU thread has moved on.
    #[serde(default)]
    pub queued: f64,
    /// Waiting for the simulator sanitizer pass after the checks, and scoring.
    #[serde(default)]
    pub sanitizer: f64,
    /// The rest of `wall` (writing the result, bookkeeping).
    #[serde(default)]
    pub other: f64,
}

impl PartTime {
    /// The buckets, in the order tables show them (`other` last).
    pub fn buckets(&self) -> [(&'static str, f64); 11] {
        [
            ("compile", self.compile),
            ("setup", self.setup),
            ("sim_measure", self.sim_measure),
            ("counters", self.counters),
            ("cpu_reference", self.cpu_reference),
            ("gpu_correctness", self.gpu_correctness),
            ("gpu_timing", self.gpu_timing),
            ("lock_wait", self.lock_wait),
            ("queued", self.queued),
            ("sanitizer", self.sanitizer),
            ("other", self.other),
        ]
    }

    /// The buckets other than `other`, summed.
    pub fn named(&self) -> f64 {
        self.buckets().iter().filter(|(n, _)| *n != "other").map(|(_, s)| s).sum()
    }

    /// Why these buckets do not account for the wall (more than 5 % of it in
    /// `other`, or the named ones summing past it), if they do not.
    pub fn unaccounted(&self) -> Option<String> {
        let named = self.named();
        let slack = 0.05 * self.wall + 0.005;
        let why = if self.wall - named > slack {
            format!("{:.3} s of {:.3} s in no named bucket", self.wall - named, self.wall)
        } else if named - self.wall > slack {
            format!("the named buckets sum to {named:.3} s, past the wall of {:.3} s", self.wall)
        } else {
            return None;
        };
        Some(format!("{why} (more than 5 %):\n{}", self.table()))
    }

    /// A table, one bucket a line, with its share of the wall.
    pub fn table(&self) -> String {
        let mut out = format!("where the time went: {:.3} s wall\n", self.wall);
        for (name, s) in self.buckets() {
            let share = if self.wall > 0.0 { 100.0 * s / self.wall } else { 0.0 };
            out += &format!("  {name:<16} {s:>8.3} s {share:>5.1} %\n");
        }
        out
    }
}

/// Every counter, in `kit::stats::Counter`'s order (read by discriminant).
const COUNTERS: [Counter; 6] = stats::ALL;

/// Started before a run's checks, on their thread; [`Clock::checked`] when
/// they are done, [`Clock::finished`] when the run is scored.
pub struct Clock {
    started: Instant,
    before: [Duration; 6],
    checks: Option<(Instant, [Duration; 6])>,
}

impl Clock {
    pub fn start() -> Clock {
        Clock { started: Instant::now(), before: COUNTERS.map(stats::here), checks: None }
    }

    /// The checks are done (call on the thread that ran them).
    pub fn checked(&mut self) {
        self.checks = Some((Instant::now(), COUNTERS.map(stats::here)));
    }

    /// The run is scored: `finish_started` is when scoring began (a batch
    /// worker's part may wait in between), `report` what it gave.
    pub fn finished(&self, finish_started: Instant, report: &GradeReport) -> PartTime {
        let now = Instant::now();
        let (checks_end, after) = self.checks.unwrap_or((finish_started, COUNTERS.map(stats::here)));
        let d = |c: Counter| after[c as usize].saturating_sub(self.before[c as usize]).as_secs_f64();
        let checks_wall = checks_end.duration_since(self.started).as_secs_f64();
        let tests: f64 =
            report.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests).map(|t| t.duration_ms / 1e3).sum();
        let mut t = PartTime {
            wall: now.duration_since(self.started).as_secs_f64(),
            gpu_timing: d(Counter::GpuTiming),
            cpu_reference: d(Counter::CpuReference),
            lock_wait: d(Counter::LockWait),
            sim_measure: d(Counter::SimMeasure),
            compile: d(Counter::Compile),
            counters: d(Counter::HardwareCounters),
            queued: finish_started.saturating_duration_since(checks_end).as_secs_f64(),
            sanitizer: now.duration_since(finish_started.max(checks_end)).as_secs_f64(),
            ..Default::default()
        };
        t.setup = (checks_wall - t.compile - t.counters - tests).max(0.0);
        t.gpu_correctness = (tests - t.gpu_timing - t.cpu_reference - t.lock_wait - t.sim_measure).max(0.0);
        t.other = (t.wall - t.named()).max(0.0);
        t
    }
}

/// Whether `grader exNN` prints where its time went ([`PROFILE_ENV`]).
pub fn wanted() -> bool {
    std::env::var(PROFILE_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_whose_buckets_miss_its_wall_is_unaccounted() {
        // The ex07 naive: 0.84 s of wall, 0.06 s in the old buckets.
        let mut t = PartTime { wall: 0.84, compile: 0.02, gpu_correctness: 0.04, ..Default::default() };
        t.other = t.wall - t.named();
        let why = t.unaccounted().expect("unaccounted");
        assert!(why.contains("0.780 s of 0.840 s in no named bucket"), "{why}");
        assert!(why.contains("other"), "{why}");
        t.sim_measure = 0.75;
        t.other = (t.wall - t.named()).max(0.0);
        assert_eq!(t.unaccounted(), None);
        t.queued = 0.5;
        assert!(t.unaccounted().unwrap().contains("past the wall"));
    }
}
