//! What performance points mean where kernels cannot be timed (the simulator,
//! or no GPU at all): a course decides once, in `cuda-lab.toml` at the root of
//! the repository, and a flag (`--perf-without-gpu`) overrides it.
//!
//! - `exclude`: checks this machine cannot run leave the maximum; the score is
//!   out of what could be graded here, and the report says what needs a GPU.
//! - `simulate`: a performance check with a measured stand-in (the simulator's
//!   memory behaviour of the same lesson, `kit::Check::stand_in`) is graded by
//!   it; one without a stand-in is excluded.
//! - `fail`: performance checks count as not passed (the behaviour before policies).
//!
//! With a GPU nothing changes: every check runs, whatever the policy.
//!
//! The policy is about performance points only. A correctness case too big
//! to simulate, and a correctness or structure check the simulator cannot run
//! at all (an instruction it lacks: status `not_graded_here`), is "not graded
//! here" under every policy: out of the maximum, and it does not hold back the
//! part's structure and performance points (it did not fail). A performance
//! check the simulator cannot run is left out under `exclude` and `simulate`
//! (there is nothing to stand in with) and scored 0 under `fail`; never failed.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

pub use crate::report::{NotGraded, PerfWithoutGpu, Policy};
use crate::report::{Status, TestReport};

/// Why a correctness case does not run on the simulator.
pub const TOO_BIG_TO_SIMULATE: &str = "too big to simulate";

/// The course's configuration file, at the root of the repository.
/// The course's configuration file (crate::course owns the name).
pub use crate::course::CONFIG_FILE;

/// The `[perf-without-gpu]` key of grades of record: `grader batch` and every
/// platform's format. `gradescope`, its first name, is read as well.
pub const BATCH_KEY: &str = "batch-and-platforms";

/// Set by `grader batch` for its workers and children, which get the policy as
/// a flag: where the batch's policy really came from, for their `set_by`.
pub const SET_BY_ENV: &str = "CUDA_LAB_PERF_WITHOUT_GPU_SET_BY";

/// Who the grade is for: each has its own default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// A student's own run (`grader ex01`): `exclude`.
    OwnRun,
    /// A grade of record made without a GPU (`--format gradescope` and the
    /// other platforms' formats, or a batch, as Gradescope's script runs): `simulate`.
    Gradescope,
    /// GitHub Classroom (`--format classroom`): a grade of record like
    /// Gradescope's (`simulate` by default) whose maximum follows the course's
    /// `[platforms] maximum`, as every platform's does.
    Classroom,
}

/// `cuda-lab.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct CourseConfig {
    #[serde(default)]
    perf_without_gpu: PolicySection,
    /// `[class-report]`: read by crate::class_report.
    #[serde(default)]
    #[allow(dead_code)]
    class_report: Option<toml::Value>,
    /// `[platforms]`: read by crate::platforms::config.
    #[serde(default)]
    #[allow(dead_code)]
    platforms: Option<toml::Value>,
    /// `[performance]`: read by crate::credit.
    #[serde(default)]
    #[allow(dead_code)]
    performance: Option<toml::Value>,
    /// `[headers]`: read by crate::headers.
    #[serde(default)]
    #[allow(dead_code)]
    headers: Option<toml::Value>,
}

/// `[perf-without-gpu]`: the policy per audience.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct PolicySection {
    own_runs: Option<PerfWithoutGpu>,
    /// [`BATCH_KEY`]; `gradescope` is its old name.
    #[serde(alias = "gradescope")]
    batch_and_platforms: Option<PerfWithoutGpu>,
}

/// The policy for `audience`: the flag, else `cuda-lab.toml` under `root`, else the default.
pub fn resolve(root: &Path, flag: Option<PerfWithoutGpu>, audience: Audience) -> Result<Policy> {
    if let Some(p) = flag {
        // A batch's worker gets the batch's policy as a flag: the batch says where it came from.
        let set_by = std::env::var(SET_BY_ENV).ok().filter(|s| !s.is_empty());
        return Ok(Policy {
            perf_without_gpu: p,
            set_by: set_by.unwrap_or_else(|| "--perf-without-gpu".into()),
            applied: false,
        });
    }
    let path = root.join(CONFIG_FILE);
    let config: CourseConfig = match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).with_context(|| format!("reading the course settings {}", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => CourseConfig::default(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let (key, set, default) = match audience {
        Audience::OwnRun => ("own-runs", config.perf_without_gpu.own_runs, PerfWithoutGpu::Exclude),
        Audience::Gradescope | Audience::Classroom => {
            (BATCH_KEY, config.perf_without_gpu.batch_and_platforms, PerfWithoutGpu::Simulate)
        }
    };
    Ok(match set {
        Some(p) => {
            Policy { perf_without_gpu: p, set_by: format!("{CONFIG_FILE} [perf-without-gpu] {key}"), applied: false }
        }
        None => Policy {
            perf_without_gpu: default,
            set_by: format!("the default ({key} is not set in {CONFIG_FILE})"),
            applied: false,
        },
    })
}

/// What a run does with a check that cannot run here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instead {
    /// Run its measured stand-in on the simulator.
    StandIn,
    /// Leave it out of the maximum.
    Exclude,
    /// Count it as not passed (shown as ignored, scored 0).
    Ignore,
}

impl Policy {
    /// What to do with `check`, which this machine cannot run.
    pub fn instead(&self, check: &kit::Check) -> Instead {
        if !self.applied {
            return Instead::Ignore;
        }
        match self.perf_without_gpu {
            PerfWithoutGpu::Fail => Instead::Ignore,
            PerfWithoutGpu::Simulate if check.kind == kit::CheckKind::Performance && check.stand_in.is_some() => {
                Instead::StandIn
            }
            PerfWithoutGpu::Simulate | PerfWithoutGpu::Exclude => Instead::Exclude,
        }
    }

    /// Records in `t` how the policy judged it: by its stand-in, or (ignored
    /// for `skipped_for`, or for the reason its check gave) left out.
    pub fn annotate(&self, t: &mut TestReport, skipped_for: Option<&str>, by_stand_in: bool) {
        if by_stand_in {
            t.graded_by = Some("stand-in".into());
            let message = t.message.take().unwrap_or_default();
            t.message = Some(stand_in_note(t.status == Status::Pass, &message));
        }
        if t.status == Status::NotGradedHere {
            return self.not_graded_here(t);
        }
        let why = skipped_for.map(str::to_string).or_else(|| t.message.clone());
        self.exclude_if_ignored(t, why.as_deref().unwrap_or("cannot run here"));
    }

    /// A check the simulator cannot run (`crate::not_graded_here`): out of the
    /// maximum, except a performance check under `fail` (then it stays in and
    /// scores nothing, as the checks that need a GPU do). Where the policy does
    /// not apply (a GPU run, or only compiling) it is left out: nothing failed,
    /// and nothing else could judge it.
    pub fn not_graded_here(&self, t: &mut TestReport) {
        if self.applied && self.perf_without_gpu == PerfWithoutGpu::Fail && t.kind == kit::CheckKind::Performance {
            return;
        }
        let first = t.message.as_deref().and_then(|m| m.lines().next()).unwrap_or("not graded here");
        let why = first.strip_prefix("not graded here: ").unwrap_or(first).to_string();
        t.not_graded = Some(NotGraded { why, points: 0.0 });
    }

    /// Marks `t` (ignored: it could not run here, for `why`) as not graded,
    /// unless the policy counts it as failed. Its points are moved out of the
    /// maximum by `score::score_part`. Left out: a performance check (no timing
    /// here) unless the policy is `fail`, and a correctness case too big for
    /// the simulator under every policy (the part's smaller cases ran there:
    /// `fail` is about performance points only, and a case that could not run
    /// did not fail, so it holds back no structure points either).
    pub fn exclude_if_ignored(&self, t: &mut TestReport, why: &str) {
        let performance = t.kind == kit::CheckKind::Performance && self.perf_without_gpu != PerfWithoutGpu::Fail;
        if self.applied && t.status == Status::Ignored && (performance || why == TOO_BIG_TO_SIMULATE) {
            t.not_graded = Some(NotGraded { why: why.to_string(), points: 0.0 });
        }
    }
}

/// The run's header line on performance: how timed checks are graded here
/// (timed, skipped, by stand-ins, or failed), with the policy's origin, and
/// which credit applies. `ran` is whether kernels run at all (not `--backend
/// none`), `times` whether this machine times them.
pub fn header(policy: &Policy, ran: bool, times: bool, credit: crate::credit::Credit) -> String {
    let how = if times {
        "timed on this GPU".to_string()
    } else if !ran {
        "not run (--backend none compiles and checks the PTX only)".to_string()
    } else {
        let what = match policy.perf_without_gpu {
            PerfWithoutGpu::Exclude => "skipped here: timed checks leave the maximum (a GPU grades them)",
            PerfWithoutGpu::Simulate => {
                "graded by stand-ins here: the simulator's measured memory behaviour where a timed check has one, \
                 the others leave the maximum"
            }
            PerfWithoutGpu::Fail => "failed here: timed checks stay in the maximum and score 0",
        };
        format!("{what} (--perf-without-gpu {}, set by {})", policy.perf_without_gpu.name(), policy.set_by)
    };
    format!(
        "performance: {how}\n{}{}",
        crate::credit::Credit::describe(credit),
        if times { "" } else { " (where a GPU times the kernels)" }
    )
}

/// The gradebook's note on points this grade left out, and the policy that did.
pub fn gradebook_note(report: &crate::report::GradeReport) -> Option<String> {
    let policy = report.environment.policy.as_ref().filter(|p| p.applied)?;
    (report.counts.not_graded > 0).then(|| {
        format!(
            "{} not graded without a GPU ({}; --perf-without-gpu {})",
            crate::words::points(report.counts.not_graded_points),
            crate::words::count(report.counts.not_graded, "check"),
            policy.perf_without_gpu.name()
        )
    })
}

/// The message of a performance check graded by its stand-in.
fn stand_in_note(passed: bool, message: &str) -> String {
    let head = "judged by the simulator's measured memory behaviour (this machine cannot time kernels; \
                the course's policy is `simulate`)";
    if passed {
        if message.is_empty() {
            head.to_string()
        } else {
            format!("{head}: {message}")
        }
    } else {
        format!("{message}\n{head}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_config(text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
        dir
    }

    #[test]
    fn defaults_per_audience() {
        let dir = tempfile::tempdir().unwrap();
        let own = resolve(dir.path(), None, Audience::OwnRun).unwrap();
        assert_eq!(own.perf_without_gpu, PerfWithoutGpu::Exclude);
        let gs = resolve(dir.path(), None, Audience::Gradescope).unwrap();
        assert_eq!(gs.perf_without_gpu, PerfWithoutGpu::Simulate);
        assert!(gs.set_by.contains("default"), "{}", gs.set_by);
    }

    #[test]
    fn the_course_file_then_the_flag() {
        let dir = write_config("[perf-without-gpu]\nown-runs = \"fail\"\ngradescope = \"exclude\"\n");
        let own = resolve(dir.path(), None, Audience::OwnRun).unwrap();
        assert_eq!(own.perf_without_gpu, PerfWithoutGpu::Fail);
        assert!(own.set_by.contains("cuda-lab.toml"));
        assert_eq!(resolve(dir.path(), None, Audience::Gradescope).unwrap().perf_without_gpu, PerfWithoutGpu::Exclude);
        let flagged = resolve(dir.path(), Some(PerfWithoutGpu::Simulate), Audience::OwnRun).unwrap();
        assert_eq!(flagged.perf_without_gpu, PerfWithoutGpu::Simulate);
    }

    #[test]
    fn a_misspelt_setting_is_an_error_not_a_silent_default() {
        let dir = write_config("[perf-without-gpu]\nown-run = \"fail\"\n");
        let err = format!("{:#}", resolve(dir.path(), None, Audience::OwnRun).unwrap_err());
        assert!(err.contains("own-run"), "{err}");
        let dir = write_config("[perf-without-gpu]\nown-runs = \"skip\"\n");
        assert!(resolve(dir.path(), None, Audience::OwnRun).is_err());
    }

    #[test]
    fn the_gradebook_notes_what_was_left_out_and_by_which_policy() {
        let env = crate::report::Environment {
            policy: Some(Policy { perf_without_gpu: PerfWithoutGpu::Simulate, set_by: "x".into(), applied: true }),
            ..Default::default()
        };
        let mut r = crate::report::GradeReport::new(1, Path::new("."), "exercises", env);
        assert_eq!(gradebook_note(&r), None);
        r.counts.not_graded = 2;
        r.counts.not_graded_points = 5.0;
        let note = gradebook_note(&r).unwrap();
        assert!(note.contains("5.00 points not graded") && note.contains("simulate"), "{note}");
        r.environment.policy.as_mut().unwrap().applied = false;
        assert_eq!(gradebook_note(&r), None, "on a GPU nothing is left out");
    }

    #[test]
    fn what_the_simulator_cannot_run_is_scored_as_what_needs_a_gpu() {
        let here = |kind| TestReport {
            message: Some("not graded here: the simulator cannot run `x` (PTX line 3); a GPU grades this check".into()),
            ..TestReport::new("t".into(), kind, Status::NotGradedHere)
        };
        use kit::CheckKind::{Correctness, Performance};
        for (kind, p, applied, left_out) in [
            (Correctness, PerfWithoutGpu::Exclude, true, true),
            (Correctness, PerfWithoutGpu::Simulate, true, true),
            // `fail` is about performance points: a correctness case stays not graded.
            (Correctness, PerfWithoutGpu::Fail, true, true),
            (Performance, PerfWithoutGpu::Fail, true, false),
            (Performance, PerfWithoutGpu::Exclude, true, true),
            (Performance, PerfWithoutGpu::Fail, false, true),
        ] {
            let policy = Policy { perf_without_gpu: p, set_by: "x".into(), applied };
            let mut t = here(kind);
            policy.annotate(&mut t, None, false);
            assert_eq!(t.not_graded.is_some(), left_out, "{kind:?} {p:?}, applied {applied}");
            assert_eq!(t.status, Status::NotGradedHere, "never failed");
            if let Some(n) = &t.not_graded {
                assert!(n.why.starts_with("the simulator cannot run `x`"), "{}", n.why);
            }
        }
    }

    /// Issue 47: `fail` gave the reference 28.70/50 because its correctness
    /// cases too big to simulate counted as not passed and held back its
    /// structure points. Under every policy they are not graded here; only
    /// performance follows the policy.
    #[test]
    fn fail_fails_only_performance_points() {
        use kit::CheckKind::{Correctness, Performance, Structure};
        for p in [PerfWithoutGpu::Exclude, PerfWithoutGpu::Simulate, PerfWithoutGpu::Fail] {
            let policy = Policy { perf_without_gpu: p, set_by: "x".into(), applied: true };
            let mut tests = vec![
                TestReport::new("small".into(), Correctness, Status::Pass),
                TestReport::new("big".into(), Correctness, Status::Ignored),
                TestReport::new("shape".into(), Structure, Status::Pass),
                TestReport::new("fast".into(), Performance, Status::Ignored),
            ];
            policy.exclude_if_ignored(&mut tests[1], TOO_BIG_TO_SIMULATE);
            policy.exclude_if_ignored(&mut tests[3], "needs real timing");
            assert!(tests[1].not_graded.is_some(), "{p:?}: a case too big to simulate is not graded here");
            crate::score::score_part(10.0, &mut tests);
            let (score, max): (f64, f64) =
                (tests.iter().map(|t| t.score).sum(), tests.iter().map(|t| t.max_score).sum());
            let perf_points = 2.5;
            match p {
                // Exactly the performance points are lost, nothing else.
                PerfWithoutGpu::Fail => assert!((max - score - perf_points).abs() < 1e-9, "{score}/{max}"),
                _ => assert!((max - score).abs() < 1e-9, "{p:?}: {score}/{max}"),
            }
            assert_eq!(tests[2].score, tests[2].max_score, "{p:?}: the structure point counts");
        }
    }

    #[test]
    fn the_header_says_how_performance_is_graded_here_and_which_credit() {
        use crate::credit::Credit;
        let p = |perf| Policy {
            perf_without_gpu: perf,
            set_by: "cuda-lab.toml [perf-without-gpu] own-runs".into(),
            applied: true,
        };
        let sim = header(&p(PerfWithoutGpu::Simulate), true, false, Credit::Scaled);
        assert!(sim.starts_with("performance: graded by stand-ins here") && !sim.contains("skipped"), "{sim}");
        assert!(sim.contains("set by cuda-lab.toml") && sim.contains("credit `scaled`"), "{sim}");
        assert!(header(&p(PerfWithoutGpu::Exclude), true, false, Credit::Threshold).contains("skipped here"));
        assert!(header(&p(PerfWithoutGpu::Fail), true, false, Credit::Threshold).contains("failed here"));
        let gpu = header(&p(PerfWithoutGpu::Fail), true, true, Credit::Threshold);
        assert!(gpu.starts_with("performance: timed on this GPU\ncredit `threshold`"), "{gpu}");
    }

    #[test]
    fn set_by_names_the_real_origin_and_the_old_key_still_works() {
        let dir = write_config("[perf-without-gpu]\nbatch-and-platforms = \"fail\"\n");
        let p = resolve(dir.path(), None, Audience::Gradescope).unwrap();
        assert_eq!(p.perf_without_gpu, PerfWithoutGpu::Fail);
        assert_eq!(p.set_by, "cuda-lab.toml [perf-without-gpu] batch-and-platforms");
        let old = write_config("[perf-without-gpu]\ngradescope = \"exclude\"\n");
        assert_eq!(resolve(old.path(), None, Audience::Gradescope).unwrap().perf_without_gpu, PerfWithoutGpu::Exclude);
        let none = tempfile::tempdir().unwrap();
        let d = resolve(none.path(), None, Audience::Gradescope).unwrap();
        assert!(d.set_by.starts_with("the default") && d.set_by.contains("batch-and-platforms"), "{}", d.set_by);
        let flag = resolve(none.path(), Some(PerfWithoutGpu::Fail), Audience::Gradescope).unwrap();
        assert_eq!(flag.set_by, "--perf-without-gpu");
    }

    #[test]
    fn the_repository_file_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let own = resolve(&root, None, Audience::OwnRun).unwrap();
        assert_eq!(own.perf_without_gpu, PerfWithoutGpu::Exclude);
        assert_eq!(resolve(&root, None, Audience::Gradescope).unwrap().perf_without_gpu, PerfWithoutGpu::Simulate);
    }
}
