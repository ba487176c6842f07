//! Seeded inputs and CPU references computed ahead of the GPU.
//!
//! Checks run on the GPU one at a time, and most begin with CPU work: drawing
//! their seeded inputs and computing the CPU reference ([`kit::Ctx::shared`]),
//! up to a quarter of a second for the largest. While the GPU works through
//! the checks, a few threads run the coming checks as far as their first use
//! of the GPU (their environment has none, so that use ends them). The check
//! itself then finds its values ready, or waits for the thread computing them;
//! what it does on the GPU, and its verdict, do not change.
//!
//! Structure checks are left out: they run on the simulator, not the GPU, and a
//! thread here would do all of their work a second time.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use kit::{Check, Ctx, PartBuild, RunEnv};
use ptx_build::CompileOptions;

/// At most this many threads, and one core left to the check on the GPU.
const MAX_THREADS: usize = 4;

/// One check to run ahead: its test name, the check and its part's build.
pub type Job = (String, Check, Arc<PartBuild>);

/// Threads working through the jobs in order; dropping it drops the jobs not
/// yet started (one being computed still finishes, and is kept).
pub struct Ahead {
    stop: Arc<AtomicBool>,
}

impl Ahead {
    /// Starts working through `jobs`, in order (the order the checks run in).
    pub fn start(seed: u64, options: CompileOptions, jobs: Vec<Job>) -> Ahead {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = cores.saturating_sub(1).clamp(1, MAX_THREADS).min(jobs.len());
        let queue = Arc::new(Mutex::new(VecDeque::from(jobs)));
        // Without a GPU and a compiler, a check stops at its first use of either.
        let env = Arc::new(RunEnv::new(seed, None, None, options));
        for _ in 0..threads {
            let (queue, stop, env) = (queue.clone(), stop.clone(), env.clone());
            let spawned = std::thread::Builder::new().name("inputs-ahead".into()).spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Some((name, check, build)) = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front() else {
                        return;
                    };
                    let ctx = Ctx::new(&name, &env, &build);
                    // The outcome is the check's business when it runs for real; run
                    // outside `Ctx::run`, it records nothing (no figures, no digests).
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (check.run)(&ctx)));
                }
            });
            // Best effort: without the thread, each check computes its own values.
            drop(spawned);
        }
        Ahead { stop }
    }

    /// The checks worth running ahead: those that run on the GPU.
    pub fn wanted(check: &Check) -> bool {
        check.kind != kit::CheckKind::Structure
    }
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
        let ahead = Ahead::start(seed, CompileOptions::default(), vec![(name.clone(), check.clone(), build.clone())]);
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
        assert_eq!(*on.lock().unwrap(), ["inputs-ahead"], "by the thread ahead");
    }

    #[test]
    fn structure_checks_are_not_run_ahead() {
        assert!(!Ahead::wanted(&Check::structure("s", |_| Ok(String::new()))));
        assert!(Ahead::wanted(&Check::performance("p", |_| Ok(String::new()))));
    }
}
