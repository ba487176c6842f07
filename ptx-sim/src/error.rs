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

    /// The caller flipped `SimConfig::cancel`: it no longer needs the answer.
    #[error("the simulation of `{kernel}` was stopped: its answer was no longer needed")]
    Cancelled { kernel: String },

    /// A `bar.sync` (`__syncthreads()`) that not all live threads of a block reach,
    /// or a warp-synchronous instruction whose member lanes never meet. A GPU would
    /// hang or behave undefinedly.
    #[error(
        "barrier divergence in kernel `{kernel}` at PTX line {ptx_line}{}, block {block:?}: {detail}",
        src_suffix(location)
    )]
    BarrierDivergence { ptx_line: usize, location: Option<String>, kernel: String, block: Dim3, detail: String },

    /// A warp-synchronous instruction (`__shfl*_sync`, `__ballot_sync`,
    /// `__any/__all_sync`, `__match_*_sync`, `__reduce_*_sync`, `__syncwarp`)
    /// executed by a lane its own member mask does not name, or whose mask
    /// names lanes that never arrive: undefined on a GPU (compute-sanitizer's
    /// synccheck reports it), whatever the numbers.
    #[error(
        "invalid warp-synchronous call in kernel `{kernel}` at PTX line {ptx_line}{}, thread {thread:?} of block {block:?}: {detail}",
        src_suffix(location)
    )]
    WarpMask { ptx_line: usize, location: Option<String>, kernel: String, thread: Dim3, block: Dim3, detail: String },

    /// Calls of recursive functions nested past `exec::calls::MAX_CALL_DEPTH`
    /// (or past what the block's frames may hold together).
    #[error(
        "stack overflow in kernel `{kernel}` at PTX line {ptx_line}{}, thread {thread:?} of block {block:?}: calls of `{function}` nested {depth} deep fill the stack",
        src_suffix(location)
    )]
    StackOverflow {
        depth: usize,
        function: String,
        ptx_line: usize,
        location: Option<String>,
        kernel: String,
        thread: Dim3,
        block: Dim3,
    },

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

    /// A kernel access to a region the host marked no-access
    /// ([`crate::Simulator::protect`]): a buffer's guard zone, reached by an index
    /// past its end (or before its start) that a GPU would silently allow.
    #[error(
        "out-of-bounds {} of {size} byte(s) in kernel `{kernel}` at PTX line {ptx_line}{}, thread {thread:?} of block {block:?}: {distance} byte(s) {} `{zone}`",
        if *write { "write" } else { "read" },
        src_suffix(location),
        if *before { "before the start of" } else { "past the end of" }
    )]
    OutOfBounds {
        write: bool,
        addr: u64,
        size: u32,
        /// The name the host gave the protected region (a buffer's name).
        zone: String,
        /// The region lies before the buffer (else after it).
        before: bool,
        /// Bytes from the buffer's edge to the access: 0 is the first byte past the
        /// end; for `before`, 1 is the last byte before the start.
        distance: u64,
        ptx_line: usize,
        location: Option<String>,
        kernel: String,
        thread: Dim3,
        block: Dim3,
    },

    /// An access to shared memory outside every `__shared__` variable: in the
    /// guard gap before or after `var` (see `shared_layout`), reached by an
    /// index past its end (or before its start) that a GPU would allow.
    #[error(
        "out-of-bounds shared-memory {} of {size} byte(s) in kernel `{kernel}` at PTX line {ptx_line}{}, thread {thread:?} of block {block:?}: {distance} byte(s) {} `{var}` ({var_bytes} bytes)",
        if *write { "write" } else { "read" },
        src_suffix(location),
        if *before { "before the start of" } else { "past the end of" }
    )]
    SharedOutOfBounds {
        write: bool,
        size: u32,
        /// The variable's name in the CUDA source.
        var: String,
        var_bytes: u32,
        /// The variable is the dynamic area (`extern __shared__`).
        dynamic: bool,
        before: bool,
        /// Bytes from the variable's edge to the access, as for `OutOfBounds`.
        distance: u64,
        ptx_line: usize,
        location: Option<String>,
        kernel: String,
        thread: Dim3,
        block: Dim3,
    },

    /// A read of shared memory no thread of the block has written in this launch:
    /// its value is whatever an earlier kernel left (the simulator poisons it).
    #[error(
        "uninitialised shared-memory read of {size} byte(s) at offset {offset} in kernel `{kernel}` at PTX line {ptx_line}{}, thread {thread:?} of block {block:?}",
        src_suffix(location)
    )]
    UninitialisedRead {
        offset: u32,
        size: u32,
        ptx_line: usize,
        location: Option<String>,
        kernel: String,
        thread: Dim3,
        block: Dim3,
    },

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
