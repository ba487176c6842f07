//! The JSON a run writes (schema `cuda-lab.grades/1`, documented in
//! docs/grades-json.md) and the summary printed after the test output.
//!
//! This module owns the whole schema, the records of the policy (`policy.rs`)
//! and of the sanitizer pass (`sanitize`) included, and uses no other module
//! of the grader's but `atomic`: everything that grades, scores or reads a
//! grade depends on it, so it must depend on none of them. The modules that
//! decide what goes in these records give them their behaviour there.

use std::path::Path;

use anyhow::Result;
use kit::CheckKind;
use ptx_build::Diagnostic;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "cuda-lab.grades/1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GradeReport {
    pub schema: String,
    pub grader_version: String,
    /// The seed every input of this run was drawn from; `--seed` reproduces it.
    pub seed: u64,
    /// RFC 3339, UTC.
    pub finished_at: String,
    /// The folder the graded `.cu` files were read from.
    pub source_root: String,
    /// The folder under the root that was graded: "exercises" (the student's
    /// files), "reference", or a calibration variant such as "reference/slow".
    pub sources: String,
    pub environment: Environment,
    pub score: f64,
    pub max_score: f64,
    pub counts: Counts,
    pub exercises: Vec<ExerciseReport>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    /// "cuda", "sim" or "none" (compiled only).
    pub backend: String,
    pub gpu: Option<String>,
    /// "9.0" for an H100.
    pub compute_capability: Option<String>,
    pub driver: Option<String>,
    /// "NVRTC 12.9", "clang 22.1.8" or "nvcc 13.0".
    pub compiler: Option<String>,
    /// Which compiler that is: "nvrtc", "clang" or "nvcc" (the values of CUDA_LAB_COMPILER).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler_kind: Option<String>,
    /// Where CUDA's device headers (`<cuda_fp16.h>`, ...) come from:
    /// "toolkit /usr/local/cuda/include", "provisioned cache ...", ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_headers: Option<String>,
    /// Why GPU checks did not run, when they did not.
    pub note: Option<String>,
    /// What performance points meant here if kernels could not be timed
    /// (`--perf-without-gpu`, cuda-lab.toml).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Policy>,
    /// How timed checks give their points: `threshold` or `scaled` (the
    /// course's `[performance] credit`, or `--credit`; crate::credit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit: Option<String>,
    /// The sanitizer pass: "on" (the correctness cases also ran on the
    /// simulator), "off", or "grading-run" (the run itself was on the simulator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sanitizer: Option<String>,
    /// Where the performance thresholds came from (`grader calibrate`; a GPU run only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationUsed>,
    /// Whether the GPU's hardware counters witnessed the structure checks
    /// (a GPU run only): "read …", or why not and how to enable them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<String>,
}

/// The calibration a GPU run's performance thresholds came from (decided in
/// `calibrate::choose`); each timed test's `perf.threshold_from` says it again.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CalibrationUsed {
    /// The GPU model it was measured on; `None`: the compiled constants.
    pub gpu: Option<String>,
    pub date: Option<String>,
    /// How it was measured (`grader calibrate`, or what it was carried over from).
    pub measured: Option<String>,
    /// `exact`, `nearest`, `given`, `none` (no calibration anywhere) or `off`.
    pub how: String,
    pub file: Option<String>,
    /// The line the report prints.
    pub line: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Counts {
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
    pub not_run: usize,
    /// Tests left out of the maximum because this machine cannot run them
    /// (policy `exclude` or `simulate`), and the points they are worth elsewhere.
    #[serde(default)]
    pub not_graded: usize,
    #[serde(default)]
    pub not_graded_points: f64,
    /// Structure and performance checks of parts whose correctness failed.
    #[serde(default)]
    pub not_counted: usize,
    /// Checks the simulator cannot run (status `not_graded_here`).
    #[serde(default)]
    pub not_graded_here: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ExerciseReport {
    pub id: String,
    pub title: String,
    pub score: f64,
    pub max_score: f64,
    pub parts: Vec<PartReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PartReport {
    pub name: String,
    /// Relative to the source root, e.g. "exercises/ex01-pi/kernels/pi_shared.cu".
    pub file: String,
    /// SHA-256 of the graded file; `None` when it could not be read.
    pub sha256: Option<String>,
    pub score: f64,
    pub max_score: f64,
    pub compile: CompileReport,
    pub tests: Vec<TestReport>,
    /// What the sanitizer pass did for this part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sanitizer: Option<PartSanitizer>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CompileReport {
    pub status: CompileStatus,
    /// Errors and warnings, pointing at the student's file.
    pub diagnostics: Vec<Diagnostic>,
    /// Set when compiling failed for a reason that is not a diagnostic (file missing, no compiler, ...).
    pub message: Option<String>,
    pub from_cache: bool,
    /// The graded tree has no file for the part (`status` is `error`, nothing
    /// was compiled, `message` says where it was looked for): its checks'
    /// verdict is `missing-file`. Absent (false) in older reports.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
}

impl PartReport {
    /// A part whose scores are left to [`GradeReport::total_up`]: its name,
    /// its file (no digest), how it compiled and its tests.
    pub fn new(
        name: impl Into<String>,
        file: impl Into<String>,
        compile: CompileReport,
        tests: Vec<TestReport>,
    ) -> Self {
        Self {
            name: name.into(),
            file: file.into(),
            sha256: None,
            score: 0.0,
            max_score: 0.0,
            compile,
            tests,
            sanitizer: None,
        }
    }
}

impl CompileReport {
    /// A compile of `status` with no diagnostics, only `message` if any.
    pub fn with(status: CompileStatus, message: Option<String>) -> Self {
        Self { status, diagnostics: Vec::new(), message, from_cache: false, missing: false }
    }

    /// What the part's line says when it did not compile (or had no file).
    pub fn failure_line(&self) -> String {
        let why =
            self.message.clone().unwrap_or_else(|| self.diagnostics.first().map(|d| d.to_string()).unwrap_or_default());
        if self.missing {
            why
        } else {
            format!("did not compile: {why}")
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CompileStatus {
    Ok,
    Error,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TestReport {
    /// "ex01::shared::correct::n=1000003"
    pub name: String,
    pub kind: CheckKind,
    pub status: Status,
    /// The cause of a failure in one word: wrong, timeout, crashed, out-of-bounds, ...
    pub verdict: Option<String>,
    pub message: Option<String>,
    pub score: f64,
    pub max_score: f64,
    pub duration_ms: f64,
    /// On the simulator: the memory behaviour of each kernel the check launched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<kit::profile::MemoryProfile>,
    /// For a structure check measured on a private simulator (kit::measure): each
    /// measured kernel's memory behaviour on the check's small fixed input, on every backend.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured: Vec<kit::profile::MemoryProfile>,
    /// For a timed check: the measured ratio, its threshold and the two kernels' figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf: Option<kit::perf::PerfFigures>,
    /// For a wrong output: where the wrong elements lie (binned), for the report's pictures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<kit::check::Mismatches>,
    /// Left out of the maximum: why, and what it is worth where it can run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_graded: Option<NotGraded>,
    /// "stand-in": a performance check judged by its measured stand-in on the simulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graded_by: Option<String>,
    /// "sanitizer": the verdict is the sanitizer pass's, not the GPU's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_by: Option<String>,
    /// Under the course's `scaled` credit (crate::credit): the share of the
    /// points a timed check earned by its speed, whatever its verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit: Option<f64>,
    /// With `credit`: the figures its share runs between on this GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit_scale: Option<CreditScale>,
}

/// Where a timed check's scaled credit runs on one GPU (crate::credit): every
/// point at `full` or above, none at `none` or under; `reference` is the
/// reference kernel's own figure there. In the check's unit (a ratio or share).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct CreditScale {
    pub reference: f64,
    pub full: f64,
    pub none: f64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    /// Could not run here (no GPU, no timing on the simulator, did not compile).
    Ignored,
    /// Left out by a test filter.
    NotRun,
    /// A structure or performance check of a part whose correctness failed:
    /// it earns nothing whatever it found, so it is never shown as passed.
    NotCounted,
    /// The check cannot run on the simulator (an instruction it does not
    /// run, named in the message): no verdict here, never a failure. Scored
    /// as the course's policy scores checks that need a GPU.
    NotGradedHere,
}

impl Status {
    /// The word a student reads: "pass", "fail", "ignored", "not run",
    /// "not counted", "not graded here".
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Ignored => "ignored",
            Status::NotRun => "not run",
            Status::NotCounted => "not counted",
            Status::NotGradedHere => "not graded here",
        }
    }
}

/// The score line's note on a part the simulator could not grade: what it
/// cannot run (the first such test's message) and what that leaves out.
fn not_graded_here_line(p: &PartReport) -> String {
    let here: Vec<&TestReport> = p.tests.iter().filter(|t| t.status == Status::NotGradedHere).collect();
    let Some(first) = here.first() else { return String::new() };
    let why = first.message.as_deref().unwrap_or("").lines().next().unwrap_or("");
    let points: f64 = here.iter().filter_map(|t| t.not_graded.as_ref()).map(|n| n.points).sum();
    let worth =
        if points > 0.0 { format!("; {} need a GPU", crate::words::rounded_points(points)) } else { String::new() };
    format!("               {} {why}{worth}\n", crate::words::count(here.len(), "check"))
}

/// 18.5, 20, 0.25: as people write points.
fn round(x: f64) -> String {
    let s = format!("{:.2}", x);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl TestReport {
    /// A test with no outcome yet (scores are filled in by `score::score_part`).
    pub fn new(name: String, kind: CheckKind, status: Status) -> Self {
        Self {
            name,
            kind,
            status,
            verdict: None,
            message: None,
            score: 0.0,
            max_score: 0.0,
            duration_ms: 0.0,
            profile: Vec::new(),
            measured: Vec::new(),
            perf: None,
            mismatches: None,
            not_graded: None,
            graded_by: None,
            found_by: None,
            credit: None,
            credit_scale: None,
        }
    }
}

impl GradeReport {
    /// An empty report of this grader version, stamped now; `total_up` fills the sums.
    pub fn new(seed: u64, source_root: &Path, sources: &str, environment: Environment) -> Self {
        Self {
            schema: SCHEMA.into(),
            grader_version: env!("CARGO_PKG_VERSION").into(),
            seed,
            finished_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            source_root: source_root.display().to_string(),
            sources: sources.into(),
            environment,
            score: 0.0,
            max_score: 0.0,
            counts: Counts::default(),
            exercises: Vec::new(),
        }
    }

    /// Sums scores and counts from the tests up.
    pub fn total_up(&mut self) {
        let mut counts = Counts::default();
        for e in &mut self.exercises {
            for p in &mut e.parts {
                p.score = p.tests.iter().map(|t| t.score).sum();
                p.max_score = p.tests.iter().map(|t| t.max_score).sum();
                for t in &p.tests {
                    if let Some(n) = &t.not_graded {
                        counts.not_graded += 1;
                        counts.not_graded_points += n.points;
                    }
                    match t.status {
                        Status::Pass => counts.passed += 1,
                        Status::Fail => counts.failed += 1,
                        Status::Ignored => counts.ignored += 1,
                        Status::NotRun => counts.not_run += 1,
                        Status::NotCounted => counts.not_counted += 1,
                        Status::NotGradedHere => counts.not_graded_here += 1,
                    }
                }
            }
            e.score = e.parts.iter().map(|p| p.score).sum();
            e.max_score = e.parts.iter().map(|p| p.max_score).sum();
        }
        self.score = self.exercises.iter().map(|e| e.score).sum();
        self.max_score = self.exercises.iter().map(|e| e.max_score).sum();
        self.counts = counts;
    }

    /// Writes the JSON atomically (a temporary file, then a rename), so a reader
    /// never sees half a report.
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::atomic::write_json(path, self)?;
        Ok(())
    }

    /// The summary a student reads after the test output.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        out += "\nScores\n";
        for e in &self.exercises {
            out += &format!("  {:<6} {:<58} {:>6.2} / {:<6.2}\n", e.id, e.title, e.score, e.max_score);
            for p in &e.parts {
                let judged = p.tests.iter().any(|t| matches!(t.status, Status::Pass | Status::Fail));
                if p.compile.status != CompileStatus::Error
                    && !judged
                    && p.tests.iter().any(|t| t.status == Status::NotRun)
                {
                    // Filtered out: a 0 here would read as a part that failed.
                    out += &format!("    {:<10} {:<50} {:>6} / {:<6.2}\n", p.name, p.file, "not run", p.max_score);
                    continue;
                }
                out += &format!("    {:<10} {:<50} {:>6.2} / {:<6.2}\n", p.name, p.file, p.score, p.max_score);
                if p.compile.status == CompileStatus::Error {
                    out += &format!("               {}\n", p.compile.failure_line());
                    continue;
                }
                if let Some(t) = p.tests.iter().find(|t| t.status == Status::Fail) {
                    let msg = t.message.as_deref().unwrap_or("").lines().next().unwrap_or("");
                    out += &format!("               first failure: {}: {msg}\n", t.name);
                }
                out += &not_graded_here_line(p);
            }
        }
        let pct = if self.max_score > 0.0 { 100.0 * self.score / self.max_score } else { 0.0 };
        out += &format!("  {:<65} {:>6.2} / {:<6.2} ({pct:.0}%)\n", "total", self.score, self.max_score);
        out += &self.not_graded_lines();
        if self.counts.not_run > 0 && self.environment.compiler.is_some() {
            out += &format!(
                "  {} test{} not run (a filter chose the others): this total counts only the tests that ran; \
                 run without a filter for the grade\n",
                self.counts.not_run,
                if self.counts.not_run == 1 { "" } else { "s" }
            );
        }
        out += &self.counts_line();
        out += "\n";
        if let Some(compiler) = &self.environment.compiler {
            let headers = self.environment.device_headers.as_deref().unwrap_or("none");
            out += &format!("  compiled with {compiler} (device headers: {headers})\n");
        }
        if let Some(note) = &self.environment.note {
            out += &format!("  note: {note}\n");
        }
        if let Some(c) = &self.environment.calibration {
            out += &format!("  {}\n", c.line);
        }
        out
    }

    /// "3 passed, 1 failed, 9 ignored (1 not counted, 2 not graded here), 0 not run":
    /// the ignored count is the harness's (its `test result:` line counts every
    /// test it did not judge as ignored: skipped, not counted, not graded here),
    /// and the parentheses say what those were.
    pub fn counts_line(&self) -> String {
        let c = &self.counts;
        let ignored = c.ignored + c.not_counted + c.not_graded_here;
        let kinds: Vec<String> = [(c.not_counted, "not counted"), (c.not_graded_here, "not graded here")]
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        let kinds = if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join(", ")) };
        format!("  {} passed, {} failed, {ignored} ignored{kinds}, {} not run", c.passed, c.failed, c.not_run)
    }

    /// The total in words where some points could not be graded here, and the policy that decided.
    fn not_graded_lines(&self) -> String {
        let Some(policy) = self.environment.policy.as_ref().filter(|p| p.applied) else { return String::new() };
        let mut out = String::new();
        if self.counts.not_graded > 0 {
            out += &format!(
                "  {} / {} graded here ({:.0} %); {} need a GPU ({} not graded)\n",
                round(self.score),
                round(self.max_score),
                if self.max_score > 0.0 { 100.0 * self.score / self.max_score } else { 0.0 },
                crate::words::rounded_points(self.counts.not_graded_points),
                crate::words::count(self.counts.not_graded, "check")
            );
        }
        out += &format!("  performance without a GPU: {}\n", policy.describe());
        out
    }
}

/// What performance points mean where kernels cannot be timed (`--perf-without-gpu`, see `policy.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PerfWithoutGpu {
    /// Out of the maximum: the score is out of what can be graded here.
    Exclude,
    /// Graded by the check's measured stand-in on the simulator, else excluded.
    Simulate,
    /// Counted as not passed.
    Fail,
}

impl PerfWithoutGpu {
    pub fn name(self) -> &'static str {
        match self {
            PerfWithoutGpu::Exclude => "exclude",
            PerfWithoutGpu::Simulate => "simulate",
            PerfWithoutGpu::Fail => "fail",
        }
    }
}

/// The policy of one run, as the grades JSON records it (`environment.policy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    pub perf_without_gpu: PerfWithoutGpu,
    /// Where it came from: the flag, the course's file, or the default.
    pub set_by: String,
    /// Whether it mattered: the kernels ran where they cannot be timed (the
    /// simulator). Not on a GPU, and not with `--backend none`, which only compiles.
    #[serde(default)]
    pub applied: bool,
}

impl Policy {
    /// One line for the report.
    pub fn describe(&self) -> String {
        format!("--perf-without-gpu {} (set by {})", self.perf_without_gpu.name(), self.set_by)
    }
}

/// A check left out of the maximum, in the grades JSON (`tests[].not_graded`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotGraded {
    /// Why it could not run here ("needs real timing", "too big to simulate", ...).
    pub why: String,
    /// The points it is worth where it can run.
    pub points: f64,
}

/// What the pass did for one part, in the grades JSON (`parts[].sanitizer`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PartSanitizer {
    /// Whether the correctness cases were replayed on the simulator.
    pub ran: bool,
    /// Why it did not run, or where the checking happened instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Correctness cases replayed on the simulator.
    #[serde(default)]
    pub cases: usize,
    /// Correctness cases too big to simulate (checked by the GPU only).
    #[serde(default)]
    pub too_big: usize,
    /// Bugs the simulator proved: each failed its test.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Cases where the simulator computed another answer than the GPU without
    /// proving a bug: reported, not scored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disagreements: Vec<Finding>,
    /// Cases the simulator could not run (an instruction it does not know).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_checked: Vec<Finding>,
    /// CPU time the replays took, in milliseconds.
    #[serde(default)]
    pub cpu_ms: f64,
    /// Of `cases`, those not replayed again: this process had replayed the
    /// same case on the same PTX before (another student's identical file).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reused: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    pub test: String,
    pub verdict: String,
    pub message: String,
}

impl PartSanitizer {
    /// A part whose grading run was on the simulator: every launch was already checked.
    pub fn in_grading_run() -> Self {
        Self { note: Some("graded on the simulator, which checks every launch itself".into()), ..Self::default() }
    }
    /// A part the pass did not replay, and why.
    pub fn not_run(why: &str) -> Self {
        Self { note: Some(why.into()), ..Self::default() }
    }
}
