//! The runner every graded corpus shares (`grader/tests/hostile`,
//! `grader/tests/variants`), without a GPU. A corpus is a folder of cases, one
//! submission each holding only its own `.cu` files, and an `expected.json`
//! that says, per case and part, the verdict each backend must give. The same
//! table drives the GPU run: `grader/tests/corpus/corpus.py` and `run-gpu.sh`.
//!
//! A part's verdict is that of its first failing test, or `pass`. Where the
//! table marks an expected verdict as waiting for unmerged work (`needs`), a
//! mismatch is *pending*, not a failure; a pending mark whose verdict is
//! already met is reported so that the mark can be removed.

// Each corpus's test uses part of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use grader::report::{GradeReport, PartReport, Status};
use serde::Deserialize;

/// The generated case: a source file ten times the 1 MiB limit.
const HUGE_SOURCE_BYTES: usize = 10 << 20;

#[derive(Deserialize)]
pub struct Table {
    pub cases: BTreeMap<String, Case>,
}

#[derive(Deserialize)]
pub struct Case {
    /// What the case is, in words (a family's cases begin alike: `jitter: …`).
    #[serde(default)]
    pub what: String,
    /// Made by the runner (the 10 MB source), not committed.
    #[serde(default)]
    pub generated: bool,
    /// `<exercise>/<part>` → what it must get.
    pub parts: BTreeMap<String, Expected>,
    /// The timed checks (`<exercise>/<part>/perf::<check>`) whose threshold this case brackets.
    #[serde(default)]
    pub calibrates: Vec<String>,
    /// With `calibrates`: `correct` (must pass the timing) or `slow` (must fail it).
    pub role: Option<String>,
    /// The case's files, each a file of `reference/slow/`: path below
    /// `exercises/` → path below `reference/slow/` (the slow variant itself,
    /// or one of its `extra/` kernels, with no copy in the corpus).
    #[serde(default)]
    pub slow_files: BTreeMap<String, String>,
    /// Grader flags for this case's runs without a GPU (`--perf-without-gpu
    /// simulate`: its timed check is graded by the measured stand-in there).
    #[serde(default)]
    pub sim_args: Vec<String>,
    /// The case's files, each a kernel kept elsewhere in the repository: path
    /// below `exercises/` → path below the repository's root (a calibration
    /// kernel, a slow variant, a reference), with no copy in the corpus.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

impl Case {
    /// The files `files` and `slow_files` point at: (path below `exercises/`, the file).
    pub fn pointed(&self) -> Vec<(String, PathBuf)> {
        grader::calibrate::families::pointed_files(&workspace(), &self.slow_files, &self.files)
    }
}

#[derive(Deserialize)]
pub struct Expected {
    pub none: Option<String>,
    pub sim: Option<String>,
    pub gpu: Option<String>,
    /// Phrases the first failure's message contains.
    #[serde(default)]
    pub says: Vec<String>,
    /// What the simulator's message says instead (with `--backend sim`, and with
    /// `none`, whose measured checks run the kernel on it), where it finds more
    /// than a GPU (an out-of-bounds read as it happens).
    #[serde(default)]
    pub says_sim: Option<Vec<String>>,
    /// The first failing test's name contains this.
    pub check: Option<String>,
    /// Backend → the unmerged capability its verdict waits for.
    #[serde(default)]
    pub needs: BTreeMap<String, String>,
}

#[derive(Clone, Copy, Debug)]
pub enum Backend {
    None,
    Sim,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::None => "none",
            Backend::Sim => "sim",
        }
    }

    fn expected(self, e: &Expected) -> Option<&str> {
        match self {
            Backend::None => e.none.as_deref(),
            Backend::Sim => e.sim.as_deref(),
        }
    }

    /// The phrases this backend's message must contain. Both backends here run
    /// kernels on the simulator (`none` for its measured structure checks).
    fn says(self, e: &Expected) -> &[String] {
        e.says_sim.as_deref().unwrap_or(&e.says)
    }
}

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The cases of `corpus` grouped by the exercise of their first part (the
/// groups [`crate::support::sample`] picks from).
pub fn cases_by_exercise(corpus: &Corpus) -> Vec<(String, Vec<(String, ())>)> {
    let mut groups: BTreeMap<String, Vec<(String, ())>> = BTreeMap::new();
    for (name, case) in &corpus.table.cases {
        let exercise = case.parts.keys().next().and_then(|k| k.split('/').next()).unwrap_or("none");
        groups.entry(exercise.to_string()).or_default().push((name.clone(), ()));
    }
    groups.into_iter().collect()
}

/// One corpus folder and its table.
pub struct Corpus {
    pub dir: PathBuf,
    pub table: Table,
    /// How many cases are graded at once (one grader process each, one core
    /// busy each): 1 unless [`Corpus::in_parallel`].
    pub jobs: usize,
}

impl Corpus {
    pub fn open(name: &str) -> Corpus {
        let dir = workspace().join("grader/tests").join(name);
        let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
        Corpus { table: serde_json::from_str(&text).expect("expected.json parses"), dir, jobs: 1 }
    }

    /// Grades as many cases at once as there are cores (`CUDA_LAB_CORPUS_JOBS`
    /// overrides): for a corpus whose verdicts do not depend on the machine's
    /// load (no tight time limits), as the variants corpus's do not.
    pub fn in_parallel(mut self) -> Corpus {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        self.jobs = std::env::var("CUDA_LAB_CORPUS_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(cores).max(1);
        self
    }

    /// The case folders on disk.
    pub fn folders(&self) -> Vec<String> {
        std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_dir())
            .map(|e| e.file_name().into_string().unwrap())
            .collect()
    }
}

/// How one case is graded.
pub struct Settings {
    pub seed: u64,
    /// The grader's compile time limit, in seconds.
    pub compile_timeout_secs: &'static str,
}

/// What one grading run of one case left behind.
pub struct Run {
    pub report: GradeReport,
    /// stdout, stderr and the JSON, for leak and size checks.
    pub texts: [String; 3],
    pub elapsed: Duration,
}

/// Grades `exercises` (and only `part`, when given) of the submission at `root`
/// (with a fresh PTX cache: a part must not pass on another case's PTX). Where
/// the lanes of a CI run share their results (`support::grade_cache`), a case
/// another lane graded the same way is not graded again.
pub fn grade(root: &Path, exercises: &[&str], part: Option<&str>, backend: Backend, settings: &Settings) -> Run {
    grade_with(root, exercises, part, backend, settings, &[])
}

/// [`grade`] with more grader flags (`extra`, before `--backend`).
pub fn grade_with(
    root: &Path,
    exercises: &[&str],
    part: Option<&str>,
    backend: Backend,
    settings: &Settings,
    extra: &[String],
) -> Run {
    let mut args: Vec<String> = exercises.iter().map(|e| e.to_string()).collect();
    if let Some(part) = part {
        args.extend(["--part".into(), part.into()]);
    }
    args.extend(extra.iter().cloned());
    args.extend(["--backend".into(), backend.name().into(), "--seed".into(), settings.seed.to_string()]);
    let graded = crate::support::grade_cache::Run {
        args,
        root,
        graded: &["exercises"],
        compiler: None,
        compile_timeout: settings.compile_timeout_secs,
    }
    .grade();
    let json_text = graded.json.unwrap_or_else(|| {
        panic!("{}: no grades JSON; exit {:?}\n{}\n{}", root.display(), graded.status, graded.stdout, graded.stderr)
    });
    let report = serde_json::from_str(&json_text).expect("a grades JSON");
    Run { report, texts: [graded.stdout, graded.stderr, json_text], elapsed: graded.elapsed }
}

/// A part's verdict: that of its first failing test, else `pass`; that test's name and message.
pub fn verdict(part: &PartReport) -> (String, String, String) {
    match part.tests.iter().find(|t| t.status == Status::Fail) {
        Some(t) => (t.verdict.clone().unwrap_or_default(), t.name.clone(), t.message.clone().unwrap_or_default()),
        None => ("pass".into(), String::new(), String::new()),
    }
}

/// The pi_global.cu of `huge-source`: the reference kernel under 10 MB of comments.
fn generate_huge_source(dir: &Path) {
    let kernels = dir.join("exercises/ex01-pi/kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    let reference = workspace().join("reference/ex01-pi/kernels");
    let line = format!("// {}\n", "padding ".repeat(12));
    let mut text = line.repeat(HUGE_SOURCE_BYTES / line.len() + 1);
    text += &std::fs::read_to_string(reference.join("pi_global.cu")).unwrap();
    std::fs::write(kernels.join("pi_global.cu"), text).unwrap();
}

/// A case as a submission under `into`: the case's own files (or the files
/// its `files` and `slow_files` point at), plus the reference file of every part
/// it leaves alone (`corpus.py prepare` does the same).
pub fn materialize(corpus: &Corpus, name: &str, case: &Case, into: &Path) -> PathBuf {
    let root = into.join(name);
    if case.generated {
        generate_huge_source(&root);
    } else {
        // The case's folder (its kernels, each whole or as an edit of another,
        // or only a course's cuda-lab.toml), then the files it points at
        // (`files`, `slow_files`).
        let from = corpus.dir.join(name);
        for entry in walkdir::WalkDir::new(&from).into_iter().filter(|_| from.is_dir()) {
            let entry = entry.unwrap();
            let rel = entry.path().strip_prefix(&from).unwrap().to_string_lossy().into_owned();
            let to = root.join(kit::case_file::submitted_name(&rel));
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                kit::case_file::write(&workspace(), entry.path(), &to).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            }
        }
        for (rel, source) in case.pointed() {
            let to = root.join("exercises").join(rel);
            kit::case_file::write(&workspace(), &source, &to).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
    }
    let registry = grader::registry::all();
    for key in case.parts.keys() {
        let (id, _) = key.split_once('/').expect("<exercise>/<part>");
        let exercise = registry.iter().find(|e| e.id == id).expect("a known exercise");
        for part in &exercise.parts {
            let rel = Path::new(exercise.folder_name()).join(part.file);
            let to = root.join("exercises").join(&rel);
            if !to.exists() {
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(workspace().join("reference").join(&rel), &to).unwrap();
            }
        }
    }
    root
}

/// How a corpus fared on one backend.
#[derive(Default)]
pub struct Outcome {
    /// Every graded part: `ok|BAD|PEND  case  part  verdict  first failing test`.
    pub lines: Vec<String>,
    /// Mismatches: the test fails on any.
    pub problems: Vec<String>,
    /// Mismatches on parts whose verdict waits for unmerged work.
    pub pending: Vec<String>,
    /// Parts marked as waiting whose verdict is already met.
    pub met: Vec<String>,
}

impl Outcome {
    /// Everything, for a test's output: the table, then what is pending, then the mismatches.
    pub fn report(&self, corpus: &str, backend: Backend) -> String {
        let mut text = format!("{corpus} on `{}`:\n{}\n", backend.name(), self.lines.join("\n"));
        for p in &self.pending {
            text += &format!("PENDING {p}\n");
        }
        for m in &self.met {
            text += &format!("MET {m}\n");
        }
        for p in &self.problems {
            text += &format!("MISMATCH {p}\n");
        }
        text + &format!(
            "{} mismatch(es), {} pending on unmerged work, {} mark(s) to remove\n",
            self.problems.len(),
            self.pending.len(),
            self.met.len()
        )
    }
}

impl Outcome {
    /// One graded part against its row: as expected, a mismatch, or pending on unmerged work.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        backend: Backend,
        name: &str,
        key: &str,
        expected: &Expected,
        wanted: &str,
        got: &str,
        test: &str,
        message: &str,
    ) {
        let why = judge(expected, backend.says(expected), wanted, got, test, message);
        let mark = match (why.is_empty(), expected.needs.get(backend.name())) {
            (true, Some(needs)) => {
                self.met.push(format!("{name} {key}: got `{got}` already; remove `needs: {needs}`"));
                "ok  "
            }
            (true, None) => "ok  ",
            (false, Some(needs)) => {
                self.pending.extend(why.iter().map(|w| format!("{name} {key}: {w} (needs {needs})")));
                "PEND"
            }
            (false, None) => {
                self.problems.extend(why.iter().map(|w| format!("{name} ({}): {key}: {w}", backend.name())));
                "BAD "
            }
        };
        self.lines.push(format!("{mark} {name:<40} {key:<18} {got:<20} {test}"));
    }
}

/// What is wrong with one part's result, compared with its row (empty: as expected).
fn judge(expected: &Expected, says: &[String], wanted: &str, got: &str, test: &str, message: &str) -> Vec<String> {
    let mut why = Vec::new();
    if got != wanted {
        why.push(format!("verdict `{got}`, expected `{wanted}`: {}", first_line(message)));
    } else if got != "pass" {
        if let Some(check) = expected.check.as_deref().filter(|c| !test.contains(c)) {
            why.push(format!("first failing test `{test}`, expected one named like `{check}`"));
        }
        for phrase in says.iter().filter(|p| !message.contains(p.as_str())) {
            why.push(format!("the message does not say {phrase:?}: {}", first_line(message)));
        }
    }
    why
}

fn first_line(message: &str) -> &str {
    let line = message.lines().next().unwrap_or("");
    let end = (0..=line.len().min(300)).rev().find(|&i| line.is_char_boundary(i)).unwrap_or(0);
    &line[..end]
}

/// Grades every case that has verdicts for `backend`, one process per case (only
/// its part, when it has one), and compares them with the table. `extra` adds
/// the corpus's own checks of a run (leaks, sizes, time) to the problems.
pub fn run(
    corpus: &Corpus,
    backend: Backend,
    settings: &Settings,
    extra: impl FnMut(&str, &Run, &mut Vec<String>),
) -> Outcome {
    // `CUDA_LAB_CASES=a,b`: only the cases whose name contains one of them (a
    // change's own cases, in seconds rather than the whole sweep's minutes)
    let picked: Vec<String> = std::env::var("CUDA_LAB_CASES")
        .map(|v| v.split(',').filter(|s| !s.is_empty()).map(String::from).collect())
        .unwrap_or_default();
    run_only(
        corpus,
        backend,
        settings,
        |name| picked.is_empty() || picked.iter().any(|p| name.contains(p.as_str())),
        extra,
    )
}

/// [`run`] over the cases whose name `only` accepts (a sample of the corpus).
pub fn run_only(
    corpus: &Corpus,
    backend: Backend,
    settings: &Settings,
    only: impl Fn(&str) -> bool,
    mut extra: impl FnMut(&str, &Run, &mut Vec<String>),
) -> Outcome {
    let generated = tempfile::tempdir().unwrap();
    let mut outcome = Outcome::default();
    struct Job<'c> {
        name: &'c str,
        wanted: Vec<(&'c String, &'c Expected, &'c str)>,
        root: PathBuf,
        exercises: Vec<&'c str>,
        only_part: Option<&'c str>,
        extra: &'c [String],
    }
    let mut jobs = Vec::new();
    for (name, case) in corpus.table.cases.iter().filter(|(name, _)| only(name)) {
        let wanted: Vec<(&String, &Expected, &str)> =
            case.parts.iter().filter_map(|(key, e)| Some((key, e, backend.expected(e)?))).collect();
        if wanted.is_empty() {
            continue;
        }
        let root = materialize(corpus, name, case, generated.path());
        let mut exercises: Vec<&str> = case.parts.keys().filter_map(|k| k.split('/').next()).collect();
        exercises.dedup();
        let only_part = match (exercises.len(), case.parts.len()) {
            (1, 1) => case.parts.keys().next().and_then(|k| k.split_once('/')).map(|(_, p)| p),
            _ => None,
        };
        jobs.push(Job { name, wanted, root, exercises, only_part, extra: &case.sim_args });
    }
    let runs = in_parallel(corpus.jobs, &jobs, |job| {
        grade_with(&job.root, &job.exercises, job.only_part, backend, settings, job.extra)
    });
    // In the table's order, whatever order the runs ended in.
    for (job, run) in jobs.iter().zip(runs) {
        let name = job.name;
        let parts: BTreeMap<String, &PartReport> = run
            .report
            .exercises
            .iter()
            .flat_map(|e| e.parts.iter().map(move |p| (format!("{}/{}", e.id, p.name), p)))
            .collect();
        for (key, expected, verdict_wanted) in &job.wanted {
            let Some(part) = parts.get(*key) else {
                outcome.problems.push(format!("{name} ({}): {key} was not graded", backend.name()));
                continue;
            };
            let (got, test, message) = verdict(part);
            outcome.add(backend, name, key, expected, verdict_wanted, &got, &test, &message);
        }
        extra(name, &run, &mut outcome.problems);
    }
    outcome
}

/// `f` of every item, `jobs` at a time, in the items' order.
pub fn in_parallel<T: Sync, R: Send>(jobs: usize, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<Option<R>>> = std::sync::Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                done.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
            });
        }
    });
    done.into_inner().unwrap_or_else(|p| p.into_inner()).into_iter().map(|r| r.expect("every item ran")).collect()
}

/// Needs no compiler: the table, the folders and the registry agree.
pub fn check_table(corpus: &Corpus) {
    let folders = corpus.folders();
    for folder in &folders {
        assert!(corpus.table.cases.contains_key(folder), "{folder} has no row in expected.json");
    }
    let registry = grader::registry::all();
    for (name, case) in &corpus.table.cases {
        let elsewhere = case.generated || !case.pointed().is_empty();
        // A kernel of its own xor generated or pointed at; a pointing case's
        // folder may hold a course's settings, never a kernel.
        let own_kernels = corpus.dir.join(name).join("exercises").exists();
        assert!(
            elsewhere != own_kernels,
            "{name}: kernels of its own (a folder's exercises/) xor generated or pointing at its files (`files`, `slow_files`)"
        );
        assert!(folders.contains(name) || elsewhere, "{name}: no folder");
        for (_, file) in case.pointed() {
            assert!(file.is_file(), "{name}: no {}", file.display());
        }
        for (key, expected) in &case.parts {
            let (ex, part) = key.split_once('/').expect("<exercise>/<part>");
            let exercise = registry.iter().find(|e| e.id == ex).unwrap_or_else(|| panic!("{name}: no {ex}"));
            let part = exercise.parts.iter().find(|p| p.name == part).unwrap_or_else(|| panic!("{name}: no {key}"));
            assert!(expected.gpu.is_some(), "{name} {key}: every case runs on the GPU");
            assert!(part.kernels.iter().all(|k| !k.is_empty()), "{name}: {key} names its kernels");
            for backend in expected.needs.keys() {
                assert!(["none", "sim", "gpu"].contains(&backend.as_str()), "{name} {key}: needs for `{backend}`");
            }
        }
        if !elsewhere {
            let own = case.parts.keys().any(|key| {
                let (ex, part) = key.split_once('/').unwrap();
                let exercise = registry.iter().find(|e| e.id == ex).unwrap();
                let part = exercise.parts.iter().find(|p| p.name == part).unwrap();
                let file = corpus.dir.join(name).join("exercises").join(exercise.folder_name()).join(part.file);
                kit::case_file::kept(&file).is_file()
            });
            assert!(own, "{name}: the case holds none of its parts' files");
            // Every kernel kept as an edit still applies to the kernel it was written from.
            for entry in walkdir::WalkDir::new(corpus.dir.join(name)) {
                let entry = entry.unwrap();
                if kit::case_file::is_edit(entry.path()) {
                    kit::case_file::text(&workspace(), entry.path()).unwrap_or_else(|e| panic!("{name}: {e:#}"));
                }
            }
        }
    }
}
