//! Time limits of correctness checks that follow from the work: a multiple of
//! the reference kernel's time on the same input, with a floor, never above
//! `--timeout`. An endless kernel then holds its GPU for about a second
//! instead of the whole `--timeout` (10 s by default), and a slow kernel that
//! finishes is not cut as long as it is within the multiple of the reference.
//!
//! `grader batch --timeout-from-reference MULT` grades the reference once,
//! before the class, with the batch's seed and backend (so on the same inputs
//! and the same GPU), correctness checks only, and writes each check's limit
//! into `OUT/check-limits.json`; every worker and child gets the file's path
//! in [`ENV`] and limits each check's launches with `kit::Gpu::limit_check`.
//! The reference's time is its check's wall time (inputs, launches, reads and
//! the comparison): an upper bound of its kernels' time, so the limit errs on
//! the generous side. A check the reference did not pass gets no limit of its
//! own (`--timeout` applies).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result};
use kit::CheckKind;
use serde::{Deserialize, Serialize};

use crate::report::{GradeReport, Status};

/// The environment variable that names the limits file of a batch's processes.
pub const ENV: &str = "CUDA_LAB_CHECK_LIMITS";
pub const FILE_NAME: &str = "check-limits.json";
pub const SCHEMA: &str = "cuda-lab.check-limits/1";

/// `--timeout-from-reference`: whether a batch's correctness checks get limits
/// from the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FromReference {
    /// `off`: every check keeps `--timeout`.
    Off,
    /// Not given: [`DEFAULT_MULTIPLE`] where the batch grades on a GPU and the
    /// course's reference/ is at hand, otherwise off (on the simulator the
    /// reference's grading costs more than the endless kernels it would cut).
    Default,
    /// `MULT`, asked for: a batch that cannot measure the reference stops.
    Multiple(f64),
}

/// The default multiple of the reference's check time. On the H100, the
/// slowest finishing check of the variants corpus (its slow kernels included)
/// and of a realistic class of 40 took 5.2× the reference's time wherever a
/// check took over 0.2 s (shorter ones are under the 1 s floor whatever their
/// ratio): 50 leaves almost ten times that (docs/ta-guide.md, "Time limits
/// from the reference").
pub const DEFAULT_MULTIPLE: f64 = 50.0;

impl std::str::FromStr for FromReference {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "off" => Ok(FromReference::Off),
            v => match v.parse::<f64>() {
                Ok(m) if m.is_finite() && m > 0.0 => Ok(FromReference::Multiple(m)),
                _ => Err(format!("`{v}` is neither a positive multiple nor `off`")),
            },
        }
    }
}

/// How a limit follows from the reference's time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    pub multiple: f64,
    pub floor_s: f64,
    /// `--timeout`: no limit is longer.
    pub ceiling_s: f64,
}

/// `OUT/check-limits.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckLimits {
    pub schema: String,
    pub rule: Rule,
    pub seed: u64,
    /// Check name -> the reference's check time (seconds) and the limit (seconds).
    pub checks: BTreeMap<String, Limit>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub reference_s: f64,
    pub limit_s: f64,
}

impl Rule {
    pub fn limit(&self, reference_s: f64) -> f64 {
        (self.multiple * reference_s).max(self.floor_s).min(self.ceiling_s)
    }
}

/// The limits of every correctness check the reference passed in `reference`.
pub fn derive(reference: &GradeReport, rule: Rule) -> CheckLimits {
    let checks = reference
        .exercises
        .iter()
        .flat_map(|e| &e.parts)
        .flat_map(|p| &p.tests)
        .filter(|t| t.kind == CheckKind::Correctness && t.status == Status::Pass)
        .map(|t| {
            let reference_s = t.duration_ms / 1e3;
            (t.name.clone(), Limit { reference_s, limit_s: rule.limit(reference_s) })
        })
        .collect();
    CheckLimits { schema: SCHEMA.into(), rule, seed: reference.seed, checks }
}

/// What a batch needs to grade the reference with.
pub struct Measure<'a> {
    pub exe: &'a Path,
    /// The course's folder (its reference/).
    pub root: &'a Path,
    pub exercises: &'a [kit::Exercise],
    pub seed: u64,
    /// `--backend`'s name.
    pub backend: &'a str,
    /// `CUDA_VISIBLE_DEVICES` of the run (the batch's first GPU).
    pub gpu: Option<&'a str>,
    pub rule: Rule,
}

/// Grades the reference's correctness checks once and writes the limits into
/// `out/check-limits.json`; returns its path.
pub fn measure(m: &Measure, out: &Path) -> Result<PathBuf> {
    let json = out.join("check-limits-reference.json");
    let mut cmd = std::process::Command::new(m.exe);
    cmd.args(m.exercises.iter().map(|e| e.id))
        .args(["--reference", "--backend", m.backend, "--seed", &m.seed.to_string(), "--sanitize", "off"])
        .args(["--timeout", &m.rule.ceiling_s.to_string(), "--no-report", "--json"])
        .arg(&json)
        .arg("--root")
        .arg(m.root)
        .args(["--", "::correct::"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Some(gpu) = m.gpu {
        cmd.env("CUDA_VISIBLE_DEVICES", gpu);
    }
    let status = cmd.status().context("grading the reference for the checks' time limits")?;
    let bytes = std::fs::read(&json)
        .with_context(|| format!("grading the reference for the checks' time limits failed ({status})"))?;
    let reference: GradeReport = serde_json::from_slice(&bytes).context("reading the reference's grades")?;
    let limits = derive(&reference, m.rule);
    let path = out.join(FILE_NAME);
    crate::atomic::write_json(&path, &limits)?;
    Ok(path)
}

pub fn load(path: &Path) -> Result<CheckLimits> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not a check-limits file", path.display()))
}

/// This process's limit for `check` (from the file [`ENV`] names), if any.
pub fn for_check(check: &str) -> Option<Duration> {
    static LIMITS: OnceLock<Option<CheckLimits>> = OnceLock::new();
    let limits = LIMITS.get_or_init(|| std::env::var_os(ENV).and_then(|p| load(Path::new(&p)).ok()));
    limits.as_ref()?.checks.get(check).map(|l| Duration::from_secs_f64(l.limit_s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::TestReport;

    #[test]
    fn the_option_takes_a_positive_multiple_or_off() {
        assert_eq!("off".parse(), Ok(FromReference::Off));
        assert_eq!("20".parse(), Ok(FromReference::Multiple(20.0)));
        for bad in ["0", "-3", "inf", "NaN", "fast"] {
            assert!(bad.parse::<FromReference>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_limit_is_a_multiple_of_the_references_time_between_the_floor_and_the_timeout() {
        let rule = Rule { multiple: 50.0, floor_s: 1.0, ceiling_s: 10.0 };
        assert_eq!(rule.limit(0.004), 1.0, "the floor");
        assert_eq!(rule.limit(0.1), 5.0);
        assert_eq!(rule.limit(0.5), 10.0, "never above --timeout");

        let test =
            |name: &str, kind, status, ms| TestReport { duration_ms: ms, ..TestReport::new(name.into(), kind, status) };
        let mut r = GradeReport::new(3, Path::new("/course"), "reference", Default::default());
        r.exercises = vec![crate::report::ExerciseReport {
            id: "ex01".into(),
            title: String::new(),
            score: 0.0,
            max_score: 0.0,
            parts: vec![crate::report::PartReport {
                name: "global".into(),
                file: String::new(),
                sha256: None,
                score: 0.0,
                max_score: 0.0,
                compile: crate::report::CompileReport {
                    status: crate::report::CompileStatus::Ok,
                    diagnostics: vec![],
                    message: None,
                    from_cache: false,
                    missing: false,
                },
                tests: vec![
                    test("ex01::global::correct::n=100", CheckKind::Correctness, Status::Pass, 2.0),
                    test("ex01::global::correct::n=4194311", CheckKind::Correctness, Status::Pass, 120.0),
                    test("ex01::global::correct::broken", CheckKind::Correctness, Status::Fail, 5.0),
                    test("ex01::global::structure::global-atomics", CheckKind::Structure, Status::Pass, 3.0),
                ],
                sanitizer: None,
            }],
        }];
        let limits = derive(&r, rule);
        let names: Vec<&str> = limits.checks.keys().map(String::as_str).collect();
        assert_eq!(names, ["ex01::global::correct::n=100", "ex01::global::correct::n=4194311"]);
        assert_eq!(limits.checks["ex01::global::correct::n=4194311"].limit_s, 6.0);
        let dir = tempfile::tempdir().unwrap();
        crate::atomic::write_json(&dir.path().join(FILE_NAME), &limits).unwrap();
        assert_eq!(load(&dir.path().join(FILE_NAME)).unwrap(), limits);
    }
}
