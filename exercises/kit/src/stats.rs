//! Where one process's grading time goes, for the batch's breakdown
//! (`batch.json`, the timeline) and `CUDA_LAB_PROFILE`: seconds spent
//! compiling, measuring structure on the simulator, timing kernels, computing
//! shared CPU references and inputs, and waiting for the GPU lock. Counters
//! only grow; a batch worker reports the difference around each part.
//!
//! Each counter is kept twice: for the whole process ([`get`]) and for the
//! thread that did the work ([`here`]). A part's checks run on one thread
//! while the sanitizer pass of the part before runs on others; the part's
//! buckets are read from its own thread, so that work done beside it is not
//! counted in it (and the buckets of a part add up to no more than its wall).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// Inside the timing loop (warm-ups and timed launches, [`crate::perf`]).
    GpuTiming,
    /// Computing a value cached by [`crate::shared`] (CPU references, seeded
    /// inputs), or waiting for another thread computing it.
    CpuReference,
    /// Waiting for the GPU lock ([`crate::gpu_lock`]).
    LockWait,
    /// Structure measurements on a private simulator ([`crate::measure`]):
    /// loading the PTX and running the measured launches, less any other
    /// counter's time inside them. A GPU run's checks' thread counts here only
    /// what it waited for the threads that ran them ahead (grader/src/ahead.rs).
    SimMeasure,
    /// Compiling (or taking from the PTX cache) a part's source (the grader).
    Compile,
    /// Reading the GPU's hardware counters for the structure checks (the
    /// grader's profiler run, or waiting for another worker's).
    HardwareCounters,
}

const COUNTERS: usize = 6;

/// Every counter, in the order of [`Counter`].
pub const ALL: [Counter; COUNTERS] = [
    Counter::GpuTiming,
    Counter::CpuReference,
    Counter::LockWait,
    Counter::SimMeasure,
    Counter::Compile,
    Counter::HardwareCounters,
];

static NANOS: [AtomicU64; COUNTERS] = [const { AtomicU64::new(0) }; COUNTERS];

thread_local! {
    static HERE: [Cell<u64>; COUNTERS] = const { [const { Cell::new(0) }; COUNTERS] };
}

pub fn add(counter: Counter, d: Duration) {
    let nanos = d.as_nanos() as u64;
    NANOS[counter as usize].fetch_add(nanos, Ordering::Relaxed);
    HERE.with(|h| h[counter as usize].set(h[counter as usize].get() + nanos));
}

/// Adds `d` to this thread's total only (the process's has it already): a
/// thread that waited for work done on others takes their time as its own.
pub fn credit_here(counter: Counter, d: Duration) {
    HERE.with(|h| h[counter as usize].set(h[counter as usize].get() + d.as_nanos() as u64));
}

/// The whole process's total.
pub fn get(counter: Counter) -> Duration {
    Duration::from_nanos(NANOS[counter as usize].load(Ordering::Relaxed))
}

/// This thread's total.
pub fn here(counter: Counter) -> Duration {
    Duration::from_nanos(HERE.with(|h| h[counter as usize].get()))
}

/// Runs `f` and adds its time to `counter`, less what other counters gained
/// on this thread meanwhile (a CPU reference computed inside a measurement is
/// counted once, as a CPU reference): the counters stay a partition of time.
pub fn timed<R>(counter: Counter, f: impl FnOnce() -> R) -> R {
    let others = || ALL.iter().filter(|c| **c != counter).map(|c| here(*c)).sum::<Duration>();
    let (start, before) = (Instant::now(), others());
    let out = f();
    let inside = others().saturating_sub(before);
    add(counter, start.elapsed().saturating_sub(inside));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_time_is_counted_once_and_other_threads_are_not_counted_here() {
        let before = ALL.map(here);
        timed(Counter::SimMeasure, || {
            std::thread::sleep(Duration::from_millis(20));
            timed(Counter::CpuReference, || std::thread::sleep(Duration::from_millis(30)));
        });
        let measured = here(Counter::SimMeasure) - before[Counter::SimMeasure as usize];
        let cpu = here(Counter::CpuReference) - before[Counter::CpuReference as usize];
        assert!(cpu >= Duration::from_millis(30), "{cpu:?}");
        assert!(measured >= Duration::from_millis(20) && measured < Duration::from_millis(30), "{measured:?}");
        let elsewhere = std::thread::spawn(|| {
            add(Counter::Compile, Duration::from_secs(5));
            here(Counter::Compile)
        });
        let compile_here = here(Counter::Compile);
        assert_eq!(elsewhere.join().unwrap(), Duration::from_secs(5));
        assert_eq!(here(Counter::Compile), compile_here, "another thread's time is not this thread's");
        assert!(get(Counter::Compile) >= Duration::from_secs(5), "but it is the process's");
    }
}
