//! The real-GPU backend: the CUDA driver API through cudarc's thin `result` layer.
//!
//! We use the raw layer rather than cudarc's safe types because the seam is
//! byte-level (the simulator implements the same trait) and because we must
//! classify every failure (illegal address, timeout, missing kernel) for a verdict.

use std::ffi::{c_void, CString};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cudarc::driver::{result, sys, DriverError};

use super::{Arg, BResult, Backend, BackendError, Capabilities, DevPtr, DeviceInfo, LaunchConfig, ModuleId};

pub struct CudaBackend {
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    info: DeviceInfo,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    modules: Vec<sys::CUmodule>,
    /// Set after a fatal error: the context cannot run anything more.
    lost: Option<String>,
    /// The comparison kernel ([`super::compare`]) and its result word, loaded
    /// on first use; `Err` where it cannot load (the host compares instead).
    compare: Option<Result<(sys::CUfunction, DevPtr), String>>,
    /// The gate kernel ([`super::gate`]) and its word of mapped host memory,
    /// loaded on first use; `Err` where it cannot load (timing goes ungated).
    gate: Option<Result<Gate, String>>,
    /// The gather kernel ([`super::gather`]) and its scratch buffer (indices,
    /// then words) with its size in bytes, grown as needed; `Err` where it
    /// cannot load (words are read one by one).
    gather: Option<Result<(sys::CUfunction, DevPtr, usize), String>>,
    /// Each live allocation's address as given out ([`PLACEMENT`]-aligned)
    /// and as the driver returned it, for `free`.
    placed: std::collections::HashMap<DevPtr, DevPtr>,
}

/// Every allocation starts on a 4 KiB boundary, whatever the driver's pool
/// did before (it promises 256 bytes). Where a kernel's output lies decides
/// how its global atomics spread over the L2's slices: on an H200 (2026-12-02,
/// `scripts/gpu-46-placement.cu`) ex10's privatized histogram took 11.1 ms with its 256
/// bins at an odd multiple of 256 bytes and 15.4 ms at a multiple of 1 KiB,
/// and which one a process got depended on what it had allocated before (a
/// batch worker restarted after a kill measured the other figure). Placed the
/// same way in every process, a kernel gets one figure on every worker.
pub const PLACEMENT: u64 = 4096;

/// The gate kernel and the host word that opens it.
#[derive(Clone, Copy)]
struct Gate {
    f: sys::CUfunction,
    /// Pinned host memory, mapped into the device at `dev`.
    host: *mut u32,
    dev: DevPtr,
}

// SAFETY: the raw handles are only used while holding `state`'s lock or after
// making the context current on the calling thread; the driver API is thread safe.
unsafe impl Send for CudaBackend {}
unsafe impl Sync for CudaBackend {}

/// How many GPUs the driver shows this process (`CUDA_VISIBLE_DEVICES` applies);
/// 0 where there is no driver. Opens no context.
pub fn gpu_count() -> usize {
    // cudarc panics when it cannot dlopen libcuda; ask first.
    if !unsafe { sys::is_culib_present() } || result::init().is_err() {
        return 0;
    }
    result::device::get_count().map_or(0, |n| n.max(0) as usize)
}

/// The memory of the smallest GPU the driver shows this process, in bytes;
/// `None` where there is none. Opens no context.
pub fn smallest_gpu_memory() -> Option<u64> {
    (0..gpu_count() as i32)
        .filter_map(|i| result::device::get(i).ok())
        .filter_map(|dev| unsafe { result::device::total_mem(dev) }.ok())
        .map(|bytes| bytes as u64)
        .min()
}

impl CudaBackend {
    /// Opens device `ordinal`. Fails with `NoDevice` (never panics) when there is
    /// no driver library or no GPU.
    pub fn new(ordinal: i32) -> BResult<Self> {
        // cudarc panics when it cannot dlopen libcuda; ask first.
        if !unsafe { sys::is_culib_present() } {
            return Err(BackendError::NoDevice("no NVIDIA driver found (libcuda.so could not be loaded)".into()));
        }
        result::init().map_err(|e| BackendError::NoDevice(describe(e)))?;
        let count = result::device::get_count().map_err(|e| BackendError::NoDevice(describe(e)))?;
        if count <= ordinal {
            return Err(BackendError::NoDevice(format!(
                "the driver sees {count} GPU(s); device {ordinal} does not exist"
            )));
        }
        let dev = result::device::get(ordinal).map_err(|e| BackendError::NoDevice(describe(e)))?;
        let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(|e| BackendError::NoDevice(describe(e)))?;
        unsafe { result::ctx::set_current(ctx) }.map_err(|e| BackendError::NoDevice(describe(e)))?;
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(|e| BackendError::NoDevice(describe(e)))?;
        let info = device_info(dev)?;
        // The simulator's replays (structure checks, the sanitizer pass) show kernels this GPU.
        super::sim::show_gpu(&info);
        Ok(Self { ctx, stream, info, state: Mutex::new(State::default()) })
    }

    /// Makes our context current on this thread and refuses to go on after a fatal error.
    fn enter(&self) -> BResult<std::sync::MutexGuard<'_, State>> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cause) = &state.lost {
            return Err(BackendError::ContextLost(cause.clone()));
        }
        unsafe { result::ctx::set_current(self.ctx) }.map_err(|e| BackendError::Other(describe(e)))?;
        Ok(state)
    }

    fn module(state: &State, id: ModuleId) -> BResult<sys::CUmodule> {
        state.modules.get(id.0 as usize).copied().ok_or_else(|| BackendError::Other(format!("unknown module {id:?}")))
    }
}

impl CudaBackend {
    /// One 32-bit word read alone.
    fn read_word(&self, at: DevPtr) -> BResult<u32> {
        let mut word = [0u8; 4];
        self.read(at, &mut word)?;
        Ok(u32::from_le_bytes(word))
    }

    /// The index of the first 32-bit word at which `a` and `b` differ
    /// (`Some(None)`: none does), or `None` where the comparison kernel cannot load.
    fn first_different_word(&self, a: DevPtr, b: DevPtr, words: usize) -> BResult<Option<Option<usize>>> {
        let mut state = self.enter()?;
        if state.compare.is_none() {
            state.compare = Some(load_compare());
        }
        let Some(Ok((f, first))) = state.compare.clone() else { return Ok(None) };
        unsafe { result::memset_d8_sync(first, 0xFF, 8) }.map_err(|e| classify(&mut state, e))?;
        settle(&mut state)?;
        let blocks = super::compare::blocks(words, self.info.multiprocessors);
        let args = [Arg::Ptr(a), Arg::Ptr(b), Arg::U64(words as u64), Arg::Ptr(first)];
        launch_raw(f, (blocks, 1, 1), (super::compare::THREADS, 1, 1), 0, self.stream, &args)
            .map_err(|e| classify(&mut state, e))?;
        unsafe { result::stream::synchronize(self.stream) }.map_err(|e| classify(&mut state, e))?;
        let mut out = [0u8; 8];
        unsafe { result::memcpy_dtoh_sync(&mut out, first) }.map_err(|e| classify(&mut state, e))?;
        let word = u64::from_le_bytes(out);
        Ok(Some((word != u64::MAX).then_some(word as usize)))
    }
}

/// Loads one of the grader's hand-written kernels, `kernel` of `ptx` (the context is current).
fn load_own(ptx: &str, kernel: &str) -> Result<sys::CUfunction, String> {
    let image = CString::new(ptx).expect("no NUL in the PTX");
    let module = unsafe { result::module::load_data(image.as_ptr() as *const c_void) }.map_err(describe)?;
    let name = CString::new(kernel).expect("no NUL in the name");
    unsafe { result::module::get_function(module, name) }.map_err(describe)
}

/// Launches `f` on `stream` with `args` (the context is current).
fn launch_raw(
    f: sys::CUfunction,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared_bytes: u32,
    stream: sys::CUstream,
    args: &[Arg],
) -> Result<(), DriverError> {
    // cuLaunchKernel wants an array of pointers to each argument's bytes.
    let mut storage: Vec<Vec<u8>> = args.iter().map(Arg::to_bytes).collect();
    let mut params: Vec<*mut c_void> = storage.iter_mut().map(|b| b.as_mut_ptr() as *mut c_void).collect();
    unsafe { result::launch_kernel(f, grid, block, shared_bytes, stream, &mut params) }
}

/// Loads the comparison kernel and allocates its result word (the context is current).
fn load_compare() -> Result<(sys::CUfunction, DevPtr), String> {
    let f = load_own(super::compare::PTX, super::compare::KERNEL)?;
    let first = unsafe { result::malloc_sync(8) }.map_err(describe)?;
    Ok((f, first))
}

/// Loads the gather kernel (the context is current).
fn load_gather() -> Result<(sys::CUfunction, DevPtr, usize), String> {
    Ok((load_own(super::gather::PTX, super::gather::KERNEL)?, 0, 0))
}

/// Loads the gate kernel and maps its word of host memory (the context is current).
fn load_gate() -> Result<Gate, String> {
    let f = load_own(super::gate::PTX, super::gate::KERNEL)?;
    let host = unsafe { result::malloc_host(4, sys::CU_MEMHOSTALLOC_DEVICEMAP) }.map_err(describe)? as *mut u32;
    let mut dev: sys::CUdeviceptr = 0;
    unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host as *mut c_void, 0) }.result().map_err(describe)?;
    Ok(Gate { f, host, dev })
}

/// Waits until a copy or memset has landed. The driver's "synchronous" memset,
/// and a copy from pageable host memory, may still be in flight on the legacy
/// stream when they return, and kernels run on a non-blocking stream that does
/// not wait for it: without this, the poison fill of an output could land after
/// the kernel's own writes (seen on the H100 as a block "never written").
fn settle(state: &mut State) -> BResult<()> {
    result::ctx::synchronize().map_err(|e| classify(state, e))
}

/// Maps a driver error to a classified one, remembering fatal ones.
fn classify(state: &mut State, e: DriverError) -> BackendError {
    use sys::cudaError_enum as E;
    let err = match e.0 {
        // A write far out of bounds may land in an address-space window instead of
        // unmapped memory: the same bug, and the same verdict wherever it lands
        // (seen on the H100: one part gave either, from one process to the next).
        E::CUDA_ERROR_ILLEGAL_ADDRESS | E::CUDA_ERROR_INVALID_ADDRESS_SPACE => BackendError::IllegalAddress,
        E::CUDA_ERROR_MISALIGNED_ADDRESS
        | E::CUDA_ERROR_ILLEGAL_INSTRUCTION
        | E::CUDA_ERROR_INVALID_PC
        | E::CUDA_ERROR_HARDWARE_STACK_ERROR
        | E::CUDA_ERROR_LAUNCH_FAILED
        | E::CUDA_ERROR_ASSERT => BackendError::Crashed(describe(e)),
        E::CUDA_ERROR_LAUNCH_TIMEOUT => BackendError::Timeout("the display driver's watchdog time".into()),
        E::CUDA_ERROR_OUT_OF_MEMORY => BackendError::OutOfMemory(describe(e)),
        E::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES | E::CUDA_ERROR_INVALID_VALUE => BackendError::LaunchFailed(describe(e)),
        E::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => BackendError::LoadFailed(format!(
            "{}: the PTX was written by a newer compiler than this driver understands. \
             Update the NVIDIA driver, or use the NVRTC that came with your driver's CUDA version \
             (set CUDA_PATH to that toolkit)",
            describe(e)
        )),
        _ => BackendError::Other(describe(e)),
    };
    if err.is_fatal() {
        state.lost = Some(err.to_string());
    }
    err
}

fn describe(e: DriverError) -> String {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    format!("{name} ({text})")
}

/// The name a CUDA device reports ([`DeviceInfo::backend`]).
pub const NAME: &str = "cuda";

fn device_info(dev: sys::CUdevice) -> BResult<DeviceInfo> {
    use sys::CUdevice_attribute as A;
    let attr = |a: A| -> BResult<u32> {
        unsafe { result::device::get_attribute(dev, a) }.map(|v| v as u32).map_err(|e| BackendError::Other(describe(e)))
    };
    let mut driver = 0i32;
    unsafe { sys::cuDriverGetVersion(&mut driver) }.result().map_err(|e| BackendError::Other(describe(e)))?;
    Ok(DeviceInfo {
        backend: NAME.into(),
        name: result::device::get_name(dev).map_err(|e| BackendError::Other(describe(e)))?,
        compute_capability: (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        driver_version: Some(format!("{}.{}", driver / 1000, (driver % 1000) / 10)),
        multiprocessors: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        l2_cache_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
        global_memory_bytes: unsafe { result::device::total_mem(dev) }.map_err(|e| BackendError::Other(describe(e)))?
            as u64,
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        max_shared_bytes_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
        // Double data rate: two transfers a clock (kHz) over the bus (bits). A
        // driver that no longer reports either leaves it unknown.
        peak_memory_gbps: match (
            attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
            attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        ) {
            (Ok(khz), Ok(bits)) if khz > 0 && bits > 0 => {
                Some((2.0 * khz as f64 * 1e3 * bits as f64 / 8.0 / 1e9) as u32)
            }
            _ => None,
        },
    })
}

impl Backend for CudaBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::CUDA
    }

    fn load_module(&self, ptx: &str) -> BResult<ModuleId> {
        let mut state = self.enter()?;
        let image = CString::new(ptx).map_err(|_| BackendError::LoadFailed("PTX contains a NUL byte".into()))?;
        let module =
            unsafe { result::module::load_data(image.as_ptr() as *const c_void) }.map_err(|e| {
                match classify(&mut state, e) {
                    BackendError::Other(msg) => BackendError::LoadFailed(msg),
                    other => other,
                }
            })?;
        state.modules.push(module);
        Ok(ModuleId(state.modules.len() as u32 - 1))
    }

    fn has_kernel(&self, module: ModuleId, name: &str) -> BResult<bool> {
        let state = self.enter()?;
        let m = Self::module(&state, module)?;
        let cname = CString::new(name).map_err(|_| BackendError::MissingKernel(name.into()))?;
        Ok(unsafe { result::module::get_function(m, cname) }.is_ok())
    }

    fn kernel_resources(&self, module: ModuleId, kernel: &str) -> BResult<Option<(u32, u32)>> {
        use sys::CUfunction_attribute_enum::{CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES};
        let mut state = self.enter()?;
        let m = Self::module(&state, module)?;
        let cname = CString::new(kernel).map_err(|_| BackendError::MissingKernel(kernel.into()))?;
        let f = unsafe { result::module::get_function(m, cname) }
            .map_err(|_| BackendError::MissingKernel(kernel.into()))?;
        // SAFETY: `f` was just looked up in a loaded module.
        let regs = unsafe { result::function::get_function_attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS) };
        let shared = unsafe { result::function::get_function_attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) };
        match (regs, shared) {
            (Ok(r), Ok(s)) => Ok(Some((r as u32, s as u32))),
            (Err(e), _) | (_, Err(e)) => Err(classify(&mut state, e)),
        }
    }

    fn alloc(&self, bytes: usize) -> BResult<DevPtr> {
        let mut state = self.enter()?;
        let raw = unsafe { result::malloc_sync(bytes.max(1) + (PLACEMENT - 256) as usize) }
            .map_err(|e| classify(&mut state, e))?;
        let placed = raw.next_multiple_of(PLACEMENT);
        state.placed.insert(placed, raw);
        Ok(placed)
    }

    fn free(&self, ptr: DevPtr) {
        // Freeing in a lost context fails; there is nothing useful to do about it.
        if let Ok(mut state) = self.enter() {
            let raw = state.placed.remove(&ptr).unwrap_or(ptr);
            let _ = unsafe { result::free_sync(raw) };
        }
    }

    fn write(&self, dst: DevPtr, src: &[u8]) -> BResult<()> {
        let mut state = self.enter()?;
        unsafe { result::memcpy_htod_sync(dst, src) }.map_err(|e| classify(&mut state, e))?;
        settle(&mut state)
    }

    fn read(&self, src: DevPtr, dst: &mut [u8]) -> BResult<()> {
        let mut state = self.enter()?;
        unsafe { result::memcpy_dtoh_sync(dst, src) }.map_err(|e| classify(&mut state, e))
    }

    fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> BResult<()> {
        let mut state = self.enter()?;
        unsafe { result::memset_d8_sync(dst, byte, len) }.map_err(|e| classify(&mut state, e))?;
        settle(&mut state)
    }

    fn copy(&self, dst: DevPtr, src: DevPtr, bytes: usize) -> BResult<()> {
        let mut state = self.enter()?;
        unsafe { result::memcpy_dtod_sync(dst, src, bytes) }.map_err(|e| classify(&mut state, e))?;
        settle(&mut state)
    }

    /// On the device: one launch of the comparison kernel over the 32-bit
    /// words, one word read back; the few bytes past the last word on the host.
    fn first_difference(&self, a: DevPtr, b: DevPtr, bytes: usize) -> BResult<Option<usize>> {
        let words = bytes / 4;
        if words > 0 {
            match self.first_different_word(a, b, words)? {
                Some(Some(word)) => {
                    let at = word * 4;
                    let within = super::first_difference_on_host(self, a + at as u64, b + at as u64, 4)?;
                    return Ok(Some(at + within.unwrap_or(0)));
                }
                Some(None) => {}
                // The kernel could not load here: the host compares it all.
                None => return super::first_difference_on_host(self, a, b, bytes),
            }
        }
        let tail = words * 4;
        let rest = super::first_difference_on_host(self, a + tail as u64, b + tail as u64, bytes - tail)?;
        Ok(rest.map(|i| tail + i))
    }

    fn gather_words(&self, src: DevPtr, indices: &[u64]) -> BResult<Vec<u32>> {
        let mut state = self.enter()?;
        if state.gather.is_none() {
            state.gather = Some(load_gather());
        }
        let Some(Ok((f, mut scratch, mut size))) = state.gather.clone() else {
            drop(state);
            return indices.iter().map(|&i| self.read_word(src + i * 4)).collect();
        };
        let need = indices.len() * 12;
        if size < need {
            if size > 0 {
                let _ = unsafe { result::free_sync(scratch) };
            }
            size = need.next_power_of_two().max(4096);
            scratch = unsafe { result::malloc_sync(size) }.map_err(|e| classify(&mut state, e))?;
            state.gather = Some(Ok((f, scratch, size)));
        }
        let out = scratch + (indices.len() * 8) as u64;
        unsafe { result::memcpy_htod_sync(scratch, indices) }.map_err(|e| classify(&mut state, e))?;
        settle(&mut state)?;
        let args = [Arg::Ptr(src), Arg::Ptr(scratch), Arg::Ptr(out), Arg::U64(indices.len() as u64)];
        let grid = ((indices.len() as u32).div_ceil(super::gather::THREADS).max(1), 1, 1);
        launch_raw(f, grid, (super::gather::THREADS, 1, 1), 0, self.stream, &args)
            .map_err(|e| classify(&mut state, e))?;
        unsafe { result::stream::synchronize(self.stream) }.map_err(|e| classify(&mut state, e))?;
        let mut words = vec![0u32; indices.len()];
        unsafe { result::memcpy_dtoh_sync(&mut words, out) }.map_err(|e| classify(&mut state, e))?;
        Ok(words)
    }

    fn write_symbol(&self, module: ModuleId, name: &str, bytes: &[u8]) -> BResult<()> {
        let mut state = self.enter()?;
        let m = Self::module(&state, module)?;
        let cname = CString::new(name).map_err(|_| BackendError::MissingSymbol(name.into()))?;
        let (ptr, size) =
            unsafe { result::module::get_global(m, cname) }.map_err(|_| BackendError::MissingSymbol(name.into()))?;
        // A prefix is fine (a 5 x 5 mask in a 7 x 7 array): the rest keeps what it held.
        if bytes.len() > size {
            return Err(super::symbol_too_small(name, size, bytes.len()));
        }
        unsafe { result::memcpy_htod_sync(ptr, bytes) }.map_err(|e| classify(&mut state, e))?;
        settle(&mut state)
    }

    fn launch(&self, module: ModuleId, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> BResult<()> {
        let mut state = self.enter()?;
        let m = Self::module(&state, module)?;
        let cname = CString::new(kernel).map_err(|_| BackendError::MissingKernel(kernel.into()))?;
        let f = unsafe { result::module::get_function(m, cname) }
            .map_err(|_| BackendError::MissingKernel(kernel.into()))?;
        // The profiler's run (crate::counters) profiles these launches only:
        // `ncu --profile-from-start off` skips the grader's own kernels between.
        let profiled = crate::counters::collecting();
        if profiled {
            let _ = cudarc::driver::profiler_start();
        }
        let launched = launch_raw(f, cfg.grid, cfg.block, cfg.shared_bytes, self.stream, args);
        if profiled {
            let _ = cudarc::driver::profiler_stop();
        }
        launched.map_err(|e| match classify(&mut state, e) {
            BackendError::Other(msg) => BackendError::LaunchFailed(msg),
            other => other,
        })
    }

    fn synchronize(&self, timeout: Duration) -> BResult<()> {
        let mut state = self.enter()?;
        // Poll rather than block, so that an endless kernel becomes a verdict.
        let start = Instant::now();
        loop {
            match unsafe { sys::cuStreamQuery(self.stream) } {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {
                    if start.elapsed() > timeout {
                        let err = BackendError::Timeout(format!("{:.1} s", timeout.as_secs_f64()));
                        state.lost = Some(err.to_string());
                        return Err(err);
                    }
                    std::thread::sleep(Duration::from_micros(if start.elapsed() < Duration::from_millis(10) {
                        20
                    } else {
                        1000
                    }));
                }
                other => return Err(classify(&mut state, DriverError(other))),
            }
        }
    }

    fn abandon(&self, why: &str) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).lost = Some(why.to_string());
    }

    fn lost(&self) -> Option<String> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).lost.clone()
    }

    fn time_ms(&self, work: &mut dyn FnMut() -> BResult<()>, timeout: Duration) -> BResult<f32> {
        let flags = sys::CUevent_flags::CU_EVENT_DEFAULT;
        let (start, stop, gate) = {
            let mut state = self.enter()?;
            if state.gate.is_none() {
                state.gate = Some(load_gate());
            }
            let gate = state.gate.clone().and_then(Result::ok);
            if let Some(g) = gate {
                // Closed before the gate is queued; opened once the work is.
                unsafe { std::ptr::write_volatile(g.host, 0) };
                let args = [Arg::Ptr(g.dev), Arg::U64(super::gate::MAX_WAIT_NS)];
                launch_raw(g.f, (1, 1, 1), (1, 1, 1), 0, self.stream, &args).map_err(|e| classify(&mut state, e))?;
            }
            let start = result::event::create(flags).map_err(|e| classify(&mut state, e))?;
            let stop = result::event::create(flags).map_err(|e| classify(&mut state, e))?;
            unsafe { result::event::record(start, self.stream) }.map_err(|e| classify(&mut state, e))?;
            (start, stop, gate)
        };
        let queued = work().and_then(|_| {
            let mut state = self.enter()?;
            unsafe { result::event::record(stop, self.stream) }.map_err(|e| classify(&mut state, e))
        });
        if let Some(g) = gate {
            unsafe { std::ptr::write_volatile(g.host, 1) };
        }
        let outcome = queued.and_then(|_| self.synchronize(timeout)).and_then(|_| {
            let mut state = self.enter()?;
            unsafe { result::event::elapsed(start, stop) }.map_err(|e| classify(&mut state, e))
        });
        unsafe {
            let _ = result::event::destroy(start);
            let _ = result::event::destroy(stop);
        }
        outcome
    }
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        if state.lost.is_some() {
            return; // a lost context refuses everything; the process exit cleans up
        }
        unsafe {
            let _ = result::ctx::set_current(self.ctx);
            for m in state.modules.drain(..) {
                let _ = result::module::unload(m);
            }
            let _ = result::stream::destroy(self.stream);
            if let Some(Ok((_, scratch, size))) = state.gather.take() {
                if size > 0 {
                    let _ = result::free_sync(scratch);
                }
            }
            if let Some(Ok(gate)) = state.gate.take() {
                let _ = result::free_host(gate.host as *mut c_void);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_times_and_reports_resources_but_watches_no_access_and_can_lose_its_context() {
        let (expected, e) = (Capabilities::CUDA, Capabilities::CUDA);
        assert!(e.times_kernels && e.full_speed && e.reports_kernel_resources && e.real_device_info && e.loses_context);
        assert!(!e.checks_accesses && !e.profiles_memory && !e.host_memory);
        assert_eq!(Capabilities::of_named(NAME), expected, "a report that names a GPU");
        // Where there is a GPU, the backend itself says so.
        if let Ok(gpu) = CudaBackend::new(0) {
            assert_eq!(gpu.capabilities(), expected);
            assert_eq!(gpu.info().backend, NAME);
        }
    }

    #[test]
    fn a_far_write_is_an_illegal_address_wherever_it_lands_and_loses_the_context() {
        use sys::cudaError_enum as E;
        for code in [E::CUDA_ERROR_ILLEGAL_ADDRESS, E::CUDA_ERROR_INVALID_ADDRESS_SPACE] {
            let mut state = State::default();
            assert!(matches!(classify(&mut state, DriverError(code)), BackendError::IllegalAddress), "{code:?}");
            assert!(state.lost.is_some(), "{code:?}: nothing more may run in that context");
        }
    }
}
