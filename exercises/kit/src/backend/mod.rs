//! The backend seam: everything exercise code may ask of a GPU.
//!
//! Exercise crates never touch cudarc. They talk to [`crate::Gpu`], which wraps a
//! `dyn Backend`. Two implementations exist or are planned: [`cuda`] (a real GPU
//! through the driver API) and a PTX simulator (`ptx-sim`) for machines without one.
//! The trait is deliberately byte-level and object safe so that a simulator can
//! implement it without knowing Rust types.

/// Inside `impl Backend for` a wrapper of `self.inner`: the methods it does not
/// watch (Locked holds no lock for them, Traced does not record them), passed on.
macro_rules! pass_on_unwatched {
    () => {
        fn info(&self) -> &DeviceInfo {
            self.inner.info()
        }
        fn capabilities(&self) -> Capabilities {
            self.inner.capabilities()
        }
        fn abandon(&self, why: &str) {
            self.inner.abandon(why)
        }
        fn lost(&self) -> Option<String> {
            self.inner.lost()
        }
        fn protect(&self, ptr: DevPtr, len: usize, buffer: &str, before: bool) -> BResult<()> {
            self.inner.protect(ptr, len, buffer, before)
        }
        fn take_profiles(&self) -> Vec<crate::profile::MemoryProfile> {
            self.inner.take_profiles()
        }
        fn kernel_resources(&self, module: ModuleId, kernel: &str) -> BResult<Option<(u32, u32)>> {
            self.inner.kernel_resources(module, kernel)
        }
        fn touched(&self, ptr: DevPtr, len: usize) -> BResult<Option<Vec<std::ops::Range<usize>>>> {
            self.inner.touched(ptr, len)
        }
        fn touched_by_kernels(&self, ptr: DevPtr, len: usize) -> BResult<Option<Vec<std::ops::Range<usize>>>> {
            self.inner.touched_by_kernels(ptr, len)
        }
    };
}

/// The opening of the grader's hand-written kernels ([`compare`], [`gather`]):
/// PTX ISA 7.0 for sm_75 on, an entry `$name` of four 64-bit parameters loaded
/// into `%rd1`..`%rd4`, and `%rd7`, the thread's index in the grid (`%r1..3`
/// and `%rd5..6` on the way). `$regs` declares the registers.
macro_rules! hand_written_entry {
    ($name:literal, $regs:literal, $p1:literal, $p2:literal, $p3:literal, $p4:literal) => {
        concat!(
            ".version 7.0\n.target sm_75\n.address_size 64\n\n.visible .entry ",
            $name,
            "(\n",
            "\t.param .u64 ",
            $p1,
            ",\n\t.param .u64 ",
            $p2,
            ",\n\t.param .u64 ",
            $p3,
            ",\n\t.param .u64 ",
            $p4,
            "\n)\n{\n",
            $regs,
            "\n",
            "\tld.param.u64 %rd1, [",
            $p1,
            "];\n\tld.param.u64 %rd2, [",
            $p2,
            "];\n",
            "\tld.param.u64 %rd3, [",
            $p3,
            "];\n\tld.param.u64 %rd4, [",
            $p4,
            "];\n",
            "\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n",
            "\tmul.wide.u32 %rd5, %r1, %r2;\n\tcvt.u64.u32 %rd6, %r3;\n\tadd.s64 %rd7, %rd5, %rd6;\n",
        )
    };
}

mod caps;
pub mod compare;
pub mod cuda;
pub mod gate;
pub mod gather;
pub mod locked;
pub mod shape;
pub mod sim;
pub mod traced;

use std::time::Duration;

pub use caps::Capabilities;
/// What fills a generated buffer ([`Backend::write_generated`]).
pub use ptx_sim::Filler;

/// A device address as the kernel sees it (a `T*` parameter).
pub type DevPtr = u64;

/// A compiled module loaded on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModuleId(pub u32);

/// One kernel parameter, by value, exactly as the PTX `.param` expects it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    Ptr(DevPtr),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
}

impl Arg {
    /// Little-endian bytes of the value, as laid out in the parameter buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        match *self {
            Arg::Ptr(v) | Arg::U64(v) => v.to_le_bytes().to_vec(),
            Arg::I64(v) => v.to_le_bytes().to_vec(),
            Arg::I32(v) => v.to_le_bytes().to_vec(),
            Arg::U32(v) => v.to_le_bytes().to_vec(),
            Arg::F32(v) => v.to_le_bytes().to_vec(),
            Arg::F64(v) => v.to_le_bytes().to_vec(),
        }
    }
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A 1D launch.
    pub fn linear(blocks: u32, threads: u32) -> Self {
        Self { grid: (blocks, 1, 1), block: (threads, 1, 1), shared_bytes: 0 }
    }
    /// A 2D launch.
    pub fn grid2d(grid: (u32, u32), block: (u32, u32)) -> Self {
        Self { grid: (grid.0, grid.1, 1), block: (block.0, block.1, 1), shared_bytes: 0 }
    }
    /// The same launch with `bytes` of dynamic (`extern __shared__`) memory.
    pub fn with_shared(mut self, bytes: u32) -> Self {
        self.shared_bytes = bytes;
        self
    }
    pub fn threads_per_block(&self) -> u32 {
        self.block.0 * self.block.1 * self.block.2
    }
}

/// What a grade report needs to say about the machine.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeviceInfo {
    /// `"cuda"` or `"sim"`: for display and reports. What the backend can do
    /// is [`Backend::capabilities`].
    pub backend: String,
    pub name: String,
    /// (major, minor), e.g. (9, 0) for an H100.
    pub compute_capability: (u32, u32),
    /// e.g. "13.0"; `None` where there is no driver (the simulator).
    pub driver_version: Option<String>,
    pub multiprocessors: u32,
    pub l2_cache_bytes: u64,
    pub global_memory_bytes: u64,
    pub max_threads_per_block: u32,
    pub max_shared_bytes_per_block: u32,
    /// Peak DRAM bandwidth in GB/s from the memory clock and bus width, where
    /// the driver tells them: how calibrations of other GPU models are ranked
    /// by nearness (`grader calibrate`).
    #[serde(default)]
    pub peak_memory_gbps: Option<u32>,
}

/// What every backend says when `write_symbol` is given more bytes than the
/// variable holds (a prefix is written as asked; more is refused).
pub(crate) fn symbol_too_small(name: &str, size: usize, given: usize) -> BackendError {
    BackendError::Other(format!(
        "`{name}` holds {size} bytes, fewer than the {given} bytes given: is it declared with the type and \
         length the exercise says?"
    ))
}

/// Errors a backend reports, classified so that a verdict can name the cause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    #[error("no GPU available: {0}")]
    NoDevice(String),
    #[error("the PTX could not be loaded: {0}")]
    LoadFailed(String),
    #[error(
        "the kernel `{0}` is not in the compiled file (is it spelled right and declared `extern \"C\" __global__`?)"
    )]
    MissingKernel(String),
    #[error("no `__constant__` or `__device__` variable named `{0}` in the compiled file")]
    MissingSymbol(String),
    #[error("the launch could not start: {0}")]
    LaunchFailed(String),
    #[error(
        "the kernel accessed memory it does not own (illegal address): check every index against the array's length"
    )]
    IllegalAddress,
    #[error("the kernel crashed: {0}")]
    Crashed(String),
    /// The kernel did not finish within the limit (a wall-clock time on a GPU,
    /// an instruction count on the simulator), described for the student.
    #[error("the kernel did not finish within {0} (an endless loop? a barrier some threads never reach?)")]
    Timeout(String),
    #[error("the GPU context was lost earlier in this run ({0}); nothing more can run on it")]
    ContextLost(String),
    #[error("data race on shared memory: {0}")]
    SharedRace(String),
    /// Blocks of one launch touch the same global word with nothing ordering
    /// them (found by the simulator, whatever order its blocks ran in).
    #[error("data race between blocks on global memory: {0}")]
    GlobalRace(String),
    /// A kernel read a buffer's guard zone (found by the simulator, which a GPU
    /// would let pass): the message names the line, thread and buffer.
    #[error("out-of-bounds read: {0}")]
    OutOfBoundsRead(String),
    /// A kernel wrote a buffer's guard zone, found as it happened (the simulator).
    #[error("out-of-bounds write: {0}")]
    OutOfBoundsWrite(String),
    /// A read of shared memory that no thread of the block wrote in the launch.
    #[error("uninitialised shared-memory read: {0}")]
    UninitialisedRead(String),
    /// A `__syncthreads()` (or warp-synchronous instruction) that not all threads reach.
    #[error("barrier divergence: {0}")]
    BarrierDivergence(String),
    /// A warp-synchronous call (shuffle, vote, match, reduce, `__syncwarp`) by
    /// a lane outside its member mask, or whose mask names lanes that never
    /// make the call (found by the simulator; compute-sanitizer's synccheck).
    #[error("invalid warp-synchronous call: {0}")]
    WarpMask(String),
    /// The kernel uses an instruction the simulator cannot run (named): the
    /// simulator has no verdict on it, and a GPU's verdict stands.
    #[error("the simulator cannot run {0}")]
    NotSimulated(String),
    #[error("out of device memory: {0}")]
    OutOfMemory(String),
    #[error("{0} is not supported by the {1} backend")]
    Unsupported(&'static str, &'static str),
    #[error("{0}")]
    Other(String),
}

impl BackendError {
    /// True when nothing more can run in this process after this error.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            BackendError::IllegalAddress
                | BackendError::Crashed(_)
                | BackendError::Timeout(_)
                | BackendError::ContextLost(_)
        )
    }
}

pub type BResult<T> = Result<T, BackendError>;

/// A place kernels run. All methods take `&self`: backends use interior
/// mutability so one `Gpu` can be shared by the checks of a run.
pub trait Backend: Send + Sync {
    fn info(&self) -> &DeviceInfo;

    /// What this backend can do. By default, what the backend it names itself
    /// after can ([`Capabilities::of_named`]): a stand-in that reports itself
    /// as `"cuda"` (a test's wall-clock device, say) is treated as one, as it
    /// was when callers compared names. The kit's backends say it themselves.
    fn capabilities(&self) -> Capabilities {
        Capabilities::of_named(&self.info().backend)
    }

    /// Loads PTX text. Function and symbol lookups happen at launch time.
    fn load_module(&self, ptx: &str) -> BResult<ModuleId>;
    /// Whether `module` defines an entry (kernel) called `name`.
    fn has_kernel(&self, module: ModuleId, name: &str) -> BResult<bool>;

    fn alloc(&self, bytes: usize) -> BResult<DevPtr>;
    fn free(&self, ptr: DevPtr);
    fn write(&self, dst: DevPtr, src: &[u8]) -> BResult<()>;
    fn read(&self, src: DevPtr, dst: &mut [u8]) -> BResult<()>;
    fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> BResult<()>;
    /// Makes the `len` bytes at `dst` hold what `fill` writes (it is given
    /// the offset from `dst` of the bytes it fills, and must give the same
    /// bytes for the same offset): an input too large to build on the host
    /// for a launch that reads little of it. Here it is built whole and
    /// written; the simulator fills each part when first touched
    /// (`ptx_sim::Simulator::fill_lazily`).
    fn write_generated(&self, dst: DevPtr, len: usize, fill: Filler) -> BResult<()> {
        let mut bytes = vec![0u8; len];
        fill(0, &mut bytes);
        self.write(dst, &bytes)
    }
    /// The stretches (offsets from `ptr`) of the `len` bytes of a buffer
    /// made by [`Backend::write_generated`] that launches or the host have
    /// touched: the simulator knows; `None` where anything may have been (a GPU).
    fn touched(&self, _ptr: DevPtr, _len: usize) -> BResult<Option<Vec<std::ops::Range<usize>>>> {
        Ok(None)
    }
    /// [`Backend::touched`] byte for byte, by launches alone (not the host):
    /// which elements of a generated input the launches read.
    fn touched_by_kernels(&self, _ptr: DevPtr, _len: usize) -> BResult<Option<Vec<std::ops::Range<usize>>>> {
        Ok(None)
    }
    /// Copies `bytes` from `src` to `dst` (both on the device; no overlap).
    fn copy(&self, dst: DevPtr, src: DevPtr, bytes: usize) -> BResult<()> {
        let mut staged = vec![0u8; bytes];
        self.read(src, &mut staged)?;
        self.write(dst, &staged)
    }
    /// The offset of the first byte at which the `bytes` bytes at `a` and at
    /// `b` (both on the device) differ, or `None` where they are equal: how an
    /// input is compared with its uploaded copy after a launch. Here both are
    /// read to the host in pieces (the simulator's memory is the host's); a GPU
    /// compares on the device and reads back one word.
    fn first_difference(&self, a: DevPtr, b: DevPtr, bytes: usize) -> BResult<Option<usize>> {
        first_difference_on_host(self, a, b, bytes)
    }
    /// The 32-bit words of the buffer at `src` at `indices` (word indices,
    /// each within the buffer). Here each is read alone; a GPU gathers them
    /// on the device and reads them back at once ([`gather`]).
    fn gather_words(&self, src: DevPtr, indices: &[u64]) -> BResult<Vec<u32>> {
        indices
            .iter()
            .map(|&i| {
                let mut word = [0u8; 4];
                self.read(src + i * 4, &mut word)?;
                Ok(u32::from_le_bytes(word))
            })
            .collect()
    }
    /// Writes a module-scope `__constant__` (or `__device__`) variable by name.
    fn write_symbol(&self, module: ModuleId, name: &str, bytes: &[u8]) -> BResult<()>;

    /// Starts a kernel. May return before it finishes (a real GPU is asynchronous).
    fn launch(&self, module: ModuleId, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> BResult<()>;
    /// Waits for all launched work, giving up after `timeout`.
    fn synchronize(&self, timeout: Duration) -> BResult<()>;
    /// The caller stopped waiting for work that may still be running, for
    /// `why`: nothing more may run here, and later calls say why.
    fn abandon(&self, _why: &str) {}
    /// Why nothing more can run here (a fatal error earlier), if so: a check
    /// that starts after that is `not-run`, whatever it then fails with.
    fn lost(&self) -> Option<String> {
        None
    }

    /// Times `work` (which launches kernels) with device events, in milliseconds.
    /// Backends without real timing return `Unsupported`.
    fn time_ms(&self, work: &mut dyn FnMut() -> BResult<()>, timeout: Duration) -> BResult<f32>;

    /// Marks `len` bytes at `ptr` (a guard zone before or after the buffer `buffer`)
    /// as off limits to kernels; host reads and writes stay allowed. A backend that
    /// can watch kernel accesses (the simulator) then reports an out-of-bounds read
    /// or write as it happens; others ignore it (the guard check after a launch
    /// still finds writes).
    fn protect(&self, _ptr: DevPtr, _len: usize, _buffer: &str, _before: bool) -> BResult<()> {
        Ok(())
    }

    /// The buffer the kernel sees at `ptr` holds rows of an image or a matrix
    /// (`None`: no longer, it was freed): a backend that reports out-of-bounds
    /// accesses as they happen (the simulator) names the row and column an
    /// index stands for. Others ignore it.
    fn set_shape(&self, _ptr: DevPtr, _shape: Option<shape::Shape2d>) {}

    /// Memory behaviour of the launches since the last call; empty where the
    /// backend cannot see it (a real GPU).
    fn take_profiles(&self) -> Vec<crate::profile::MemoryProfile> {
        Vec::new()
    }

    /// Registers per thread and static shared bytes per block that the driver
    /// gives `kernel`: what sets occupancy. `None` where the backend cannot tell.
    fn kernel_resources(&self, _module: ModuleId, _kernel: &str) -> BResult<Option<(u32, u32)>> {
        Ok(None)
    }
}

/// [`Backend::first_difference`] by reading both ranges to the host, a piece at a time.
pub fn first_difference_on_host<B: Backend + ?Sized>(
    backend: &B,
    a: DevPtr,
    b: DevPtr,
    bytes: usize,
) -> BResult<Option<usize>> {
    const PIECE: usize = 1 << 20;
    let (mut x, mut y) = (vec![0u8; PIECE.min(bytes)], vec![0u8; PIECE.min(bytes)]);
    let mut at = 0;
    while at < bytes {
        let n = PIECE.min(bytes - at);
        backend.read(a + at as u64, &mut x[..n])?;
        backend.read(b + at as u64, &mut y[..n])?;
        if let Some(i) = x[..n].iter().zip(&y[..n]).position(|(p, q)| p != q) {
            return Ok(Some(at + i));
        }
        at += n;
    }
    Ok(None)
}
