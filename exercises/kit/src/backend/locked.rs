//! A GPU shared with other batch workers ([`crate::gpu_lock`]): every device
//! operation holds the shared lock while it works, and a launch until a wait
//! sees its kernels end, so that a worker about to time waits only for the
//! other's operation in progress, not for the CPU work around it (drawing
//! inputs, comparing outputs), which took most of a check's time on an H100.
//!
//! A kernel that never ended keeps the lock until the process is gone: it
//! still runs, and nothing may be timed beside it.

use std::time::Duration;

use super::{Arg, BResult, Backend, BackendError, Capabilities, DevPtr, DeviceInfo, Filler, LaunchConfig, ModuleId};
use crate::gpu_lock;

/// The backend of a GPU that other processes time kernels on.
pub struct Locked {
    inner: Box<dyn Backend>,
}

impl Locked {
    /// Wraps `inner` when this process shares its GPU ([`gpu_lock::ENV`]).
    pub fn if_shared(inner: Box<dyn Backend>) -> Box<dyn Backend> {
        if std::env::var_os(gpu_lock::ENV).is_some() {
            Box::new(Locked { inner })
        } else {
            inner
        }
    }
}

fn during<T>(op: impl FnOnce() -> T) -> T {
    let _shared = gpu_lock::shared();
    op()
}

/// After a wait for this thread's kernels: they ended, or one of them never
/// will. Any other failure leaves the hold as it was (a later wait settles it).
fn waited<T>(outcome: BResult<T>) -> BResult<T> {
    match &outcome {
        Ok(_) => gpu_lock::launched_ended(),
        Err(BackendError::Timeout(_)) => gpu_lock::keep_until_exit(),
        Err(_) => {}
    }
    outcome
}

impl Backend for Locked {
    pass_on_unwatched!();
    fn load_module(&self, ptx: &str) -> BResult<ModuleId> {
        during(|| self.inner.load_module(ptx))
    }
    fn has_kernel(&self, module: ModuleId, name: &str) -> BResult<bool> {
        self.inner.has_kernel(module, name)
    }
    fn alloc(&self, bytes: usize) -> BResult<DevPtr> {
        during(|| self.inner.alloc(bytes))
    }
    fn free(&self, ptr: DevPtr) {
        during(|| self.inner.free(ptr))
    }
    fn write(&self, dst: DevPtr, src: &[u8]) -> BResult<()> {
        during(|| self.inner.write(dst, src))
    }
    fn read(&self, src: DevPtr, dst: &mut [u8]) -> BResult<()> {
        during(|| self.inner.read(src, dst))
    }
    fn write_generated(&self, dst: DevPtr, len: usize, fill: Filler) -> BResult<()> {
        during(|| self.inner.write_generated(dst, len, fill))
    }
    fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> BResult<()> {
        during(|| self.inner.fill(dst, byte, len))
    }
    fn copy(&self, dst: DevPtr, src: DevPtr, bytes: usize) -> BResult<()> {
        during(|| self.inner.copy(dst, src, bytes))
    }
    fn gather_words(&self, src: DevPtr, indices: &[u64]) -> BResult<Vec<u32>> {
        during(|| self.inner.gather_words(src, indices))
    }
    fn first_difference(&self, a: DevPtr, b: DevPtr, bytes: usize) -> BResult<Option<usize>> {
        during(|| self.inner.first_difference(a, b, bytes))
    }
    fn write_symbol(&self, module: ModuleId, name: &str, bytes: &[u8]) -> BResult<()> {
        during(|| self.inner.write_symbol(module, name, bytes))
    }
    fn launch(&self, module: ModuleId, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> BResult<()> {
        gpu_lock::hold_for_launched();
        self.inner.launch(module, kernel, cfg, args)
    }
    fn synchronize(&self, timeout: Duration) -> BResult<()> {
        waited(self.inner.synchronize(timeout))
    }
    fn time_ms(&self, work: &mut dyn FnMut() -> BResult<()>, timeout: Duration) -> BResult<f32> {
        // Inside the timing loop's exclusive hold; the shared one changes nothing there.
        waited(during(|| self.inner.time_ms(work, timeout)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_capabilities_are_the_wrapped_backends() {
        let locked = Locked { inner: Box::new(super::super::sim::SimBackend::new()) };
        assert_eq!(locked.capabilities(), Capabilities::SIM);
    }
}
