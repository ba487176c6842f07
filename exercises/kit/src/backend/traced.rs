//! Where a check's time goes on the device, operation by operation: with
//! `CUDA_LAB_TRACE=1`, the real GPU's backend is wrapped so that every call
//! (allocation, copy, fill, launch, wait, timed work) is counted with its bytes
//! and wall time, and the grader prints one line per check ([`take`]).
//! For developers profiling the grader on a GPU host without a profiler; off,
//! it costs nothing (the wrapper is not there).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{Arg, BResult, Backend, Capabilities, DevPtr, DeviceInfo, Filler, LaunchConfig, ModuleId};

pub const ENV: &str = "CUDA_LAB_TRACE";

/// Whether this process traces its GPU operations.
pub fn enabled() -> bool {
    std::env::var(ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

#[derive(Default, Clone, Copy)]
struct Tally {
    calls: u64,
    bytes: u64,
    time: Duration,
}

static TALLIES: Mutex<BTreeMap<&'static str, Tally>> = Mutex::new(BTreeMap::new());

fn record<T>(op: &'static str, bytes: usize, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let mut all = TALLIES.lock().unwrap_or_else(|p| p.into_inner());
    let t = all.entry(op).or_default();
    t.calls += 1;
    t.bytes += bytes as u64;
    t.time += start.elapsed();
    out
}

/// The operations since the last call, one `op calls×, MB, ms` item each
/// (timed work includes the launches inside it), and their total in ms.
pub fn take() -> (String, f64) {
    let all = std::mem::take(&mut *TALLIES.lock().unwrap_or_else(|p| p.into_inner()));
    let total: f64 = all.iter().filter(|(op, _)| **op != "launch-timed").map(|(_, t)| t.time.as_secs_f64() * 1e3).sum();
    let items: Vec<String> = all
        .iter()
        .map(|(op, t)| {
            let mb = if t.bytes > 0 { format!(" {:.1} MB", t.bytes as f64 / 1e6) } else { String::new() };
            format!("{op} {}×{mb} {:.1} ms", t.calls, t.time.as_secs_f64() * 1e3)
        })
        .collect();
    (items.join(", "), total)
}

/// Prints how long this process has run when it reaches `label` (the
/// first call sets the clock: make it early).
pub fn phase(label: &str) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(Instant::now);
    if enabled() {
        eprintln!("trace phase {label}: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    }
}

/// A backend whose every call is counted ([`take`]).
pub struct Traced {
    inner: Box<dyn Backend>,
}

impl Traced {
    pub fn new(inner: Box<dyn Backend>) -> Self {
        Self { inner }
    }
}

thread_local! {
    /// Inside `time_ms`: its launches are part of the timed work's time.
    static TIMING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Backend for Traced {
    pass_on_unwatched!();
    fn load_module(&self, ptx: &str) -> BResult<ModuleId> {
        record("load", ptx.len(), || self.inner.load_module(ptx))
    }
    fn has_kernel(&self, module: ModuleId, name: &str) -> BResult<bool> {
        self.inner.has_kernel(module, name)
    }
    fn alloc(&self, bytes: usize) -> BResult<DevPtr> {
        record("alloc", bytes, || self.inner.alloc(bytes))
    }
    fn free(&self, ptr: DevPtr) {
        record("free", 0, || self.inner.free(ptr))
    }
    fn write(&self, dst: DevPtr, src: &[u8]) -> BResult<()> {
        record("upload", src.len(), || self.inner.write(dst, src))
    }
    fn read(&self, src: DevPtr, dst: &mut [u8]) -> BResult<()> {
        let n = dst.len();
        record("download", n, || self.inner.read(src, dst))
    }
    fn write_generated(&self, dst: DevPtr, len: usize, fill: Filler) -> BResult<()> {
        record("upload", len, || self.inner.write_generated(dst, len, fill))
    }
    fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> BResult<()> {
        record("fill", len, || self.inner.fill(dst, byte, len))
    }
    fn copy(&self, dst: DevPtr, src: DevPtr, bytes: usize) -> BResult<()> {
        record("copy", bytes, || self.inner.copy(dst, src, bytes))
    }
    fn gather_words(&self, src: DevPtr, indices: &[u64]) -> BResult<Vec<u32>> {
        record("gather", indices.len() * 4, || self.inner.gather_words(src, indices))
    }
    fn first_difference(&self, a: DevPtr, b: DevPtr, bytes: usize) -> BResult<Option<usize>> {
        record("compare", bytes, || self.inner.first_difference(a, b, bytes))
    }
    fn write_symbol(&self, module: ModuleId, name: &str, bytes: &[u8]) -> BResult<()> {
        record("symbol", bytes.len(), || self.inner.write_symbol(module, name, bytes))
    }
    fn launch(&self, module: ModuleId, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> BResult<()> {
        let op = if TIMING.get() { "launch-timed" } else { "launch" };
        record(op, 0, || self.inner.launch(module, kernel, cfg, args))
    }
    fn synchronize(&self, timeout: Duration) -> BResult<()> {
        record("wait", 0, || self.inner.synchronize(timeout))
    }
    fn time_ms(&self, work: &mut dyn FnMut() -> BResult<()>, timeout: Duration) -> BResult<f32> {
        TIMING.set(true);
        let out = record("timed", 0, || self.inner.time_ms(work, timeout));
        TIMING.set(false);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capabilities_are_the_wrapped_backends() {
        let traced = Traced::new(Box::new(super::super::sim::SimBackend::new()));
        assert_eq!(traced.capabilities(), Capabilities::SIM);
    }
}
