//! Where one process's grading time goes, for the batch's breakdown
//! (`batch.json`): seconds spent timing kernels, computing shared CPU
//! references and inputs, and waiting for the GPU lock. Counters only grow;
//! a batch worker reports the difference around each part.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Debug, Clone, Copy)]
pub enum Counter {
    /// Inside the timing loop (warm-ups and timed launches, [`crate::perf`]).
    GpuTiming,
    /// Computing a value cached by [`crate::shared`] (CPU references, seeded
    /// inputs), or waiting for another thread computing it.
    CpuReference,
    /// Waiting for the GPU lock ([`crate::gpu_lock`]).
    LockWait,
}

static NANOS: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

pub fn add(counter: Counter, d: Duration) {
    NANOS[counter as usize].fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
}

pub fn get(counter: Counter) -> Duration {
    Duration::from_nanos(NANOS[counter as usize].load(Ordering::Relaxed))
}
