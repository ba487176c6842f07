//! The sanitizer pass: on a real GPU, every graded part's correctness cases
//! that fit the simulator run a second time on ptx-sim, on CPU threads, while
//! the GPU works through the tests. A GPU that computes the right numbers can
//! still hide a bug (a race that happened to fall the right way, a read past
//! the end of an array that changed nothing); the simulator sees those, and a
//! student gets the same verdict whether a GPU or the simulator ran the kernel.
//!
//! The pass never makes the GPU wait: it starts before the first test and is
//! joined only when the results are assembled. Each case gets its own
//! simulator, so cases run in parallel on the process's pool of threads
//! ([`pool`]); a case already replayed on the same PTX is not replayed again
//! ([`memo`]).

mod memo;
mod pool;

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use kit::backend::sim::SimBackend;
use kit::{CheckKind, Ctx, Gpu, PartBuild, RunEnv, Skip};
use libtest_mimic::Arguments;
use ptx_build::{CompileOptions, Compiler};

pub use crate::report::{Finding, PartSanitizer};
use crate::report::{Status, TestReport};
use crate::verdict::Verdict;

/// `--sanitize`: whether GPU grades also run the sanitizer pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Sanitize {
    /// Replay the correctness cases on the simulator (the default).
    #[default]
    On,
    /// Only the GPU judges (for timing comparisons; the grade is weaker).
    Off,
}

/// Sets how many threads the pass uses (default: every core but one).
pub const THREADS_ENV: &str = "CUDA_LAB_SANITIZE_THREADS";

/// How a run is sanitized (`environment.sanitizer` in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A GPU grade with the pass: the correctness cases are replayed.
    Pass,
    /// The grading run is on the simulator, which checks every launch itself.
    GradingRun,
    /// `--sanitize off` on a GPU.
    Off,
    /// Nothing ran (`--backend none`).
    NotRun,
}

impl Mode {
    pub fn of(sanitize: Sanitize, has_gpu: bool, sanitizes_itself: bool) -> Mode {
        match (sanitize, has_gpu, sanitizes_itself) {
            (_, false, _) => Mode::NotRun,
            (_, true, true) => Mode::GradingRun,
            (Sanitize::On, true, false) => Mode::Pass,
            (Sanitize::Off, true, false) => Mode::Off,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Pass => "on",
            Mode::GradingRun => "grading-run",
            Mode::Off => "off",
            Mode::NotRun => "not-run",
        }
    }

    /// Folds the finished pass into one part's `tests` and says what it did
    /// there; also returns how many passing tests it failed.
    pub fn part_summary(
        self,
        pass: Option<&Joined>,
        ex: &kit::Exercise,
        part: &kit::Part,
        args: &Arguments,
        tests: &mut [TestReport],
    ) -> (Option<PartSanitizer>, usize) {
        match (self, pass) {
            (Mode::Pass, Some(pass)) => {
                let too_big =
                    part.checks.iter().filter(|c| replay(c, &ex.test_name(part, c), args) == Replay::TooBig).count();
                let failed = |tests: &[TestReport]| tests.iter().filter(|t| t.status == Status::Fail).count();
                let before = failed(tests);
                let summary = pass.apply(too_big, tests);
                (Some(summary), failed(tests) - before)
            }
            (Mode::Pass, None) => (Some(PartSanitizer::not_run("no case of this run fits the simulator")), 0),
            (Mode::GradingRun, _) => (Some(PartSanitizer::in_grading_run()), 0),
            (Mode::Off, _) => (Some(PartSanitizer::not_run("--sanitize off")), 0),
            (Mode::NotRun, _) => (None, 0),
        }
    }
}

/// What one replay on the simulator came to.
#[derive(Debug, Clone)]
enum Outcome {
    Clean,
    /// Right, but a barrier was released after some threads of its block had
    /// exited before it (ptx-sim's `barrier_after_exit`): a note, not a
    /// failure (a GPU gives the right numbers); the structure check that asks
    /// for the barrier fails on it.
    Noted {
        message: String,
    },
    /// A bug the simulator proved ([`Verdict::proves_a_bug`]).
    Found {
        verdict: Verdict,
        message: String,
    },
    /// Another answer, without proof of a bug.
    Differs {
        verdict: Verdict,
        message: String,
    },
    /// The simulator cannot run this kernel.
    NotChecked {
        message: String,
    },
    /// The check skipped itself on the simulator.
    Skipped,
    /// Stopped: on the GPU a kernel of this part never ended (see [`Pass::cancel_part`]).
    NotReplayed,
    /// The check itself panicked on the simulator.
    Panicked,
}

impl Outcome {
    /// Whether another replay of the same case would come to the same outcome.
    fn is_settled(&self) -> bool {
        !matches!(self, Outcome::NotReplayed | Outcome::Panicked)
    }
}

/// One correctness case to replay.
pub struct Case {
    /// The test's full name: also the seed of its inputs, so both runs see the same data.
    pub test: String,
    pub check: kit::Check,
    pub ptx: Arc<String>,
    /// Flipped when the GPU run already settled the case (see [`Pass::cancel_part`]).
    pub cancel: ptx_sim::CancelFlag,
}

impl Case {
    pub fn new(test: String, check: kit::Check, ptx: Arc<String>) -> Case {
        Case { test, check, ptx, cancel: Default::default() }
    }
}

/// Whether the pass replays `check` (the test `name`): correctness checks
/// that fit the simulator and that the harness's filter selects.
pub fn replay(check: &kit::Check, name: &str, args: &Arguments) -> Replay {
    if check.kind != CheckKind::Correctness || args.list || args.ignored || !filter_selects(args, name) {
        Replay::No
    } else if check.heavy {
        Replay::TooBig
    } else {
        Replay::Yes
    }
}

/// Whether the pass replays one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    Yes,
    /// A correctness case too big for the simulator: the GPU alone checks it.
    TooBig,
    No,
}

/// Whether the GPU runs the test `name` under the harness arguments.
pub fn filter_selects(args: &Arguments, name: &str) -> bool {
    let matches = |pattern: &str| if args.exact { name == pattern } else { name.contains(pattern) };
    args.filter.as_deref().is_none_or(matches) && !args.skip.iter().any(|s| matches(s))
}

/// One case's replay as the pass keeps it.
struct Replayed {
    outcome: Outcome,
    /// CPU time of the replay (none when it was reused).
    cpu: Duration,
    reused: bool,
}

/// The outcomes so far, and how many cases are still to come.
#[derive(Default)]
struct Progress {
    outcomes: Mutex<(HashMap<String, Replayed>, usize)>,
    done: Condvar,
}

/// The pass while it runs.
pub struct Pass {
    progress: Arc<Progress>,
    /// Each case's test name and switch.
    switches: Vec<(String, ptx_sim::CancelFlag)>,
    cases: usize,
    started: Instant,
}

impl Pass {
    /// Queues `cases` on the replay threads and returns at once.
    pub fn start(cases: Vec<Case>, seed: u64, compiler: Option<Compiler>, options: CompileOptions) -> Pass {
        let count = cases.len();
        let switches = cases.iter().map(|c| (c.test.clone(), c.cancel.clone())).collect();
        let progress = Arc::new(Progress { outcomes: Mutex::new((HashMap::new(), count)), done: Condvar::new() });
        for case in cases {
            let (progress, compiler, options) = (progress.clone(), compiler.clone(), options.clone());
            pool::submit(move || {
                // Counted as done even if the replay panics past its own guard.
                let mut finished = Finished { progress: &progress, test: case.test.clone(), replayed: None };
                let key = memo::Key::new(seed, &case.test, &case.ptx);
                finished.replayed = Some(match memo::get(&key) {
                    Some(outcome) => Replayed { outcome, cpu: Duration::ZERO, reused: true },
                    None => {
                        let cpu = thread_cpu_time();
                        let outcome = run_case(&case, seed, compiler, options);
                        memo::put(key, &outcome);
                        Replayed { outcome, cpu: thread_cpu_time().saturating_sub(cpu), reused: false }
                    }
                });
            });
        }
        Pass { progress, switches, cases: count, started: Instant::now() }
    }

    /// Stops replaying the cases of the part `<exercise>::<part>::`: its kernel
    /// never ended on the GPU, which the verdict already says. On the simulator
    /// each such case would run to the step limit (seconds of CPU each, on
    /// every core), and the grade would wait for all of them.
    pub fn cancel_part(&self, prefix: &str) {
        for (test, cancel) in &self.switches {
            if test.starts_with(prefix) {
                cancel.cancel();
            }
        }
    }

    /// Waits for the last replay. Called once the GPU has run every test.
    pub fn join(self) -> Joined {
        let waited = Instant::now();
        let mut state = self.progress.outcomes.lock().unwrap_or_else(|p| p.into_inner());
        while state.1 > 0 {
            state = self.progress.done.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        let outcomes = std::mem::take(&mut state.0);
        Joined { outcomes, cases: self.cases, wall: self.started.elapsed(), waited: waited.elapsed() }
    }
}

/// Records one case as done when dropped, with its outcome if it got one.
struct Finished<'a> {
    progress: &'a Progress,
    test: String,
    replayed: Option<Replayed>,
}

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        let replayed =
            self.replayed.take().unwrap_or(Replayed { outcome: Outcome::Panicked, cpu: Duration::ZERO, reused: false });
        let mut state = self.progress.outcomes.lock().unwrap_or_else(|p| p.into_inner());
        state.0.insert(std::mem::take(&mut self.test), replayed);
        state.1 -= 1;
        if state.1 == 0 {
            self.progress.done.notify_all();
        }
    }
}

/// The finished pass.
pub struct Joined {
    outcomes: HashMap<String, Replayed>,
    pub cases: usize,
    /// From the start of the pass to its last replay.
    pub wall: Duration,
    /// How long the results waited for it after the GPU had finished.
    pub waited: Duration,
}

impl Joined {
    /// Folds the outcomes into one part's `tests` (as the GPU left them) and
    /// returns the part's summary; `too_big` cases were not replayed.
    pub fn apply(&self, too_big: usize, tests: &mut [TestReport]) -> PartSanitizer {
        let mut summary = PartSanitizer { ran: true, too_big, ..PartSanitizer::default() };
        for t in tests.iter_mut() {
            let Some(r) = self.outcomes.get(&t.name) else { continue };
            summary.cases += 1;
            summary.reused += r.reused as usize;
            summary.cpu_ms += r.cpu.as_secs_f64() * 1e3;
            fold(t, &r.outcome, &mut summary);
        }
        summary
    }

    pub fn cpu(&self) -> Duration {
        self.outcomes.values().map(|r| r.cpu).sum()
    }

    /// Cases whose outcome came from an earlier replay of the same PTX.
    pub fn reused(&self) -> usize {
        self.outcomes.values().filter(|r| r.reused).count()
    }
}

/// What the pass did, printed after the tests: its cost, and every finding.
pub fn summary(pass: &Joined, report: &crate::report::GradeReport) -> String {
    let parts: Vec<&PartSanitizer> =
        report.exercises.iter().flat_map(|e| &e.parts).filter_map(|p| p.sanitizer.as_ref()).collect();
    let reused = match pass.reused() {
        0 => String::new(),
        n => format!(", {n} of them reused from an identical kernel replayed before"),
    };
    let mut out = format!(
        "\nSanitizer pass: {} correctness case(s) also ran on the simulator ({:.1} s of CPU{reused}; the results waited {:.1} s for it)\n",
        pass.cases,
        pass.cpu().as_secs_f64(),
        pass.waited.as_secs_f64()
    );
    for f in parts.iter().flat_map(|p| &p.findings) {
        let first = f.message.lines().next().unwrap_or("");
        out += &format!("  {} ... {}: {first}\n", f.test, f.verdict);
    }
    let (differ, unchecked) = (
        parts.iter().map(|p| p.disagreements.len()).sum::<usize>(),
        parts.iter().map(|p| p.not_checked.len()).sum::<usize>(),
    );
    if differ > 0 {
        out += &format!("  {differ} case(s) computed another answer on the simulator (not counted; see the JSON)\n");
    }
    if unchecked > 0 {
        out += &format!("  {unchecked} case(s) could not run on the simulator (the GPU's verdict stands)\n");
    }
    out
}

/// One replay's outcome into its test. The GPU's numbers are the grade of
/// record; only a proved bug overrides them.
fn fold(t: &mut TestReport, outcome: &Outcome, summary: &mut PartSanitizer) {
    match outcome {
        Outcome::Clean | Outcome::Skipped => {}
        Outcome::Noted { message } => append(
            t,
            &format!(
                "note: the simulator's sanitizer pass found a barrier that some threads skip: {message} (not \
                 counted against correctness, which a GPU gets right; a structure check that asks for the barrier \
                 fails on it)"
            ),
        ),
        Outcome::Found { verdict, message } => {
            summary.findings.push(finding(t, verdict, message));
            if t.status == Status::Pass {
                t.status = Status::Fail;
                t.verdict = Some(verdict.to_string());
                t.found_by = Some("sanitizer".into());
                t.message = Some(format!(
                    "{message}\nfound by the simulator's sanitizer pass; the GPU gave the right numbers by luck, \
                     and another run or another GPU may not"
                ));
            } else if t.status == Status::Fail && sanitizer_names_it_better(t.verdict.as_deref(), verdict) {
                // The proved bug is why the numbers were wrong, and it is the
                // verdict whether or not a GPU's run happens to show it: the
                // same as on the simulator, and from one run to the next.
                let gpu_saw = t.message.take().unwrap_or_default();
                let first = gpu_saw.lines().next().unwrap_or("");
                let showed =
                    if t.verdict.as_deref() == Some("wrong") { "this bug gave wrong numbers" } else { "it showed as" };
                t.verdict = Some(verdict.to_string());
                t.found_by = Some("sanitizer".into());
                t.message =
                    Some(format!("{message}\nfound by the simulator's sanitizer pass; on the GPU {showed}: {first}"));
            } else if t.status == Status::Fail {
                append(t, &format!("the simulator's sanitizer pass also found: {verdict}: {message}"));
            }
        }
        Outcome::Differs { verdict, message } => differs(t, verdict, message, summary),
        Outcome::Panicked => differs(t, &Verdict::Crashed(None), "the check panicked on the simulator", summary),
        Outcome::NotChecked { message } => not_checked(t, message, summary),
        Outcome::NotReplayed => {
            not_checked(t, "not replayed: on the GPU a kernel of this part never ended, as its verdict says", summary)
        }
    }
}

/// Whether the sanitizer's finding is the verdict instead of the GPU's: wrong
/// numbers are what its bug did; and a write into a guard zone by a kernel
/// that read out of bounds first (`out[i] += x` past the end) is, on the
/// simulator, which stops at the first bad access, an out-of-bounds read.
fn sanitizer_names_it_better(gpu: Option<&str>, found: &Verdict) -> bool {
    match gpu.map(Verdict::from) {
        Some(Verdict::Wrong) => true,
        Some(Verdict::OutOfBoundsWrite) => *found == Verdict::OutOfBoundsRead,
        _ => false,
    }
}

fn finding(t: &TestReport, verdict: &Verdict, message: &str) -> Finding {
    Finding { test: t.name.clone(), verdict: verdict.to_string(), message: message.to_string() }
}

/// Another answer on the simulator. Not scored: it is not proof of a bug in
/// the kernel (the simulator may be wrong, or the kernel may rely on what
/// every GPU does), and the GPU's numbers are the grade of record. It is
/// recorded so that a TA can look.
fn differs(t: &mut TestReport, verdict: &Verdict, message: &str, summary: &mut PartSanitizer) {
    summary.disagreements.push(finding(t, verdict, message));
    if t.status == Status::Pass {
        let first = message.lines().next().unwrap_or("");
        append(
            t,
            &format!(
                "note: the simulator's sanitizer pass got another answer ({verdict}: {first}); \
                 not counted, the GPU's result stands"
            ),
        );
    }
}

/// A case the simulator did not check: the GPU's verdict stands.
fn not_checked(t: &mut TestReport, message: &str, summary: &mut PartSanitizer) {
    summary.not_checked.push(finding(t, &Verdict::NotSimulated, message));
    append(t, &format!("not checked by the simulator: {message}; the GPU's verdict stands"));
}

fn append(t: &mut TestReport, line: &str) {
    t.message = Some(match t.message.take() {
        Some(m) if !m.is_empty() => format!("{m}\n{line}"),
        _ => line.to_string(),
    });
}

/// Runs one case on a simulator of its own.
fn run_case(case: &Case, seed: u64, compiler: Option<Compiler>, options: CompileOptions) -> Outcome {
    if case.cancel.is_cancelled() {
        return Outcome::NotReplayed;
    }
    let backend = SimBackend::silent().cancellable(case.cancel.clone());
    let barriers = backend.barriers_after_exit();
    let gpu = Gpu::new(Box::new(backend), Duration::MAX);
    let env = RunEnv::new(seed, Some(gpu), compiler, options);
    let build = PartBuild::new(case.ptx.to_string());
    // Outside `Ctx::run`: a replay's reads and figures are not the run's, and are not recorded.
    let ctx = Ctx::new(&case.test, &env, &build);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (case.check.run)(&ctx)));
    if case.cancel.is_cancelled() {
        return Outcome::NotReplayed;
    }
    match result {
        Ok(Ok(_)) => match barriers.lock().unwrap_or_else(|p| p.into_inner()).first() {
            Some(b) => Outcome::Noted { message: kit::backend::sim::barrier_after_exit_text(b) },
            None => Outcome::Clean,
        },
        Ok(Err(e)) if e.downcast_ref::<Skip>().is_some() => Outcome::Skipped,
        Ok(Err(e)) => classify(Verdict::of(&e, CheckKind::Correctness), format!("{e:#}")),
        Err(_) => Outcome::Panicked,
    }
}

fn classify(verdict: Verdict, message: String) -> Outcome {
    if verdict.proves_a_bug() {
        Outcome::Found { verdict, message }
    } else if verdict.not_simulated() {
        Outcome::NotChecked { message }
    } else {
        Outcome::Differs { verdict, message }
    }
}

/// Every core but one (the GPU's host thread), or `CUDA_LAB_SANITIZE_THREADS`.
fn threads() -> usize {
    std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1)))
        .max(1)
}

/// The replays yield to the GPU's host thread, whose launches and timings matter more.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on this thread's own id; failure only leaves the priority as it was.
    unsafe {
        let _ = libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 10);
    }
}

/// CPU time of the calling thread.
fn thread_cpu_time() -> Duration {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid timespec to fill; the clock exists on every unix we build for.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        }
    }
    Duration::ZERO
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::CheckKind;

    fn passed() -> TestReport {
        TestReport::new("ex01::shared::correct::n=100".into(), CheckKind::Correctness, Status::Pass)
    }

    fn failed(verdict: &str, message: &str) -> TestReport {
        TestReport { status: Status::Fail, verdict: Some(verdict.into()), message: Some(message.into()), ..passed() }
    }

    #[test]
    fn a_finding_fails_a_test_the_gpu_passed() {
        let mut t = passed();
        let mut s = PartSanitizer::default();
        let found = classify(Verdict::Race, "data race on shared memory: pi_shared.cu:7".into());
        fold(&mut t, &found, &mut s);
        assert_eq!(t.status, Status::Fail);
        assert_eq!(t.verdict.as_deref(), Some("race"));
        let msg = t.message.unwrap();
        assert!(msg.contains("pi_shared.cu:7") && msg.contains("sanitizer pass"), "{msg}");
        assert_eq!(s.findings.len(), 1);
    }

    #[test]
    fn a_proved_bug_is_the_verdict_of_wrong_numbers_but_not_of_a_crash() {
        let race = classify(Verdict::Race, "data race on shared memory: shared_load.cu:21".into());
        let mut t = failed("wrong", "`out`: 1 of 256 element(s) wrong; first at index 159");
        fold(&mut t, &race, &mut PartSanitizer::default());
        assert_eq!(
            (t.status, t.verdict.as_deref(), t.found_by.as_deref()),
            (Status::Fail, Some("race"), Some("sanitizer"))
        );
        let msg = t.message.unwrap();
        assert!(msg.starts_with("data race") && msg.contains("first at index 159"), "{msg}");

        let mut t = failed("crashed: illegal address", "the kernel accessed memory it does not own");
        fold(&mut t, &race, &mut PartSanitizer::default());
        assert_eq!(t.verdict.as_deref(), Some("crashed: illegal address"), "a crash stays the verdict");
        assert!(t.message.unwrap().contains("also found: race"));
    }

    #[test]
    fn a_guard_zone_write_after_an_out_of_bounds_read_is_the_read_as_on_the_simulator() {
        let read = classify(Verdict::OutOfBoundsRead, "out-of-bounds read of `out`: scan_any.cu:40".into());
        let mut t = failed("out-of-bounds-write", "`out`: written past its end (guard zone)");
        fold(&mut t, &read, &mut PartSanitizer::default());
        assert_eq!((t.verdict.as_deref(), t.found_by.as_deref()), (Some("out-of-bounds-read"), Some("sanitizer")));
        assert!(t.message.unwrap().contains("written past its end"));
        // a race found beside a write past the end leaves the write
        let race = classify(Verdict::Race, "data race".into());
        let mut t = failed("out-of-bounds-write", "`out`: written past its end (guard zone)");
        fold(&mut t, &race, &mut PartSanitizer::default());
        assert_eq!(t.verdict.as_deref(), Some("out-of-bounds-write"));
    }

    #[test]
    fn a_different_answer_is_recorded_but_not_scored() {
        let mut t = passed();
        let mut s = PartSanitizer::default();
        fold(&mut t, &classify(Verdict::Wrong, "`hits`: expected 3, got 4".into()), &mut s);
        assert_eq!(t.status, Status::Pass);
        assert!(t.message.unwrap().contains("not counted"));
        assert_eq!(s.disagreements.len(), 1);
    }

    #[test]
    fn an_instruction_the_simulator_lacks_leaves_the_gpu_verdict() {
        let mut t = passed();
        let mut s = PartSanitizer::default();
        fold(&mut t, &classify(Verdict::NotSimulated, "redux.sync".into()), &mut s);
        assert_eq!(t.status, Status::Pass);
        assert!(t.message.unwrap().contains("not checked by the simulator: redux.sync"));
        assert_eq!(s.not_checked.len(), 1);
    }

    #[test]
    fn every_sanitizer_verdict_is_a_finding() {
        use Verdict::*;
        for v in [Race, OutOfBoundsRead, OutOfBoundsWrite, UninitialisedRead, BarrierDivergence, WarpMask] {
            assert!(matches!(classify(v.clone(), String::new()), Outcome::Found { .. }), "{v}");
        }
        assert!(matches!(classify(Verdict::Timeout, String::new()), Outcome::Differs { .. }));
    }

    #[test]
    fn the_filter_is_libtests() {
        let args = Arguments::from_iter(["grader", "shared"]);
        assert!(filter_selects(&args, "ex01::shared::correct::n=100"));
        assert!(!filter_selects(&args, "ex01::global::correct::n=100"));
        let args = Arguments::from_iter(["grader", "--skip", "n=100"]);
        assert!(!filter_selects(&args, "ex01::shared::correct::n=100"));
    }
}
