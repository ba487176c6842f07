//! Work done ahead of the GPU: seeded inputs and CPU references, and whole
//! structure checks.
//!
//! Checks run on the GPU one at a time, and most begin with CPU work: drawing
//! their seeded inputs and computing the CPU reference ([`kit::Ctx::shared`]),
//! up to a quarter of a second for the largest. While the GPU works through
//! the checks, a few threads run the coming checks as far as their first use
//! of the GPU (their environment has none, so that use ends them). The check
//! itself then finds its values ready, or waits for the thread computing them;
//! what it does on the GPU, and its verdict, do not change.
//!
//! A structure check (or a measured stand-in) runs on the simulator, not the
//! GPU: a thread here runs it whole, and its trial takes the outcome and the
//! record as they came out ([`Outcomes::take`]), waiting if the thread is still
//! at it, or running it itself if no thread has started it. The simulator is
//! deterministic and the thread's environment has the run's seed and shapes,
//! so the outcome is the one the trial would have had; one that asked for the
//! GPU (which the thread does not have) is run again by its trial.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use kit::{Check, Ctx, PartBuild, RunEnv};
use ptx_build::CompileOptions;

/// At most this many threads, and one core left to the check on the GPU.
const MAX_THREADS: usize = 4;
/// Sets how many threads work ahead (default: every core but one, at most
/// [`MAX_THREADS`]): for measuring what more or fewer of them buy on a GPU
/// machine (scripts/gpu-48-where.sh).
pub const THREADS_ENV: &str = "CUDA_LAB_AHEAD_THREADS";

/// Threads to work ahead on a machine of `cores`, or what [`THREADS_ENV`] says.
fn threads(cores: usize) -> usize {
    let asked = std::env::var(THREADS_ENV).ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0);
    asked.unwrap_or_else(|| cores.saturating_sub(1).clamp(1, MAX_THREADS))
}

/// One check to run ahead: its test name, the check, its part's build, and
/// whether it runs whole or only as far as the GPU.
pub struct Job {
    name: String,
    check: Check,
    build: Arc<PartBuild>,
    whole: bool,
}

impl Job {
    /// `check` ahead: whole where it runs on the simulator (a structure
    /// check), else as far as its first use of the GPU.
    pub fn of(name: String, check: Check, build: Arc<PartBuild>) -> Job {
        let whole = check.kind == kit::CheckKind::Structure;
        Job { name, check, build, whole }
    }

    /// A performance check's measured stand-in (it runs on the simulator), ahead whole.
    pub fn stand_in(name: String, stand_in: Check, build: Arc<PartBuild>) -> Job {
        Job { name, check: stand_in, build, whole: true }
    }

    /// The test name it runs as.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The part's build it runs on.
    pub fn build(&self) -> Arc<PartBuild> {
        self.build.clone()
    }
}

/// A check's outcome and record, as its trial would have them.
pub type Outcome = (anyhow::Result<String>, kit::record::Record);

/// The outcomes of a run's whole jobs, by test name.
#[derive(Default)]
pub struct Outcomes {
    slots: Mutex<HashMap<String, Arc<Slot>>>,
}

#[derive(Default)]
struct Slot {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
enum State {
    /// Not started by a thread yet.
    #[default]
    Queued,
    Running,
    Done(Box<Outcome>),
    /// Taken by its trial, or given back to it (the check asked for the GPU).
    Trials,
}

impl Outcomes {
    /// `name`'s outcome from a thread ahead: ready, or waited for (the wait
    /// counted as the simulator's measurement, which it is). `None`: the trial
    /// runs the check itself (none ran ahead, none had started it, or it asked
    /// for the GPU).
    pub fn take(&self, name: &str) -> Option<Outcome> {
        let slot = self.slots.lock().unwrap_or_else(|p| p.into_inner()).remove(name)?;
        let waited = Instant::now();
        let mut state = slot.state.lock().unwrap_or_else(|p| p.into_inner());
        while matches!(*state, State::Running) {
            state = slot.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        kit::stats::credit_here(kit::stats::Counter::SimMeasure, waited.elapsed());
        match std::mem::replace(&mut *state, State::Trials) {
            State::Done(outcome) => Some(*outcome),
            _ => None,
        }
    }

    fn enrol(&self, name: &str) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.entry(name.to_string()).or_default().clone()
    }
}

impl Slot {
    /// Whether a thread may start the job (its trial has not taken it).
    fn start(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let queued = matches!(*state, State::Queued);
        if queued {
            *state = State::Running;
        }
        queued
    }

    fn end(&self, outcome: Option<Outcome>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        *state = outcome.map_or(State::Trials, |o| State::Done(Box::new(o)));
        self.changed.notify_all();
    }
}

/// Threads working through the jobs in order; dropping it drops the jobs not
/// yet started (one being computed still finishes, and is kept).
pub struct Ahead {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Ahead {
    /// Starts working through `jobs`, in order (the order the checks run in),
    /// in an environment of the run's seed and shapes (`shapes_secret`), without
    /// a GPU or a compiler; whole jobs' outcomes go into `outcomes`.
    pub fn start(seed: u64, shapes_secret: u64, options: CompileOptions, jobs: Vec<Job>, outcomes: &Outcomes) -> Ahead {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = threads(cores).min(jobs.len());
        // Enrolled before any trial runs, so that each finds its slot.
        let queue: VecDeque<(Job, Option<Arc<Slot>>)> = jobs
            .into_iter()
            .map(|job| {
                let slot = job.whole.then(|| outcomes.enrol(&job.name));
                (job, slot)
            })
            .collect();
        let queue = Arc::new(Mutex::new(queue));
        // Without a GPU and a compiler, a check stops at its first use of either.
        let env = Arc::new(RunEnv::new(seed, None, None, options).with_shapes_secret(shapes_secret));
        let spawn = |_| {
            let (queue, stop, env) = (queue.clone(), stop.clone(), env.clone());
            std::thread::Builder::new().name("work-ahead".into()).spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Some((job, slot)) = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front() else {
                        return;
                    };
                    run(&job, slot.as_deref(), &env);
                }
            })
        };
        // Best effort: without a thread, each check does its own work.
        let threads = (0..threads).filter_map(|i| spawn(i).ok()).collect();
        Ahead { stop, threads }
    }

    /// Waits until every job has run (for tests: each whole job's outcome is
    /// then ready, or given back to its trial).
    pub fn finish(mut self) {
        for t in std::mem::take(&mut self.threads) {
            let _ = t.join();
        }
    }
}

/// Runs one job on a thread ahead: whole, into its slot, or as far as the GPU.
fn run(job: &Job, slot: Option<&Slot>, env: &RunEnv) {
    let ctx = Ctx::new(&job.name, env, &job.build);
    let Some(slot) = slot else {
        // The outcome is the check's business when it runs for real; run
        // outside `Ctx::run`, it records nothing (no figures, no digests).
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (job.check.run)(&ctx)));
        return;
    };
    if !slot.start() {
        return;
    }
    let outcome = ctx.run_caught(|ctx| (job.check.run)(ctx));
    slot.end((!ctx.asked_for_gpu()).then(|| (outcome, ctx.take_record())));
}

impl Drop for Ahead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A check that computes a shared value (saying on which thread), then
    /// (like every check) asks for the GPU.
    fn counting_check(computed: Arc<AtomicUsize>, on: Arc<Mutex<Vec<String>>>) -> Check {
        Check::correctness("counts", move |ctx| {
            let (c, on) = (computed.clone(), on.clone());
            let v = ctx.shared("value", move || {
                c.fetch_add(1, Ordering::SeqCst);
                on.lock().unwrap().push(std::thread::current().name().unwrap_or("?").to_string());
                std::thread::sleep(std::time::Duration::from_millis(100));
                42u32
            });
            ctx.gpu()?;
            Ok(format!("{v}"))
        })
    }

    #[test]
    fn a_value_computed_ahead_is_the_one_the_check_uses_and_computed_once() {
        let computed = Arc::new(AtomicUsize::new(0));
        let on = Arc::new(Mutex::new(Vec::new()));
        let check = counting_check(computed.clone(), on.clone());
        let build = Arc::new(PartBuild::new(String::new()));
        let seed = 0xa4ead;
        let name = "ahead::test::counts".to_string();
        let jobs = vec![Job::of(name.clone(), check.clone(), build.clone())];
        let ahead = Ahead::start(seed, 0, CompileOptions::default(), jobs, &Outcomes::default());
        // The check asks while the thread computes: it waits rather than computing again.
        while computed.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let env = RunEnv::new(seed, None, None, CompileOptions::default());
        let ctx = Ctx::new(&name, &env, &build);
        let outcome = (check.run)(&ctx);
        assert!(outcome.is_err_and(|e| e.to_string().contains("no GPU")), "then it needs the GPU");
        drop(ahead);
        assert_eq!(computed.load(Ordering::SeqCst), 1, "computed once");
        assert_eq!(*on.lock().unwrap(), ["work-ahead"], "by the thread ahead");
    }

    /// A structure check that measures one launch of a kernel storing its
    /// thread's index, counting its runs; `gpu` also asks for the run's GPU.
    fn measuring_check(runs: Arc<AtomicUsize>, gpu: bool) -> Check {
        Check::structure("measures", move |ctx| {
            runs.fetch_add(1, Ordering::SeqCst);
            if gpu {
                let _ = ctx.gpu();
            }
            let m = kit::measure::measure_ptx(&ctx.build.ptx, "k", |module| {
                let out = module.gpu().zeros::<u32>("out", 32)?;
                module.launch("k", kit::LaunchConfig::linear(1, 32), &[(&out).into()])
            })?;
            let on = std::thread::current().name().unwrap_or("?").to_string();
            Ok(format!("{} sectors per store request, on {on}", m.store_sectors_per_request()))
        })
    }

    fn stores_its_index() -> Arc<PartBuild> {
        let body = "\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [k_param_0];\n\tmov.u32 %r1, \
                    %tid.x;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r1;";
        Arc::new(PartBuild::new(kit::trial::nvrtc_like_ptx("k", "", body)))
    }

    /// Runs `check` ahead as `name`, then, once it has started (`runs`),
    /// takes its outcome as its trial does (waiting for it to end).
    fn taken(name: &str, check: &Check, runs: &AtomicUsize) -> Option<Outcome> {
        let outcomes = Outcomes::default();
        let jobs = vec![Job::of(name.to_string(), check.clone(), stores_its_index())];
        let _ahead = Ahead::start(7, 0, CompileOptions::default(), jobs, &outcomes);
        while runs.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        outcomes.take(name)
    }

    #[test]
    fn finish_waits_for_every_job() {
        let runs = Arc::new(AtomicUsize::new(0));
        let outcomes = Outcomes::default();
        let jobs = (0..3).map(|i| Job::of(format!("n{i}"), measuring_check(runs.clone(), false), stores_its_index()));
        Ahead::start(7, 0, CompileOptions::default(), jobs.collect(), &outcomes).finish();
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        assert!((0..3).all(|i| outcomes.take(&format!("n{i}")).is_some()), "each ready");
    }

    #[test]
    fn a_structure_check_run_ahead_is_taken_whole_with_its_record_and_runs_once() {
        let runs = Arc::new(AtomicUsize::new(0));
        let check = measuring_check(runs.clone(), false);
        let (outcome, record) = taken("ahead::test::measures", &check, &runs).expect("ran ahead");
        let note = outcome.unwrap();
        assert!(note.starts_with("4 sectors per store request, on work-ahead"), "{note}");
        assert_eq!(record.measured.len(), 1, "the measurement's figures come with it");
        assert_eq!(runs.load(Ordering::SeqCst), 1, "run once");
    }

    #[test]
    fn a_check_that_asks_for_the_gpu_is_given_back_to_its_trial() {
        let runs = Arc::new(AtomicUsize::new(0));
        let check = measuring_check(runs.clone(), true);
        assert!(taken("ahead::test::gpu", &check, &runs).is_none(), "its trial runs it");
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_trial_takes_a_job_no_thread_started_and_no_thread_runs_it_then() {
        let outcomes = Outcomes::default();
        let slot = outcomes.enrol("ahead::test::queued");
        assert!(outcomes.take("ahead::test::queued").is_none(), "the trial runs it itself");
        assert!(!slot.start(), "and no thread starts it after");
        assert!(outcomes.take("ahead::test::never-enrolled").is_none());
    }

    /// What a correctness check does before its first use of the GPU is all a
    /// thread ahead computes: each must draw its seeded inputs and CPU
    /// reference first (until 2026-12-07 ex05, ex06, ex09, ex10, ex11 and
    /// ex12 took their module first, and on an H100 a warm `all` waited 1.2 s
    /// of its 4.3 s for their references on the GPU's thread).
    #[test]
    fn every_correctness_check_draws_its_inputs_before_it_asks_for_the_gpu() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let seed = 0xa4ead5eed;
        let env = RunEnv::new(seed, None, None, CompileOptions::default());
        let mut late = Vec::new();
        for ex in crate::registry::all() {
            for part in &ex.parts {
                let file = format!("reference/{}/{}", ex.folder_name(), part.file);
                let build = PartBuild::new(kit::trial::ptx_of(&compiler, &file, &CompileOptions::default()));
                for check in part.checks.iter().filter(|c| c.kind == kit::CheckKind::Correctness) {
                    let name = ex.test_name(part, check);
                    let ctx = Ctx::new(&name, &env, &build);
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (check.run)(&ctx)));
                    let stopped = matches!(&outcome, Ok(Err(e)) if e.to_string().contains("no GPU"));
                    if stopped && !kit::shared::computed_for(seed, &name) {
                        late.push(name);
                    }
                }
            }
        }
        assert!(late.is_empty(), "these ask for the GPU before drawing their inputs: {late:#?}");
    }

    #[test]
    fn every_core_but_one_works_ahead_up_to_the_cap() {
        if std::env::var_os(THREADS_ENV).is_some() {
            return;
        }
        assert_eq!([1, 2, 3, 16].map(threads), [1, 1, 2, MAX_THREADS]);
    }

    #[test]
    fn only_structure_checks_and_stand_ins_run_whole() {
        let build = Arc::new(PartBuild::new(String::new()));
        let job = |c: Check| Job::of("n".into(), c, build.clone()).whole;
        assert!(job(Check::structure("s", |_| Ok(String::new()))));
        assert!(!job(Check::performance("p", |_| Ok(String::new()))));
        assert!(!job(Check::correctness("c", |_| Ok(String::new()))));
        assert!(Job::stand_in("n".into(), Check::performance("p", |_| Ok(String::new())), build).whole);
    }
}
