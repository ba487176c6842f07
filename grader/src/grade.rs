//! One grading run: compile every selected part, turn every check into a
//! libtest-mimic trial, run them, and score what came back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Result;
use kit::profile::MemoryProfile;
use kit::{CheckKind, Ctx, Exercise, Gpu, PartBuild, RunEnv, Skip};
use libtest_mimic::{Arguments, Completion, Conclusion, Failed, Trial};
use ptx_build::{BuildError, CompileOptions, Compiler, Ptx, SourceFile};

use crate::ahead::Ahead;
use crate::not_graded_here;
use crate::policy::{Instead, Policy};
use crate::report::{
    CompileReport, CompileStatus, Environment, ExerciseReport, GradeReport, PartReport, Status, TestReport,
};
use crate::sanitize::{self, Replay, Sanitize};
use crate::score;
use crate::verdict::{NotCompiled, Verdict};

/// Which machine runs the kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// The GPU if there is one, otherwise the simulator.
    Auto,
    /// A CUDA GPU; fail if there is none.
    Cuda,
    /// The PTX simulator on the CPU: no timing, but races and memory profiles.
    Sim,
    /// Compile and check structure only; run nothing.
    None,
    /// For tests of the sanitizer pass: the simulator without race detection
    /// plays a GPU whose race fell the right way, and the pass must catch it.
    #[value(name = "lucky-sim", hide = true)]
    LuckySim,
}

/// Overrides the PTX cache folder (default `<root>/target/ptx-cache`): `grader
/// batch` points every student's run at one cache that it fills ahead of time.
pub const PTX_CACHE_ENV: &str = "CUDA_LAB_PTX_CACHE";

pub struct Options {
    /// Folder holding `exercises/` (the student's work) and `reference/`.
    pub root: PathBuf,
    /// Folder under `root` whose `<exercise folder>/<part file>` are graded:
    /// `exercises` (the student's work), `reference`, or a calibration variant.
    pub sources: String,
    pub seed: u64,
    pub backend: BackendChoice,
    /// How long one kernel may run before it is declared stuck.
    pub timeout: Duration,
    pub test_args: Arguments,
    /// Whether a GPU grade also replays the correctness cases on the simulator.
    pub sanitize: Sanitize,
    /// What performance checks mean where kernels cannot be timed.
    pub policy: Policy,
}

/// Compiles, runs and scores `exercises`. Prints as it goes.
pub fn run(exercises: &[Exercise], opts: &Options) -> Result<(GradeReport, Conclusion)> {
    Ok(start(exercises, opts)?.finish())
}

/// A grading run whose checks have all run; the simulator sanitizer pass may
/// still be replaying on other cores. A batch worker starts the next part on
/// the GPU while this one [`finish`](Pending::finish)es.
pub struct Pending(Stage);

enum Stage {
    Finished(Box<(GradeReport, Conclusion)>),
    Checked(Box<Checked>),
}

/// What the checks left for scoring.
struct Checked {
    exercises: Vec<Exercise>,
    parts: Vec<BuiltPart>,
    records: HashMap<String, TestReport>,
    ignored: HashMap<String, &'static str>,
    stand_ins: std::collections::HashSet<String>,
    policy: Policy,
    sanitizer: sanitize::Mode,
    pass: Option<sanitize::Pass>,
    conclusion: Conclusion,
    env_report: Environment,
    seed: u64,
    root: PathBuf,
    sources: String,
    test_args: Arguments,
}

/// Compiles and runs every check of `exercises`; scoring waits for [`Pending::finish`].
pub fn start(exercises: &[Exercise], opts: &Options) -> Result<Pending> {
    kit::backend::traced::phase("start");
    let (mut env_report, gpu, compiler) = open_environment(opts)?;
    kit::backend::traced::phase("environment open");
    let options = compile_options(gpu.as_ref().map(|g| g.info().compute_capability));
    let can_time = gpu.as_ref().is_some_and(|g| g.info().backend == "cuda");
    // `--backend none` only compiles: no grade to be fair about, the policy stays out.
    let policy = Policy { applied: gpu.is_some() && !can_time, ..opts.policy.clone() };
    env_report.policy = Some(policy.clone());
    // The simulator checks every launch itself; a GPU grade replays on it.
    let sanitizes_itself =
        gpu.as_ref().is_some_and(|g| g.info().backend == "sim") && opts.backend != BackendChoice::LuckySim;
    let sanitizer = sanitize::Mode::of(opts.sanitize, gpu.is_some(), sanitizes_itself);
    env_report.sanitizer = Some(sanitizer.name().into());
    let compiler_for_env = compiler.as_ref().ok().cloned();
    if let (Err(why), false) = (&compiler, opts.test_args.list) {
        let (report, conclusion) = without_compiler(exercises, opts, env_report, why);
        return Ok(Pending(Stage::Finished(Box::new((report, conclusion)))));
    }
    println!("seed {} (rerun with --seed {})", opts.seed, opts.seed);
    // Compile first, so a student sees every compile error before any test runs.
    let mut parts = Vec::new();
    println!(
        "\nCompiling ({}, compute_{}{}; device headers: {})",
        env_report.compiler.as_deref().unwrap_or("no compiler"),
        options.arch.0,
        options.arch.1,
        env_report.device_headers.as_deref().unwrap_or("none")
    );
    for ex in exercises {
        for part in &ex.parts {
            let rel = format!("{}/{}/{}", opts.sources, ex.folder_name(), part.file);
            let built = compile_part(&opts.root, &rel, compiler.as_ref(), &options);
            println!("  {:<55} {}", rel, built.line());
            print_diagnostics(&opts.root.join(&rel), &built.report.diagnostics);
            parts.push(built);
        }
    }
    println!();
    kit::backend::traced::phase("compiled");

    let yardstick_compiler = compiler_for_env.clone().map(|c| yardstick_compiler(c, can_time));
    let env = Arc::new(RunEnv::new(opts.seed, gpu.clone(), yardstick_compiler, options.clone()));
    let records: Arc<Mutex<HashMap<String, TestReport>>> = Arc::default();
    let mut trials = Vec::new();
    // Tests that cannot run here, and why; and those judged by a stand-in instead.
    let mut ignored: HashMap<String, &'static str> = HashMap::new();
    let mut stand_ins = std::collections::HashSet::new();
    let mut replays = Vec::new();
    let mut ahead_jobs = Vec::new();
    let mut built_iter = parts.iter();
    for ex in exercises {
        for part in &ex.parts {
            let built = built_iter.next().expect("one build per part");
            // The part's correctness checks, whose outcome decides what the others count for.
            let correctness: Arc<Vec<String>> = Arc::new(
                part.checks
                    .iter()
                    .filter(|c| c.kind == CheckKind::Correctness)
                    .map(|c| ex.test_name(part, c))
                    .collect(),
            );
            for check in in_running_order(&part.checks) {
                let name = ex.test_name(part, check);
                let simulated = gpu.as_ref().is_some_and(|g| g.info().backend == "sim");
                let skip_reason = match (check.needs_gpu(), &gpu) {
                    (true, None) => Some("no GPU"),
                    (true, Some(_)) if simulated && check.kind == CheckKind::Performance => Some("needs real timing"),
                    (true, Some(_)) if simulated && check.heavy => Some(crate::policy::TOO_BIG_TO_SIMULATE),
                    _ => None,
                };
                if let (sanitize::Mode::Pass, Replay::Yes, Ok(build)) =
                    (sanitizer, sanitize::replay(check, &name, &opts.test_args), &built.build)
                {
                    let ptx = Arc::new(build.ptx.clone());
                    replays.push(sanitize::Case::new(name.clone(), check.clone(), ptx));
                }
                let trial = match skip_reason.map(|reason| (reason, policy.instead(check))) {
                    Some((_, Instead::StandIn)) => {
                        stand_ins.insert(name.clone());
                        let stand_in = kit::Check { run: check.stand_in.clone().expect("has one"), ..check.clone() };
                        make_trial(name, stand_in, built, env.clone(), records.clone(), correctness.clone())
                    }
                    Some((reason, _)) => {
                        ignored.insert(name.clone(), reason);
                        Trial::test(name.clone(), || Ok(())).with_ignored_flag(true).with_kind(reason)
                    }
                    None => {
                        if let (true, Ok(build)) = (Ahead::wanted(check), &built.build) {
                            ahead_jobs.push((name.clone(), check.clone(), build.clone()));
                        }
                        make_trial(name, check.clone(), built, env.clone(), records.clone(), correctness.clone())
                    }
                };
                trials.push(trial);
            }
        }
    }

    let mut args = opts.test_args.clone();
    // Kernels are timed; two checks must never share the GPU.
    args.test_threads = Some(1);
    // The sanitizer pass runs on other cores while the GPU works through the tests.
    let pass =
        (!replays.is_empty()).then(|| sanitize::Pass::start(replays, opts.seed, compiler_for_env, options.clone()));
    // Only for a whole run on a GPU: a filtered one would compute inputs for
    // checks it does not run, and on the simulator the checks use every core.
    let whole_run = args.filter.is_none() && args.skip.is_empty() && !args.ignored;
    let ahead = (can_time && whole_run).then(|| Ahead::start(opts.seed, options, ahead_jobs));
    let conclusion = libtest_mimic::run(&args, trials);
    drop(ahead);
    kit::backend::traced::phase("checks run");
    let records = std::mem::take(&mut *records.lock().unwrap());
    if let Some(pass) = &pass {
        for stuck in records.values().filter(|t| t.verdict.as_deref().is_some_and(|v| Verdict::from(v).never_ended())) {
            let part: String = stuck.name.split("::").take(2).map(|s| format!("{s}::")).collect();
            pass.cancel_part(&part);
        }
    }
    Ok(Pending(Stage::Checked(Box::new(Checked {
        exercises: exercises.to_vec(),
        parts,
        records,
        ignored,
        stand_ins,
        policy,
        sanitizer,
        pass,
        conclusion,
        env_report,
        seed: opts.seed,
        root: opts.root.clone(),
        sources: opts.sources.clone(),
        test_args: opts.test_args.clone(),
    }))))
}

impl Pending {
    /// Every verdict the checks gave (before the sanitizer pass adds its own).
    pub fn verdicts(&self) -> Vec<String> {
        match &self.0 {
            Stage::Finished(finished) => finished
                .0
                .exercises
                .iter()
                .flat_map(|e| &e.parts)
                .flat_map(|p| &p.tests)
                .filter_map(|t| t.verdict.clone())
                .collect(),
            Stage::Checked(c) => c.records.values().filter_map(|t| t.verdict.clone()).collect(),
        }
    }

    /// The backend the checks ran on.
    pub fn backend(&self) -> &str {
        match &self.0 {
            Stage::Finished(finished) => &finished.0.environment.backend,
            Stage::Checked(c) => &c.env_report.backend,
        }
    }

    /// Waits for the sanitizer pass, folds it in and scores every part.
    pub fn finish(self) -> (GradeReport, Conclusion) {
        match self.0 {
            Stage::Finished(finished) => *finished,
            Stage::Checked(c) => c.finish(),
        }
    }
}

impl Checked {
    fn finish(self) -> (GradeReport, Conclusion) {
        let Checked {
            exercises,
            parts,
            records,
            ignored,
            stand_ins,
            policy,
            sanitizer,
            pass,
            mut conclusion,
            env_report,
            seed,
            root,
            sources,
            test_args,
        } = self;
        let pass = pass.map(sanitize::Pass::join);
        let mut report = GradeReport::new(seed, &root, &sources, env_report);
        let mut built_iter = parts.into_iter();
        for ex in &exercises {
            let mut ex_report = ExerciseReport {
                id: ex.id.into(),
                title: ex.title.into(),
                score: 0.0,
                max_score: 0.0,
                parts: Vec::new(),
            };
            for part in &ex.parts {
                let built = built_iter.next().expect("one build per part");
                let mut tests: Vec<TestReport> = part
                    .checks
                    .iter()
                    .map(|c| {
                        let name = ex.test_name(part, c);
                        records.get(&name).cloned().unwrap_or_else(|| {
                            let status = if ignored.contains_key(&name) { Status::Ignored } else { Status::NotRun };
                            TestReport::new(name.clone(), c.kind, status)
                        })
                    })
                    .collect();
                not_graded_here::spread(&mut tests);
                for t in &mut tests {
                    policy.annotate(t, ignored.get(&t.name).copied(), stand_ins.contains(&t.name));
                }
                let (sanitizer, failed_now) = sanitizer.part_summary(pass.as_ref(), ex, part, &test_args, &mut tests);
                conclusion.num_failed += failed_now as u64;
                conclusion.num_passed = conclusion.num_passed.saturating_sub(failed_now as u64);
                score::score_part(part.points, &mut tests);
                ex_report.parts.push(PartReport {
                    name: part.name.into(),
                    file: built.rel,
                    sha256: built.sha256,
                    score: 0.0,
                    max_score: 0.0,
                    compile: built.report,
                    tests,
                    sanitizer,
                });
            }
            report.exercises.push(ex_report);
        }
        report.total_up();
        if let Some(pass) = &pass {
            print!("{}", sanitize::summary(pass, &report));
        }
        (report, conclusion)
    }
}

/// Exit status of a run where nothing could be compiled (no CUDA compiler
/// found, none could be installed): documented in the README.
pub const EXIT_NO_COMPILER: u8 = 3;

/// Whether `report` comes from a run that had no compiler at all.
pub fn nothing_compiled(report: &GradeReport) -> bool {
    report.environment.compiler.is_none() && !report.exercises.is_empty()
}

/// No compiler: say why once, list every test as not run (one line each),
/// and score them all 0 without starting the harness (whose ten failures
/// would each repeat the same paragraph).
fn without_compiler(exercises: &[Exercise], opts: &Options, env: Environment, why: &str) -> (GradeReport, Conclusion) {
    println!("\nerror: nothing can be compiled, so no test can run: {why}\n");
    let filter = opts.test_args.filter.as_deref().unwrap_or("");
    let mut report = GradeReport::new(opts.seed, &opts.root, &opts.sources, env);
    let mut not_run = 0;
    for ex in exercises {
        let mut ex_report =
            ExerciseReport { id: ex.id.into(), title: ex.title.into(), score: 0.0, max_score: 0.0, parts: Vec::new() };
        for part in &ex.parts {
            let rel = format!("{}/{}/{}", opts.sources, ex.folder_name(), part.file);
            let sha256 = SourceFile::read(&opts.root.join(&rel), &rel).ok().map(|s| s.sha256_hex());
            let mut tests: Vec<TestReport> = part
                .checks
                .iter()
                .map(|c| TestReport::new(ex.test_name(part, c), c.kind, Status::NotRun))
                .filter(|t| t.name.contains(filter))
                .collect();
            for t in &tests {
                println!("test {} ... not run (no compiler)", t.name);
            }
            not_run += tests.len();
            score::score_part(part.points, &mut tests);
            // Short: the reason was said once at the top.
            let message = Some("not compiled: no CUDA compiler (the run's first error says what to install)".into());
            ex_report.parts.push(PartReport {
                name: part.name.into(),
                file: rel,
                sha256,
                score: 0.0,
                max_score: 0.0,
                compile: CompileReport {
                    status: CompileStatus::Error,
                    diagnostics: Vec::new(),
                    message,
                    from_cache: false,
                },
                tests,
                sanitizer: None,
            });
        }
        report.exercises.push(ex_report);
    }
    report.total_up();
    println!("\n{not_run} tests not run: install a CUDA compiler as said above, then grade again.\n");
    let conclusion = Conclusion { num_filtered_out: 0, num_passed: 0, num_failed: 0, num_ignored: 0, num_measured: 0 };
    (report, conclusion)
}

/// The compiler's messages as rustc shows them: each with the student's line,
/// a caret under the column and, for first-week mistakes, a `help:`.
fn print_diagnostics(file: &Path, diagnostics: &[ptx_build::Diagnostic]) {
    if diagnostics.is_empty() {
        return;
    }
    let source = std::fs::read_to_string(file).unwrap_or_default();
    for line in ptx_build::render_diagnostics(diagnostics, &source).lines() {
        println!("      {line}");
    }
}

/// How every student file is compiled for a device of compute capability
/// `arch` (the default where there is none). Always with line info: the
/// simulator names the student's `.cu` line of a race or a bad access, and
/// `-lineinfo` does not change the code a GPU runs, so the GPU and the
/// sanitizer pass run the same PTX. `grader batch` compiles ahead with these.
pub fn compile_options(arch: Option<(u32, u32)>) -> CompileOptions {
    CompileOptions {
        arch: arch.unwrap_or(CompileOptions::default().arch),
        line_info: true,
        ..CompileOptions::default()
    }
}

/// A batch worker grades part after part in one process: with this set, the
/// GPU (one CUDA context) and the compiler are opened once and kept.
static KEPT: OnceLock<Mutex<Option<Opened>>> = OnceLock::new();

/// What [`open_environment`] finds: the environment's report, the GPU, the compiler.
type Opened = (Environment, Option<Gpu>, Result<Compiler, String>);

/// Keeps the environment of the next [`run`] for every later one (see `batch::worker`).
pub fn keep_environment() {
    let _ = KEPT.set(Mutex::new(None));
}

/// Whether a compile was abandoned in this process: every later compile would
/// queue behind it, so a batch worker that saw one is replaced.
pub fn compile_stuck() -> bool {
    STUCK_COMPILE.get().is_some()
}

fn open_environment(opts: &Options) -> Result<Opened> {
    let Some(kept) = KEPT.get() else { return open_environment_now(opts) };
    let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
    if kept.is_none() {
        *kept = Some(open_environment_now(opts)?);
    }
    Ok(kept.clone().expect("opened above"))
}

/// Finds the compiler and the GPU, saying in one line each what is missing.
fn open_environment_now(opts: &Options) -> Result<Opened> {
    let mut env = Environment::default();
    let cache_dir = std::env::var_os(PTX_CACHE_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| opts.root.join("target").join("ptx-cache"));
    let compiler = Compiler::from_env().map(|c| c.with_cache_dir(cache_dir)).map_err(|e| e.to_string());
    // A missing compiler is said once, by `without_compiler`.
    if let Ok(c) = &compiler {
        env.compiler = Some(c.version().to_string());
        env.compiler_kind = Some(c.kind().name().to_string());
        env.device_headers = Some(c.header_source());
    }
    let gpu = match opts.backend {
        BackendChoice::None => {
            env.note = Some("--backend none: compiled and checked the PTX only; GPU checks ignored".into());
            None
        }
        BackendChoice::Sim => Some(Gpu::simulator()),
        BackendChoice::LuckySim => Some(Gpu::new(Box::new(kit::backend::sim::SimBackend::lucky()), opts.timeout)),
        BackendChoice::Auto | BackendChoice::Cuda => match Gpu::cuda(opts.timeout) {
            Ok(gpu) => Some(gpu),
            Err(e) if opts.backend == BackendChoice::Auto => {
                let note = format!(
                    "{e}. Running the kernels on the PTX simulator instead: performance checks are skipped \
                     and the largest inputs are left to a real GPU"
                );
                println!("{note}");
                env.note = Some(note);
                Some(Gpu::simulator())
            }
            Err(e) => anyhow::bail!("--backend cuda: {e}"),
        },
    };
    match &gpu {
        Some(g) => {
            let i = g.info();
            env.backend = i.backend.clone();
            env.gpu = Some(i.name.clone());
            env.compute_capability = Some(format!("{}.{}", i.compute_capability.0, i.compute_capability.1));
            env.driver = i.driver_version.clone();
            match &i.driver_version {
                Some(driver) => println!(
                    "GPU: {} (compute capability {}.{}, driver {driver})",
                    i.name, i.compute_capability.0, i.compute_capability.1
                ),
                None => println!("Kernels run on {}", i.name),
            }
        }
        None => env.backend = "none".into(),
    }
    Ok((env, gpu, compiler))
}

struct BuiltPart {
    rel: String,
    sha256: Option<String>,
    report: CompileReport,
    /// `Err` holds why the checks cannot run.
    build: Result<Arc<PartBuild>, String>,
}

impl BuiltPart {
    fn line(&self) -> String {
        match (&self.build, self.report.diagnostics.len()) {
            (Ok(_), 0) => format!("ok{}", if self.report.from_cache { " (cached)" } else { "" }),
            (Ok(_), w) => format!("ok, {w} warning(s)"),
            (Err(_), _) => "FAILED".into(),
        }
    }
}

fn compile_part(root: &Path, rel: &str, compiler: Result<&Compiler, &String>, options: &CompileOptions) -> BuiltPart {
    let failed = |sha256, diagnostics, message: String| BuiltPart {
        rel: rel.to_string(),
        sha256,
        report: CompileReport {
            status: CompileStatus::Error,
            diagnostics,
            message: Some(message.clone()),
            from_cache: false,
        },
        build: Err(message),
    };
    let source = match SourceFile::read(&root.join(rel), rel) {
        Ok(s) => s,
        Err(e) => return failed(None, Vec::new(), e.to_string()),
    };
    let sha = Some(source.sha256_hex());
    let compiler = match compiler {
        Ok(c) => c,
        Err(e) => return failed(sha, Vec::new(), format!("not compiled: {e}")),
    };
    let stuck = STUCK_COMPILE.get();
    let limit = if stuck.is_some() { CACHE_HIT_WAIT } else { compile_time_limit() };
    let Some(compiled) = compile_within(compiler, &source, options, limit) else {
        let why = match stuck {
            Some(first) => format!(
                "{rel}: error: not compiled: the compiler is still busy with `{first}`, which took too long \
                 (it compiles one file at a time). Fix that file, or grade this part alone with --part"
            ),
            None => {
                let _ = STUCK_COMPILE.set(rel.to_string());
                format!(
                    "{rel}: error: compiling took longer than {} s and was stopped. Look for macros or \
                     templates that expand without end (each level doubling the code)",
                    limit.as_secs_f64()
                )
            }
        };
        return failed(sha, Vec::new(), why);
    };
    match compiled {
        Ok(ptx) => BuiltPart {
            rel: rel.to_string(),
            sha256: sha,
            report: CompileReport {
                status: CompileStatus::Ok,
                diagnostics: ptx.diagnostics.clone(),
                message: None,
                from_cache: ptx.from_cache,
            },
            build: Ok(Arc::new(PartBuild::new(ptx.text))),
        },
        Err(e) => match (&e, e.first_error()) {
            (BuildError::Compile { diagnostics, .. }, Some(first)) => {
                failed(sha, diagnostics.clone(), first.to_string())
            }
            _ => failed(sha, Vec::new(), e.to_string()),
        },
    }
}

/// Seconds one student file may take to compile (default 60). A few lines of
/// macros can keep NVRTC busy for hours, and NVRTC runs inside this process.
pub const COMPILE_TIMEOUT_ENV: &str = "CUDA_LAB_COMPILE_TIMEOUT";
const DEFAULT_COMPILE_TIMEOUT: Duration = Duration::from_secs(60);

/// The file whose compile was abandoned, if one was. NVRTC compiles one file at
/// a time per process, so every later compile only queues behind it.
static STUCK_COMPILE: OnceLock<String> = OnceLock::new();
/// How long later compiles wait once one is stuck: enough for a cache hit.
const CACHE_HIT_WAIT: Duration = Duration::from_secs(1);

fn compile_time_limit() -> Duration {
    std::env::var(COMPILE_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_COMPILE_TIMEOUT, Duration::from_secs_f64)
}

/// Compiles on a thread of its own and stops waiting after `limit` (`None`).
/// NVRTC cannot be interrupted: a runaway compile is abandoned, busy on one
/// core until the grader exits.
fn compile_within(
    compiler: &Compiler,
    source: &SourceFile,
    options: &CompileOptions,
    limit: Duration,
) -> Option<Result<Ptx, BuildError>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let job = (compiler.clone(), source.clone(), options.clone());
    let spawned = std::thread::Builder::new()
        .name(format!("compile {}", source.display_path))
        // The main thread's room: deep template recursion recurses in the compiler too.
        .stack_size(64 << 20)
        .spawn(move || {
            let (compiler, source, options) = job;
            let _ = tx.send(compiler.compile(&source, &options));
        });
    match spawned.map(|_| rx.recv_timeout(limit)) {
        Ok(Ok(compiled)) => Some(compiled),
        Ok(Err(RecvTimeoutError::Timeout)) => None,
        Ok(Err(RecvTimeoutError::Disconnected)) => {
            Some(Err(BuildError::Other(format!("{}: error: the compiler crashed", source.display_path))))
        }
        Err(_) => Some(compiler.compile(source, options)),
    }
}

/// A part's checks in the order they run: its correctness checks first (in
/// their order), so that a structure or performance check's line can already
/// say whether it counts.
fn in_running_order(checks: &[kit::Check]) -> Vec<&kit::Check> {
    let mut ordered: Vec<&kit::Check> = checks.iter().collect();
    ordered.sort_by_key(|c| c.kind != CheckKind::Correctness);
    ordered
}

/// `check`'s trial. `correctness` names its part's correctness checks, which
/// run before it: a structure or performance check that passes while one of
/// them failed is shown `not counted`, and every check of a part the
/// simulator cannot run is `not graded here`.
fn make_trial(
    name: String,
    check: kit::Check,
    built: &BuiltPart,
    env: Arc<RunEnv>,
    records: Arc<Mutex<HashMap<String, TestReport>>>,
    correctness: Arc<Vec<String>>,
) -> Trial {
    let build = built.build.clone();
    let rel = built.rel.clone();
    Trial::ignorable_test(name.clone(), move || {
        let start = Instant::now();
        let cpu_before = kit::stats::get(kit::stats::Counter::CpuReference);
        let outcome: Result<String> = match &build {
            Err(why) => Err(anyhow::anyhow!(NotCompiled(format!("not run: {rel} did not compile ({why})")))),
            Ok(build) => {
                let ctx = Ctx { check_name: &name, env: &env, build };
                discard_profiles(&env);
                kit::perf::take_figures();
                kit::measure::take_measured();
                kit::check::take_mismatches();
                kit::digest::set_current_check(&name);
                // Shared with other batch workers on this GPU one device operation at a
                // time, never with a timing (kit::backend::locked), and held for good
                // by a kernel that never ends.
                if let Some(gpu) = &env.gpu {
                    gpu.begin_check();
                    // Only correctness launches compare their inputs with what was
                    // uploaded: timed launches stay as they were.
                    gpu.watch_inputs(check.kind == CheckKind::Correctness);
                    // `grader batch --timeout-from-reference`: this check's own limit.
                    if let Some(limit) = crate::check_limits::for_check(&name) {
                        gpu.limit_check(limit);
                    }
                }
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (check.run)(&ctx)))
                    .unwrap_or_else(|p| Err(anyhow::anyhow!("the check itself panicked: {}", panic_text(&p))))
            }
        };
        if kit::backend::traced::enabled() {
            let (ops, device_ms) = kit::backend::traced::take();
            let cpu_ms = (kit::stats::get(kit::stats::Counter::CpuReference) - cpu_before).as_secs_f64() * 1e3;
            let all_ms = start.elapsed().as_secs_f64() * 1e3;
            eprintln!("trace {name}: {all_ms:.1} ms: device calls {device_ms:.1}, shared inputs and references {cpu_ms:.1}; {ops}");
        }
        let profile = collect_profiles(&env);
        let mut record = TestReport {
            duration_ms: start.elapsed().as_secs_f64() * 1e3,
            profile,
            perf: kit::perf::take_figures(),
            measured: kit::measure::take_measured(),
            mismatches: kit::check::take_mismatches(),
            ..TestReport::new(name.clone(), check.kind, Status::Pass)
        };
        let result = match outcome {
            Err(e) if not_graded_here::cause(&e).is_some() => {
                let why = not_graded_here::message(&e);
                record.status = Status::NotGradedHere;
                record.verdict = Some(Verdict::NotSimulated.into());
                let first = why.lines().next().unwrap_or_default().to_string();
                record.message = Some(why);
                Ok(Completion::ignored_with(first))
            }
            Ok(note) => {
                let lines: Vec<String> = std::iter::once(note)
                    .chain(record.profile.iter().map(|p| p.summary()))
                    .filter(|l| !l.is_empty())
                    .collect();
                record.message = (!lines.is_empty()).then(|| lines.join("\n"));
                Ok(Completion::Completed)
            }
            Err(e) if e.downcast_ref::<Skip>().is_some() => {
                record.status = Status::Ignored;
                record.message = Some(e.to_string());
                Ok(Completion::ignored_with(e.to_string()))
            }
            Err(e) => {
                let msg = format!("{e:#}");
                record.status = Status::Fail;
                record.verdict = Some(Verdict::of(&e, check.kind).into());
                record.message = Some(msg.clone());
                Err(Failed::from(msg))
            }
        };
        let mut records = records.lock().unwrap();
        let result = match part_verdict(&records, &correctness, check.kind) {
            Some(PartVerdict::NotGradedHere(why)) if record.status != Status::NotGradedHere => {
                not_graded_here::mark(&mut record, &why);
                Ok(Completion::ignored_with(why.lines().next().unwrap_or_default()))
            }
            Some(PartVerdict::Failed(first)) if record.status == Status::Pass => {
                // Scoring says so in the JSON; the line must not say `ok` either.
                Ok(Completion::ignored_with(format!("not counted: `{first}` failed")))
            }
            _ => result,
        };
        records.insert(name, record);
        result
    })
}

/// What a part's correctness checks that have run say about its other checks.
enum PartVerdict {
    /// One could not be graded here (why).
    NotGradedHere(String),
    /// One failed (its name).
    Failed(String),
}

/// For a structure or performance check: what its part's correctness checks
/// (`correctness`, all run before it) came to; `None` for a correctness check.
fn part_verdict(records: &HashMap<String, TestReport>, correctness: &[String], kind: CheckKind) -> Option<PartVerdict> {
    if kind == CheckKind::Correctness {
        return None;
    }
    let ran: Vec<&TestReport> = correctness.iter().filter_map(|n| records.get(n)).collect();
    if let Some(t) = ran.iter().find(|t| t.status == Status::NotGradedHere) {
        return Some(PartVerdict::NotGradedHere(t.message.clone().unwrap_or_default()));
    }
    ran.iter().find(|t| t.status == Status::Fail).map(|t| PartVerdict::Failed(t.name.clone()))
}

/// Drops profiles left by earlier work (the copy-bandwidth calibration, say).
fn discard_profiles(env: &RunEnv) {
    if let Some(gpu) = &env.gpu {
        gpu.backend().take_profiles();
    }
}

/// The simulator's memory profiles of this check's launches, one per kernel.
fn collect_profiles(env: &RunEnv) -> Vec<MemoryProfile> {
    let mut per_kernel: Vec<MemoryProfile> = Vec::new();
    for p in env.gpu.as_ref().map(|g| g.backend().take_profiles()).unwrap_or_default() {
        match per_kernel.iter_mut().find(|k| k.kernel == p.kernel) {
            Some(k) => k.add(&p),
            None => per_kernel.push(p),
        }
    }
    per_kernel
}

/// The compiler of the grader's own yardsticks. The timed thresholds are ratios
/// to yardsticks compiled by NVRTC (each CALIBRATION.md); clang compiles some of
/// them differently (the interleaved reduction of ex08 runs twice as fast on the
/// H100), which would move the bar under a student who only chose a compiler.
/// So where kernels are timed, NVRTC compiles them whenever it loads here.
fn yardstick_compiler(students: Compiler, can_time: bool) -> Compiler {
    if !can_time || students.kind() == ptx_build::CompilerKind::Nvrtc {
        return students;
    }
    match Compiler::nvrtc() {
        Ok(nvrtc) => match students.cache_dir() {
            Some(dir) => nvrtc.with_cache_dir(dir),
            None => nvrtc,
        },
        Err(_) => students,
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default()
}
