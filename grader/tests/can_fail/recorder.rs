//! Backends for the "every test can fail" test: a simulator that remembers
//! every launch (its grid, its arguments, how long each buffer argument is,
//! and what the launch left in its output), so that mutant kernels can be
//! written for exactly the launches a check makes; and a simulator dressed as
//! a CUDA device that "times" with the wall clock, so that a performance check
//! runs its timed launches without a GPU.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kit::backend::sim::SimBackend;
use kit::backend::{Arg, BResult, Backend, DevPtr, DeviceInfo, LaunchConfig, ModuleId};
use kit::gpu::GUARD_BYTES;

/// One launch as the check made it.
#[derive(Debug, Clone)]
pub struct Launch {
    pub kernel: String,
    pub cfg: LaunchConfig,
    pub args: Vec<Arg>,
    /// For each argument: the bytes from the pointer to the end of its buffer
    /// (`None` for a value).
    pub bytes: Vec<Option<usize>>,
    /// What the output argument (`output`, an index into `args`) held after
    /// the launch; filled by [`Recorder::finish_launch`].
    pub output_after: Option<Vec<u8>>,
}

#[derive(Default)]
struct Log {
    /// (base, bytes) of every allocation, guards included.
    allocs: Vec<(DevPtr, usize)>,
    launches: Vec<Launch>,
    /// Index of the output argument of the launches being recorded.
    output: Option<usize>,
    pending: Option<usize>,
}

/// The simulator, recording launches.
pub struct Recorder {
    inner: SimBackend,
    log: Arc<Mutex<Log>>,
}

/// The recorded launches, shared with the test.
#[derive(Clone)]
pub struct Recording(Arc<Mutex<Log>>);

impl Recording {
    pub fn take(&self) -> Vec<Launch> {
        std::mem::take(&mut self.0.lock().unwrap().launches)
    }
    /// Which argument is the output whose contents are kept after each launch.
    pub fn keep_output(&self, index: usize) {
        self.0.lock().unwrap().output = Some(index);
    }
}

impl Recorder {
    pub fn new() -> (Self, Recording) {
        let log = Arc::new(Mutex::new(Log::default()));
        (Self { inner: SimBackend::new(), log: log.clone() }, Recording(log))
    }

    fn finish_launch(&self) {
        let mut log = self.log.lock().unwrap();
        let (Some(i), Some(out)) = (log.pending.take(), log.output) else { return };
        let launch = &log.launches[i];
        let (Some(Arg::Ptr(p)), Some(Some(len))) = (launch.args.get(out), launch.bytes.get(out)) else { return };
        let mut bytes = vec![0u8; *len];
        if self.inner.read(*p, &mut bytes).is_ok() {
            log.launches[i].output_after = Some(bytes);
        }
    }
}

fn buffer_bytes(allocs: &[(DevPtr, usize)], p: DevPtr) -> Option<usize> {
    allocs
        .iter()
        .find(|&&(base, size)| p >= base && p < base + size as u64)
        .map(|&(base, size)| (base + (size - GUARD_BYTES) as u64).saturating_sub(p) as usize)
}

impl Backend for Recorder {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }
    fn load_module(&self, ptx: &str) -> BResult<ModuleId> {
        self.inner.load_module(ptx)
    }
    fn has_kernel(&self, module: ModuleId, name: &str) -> BResult<bool> {
        self.inner.has_kernel(module, name)
    }
    fn alloc(&self, bytes: usize) -> BResult<DevPtr> {
        let p = self.inner.alloc(bytes)?;
        let mut log = self.log.lock().unwrap();
        log.allocs.retain(|&(base, _)| base != p);
        log.allocs.push((p, bytes));
        Ok(p)
    }
    fn free(&self, ptr: DevPtr) {
        self.log.lock().unwrap().allocs.retain(|&(base, _)| base != ptr);
        self.inner.free(ptr)
    }
    fn write(&self, dst: DevPtr, src: &[u8]) -> BResult<()> {
        self.inner.write(dst, src)
    }
    fn read(&self, src: DevPtr, dst: &mut [u8]) -> BResult<()> {
        self.inner.read(src, dst)
    }
    fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> BResult<()> {
        self.inner.fill(dst, byte, len)
    }
    fn copy(&self, dst: DevPtr, src: DevPtr, bytes: usize) -> BResult<()> {
        self.inner.copy(dst, src, bytes)
    }
    fn write_symbol(&self, module: ModuleId, name: &str, bytes: &[u8]) -> BResult<()> {
        self.inner.write_symbol(module, name, bytes)
    }
    fn launch(&self, module: ModuleId, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> BResult<()> {
        self.finish_launch();
        {
            let mut log = self.log.lock().unwrap();
            let bytes = args
                .iter()
                .map(|a| match a {
                    Arg::Ptr(p) => buffer_bytes(&log.allocs, *p),
                    _ => None,
                })
                .collect();
            log.launches.push(Launch {
                kernel: kernel.into(),
                cfg: *cfg,
                args: args.to_vec(),
                bytes,
                output_after: None,
            });
            log.pending = Some(log.launches.len() - 1);
        }
        self.inner.launch(module, kernel, cfg, args)
    }
    fn synchronize(&self, timeout: Duration) -> BResult<()> {
        let r = self.inner.synchronize(timeout);
        if r.is_ok() {
            self.finish_launch();
        }
        r
    }
    fn abandon(&self, why: &str) {
        self.inner.abandon(why)
    }
    fn time_ms(&self, work: &mut dyn FnMut() -> BResult<()>, timeout: Duration) -> BResult<f32> {
        self.inner.time_ms(work, timeout)
    }
    fn protect(&self, ptr: DevPtr, len: usize, buffer: &str, before: bool) -> BResult<()> {
        self.inner.protect(ptr, len, buffer, before)
    }
    fn take_profiles(&self) -> Vec<kit::profile::MemoryProfile> {
        self.inner.take_profiles()
    }
    fn kernel_resources(&self, module: ModuleId, kernel: &str) -> BResult<Option<(u32, u32)>> {
        self.inner.kernel_resources(module, kernel)
    }
}

/// The simulator presented as a CUDA device that times: a performance check
/// then goes through its warm-ups and timed launches (its verdict on speed
/// means nothing here; what it checks of the outputs does). A launch "takes"
/// a millisecond per thousand warp-level memory requests and branches it
/// made: exact, where the wall clock varies severalfold on a loaded 2-core
/// host and the kit then calls the timing disturbed (not graded).
pub struct CountingDevice {
    inner: SimBackend,
    info: DeviceInfo,
}

impl CountingDevice {
    /// `memory_bytes`: the device memory to claim (performance checks size
    /// their inputs from it and from the L2 cache, claimed at 1 MiB).
    pub fn new(memory_bytes: u64) -> Self {
        let inner = SimBackend::new();
        let mut info = inner.info().clone();
        info.backend = "cuda".into();
        info.l2_cache_bytes = 1 << 20;
        info.global_memory_bytes = memory_bytes;
        Self { inner, info }
    }
}

impl Backend for CountingDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn load_module(&self, ptx: &str) -> BResult<ModuleId> {
        self.inner.load_module(ptx)
    }
    fn has_kernel(&self, module: ModuleId, name: &str) -> BResult<bool> {
        self.inner.has_kernel(module, name)
    }
    fn alloc(&self, bytes: usize) -> BResult<DevPtr> {
        self.inner.alloc(bytes)
    }
    fn free(&self, ptr: DevPtr) {
        self.inner.free(ptr)
    }
    fn write(&self, dst: DevPtr, src: &[u8]) -> BResult<()> {
        self.inner.write(dst, src)
    }
    fn read(&self, src: DevPtr, dst: &mut [u8]) -> BResult<()> {
        self.inner.read(src, dst)
    }
    fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> BResult<()> {
        self.inner.fill(dst, byte, len)
    }
    fn copy(&self, dst: DevPtr, src: DevPtr, bytes: usize) -> BResult<()> {
        self.inner.copy(dst, src, bytes)
    }
    fn write_symbol(&self, module: ModuleId, name: &str, bytes: &[u8]) -> BResult<()> {
        self.inner.write_symbol(module, name, bytes)
    }
    fn launch(&self, module: ModuleId, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> BResult<()> {
        self.inner.launch(module, kernel, cfg, args)
    }
    fn synchronize(&self, timeout: Duration) -> BResult<()> {
        self.inner.synchronize(timeout)
    }
    fn time_ms(&self, work: &mut dyn FnMut() -> BResult<()>, timeout: Duration) -> BResult<f32> {
        self.inner.take_profiles();
        work()?;
        self.inner.synchronize(timeout)?;
        let work: u64 = self
            .inner
            .take_profiles()
            .iter()
            .map(|p| p.global_load_requests + p.global_store_requests + p.shared_requests + p.branches)
            .sum();
        Ok((work.max(1) as f64 / 1e3) as f32)
    }
    fn protect(&self, ptr: DevPtr, len: usize, buffer: &str, before: bool) -> BResult<()> {
        self.inner.protect(ptr, len, buffer, before)
    }
}
