//! The simulator backend: runs the PTX on the CPU with `ptx-sim`, for students
//! without an NVIDIA GPU and for CI. It has no real timing (performance checks
//! are skipped), but it sees what a GPU hides: it fails a kernel whose threads
//! race on shared memory, and it profiles every launch's memory accesses.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ptx_sim::{ParamValue, SimConfig, SimError, Simulator, Stats};

use super::{Arg, BResult, Backend, BackendError, DevPtr, DeviceInfo, LaunchConfig, ModuleId};
use crate::profile::MemoryProfile;

/// Warp instructions one launch may execute before it counts as stuck: about
/// 10 s of CPU, some 15x what the largest simulated reference check needs.
pub const MAX_STEPS_PER_LAUNCH: u64 = 50_000_000;

pub struct SimBackend {
    sim: Mutex<Simulator>,
    info: DeviceInfo,
    profiles: Mutex<Vec<MemoryProfile>>,
    /// Every launch's full statistics (per instruction, with source lines), kept
    /// only for a private measuring instance (see `crate::measure`).
    recorded: Option<StatsLog>,
}

/// Where a recording simulator leaves the statistics of its launches.
pub type StatsLog = Arc<Mutex<Vec<Stats>>>;

impl SimBackend {
    pub fn new() -> Self {
        let cfg = SimConfig { max_steps_per_launch: MAX_STEPS_PER_LAUNCH, ..SimConfig::default() };
        let info = DeviceInfo {
            backend: "sim".into(),
            name: "ptx-sim (PTX interpreter on the CPU)".into(),
            compute_capability: (7, 5),
            driver_version: None,
            multiprocessors: 1,
            l2_cache_bytes: 4 << 20,
            global_memory_bytes: 4 << 30,
            max_threads_per_block: cfg.max_threads_per_block,
            max_shared_bytes_per_block: cfg.shared_mem_per_block,
        };
        Self { sim: Mutex::new(Simulator::new(cfg)), info, profiles: Mutex::default(), recorded: None }
    }

    /// A simulator that also keeps every launch's full statistics in the returned
    /// log, for measuring a kernel on a small input: it stops a launch after
    /// `max_steps` warp instructions and does not print the kernel's printf.
    pub fn recording(max_steps: u64) -> (Self, StatsLog) {
        let log = StatsLog::default();
        let mut backend = Self { recorded: Some(log.clone()), ..Self::new() };
        let cfg = SimConfig { max_steps_per_launch: max_steps, capture_printf: false, ..SimConfig::default() };
        backend.sim = Mutex::new(Simulator::new(cfg));
        (backend, log)
    }

    fn sim(&self) -> std::sync::MutexGuard<'_, Simulator> {
        self.sim.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Default for SimBackend {
    fn default() -> Self {
        Self::new()
    }
}

fn classify(e: SimError) -> BackendError {
    match e {
        SimError::MissingKernel(k) => BackendError::MissingKernel(k),
        SimError::MissingSymbol(s) => BackendError::MissingSymbol(s),
        SimError::StepLimit { steps, .. } => BackendError::Timeout(format!("{steps} simulated warp instructions")),
        e @ (SimError::IllegalAddress { .. } | SimError::MisalignedAddress { .. }) => {
            BackendError::Crashed(e.to_string())
        }
        e @ (SimError::Trap { .. } | SimError::BarrierDivergence { .. }) => BackendError::Crashed(e.to_string()),
        e @ (SimError::InvalidLaunch(_) | SimError::SharedMemoryTooLarge { .. } | SimError::BadParams(_)) => {
            BackendError::LaunchFailed(e.to_string())
        }
        e @ (SimError::Parse { .. } | SimError::Unsupported { .. }) => BackendError::LoadFailed(e.to_string()),
        SimError::OutOfMemory(m) => BackendError::OutOfMemory(m),
        e => BackendError::Other(e.to_string()),
    }
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

    fn load_module(&self, ptx: &str) -> BResult<ModuleId> {
        self.sim().load_module(ptx).map(|m| ModuleId(m.0)).map_err(classify)
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

    fn write_symbol(&self, module: ModuleId, name: &str, bytes: &[u8]) -> BResult<()> {
        self.sim().write_symbol(ptx_sim::ModuleId(module.0), name, bytes).map_err(classify)
    }

    /// Runs the kernel to completion (the simulator is synchronous).
    fn launch(&self, module: ModuleId, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> BResult<()> {
        let params: Vec<ParamValue> = args.iter().map(param).collect();
        let report = self
            .sim()
            .launch(ptx_sim::ModuleId(module.0), kernel, cfg.grid, cfg.block, cfg.shared_bytes, &params)
            .map_err(classify)?;
        if !report.printf.text.is_empty() && self.recorded.is_none() {
            print!("{}", report.printf.text);
            if report.printf.dropped_bytes > 0 {
                println!("[printf: {} more bytes dropped]", report.printf.dropped_bytes);
            }
        }
        let s = &report.stats;
        if let Some(log) = &self.recorded {
            log.lock().unwrap().push(s.clone());
        }
        self.profiles.lock().unwrap().push(MemoryProfile {
            kernel: kernel.to_string(),
            launches: 1,
            global_load_requests: s.global_load_requests,
            global_load_sectors: s.global_load_sectors,
            global_store_requests: s.global_store_requests,
            global_store_sectors: s.global_store_sectors,
            shared_requests: s.shared_load_requests + s.shared_store_requests,
            shared_wavefronts: s.shared_load_wavefronts + s.shared_store_wavefronts,
            branches: s.branches,
            divergent_branches: s.divergent_branches,
            global_atomics: s.global_atomics,
            shared_atomics: s.shared_atomics,
            block_threads: cfg.threads_per_block(),
            dynamic_shared_bytes: cfg.shared_bytes,
            warp_sample: worst_global_access(s),
            const_requests: s.const_load_requests,
            const_passes: s.const_load_passes,
        });
        if let Some(r) = report.races.first() {
            // NVRTC's line info makes the student's path absolute from the current folder; show it as given.
            let cwd = std::env::current_dir().map(|d| format!("{}/", d.display())).unwrap_or_default();
            let at = |line: usize, src: &Option<String>| match src {
                Some(s) => format!("{} (PTX line {line})", s.strip_prefix(cwd.as_str()).unwrap_or(s)),
                None => format!("PTX line {line}"),
            };
            return Err(BackendError::SharedRace(format!(
                "{kernel}: threads {:?} and {:?} of block {:?} touch the same shared-memory byte (offset {}) at {} and {} with no __syncthreads() between, and at least one of them writes ({} such pair(s) of instructions)",
                r.thread_a,
                r.thread_b,
                r.block,
                r.offset,
                at(r.ptx_line_a, &r.source_a),
                at(r.ptx_line_b, &r.source_b),
                report.races.len()
            )));
        }
        Ok(())
    }

    fn synchronize(&self, _timeout: Duration) -> BResult<()> {
        Ok(())
    }

    fn time_ms(&self, _work: &mut dyn FnMut() -> BResult<()>, _timeout: Duration) -> BResult<f32> {
        Err(BackendError::Unsupported("timing", "simulator"))
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
