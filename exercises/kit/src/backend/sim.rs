//! The simulator backend: runs the PTX on the CPU with `ptx-sim`, for students
//! without an NVIDIA GPU and for CI. It has no real timing (performance checks
//! are skipped), but it sees what a GPU hides: it fails a kernel whose threads
//! race on shared memory, and it profiles every launch's memory accesses.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ptx_sim::{BarrierAfterExit, ParamValue, ShownGpu, SimConfig, SimError, Simulator, Stats};

use super::shape::{self, Shape2d};
use super::{Arg, BResult, Backend, BackendError, Capabilities, DevPtr, DeviceInfo, Filler, LaunchConfig, ModuleId};
use crate::profile::MemoryProfile;

/// Warp instructions one launch may execute before it counts as stuck: about
/// 10 s of CPU, some 15x what the largest simulated reference check needs.
pub const MAX_STEPS_PER_LAUNCH: u64 = 50_000_000;

pub struct SimBackend {
    sim: Mutex<Simulator>,
    info: DeviceInfo,
    profiles: Mutex<Vec<MemoryProfile>>,
    /// Print the kernel's `printf` output; off for a second run of the same
    /// checks (the grader's sanitizer pass), where the GPU printed it already.
    echo_printf: bool,
    /// Every launch's full statistics (per instruction, with source lines), kept
    /// only for a private measuring instance (see `crate::measure`).
    recorded: Option<StatsLog>,
    /// Buffers that hold rows ([`Backend::set_shape`]): where each starts, and its shape.
    shapes: Mutex<Vec<(DevPtr, Shape2d)>>,
    /// Barriers released after threads of their block exited, the first of each kernel.
    barriers: BarrierLog,
}

/// Barriers that launches released after some threads of the block had
/// exited ([`SimBackend::barriers_after_exit`]).
pub type BarrierLog = Arc<Mutex<Vec<BarrierAfterExit>>>;

/// The name the simulator reports ([`DeviceInfo::backend`]).
pub const NAME: &str = "sim";

/// Where a recording simulator leaves the statistics of its launches.
pub type StatsLog = Arc<Mutex<Recorded>>;

/// What a recording simulator kept of its launches.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Every launch's statistics.
    pub stats: Vec<Stats>,
    /// Barriers released while threads of their block had exited, one per
    /// launch that had one ([`ptx_sim::LaunchReport::barrier_after_exit`]).
    pub barriers_after_exit: Vec<BarrierAfterExit>,
}

/// The SM count every simulator of this process shows kernels (`%nsmid`):
/// the grading GPU's once a CUDA backend opened ([`show_gpu`]), else the
/// calibrated models' (H100 and H200: [`ptx_sim::DEFAULT_GPU`]).
static SHOWN_MULTIPROCESSORS: AtomicU32 = AtomicU32::new(ptx_sim::DEFAULT_GPU.multiprocessors);

/// Makes the simulators made from now on show kernels `gpu`'s SM count, so
/// that a kernel replayed for its structure sees the GPU that times it.
pub fn show_gpu(gpu: &DeviceInfo) {
    if gpu.multiprocessors > 0 {
        SHOWN_MULTIPROCESSORS.store(gpu.multiprocessors, Ordering::Relaxed);
    }
}

/// The GPU a simulator made now shows its kernels.
pub fn shown_gpu() -> ShownGpu {
    ShownGpu { multiprocessors: SHOWN_MULTIPROCESSORS.load(Ordering::Relaxed), ..ptx_sim::DEFAULT_GPU }
}

impl SimBackend {
    pub fn new() -> Self {
        let cfg = SimConfig { max_steps_per_launch: MAX_STEPS_PER_LAUNCH, gpu: shown_gpu(), ..SimConfig::default() };
        let info = DeviceInfo {
            backend: NAME.into(),
            name: "ptx-sim (PTX interpreter on the CPU)".into(),
            compute_capability: (9, 0),
            driver_version: None,
            multiprocessors: 1,
            l2_cache_bytes: 4 << 20,
            global_memory_bytes: 4 << 30,
            max_threads_per_block: cfg.max_threads_per_block,
            max_shared_bytes_per_block: cfg.shared_mem_per_block,
            peak_memory_gbps: None,
        };
        Self {
            sim: Mutex::new(Simulator::new(cfg)),
            info,
            profiles: Mutex::default(),
            echo_printf: true,
            recorded: None,
            shapes: Mutex::default(),
            barriers: BarrierLog::default(),
        }
    }

    /// The same simulator, but the kernels' `printf` output is not printed.
    pub fn silent() -> Self {
        Self { echo_printf: false, ..Self::new() }
    }

    /// This simulator, stopping every launch early once `cancel` is flipped.
    pub fn cancellable(self, cancel: ptx_sim::CancelFlag) -> Self {
        self.sim().config_mut().cancel = Some(cancel);
        self
    }

    /// This simulator, running only `blocks` of every launch (linear indices,
    /// sorted): a measurement's sample of a grid too large to run whole
    /// ([`crate::measure::BlockSample`]).
    pub fn only_blocks(self, blocks: std::sync::Arc<[u64]>) -> Self {
        self.sim().config_mut().blocks = Some(blocks);
        self
    }

    /// A simulator that plays a GPU that got lucky: it does not look for races.
    /// Only for tests of the grader's sanitizer pass, which must catch them.
    pub fn lucky() -> Self {
        let mut lucky = Self::new();
        lucky.sim.get_mut().unwrap_or_else(|p| p.into_inner()).config_mut().detect_races = false;
        lucky.info.name = "ptx-sim without race detection (a GPU that got lucky; for tests)".into();
        lucky
    }

    /// A simulator that also keeps every launch's full statistics in the returned
    /// log, for measuring a kernel on a small input: it stops a launch after
    /// `max_steps` warp instructions and does not print the kernel's printf.
    pub fn recording(max_steps: u64) -> (Self, StatsLog) {
        let log = StatsLog::default();
        let mut backend = Self { recorded: Some(log.clone()), echo_printf: false, ..Self::new() };
        let cfg = SimConfig {
            max_steps_per_launch: max_steps,
            capture_printf: false,
            gpu: shown_gpu(),
            ..SimConfig::default()
        };
        backend.sim = Mutex::new(Simulator::new(cfg));
        (backend, log)
    }

    /// Where this simulator's launches leave their barriers released after
    /// threads of the block exited (the first of each kernel): the sanitizer
    /// pass reads it after replaying a case.
    pub fn barriers_after_exit(&self) -> BarrierLog {
        self.barriers.clone()
    }

    fn sim(&self) -> std::sync::MutexGuard<'_, Simulator> {
        self.sim.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A launch's error: an access out of bounds is told with the buffer's
    /// rows where the exercise gave them, and as a 2-D kernel's where the
    /// launch is 2-D.
    fn classify_launch(&self, e: SimError, cfg: &LaunchConfig) -> BackendError {
        let two_d = cfg.grid.1 > 1 || cfg.block.1 > 1 || cfg.grid.2 > 1 || cfg.block.2 > 1;
        let shapes = self.shapes.lock().unwrap();
        let rows = |edge: u64, before: bool| {
            shapes.iter().find_map(|&(p, s)| {
                let end = p + (s.width * s.height * s.element_bytes) as u64;
                (if before { p == edge } else { end == edge }).then_some(s)
            })
        };
        out_of_bounds(e, rows, two_d)
    }
}

/// The message of `SimError::OutOfBounds` (any other error: [`classify`]'s):
/// `rows` gives the buffer's rows from its edge (its first byte for an access
/// `before` it, else the byte after its last), if known; `two_d`: the launch
/// is 2-D (so is a buffer with rows).
fn out_of_bounds(e: SimError, rows: impl FnOnce(u64, bool) -> Option<Shape2d>, two_d: bool) -> BackendError {
    let SimError::OutOfBounds { write, addr, size, zone, before, distance, ptx_line, location, kernel, thread, block } =
        e
    else {
        return classify(e);
    };
    let edge = if before { addr.wrapping_add(distance) } else { addr.wrapping_sub(distance) };
    let shape = rows(edge, before);
    let access = GlobalAccess { write, size, before, distance, shape, two_d: two_d || shape.is_some() };
    let site = format!("`{kernel}` at {}, thread {thread:?} of block {block:?}", at(ptx_line, &location));
    global_out_of_bounds(&access, &zone, &site)
}

impl Default for SimBackend {
    fn default() -> Self {
        Self::new()
    }
}

/// Where in the student's code: `file.cu:line (PTX line N)`, the path
/// relative to the repository ([`relative_source`]).
fn at(ptx_line: usize, location: &Option<String>) -> String {
    match location {
        Some(s) => format!("{} (PTX line {ptx_line})", relative_source(s)),
        None => format!("PTX line {ptx_line}"),
    }
}

/// Whether a message of this backend names PTX line `line` (as this backend's `at` writes
/// it): how an exercise finds which of its measured instructions a race
/// report pairs.
pub fn names_ptx_line(text: &str, line: usize) -> bool {
    let needle = format!("PTX line {line}");
    text.match_indices(&needle).any(|(i, _)| !text[i + needle.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// A `.file` path (or `path:line`) as the student knows it, relative to the
/// repository. The grader names each file relative to the root when it
/// compiles it, and NVRTC prefixes that name with the folder it ran in, which
/// need not be today's folder (a PTX from the cache, a batch's worker): so
/// strip the current folder, or else everything before the first `exercises/`
/// or `reference/` folder of an absolute path.
pub fn relative_source(path: &str) -> &str {
    let cwd = std::env::current_dir().map(|d| format!("{}/", d.display())).unwrap_or_default();
    if let Some(rel) = path.strip_prefix(cwd.as_str()).filter(|_| !cwd.is_empty()) {
        return rel;
    }
    if path.starts_with('/') {
        for folder in ["/exercises/", "/reference/"] {
            if let Some(i) = path.find(folder) {
                return &path[i + 1..];
            }
        }
    }
    path
}

/// A simulator error's own text, its `file.cu:line` relative to the repository.
fn relative_text(e: &SimError) -> String {
    let text = e.to_string();
    let location = match e {
        SimError::IllegalAddress { location, .. }
        | SimError::MisalignedAddress { location, .. }
        | SimError::Trap { location, .. } => location,
        _ => &None,
    };
    match location {
        Some(l) => text.replace(l.as_str(), relative_source(l)),
        None => text,
    }
}

/// The student's `file.cu:line` of PTX line `line` (1-based): the last `.loc`
/// before it, with its `.file`; `None` without line info.
fn source_of(ptx: &str, line: usize) -> Option<String> {
    // NVRTC lists the `.file`s at the end of the module.
    let mut files = std::collections::HashMap::new();
    let mut last = None;
    for (i, text) in ptx.lines().enumerate() {
        let mut words = text.split_whitespace();
        match words.next() {
            Some(".file") => {
                let (Some(id), Some(path)) = (words.next(), words.next()) else { continue };
                files.insert(id.to_string(), path.trim_end_matches(',').trim_matches('"').to_string());
            }
            Some(".loc") if i < line => {
                let (Some(id), Some(l)) = (words.next(), words.next()) else { continue };
                last = Some((id.to_string(), l.trim_end_matches(',').to_string()));
            }
            _ => {}
        }
    }
    let (id, l) = last?;
    let path = files.get(&id)?;
    Some(format!("{}:{l}", relative_source(path)))
}

fn classify(e: SimError) -> BackendError {
    match e {
        SimError::MissingKernel(k) => BackendError::MissingKernel(k),
        SimError::MissingSymbol(s) => BackendError::MissingSymbol(s),
        SimError::StepLimit { steps, .. } => BackendError::Timeout(format!("{steps} simulated warp instructions")),
        e @ SimError::OutOfBounds { .. } => out_of_bounds(e, |_, _| None, false),
        SimError::SharedOutOfBounds {
            write,
            size,
            var,
            var_bytes,
            dynamic,
            before,
            distance,
            ptx_line,
            location,
            kernel,
            thread,
            block,
        } => {
            let verb = if write { "writes" } else { "reads" };
            let (what, fix) = if dynamic {
                (
                    format!("the dynamic shared memory `{var}` (the launch gives {var_bytes} bytes)"),
                    "keep every index inside the dynamic size the launch gives (the third <<<>>> argument)",
                )
            } else {
                // PTX declares arrays as bytes (`.b8 name[N]`): count in the access's size
                let elem = size.max(1);
                let elems = if var_bytes % elem == 0 {
                    format!(", {} element(s) of {elem} bytes", var_bytes / elem)
                } else {
                    String::new()
                };
                (
                    format!("the __shared__ array `{var}` ({var_bytes} bytes{elems})"),
                    "declare the array with as many elements as the threads index (a halo needs its extra \
                     elements), or test the index before the access",
                )
            };
            let text = format!(
                "`{kernel}` at {}, thread {thread:?} of block {block:?}, {} {what}: {fix}",
                at(ptx_line, &location),
                shape::how_far(verb, size, distance, before)
            );
            if write {
                BackendError::OutOfBoundsWrite(text)
            } else {
                BackendError::OutOfBoundsRead(text)
            }
        }
        SimError::UninitialisedRead { offset, size, ptx_line, location, kernel, thread, block } => {
            BackendError::UninitialisedRead(format!(
                "`{kernel}` at {}, thread {thread:?} of block {block:?}, reads {size} byte(s) of shared memory (offset \
                 {offset}) that no thread of the block wrote in this launch: make sure the loads fill every slot that \
                 is read (check their bounds and loop counts), with __syncthreads() between the loads and the reads",
                at(ptx_line, &location)
            ))
        }
        SimError::BarrierDivergence { ptx_line, location, kernel, block, detail } => BackendError::BarrierDivergence(
            format!("`{kernel}` at {}, block {block:?}: {detail}", at(ptx_line, &location)),
        ),
        SimError::WarpMask { ptx_line, location, kernel, thread, block, detail } => BackendError::WarpMask(format!(
            "`{kernel}` at {}, thread {thread:?} of block {block:?}: {detail}",
            at(ptx_line, &location)
        )),
        SimError::Unsupported { instruction, line } => {
            BackendError::NotSimulated(format!("`{instruction}` (PTX line {line})"))
        }
        e @ (SimError::IllegalAddress { .. } | SimError::MisalignedAddress { .. }) => {
            BackendError::Crashed(relative_text(&e))
        }
        e @ SimError::Trap { .. } => BackendError::Crashed(relative_text(&e)),
        SimError::StackOverflow { depth, function, ptx_line, location, kernel, thread, block } => {
            BackendError::Crashed(format!(
                "stack overflow: `{kernel}` at {}, thread {thread:?} of block {block:?}, calls `{function}` {depth} \
                 deep and fills the stack (a GPU's holds far fewer frames): does the recursion reach its base case \
                 for every input?",
                at(ptx_line, &location)
            ))
        }
        e @ (SimError::InvalidLaunch(_) | SimError::SharedMemoryTooLarge { .. } | SimError::BadParams(_)) => {
            BackendError::LaunchFailed(e.to_string())
        }
        e @ SimError::Parse { .. } => BackendError::LoadFailed(e.to_string()),
        SimError::OutOfMemory(m) => BackendError::OutOfMemory(m),
        e => BackendError::Other(e.to_string()),
    }
}

/// A global access into a buffer's guard zone, and what the launch tells of it.
struct GlobalAccess {
    write: bool,
    size: u32,
    before: bool,
    distance: u64,
    /// The buffer's rows, where the exercise said ([`Backend::set_shape`]).
    shape: Option<Shape2d>,
    /// The launch has a 2-D grid or block, or the buffer a 2-D shape.
    two_d: bool,
}

/// The message of a load or store into the guard zone of buffer `zone`, made
/// at `site` (kernel, line, thread): how far out, the row and column the
/// index stands for in a 2-D buffer, and what to change (2-D kernels get the
/// 2-D bounds test).
fn global_out_of_bounds(a: &GlobalAccess, zone: &str, site: &str) -> BackendError {
    let verb = if a.write { "writes" } else { "reads" };
    let place = a
        .shape
        .map(|s| format!(": {}", shape::place(zone, &s, shape::element_index(&s, a.distance, a.before))))
        .unwrap_or_default();
    let fix = match (a.write, a.two_d) {
        (true, true) => shape::WRITE_HINT_2D,
        (false, true) => shape::READ_HINT_2D,
        (true, false) => "check the bounds test of this store (e.g. `if (i < n)`)",
        (false, false) => {
            "guard the load with a bounds test (e.g. `if (i < n)`; for a halo, `if (i > 0)` / `if (i + 1 < n)`)"
        }
    };
    let text = format!(
        "{site}, {} the buffer `{zone}`{place}. {}{}",
        shape::how_far(verb, a.size, a.distance, a.before),
        fix[..1].to_uppercase(),
        &fix[1..]
    );
    if a.write {
        BackendError::OutOfBoundsWrite(text)
    } else {
        BackendError::OutOfBoundsRead(text)
    }
}

/// What a race within a block on shared memory says: the two threads and
/// lines, and for a plain read against another thread's atomic (in either
/// order), why that is one.
fn shared_race_text(kernel: &str, r: &ptx_sim::Race, pairs: usize) -> String {
    use ptx_sim::RaceKind::{ReadWrite, WriteRead};
    let (a, b) = (at(r.ptx_line_a, &r.source_a), at(r.ptx_line_b, &r.source_b));
    let (ta, tb, block, off) = (r.thread_a, r.thread_b, r.block, r.offset);
    let read_vs_atomic = (r.atomic_a && r.kind == WriteRead) || (r.atomic_b && r.kind == ReadWrite);
    if !read_vs_atomic {
        return format!(
            "{kernel}: threads {ta:?} and {tb:?} of block {block:?} touch the same shared-memory byte (offset {off}) \
             at {a} and {b} with no __syncthreads() between, and at least one of them writes ({pairs} such pair(s) \
             of instructions)"
        );
    }
    let (atomic, read) = if r.atomic_a { ((ta, &a), (tb, &b)) } else { ((tb, &b), (ta, &a)) };
    format!(
        "{kernel}: thread {:?} of block {block:?} reads plainly at {} a shared word (offset {off}) that thread {:?} \
         changes with an atomic at {}, with no __syncthreads() between: the value read depends on whether the \
         atomic came first. Put a __syncthreads() between the atomics and the reads, or, to update the word, do it \
         in one atomic (or an atomicCAS loop on the value it returns) ({pairs} such pair(s) of instructions)",
        read.0, read.1, atomic.0, atomic.1
    )
}

/// What a barrier that some threads of the block exited before says, in the
/// READMEs' words: the `return` and the `__syncthreads()` it skipped, by line.
pub fn barrier_after_exit_text(b: &BarrierAfterExit) -> String {
    let line = |source: &Option<String>, ptx: usize| match source {
        Some(s) => {
            let s = relative_source(s);
            match s.rsplit_once(':') {
                Some((_, l)) => format!("line {l} ({s}, PTX line {ptx})"),
                None => format!("{s} (PTX line {ptx})"),
            }
        }
        None => format!("PTX line {ptx}"),
    };
    format!(
        "{}: threads of block {:?} ({} of its {}, the first thread {:?}) return at {} before the __syncthreads() at \
         {}; every thread of the block must reach it. The PTX ISA leaves a barrier that some threads skip undefined \
         (a GPU happens to release it, so the numbers come out right). Let the threads with nothing left to do \
         reach the barrier and skip only the work after it (`if (inside) {{ ... }}` around that work) instead of \
         returning before it",
        b.kernel,
        b.block,
        b.exited,
        b.threads,
        b.thread,
        line(&b.exit_source, b.exit_ptx_line),
        line(&b.barrier_source, b.barrier_ptx_line)
    )
}

/// What a race between blocks says: the two lines, the two blocks, the
/// buffer, and what to use instead.
fn global_race_text(kernel: &str, r: &ptx_sim::GlobalRace, pairs: usize) -> String {
    use ptx_sim::RaceKind::*;
    let (a, b) = (at(r.ptx_line_a, &r.source_a), at(r.ptx_line_b, &r.source_b));
    let first = if r.atomic_a {
        "does an atomic on"
    } else if r.kind == ReadWrite {
        "reads"
    } else {
        "writes"
    };
    let second = match r.kind {
        _ if r.atomic_b => "does an atomic on",
        WriteRead => "reads",
        _ => "writes",
    };
    let same_line = r.source_a.is_some() && r.source_a == r.source_b;
    let what = if r.atomic_b || (r.atomic_a && r.kind == WriteRead) {
        "a plain read of a word other blocks change with atomics: the read and the atomic are two steps, and \
         another block's update between them is lost (`atomicExch(p, *p + x)`). Do the whole update in one \
         atomic (atomicAdd(p, x)), or loop with atomicCAS on the value it returns"
    } else if r.atomic_a {
        "a plain write after other blocks' atomics on the same word: make it an atomic too (atomicExch), or \
         leave it to a later kernel launch"
    } else if same_line || r.kind == WriteWrite {
        "blocks run at the same time on a GPU, so plain updates of one word from several blocks (`*p += x`) \
         overwrite each other: use an atomic (atomicAdd(p, x)), or give each block its own slot (p[blockIdx.x]) \
         and add the slots in a second pass (a second kernel launch, or the threadfence reduction)"
    } else {
        "blocks run at the same time on a GPU, so one block may read the word before or after the other writes \
         it: read it in a later kernel launch, or order the two as the threadfence reduction does (write, \
         __threadfence(), then an atomic ticket; only the block that draws the last ticket reads)"
    };
    let word = match &r.buffer {
        Some((name, off)) => format!("`{name}` (byte {off})"),
        None => format!("global memory at address {:#x}", r.addr),
    };
    format!(
        "{kernel}: block {:?} {first} {word} at {a}, and block {:?} {second} the same word at {b}, with nothing \
         ordering the two blocks: {what} ({} such pair(s) of instructions)",
        r.block_a, r.block_b, pairs
    )
}

fn param(a: &Arg) -> ParamValue {
    match *a {
        Arg::Ptr(v) | Arg::U64(v) => ParamValue::U64(v),
        Arg::I64(v) => ParamValue::I64(v),
        Arg::I32(v) => ParamValue::I32(v),
        Arg::U32(v) => ParamValue::U32(v),
        Arg::F32(v) => ParamValue::F32(v),
        Arg::F64(v) => ParamValue::F64(v),
    }
}

impl Backend for SimBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::SIM
    }

    fn load_module(&self, ptx: &str) -> BResult<ModuleId> {
        // Named by the student's line as well, where the PTX has line info.
        let at = |line: usize| match source_of(ptx, line) {
            Some(at) => format!("{at}, PTX line {line}"),
            None => format!("PTX line {line}"),
        };
        self.sim().load_module(ptx).map(|m| ModuleId(m.0)).map_err(|e| match e {
            SimError::Unsupported { instruction, line } => {
                BackendError::NotSimulated(format!("`{instruction}` ({})", at(line)))
            }
            // The compiler's PTX that the simulator cannot read (a predefined
            // name it does not know, say) is its blind spot, not the kernel's
            // fault: a GPU's driver judges it.
            SimError::Parse { line, msg } => BackendError::NotSimulated(format!("{msg} ({})", at(line))),
            e => classify(e),
        })
    }

    fn has_kernel(&self, module: ModuleId, name: &str) -> BResult<bool> {
        Ok(self.sim().has_kernel(ptx_sim::ModuleId(module.0), name))
    }

    fn alloc(&self, bytes: usize) -> BResult<DevPtr> {
        self.sim().alloc(bytes).map_err(classify)
    }

    fn free(&self, ptr: DevPtr) {
        self.sim().free(ptr)
    }

    fn write(&self, dst: DevPtr, src: &[u8]) -> BResult<()> {
        self.sim().write(dst, src).map_err(classify)
    }

    fn read(&self, src: DevPtr, dst: &mut [u8]) -> BResult<()> {
        self.sim().read(src, dst).map_err(classify)
    }

    fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> BResult<()> {
        self.sim().fill(dst, byte, len).map_err(classify)
    }

    fn write_generated(&self, dst: DevPtr, len: usize, fill: Filler) -> BResult<()> {
        self.sim().fill_lazily(dst, len, fill).map_err(classify)
    }

    fn touched(&self, ptr: DevPtr, len: usize) -> BResult<Option<Vec<std::ops::Range<usize>>>> {
        self.sim().touched(ptr, len).map_err(classify)
    }

    fn touched_by_kernels(&self, ptr: DevPtr, len: usize) -> BResult<Option<Vec<std::ops::Range<usize>>>> {
        self.sim().touched_by_kernels(ptr, len).map_err(classify)
    }

    /// Writes the first `bytes.len()` bytes of the variable (the rest keeps what
    /// it held), as the CUDA backend does; more than it holds is refused with
    /// the same message there.
    fn write_symbol(&self, module: ModuleId, name: &str, bytes: &[u8]) -> BResult<()> {
        let mut sim = self.sim();
        let (_, size) = sim.symbol(ptx_sim::ModuleId(module.0), name).map_err(classify)?;
        if bytes.len() as u64 > size {
            return Err(super::symbol_too_small(name, size as usize, bytes.len()));
        }
        sim.write_symbol(ptx_sim::ModuleId(module.0), name, bytes).map_err(classify)
    }

    /// Runs the kernel to completion (the simulator is synchronous).
    fn launch(&self, module: ModuleId, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> BResult<()> {
        let params: Vec<ParamValue> = args.iter().map(param).collect();
        let report = self
            .sim()
            .launch(ptx_sim::ModuleId(module.0), kernel, cfg.grid, cfg.block, cfg.shared_bytes, &params)
            .map_err(|e| self.classify_launch(e, cfg))?;
        if self.echo_printf && !report.printf.text.is_empty() {
            print!("{}", report.printf.text);
            if report.printf.dropped_calls > 0 {
                println!(
                    "[printf: the output of {} more calls dropped (a launch keeps {} KiB)]",
                    report.printf.dropped_calls,
                    ptx_sim::PRINTF_CAP / 1024
                );
            }
        }
        if let Some(b) = &report.barrier_after_exit {
            let mut seen = self.barriers.lock().unwrap();
            if !seen.iter().any(|x| x.kernel == b.kernel) {
                seen.push(b.clone());
            }
        }
        let s = &report.stats;
        if let Some(log) = &self.recorded {
            let mut log = log.lock().unwrap();
            log.stats.push(s.clone());
            log.barriers_after_exit.extend(report.barrier_after_exit.clone());
        }
        self.profiles.lock().unwrap().push(MemoryProfile {
            block_threads: cfg.threads_per_block(),
            dynamic_shared_bytes: cfg.shared_bytes,
            warp_sample: worst_global_access(s),
            ..MemoryProfile::of_stats(kernel, 1, s)
        });
        if let Some(r) = report.races.first() {
            return Err(BackendError::SharedRace(shared_race_text(kernel, r, report.races.len())));
        }
        if let Some(r) = report.global_races.first() {
            return Err(BackendError::GlobalRace(global_race_text(kernel, r, report.global_races.len())));
        }
        // after the races: a read that ran before another warp's write is the race's fault
        if let Some(e) = report.uninitialised_read {
            return Err(classify(e));
        }
        Ok(())
    }

    fn synchronize(&self, _timeout: Duration) -> BResult<()> {
        Ok(())
    }

    fn time_ms(&self, _work: &mut dyn FnMut() -> BResult<()>, _timeout: Duration) -> BResult<f32> {
        Err(BackendError::Unsupported("timing", "simulator"))
    }

    fn protect(&self, ptr: DevPtr, len: usize, buffer: &str, before: bool) -> BResult<()> {
        self.sim().protect(ptr, len, buffer, before).map_err(classify)
    }

    fn set_shape(&self, ptr: DevPtr, shape: Option<Shape2d>) {
        let mut shapes = self.shapes.lock().unwrap();
        shapes.retain(|(p, _)| *p != ptr);
        shapes.extend(shape.map(|s| (ptr, s)));
    }

    fn take_profiles(&self) -> Vec<MemoryProfile> {
        std::mem::take(&mut *self.profiles.lock().unwrap())
    }
}

/// The global load or store with the most sectors per request, with the
/// addresses of the first warp that ran it (ties go to the first in the code).
fn worst_global_access(s: &ptx_sim::Stats) -> Option<crate::profile::WarpSample> {
    use ptx_sim::AccessKind::{GenericLoad, GenericStore, GlobalLoad, GlobalStore};
    let mut best: Option<&ptx_sim::InstrStats> = None;
    for r in
        s.per_instruction.iter().filter(|r| matches!(r.kind, GlobalLoad | GlobalStore | GenericLoad | GenericStore))
    {
        if r.first_warp.is_some() && best.is_none_or(|b| r.sectors_per_request() > b.sectors_per_request()) {
            best = Some(r);
        }
    }
    let r = best?;
    let w = r.first_warp.as_ref()?;
    Some(crate::profile::WarpSample {
        instruction: r.instruction.clone(),
        source: r.source.clone(),
        store: matches!(r.kind, GlobalStore | GenericStore),
        bytes: w.bytes,
        addresses: w.lanes.clone(),
        sectors_per_request: r.sectors_per_request(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_race_says_read_against_atomic_only_where_one_side_reads() {
        use ptx_sim::RaceKind::*;
        let race = |kind, atomic_a, atomic_b| ptx_sim::Race {
            kernel: "k".into(),
            kind,
            atomic_a,
            atomic_b,
            ptx_line_a: 10,
            ptx_line_b: 20,
            source_a: Some("k.cu:3".into()),
            source_b: Some("k.cu:5".into()),
            offset: 0,
            thread_a: (0, 0, 0),
            thread_b: (33, 0, 0),
            block: (0, 0, 0),
            occurrences: 1,
        };
        let merge = shared_race_text("k", &race(WriteRead, true, false), 1);
        let (read_late, atomic_first) = ("(33, 0, 0) of block (0, 0, 0) reads plainly at k.cu:5", "(0, 0, 0) changes");
        assert!(merge.contains(read_late) && merge.contains(atomic_first), "{merge}");
        let late = shared_race_text("k", &race(ReadWrite, false, true), 1);
        let (read_first, atomic_late) = ("(0, 0, 0) of block (0, 0, 0) reads plainly at k.cu:3", "(33, 0, 0) changes");
        assert!(late.contains(read_first) && late.contains(atomic_late), "{late}");
        // a counter cleared with no barrier before the atomics: a write, not a read
        for (kind, a, b) in [(WriteWrite, false, true), (WriteWrite, true, false)] {
            let text = shared_race_text("k", &race(kind, a, b), 1);
            assert!(!text.contains("reads plainly") && text.contains("at least one of them writes"), "{text}");
        }
    }

    #[test]
    fn a_message_names_a_ptx_line_and_not_its_prefixes() {
        let text = format!("at {} and {}", at(12, &Some("k.cu:3".into())), at(130, &None));
        assert!(names_ptx_line(&text, 12) && names_ptx_line(&text, 130));
        assert!(!names_ptx_line(&text, 1) && !names_ptx_line(&text, 13));
    }

    #[test]
    fn a_source_path_is_relative_to_the_repository_whatever_the_folder_it_was_compiled_in() {
        let here = std::env::current_dir().unwrap();
        let mine = format!("{}/exercises/ex01-pi/kernels/pi_shared.cu:7", here.display());
        assert_eq!(relative_source(&mine), "exercises/ex01-pi/kernels/pi_shared.cu:7");
        // a PTX from the cache, compiled in another folder
        assert_eq!(
            relative_source("/tmp/x/root/exercises/ex01-pi/kernels/pi.cu:3"),
            "exercises/ex01-pi/kernels/pi.cu:3"
        );
        assert_eq!(
            relative_source("/w/reference/slow/ex02-dot/kernels/dot.cu:9"),
            "reference/slow/ex02-dot/kernels/dot.cu:9"
        );
        assert_eq!(relative_source("kernels/x.cu:1"), "kernels/x.cu:1");
    }

    #[test]
    fn the_simulator_watches_and_profiles_in_host_memory_but_cannot_time() {
        let (expected, e) = (Capabilities::SIM, Capabilities::SIM);
        assert!(e.checks_accesses && e.profiles_memory && e.host_memory);
        assert!(!e.times_kernels && !e.full_speed && !e.reports_kernel_resources && !e.real_device_info);
        assert!(!e.loses_context);
        let sim = SimBackend::new();
        assert_eq!(sim.capabilities(), expected);
        assert_eq!(Capabilities::of_named(&sim.info().backend), expected, "a report that names the simulator");
    }
}
