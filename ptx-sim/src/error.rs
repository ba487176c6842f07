//! Everything that can go wrong, from parsing to a kernel's memory fault.

/// A thread or block coordinate, `(x, y, z)`.
pub type Dim3 = (u32, u32, u32);

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    #[error("PTX parse error at line {line}: {msg}")]
    Parse { line: usize, msg: String },

    /// An instruction (or a form of one) the simulator does not implement. Reported
    /// instead of guessing, so that a result is never silently wrong.
    #[error("unsupported PTX instruction `{instruction}` at line {line}")]
    Unsupported { instruction: String, line: usize },

    #[error("no kernel (.entry) named `{0}` in the module")]
    MissingKernel(String),

    #[error("no module-scope variable named `{0}` in the module")]
    MissingSymbol(String),

    #[error("no module with id {0}")]
    MissingModule(u32),

    #[error("bad kernel parameters: {0}")]
    BadParams(String),

    #[error("illegal {space} address {addr:#x} in kernel `{kernel}` at PTX line {ptx_line}{}, thread {thread:?} of block {block:?}", src_suffix(location))]
    IllegalAddress {
        addr: u64,
        space: String,
        ptx_line: usize,
        /// `file:line` from `.loc` when the PTX has line info.
        location: Option<String>,
        kernel: String,
        thread: Dim3,
        block: Dim3,
    },

    #[error("misaligned {space} address {addr:#x} for a {size}-byte access in kernel `{kernel}` at PTX line {ptx_line}{}, thread {thread:?} of block {block:?}", src_suffix(location))]
    MisalignedAddress {
        addr: u64,
        size: u32,
        space: String,
        ptx_line: usize,
        location: Option<String>,
        kernel: String,
        thread: Dim3,
        block: Dim3,
    },

    /// The launch ran more warp instructions than `SimConfig::max_steps_per_launch`:
    /// the simulator's equivalent of a kernel that never finishes.
    #[error("kernel `{kernel}` exceeded the step limit of {steps} warp instructions (an endless loop?)")]
    StepLimit { steps: u64, kernel: String },

    /// A `bar.sync` (`__syncthreads()`) that not all live threads of a block reach,
    /// or a warp-synchronous instruction whose member lanes never meet. A GPU would
    /// hang or behave undefinedly.
    #[error(
        "barrier divergence in kernel `{kernel}` at PTX line {ptx_line}{}, block {block:?}: {detail}",
        src_suffix(location)
    )]
    BarrierDivergence { ptx_line: usize, location: Option<String>, kernel: String, block: Dim3, detail: String },

    #[error("kernel `{kernel}` needs {requested} bytes of shared memory per block ({static_bytes} static + {dynamic_bytes} dynamic); the limit is {limit}")]
    SharedMemoryTooLarge { kernel: String, requested: u64, static_bytes: u32, dynamic_bytes: u32, limit: u32 },

    #[error("invalid launch: {0}")]
    InvalidLaunch(String),

    /// The kernel executed `trap` (for example a failed device-side `assert`).
    #[error(
        "kernel `{kernel}` executed `trap` at PTX line {ptx_line}{}, thread {thread:?} of block {block:?}",
        src_suffix(location)
    )]
    Trap { ptx_line: usize, location: Option<String>, kernel: String, thread: Dim3, block: Dim3 },

    #[error("out of simulated device memory: {0}")]
    OutOfMemory(String),

    /// A host-side `read`/`write`/`fill` outside any live allocation.
    #[error("host access of {len} bytes at {addr:#x} is outside any allocation")]
    HostAccess { addr: u64, len: usize },
}

fn src_suffix(s: &Option<String>) -> String {
    match s {
        Some(s) => format!(" ({s})"),
        None => String::new(),
    }
}

pub type SimResult<T> = Result<T, SimError>;
