//! `ptx-sim`: runs CUDA kernels compiled to PTX on the CPU.
//!
//! Load PTX text once ([`Simulator::load_module`]: parse, then compile to a compact
//! register-slot IR), allocate and fill global memory, launch kernels with CUDA
//! semantics, and read results back. Every launch returns a [`LaunchReport`] with
//! what a GPU hides: memory coalescing (sectors per request), shared-memory bank
//! conflicts, branch divergence, atomics, shared-memory races, and `printf` output.
//!
//! ```no_run
//! use ptx_sim::{ParamValue, SimConfig, Simulator};
//! # let ptx = "";
//! let mut sim = Simulator::new(SimConfig::default());
//! let m = sim.load_module(ptx)?;
//! let buf = sim.alloc(1024 * 4)?;
//! let report = sim.launch(m, "kernel", (4, 1, 1), (256, 1, 1), 0, &[ParamValue::U64(buf)])?;
//! println!("{}", report.stats.report());
//! # Ok::<(), ptx_sim::SimError>(())
//! ```

mod compile;
mod contract;
mod device;
mod discard;
mod error;
mod exec;
mod global_race;
pub mod ir;
mod memory;
pub mod parse;
mod printf;
mod race;
mod shared_layout;
mod stats;
#[cfg(test)]
mod test_rng;
mod work;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use device::{BarrierAfterExit, ShownGpu, Timer, DEFAULT_GPU};
pub use error::{Dim3, SimError, SimResult};
pub use global_race::{GlobalRace, MAX_GLOBAL_RACES, MAX_SHADOW_BYTES};
pub use ir::ParamInfo;
pub use memory::{Filler, GLOBAL_BASE, GUARD_GAP, LAZY_CHUNK};
pub use printf::{PrintfOutput, PRINTF_CAP};
pub use race::{Race, RaceKind, MAX_RACES};
pub use stats::{AccessKind, InstrStats, Stats, WarpAccess};

/// Simulator limits and switches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimConfig {
    /// Warp instructions one launch may execute; more is [`SimError::StepLimit`]
    /// (the simulator's timeout).
    pub max_steps_per_launch: u64,
    /// Static + dynamic shared memory a block may use (48 KiB by default).
    pub shared_mem_per_block: u32,
    pub max_threads_per_block: u32,
    /// Collect [`Stats`] (coalescing, bank conflicts, divergence, atomics).
    pub track_stats: bool,
    /// Detect shared-memory races ([`Race`]) and races between blocks on
    /// global memory ([`GlobalRace`]).
    pub detect_races: bool,
    /// Report a read of shared memory nobody wrote in the launch
    /// ([`SimError::UninitialisedRead`]).
    pub detect_uninitialised: bool,
    /// Format and keep `printf` output. Off, a `printf` only counts its calls
    /// (and returns 0): for runs that measure a kernel and show nothing of it.
    pub capture_printf: bool,
    /// Stops every launch early ([`SimError::Cancelled`]) once flipped.
    pub cancel: Option<CancelFlag>,
    /// The GPU kernels see (`%nsmid`, `%smid`, clocks): the grading GPU's, or
    /// a calibrated model's ([`DEFAULT_GPU`]), so that a kernel cannot tell
    /// the simulator from a GPU (`src/device.rs`).
    pub gpu: ShownGpu,
    /// The blocks every launch runs, by linear index (x fastest), sorted:
    /// a measurement's sample of a grid too large to run whole, each block
    /// placed and clocked as in the whole launch (`%smid`, `%warpid`). `None`:
    /// every block.
    pub blocks: Option<Arc<[u64]>>,
}

/// A switch another thread flips when it no longer needs a simulation's
/// answer (the grader's sanitizer pass, once the GPU run of the same kernel
/// never ended): a launch checks it every 64 Ki warp instructions.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Two flags are equal when they are the same switch.
impl PartialEq for CancelFlag {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CancelFlag {}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            max_steps_per_launch: 500_000_000,
            shared_mem_per_block: 48 * 1024,
            max_threads_per_block: 1024,
            track_stats: true,
            detect_races: true,
            detect_uninitialised: true,
            capture_printf: true,
            cancel: None,
            gpu: DEFAULT_GPU,
            blocks: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModuleId(pub u32);

/// One kernel argument; a pointer is passed as `U64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamValue {
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl ParamValue {
    fn bytes(&self) -> Vec<u8> {
        match *self {
            ParamValue::U32(v) => v.to_le_bytes().to_vec(),
            ParamValue::I32(v) => v.to_le_bytes().to_vec(),
            ParamValue::U64(v) => v.to_le_bytes().to_vec(),
            ParamValue::I64(v) => v.to_le_bytes().to_vec(),
            ParamValue::F32(v) => v.to_le_bytes().to_vec(),
            ParamValue::F64(v) => v.to_le_bytes().to_vec(),
        }
    }
    fn is_int(&self) -> bool {
        matches!(self, ParamValue::U32(_) | ParamValue::I32(_) | ParamValue::U64(_) | ParamValue::I64(_))
    }
}

/// What one launch did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchReport {
    pub kernel: String,
    pub stats: Stats,
    /// Shared-memory races, one per pair of instructions (at most [`MAX_RACES`]).
    pub races: Vec<Race>,
    /// Races between blocks on global memory, one per pair of instructions (at
    /// most [`MAX_GLOBAL_RACES`]), with `SimConfig::detect_races`.
    pub global_races: Vec<GlobalRace>,
    /// Warp-level instructions issued (the step count).
    pub warp_instructions: u64,
    /// Thread-level instructions: active lanes summed over issued warp instructions.
    pub thread_instructions: u64,
    pub printf: PrintfOutput,
    /// The first read of shared memory that no thread of its block had written
    /// in this launch (a [`SimError::UninitialisedRead`]), with
    /// `SimConfig::detect_uninitialised`. Reported, not raised: a race behind it
    /// should be named as the race.
    pub uninitialised_read: Option<SimError>,
    /// The first `bar.sync` of the launch released while some threads of its
    /// block had exited without reaching it (undefined in the PTX ISA; a GPU
    /// releases it, so the numbers are right). Reported, not raised.
    pub barrier_after_exit: Option<BarrierAfterExit>,
}

struct Module {
    kernels: HashMap<String, Arc<ir::Kernel>>,
    symbols: HashMap<String, compile::GlobalSym>,
}

/// A simulated device: global memory plus loaded modules. `Send`, so one can live
/// behind a mutex in a backend.
pub struct Simulator {
    cfg: SimConfig,
    mem: memory::GlobalMem,
    modules: Vec<Module>,
    /// The device's clocks and launch count, as kernels see them.
    time: device::DeviceTime,
}

impl Simulator {
    pub fn new(cfg: SimConfig) -> Self {
        let time = device::DeviceTime::now(&cfg.gpu);
        Simulator { cfg, mem: memory::GlobalMem::default(), modules: Vec::new(), time }
    }

    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }
    pub fn config_mut(&mut self) -> &mut SimConfig {
        &mut self.cfg
    }

    /// Parses and compiles PTX text. Module-scope `.global`/`.const` variables are
    /// placed in global memory now (with their initializers).
    pub fn load_module(&mut self, ptx: &str) -> Result<ModuleId, SimError> {
        let mut ast = parse::parse(ptx)?;
        contract::fuse_mul_add(&mut ast);
        let c = compile::compile_module(&ast, &mut self.mem)?;
        let id = ModuleId(self.modules.len() as u32);
        self.modules.push(Module {
            kernels: c.kernels.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
            symbols: c.symbols,
        });
        Ok(id)
    }

    fn module(&self, m: ModuleId) -> Result<&Module, SimError> {
        self.modules.get(m.0 as usize).ok_or(SimError::MissingModule(m.0))
    }

    pub fn has_kernel(&self, m: ModuleId, name: &str) -> bool {
        self.module(m).is_ok_and(|md| md.kernels.contains_key(name))
    }

    /// Kernel names of a module, sorted.
    pub fn kernel_names(&self, m: ModuleId) -> Vec<String> {
        let mut v: Vec<String> = self.module(m).map(|md| md.kernels.keys().cloned().collect()).unwrap_or_default();
        v.sort();
        v
    }

    /// The `.param` list of a kernel (names, offsets, sizes, PTX types).
    pub fn kernel_params(&self, m: ModuleId, name: &str) -> Result<Vec<ParamInfo>, SimError> {
        let md = self.module(m)?;
        let k = md.kernels.get(name).ok_or_else(|| SimError::MissingKernel(name.to_string()))?;
        Ok(k.params.clone())
    }

    /// Allocates zeroed global memory: 256-byte aligned, never address 0, with an
    /// unmapped gap after each allocation so out-of-bounds accesses fault.
    pub fn alloc(&mut self, bytes: usize) -> Result<u64, SimError> {
        self.mem.alloc(bytes).ok_or_else(|| SimError::OutOfMemory(format!("{bytes} bytes")))
    }

    /// Frees an allocation (unknown addresses are ignored, like `cudaFree` on a
    /// freed pointer would be an error the simulator has no use for).
    pub fn free(&mut self, addr: u64) {
        self.mem.free(addr);
    }

    /// Marks `len` bytes at `addr` (inside one allocation) as off limits to kernels:
    /// a kernel access there is [`SimError::OutOfBounds`] naming `name`, while the
    /// host may still read and write them. `before`: the zone precedes the buffer
    /// `name` (else it follows it). Used for the guard zones around a buffer.
    pub fn protect(&mut self, addr: u64, len: usize, name: &str, before: bool) -> Result<(), SimError> {
        let i = self.mem.find(addr, len as u64).ok_or(SimError::HostAccess { addr, len })?;
        let a = &mut self.mem.allocs[i];
        let start = (addr - a.base) as usize;
        a.zones.push(memory::Zone { start, end: start + len, name: name.to_string(), before });
        Ok(())
    }

    /// Makes `len` bytes at `addr` (inside one allocation, none of it lazily
    /// filled yet) hold what `fill` gives them, each chunk filled the first time
    /// a kernel or the host touches it ([`memory::Lazy`]): an upload whose cost
    /// is what the launches read of it.
    pub fn fill_lazily(&mut self, addr: u64, len: usize, fill: memory::Filler) -> Result<(), SimError> {
        let i = self.mem.find(addr, len as u64).ok_or(SimError::HostAccess { addr, len })?;
        let a = &mut self.mem.allocs[i];
        if a.lazy.is_some() {
            return Err(SimError::BadParams("an allocation holds one lazily filled range".into()));
        }
        let start = (addr - a.base) as usize;
        a.lazy = Some(Box::new(memory::Lazy::new(start..start + len, fill)));
        Ok(())
    }

    /// The stretches of the `len` bytes at `addr` (offsets from `addr`) that
    /// kernels or the host have touched, where they are lazily filled
    /// ([`Simulator::fill_lazily`]); `None` where they are not.
    pub fn touched(&self, addr: u64, len: usize) -> Result<Option<Vec<std::ops::Range<usize>>>, SimError> {
        let i = self.mem.find(addr, len as u64).ok_or(SimError::HostAccess { addr, len })?;
        let a = &self.mem.allocs[i];
        let start = (addr - a.base) as usize;
        Ok(a.lazy.as_ref().map(|l| l.filled(start, len).into_iter().map(|r| r.start - start..r.end - start).collect()))
    }

    /// [`Simulator::touched`] byte for byte, by kernels alone (the host's
    /// reads and writes not counted): what launches read or wrote of an input.
    pub fn touched_by_kernels(&self, addr: u64, len: usize) -> Result<Option<Vec<std::ops::Range<usize>>>, SimError> {
        let i = self.mem.find(addr, len as u64).ok_or(SimError::HostAccess { addr, len })?;
        let a = &self.mem.allocs[i];
        let start = (addr - a.base) as usize;
        let ranges = a.lazy.as_ref().map(|l| l.touched_by_kernels(start, len));
        Ok(ranges.map(|rs| rs.into_iter().map(|r| r.start - start..r.end - start).collect()))
    }

    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<(), SimError> {
        let len = bytes.len();
        self.mem.slice_mut(addr, len).ok_or(SimError::HostAccess { addr, len })?.copy_from_slice(bytes);
        Ok(())
    }

    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), SimError> {
        let len = out.len();
        out.copy_from_slice(&self.mem.slice(addr, len).ok_or(SimError::HostAccess { addr, len })?);
        Ok(())
    }

    pub fn fill(&mut self, addr: u64, byte: u8, len: usize) -> Result<(), SimError> {
        self.mem.slice_mut(addr, len).ok_or(SimError::HostAccess { addr, len })?.fill(byte);
        Ok(())
    }

    /// The global address and size of a module-scope `.global`/`.const` variable.
    pub fn symbol(&self, m: ModuleId, name: &str) -> Result<(u64, u64), SimError> {
        let md = self.module(m)?;
        let s = md.symbols.get(name).ok_or_else(|| SimError::MissingSymbol(name.to_string()))?;
        Ok((s.addr, s.size))
    }

    /// Writes a module-scope `__constant__` or `__device__` variable (from its start).
    pub fn write_symbol(&mut self, m: ModuleId, name: &str, bytes: &[u8]) -> Result<(), SimError> {
        let (addr, size) = self.symbol(m, name)?;
        if bytes.len() as u64 > size {
            return Err(SimError::BadParams(format!(
                "{} bytes do not fit the {size}-byte variable `{name}`",
                bytes.len()
            )));
        }
        self.write(addr, bytes)
    }

    pub fn read_symbol(&self, m: ModuleId, name: &str, out: &mut [u8]) -> Result<(), SimError> {
        let (addr, size) = self.symbol(m, name)?;
        if out.len() as u64 > size {
            return Err(SimError::BadParams(format!("variable `{name}` has only {size} bytes")));
        }
        self.read(addr, out)
    }

    /// Runs a kernel to completion.
    pub fn launch(
        &mut self,
        m: ModuleId,
        kernel: &str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        dynamic_shared_bytes: u32,
        params: &[ParamValue],
    ) -> Result<LaunchReport, SimError> {
        let k = {
            let md = self.module(m)?;
            md.kernels.get(kernel).cloned().ok_or_else(|| SimError::MissingKernel(kernel.to_string()))?
        };
        if [grid.0, grid.1, grid.2, block.0, block.1, block.2].contains(&0) {
            return Err(SimError::InvalidLaunch(format!("zero dimension in grid {grid:?} / block {block:?}")));
        }
        let threads = block.0 as u64 * block.1 as u64 * block.2 as u64;
        if threads > self.cfg.max_threads_per_block as u64 || block.0 > 1024 || block.1 > 1024 || block.2 > 64 {
            return Err(SimError::InvalidLaunch(format!(
                "block {block:?} has {threads} threads; at most {} per block (x, y ≤ 1024, z ≤ 64)",
                self.cfg.max_threads_per_block
            )));
        }
        if grid.0 > i32::MAX as u32 || grid.1 > 65535 || grid.2 > 65535 {
            return Err(SimError::InvalidLaunch(format!("grid {grid:?} is too large")));
        }
        // the GPU's layout: the simulator's guard gaps do not count
        let sl = &k.shared_layout;
        let requested = sl.gpu_dyn_offset as u64 + dynamic_shared_bytes as u64;
        let requested = requested.max(sl.gpu_static() as u64);
        if requested > self.cfg.shared_mem_per_block as u64 {
            return Err(SimError::SharedMemoryTooLarge {
                kernel: kernel.to_string(),
                requested,
                static_bytes: sl.gpu_static(),
                dynamic_bytes: dynamic_shared_bytes,
                limit: self.cfg.shared_mem_per_block,
            });
        }
        let buf = param_buffer(&k, params)?;
        let mut ex = exec::Exec::new(&k, &self.cfg, &mut self.mem, &buf, grid, block, dynamic_shared_bytes);
        ex.time = self.time.launch(&self.cfg.gpu);
        let out = ex.run()?;
        self.time.finish(&out.time);
        Ok(LaunchReport {
            kernel: kernel.to_string(),
            stats: out.stats,
            races: out.races,
            global_races: out.global_races,
            warp_instructions: out.warp_instructions,
            thread_instructions: out.thread_instructions,
            printf: out.printf,
            uninitialised_read: out.uninitialised_read,
            barrier_after_exit: out.barrier_after_exit,
        })
    }
}

/// Reads PTX text into its syntax tree ([`parse::ast::Module`]): the first step
/// of [`Simulator::load_module`], with nothing compiled or rewritten (no
/// multiply-add fusion), so it holds the instructions as written. For tools
/// that ask what a module declares and uses (the kit's structure checks).
pub fn parse_module(ptx: &str) -> Result<parse::ast::Module, SimError> {
    parse::parse(ptx)
}

/// Every instruction, modifier or register of `ptx` that the simulator cannot
/// run, one [`SimError::Unsupported`] each (an empty list: it all runs). A
/// module that does not parse is an error.
pub fn unsupported_instructions(ptx: &str) -> Result<Vec<SimError>, SimError> {
    let mut ast = parse::parse(ptx)?;
    contract::fuse_mul_add(&mut ast);
    compile::unsupported_in(&ast)
}

fn param_buffer(k: &ir::Kernel, params: &[ParamValue]) -> Result<Vec<u8>, SimError> {
    if params.len() != k.params.len() {
        return Err(SimError::BadParams(format!(
            "kernel `{}` takes {} parameters, {} given",
            k.name,
            k.params.len(),
            params.len()
        )));
    }
    let mut buf = vec![0u8; k.param_bytes as usize];
    for (i, (p, v)) in k.params.iter().zip(params).enumerate() {
        let b = v.bytes();
        let size = p.size as usize;
        let fits = b.len() == size || (v.is_int() && size < b.len() && matches!(size, 1 | 2));
        if !fits {
            return Err(SimError::BadParams(format!(
                "parameter {i} (`{}`, .{} of {size} bytes) of `{}` given {v:?} ({} bytes)",
                p.name,
                p.ty,
                k.name,
                b.len()
            )));
        }
        let o = p.offset as usize;
        buf[o..o + size].copy_from_slice(&b[..size]);
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>() {}

    #[test]
    fn simulator_is_send() {
        assert_send::<Simulator>();
    }
}
