//! `Gpu`, `Module` and `DeviceBuffer`: the typed face of the backend seam.
//!
//! Every buffer is allocated with guard zones before and after it, filled with a
//! known pattern. After every launch the guards are read back, so a write just
//! past the end of an array is reported even when it does not crash.
//!
//! Inputs (buffers made by `upload`) must come back as they were uploaded: a
//! kernel that casts `const` away and writes into one can still compute the
//! right output, while other blocks read what it overwrote. While a check
//! watches its inputs ([`Gpu::watch_inputs`]: the grader turns it on for
//! correctness checks only, so timed launches cost nothing more) every upload
//! keeps a copy on the device, and after every launch each input is compared
//! with its copy on the device ([`Backend::first_difference`]); a change is an
//! [`InputModified`] naming the buffer and its first changed element.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use bytemuck::Pod;

use crate::backend::shape::{self, Shape2d};
use crate::backend::{Arg, Backend, BackendError, Capabilities, DevPtr, DeviceInfo, LaunchConfig, ModuleId};
use crate::inspect::{self, EntryDecl};

/// Bytes of guard zone on each side of every buffer (a multiple of 256 keeps alignment).
pub const GUARD_BYTES: usize = 1024;
/// Pattern in guard zones; chosen to be unlikely as a kernel's result.
const GUARD_BYTE: u8 = 0xA5;
/// Pattern written into outputs before a launch: NaN for floats, all ones for integers.
pub const POISON_BYTE: u8 = 0xFF;

/// A handle to a GPU (real or simulated). Cheap to clone.
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<Inner>,
}

struct Inner {
    backend: Box<dyn Backend>,
    /// How long one launch may run before it is declared stuck.
    timeout: Duration,
    /// Live buffers (base pointer, user bytes, name, rows if the exercise
    /// gave them), for guard checks after launches.
    live: Mutex<Vec<LiveBuffer>>,
    /// The current check's waits for its kernels: their count and time.
    waited: Mutex<(u32, Duration)>,
    /// Whether uploads from now on are watched inputs ([`Gpu::watch_inputs`]).
    watching: std::sync::atomic::AtomicBool,
    /// The watched inputs, each with its copy as uploaded.
    inputs: Mutex<Vec<Watched>>,
    /// The last kernel started and its arguments: which argument a changed
    /// input was; and whether its launch was 2-D (a write out of bounds gets the 2-D bounds test).
    last_launch: Mutex<Option<(String, Vec<Arg>)>>,
    last_launch_2d: std::sync::atomic::AtomicBool,
    /// The current check's own limit, when shorter than `timeout` ([`Gpu::limit_check`]).
    check_limit: Mutex<Option<Duration>>,
    /// The kernels launched while [`Gpu::log_launches`] is on, in order.
    launch_log: Mutex<Option<Vec<String>>>,
}

/// A live buffer: its base pointer (before the leading guard zone), its
/// bytes, its name, and its rows where the exercise gave them.
type LiveBuffer = (DevPtr, usize, String, Option<Shape2d>);

/// An input buffer and the device copy of what was uploaded into it.
struct Watched {
    /// The buffer's address as the kernel sees it.
    ptr: DevPtr,
    bytes: usize,
    name: String,
    /// What was uploaded.
    pristine: Pristine,
    element_bytes: usize,
    /// `f32`, `u8`, ...: how an element is shown.
    element_type: &'static str,
}

/// Where an input's uploaded bytes are kept.
enum Pristine {
    /// On the host: inputs of the simulator (whose memory is the host's), and
    /// small ones on a GPU, where reading them back costs less than an
    /// allocation and a comparison kernel.
    Host(Vec<u8>),
    /// A plain device allocation of the input's size, compared on the device.
    Device(DevPtr),
}

/// Inputs up to this size are kept on the host, also on a GPU.
const HOST_COPY_BYTES: usize = 64 << 10;

/// A kernel wrote into one of its inputs (found by comparing it, after the
/// launch, with what was uploaded): wrong even when the output is right.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "input modified: the kernel wrote into its input `{buffer}`{argument}: element {index} was {uploaded} when \
     uploaded and is {found} after the launch. Write results only to the output; an input is shared by every thread \
     and block (another block may still read what was overwritten), and its `const` is a promise"
)]
pub struct InputModified {
    /// The buffer's name: the kernel's parameter name for it.
    pub buffer: String,
    /// " (argument 2 of `dot`)", or empty where it was not an argument of the last launch.
    pub argument: String,
    /// The first changed element.
    pub index: usize,
    pub uploaded: String,
    pub found: String,
}

/// The kernels of one check ran longer in all than one launch may: each
/// launch finished in time, but a kernel that prints in a loop or does far
/// more work than it needs would otherwise hold the GPU for minutes.
#[derive(Debug, thiserror::Error)]
#[error(
    "the kernel launches of this check ran past {limit:.1} s in all (the {launches} before this one finished, each \
     within the limit, but one check's launches together may run only as long as one launch): does the kernel print \
     in a loop, or do far more work than it needs?"
)]
pub struct CheckTimeLimit {
    pub limit: f64,
    pub launches: u32,
}

/// A write outside a buffer, found in its guard zone after a launch.
#[derive(Debug, thiserror::Error)]
#[error(
    "out-of-bounds write: the kernel wrote {} {side} the buffer `{buffer}` (it has {len} bytes){place}; {fix}",
    if *bytes == 1 { "1 byte".to_string() } else { format!("{bytes} bytes") }
)]
pub struct OutOfBounds {
    pub buffer: String,
    pub side: &'static str,
    /// Bytes of the guard zone the kernel changed.
    pub bytes: usize,
    pub len: usize,
    /// ": `out[1200]` stands for row 30, column 0 ...": the first changed
    /// element of a buffer with rows ([`DeviceBuffer::with_2d_shape`]), or empty.
    pub place: String,
    /// What to change: the bounds test of a 1-D or of a 2-D kernel.
    pub fix: &'static str,
}

impl Gpu {
    pub fn new(backend: Box<dyn Backend>, timeout: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                backend,
                timeout,
                live: Mutex::new(Vec::new()),
                waited: Mutex::default(),
                watching: std::sync::atomic::AtomicBool::new(true),
                inputs: Mutex::default(),
                last_launch: Mutex::default(),
                last_launch_2d: Default::default(),
                check_limit: Mutex::default(),
                launch_log: Mutex::default(),
            }),
        }
    }

    /// Starts (`true`) or stops (`false`) writing down every kernel launched,
    /// and returns those written down since the last start: which launches a
    /// profiler's rows belong to ([`crate::counters`]).
    pub fn log_launches(&self, on: bool) -> Vec<String> {
        let mut log = self.inner.launch_log.lock().unwrap_or_else(|p| p.into_inner());
        let before = log.take().unwrap_or_default();
        if on {
            *log = Some(Vec::new());
        }
        before
    }

    /// The PTX simulator (no GPU needed).
    pub fn simulator() -> Self {
        Self::new(Box::new(crate::backend::sim::SimBackend::new()), Duration::MAX)
    }

    /// The first CUDA device, or why there is none.
    pub fn cuda(timeout: Duration) -> Result<Self, BackendError> {
        let cuda = Box::new(crate::backend::cuda::CudaBackend::new(0)?);
        let mut backend = crate::backend::locked::Locked::if_shared(cuda);
        if crate::backend::traced::enabled() {
            backend = Box::new(crate::backend::traced::Traced::new(backend));
        }
        Ok(Self::new(backend, timeout))
    }

    pub fn info(&self) -> &DeviceInfo {
        self.inner.backend.info()
    }

    /// What the backend can do (see [`Capabilities`]).
    pub fn capabilities(&self) -> Capabilities {
        self.inner.backend.capabilities()
    }

    pub fn backend(&self) -> &dyn Backend {
        self.inner.backend.as_ref()
    }

    /// Why nothing more can run on this GPU (a fatal error earlier in the run), if so.
    pub fn lost(&self) -> Option<String> {
        self.inner.backend.lost()
    }

    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    pub fn load(&self, ptx: &str) -> Result<Module> {
        let id = self.inner.backend.load_module(ptx)?;
        Ok(Module { gpu: self.clone(), id, kernels: inspect::entry_decls(ptx), graders: false })
    }

    /// Loads one of the grader's own modules (a yardstick, a lab's kernels):
    /// the only kind [`crate::perf::measure_trusted`] times without checking.
    pub fn load_graders(&self, ptx: &str) -> Result<Module> {
        Ok(Module { graders: true, ..self.load(ptx)? })
    }

    /// A buffer of `len` elements, every byte set to the poison pattern
    /// ([`POISON_BYTE`]): an output, so that an element the kernel never
    /// writes shows as such ([`crate::check`] says "never written").
    ///
    /// ```no_run
    /// # fn demo(gpu: &kit::Gpu, n: usize) -> anyhow::Result<()> {
    /// let out = gpu.poisoned::<f32>("out", n)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn poisoned<T: Pod>(&self, name: &str, len: usize) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc::<T>(name, len)?;
        buf.poison()?;
        Ok(buf)
    }

    /// A buffer of `len` zeroed elements: what the README promises starts at
    /// zero (a histogram's bins, a counter). Not an input: it is not watched.
    ///
    /// ```no_run
    /// # fn demo(gpu: &kit::Gpu) -> anyhow::Result<()> {
    /// let bins = gpu.zeros::<u32>("bins", 256)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn zeros<T: Pod>(&self, name: &str, len: usize) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc::<T>(name, len)?;
        self.backend().fill(buf.ptr(), 0, buf.bytes())?;
        Ok(buf)
    }

    /// A buffer holding a copy of `data`: an input. Inputs are watched (in
    /// correctness and timed checks): a kernel that writes into one fails with
    /// `input-modified`. `name` is what messages call it (use the README's).
    ///
    /// ```no_run
    /// # fn demo(gpu: &kit::Gpu, data: &[u8]) -> anyhow::Result<()> {
    /// let d_data = gpu.upload("data", data)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn upload<T: Pod>(&self, name: &str, data: &[T]) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc::<T>(name, data.len())?;
        buf.write(data)?;
        self.watch(&buf)?;
        Ok(buf)
    }

    /// An input of `len` elements that `generate` computes (given the index
    /// of the first element of its slice; the same index must always give
    /// the same values): a timed-size input for a launch of a few sampled
    /// blocks, which the simulator generates where the launch reads it and a
    /// GPU receives whole. Watched like [`Gpu::upload`] while inputs are.
    pub fn upload_generated<T: Pod>(
        &self,
        name: &str,
        len: usize,
        generate: impl Fn(usize, &mut [T]) + Send + Sync + 'static,
    ) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc::<T>(name, len)?;
        let size = std::mem::size_of::<T>();
        let fill = move |off: usize, out: &mut [u8]| {
            // the elements that `off..off + out.len()` overlaps, then their bytes there
            let (first, end) = (off / size, (off + out.len()).div_ceil(size));
            let mut elements = vec![T::zeroed(); end - first];
            generate(first, &mut elements);
            let skip = off - first * size;
            out.copy_from_slice(&bytemuck::cast_slice(&elements)[skip..skip + out.len()]);
        };
        self.backend().write_generated(buf.ptr(), buf.bytes(), Arc::new(fill))?;
        self.watch(&buf)?;
        Ok(buf)
    }

    /// [`Gpu::poisoned`] of an output the launch writes little of (a few
    /// sampled blocks' part of a timed-size product): the simulator poisons
    /// the parts it touches.
    pub fn poisoned_generated<T: Pod>(&self, name: &str, len: usize) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc::<T>(name, len)?;
        self.backend().write_generated(buf.ptr(), buf.bytes(), Arc::new(|_, out: &mut [u8]| out.fill(POISON_BYTE)))?;
        Ok(buf)
    }

    /// A buffer holding `data` and then `tail` (values that reads past the
    /// end of `data` must meet), with no host copy of `data`: for a timed
    /// input of 64 MB, building one on the host cost more than the upload.
    pub fn upload_followed_by<T: Pod>(&self, name: &str, data: &[T], tail: &[T]) -> Result<DeviceBuffer<T>> {
        let buf = self.alloc::<T>(name, data.len() + tail.len())?;
        self.backend().write(buf.ptr(), bytemuck::cast_slice(data))?;
        self.backend().write(buf.ptr() + std::mem::size_of_val(data) as u64, bytemuck::cast_slice(tail))?;
        self.watch(&buf)?;
        Ok(buf)
    }

    /// Whether the buffers uploaded from now on are inputs that every launch
    /// must leave as they were (on by default). The grader turns it on for a
    /// correctness check and off for the others, whose launches are timed.
    pub fn watch_inputs(&self, on: bool) {
        self.inner.watching.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs `upload` with inputs unwatched, then puts [`Gpu::watch_inputs`]
    /// back as it was (after a panic too): for a measurement's uploads, whose
    /// writes the correctness checks and the timed launches judge.
    pub fn unwatched<R>(&self, upload: impl FnOnce() -> R) -> R {
        use std::sync::atomic::Ordering::Relaxed;
        /// Puts the previous state back when dropped, on a panic too.
        struct Restore<'a>(&'a std::sync::atomic::AtomicBool, bool);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                self.0.store(self.1, Relaxed);
            }
        }
        let _restore = Restore(&self.inner.watching, self.inner.watching.swap(false, Relaxed));
        upload()
    }

    /// Keeps a device copy of what `buf` holds now, if inputs are watched.
    fn watch<T: Pod>(&self, buf: &DeviceBuffer<T>) -> Result<()> {
        if !self.inner.watching.load(std::sync::atomic::Ordering::Relaxed) || buf.bytes() == 0 {
            return Ok(());
        }
        let b = self.backend();
        let pristine = if b.capabilities().host_memory || buf.bytes() <= HOST_COPY_BYTES {
            let mut host = vec![0u8; buf.bytes()];
            b.read(buf.ptr(), &mut host)?;
            Pristine::Host(host)
        } else {
            // No room for a copy: the input goes unwatched rather than failing the student's check.
            let Ok(copy) = b.alloc(buf.bytes()) else { return Ok(()) };
            if let Err(e) = b.copy(copy, buf.ptr(), buf.bytes()) {
                b.free(copy);
                return Err(e.into());
            }
            Pristine::Device(copy)
        };
        self.inner.inputs.lock().unwrap().push(Watched {
            ptr: buf.ptr(),
            bytes: buf.bytes(),
            name: buf.name.clone(),
            pristine,
            element_bytes: std::mem::size_of::<T>(),
            element_type: std::any::type_name::<T>(),
        });
        Ok(())
    }

    /// The host wrote `ptr` (a buffer): if it is a watched input, that is its new uploaded value.
    fn rewatch(&self, ptr: DevPtr) -> Result<()> {
        let mut inputs = self.inner.inputs.lock().unwrap();
        match inputs.iter_mut().find(|w| w.ptr == ptr).map(|w| (&mut w.pristine, w.ptr, w.bytes)) {
            Some((Pristine::Host(host), ptr, _)) => self.backend().read(ptr, host)?,
            Some((Pristine::Device(copy), ptr, bytes)) => self.backend().copy(*copy, ptr, bytes)?,
            None => {}
        }
        Ok(())
    }

    /// Forgets the watched input at `ptr` (its buffer is freed).
    fn unwatch(&self, ptr: DevPtr) {
        let mut inputs = self.inner.inputs.lock().unwrap();
        if let Some(i) = inputs.iter().position(|w| w.ptr == ptr) {
            if let Pristine::Device(copy) = inputs.swap_remove(i).pristine {
                self.backend().free(copy);
            }
        }
    }

    /// Compares every watched input with its copy; the first changed one is
    /// an [`InputModified`] (and is restored, so that later launches of the
    /// check do not report it again).
    fn check_inputs(&self) -> Result<()> {
        let inputs = self.inner.inputs.lock().unwrap();
        let b = self.backend();
        for w in inputs.iter() {
            let changed = match &w.pristine {
                Pristine::Host(host) => first_change_from_host(b, w.ptr, host)?,
                Pristine::Device(copy) => b.first_difference(w.ptr, *copy, w.bytes)?,
            };
            let Some(at) = changed else { continue };
            let index = at / w.element_bytes;
            let start = index * w.element_bytes;
            let (mut was, mut now) = (vec![0u8; w.element_bytes], vec![0u8; w.element_bytes]);
            b.read(w.ptr + start as u64, &mut now)?;
            match &w.pristine {
                Pristine::Host(host) => {
                    was.copy_from_slice(&host[start..start + w.element_bytes]);
                    b.write(w.ptr, host)?;
                }
                Pristine::Device(copy) => {
                    b.read(copy + start as u64, &mut was)?;
                    b.copy(w.ptr, *copy, w.bytes)?;
                }
            }
            let argument = self
                .inner
                .last_launch
                .lock()
                .unwrap()
                .as_ref()
                .and_then(|(kernel, args)| {
                    let i = args.iter().position(|a| *a == Arg::Ptr(w.ptr))?;
                    Some(format!(" (argument {} of `{kernel}`)", i + 1))
                })
                .unwrap_or_default();
            return Err(InputModified {
                buffer: w.name.clone(),
                argument,
                index,
                uploaded: show(w.element_type, &was),
                found: show(w.element_type, &now),
            }
            .into());
        }
        Ok(())
    }

    fn alloc<T: Pod>(&self, name: &str, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = len * std::mem::size_of::<T>();
        let b = self.backend();
        let base = b.alloc(bytes + 2 * GUARD_BYTES).with_context(|| format!("allocating `{name}` ({bytes} bytes)"))?;
        b.fill(base, GUARD_BYTE, GUARD_BYTES)?;
        b.fill(base + (GUARD_BYTES + bytes) as u64, GUARD_BYTE, GUARD_BYTES)?;
        b.protect(base, GUARD_BYTES, name, true)?;
        b.protect(base + (GUARD_BYTES + bytes) as u64, GUARD_BYTES, name, false)?;
        self.inner.live.lock().unwrap().push((base, bytes, name.to_string(), None));
        Ok(DeviceBuffer { gpu: self.clone(), base, len, name: name.to_string(), _t: PhantomData })
    }

    /// A check starts: from here its kernels together may run as long as one
    /// launch may ([`CheckTimeLimit`]).
    pub fn begin_check(&self) {
        *self.inner.waited.lock().unwrap() = (0, Duration::ZERO);
        *self.inner.check_limit.lock().unwrap() = None;
    }

    /// From here until the next [`Gpu::begin_check`], the check's kernels (one
    /// launch, or all together) may run `limit` at most, when it is shorter
    /// than the GPU's timeout: a limit derived from the reference kernel's time
    /// on the same input (the batch's `--timeout-from-reference`).
    pub fn limit_check(&self, limit: Duration) {
        *self.inner.check_limit.lock().unwrap() = Some(limit);
    }

    /// Waits for launched work (with the stuck-kernel timeout, and what is left
    /// of the check's), then checks every guard zone.
    pub fn finish(&self) -> Result<()> {
        let limit = self.inner.check_limit.lock().unwrap().map_or(self.inner.timeout, |l| l.min(self.inner.timeout));
        let (launches, spent) = *self.inner.waited.lock().unwrap();
        let left = limit.saturating_sub(spent);
        let start = Instant::now();
        let synced = self.backend().synchronize(left);
        let took = start.elapsed();
        *self.inner.waited.lock().unwrap() = (launches + 1, spent + took);
        match synced {
            // The check's time ran out before this launch's own limit did.
            Err(BackendError::Timeout(_)) if left < limit && took >= left => {
                let over = CheckTimeLimit { limit: limit.as_secs_f64(), launches };
                self.backend().abandon(&over.to_string());
                return Err(over.into());
            }
            other => other?,
        }
        self.check_guards()?;
        self.check_inputs()
    }

    fn check_guards(&self) -> Result<()> {
        let live = self.inner.live.lock().unwrap().clone();
        let mut guard = vec![0u8; GUARD_BYTES];
        for (base, len, name, rows) in live {
            for (before, at) in [(true, base), (false, base + (GUARD_BYTES + len) as u64)] {
                self.backend().read(at, &mut guard)?;
                let touched = guard.iter().filter(|&&b| b != GUARD_BYTE).count();
                if touched > 0 {
                    // Restore, so that one violation is not reported again by every later launch.
                    self.backend().fill(at, GUARD_BYTE, GUARD_BYTES)?;
                    // The changed byte nearest the buffer, counted as the simulator counts it.
                    let distance = if before {
                        GUARD_BYTES - guard.iter().rposition(|&b| b != GUARD_BYTE).unwrap_or(0)
                    } else {
                        guard.iter().position(|&b| b != GUARD_BYTE).unwrap_or(0)
                    };
                    let place = rows
                        .map(|s| {
                            format!(": {}", shape::place(&name, &s, shape::element_index(&s, distance as u64, before)))
                        })
                        .unwrap_or_default();
                    let two_d = rows.is_some() || self.inner.last_launch_2d.load(std::sync::atomic::Ordering::Relaxed);
                    let fix = if two_d { shape::WRITE_HINT_2D } else { "check your bounds test (e.g. `if (i < n)`)" };
                    let side = if before { "before the start of" } else { "past the end of" };
                    return Err(OutOfBounds { buffer: name, side, bytes: touched, len, place, fix }.into());
                }
            }
        }
        Ok(())
    }
}

/// A loaded PTX module: the student's compiled file, or a yardstick of the grader's.
pub struct Module {
    gpu: Gpu,
    id: ModuleId,
    /// Each kernel's declaration: every launch is checked against it, since the
    /// driver copies mismatched arguments silently and refuses a block that
    /// cannot fit with only `CUDA_ERROR_INVALID_VALUE`.
    kernels: HashMap<String, EntryDecl>,
    /// Compiled from the grader's own source ([`Gpu::load_graders`]).
    graders: bool,
}

impl Module {
    /// The GPU the module is loaded on: where a check allocates its buffers.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Whether this is one of the grader's own modules, not a student's.
    pub fn is_graders(&self) -> bool {
        self.graders
    }

    pub fn has_kernel(&self, name: &str) -> Result<bool> {
        Ok(self.gpu.backend().has_kernel(self.id, name)?)
    }

    /// Registers per thread and static shared bytes the driver gives `kernel`
    /// (`None` on the simulator), for the report's occupancy.
    pub fn kernel_resources(&self, kernel: &str) -> Result<Option<(u32, u32)>> {
        Ok(self.gpu.backend().kernel_resources(self.id, kernel)?)
    }

    /// Launches `kernel` and waits for it; then checks every buffer's guard
    /// zones and the watched inputs. The arguments are checked against the
    /// kernel's declared parameters first (`wrong-signature`).
    ///
    /// ```no_run
    /// use kit::{args, LaunchConfig};
    /// # fn demo(module: &kit::Module, data: &kit::DeviceBuffer<u8>, bins: &kit::DeviceBuffer<u32>) -> anyhow::Result<()> {
    /// let n = data.len();
    /// let cfg = LaunchConfig::linear((n as u32).div_ceil(256), 256).with_shared(256 * 4);
    /// module.launch("histogram_private", cfg, &args![data, bins, n as i32])?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn launch(&self, kernel: &str, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        self.launch_async(kernel, cfg, args)?;
        self.gpu.finish().with_context(|| format!("running `{kernel}` with {}", describe(&cfg)))
    }

    /// Starts `kernel` without waiting: the `launch` of
    /// [`crate::timed::student`], which waits and checks itself. Elsewhere call
    /// [`Gpu::finish`] after (or use [`Module::launch`]).
    ///
    /// ```no_run
    /// use kit::LaunchConfig;
    /// # fn demo(module: &kit::Module, gpu: &kit::Gpu, input: &kit::timed::Fresh<u8>, bins: &kit::DeviceBuffer<u32>) -> anyhow::Result<()> {
    /// let n = input.len();
    /// let cfg = LaunchConfig::linear(132 * 4, 256);
    /// let timing = kit::timed::student(
    ///     gpu,
    ///     |launch| {
    ///         input.fill(launch)?;
    ///         bins.write(&[0; 256])
    ///     },
    ///     |_| module.launch_async("histogram_coarse", cfg, &[input.arg(), bins.arg(), (n as i32).into()]),
    ///     |launch| input.intact(launch), // and check what launch `launch` wrote
    /// )?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn launch_async(&self, kernel: &str, cfg: LaunchConfig, args: &[Arg]) -> Result<()> {
        let max = self.gpu.info().max_threads_per_block;
        if cfg.threads_per_block() > max {
            bail!("{} asks for more than {max} threads per block", describe(&cfg));
        }
        if let Some(decl) = self.kernels.get(kernel) {
            inspect::check_args(kernel, &decl.params, args)?;
            if let Some(why) = unfit_block(kernel, decl, &cfg, self.gpu.info()) {
                return Err(BackendError::LaunchFailed(why).into());
            }
        }
        *self.gpu.inner.last_launch.lock().unwrap() = Some((kernel.to_string(), args.to_vec()));
        if let Some(log) = &mut *self.gpu.inner.launch_log.lock().unwrap_or_else(|p| p.into_inner()) {
            log.push(kernel.to_string());
        }
        let two_d = cfg.grid.1 > 1 || cfg.block.1 > 1 || cfg.grid.2 > 1 || cfg.block.2 > 1;
        self.gpu.inner.last_launch_2d.store(two_d, std::sync::atomic::Ordering::Relaxed);
        self.gpu
            .backend()
            .launch(self.id, kernel, &cfg, args)
            .with_context(|| format!("launching `{kernel}` with {}", describe(&cfg)))
    }

    /// Writes `values` into the `__constant__` array (or scalar) `symbol`
    /// declared at file scope in this module, as `cudaMemcpyToSymbol` does: from
    /// its first element, so fewer values than the array holds are fine (a
    /// 5 × 5 mask into `__constant__ float mask[49]`; the rest keeps what it
    /// held, zeros after loading). The same on the simulator and on a GPU.
    ///
    /// Errors: a module without `symbol` fails with
    /// [`BackendError::MissingSymbol`] (verdict `missing-kernel`: wrap it with
    /// what to declare, as ex04's `search_v3` does), and more values than the
    /// array holds with a message naming both sizes. Both name the symbol and
    /// the number of values written.
    ///
    /// ```no_run
    /// # fn demo(ctx: &kit::Ctx) -> anyhow::Result<()> {
    /// // kernels/conv.cu: `__constant__ float mask[49];` (r up to 3), read as mask[(2r+1) * i + j]
    /// let r = 2;
    /// let mask: Vec<f32> = kit::inputs::uniform_f32(&mut ctx.rng(), (2 * r + 1) * (2 * r + 1), -1.0, 1.0);
    /// let module = ctx.kernel_module("conv_constant")?;
    /// module.set_constant("mask", &mask)?; // 25 of its 49 floats
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_constant<T: Pod>(&self, symbol: &str, values: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(values);
        self.gpu.backend().write_symbol(self.id, symbol, bytes).with_context(|| {
            format!(
                "writing {} value(s) ({} bytes) into `__constant__ {symbol}` (cudaMemcpyToSymbol)",
                values.len(),
                bytes.len()
            )
        })
    }
}

/// Why a block of `cfg` cannot run `kernel`, in the student's terms; `None` when it can.
fn unfit_block(kernel: &str, decl: &EntryDecl, cfg: &LaunchConfig, info: &DeviceInfo) -> Option<String> {
    let threads = cfg.threads_per_block();
    if let Some(max) = decl.max_threads.filter(|&max| threads > max) {
        return Some(format!(
            "`{kernel}` is compiled for at most {max} threads per block (`__launch_bounds__`), \
             but the grader launches {threads}: remove the bound or make it at least {threads}"
        ));
    }
    let shared = decl.static_shared_bytes + cfg.shared_bytes as usize;
    let limit = info.max_shared_bytes_per_block as usize;
    (shared > limit).then(|| {
        format!(
            "`{kernel}` needs {shared} bytes of shared memory per block ({} of fixed-size `__shared__` arrays \
             + {} given at launch), but a block may have at most {limit}",
            decl.static_shared_bytes, cfg.shared_bytes
        )
    })
}

/// The offset of the first byte at `ptr` that differs from `host`, reading
/// the device a piece at a time.
fn first_change_from_host(b: &dyn Backend, ptr: DevPtr, host: &[u8]) -> Result<Option<usize>> {
    const PIECE: usize = 1 << 20;
    let mut now = vec![0u8; PIECE.min(host.len())];
    for (i, piece) in host.chunks(PIECE).enumerate() {
        let at = i * PIECE;
        b.read(ptr + at as u64, &mut now[..piece.len()])?;
        if let Some(j) = piece.iter().zip(&now).position(|(p, q)| p != q) {
            return Ok(Some(at + j));
        }
    }
    Ok(None)
}

/// One element's bytes as its type prints it: `0.53125`, `65 ('A')`, `-3`.
pub(crate) fn show(element_type: &str, bytes: &[u8]) -> String {
    fn le<const N: usize>(bytes: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&bytes[..N]);
        a
    }
    match (element_type, bytes.len()) {
        ("f32", 4) => f32::from_le_bytes(le(bytes)).to_string(),
        ("f64", 8) => f64::from_le_bytes(le(bytes)).to_string(),
        ("i32", 4) => i32::from_le_bytes(le(bytes)).to_string(),
        ("u32", 4) => u32::from_le_bytes(le(bytes)).to_string(),
        ("i64", 8) => i64::from_le_bytes(le(bytes)).to_string(),
        ("u64", 8) => u64::from_le_bytes(le(bytes)).to_string(),
        ("i16", 2) => i16::from_le_bytes(le(bytes)).to_string(),
        ("u16", 2) => u16::from_le_bytes(le(bytes)).to_string(),
        ("i8", 1) => (bytes[0] as i8).to_string(),
        ("u8", 1) if bytes[0].is_ascii_graphic() => format!("{} ('{}')", bytes[0], bytes[0] as char),
        ("u8", 1) => bytes[0].to_string(),
        _ => bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" "),
    }
}

fn describe(cfg: &LaunchConfig) -> String {
    let (g, b) = (cfg.grid, cfg.block);
    let mut s = format!("grid ({}, {}, {}), block ({}, {}, {})", g.0, g.1, g.2, b.0, b.1, b.2);
    if cfg.shared_bytes > 0 {
        s += &format!(", {} bytes of dynamic shared memory", cfg.shared_bytes);
    }
    s
}

/// A typed device array with guard zones. Freed on drop.
pub struct DeviceBuffer<T: Pod> {
    gpu: Gpu,
    base: DevPtr,
    len: usize,
    name: String,
    _t: PhantomData<T>,
}

impl<T: Pod> DeviceBuffer<T> {
    /// The address the kernel sees (just after the leading guard zone).
    pub fn ptr(&self) -> DevPtr {
        self.base + GUARD_BYTES as u64
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The kernel argument for this buffer (a `T*`).
    pub fn arg(&self) -> Arg {
        Arg::Ptr(self.ptr())
    }

    /// Says the buffer holds `height` rows of `width` elements, row after
    /// row (an image, a matrix): an access out of its bounds is then named by
    /// the row and column its index stands for, with the 2-D bounds test as
    /// the hint (`x < width && y < height`), on the simulator as it happens
    /// and on a GPU for a write into its guard zone. Every 2-D exercise
    /// should say it of its images and matrices.
    ///
    /// ```no_run
    /// # fn demo(gpu: &kit::Gpu, image: &[f32], w: usize, h: usize) -> anyhow::Result<()> {
    /// let d_in = gpu.upload("in", image)?.with_2d_shape(w, h)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_2d_shape(self, width: usize, height: usize) -> Result<Self> {
        if width * height != self.len || width == 0 {
            bail!("`{}` holds {} elements, not {width} x {height}", self.name, self.len);
        }
        let rows = Shape2d { width, height, element_bytes: std::mem::size_of::<T>() };
        for entry in self.gpu.inner.live.lock().unwrap().iter_mut().filter(|e| e.0 == self.base) {
            entry.3 = Some(rows);
        }
        self.gpu.backend().set_shape(self.ptr(), Some(rows));
        Ok(self)
    }

    /// Overwrites the whole buffer with `data` (as long as the buffer): reset an
    /// output or counter between launches (a timed check's `prepare`). An
    /// input written this way is what the kernel must then leave as it is.
    ///
    /// ```no_run
    /// # fn demo(bins: &kit::DeviceBuffer<u32>) -> anyhow::Result<()> {
    /// bins.write(&[0; 256])?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn write(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len {
            bail!("`{}` holds {} elements, {} given", self.name, self.len, data.len());
        }
        self.gpu.backend().write(self.ptr(), bytemuck::cast_slice(data))?;
        self.gpu.rewatch(self.ptr())
    }

    /// Writes `data` over the elements from `start` on: a check that changes
    /// part of an input between launches (the change is then what was uploaded).
    pub fn write_at(&self, start: usize, data: &[T]) -> Result<()> {
        if start.checked_add(data.len()).is_none_or(|end| end > self.len) {
            bail!("`{}` holds {} elements; {} from element {start} do not fit", self.name, self.len, data.len());
        }
        let at = (start * std::mem::size_of::<T>()) as u64;
        self.gpu.backend().write(self.ptr() + at, bytemuck::cast_slice(data))?;
        self.gpu.rewatch(self.ptr())
    }

    /// Sets every byte to the poison pattern, so unwritten elements show: a
    /// timed check's `prepare` for an output the kernel overwrites.
    ///
    /// ```no_run
    /// # fn demo(out: &kit::DeviceBuffer<f32>) -> anyhow::Result<()> {
    /// out.poison()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn poison(&self) -> Result<()> {
        self.gpu.backend().fill(self.ptr(), POISON_BYTE, self.bytes())?;
        self.gpu.rewatch(self.ptr())
    }

    /// The whole buffer, copied to the host (and its digest recorded for
    /// `grader compare-digests`). For a large timed output, read a sample
    /// ([`DeviceBuffer::read_elements`]) instead.
    ///
    /// ```no_run
    /// # fn demo(bins: &kit::DeviceBuffer<u32>, expected: &[u32]) -> anyhow::Result<()> {
    /// kit::check::exact("bins", expected, &bins.read()?)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn read(&self) -> Result<Vec<T>> {
        let mut out = vec![T::zeroed(); self.len];
        self.gpu.backend().read(self.ptr(), bytemuck::cast_slice_mut(&mut out))?;
        crate::digest::record(&self.name, bytemuck::cast_slice(&out));
        Ok(out)
    }

    /// The first element at which this buffer and `other` differ (compared on
    /// the device where the backend can), or `None` where they are equal.
    pub fn first_difference(&self, other: &DeviceBuffer<T>) -> Result<Option<usize>> {
        anyhow::ensure!(other.len == self.len, "`{}` and `{}` differ in length", self.name, other.name);
        let at = self.gpu.backend().first_difference(self.ptr(), other.ptr(), self.bytes())?;
        Ok(at.map(|byte| byte / std::mem::size_of::<T>()))
    }

    /// `len` elements from `start` on: one row, one section of a scan.
    ///
    /// ```no_run
    /// # fn demo(out: &kit::DeviceBuffer<i32>) -> anyhow::Result<()> {
    /// let last_section = out.read_range(out.len() - 1024, 1024)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn read_range(&self, start: usize, len: usize) -> Result<Vec<T>> {
        if start.checked_add(len).is_none_or(|end| end > self.len) {
            bail!("`{}` holds {} elements; {len} from element {start} do not exist", self.name, self.len);
        }
        let mut out = vec![T::zeroed(); len];
        let at = (start * std::mem::size_of::<T>()) as u64;
        self.gpu.backend().read(self.ptr() + at, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// The elements at `indices`, each read alone: a sample of an output of
    /// hundreds of MB, checked after every timed launch, costs a few reads
    /// instead of the whole buffer.
    ///
    /// ```no_run
    /// use rand::Rng;
    /// # fn demo(ctx: &kit::Ctx, out: &kit::DeviceBuffer<f32>, launch: usize) -> anyhow::Result<()> {
    /// let mut rng = ctx.rng_for(&format!("launch {launch}"));
    /// let at: Vec<usize> = (0..256).map(|_| rng.random_range(0..out.len())).collect();
    /// for (&i, got) in at.iter().zip(out.read_elements(at.iter().copied())?) {
    ///     // compare `got` with what element i should hold
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn read_elements(&self, indices: impl IntoIterator<Item = usize>) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        let indices: Vec<usize> = indices.into_iter().collect();
        if let Some(&i) = indices.iter().find(|&&i| i >= self.len) {
            bail!("`{}` holds {} elements; element {i} does not exist", self.name, self.len);
        }
        if size == 4 {
            // 32-bit elements: gathered on the device where the backend can.
            let at: Vec<u64> = indices.iter().map(|&i| i as u64).collect();
            let words = self.gpu.backend().gather_words(self.ptr(), &at)?;
            return Ok(words.iter().map(|w| bytemuck::cast_slice::<u32, T>(std::slice::from_ref(w))[0]).collect());
        }
        indices
            .into_iter()
            .map(|i| {
                let mut one = T::zeroed();
                self.gpu.backend().read(self.ptr() + (i * size) as u64, bytemuck::bytes_of_mut(&mut one))?;
                Ok(one)
            })
            .collect()
    }

    /// The elements of an input made by [`Gpu::upload_generated`] whose every
    /// byte the launches touched (read), as ranges in order, where the backend knows:
    /// on the simulator, what a launch of a few sampled blocks of a reduction
    /// read, which its sums must add up to, whichever elements the kernel gave
    /// its blocks. `None` where the backend cannot tell (a GPU: the whole
    /// launch ran, and read every element).
    pub fn read_by_kernels(&self) -> Result<Option<Vec<std::ops::Range<usize>>>> {
        let size = std::mem::size_of::<T>();
        let Some(touched) = self.gpu.backend().touched_by_kernels(self.ptr(), self.bytes())? else { return Ok(None) };
        let elements = touched.into_iter().map(|r| r.start.div_ceil(size)..(r.end / size).min(self.len));
        Ok(Some(elements.filter(|r| !r.is_empty()).collect()))
    }

    /// The elements (index, value) of an output made by
    /// [`Gpu::poisoned_generated`] that the launches wrote, where the backend
    /// knows what they touched: on the simulator, those of a launch of a few
    /// sampled blocks, wherever the kernel put them (its blocks may take their
    /// tiles in another order than the README's). `None` where the backend
    /// cannot tell: on a GPU, where the whole launch ran and every element the
    /// README asks for is written, and for any other buffer.
    pub fn written_where_touched(&self) -> Result<Option<Vec<(usize, T)>>> {
        let size = std::mem::size_of::<T>();
        let Some(touched) = self.gpu.backend().touched(self.ptr(), self.bytes())? else { return Ok(None) };
        let mut written = Vec::new();
        for r in touched {
            let (first, end) = (r.start / size, r.end.div_ceil(size).min(self.len));
            let mut bytes = vec![0u8; (end - first) * size];
            self.gpu.backend().read(self.ptr() + (first * size) as u64, &mut bytes)?;
            let elements: &[T] = bytemuck::cast_slice(&bytes);
            let poison = |v: &T| bytemuck::bytes_of(v).iter().all(|&b| b == POISON_BYTE);
            written.extend((first..end).zip(elements.iter().copied()).filter(|(_, v)| !poison(v)));
        }
        Ok(Some(written))
    }

    /// Reads the buffer into a host buffer that this thread keeps and reuses,
    /// and hands it to `check`: for a timed output of hundreds of MB that is
    /// checked and then dropped, the page faults of fresh host memory cost
    /// more than the copy (1.3 GB/s against 7 GB/s on the H100's host), and
    /// this way a process pays them once. Calls may nest (two outputs compared).
    pub fn read_with<R>(&self, check: impl FnOnce(&[T]) -> Result<R>) -> Result<R> {
        const { assert!(std::mem::align_of::<T>() <= std::mem::align_of::<u64>()) };
        let mut host = READ_BUFFERS.with_borrow_mut(Vec::pop).unwrap_or_default();
        let words = self.bytes().div_ceil(8);
        if host.len() < words {
            host.resize(words, 0);
        }
        let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut host)[..self.bytes()];
        let outcome = match self.gpu.backend().read(self.ptr(), bytes) {
            Ok(()) => {
                crate::digest::record(&self.name, bytes);
                check(bytemuck::cast_slice(bytes))
            }
            Err(e) => Err(e.into()),
        };
        READ_BUFFERS.with_borrow_mut(|free| free.push(host));
        outcome
    }
}

thread_local! {
    /// [`DeviceBuffer::read_with`]'s host buffers not in use (8-byte words,
    /// so that any element type lines up).
    static READ_BUFFERS: std::cell::RefCell<Vec<Vec<u64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<T: Pod> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        let mut live = self.gpu.inner.live.lock().unwrap();
        if live.iter().any(|(b, _, _, rows)| *b == self.base && rows.is_some()) {
            self.gpu.backend().set_shape(self.ptr(), None);
        }
        live.retain(|(b, _, _, _)| *b != self.base);
        drop(live);
        self.gpu.unwatch(self.ptr());
        self.gpu.backend().free(self.base);
    }
}

impl<T: Pod> From<&DeviceBuffer<T>> for Arg {
    fn from(b: &DeviceBuffer<T>) -> Arg {
        b.arg()
    }
}
macro_rules! scalar_args {
    ($($t:ty => $v:ident),*) => { $(impl From<$t> for Arg { fn from(x: $t) -> Arg { Arg::$v(x) } })* };
}
scalar_args!(i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

/// Builds a kernel argument list: `args![x, y, n as i32, hits]`, each a
/// `&DeviceBuffer` (its pointer) or an `i32`, `u32`, `i64`, `u64`, `f32`, `f64`
/// (the kernel's parameter types; checked at launch).
///
/// ```no_run
/// # fn demo(module: &kit::Module, x: &kit::DeviceBuffer<f32>, y: &kit::DeviceBuffer<f32>) -> anyhow::Result<()> {
/// let n = x.len();
/// module.launch("scale", kit::LaunchConfig::linear(4, 256), &kit::args![x, y, 2.0f32, n as i32])?;
/// # Ok(())
/// # }
/// ```
#[macro_export]
macro_rules! args {
    ($($a:expr),* $(,)?) => { [$($crate::backend::Arg::from($a)),*] };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulator, with every launch taking `kernel` of wall time to finish.
    struct SlowKernels {
        sim: crate::backend::sim::SimBackend,
        kernel: Duration,
        abandoned: Arc<Mutex<Option<String>>>,
    }

    /// A GPU whose kernels take `kernel_ms` each, with a `limit_ms` timeout,
    /// and what it was told when the caller gave up on a kernel.
    fn slow_gpu(kernel_ms: u64, limit_ms: u64) -> (Gpu, Arc<Mutex<Option<String>>>) {
        let abandoned = Arc::new(Mutex::new(None));
        let backend = SlowKernels {
            sim: crate::backend::sim::SimBackend::new(),
            kernel: Duration::from_millis(kernel_ms),
            abandoned: abandoned.clone(),
        };
        (Gpu::new(Box::new(backend), Duration::from_millis(limit_ms)), abandoned)
    }

    impl Backend for SlowKernels {
        fn info(&self) -> &DeviceInfo {
            self.sim.info()
        }
        fn load_module(&self, ptx: &str) -> Result<ModuleId, BackendError> {
            self.sim.load_module(ptx)
        }
        fn has_kernel(&self, m: ModuleId, name: &str) -> Result<bool, BackendError> {
            self.sim.has_kernel(m, name)
        }
        fn alloc(&self, bytes: usize) -> Result<DevPtr, BackendError> {
            self.sim.alloc(bytes)
        }
        fn free(&self, ptr: DevPtr) {
            self.sim.free(ptr)
        }
        fn write(&self, dst: DevPtr, src: &[u8]) -> Result<(), BackendError> {
            self.sim.write(dst, src)
        }
        fn read(&self, src: DevPtr, dst: &mut [u8]) -> Result<(), BackendError> {
            self.sim.read(src, dst)
        }
        fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> Result<(), BackendError> {
            self.sim.fill(dst, byte, len)
        }
        fn write_symbol(&self, m: ModuleId, name: &str, bytes: &[u8]) -> Result<(), BackendError> {
            self.sim.write_symbol(m, name, bytes)
        }
        fn launch(&self, m: ModuleId, k: &str, cfg: &LaunchConfig, args: &[Arg]) -> Result<(), BackendError> {
            self.sim.launch(m, k, cfg, args)
        }
        fn synchronize(&self, timeout: Duration) -> Result<(), BackendError> {
            std::thread::sleep(self.kernel.min(timeout));
            if self.kernel > timeout {
                return Err(BackendError::Timeout(format!("{timeout:?}")));
            }
            Ok(())
        }
        fn abandon(&self, why: &str) {
            *self.abandoned.lock().unwrap() = Some(why.to_string());
        }
        fn time_ms(&self, _: &mut dyn FnMut() -> Result<(), BackendError>, _: Duration) -> Result<f32, BackendError> {
            Err(BackendError::Unsupported("timing", "test"))
        }
    }

    #[test]
    fn a_checks_launches_together_may_run_as_long_as_one() {
        let (gpu, abandoned) = slow_gpu(40, 100);
        gpu.begin_check();
        gpu.finish().unwrap();
        gpu.finish().unwrap();
        let e = gpu.finish().unwrap_err();
        let over = e.downcast_ref::<CheckTimeLimit>().expect("the third launch runs out of the check's time");
        assert_eq!(over.launches, 2);
        assert!(e.to_string().contains("print in a loop"), "{e}");
        assert_eq!(abandoned.lock().unwrap().as_deref(), Some(e.to_string().as_str()), "later calls say why");
        // The next check starts with the whole limit again.
        gpu.begin_check();
        gpu.finish().unwrap();
        gpu.finish().unwrap();
    }

    /// A write into a guard zone (as a GPU finds it after a launch) of a
    /// buffer with rows is named by the row and column of its first element.
    #[test]
    fn a_write_past_a_buffer_with_rows_names_the_row_and_column() {
        let gpu = Gpu::simulator();
        let out = gpu.zeros::<f32>("out", 6).unwrap().with_2d_shape(3, 2).unwrap();
        gpu.backend().write(out.ptr() + 24, &[1, 2, 3, 4]).unwrap();
        let e = gpu.finish().unwrap_err();
        let msg = e.downcast_ref::<OutOfBounds>().expect("a guard write").to_string();
        assert!(
            msg.contains(
                "wrote 4 bytes past the end of the buffer `out` (it has 24 bytes): `out[6]` stands for row 2, column 0"
            ),
            "{msg}"
        );
        assert!(
            msg.contains("row 1, column 3, right of its last column") && msg.contains("col < width && row < height"),
            "{msg}"
        );
        gpu.backend().write(out.ptr() - 4, &[1, 2, 3, 4]).unwrap();
        let msg = gpu.finish().unwrap_err().to_string();
        assert!(msg.contains("`out[-1]` stands for row -1, column 2") && msg.contains("row 0, column -1"), "{msg}");
        // Without rows, and after a 1-D launch: the 1-D words.
        let flat = gpu.zeros::<f32>("flat", 6).unwrap();
        gpu.backend().write(flat.ptr() + 24, &[1]).unwrap();
        let msg = gpu.finish().unwrap_err().to_string();
        assert!(msg.contains("wrote 1 byte past the end of the buffer `flat`") && msg.contains("if (i < n)"), "{msg}");
    }

    #[test]
    fn one_launch_past_the_limit_is_a_plain_timeout() {
        let (gpu, _) = slow_gpu(150, 100);
        gpu.begin_check();
        let e = gpu.finish().unwrap_err();
        assert!(e.downcast_ref::<CheckTimeLimit>().is_none(), "{e}");
        assert!(matches!(e.downcast_ref::<BackendError>(), Some(BackendError::Timeout(_))), "{e}");
    }
    #[test]
    fn a_check_limited_below_the_timeout_stops_there_and_the_next_check_has_the_timeout_again() {
        let (gpu, _) = slow_gpu(60, 1000);
        gpu.begin_check();
        gpu.limit_check(Duration::from_millis(30));
        let e = gpu.finish().unwrap_err();
        assert!(matches!(e.downcast_ref::<BackendError>(), Some(BackendError::Timeout(_))), "{e}");
        gpu.begin_check();
        gpu.finish().unwrap();
        // A limit above the timeout changes nothing: the timeout stays the ceiling.
        let (gpu, _) = slow_gpu(60, 50);
        gpu.begin_check();
        gpu.limit_check(Duration::from_secs(5));
        assert!(gpu.finish().is_err());
    }
    use crate::inspect::WrongSignature;

    #[test]
    fn reading_into_a_kept_buffer_sees_what_read_sees_nested_and_after_a_larger_read() {
        let gpu = Gpu::simulator();
        let big: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5).collect();
        let small: Vec<u8> = (0..13).collect();
        let (dbig, dsmall) = (gpu.upload("big", &big).unwrap(), gpu.upload("small", &small).unwrap());
        assert_eq!(dbig.read_with(|h| Ok(h.to_vec())).unwrap(), big);
        // The next read reuses the larger buffer: only its own bytes show.
        assert_eq!(dsmall.read_with(|h| Ok(h.to_vec())).unwrap(), small);
        let both = dbig.read_with(|b| dsmall.read_with(|s| Ok((b.len(), s.to_vec())))).unwrap();
        assert_eq!(both, (1000, small.clone()), "nested reads use two buffers");
        let empty = gpu.upload::<u32>("empty", &[]).unwrap();
        assert_eq!(empty.read_with(|h| Ok(h.len())).unwrap(), 0);
        let e = dsmall.read_with(|_| -> Result<()> { bail!("the check failed") }).unwrap_err();
        assert_eq!(e.to_string(), "the check failed", "the check's own error comes back");
    }

    #[test]
    fn an_upload_followed_by_a_tail_holds_both_in_order() {
        let gpu = Gpu::simulator();
        let buf = gpu.upload_followed_by("m", &[1.0f32, 2.0, 3.0], &[f32::NAN; 2]).unwrap();
        let back = buf.read().unwrap();
        assert_eq!(back.len(), 5);
        assert!(back[..3] == [1.0, 2.0, 3.0] && back[3..].iter().all(|x| x.is_nan()), "{back:?}");
    }

    /// A generated input reads as its generator gives it, whole and in part,
    /// elements that straddle the simulator's chunks too; its guards stay
    /// guards, and a kernel's store lands among generated neighbours.
    #[test]
    fn a_generated_input_holds_what_its_generator_gives() {
        let gpu = Gpu::simulator();
        let value = |i: usize| [i as u32, (i as u32).wrapping_mul(7), !(i as u32)];
        let gen = move |first: usize, out: &mut [[u32; 3]]| {
            for (k, o) in out.iter_mut().enumerate() {
                *o = value(first + k);
            }
        };
        let n = 5000;
        let module = gpu.load(ONE_POINTER).unwrap();
        // watched, as an input is: the store is caught
        let watched = gpu.upload_generated("x", n, gen).unwrap();
        let e = module.launch("store_one", LaunchConfig::linear(1, 1), &crate::args![&watched]).unwrap_err();
        assert!(e.chain().any(|c| c.is::<InputModified>()), "{e:#}");
        gpu.watch_inputs(false);
        let buf = gpu.upload_generated("x", n, gen).unwrap();
        assert_eq!(buf.read_elements([1, 4000, 86]).unwrap(), [value(1), value(4000), value(86)]);
        module.launch("store_one", LaunchConfig::linear(1, 1), &crate::args![&buf]).unwrap();
        let mut want: Vec<[u32; 3]> = (0..n).map(value).collect();
        want[0][0] = 1;
        assert_eq!(buf.read().unwrap(), want);
        let out = gpu.poisoned_generated::<u32>("out", 3000).unwrap();
        assert!(out.read().unwrap().iter().all(|&w| w == u32::from_ne_bytes([POISON_BYTE; 4])));
        assert_eq!(out.written_where_touched().unwrap(), Some(vec![]), "read, not written");
        module.launch("store_one", LaunchConfig::linear(1, 1), &crate::args![&out]).unwrap();
        assert_eq!(out.written_where_touched().unwrap(), Some(vec![(0, 1)]));
        assert_eq!(gpu.poisoned::<u32>("eager", 10).unwrap().written_where_touched().unwrap(), None);
    }

    const ONE_POINTER: &str = "
.version 7.0
.target sm_75
.address_size 64
.visible .entry store_one(
	.param .u64 store_one_param_0
)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [store_one_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, 1;
	st.global.u32 [%rd2], %r1;
	ret;
}
.visible .entry bounded()
.maxntid 32, 1, 1
{
	.shared .align 4 .b8 _ZZ7boundedE3big[40000];
	ret;
}
";

    #[test]
    fn launches_are_checked_against_the_declared_parameters() {
        let gpu = Gpu::simulator();
        let module = gpu.load(ONE_POINTER).unwrap();
        let out = gpu.zeros::<u32>("out", 1).unwrap();
        let cfg = LaunchConfig::linear(1, 1);

        let e = module.launch("store_one", cfg, &crate::args![&out, 3i32]).unwrap_err();
        let wrong = e.downcast_ref::<WrongSignature>().expect("a typed error the grader can name");
        assert_eq!(wrong.kernel, "store_one");
        assert_eq!(out.read().unwrap(), [0], "nothing ran");

        let e = module.launch("store_one", cfg, &crate::args![1.5f64]).unwrap_err();
        assert!(e.downcast_ref::<WrongSignature>().is_some(), "{e:#}");

        module.launch("store_one", cfg, &crate::args![&out]).unwrap();
        assert_eq!(out.read().unwrap(), [1]);
    }

    #[test]
    fn a_launch_that_writes_into_an_input_is_caught_and_named() {
        let gpu = Gpu::simulator();
        let module = gpu.load(ONE_POINTER).unwrap();
        let cfg = LaunchConfig::linear(1, 1);
        // An output may be written.
        let out = gpu.zeros::<u32>("out", 2).unwrap();
        module.launch("store_one", cfg, &crate::args![&out]).unwrap();
        let input = gpu.upload("in", &[5u32, 6, 7]).unwrap();
        let e = module.launch("store_one", cfg, &crate::args![&input]).unwrap_err();
        let changed = e.chain().find_map(|c| c.downcast_ref::<InputModified>()).unwrap_or_else(|| panic!("{e:#}"));
        assert_eq!(
            (changed.buffer.as_str(), changed.argument.as_str(), changed.index),
            ("in", " (argument 1 of `store_one`)", 0)
        );
        assert_eq!((changed.uploaded.as_str(), changed.found.as_str()), ("5", "1"));
        assert!(format!("{e:#}").contains("Write results only to the output"), "{e:#}");
        assert_eq!(input.read().unwrap(), [5, 6, 7], "restored, so the next launch starts clean");
        // Written by the host, an input holds what was written last.
        input.write(&[1, 2, 3]).unwrap();
        module.launch("store_one", cfg, &crate::args![&input]).unwrap();
        // Not watched (a timed check's inputs): not compared.
        gpu.watch_inputs(false);
        let timed = gpu.upload("timed", &[9u32]).unwrap();
        module.launch("store_one", cfg, &crate::args![&timed]).unwrap();
        drop(input);
        assert!(gpu.inner.inputs.lock().unwrap().is_empty(), "a freed input is forgotten");
    }

    /// `unwatched` uploads what a launch may write into, and then inputs are
    /// watched again where they were and not where they were not, after a
    /// panic in its closure too.
    #[test]
    fn unwatched_restores_whether_inputs_were_watched() {
        let gpu = Gpu::simulator();
        let module = gpu.load(ONE_POINTER).unwrap();
        let cfg = LaunchConfig::linear(1, 1);
        let caught = |buf: &DeviceBuffer<u32>| match module.launch("store_one", cfg, &crate::args![buf]) {
            Ok(()) => false,
            Err(e) if e.chain().any(|c| c.is::<InputModified>()) => true,
            Err(e) => panic!("{e:#}"),
        };
        for was in [true, false] {
            gpu.watch_inputs(was);
            let inside = gpu.unwatched(|| gpu.upload("inside", &[5u32]).unwrap());
            assert!(!caught(&inside), "an upload inside is not watched (watching was {was})");
            let after = gpu.upload("after", &[5u32]).unwrap();
            assert_eq!(caught(&after), was, "watching is as it was before");
            // resume_unwind: a panic without the panic hook's message in the test's output.
            let unwound = || gpu.unwatched(|| std::panic::resume_unwind(Box::new("an upload's panic")));
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(unwound));
            assert!(panicked.is_err());
            let after_panic = gpu.upload("after panic", &[5u32]).unwrap();
            assert_eq!(caught(&after_panic), was, "watching is as it was before, after a panic too");
        }
    }

    /// On a GPU (passes vacuously without one): the comparison on the device
    /// finds the first changed byte wherever it is (a 32-bit word, the bytes
    /// past the last word), and an input written by a kernel is named.
    #[test]
    fn on_a_gpu_the_device_comparison_finds_the_first_change() {
        let gpu = match Gpu::cuda(Duration::from_secs(20)) {
            Ok(gpu) => gpu,
            Err(e) => return eprintln!("no GPU, skipped: {e}"),
        };
        let b = gpu.backend();
        let len = (64 << 20) + 3;
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        // The test itself changes `y` below: x and y are not watched inputs.
        let (x, y) = gpu.unwatched(|| (gpu.upload("x", &data).unwrap(), gpu.upload("y", &data).unwrap()));
        let start = Instant::now();
        assert_eq!(b.first_difference(x.ptr(), y.ptr(), len).unwrap(), None);
        eprintln!("comparing {} MB on the device: {:?}", len >> 20, start.elapsed());
        for at in [len - 1, len - 4, 40_000_001, 5, 0] {
            b.fill(y.ptr() + at as u64, 0xEE, 1).unwrap();
            assert_eq!(b.first_difference(x.ptr(), y.ptr(), len).unwrap(), Some(at), "changed at {at}");
        }
        let module = gpu.load(ONE_POINTER).unwrap();
        let input = gpu.upload("in", &vec![7u32; 1 << 20]).unwrap();
        let inside = Arg::Ptr(input.ptr() + 4 * 777_777);
        let e = module.launch("store_one", LaunchConfig::linear(1, 1), &[inside]).unwrap_err();
        let changed = e.chain().find_map(|c| c.downcast_ref::<InputModified>()).unwrap_or_else(|| panic!("{e:#}"));
        assert_eq!((changed.index, changed.uploaded.as_str(), changed.found.as_str()), (777_777, "7", "1"));
        let out = gpu.zeros::<u32>("out", 1).unwrap();
        module.launch("store_one", LaunchConfig::linear(1, 1), &crate::args![&out]).unwrap();
    }

    /// The simulator, described as another backend: inputs get device copies,
    /// compared by `Backend::first_difference`, as on a GPU.
    struct DeviceCopies(crate::backend::sim::SimBackend, DeviceInfo);

    impl Backend for DeviceCopies {
        fn info(&self) -> &DeviceInfo {
            &self.1
        }
        fn load_module(&self, ptx: &str) -> Result<ModuleId, BackendError> {
            self.0.load_module(ptx)
        }
        fn has_kernel(&self, m: ModuleId, name: &str) -> Result<bool, BackendError> {
            self.0.has_kernel(m, name)
        }
        fn alloc(&self, bytes: usize) -> Result<DevPtr, BackendError> {
            self.0.alloc(bytes)
        }
        fn free(&self, ptr: DevPtr) {
            self.0.free(ptr)
        }
        fn write(&self, dst: DevPtr, src: &[u8]) -> Result<(), BackendError> {
            self.0.write(dst, src)
        }
        fn read(&self, src: DevPtr, dst: &mut [u8]) -> Result<(), BackendError> {
            self.0.read(src, dst)
        }
        fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> Result<(), BackendError> {
            self.0.fill(dst, byte, len)
        }
        fn write_symbol(&self, m: ModuleId, name: &str, bytes: &[u8]) -> Result<(), BackendError> {
            self.0.write_symbol(m, name, bytes)
        }
        fn launch(&self, m: ModuleId, k: &str, cfg: &LaunchConfig, args: &[Arg]) -> Result<(), BackendError> {
            self.0.launch(m, k, cfg, args)
        }
        fn synchronize(&self, timeout: Duration) -> Result<(), BackendError> {
            self.0.synchronize(timeout)
        }
        fn time_ms(&self, _: &mut dyn FnMut() -> Result<(), BackendError>, _: Duration) -> Result<f32, BackendError> {
            Err(BackendError::Unsupported("timing", "test"))
        }
    }

    #[test]
    fn a_gpu_can_do_what_its_backend_can() {
        assert_eq!(Gpu::simulator().capabilities(), Capabilities::SIM);
        // A backend that does not say is taken for the one it names itself after: none here.
        let sim = crate::backend::sim::SimBackend::new();
        let info = DeviceInfo { backend: "device-copies".into(), ..sim.info().clone() };
        assert_eq!(Gpu::new(Box::new(DeviceCopies(sim, info)), Duration::MAX).capabilities(), Capabilities::NONE);
    }

    #[test]
    fn a_large_input_is_kept_and_compared_on_the_device() {
        let sim = crate::backend::sim::SimBackend::new();
        let info = DeviceInfo { backend: "device-copies".into(), ..sim.info().clone() };
        let gpu = Gpu::new(Box::new(DeviceCopies(sim, info)), Duration::MAX);
        let module = gpu.load(ONE_POINTER).unwrap();
        let values: Vec<f32> = (0..100_000).map(|i| i as f32 * 0.25).collect();
        let input = gpu.upload("M", &values).unwrap();
        let inner = |k: u64| [Arg::Ptr(input.ptr() + 4 * k)];
        assert!(matches!(gpu.inner.inputs.lock().unwrap()[0].pristine, Pristine::Device(_)));
        let e = module.launch("store_one", LaunchConfig::linear(1, 1), &inner(99_999)).unwrap_err();
        let changed = e.chain().find_map(|c| c.downcast_ref::<InputModified>()).unwrap_or_else(|| panic!("{e:#}"));
        // store_one stores the integer 1: as a float, its bits.
        let found = f32::from_bits(1).to_string();
        assert_eq!((changed.index, changed.uploaded.as_str(), changed.found.as_str()), (99_999, "24999.75", &*found));
        assert_eq!(changed.argument, "", "the kernel got a pointer into `M`, not `M`");
        assert_eq!(input.read().unwrap(), values, "restored from the device copy");
        drop(input);
        assert!(gpu.inner.inputs.lock().unwrap().is_empty());
    }

    #[test]
    fn elements_are_shown_as_their_type_prints_them() {
        assert_eq!(show("f32", &0.5f32.to_le_bytes()), "0.5");
        assert_eq!(show("u8", b"A"), "65 ('A')");
        assert_eq!(show("i32", &(-3i32).to_le_bytes()), "-3");
        assert_eq!(show("[u8; 3]", &[1, 2, 255]), "01 02 ff");
    }

    #[test]
    fn blocks_that_cannot_fit_are_explained_before_the_driver_refuses_them() {
        let gpu = Gpu::simulator();
        let module = gpu.load(ONE_POINTER).unwrap();
        let refusal = |cfg: LaunchConfig| {
            let e = module.launch("bounded", cfg, &[]).unwrap_err();
            match e.downcast_ref::<BackendError>() {
                Some(BackendError::LaunchFailed(why)) => why.clone(),
                _ => panic!("not a launch failure: {e:#}"),
            }
        };
        let why = refusal(LaunchConfig::linear(1, 64));
        assert!(
            why.contains("at most 32 threads per block (`__launch_bounds__`), but the grader launches 64"),
            "{why}"
        );
        let limit = gpu.info().max_shared_bytes_per_block;
        let why = refusal(LaunchConfig::linear(1, 32).with_shared(limit));
        assert!(
            why.contains(&format!("({} of fixed-size `__shared__` arrays + {limit} given at launch)", 40000)),
            "{why}"
        );
        module.launch("bounded", LaunchConfig::linear(1, 32), &[]).unwrap();
    }
}
