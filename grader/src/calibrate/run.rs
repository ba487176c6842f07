//! The orchestration of `grader calibrate`: every job of the plan over every
//! seed, through a [`FigureSource`] (the grader grading the variant in a child
//! process, [`GraderRun`]; a fake in tests), then the rule over each check's
//! figures, then the file. No timing code here: a figure is what the grading
//! recorded (`tests[].perf.value`), whatever timing loop the kit has.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use kit::{CheckKind, Exercise};

use super::families::{self, Job, Plan, Role};
use super::file::{CalibrationFile, CheckCalibration, GpuModel, VariantFigures, SCHEMA};
use super::rule;
use crate::report::GradeReport;

/// One timed check's figure from one grading.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The full check name.
    pub check: String,
    /// The check's ratio; `None` where it recorded none (it failed before timing).
    pub value: Option<f64>,
    /// `speedup` or `share`.
    pub kind: Option<String>,
    /// The threshold the grading applied: the compiled constant, calibration off.
    pub compiled: Option<f64>,
    /// The copy yardstick's bandwidth, where the check compared with it.
    pub copy_gbps: Option<f64>,
    /// Why there is no figure.
    pub problem: Option<String>,
}

/// Where figures come from: grading one job's variant with one seed.
pub trait FigureSource {
    fn measure(&mut self, job: &Job, seed: u64) -> Result<Vec<Measured>>;
}

/// Every figure of one check.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckFigures {
    pub kind: Option<String>,
    pub compiled: Option<f64>,
    /// Per variant: its role and (seed, figure) pairs.
    pub variants: BTreeMap<String, (Role, Vec<(u64, f64)>)>,
    /// What went wrong where a figure is missing.
    pub problems: Vec<String>,
}

/// Every figure of a calibration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collected {
    pub checks: BTreeMap<String, CheckFigures>,
    pub copy_gbps: Option<f64>,
}

/// Runs every job of `plan` for every seed through `source`; `progress` hears each step.
pub fn collect(plan: &Plan, seeds: &[u64], source: &mut dyn FigureSource, progress: &mut dyn FnMut(&str)) -> Collected {
    let mut out = Collected {
        checks: plan.checks.iter().map(|c| (c.clone(), CheckFigures::default())).collect(),
        copy_gbps: None,
    };
    let total = plan.jobs.len() * seeds.len();
    let mut done = 0;
    for &seed in seeds {
        for job in &plan.jobs {
            done += 1;
            progress(&format!("[{done}/{total}] seed {seed}: {} ({})", job.variant, job.role.name()));
            let measured = match source.measure(job, seed) {
                Ok(m) => m,
                Err(e) => {
                    for check in &job.checks {
                        let problems = &mut out.checks.entry(check.clone()).or_default().problems;
                        problems.push(format!("{} seed {seed}: not graded: {e:#}", job.variant));
                    }
                    continue;
                }
            };
            for m in measured.into_iter().filter(|m| job.checks.contains(&m.check)) {
                let figures = out.checks.entry(m.check.clone()).or_default();
                figures.kind = figures.kind.take().or(m.kind);
                figures.compiled = figures.compiled.or(m.compiled);
                if job.variant == "reference" {
                    out.copy_gbps = out.copy_gbps.or(m.copy_gbps);
                }
                match m.value {
                    Some(v) => {
                        figures.variants.entry(job.variant.clone()).or_insert((job.role, Vec::new())).1.push((seed, v))
                    }
                    None => figures.problems.push(format!(
                        "{} seed {seed}: no figure ({})",
                        job.variant,
                        m.problem.as_deref().unwrap_or("the check recorded none")
                    )),
                }
            }
        }
    }
    out
}

impl CheckFigures {
    /// The least figure of any correct kernel and the greatest of any slow one.
    pub fn bounds(&self) -> (Option<f64>, Option<f64>) {
        let of = |role: Role| {
            self.variants.values().filter(move |(r, _)| *r == role).flat_map(|(_, v)| v.iter().map(|p| p.1))
        };
        (of(Role::Correct).reduce(f64::min), of(Role::Slow).reduce(f64::max))
    }

    /// The reference's figure: the median of its seeds.
    pub fn reference(&self) -> Option<f64> {
        let (_, figures) = self.variants.get("reference")?;
        let mut v: Vec<f64> = figures.iter().map(|p| p.1).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        (n > 0).then(|| if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
    }

    /// The rule over these figures of check `name` (whose name may promise a bar).
    pub fn calibration(&self, name: &str) -> CheckCalibration {
        self.calibration_keeping(name, None)
    }

    /// As [`Self::calibration`], keeping the decision `committed` (the same GPU
    /// model's committed file) inside the hysteresis band ([`rule::place_keeping`]).
    pub fn calibration_keeping(&self, name: &str, committed: Option<bool>) -> CheckCalibration {
        let (correct, slow) = self.bounds();
        let reference = self.reference();
        let variants = self
            .variants
            .iter()
            .map(|(name, (role, v))| {
                let figures = VariantFigures {
                    role: role.name().into(),
                    seeds: v.iter().map(|p| p.0).collect(),
                    figures: v.iter().map(|p| p.1).collect(),
                };
                (name.clone(), figures)
            })
            .collect();
        let placed = correct.zip(reference).map(|(c, r)| {
            let family =
                rule::Family { reference: r, slowest_correct: c, fastest_slow: slow, promise: rule::promise(name) };
            rule::place_keeping(family, committed)
        });
        let mut why = match &placed {
            Some(p) => p.why.clone(),
            None => "not graded here: the reference recorded no figure on this GPU".into(),
        };
        if !self.problems.is_empty() {
            why += &format!(" (missing: {})", self.problems.join("; "));
        }
        CheckCalibration {
            kind: self.kind.clone().unwrap_or_else(|| "speedup".into()),
            threshold: placed.as_ref().map(|p| p.threshold).filter(|t| t.is_finite()).or(self.compiled).unwrap_or(0.0),
            graded: placed.as_ref().is_some_and(|p| p.graded),
            why,
            compiled_threshold: self.compiled,
            slowest_correct: correct,
            fastest_slow: slow,
            margin_correct: placed.as_ref().map(|p| p.margin_correct).filter(|m| m.is_finite()),
            margin_slow: placed.as_ref().and_then(|p| p.margin_slow),
            reference,
            full_credit: placed.as_ref().map(|p| p.full_credit).filter(|m| m.is_finite()),
            no_credit: placed.as_ref().map(|p| p.no_credit).filter(|m| m.is_finite()),
            variants,
        }
    }
}

/// Places every threshold of `file` again with today's rule, from the
/// figures it recorded (a rule changes without a GPU): each check's
/// thresholds, margins and credit scale; the figures stay as measured. Each
/// decision is the file's own, kept inside the hysteresis band.
pub fn replace(file: &mut CalibrationFile) {
    for (name, c) in file.checks.iter_mut() {
        let committed = Some(c.graded);
        let figures = CheckFigures {
            kind: Some(c.kind.clone()),
            compiled: c.compiled_threshold,
            variants: c
                .variants
                .iter()
                .filter_map(|(v, f)| {
                    let role = Role::parse(&f.role)?;
                    Some((v.clone(), (role, f.seeds.iter().copied().zip(f.figures.iter().copied()).collect())))
                })
                .collect(),
            problems: Vec::new(),
        };
        let placed = figures.calibration_keeping(name, committed);
        *c = CheckCalibration { variants: std::mem::take(&mut c.variants), ..placed };
    }
    file.rule = rule::RULE.into();
}

/// What the file says about how it was made.
pub struct Provenance {
    pub date: String,
    pub command: String,
    pub seeds: Vec<u64>,
}

/// The calibration file of `gpu` from `collected`.
pub fn calibration_file(gpu: GpuModel, collected: &Collected, how: Provenance) -> CalibrationFile {
    calibration_file_keeping(gpu, collected, how, None)
}

/// As [`calibration_file`], each decision kept from `committed` (the same GPU
/// model's committed file, where there is one) inside the hysteresis band.
pub fn calibration_file_keeping(
    mut gpu: GpuModel,
    collected: &Collected,
    how: Provenance,
    committed: Option<&CalibrationFile>,
) -> CalibrationFile {
    let decision = |k: &str| committed.and_then(|f| f.checks.get(k)).map(|c| c.graded);
    gpu.copy_gbps = gpu.copy_gbps.or(collected.copy_gbps);
    CalibrationFile {
        schema: SCHEMA.into(),
        gpu,
        measured: "grader calibrate".into(),
        date: how.date,
        command: how.command,
        grader_version: env!("CARGO_PKG_VERSION").into(),
        seeds: how.seeds,
        rule: rule::RULE.into(),
        checks: collected.checks.iter().map(|(k, f)| (k.clone(), f.calibration_keeping(k, decision(k)))).collect(),
        counters: Default::default(),
    }
}

/// Adds to `file` the checks of `before` (the same GPU model's earlier file)
/// that it lacks, for a calibration made in pieces; returns how many.
pub fn keep_unmeasured(file: &mut CalibrationFile, before: CalibrationFile) -> usize {
    let mut kept = 0;
    for (name, check) in before.checks {
        if let std::collections::btree_map::Entry::Vacant(e) = file.checks.entry(name) {
            e.insert(check);
            kept += 1;
        }
    }
    // The counters' figures too: a run that read none keeps the earlier ones.
    for (name, figures) in before.counters {
        file.counters.entry(name).or_insert(figures);
    }
    kept
}

/// The figures a grades JSON recorded for `job`'s checks.
pub fn figures_of(report: &GradeReport, job: &Job) -> Vec<Measured> {
    let tests = report.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests);
    tests
        .filter(|t| t.kind == CheckKind::Performance && job.checks.contains(&t.name))
        .map(|t| Measured {
            check: t.name.clone(),
            value: t.perf.as_ref().map(|p| p.value).filter(|v| v.is_finite()),
            kind: t.perf.as_ref().map(|p| p.kind.clone()),
            compiled: t.perf.as_ref().map(|p| p.threshold),
            copy_gbps: t
                .perf
                .as_ref()
                .filter(|p| p.kind == "share" && p.baseline_name.contains("copy"))
                .map(|p| p.baseline),
            problem: t.perf.is_none().then(|| {
                let first = t.message.as_deref().and_then(|m| m.lines().next()).unwrap_or("");
                format!("{} {}: {first}", t.status.label(), t.verdict.as_deref().unwrap_or(""))
            }),
        })
        .collect()
}

/// Figures from the grader itself: each job graded in a child process (the
/// timed checks only, calibration off, no sanitizer), its grades JSON read.
pub struct GraderRun {
    pub exe: PathBuf,
    pub root: PathBuf,
    pub exercises: Vec<Exercise>,
    /// Seconds one kernel may run.
    pub timeout: Duration,
    /// Environment for the children (one PTX cache for every staged variant).
    pub envs: Vec<(String, String)>,
    pub work: PathBuf,
}

impl FigureSource for GraderRun {
    fn measure(&mut self, job: &Job, seed: u64) -> Result<Vec<Measured>> {
        let slug: String =
            job.variant.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
        let (root, sources) = if job.files.is_empty() {
            (self.root.clone(), "reference")
        } else {
            let staged = self.work.join("class").join(&slug);
            if !staged.exists() {
                families::stage(&self.root, &self.exercises, job, &staged)?;
            }
            (staged, "exercises")
        };
        let json = self.work.join("grades").join(format!("{slug}-seed{seed}.json"));
        let log = self.work.join("logs").join(format!("{slug}-seed{seed}.log"));
        for dir in [json.parent(), log.parent()].into_iter().flatten() {
            std::fs::create_dir_all(dir)?;
        }
        let mut cmd = grading(&self.exe, &job.exercises, &root, sources, seed, &json);
        if let Some(part) = &job.part {
            cmd.args(["--part", part]);
        }
        cmd.args(["--timeout", &self.timeout.as_secs_f64().to_string(), "--", "::perf::"]);
        cmd.envs(self.envs.iter().map(|(k, v)| (k, v)));
        Ok(figures_of(&graded(cmd, &json, &log)?, job))
    }
}

/// A child grading on the GPU for a calibration: `exercises` of `sources`
/// under `root` with `seed`, its grades into `json`, without a report, a
/// sanitizer pass or a calibration of its own (the caller adds what it
/// selects: `--part`, a `--` filter).
pub(super) fn grading(exe: &Path, exercises: &[String], root: &Path, sources: &str, seed: u64, json: &Path) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(exercises).arg("--root").arg(root);
    cmd.args(["--sources", sources, "--seed", &seed.to_string(), "--json"]).arg(json);
    cmd.args(["--no-report", "--sanitize", "off", "--backend", "cuda", "--calibration", "off"]);
    cmd
}

/// Runs `cmd`, a grading that writes its grades to `json`, its output into
/// `log`; the grades it wrote.
pub(super) fn graded(mut cmd: Command, json: &Path, log: &Path) -> Result<GradeReport> {
    let _ = std::fs::remove_file(json);
    let out = std::fs::File::create(log)?;
    let status = cmd
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .status()
        .with_context(|| format!("starting {}", cmd.get_program().to_string_lossy()))?;
    match std::fs::read(json) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("reading {}", json.display())),
        Err(_) => anyhow::bail!("grading wrote no grades ({status}); see {}", log.display()),
    }
}

/// The GPU model of a device, as a calibration file records it.
pub fn gpu_model(info: &kit::backend::DeviceInfo) -> GpuModel {
    GpuModel {
        name: info.name.clone(),
        compute_capability: format!("{}.{}", info.compute_capability.0, info.compute_capability.1),
        multiprocessors: info.multiprocessors,
        peak_memory_gbps: info.peak_memory_gbps,
        copy_gbps: None,
        driver: info.driver_version.clone(),
    }
}

/// Today in UTC, YYYY-MM-DD.
pub fn today() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()[..10].to_string()
}

/// A summary of `file` for the terminal: each check's threshold and margins.
pub fn summary(file: &CalibrationFile, path: &Path) -> String {
    let mut out = format!("calibration of {} written to {}\n", file.gpu.name, path.display());
    for (name, c) in &file.checks {
        let margin = |m: Option<f64>| m.map_or("-".to_string(), |m| format!("{m:.2}x"));
        out += &format!(
            "  {:<55} {:<9} threshold {:>7.3} (compiled {}), correct >= {}, slow <= {}, margins {} / {}\n",
            name,
            if c.graded { "graded" } else { "NOT GRADED" },
            c.threshold,
            c.compiled_threshold.map_or("-".into(), |t| format!("{t:.3}")),
            c.slowest_correct.map_or("-".into(), |v| format!("{v:.3}")),
            c.fastest_slow.map_or("-".into(), |v| format!("{v:.3}")),
            margin(c.margin_correct),
            margin(c.margin_slow),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Figures by variant, as a GPU might measure them: the H200's ex05.
    struct Fake {
        calls: Vec<(String, u64)>,
    }

    const CHECK: &str = "ex05::stencil::perf::share-of-copy";
    const OTHER: &str = "ex01::shared::perf::faster-than-global-atomics";

    impl FigureSource for Fake {
        fn measure(&mut self, job: &Job, seed: u64) -> Result<Vec<Measured>> {
            self.calls.push((job.variant.clone(), seed));
            let value = match job.variant.as_str() {
                "reference" => Some(0.40 + seed as f64 * 0.001),
                "correct-a" => Some(0.34),
                "slow-a" => Some(0.05),
                "broken" => anyhow::bail!("the grading crashed"),
                _ => None,
            };
            let mut out: Vec<Measured> = job
                .checks
                .iter()
                .filter(|c| *c == CHECK)
                .map(|c| Measured {
                    check: c.clone(),
                    value,
                    kind: Some("share".into()),
                    compiled: Some(0.45),
                    copy_gbps: Some(4000.0),
                    problem: value.is_none().then(|| "fail wrong".into()),
                })
                .collect();
            if job.checks.contains(OTHER) {
                out.push(Measured {
                    check: OTHER.into(),
                    value: Some(8.0),
                    kind: Some("speedup".into()),
                    compiled: Some(2.0),
                    copy_gbps: None,
                    problem: None,
                });
            }
            Ok(out)
        }
    }

    fn job(variant: &str, role: Role, checks: &[&str]) -> Job {
        Job {
            variant: variant.into(),
            role,
            exercises: vec![],
            part: None,
            files: vec![],
            checks: checks.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn every_job_and_seed_is_graded_and_the_rule_places_each_threshold() {
        let plan = Plan {
            checks: BTreeSet::from([CHECK.to_string(), OTHER.to_string()]),
            jobs: vec![
                job("reference", Role::Correct, &[CHECK, OTHER]),
                job("correct-a", Role::Correct, &[CHECK]),
                job("slow-a", Role::Slow, &[CHECK]),
                job("broken", Role::Slow, &[CHECK]),
                job("no-figure", Role::Correct, &[CHECK]),
            ],
        };
        let mut fake = Fake { calls: vec![] };
        let mut lines = Vec::new();
        let collected = collect(&plan, &[1, 2, 3], &mut fake, &mut |l| lines.push(l.to_string()));
        assert_eq!(fake.calls.len(), 15, "five jobs, three seeds");
        assert_eq!(lines[0], "[1/15] seed 1: reference (correct)");
        let f = &collected.checks[CHECK];
        assert_eq!(f.bounds(), (Some(0.34), Some(0.05)));
        assert_eq!(f.variants["reference"].1.len(), 3);
        assert_eq!(f.problems.len(), 6, "the broken and figureless variants, each seed: {:?}", f.problems);
        let file = calibration_file(
            gpu_model(&kit::Gpu::simulator().info().clone()),
            &collected,
            Provenance { date: "2026-12-01".into(), command: "grader calibrate".into(), seeds: vec![1, 2, 3] },
        );
        assert_eq!(file.gpu.copy_gbps, Some(4000.0));
        let c = &file.checks[CHECK];
        assert!(c.graded);
        assert_eq!(c.reference, Some(0.402), "the reference's median");
        assert!((c.threshold - 0.7 * 0.402).abs() < 1e-12, "{}", c.threshold);
        assert!(c.full_credit.unwrap() > c.threshold && c.no_credit == Some(0.05));
        assert_eq!(c.compiled_threshold, Some(0.45));
        assert_eq!(c.variants["slow-a"].figures, vec![0.05; 3]);
        assert_eq!(c.variants["reference"].seeds, vec![1, 2, 3]);
        assert!(c.why.contains("missing"), "{}", c.why);
        // No slow variant: the correct kernels alone decide.
        let o = &file.checks[OTHER];
        assert!((o.threshold - 5.6).abs() < 1e-12 && o.graded && o.kind == "speedup", "{o:?}");
    }

    #[test]
    fn a_calibration_in_pieces_keeps_what_it_did_not_measure() {
        let mut collected = Collected::default();
        collected.checks.insert(CHECK.into(), CheckFigures { compiled: Some(0.45), ..Default::default() });
        let how = || Provenance { date: "d".into(), command: "c".into(), seeds: vec![1] };
        let model = gpu_model(&kit::Gpu::simulator().info().clone());
        let mut now = calibration_file(model.clone(), &collected, how());
        let mut other = Collected::default();
        other.checks.insert(OTHER.into(), CheckFigures { compiled: Some(2.0), ..Default::default() });
        let mut before = calibration_file(model, &other, how());
        before.checks.insert(CHECK.into(), before.checks[OTHER].clone());
        assert_eq!(keep_unmeasured(&mut now, before), 1);
        assert_eq!(now.checks[CHECK].compiled_threshold, Some(0.45), "what was measured now stands");
        assert!(now.checks.contains_key(OTHER));
    }

    #[test]
    fn a_check_no_correct_kernel_measured_is_not_graded() {
        let f = CheckFigures { compiled: Some(2.0), ..Default::default() };
        let c = f.calibration("ex05::stencil::perf::share-of-copy");
        assert!(!c.graded);
        assert_eq!(c.threshold, 2.0);
        assert!(c.why.starts_with("not graded here"));
    }
}
