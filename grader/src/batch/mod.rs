//! `grader batch`: grades a whole class, one folder per submission.
//!
//! 1. **Intake**: each submission's expected `.cu` files (nothing else) are
//!    copied into `<out>/staging/<key>/` ([`intake`]).
//! 2. **Grading**: on every visible GPU unless `--gpus` says ([`gpus`]),
//!    persistent workers (two or three per GPU, one CUDA context each)
//!    grade part after part, reusing inputs, CPU references and yardstick
//!    timings; a part a worker cannot finish is regraded in a child process of
//!    its own under a time limit, and `--isolate` grades every part that way.
//!    The next submissions compile ahead ([`schedule`], [`slot`], [`worker`],
//!    [`pool`], [`part`], [`prefetch`]). Where the time went is in `batch.json` ([`breakdown`]).
//! 3. **Reports**: the part results of each student are merged into
//!    `<out>/submissions/<key>.json`, and every student into the gradebook
//!    ([`student`], [`gradebook`]).
//!
//! Every result is written atomically and a result already on disk is never
//! recomputed without `--force`, so a batch stopped midway resumes where it was.

pub mod breakdown;
mod defaults;
pub mod figures;
pub mod gpus;
pub mod gradebook;
pub mod intake;
pub mod lock_hold;
pub mod make_class;
pub mod part;
pub mod pool;
pub mod prefetch;
pub mod retime;
pub mod schedule;
pub mod shapes;
pub mod slot;
pub mod stall;
pub mod student;
pub mod submission;
pub mod worker;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use kit::Exercise;
use serde::{Deserialize, Serialize};

use crate::grade::BackendChoice;
use crate::process::child;
use gradebook::{Gradebook, Row};
use part::{ChildSettings, Outcome, PartJob};
use submission::{Shard, Submission};

pub struct Options {
    /// The folder holding one folder per submission.
    pub dir: PathBuf,
    pub out: PathBuf,
    pub exercises: Vec<Exercise>,
    /// Random when absent (or the seed of the batch being resumed).
    pub seed: Option<u64>,
    pub force: bool,
    pub shard: Option<Shard>,
    /// `--gpus`: `CUDA_VISIBLE_DEVICES` of each GPU's workers; empty: every
    /// GPU visible ([`gpus::choose`]).
    pub gpus: Vec<String>,
    pub part_timeout: Duration,
    pub kernel_timeout: Duration,
    pub backend: BackendChoice,
    /// The grader binary each child runs.
    pub exe: PathBuf,
    /// Bytes kept of each output stream of a child.
    pub output_cap: usize,
    /// Grading flags every child gets (`--sanitize`, `--perf-without-gpu`).
    pub grading_flags: Vec<String>,
    /// `--isolate`: every part in a child process of its own (no workers).
    pub isolate: bool,
    /// Worker processes per GPU entry (timing stays exclusive through the GPU
    /// lock); `None`: as many as the machine's memory allows (batch::defaults).
    pub workers_per_gpu: Option<usize>,
    /// `--regrade-hangs`: a part with a stuck kernel is graded again alone.
    pub regrade_hangs: bool,
    /// `--timeout-from-reference` and `--timeout-floor`: each correctness
    /// check's time limit from the reference's time (crate::check_limits).
    pub timeout_from_reference: crate::check_limits::FromReference,
    pub timeout_floor: Duration,
}

/// `<out>/batch.json`: what every result in `<out>` was graded with, so a
/// resumed batch grades the rest the same way.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    schema: String,
    seed: u64,
    backend: String,
    /// Where the last run's grading time went, and yardstick drift.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time: Option<breakdown::Breakdown>,
    /// Each timed check's figure over the students with the same file (batch::figures).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    figures: Vec<figures::Spread>,
}

const MANIFEST_SCHEMA: &str = "cuda-lab.batch/1";

/// One submission and its work.
pub struct Planned<'e> {
    pub submission: Submission,
    pub intake: intake::Intake,
    pub staging: PathBuf,
    pub jobs: Vec<PartJob<'e>>,
    /// Indices into `jobs` without a result yet.
    pub pending: Vec<usize>,
}

#[derive(Debug, Default)]
pub struct Summary {
    pub submissions: usize,
    pub shard: Option<Shard>,
    pub seed: u64,
    pub submissions_graded_now: usize,
    pub parts_graded_now: usize,
    pub parts_reused: usize,
    pub files_compiled_ahead: usize,
    pub outcomes: BTreeMap<Outcome, usize>,
    pub students: BTreeMap<String, usize>,
    pub elapsed: Duration,
    pub out: PathBuf,
    /// Problems of the batch itself (a result that could not be written, ...).
    pub errors: Vec<String>,
    /// Parts graded again because their files or settings changed since the last run.
    pub regraded: Regraded,
}

pub fn run(opts: &Options) -> Result<Summary> {
    if std::env::var_os(kit::counters::ENV).is_none() {
        // Every part would start the profiler once more: a batch reads the
        // GPU's counters only when the TA asks (kit::counters::BATCH_DEFAULT),
        // in its workers and its isolated regrades alike.
        std::env::set_var(kit::counters::ENV, kit::counters::BATCH_DEFAULT);
    }
    let start = Instant::now();
    let seed = settle_seed(opts)?;
    let mut submissions = submission::discover(&opts.dir)?;
    if let Some(shard) = opts.shard {
        submissions.retain(|s| shard.contains(&s.key));
    }
    // The children compile with the same compiler; one found here is found faster there.
    // Children run in their staging folder: every path they get must be absolute.
    let out = std::path::absolute(&opts.out).with_context(|| format!("finding {}", opts.out.display()))?;
    let gpus = gpus::choose(&opts.gpus, opts.backend);
    println!("{gpus}");
    let compiler = ptx_build::Compiler::from_env().ok().map(|c| c.with_cache_dir(out.join("ptx-cache")));
    let mut settings = ChildSettings {
        exe: opts.exe.clone(),
        seed,
        backend: opts.backend,
        kernel_timeout: opts.kernel_timeout,
        limits: child::Limits { wall: opts.part_timeout, output_cap: opts.output_cap },
        ptx_cache: out.join("ptx-cache"),
        nvrtc_dir: compiler.as_ref().and_then(|c| c.path()).and_then(Path::parent).map(Path::to_path_buf),
        grading_flags: opts.grading_flags.clone(),
        gpu_locks: (!opts.isolate).then(|| out.join("locks")),
        check_limits: defaults::limits_from_reference(opts, &out, seed, gpus.ids.first().map(String::as_str))?,
        // Absolute: the children run in their staging folders.
        course_config: crate::course::root().and_then(|r| std::path::absolute(r.join(crate::policy::CONFIG_FILE)).ok()),
        counters: None,
        // Drawn once for the output folder, from the operating system's entropy (batch::shapes).
        shapes_secret: shapes::for_batch(&out)?,
    };
    if let Some(dir) = &settings.gpu_locks {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let (mut plans, regraded, graded_with) = plan(opts, &out, submissions)?;
    // Counters kept from one grader and course settings only: another starts afresh.
    let kept = out.join("counters-cache").join(&intake::sha256_hex(graded_with.as_bytes())[..16]);
    let scope: Vec<&str> = opts.exercises.iter().map(|e| e.id).collect();
    settings.counters = Some((kept, scope.join(",")));
    let parts_reused = plans.iter().map(|p| p.jobs.len() - p.pending.len()).sum();
    let counting = kit::counters::turned_off().is_none();
    let (default_workers, reads_counters) = defaults::workers_per_gpu(opts.backend, counting);
    let workers_per_gpu = opts.workers_per_gpu.unwrap_or(default_workers);
    if reads_counters {
        println!(
            "the GPU's counters are read (CUDA_LAB_COUNTERS={}): one profiler at a time, beside {} per GPU",
            std::env::var(kit::counters::ENV).unwrap_or_default(),
            crate::words::count(workers_per_gpu, "worker"),
        );
    }
    let mode = schedule::Mode { isolate: opts.isolate, workers_per_gpu, regrade_hangs: opts.regrade_hangs };
    let mut graded = schedule::grade_all(&plans, &settings, &gpus.ids, compiler.clone(), mode);
    // Timings disturbed by something beside the kernel (its witness spread
    // too) are graded again by fresh workers at the end (batch::retime).
    let disturbed = if graded.stopped { 0 } else { retime::mark(&mut plans) };
    if disturbed > 0 {
        println!("grading again {} whose timing was disturbed", crate::words::count(disturbed, "part"));
        // The second pass writes a timeline of its own; the first one's is kept beside it.
        let timeline = settings.ptx_cache.with_file_name("workers").join("timeline.jsonl");
        let _ = std::fs::rename(&timeline, timeline.with_file_name("timeline-before-retime.jsonl"));
        let again = schedule::grade_all(&plans, &settings, &gpus.ids, compiler, mode);
        graded.errors.extend(again.errors);
        graded.stopped |= again.stopped;
        graded.time.parts_retimed = disturbed;
    }
    let manifest = Manifest {
        schema: MANIFEST_SCHEMA.into(),
        seed,
        backend: backend_name(opts.backend),
        time: Some(graded.time.clone()),
        figures: Vec::new(),
    };
    crate::atomic::write_json(&opts.out.join("batch.json"), &manifest)?;
    if graded.stopped {
        bail!(
            "the batch stopped; what was graded is kept, and running it again resumes:\n  {}",
            graded.errors.join("\n  ")
        );
    }

    let mut summary = Summary {
        submissions: plans.len(),
        shard: opts.shard,
        seed,
        submissions_graded_now: graded.submissions_graded,
        parts_graded_now: graded.parts_graded,
        parts_reused,
        files_compiled_ahead: graded.files_compiled_ahead,
        out: opts.out.clone(),
        errors: graded.errors,
        regraded,
        ..Default::default()
    };
    // One maximum for every view: the gradebook's, the LMS files' and the class report's.
    let course = crate::course::root();
    let maximum = match &course {
        Some(root) => crate::platforms::config::maximum(root, None)?,
        None => crate::platforms::Maximum::default(),
    };
    let mut rows = Vec::new();
    let mut all_reports = Vec::new();
    let mut credit = None;
    for p in plans {
        let reports: Vec<_> = p.jobs.iter().filter_map(|j| j.existing_result()).collect();
        let student = student::assemble(
            &p.submission,
            p.intake,
            &opts.exercises,
            &reports,
            seed,
            p.staging.display().to_string(),
        );
        for part in student.grades.exercises.iter().flat_map(|e| &e.parts) {
            *summary.outcomes.entry(Outcome::of(part)).or_default() += 1;
        }
        *summary.students.entry(student.status.clone()).or_default() += 1;
        credit = credit.or(student.grades.environment.credit.clone());
        crate::atomic::write_json(&opts.out.join(gradebook::report_path(&student.key)), &student)?;
        rows.push(Row::of(&student, maximum));
        all_reports.extend(reports);
    }
    let full: Vec<(String, f64)> =
        opts.exercises.iter().map(|e| (e.id.to_string(), e.parts.iter().map(|p| p.points).sum())).collect();
    let exercises = gradebook::columns(&full, &rows);
    // Roster students with no submission (`--roster` added them before) stay
    // until a folder of theirs turns up, whether or not this run has a roster.
    if let Ok(before) = Gradebook::read(&opts.out.join(gradebook::JSON_NAME)) {
        for r in before.students.into_iter().filter(|r| r.status == gradebook::NO_SUBMISSION) {
            if !rows.iter().any(|x: &Row| x.name == r.name) {
                rows.push(r);
            }
        }
    }
    // The same kernel, the same figure: each timed check's spread over the
    // students with one file, the reference's first (batch::figures).
    let course = crate::course::root();
    let manifest = Manifest {
        figures: figures::spreads(&all_reports, |file| course.as_ref().and_then(|c| figures::reference_sha(c, file))),
        ..manifest
    };
    for w in figures::warnings(&manifest.figures) {
        println!("warning: {w}");
    }
    crate::atomic::write_json(&opts.out.join("batch.json"), &manifest)?;
    let book = Gradebook {
        schema: gradebook::SCHEMA.into(),
        grader_version: env!("CARGO_PKG_VERSION").into(),
        seed,
        backend: backend_name(opts.backend),
        exercises,
        shard: opts.shard.map(|s| s.to_string()),
        maximum: Some(maximum.name().into()),
        credit,
        students: rows,
    };
    book.write(&opts.out)?;
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// Grades the reference once (the batch's seed, backend and first GPU, `gpu`)
/// and writes `OUT/check-limits.json`.
pub(crate) fn reference_limits(
    opts: &Options,
    out: &Path,
    seed: u64,
    multiple: f64,
    gpu: Option<&str>,
) -> Result<PathBuf> {
    let root = crate::course::root()
        .context("--timeout-from-reference needs the course's reference/: run from the course's folder")?;
    let backend = backend_name(opts.backend);
    let rule = crate::check_limits::Rule {
        multiple,
        floor_s: opts.timeout_floor.as_secs_f64(),
        ceiling_s: opts.kernel_timeout.as_secs_f64(),
    };
    let m = crate::check_limits::Measure {
        exe: &opts.exe,
        root: &root,
        exercises: &opts.exercises,
        seed,
        backend: &backend,
        gpu,
        rule,
    };
    crate::check_limits::measure(&m, out)
}

/// The batch's seed: the one given, or the one `<out>` was graded with, or a new one.
fn settle_seed(opts: &Options) -> Result<u64> {
    let path = opts.out.join("batch.json");
    let earlier: Option<Manifest> = match std::fs::read(&path) {
        Ok(bytes) => Some(serde_json::from_slice(&bytes).with_context(|| format!("{} is damaged", path.display()))?),
        Err(_) => None,
    };
    let backend = backend_name(opts.backend);
    let seed = match (&earlier, opts.seed) {
        (Some(m), _) if opts.force => opts.seed.unwrap_or(m.seed),
        (Some(m), Some(s)) if s != m.seed => bail!(
            "{} was graded with seed {}; resume with --seed {} (or without --seed), or regrade everything with --force",
            opts.out.display(),
            m.seed,
            m.seed
        ),
        (Some(m), _) if m.backend != backend => bail!(
            "{} was graded with --backend {}; resume with the same backend, or regrade everything with --force",
            opts.out.display(),
            m.backend
        ),
        (Some(m), _) => m.seed,
        (None, given) => given.unwrap_or_else(rand::random),
    };
    // This run's breakdown replaces the last one when it ends (a killed run leaves
    // none, rather than one that is not its own; workers/timeline.jsonl has what it did).
    crate::atomic::write_json(
        &path,
        &Manifest { schema: MANIFEST_SCHEMA.into(), seed, backend, time: None, figures: Vec::new() },
    )?;
    Ok(seed)
}

/// Stages every submission (its files, and the course's settings, hints and
/// calibrations as the batch grades with them) and lists the parts it still
/// needs: those without a result, or whose result was graded from other files
/// or other settings (intake::Stamp; the old result is removed). Returns the
/// plans, how many submissions had a part graded again for a changed file,
/// and the settings text the parts' stamps were made from.
fn plan<'o>(
    opts: &'o Options,
    out: &Path,
    submissions: Vec<Submission>,
) -> Result<(Vec<Planned<'o>>, Regraded, String)> {
    let expected = intake::expected_files(&opts.exercises);
    let course_root = crate::course::root();
    let course = course_root.as_deref().map(|root| intake::Course::of_flags(root, &opts.grading_flags));
    let staged_settings = match &course {
        Some(c) => Some(intake::staged_settings(c)?),
        None => None,
    };
    let settings = intake::settings_text(
        &opts.exe,
        staged_settings.as_deref().unwrap_or(""),
        &opts.grading_flags,
        settle_seed_of(out)?,
        &backend_name(opts.backend),
    );
    let mut plans = Vec::new();
    let mut regraded = Regraded::default();
    for submission in submissions {
        let staging = out.join("staging").join(&submission.key);
        let intake = intake::stage(&submission.dir, &expected, &staging)
            .with_context(|| format!("staging {}", submission.name))?;
        if let Some(c) = &course {
            intake::stage_course(c, &opts.exercises, &staging)
                .with_context(|| format!("staging the course's settings for {}", submission.name))?;
        }
        let results = out.join("results").join(&submission.key);
        let jobs: Vec<PartJob> = opts
            .exercises
            .iter()
            .flat_map(|ex| ex.parts.iter().map(move |part| (ex, part)))
            .map(|(exercise, part)| PartJob {
                exercise,
                part,
                root: staging.clone(),
                result: results.join(format!("{}-{}.json", exercise.id, part.name)),
            })
            .collect();
        let mut pending = Vec::new();
        let mut changed = false;
        for (i, job) in jobs.iter().enumerate() {
            let rel = format!("exercises/{}/{}", job.exercise.folder_name(), job.part.file);
            let stamp = intake::Stamp::of(&staging, &rel, &settings);
            let stored = job.existing_result().is_some();
            let same = intake::Stamp::read(&job.result);
            let fresh = stored && same.as_ref() == Some(&stamp);
            if opts.force || !fresh {
                if stored && !opts.force {
                    // Graded from other files or settings: never kept as this submission's grade.
                    if same.as_ref().is_some_and(|s| s.files != stamp.files) {
                        changed = true;
                    } else {
                        regraded.parts_for_settings += 1;
                    }
                    std::fs::remove_file(&job.result)
                        .with_context(|| format!("removing the stale {}", job.result.display()))?;
                }
                std::fs::create_dir_all(&results).with_context(|| format!("creating {}", results.display()))?;
                crate::atomic::write(&intake::Stamp::path(&job.result), stamp.text().as_bytes())?;
                pending.push(i);
            }
        }
        if changed {
            regraded.submissions_changed.push(submission.name.clone());
        }
        plans.push(Planned { submission, intake, staging, jobs, pending });
    }
    Ok((plans, regraded, settings))
}

/// Parts graded again because what they were graded from changed.
#[derive(Debug, Default, Clone)]
pub struct Regraded {
    /// Submissions with a staged file that changed since the last run.
    pub submissions_changed: Vec<String>,
    /// Parts whose grader or course settings changed (or whose record predates stamps).
    pub parts_for_settings: usize,
}

/// The seed `settle_seed` wrote into `<out>/batch.json`.
fn settle_seed_of(out: &Path) -> Result<u64> {
    let path = out.join("batch.json");
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    Ok(serde_json::from_slice::<Manifest>(&bytes).with_context(|| format!("{} is damaged", path.display()))?.seed)
}

fn backend_name(b: BackendChoice) -> String {
    b.to_possible_value().expect("every backend has a name").get_name().to_string()
}

/// The default output folder: `grades` beside the submissions folder.
pub fn default_out(dir: &Path) -> PathBuf {
    match dir.canonicalize().ok().and_then(|d| d.parent().map(Path::to_path_buf)) {
        Some(parent) => parent.join("grades"),
        None => PathBuf::from("grades"),
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shard = self.shard.map(|s| format!(" (shard {s})")).unwrap_or_default();
        writeln!(f, "\nBatch: {}{shard}, seed {}", crate::words::count(self.submissions, "submission"), self.seed)?;
        let count = |o: Outcome| self.outcomes.get(&o).copied().unwrap_or(0);
        writeln!(
            f,
            "  parts: {} graded, {} failed to compile, {} missing, {} timed out, {} crashed",
            count(Outcome::Graded),
            count(Outcome::CompileError),
            count(Outcome::Missing),
            count(Outcome::Timeout),
            count(Outcome::Crashed)
        )?;
        writeln!(
            f,
            "  {} graded now, {} kept from an earlier run (--force regrades them); {} compiled ahead",
            crate::words::count(self.parts_graded_now, "part"),
            self.parts_reused,
            crate::words::count(self.files_compiled_ahead, "file")
        )?;
        let changed = &self.regraded.submissions_changed;
        if !changed.is_empty() {
            writeln!(f, "  regraded: {} changed since the last run ({})", changed.len(), changed.join(", "))?;
        }
        if self.regraded.parts_for_settings > 0 {
            writeln!(
                f,
                "  regraded: {} graded with another grader or other course settings before",
                crate::words::count(self.regraded.parts_for_settings, "part")
            )?;
        }
        let students: Vec<String> = self.students.iter().map(|(s, n)| format!("{n} {s}")).collect();
        writeln!(f, "  students: {}", students.join(", "))?;
        let minutes = self.elapsed.as_secs_f64() / 60.0;
        writeln!(f, "  took {}", humantime::format_duration(Duration::from_secs(self.elapsed.as_secs())))?;
        if self.parts_graded_now > 0 && minutes > 0.0 {
            writeln!(
                f,
                "  throughput: {:.1} submissions per minute ({:.1} parts per minute)",
                self.submissions_graded_now as f64 / minutes,
                self.parts_graded_now as f64 / minutes
            )?;
        }
        for e in &self.errors {
            writeln!(f, "  error: {e}")?;
        }
        writeln!(f, "  gradebook: {}", self.out.join(gradebook::CSV_NAME).display())
    }
}
