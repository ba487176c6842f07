//! Grades one part of one submission in a child process (this same binary,
//! `grader <ex> --part <p> --root <staging>`), and turns whatever happened into
//! a grades JSON: the child's own, or one that names why there is none.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::Result;
use clap::ValueEnum;
use kit::{Exercise, Part};

use crate::atomic;
use crate::grade::BackendChoice;
use crate::process::child::{self, ChildRun, Ending, Limits};
use crate::report::{
    CompileReport, CompileStatus, Environment, ExerciseReport, GradeReport, PartReport, Status, TestReport,
};
use crate::verdict::Verdict;

/// The grader's exit code for a usage or setup error (main.rs).
const SETUP_ERROR_EXIT: i32 = 2;

/// The grader could not grade at all; no result is written, so a resumed
/// batch grades this part once the cause is fixed.
#[derive(Debug, thiserror::Error)]
#[error("the grader could not run here: {0}")]
pub struct SetupFailed(pub String);

/// What every child of a batch shares.
#[derive(Debug, Clone)]
pub struct ChildSettings {
    /// The grader binary the children run (normally `current_exe()`).
    pub exe: PathBuf,
    pub seed: u64,
    pub backend: BackendChoice,
    /// `--timeout`: how long one kernel may run.
    pub kernel_timeout: Duration,
    pub limits: Limits,
    /// One PTX cache for every staging root, so compiles done ahead are found.
    pub ptx_cache: PathBuf,
    /// The folder of the NVRTC library the parent found, put first on the
    /// children's library path: finding it again costs each child ~0.7 s
    /// (ptx-build asks Python where pip put it).
    pub nvrtc_dir: Option<PathBuf>,
    /// Passed to every child as they are: `--sanitize`, `--perf-without-gpu`.
    pub grading_flags: Vec<String>,
    /// Where the GPU lock files are (`kit::gpu_lock`), when workers share GPUs.
    pub gpu_locks: Option<PathBuf>,
    /// `OUT/check-limits.json` with `--timeout-from-reference` (crate::check_limits).
    pub check_limits: Option<PathBuf>,
    /// The course's cuda-lab.toml, whose `[headers]` every child grades with
    /// (crate::headers::COURSE_CONFIG_ENV), never a submission's own.
    pub course_config: Option<PathBuf>,
    /// Where the GPU's counters are kept for the batch's parts, and the
    /// exercises one profiler run covers (crate::counters): a submission is
    /// profiled once, a kernel handed in twice once.
    pub counters: Option<(PathBuf, String)>,
    /// The shapes every structure check of the batch measures
    /// (kit::SHAPES_SECRET_ENV): one draw for the whole class, so that
    /// students are measured alike and kept counters fit every part.
    pub shapes_secret: u64,
}

impl ChildSettings {
    /// The environment of every process of the batch (children and workers).
    /// Returns the GPU lock file handed down to the process
    /// ([`super::lock_hold`]): keep it until the process has been reaped.
    pub fn child_env(&self, cmd: &mut Command, gpu: Option<&str>) -> Option<std::fs::File> {
        cmd.env(crate::grade::PTX_CACHE_ENV, &self.ptx_cache).env("NO_COLOR", "1");
        cmd.env(kit::SHAPES_SECRET_ENV, format!("{:x}", self.shapes_secret));
        // The course's `[headers]`, not a submission's own cuda-lab.toml (crate::headers).
        if let Some(config) = &self.course_config {
            cmd.env(crate::headers::COURSE_CONFIG_ENV, config);
        }
        if let Some(gpu) = gpu {
            cmd.env("CUDA_VISIBLE_DEVICES", gpu);
        }
        if let Some(limits) = &self.check_limits {
            cmd.env(crate::check_limits::ENV, limits);
        }
        if let Some((dir, scope)) = &self.counters {
            cmd.env(kit::counters::cache::ENV, dir).env(crate::counters::SCOPE_ENV, scope);
        }
        let lock = self.gpu_locks.as_ref().map(|dir| super::lock_hold::lock_file(dir, gpu));
        if let Some(path) = &lock {
            cmd.env(kit::gpu_lock::ENV, path);
        }
        if let Some(dir) = &self.nvrtc_dir {
            let inherited = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
            let paths = std::iter::once(dir.clone()).chain(std::env::split_paths(&inherited));
            cmd.env("LD_LIBRARY_PATH", std::env::join_paths(paths).unwrap_or_default());
        }
        // Without it the process opens the file itself: the lock then ends with it.
        lock.and_then(|path| super::lock_hold::hand_down(cmd, &path).ok())
    }
}

/// One (submission, exercise, part).
pub struct PartJob<'a> {
    pub exercise: &'a Exercise,
    pub part: &'a Part,
    /// The submission's staging root.
    pub root: PathBuf,
    /// Where its grades JSON goes; present means done.
    pub result: PathBuf,
}

impl PartJob<'_> {
    pub fn log_path(&self) -> PathBuf {
        self.result.with_extension("log")
    }

    pub fn scratch_path(&self) -> PathBuf {
        self.result.with_extension("child.json")
    }

    pub fn file(&self) -> String {
        format!("exercises/{}/{}", self.exercise.folder_name(), self.part.file)
    }

    /// The finished result of an earlier run, if there is a whole one.
    pub fn existing_result(&self) -> Option<GradeReport> {
        let report: GradeReport = serde_json::from_slice(&std::fs::read(&self.result).ok()?).ok()?;
        let (ex, part) = single_part(&report)?;
        (ex.id == self.exercise.id && part.name == self.part.name).then_some(report)
    }

    /// The child command; `gpu` becomes its `CUDA_VISIBLE_DEVICES`. The file
    /// is the GPU lock handed down to it, to keep until the child is reaped.
    pub fn command(&self, settings: &ChildSettings, gpu: Option<&str>) -> (Command, Option<std::fs::File>) {
        let backend = settings.backend.to_possible_value().expect("every backend has a name");
        let mut cmd = Command::new(&settings.exe);
        cmd.arg(self.exercise.id)
            .args(["--part", self.part.name])
            .arg("--root")
            .arg(&self.root)
            .args(["--seed", &settings.seed.to_string()])
            .arg("--json")
            .arg(self.scratch_path())
            .args(["--backend", backend.get_name()])
            .args(["--timeout", &settings.kernel_timeout.as_secs_f64().to_string()])
            .arg("--no-report")
            .args(&settings.grading_flags)
            .args(["--", "--quiet", "--color", "never"])
            .current_dir(&self.root);
        let lock = settings.child_env(&mut cmd, gpu);
        (cmd, lock)
    }

    /// Takes the result a batch worker wrote: checks it is this part's, writes
    /// the log, then the result (both atomically). `None`: there is no whole one.
    pub fn accept_worker_result(&self, log: &str) -> Result<Option<GradeReport>> {
        let written =
            std::fs::read(self.scratch_path()).ok().and_then(|b| serde_json::from_slice::<GradeReport>(&b).ok());
        let Some(report) = written.filter(|r| {
            single_part(r).is_some_and(|(ex, part)| ex.id == self.exercise.id && part.name == self.part.name)
        }) else {
            return Ok(None);
        };
        if let Some(dir) = self.result.parent() {
            std::fs::create_dir_all(dir)?;
        }
        atomic::write(&self.log_path(), log.as_bytes())?;
        atomic::write_json(&self.result, &report)?;
        let _ = std::fs::remove_file(self.scratch_path());
        Ok(Some(report))
    }

    /// Runs the child and writes the log, then the result (both atomically).
    pub fn grade(&self, settings: &ChildSettings, gpu: Option<&str>) -> Result<GradeReport> {
        let (cmd, _lock) = self.command(settings, gpu);
        self.grade_with(cmd, settings)
    }

    /// [`grade`](Self::grade) with any command in place of the grader (tests
    /// use a shell that hangs, crashes or floods).
    pub fn grade_with(&self, cmd: Command, settings: &ChildSettings) -> Result<GradeReport> {
        let scratch = self.scratch_path();
        let _ = std::fs::remove_file(&scratch);
        if let Some(dir) = self.result.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let run = child::run_limited(cmd, settings.limits);
        let log = match &run {
            Ok(run) => {
                format!("{}\n---- {} after {:.1} s ----\n", run.log(), run.ending.describe(), run.elapsed.as_secs_f64())
            }
            Err(e) => format!("could not start {}: {e}\n", settings.exe.display()),
        };
        atomic::write(&self.log_path(), log.as_bytes())?;
        let report = match run {
            Ok(run) => self.report_of(&run, &scratch, settings)?,
            Err(e) => return Err(SetupFailed(format!("could not start {}: {e}", settings.exe.display())).into()),
        };
        atomic::write_json(&self.result, &report)?;
        let _ = std::fs::remove_file(&scratch);
        Ok(report)
    }

    fn report_of(&self, run: &ChildRun, scratch: &Path, settings: &ChildSettings) -> Result<GradeReport> {
        if run.ending == Ending::TimedOut {
            let why = format!(
                "grading this part took longer than {} s and was stopped: a kernel that never ends, or one far too slow",
                settings.limits.wall.as_secs_f64()
            );
            return Ok(self.failure(settings, &Verdict::Timeout, why));
        }
        // A whole JSON means the child finished grading, whatever happened after.
        let written = std::fs::read(scratch).ok().and_then(|b| serde_json::from_slice::<GradeReport>(&b).ok());
        if let Some(report) = written.filter(|r| single_part(r).is_some()) {
            return Ok(report);
        }
        let last_words = run.stderr.text().lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
        if run.ending == Ending::Exited(SETUP_ERROR_EXIT) {
            // The grader's own setup failed (no GPU for --backend cuda, ...): no
            // student's fault, and it will fail the same way for everyone.
            return Err(SetupFailed(last_words).into());
        }
        let why = format!(
            "the grading process ended ({}) without a result{}",
            run.ending.describe(),
            if last_words.is_empty() { String::new() } else { format!(": {last_words}") }
        );
        Ok(self.failure(settings, &Verdict::Crashed(Some(run.ending.describe())), why))
    }

    /// A report where every check of the part failed with `verdict`.
    fn failure(&self, settings: &ChildSettings, verdict: &Verdict, message: String) -> GradeReport {
        let (ex, part) = (self.exercise, self.part);
        let mut tests: Vec<TestReport> = part
            .checks
            .iter()
            .map(|c| TestReport {
                verdict: Some(verdict.to_string()),
                message: Some(message.clone()),
                ..TestReport::new(ex.test_name(part, c), c.kind, Status::Fail)
            })
            .collect();
        crate::score::score_part(part.points, &mut tests);
        let backend = settings.backend.to_possible_value().expect("named").get_name().to_string();
        let environment = Environment { backend, note: Some(message.clone()), ..Default::default() };
        let mut report = GradeReport::new(settings.seed, &self.root, "exercises", environment);
        report.exercises = vec![ExerciseReport {
            id: ex.id.into(),
            title: ex.title.into(),
            score: 0.0,
            max_score: 0.0,
            parts: vec![PartReport {
                sha256: sha256_of(&self.root.join(self.file())),
                // The child died before saying how compiling went.
                ..PartReport::new(
                    part.name,
                    self.file(),
                    CompileReport::with(CompileStatus::Ok, Some(format!("no compile result: {verdict}"))),
                    tests,
                )
            }],
        }];
        report.total_up();
        report
    }
}

fn single_part(report: &GradeReport) -> Option<(&ExerciseReport, &PartReport)> {
    match report.exercises.as_slice() {
        [ex] => match ex.parts.as_slice() {
            [part] => Some((ex, part)),
            _ => None,
        },
        _ => None,
    }
}

fn sha256_of(path: &Path) -> Option<String> {
    use sha2::Digest;
    let bytes = std::fs::read(path).ok()?;
    Some(sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect())
}

/// How grading one part went, for summaries and the gradebook's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Compiled and every check ran (passing or not).
    Graded,
    /// The file was not in the submission (or was refused).
    Missing,
    CompileError,
    Timeout,
    Crashed,
}

impl Outcome {
    pub fn of(part: &PartReport) -> Outcome {
        let verdicts = || part.tests.iter().filter_map(|t| t.verdict.as_deref()).map(Verdict::from);
        if verdicts().any(|v| v == Verdict::Timeout) {
            Outcome::Timeout
        } else if verdicts().any(|v| v.crashed()) {
            Outcome::Crashed
        } else if part.compile.missing || (part.compile.status == CompileStatus::Error && part.sha256.is_none()) {
            Outcome::Missing
        } else if part.compile.status == CompileStatus::Error {
            Outcome::CompileError
        } else {
            Outcome::Graded
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Graded => "graded",
            Outcome::Missing => "missing",
            Outcome::CompileError => "compile-error",
            Outcome::Timeout => "timeout",
            Outcome::Crashed => "crashed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(wall: f64) -> ChildSettings {
        ChildSettings {
            exe: PathBuf::from("sh"),
            seed: 5,
            backend: BackendChoice::None,
            kernel_timeout: Duration::from_secs(1),
            limits: Limits { wall: Duration::from_secs_f64(wall), output_cap: 1024 },
            ptx_cache: PathBuf::from("/nonexistent"),
            nvrtc_dir: None,
            grading_flags: Vec::new(),
            gpu_locks: None,
            check_limits: None,
            course_config: None,
            counters: None,
            shapes_secret: 7,
        }
    }

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script);
        cmd
    }

    fn with_job(f: impl FnOnce(&PartJob)) {
        let dir = tempfile::tempdir().unwrap();
        let exercises = crate::registry::select(&["ex01".into()]).unwrap();
        let job = PartJob {
            exercise: &exercises[0],
            part: &exercises[0].parts[1],
            root: dir.path().join("staging"),
            result: dir.path().join("results/ex01-shared.json"),
        };
        f(&job);
    }

    #[test]
    fn a_hang_becomes_a_timeout_that_scores_zero() {
        with_job(|job| {
            let report = job.grade_with(sh("sleep 30"), &settings(0.3)).unwrap();
            let part = &report.exercises[0].parts[0];
            assert_eq!(Outcome::of(part), Outcome::Timeout);
            assert_eq!(report.score, 0.0);
            assert!((report.max_score - 10.0).abs() < 1e-9, "the part's points are still counted");
            // Its timed checks are held back like any wrong part's (crate::score): the same on every GPU.
            assert!(part.tests.iter().all(|t| match t.kind {
                kit::CheckKind::Performance => t.status == Status::NotCounted,
                _ => t.status == Status::Fail && t.verdict.as_deref() == Some("timeout"),
            }));
            assert!(job.existing_result().is_some(), "the result is on disk");
            assert!(std::fs::read_to_string(job.log_path()).unwrap().contains("---- timeout after"));
        });
    }

    #[test]
    fn a_crash_is_named_and_a_flood_is_capped() {
        with_job(|job| {
            let report = job.grade_with(sh("echo 'error: it broke' >&2; kill -ABRT $$"), &settings(10.0)).unwrap();
            let t = &report.exercises[0].parts[0].tests[0];
            assert_eq!(t.verdict.as_deref(), Some("crashed: SIGABRT (aborted)"));
            assert!(t.message.as_deref().unwrap().ends_with("error: it broke"), "{:?}", t.message);

            let report = job.grade_with(sh("yes flood"), &settings(0.5)).unwrap();
            assert_eq!(Outcome::of(&report.exercises[0].parts[0]), Outcome::Timeout);
            let log = std::fs::metadata(job.log_path()).unwrap().len();
            assert!(log < 4096, "the log is capped: {log} bytes");
        });
    }

    #[test]
    fn an_exit_without_a_result_is_a_crash() {
        with_job(|job| {
            let report = job.grade_with(sh("exit 0"), &settings(10.0)).unwrap();
            let t = &report.exercises[0].parts[0].tests[0];
            assert_eq!(t.verdict.as_deref(), Some("crashed: exit code 0"));
        });
    }

    #[test]
    fn a_setup_error_is_the_batch_s_problem_not_a_grade() {
        with_job(|job| {
            let err =
                job.grade_with(sh("echo 'error: --backend cuda: no GPU' >&2; exit 2"), &settings(10.0)).unwrap_err();
            assert!(err.downcast_ref::<SetupFailed>().is_some());
            assert!(err.to_string().contains("no GPU"), "{err}");
            assert!(job.existing_result().is_none(), "nothing is recorded, so a resumed batch grades it");
        });
    }

    #[test]
    fn every_process_of_a_batch_measures_one_draw_of_shapes_and_keeps_counters_in_the_batch() {
        let batch = ChildSettings {
            counters: Some((PathBuf::from("/out/counters-cache/x"), "ex01,ex07".into())),
            ..settings(10.0)
        };
        let mut cmd = Command::new("true");
        batch.child_env(&mut cmd, None);
        let envs: std::collections::HashMap<String, String> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_string_lossy().into_owned(), v?.to_string_lossy().into_owned())))
            .collect();
        assert_eq!(envs.get(kit::SHAPES_SECRET_ENV).map(String::as_str), Some("7"), "{envs:?}");
        assert_eq!(envs.get(kit::counters::cache::ENV).map(String::as_str), Some("/out/counters-cache/x"));
        assert_eq!(envs.get(crate::counters::SCOPE_ENV).map(String::as_str), Some("ex01,ex07"));
        let alone = settings(10.0);
        let mut cmd = Command::new("true");
        alone.child_env(&mut cmd, None);
        assert!(!cmd.get_envs().any(|(k, _)| k == kit::counters::cache::ENV), "no batch folder, no kept counters");
    }
}
