//! Running a launch: blocks one after another; within a block, each warp runs
//! until every thread has exited or waits at `bar.sync`, then the barrier
//! releases; within a warp, SIMT execution.
//!
//! SIMT model: a warp is a set of *groups* (pc, lane mask). The group with the
//! lowest pc runs; a divergent branch splits it in two; groups that reach the
//! same pc merge. Running the lowest pc first makes both sides of an `if` finish
//! before the code after it runs, so lanes reconverge at the join point as on
//! hardware for the structured code compilers emit. Warp-synchronous
//! instructions (`shfl.sync`, `vote.sync`, `bar.warp.sync`, ...) wait until all
//! lanes of their member mask are at that instruction (Volta semantics).

pub mod alu;
mod asynch;
mod calls;
mod discard;
mod fused;
mod half;
mod mem;
mod ops;
mod sanitize;

use std::cell::Cell;

use crate::error::{Dim3, SimError};
use crate::global_race::GlobalDetector;
use crate::ir::*;
use crate::memory::GlobalMem;
use crate::printf::PrintfOutput;
use crate::race::Detector;
use crate::stats::{Collector, Stats};
use crate::SimConfig;

/// Rounds of all warps in which some wait on an mbarrier and no mbarrier
/// changes, before the wait is reported as a deadlock.
const MBAR_IDLE_ROUNDS: u32 = 64;

#[derive(Debug, Clone, Copy)]
struct Group {
    pc: u32,
    mask: u32,
    /// Parked at a warp-synchronous instruction, waiting for lanes.
    wait: bool,
}

#[derive(Debug, Default)]
struct Warp {
    groups: Vec<Group>,
    barrier: Vec<Group>,
    exited: u32,
    /// Lanes that exist (the last warp of a block may be partial).
    valid: u32,
    /// Predicate values carried into `bar.red`.
    bar_pred: u32,
    /// Groups that wait on an mbarrier phase: they run again after the other warps.
    yielded: Vec<Group>,
}

pub(crate) struct Outcome {
    pub stats: Stats,
    pub races: Vec<crate::race::Race>,
    pub global_races: Vec<crate::global_race::GlobalRace>,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    pub printf: PrintfOutput,
    pub uninitialised_read: Option<SimError>,
    pub barrier_after_exit: Option<crate::device::BarrierAfterExit>,
    pub time: crate::device::LaunchTime,
}

pub(crate) struct Exec<'a> {
    k: &'a Kernel,
    mem: &'a mut GlobalMem,
    params: &'a [u8],
    grid: Dim3,
    block: Dim3,
    nthreads: u32,
    nwarps: usize,
    nslots: usize,
    npreds: usize,
    regs: Vec<u64>,
    preds: Vec<u32>,
    shared: Vec<u8>,
    local: Vec<u8>,
    warps: Vec<Warp>,
    block_idx: Dim3,
    steps: u64,
    /// The cycles the launch's warp instructions took ([`crate::device::issue_cycles`]): its clocks.
    cycles: u64,
    /// Of those, the running warp's arithmetic since its last instruction that
    /// arithmetic cannot be scheduled across ([`crate::device::floats`]): a
    /// clock read does not see it, as on a GPU, whose compiler moves such
    /// arithmetic outside two clock reads.
    floating: u64,
    max_steps: u64,
    cancel: Option<crate::CancelFlag>,
    /// The blocks that run, where a sample leaves the others out (`SimConfig::blocks`).
    blocks: Option<std::sync::Arc<[u64]>>,
    thread_instr: u64,
    stats: Option<Collector>,
    race: Option<Detector>,
    /// Races between blocks on global memory.
    pub(super) grace: Option<GlobalDetector>,
    printf: PrintfOutput,
    dyn_bytes: u32,
    gcache: Cell<usize>,
    /// Per shared byte: written in this block yet (uninitialised-read detection).
    init: Option<Vec<u8>>,
    /// Some allocation has guard zones to check.
    any_zones: bool,
    /// The first read of never-written shared memory (`SimError::UninitialisedRead`).
    uninit_found: Option<SimError>,
    /// The `__shared__` variables of this launch, by offset (`shared_layout`):
    /// an access outside all of them is out of bounds.
    shared_vars: Vec<crate::shared_layout::SharedVar>,
    /// The block's `mbarrier` objects.
    mbars: asynch::Mbars,
    /// The block's `cp.async` copies not waited for, by thread.
    copies: asynch::Copies,
    /// Shared reads of loads whose value some lanes may throw away (`crate::discard`).
    deferred: Vec<discard::Pending>,
    /// Per thread, the frames of its calls of recursive functions.
    stacks: Vec<Vec<calls::Frame>>,
    /// What those frames hold, in bytes (`calls::MAX_STACK_BYTES`).
    stack_bytes: usize,
    /// The launch's clocks and SM placement, as the kernel reads them (`crate::device`).
    pub(crate) time: crate::device::LaunchTime,
    /// The block's first exit: its pc and thread (`crate::device::BarrierAfterExit`).
    first_exit: Option<(u32, u32)>,
    barrier_after_exit: Option<crate::device::BarrierAfterExit>,
}

impl<'a> Exec<'a> {
    pub fn new(
        k: &'a Kernel,
        cfg: &SimConfig,
        mem: &'a mut GlobalMem,
        params: &'a [u8],
        grid: Dim3,
        block: Dim3,
        dyn_bytes: u32,
    ) -> Self {
        let nthreads = block.0 * block.1 * block.2;
        let nwarps = nthreads.div_ceil(32) as usize;
        let nslots = k.nslots as usize;
        let npreds = k.npreds as usize;
        let shared_bytes = k.shared_layout.sim_bytes(dyn_bytes);
        let any_zones = mem.allocs.iter().any(|a| !a.zones.is_empty());
        let nallocs = mem.allocs.len();
        // loads that may meet an atomic without a race, for both race checks
        let checked = cfg.detect_races.then(|| crate::global_race::checked_loads(&k.code, &k.info));
        Exec {
            k,
            mem,
            params,
            grid,
            block,
            nthreads,
            nwarps,
            nslots,
            npreds,
            regs: vec![0; nwarps * nslots * LANES],
            preds: vec![0; nwarps * npreds],
            shared: vec![0; shared_bytes],
            local: vec![0; nthreads as usize * k.local_bytes as usize],
            warps: (0..nwarps).map(|_| Warp::default()).collect(),
            block_idx: (0, 0, 0),
            steps: 0,
            cycles: 0,
            floating: 0,
            max_steps: cfg.max_steps_per_launch,
            cancel: cfg.cancel.clone(),
            blocks: cfg.blocks.clone(),
            thread_instr: 0,
            stats: cfg.track_stats.then(|| Collector::new(k)),
            race: checked.clone().map(|c| Detector::new(shared_bytes, nwarps, c)),
            // one block races with no other
            grace: checked
                .filter(|_| grid.0 as u64 * grid.1 as u64 * grid.2 as u64 > 1)
                .map(|c| GlobalDetector::new(nallocs, atomic_flags(k, c))),
            printf: PrintfOutput { discard: !cfg.capture_printf, ..PrintfOutput::default() },
            dyn_bytes,
            gcache: Cell::new(0),
            init: cfg.detect_uninitialised.then(|| vec![0; shared_bytes]),
            any_zones,
            uninit_found: None,
            shared_vars: k.shared_layout.ranges(dyn_bytes),
            mbars: asynch::Mbars::default(),
            copies: asynch::Copies::default(),
            deferred: Vec::new(),
            stacks: (0..nthreads).map(|_| Vec::new()).collect(),
            stack_bytes: 0,
            time: crate::device::DeviceTime::now(&cfg.gpu).launch(&cfg.gpu),
            first_exit: None,
            barrier_after_exit: None,
        }
    }

    /// The name the host gave the buffer holding `addr` (from its guard
    /// zones) and the offset of `addr` in it.
    fn buffer_of(&self, addr: u64) -> Option<(String, u64)> {
        let a = &self.mem.allocs[self.mem.find(addr, 1)?];
        let z = a.zones.first()?;
        let start = a.zones.iter().filter(|z| z.before).map(|z| z.end).max().unwrap_or(0) as u64;
        Some((z.name.clone(), (addr - a.base).saturating_sub(start)))
    }

    fn thread_coords(&self, t: u32) -> Dim3 {
        let (bx, by, _) = self.block;
        (t % bx, (t / bx) % by, t / (bx * by))
    }

    /// `%total_smem_size`: the GPU's layout of the block's shared memory, in its allocation units.
    fn total_smem_size(&self) -> u64 {
        let sl = &self.k.shared_layout;
        let bytes = (sl.gpu_dyn_offset as u64 + self.dyn_bytes as u64).max(sl.gpu_static() as u64);
        bytes.div_ceil(crate::device::SHARED_ALLOCATION_UNIT) * crate::device::SHARED_ALLOCATION_UNIT
    }

    fn special_value(&self, s: Special, t: u32, lane: u32) -> u64 {
        let dim = |d: Dim3, i: u8| match i {
            0 => d.0,
            1 => d.1,
            _ => d.2,
        } as u64;
        let lanebit = 1u64 << lane;
        match s {
            Special::Tid(i) => dim(self.thread_coords(t), i),
            Special::Ntid(i) => dim(self.block, i),
            Special::Ctaid(i) => dim(self.block_idx, i),
            Special::Nctaid(i) => dim(self.grid, i),
            Special::LaneId => lane as u64,
            Special::WarpId => self.time.warp_slot(t as usize / 32),
            Special::NWarpId => 64,
            Special::SmId => self.time.sm as u64,
            Special::GridId => self.time.grid_id,
            Special::NSmId => self.time.gpu.multiprocessors as u64,
            Special::LaneMaskEq => lanebit,
            Special::LaneMaskLt => lanebit - 1,
            Special::LaneMaskLe => (lanebit << 1).wrapping_sub(1) & 0xffff_ffff,
            Special::LaneMaskGt => !((lanebit << 1).wrapping_sub(1)) & 0xffff_ffff,
            Special::LaneMaskGe => !(lanebit - 1) & 0xffff_ffff,
            Special::DynamicSmemSize => self.dyn_bytes as u64,
            // As a GPU shows them: a kernel that read the bytes it declared
            // here, and a GPU's allocation units there, could tell the two apart.
            Special::TotalSmemSize => self.total_smem_size(),
            Special::AggrSmemSize => self.total_smem_size() + crate::device::RESERVED_SHARED_BYTES,
            Special::WarpSize => 32,
            Special::EnvReg(n) => crate::device::envreg(n),
            Special::Zero => 0,
            Special::One => 1,
        }
    }

    fn fill_specials(&mut self, only_block: bool) {
        let k = self.k;
        for w in 0..self.nwarps {
            let rb = w * self.nslots * LANES;
            for &(slot, s) in &k.specials {
                if only_block && !matches!(s, Special::Ctaid(_) | Special::SmId | Special::WarpId) {
                    continue;
                }
                for lane in 0..32u32 {
                    let t = w as u32 * 32 + lane;
                    let v = if t < self.nthreads { self.special_value(s, t, lane) } else { 0 };
                    self.regs[rb + slot as usize + lane as usize] = v;
                }
            }
        }
    }

    pub fn run(mut self) -> Result<Outcome, SimError> {
        let k = self.k;
        for w in 0..self.nwarps {
            let rb = w * self.nslots * LANES;
            for &(slot, v) in &k.consts {
                self.regs[rb + slot as usize..rb + slot as usize + LANES].fill(v);
            }
            let pb = w * self.npreds;
            self.preds[pb + k.pred_false as usize] = 0;
            self.preds[pb + k.pred_true as usize] = u32::MAX;
        }
        let shared = self.total_smem_size() + crate::device::RESERVED_SHARED_BYTES;
        self.time.set_residency(self.nwarps, shared);
        self.fill_specials(false);
        let (gx, gy, gz) = self.grid;
        for bz in 0..gz {
            for by in 0..gy {
                for bx in 0..gx {
                    let linear = bx as u64 + gx as u64 * (by as u64 + gy as u64 * bz as u64);
                    if self.blocks.as_ref().is_some_and(|run| run.binary_search(&linear).is_err()) {
                        continue;
                    }
                    self.block_idx = (bx, by, bz);
                    if let Some(g) = &mut self.grace {
                        g.new_block(bx.wrapping_add(gx.wrapping_mul(by.wrapping_add(gy.wrapping_mul(bz)))));
                    }
                    self.time.start_block(linear, self.nwarps);
                    self.run_block()?;
                    self.time.end_block();
                    if let Some(st) = &mut self.stats {
                        st.end_block();
                    }
                }
            }
        }
        let kname = k.name.clone();
        let races = match self.race.take() {
            Some(d) => d
                .found
                .iter()
                .map(|&((a, ta, b, tb, off, kind), block, n)| {
                    let (pa, pb) = ((a & crate::race::PC) as usize, (b & crate::race::PC) as usize);
                    crate::race::Race {
                        kernel: kname.clone(),
                        kind,
                        atomic_a: a & crate::race::ATOMIC != 0,
                        atomic_b: b & crate::race::ATOMIC != 0,
                        ptx_line_a: k.ptx_line(pa),
                        ptx_line_b: k.ptx_line(pb),
                        source_a: k.source_of(pa),
                        source_b: k.source_of(pb),
                        offset: crate::shared_layout::gpu_offset(&self.shared_vars, off),
                        thread_a: self.thread_coords(ta),
                        thread_b: self.thread_coords(tb),
                        block,
                        occurrences: n,
                    }
                })
                .collect(),
            None => Vec::new(),
        };
        let global_races = match self.grace.take() {
            Some(g) => {
                let (gx, gy) = (self.grid.0.max(1), self.grid.1.max(1));
                let coords = |b: u32| {
                    let l = b.wrapping_sub(1);
                    (l % gx, (l / gx) % gy, l / gx / gy)
                };
                g.found
                    .iter()
                    .map(|(c, n)| crate::global_race::GlobalRace {
                        kernel: kname.clone(),
                        kind: c.kind,
                        atomic_a: c.atomic_a(),
                        atomic_b: c.atomic_b,
                        ptx_line_a: k.ptx_line(c.pc_a() as usize),
                        ptx_line_b: k.ptx_line(c.pc_b as usize),
                        source_a: k.source_of(c.pc_a() as usize),
                        source_b: k.source_of(c.pc_b as usize),
                        block_a: coords(c.block_a),
                        block_b: coords(c.block_b),
                        addr: c.addr,
                        buffer: self.buffer_of(c.addr),
                        occurrences: *n,
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        let stats = match self.stats.take() {
            Some(c) => c.finish(),
            None => Stats { kernel: kname, ..Default::default() },
        };
        Ok(Outcome {
            stats,
            races,
            global_races,
            warp_instructions: self.steps,
            thread_instructions: self.thread_instr,
            printf: std::mem::take(&mut self.printf),
            uninitialised_read: self.uninit_found.take(),
            barrier_after_exit: self.barrier_after_exit.take(),
            time: self.time.clone(),
        })
    }

    fn run_block(&mut self) -> Result<(), SimError> {
        self.fill_specials(true);
        self.shared.fill(sanitize::SHARED_POISON);
        if let Some(init) = &mut self.init {
            init.fill(0);
        }
        self.local.fill(0);
        if let Some(r) = &mut self.race {
            r.new_block();
            r.block = self.block_idx;
        }
        for (w, ws) in self.warps.iter_mut().enumerate() {
            let first = w as u32 * 32;
            let n = (self.nthreads - first).min(32);
            ws.valid = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
            ws.exited = 0;
            ws.barrier.clear();
            ws.yielded.clear();
            ws.groups.clear();
            ws.groups.push(Group { pc: 0, mask: ws.valid, wait: false });
        }
        self.mbars.clear();
        self.copies.clear();
        self.deferred.clear();
        self.stacks.iter_mut().for_each(Vec::clear);
        self.stack_bytes = 0;
        self.first_exit = None;
        // Rounds in a row in which warps waited on mbarriers and none changed.
        let mut idle_rounds = 0u32;
        loop {
            let events = self.mbars.events;
            for w in 0..self.nwarps {
                if !self.warps[w].groups.is_empty() {
                    self.time.enter(self.cycles);
                    self.run_warp(w)?;
                    self.time.leave(w, self.cycles);
                }
            }
            if self.warps.iter().any(|ws| !ws.yielded.is_empty()) {
                idle_rounds = if self.mbars.events == events { idle_rounds + 1 } else { 0 };
                if idle_rounds > MBAR_IDLE_ROUNDS {
                    let g = self.warps.iter().find_map(|ws| ws.yielded.first().copied()).expect("a waiting group");
                    return Err(self.divergence_error(
                        g.pc.saturating_sub(1),
                        "threads wait on an mbarrier (cuda::barrier, memcpy_async) whose phase never completes: \
                         fewer threads arrive than the barrier was initialised for"
                            .into(),
                    ));
                }
                for w in 0..self.nwarps {
                    for g in std::mem::take(&mut self.warps[w].yielded) {
                        self.push_group(w, g.pc, g.mask);
                    }
                }
                continue;
            }
            if self.warps.iter().all(|ws| ws.barrier.is_empty()) {
                return Ok(());
            }
            self.release_barrier()?;
        }
    }

    /// The barrier at `pc` releases while threads of the block have exited.
    fn note_barrier_after_exit(&mut self, pc: u32) {
        let Some((exit_pc, t)) = self.first_exit else { return };
        let k = self.k;
        let exit_pc = crate::device::return_site(&k.code, exit_pc, pc);
        let exited = self.warps.iter().map(|ws| (ws.exited & ws.valid).count_ones()).sum();
        self.barrier_after_exit = Some(crate::device::BarrierAfterExit {
            kernel: k.name.clone(),
            barrier_ptx_line: k.ptx_line(pc as usize),
            barrier_source: k.source_of(pc as usize),
            exit_ptx_line: k.ptx_line(exit_pc as usize),
            exit_source: k.source_of(exit_pc as usize),
            thread: self.thread_coords(t),
            block: self.block_idx,
            exited,
            threads: self.nthreads,
        });
    }

    fn divergence_error(&self, pc: u32, detail: String) -> SimError {
        SimError::BarrierDivergence {
            ptx_line: self.k.ptx_line(pc as usize),
            location: self.k.source_of(pc as usize),
            kernel: self.k.name.clone(),
            block: self.block_idx,
            detail,
        }
    }

    fn release_barrier(&mut self) -> Result<(), SimError> {
        let k = self.k;
        let mut pc0: Option<u32> = None;
        for ws in &self.warps {
            for g in &ws.barrier {
                match pc0 {
                    None => pc0 = Some(g.pc),
                    Some(p) if p != g.pc => {
                        let (a, b) = (k.ptx_line(p as usize), k.ptx_line(g.pc as usize));
                        let src = |pc: u32| k.source_of(pc as usize).map(|s| format!(" ({s})")).unwrap_or_default();
                        return Err(self.divergence_error(
                            p,
                            format!(
                                "some threads wait at the barrier on PTX line {a}{}, others at PTX line {b}{}: \
                                 __syncthreads() must be reached by all threads of the block (is it inside a \
                                 condition that differs between threads?)",
                                src(p),
                                src(g.pc)
                            ),
                        ));
                    }
                    _ => {}
                }
            }
        }
        let pc = pc0.expect("a barrier is pending");
        if self.first_exit.is_some() && self.barrier_after_exit.is_none() {
            self.note_barrier_after_exit(pc);
        }
        if let Op::BarRed { mode, d, dp, .. } = k.code[pc as usize].op {
            let (mut count, mut all, mut any) = (0u64, true, false);
            for ws in &self.warps {
                for g in &ws.barrier {
                    let t = ws.bar_pred & g.mask;
                    count += t.count_ones() as u64;
                    all &= t == g.mask;
                    any |= t != 0;
                }
            }
            for w in 0..self.nwarps {
                let m: u32 = self.warps[w].barrier.iter().fold(0, |m, g| m | g.mask);
                match mode {
                    BarRedMode::Popc => {
                        let rb = w * self.nslots * LANES + d as usize;
                        for lane in 0..32 {
                            if m >> lane & 1 == 1 {
                                self.regs[rb + lane] = count;
                            }
                        }
                    }
                    BarRedMode::And | BarRedMode::Or => {
                        let v = if mode == BarRedMode::And { all } else { any };
                        let p = &mut self.preds[w * self.npreds + dp as usize];
                        *p = if v { *p | m } else { *p & !m };
                    }
                }
            }
        }
        for w in 0..self.nwarps {
            let gs = std::mem::take(&mut self.warps[w].barrier);
            for g in gs {
                self.push_group(w, g.pc + 1, g.mask);
            }
        }
        if let Some(s) = &mut self.stats {
            s.totals.barriers += 1;
        }
        if let Some(r) = &mut self.race {
            r.barrier();
        }
        self.time.barrier();
        Ok(())
    }

    fn push_group(&mut self, w: usize, pc: u32, mask: u32) {
        if mask == 0 {
            return;
        }
        let ws = &mut self.warps[w];
        if let Some(g) = ws.groups.iter_mut().find(|g| g.pc == pc) {
            g.mask |= mask;
            g.wait = false;
        } else {
            ws.groups.push(Group { pc, mask, wait: false });
        }
    }

    fn push_wait(&mut self, w: usize, pc: u32, mask: u32) {
        let ws = &mut self.warps[w];
        if let Some(g) = ws.groups.iter_mut().find(|g| g.pc == pc) {
            g.mask |= mask;
            g.wait = true;
        } else {
            ws.groups.push(Group { pc, mask, wait: true });
        }
    }

    /// Removes and returns the lanes of groups at `pc`.
    fn take_at(&mut self, w: usize, pc: u32) -> u32 {
        let ws = &mut self.warps[w];
        let mut m = 0;
        ws.groups.retain(|g| {
            if g.pc == pc {
                m |= g.mask;
                false
            } else {
                true
            }
        });
        m
    }

    /// The lowest pc ≥ `from` of any other group (u32::MAX if none).
    fn next_stop(&self, w: usize, from: u32) -> u32 {
        self.warps[w].groups.iter().filter(|g| g.pc >= from).map(|g| g.pc).min().unwrap_or(u32::MAX)
    }

    /// The member mask operand of a warp-synchronous instruction.
    fn member_mask(&self, w: usize, mreg: Reg, lanes: u32) -> u32 {
        let lane = lanes.trailing_zeros() as usize;
        self.regs[w * self.nslots * LANES + mreg as usize + lane.min(31)] as u32
    }

    fn warp_mask_error(&self, w: usize, lane: usize, pc: u32, detail: String) -> SimError {
        let (thread, _) = self.thread_of(w, lane.min(31));
        SimError::WarpMask {
            ptx_line: self.k.ptx_line(pc as usize),
            location: self.k.source_of(pc as usize),
            kernel: self.k.name.clone(),
            thread,
            block: self.block_idx,
            detail,
        }
    }

    /// Every lane executing a warp-synchronous instruction must be in its own
    /// member mask (the PTX ISA leaves the result undefined otherwise; a GPU
    /// masks the vote or reads another lane's register, by its own rules).
    fn check_members(&self, w: usize, pc: u32, mreg: Reg, emask: u32) -> Result<(), SimError> {
        let rb = w * self.nslots * LANES + mreg as usize;
        let mut outside = 0u32;
        ops::lanes(emask, |l| {
            if (self.regs[rb + l] as u32) >> l & 1 == 0 {
                outside |= 1 << l;
            }
        });
        if outside == 0 {
            return Ok(());
        }
        let lane = outside.trailing_zeros() as usize;
        let mask = self.regs[rb + lane] as u32;
        Err(self.warp_mask_error(
            w,
            lane,
            pc,
            format!(
                "lanes {outside:#010x} of warp {w} call `{}` with member mask {mask:#010x}, which does not name \
                 them: a lane may only take part in a warp-synchronous call (__shfl*_sync, __ballot_sync, \
                 __any/__all_sync, __match_*_sync, __reduce_*_sync, __syncwarp) whose mask has its bit set. Pass \
                 the mask of every lane that makes the call (0xffffffff for a whole warp), or let only the masked \
                 lanes call it",
                self.k.info[pc as usize].text
            ),
        ))
    }

    fn sync_mask_reg(op: &Op) -> Option<Reg> {
        match *op {
            Op::Shfl { mask, .. }
            | Op::Vote { mask, .. }
            | Op::WarpSync { mask }
            | Op::Match { mask, .. }
            | Op::Redux { mask, .. } => Some(mask),
            _ => None,
        }
    }

    /// Picks the runnable group with the lowest pc. When only groups waiting at
    /// warp-synchronous instructions are left, wakes those whose missing lanes have
    /// exited, or reports the deadlock.
    fn pick(&mut self, w: usize) -> Result<Option<(u32, u32)>, SimError> {
        loop {
            let ws = &mut self.warps[w];
            let mut best: Option<usize> = None;
            for (i, g) in ws.groups.iter().enumerate() {
                if !g.wait && best.is_none_or(|b| g.pc < ws.groups[b].pc) {
                    best = Some(i);
                }
            }
            if let Some(b) = best {
                let g = ws.groups.swap_remove(b);
                return Ok(Some((g.pc, g.mask)));
            }
            if ws.groups.is_empty() {
                return Ok(None);
            }
            let mut progress = false;
            for i in 0..self.warps[w].groups.len() {
                let g = self.warps[w].groups[i];
                let Some(mreg) = Self::sync_mask_reg(&self.k.code[g.pc as usize].op) else { continue };
                let ws = &self.warps[w];
                let need = self.member_mask(w, mreg, g.mask) & ws.valid & !ws.exited;
                if need & !g.mask == 0 {
                    self.warps[w].groups[i].wait = false;
                    progress = true;
                }
            }
            if !progress {
                let g = self.warps[w].groups[0];
                let others: u32 = self.warps[w].groups.iter().skip(1).fold(0, |m, g| m | g.mask)
                    | self.warps[w].barrier.iter().fold(0, |m, g| m | g.mask);
                let need = Self::sync_mask_reg(&self.k.code[g.pc as usize].op)
                    .map_or(0, |mreg| self.member_mask(w, mreg, g.mask));
                return Err(self.warp_mask_error(
                    w,
                    g.mask.trailing_zeros() as usize,
                    g.pc,
                    format!(
                        "lanes {:#010x} of warp {w} call `{}` with member mask {need:#010x}, but lanes {:#010x} of \
                         that mask never arrive there (they are elsewhere: lanes {others:#010x}). Every lane the mask \
                         names must make the same call: compute the mask from the lanes that take the branch \
                         (__ballot_sync(0xffffffff, condition) before it), or call it outside the `if`",
                        g.mask,
                        self.k.info[g.pc as usize].text,
                        need & !g.mask
                    ),
                ));
            }
        }
    }

    fn run_warp(&mut self, w: usize) -> Result<(), SimError> {
        // A warp stops only at a barrier, a wait or its exit: nothing floats across.
        self.floating = 0;
        let k = self.k;
        let code = &k.code[..];
        let pbase = w * self.npreds;
        'pick: loop {
            let Some((mut pc, mut mask)) = self.pick(w)? else { return Ok(()) };
            let mut stop = self.next_stop(w, pc);
            loop {
                if pc == stop {
                    mask |= self.take_at(w, pc);
                    stop = self.next_stop(w, pc);
                }
                let ins = &code[pc as usize];
                self.steps += 1;
                if self.steps > self.max_steps {
                    return Err(SimError::StepLimit { steps: self.max_steps, kernel: k.name.clone() });
                }
                if self.steps & 0xFFFF == 0 && self.cancel.as_ref().is_some_and(crate::CancelFlag::is_cancelled) {
                    return Err(SimError::Cancelled { kernel: k.name.clone() });
                }
                self.thread_instr += mask.count_ones() as u64;
                let emask = if ins.guard == Guard::NONE {
                    mask
                } else {
                    let g = ins.guard.0;
                    let pm = self.preds[pbase + (g & 0x7fff) as usize];
                    if g & 0x8000 != 0 {
                        mask & !pm
                    } else {
                        mask & pm
                    }
                };
                let cycles = crate::device::issue_cycles(&ins.op, emask.count_ones());
                self.cycles += cycles;
                if crate::device::floats(&ins.op) {
                    self.floating += cycles;
                } else if !matches!(ins.op, Op::Clock { .. }) {
                    self.floating = 0;
                }
                if let Some(st) = &mut self.stats {
                    if st.data_add[pc as usize] {
                        st.totals.data_additions += emask.count_ones() as u64;
                    }
                }
                match ins.op {
                    Op::Bra { target } => {
                        if ins.guard != Guard::NONE {
                            if let Some(s) = &mut self.stats {
                                let div = emask != 0 && emask != mask;
                                s.totals.branches += 1;
                                s.totals.divergent_branches += div as u64;
                                let row = s.row(k, pc as usize);
                                row.executions += 1;
                                row.thread_accesses += mask.count_ones() as u64;
                                row.divergent += div as u64;
                            }
                        }
                        if emask == mask {
                            if target <= pc {
                                pc = target;
                                stop = self.next_stop(w, pc);
                            } else if target <= stop {
                                pc = target;
                            } else {
                                self.push_group(w, target, mask);
                                continue 'pick;
                            }
                        } else if emask == 0 {
                            pc += 1;
                        } else {
                            self.push_group(w, pc + 1, mask & !emask);
                            self.push_group(w, target, emask);
                            continue 'pick;
                        }
                    }
                    Op::BrxIdx { idx, table } => {
                        if emask == 0 {
                            pc += 1;
                            continue;
                        }
                        self.push_group(w, pc + 1, mask & !emask);
                        let targets = &k.tables[table as usize];
                        let rb = w * self.nslots * LANES + idx as usize;
                        let mut em = emask;
                        while em != 0 {
                            let l = em.trailing_zeros() as usize;
                            em &= em - 1;
                            let Some(&t) = targets.get(self.regs[rb + l] as u32 as usize) else {
                                // an index past the table: undefined on a GPU
                                let (thread, _) = self.thread_of(w, l);
                                return Err(SimError::Trap {
                                    ptx_line: k.ptx_line(pc as usize),
                                    location: k.source_of(pc as usize),
                                    kernel: k.name.clone(),
                                    thread,
                                    block: self.block_idx,
                                });
                            };
                            self.push_group(w, t, 1 << l);
                        }
                        continue 'pick;
                    }
                    Op::Call { site } => {
                        // never guarded (compile::inline)
                        let entry = self.call(w, pc, site, mask)?;
                        self.push_group(w, entry, mask);
                        continue 'pick;
                    }
                    Op::Ret { func } => {
                        self.ret(w, func, emask);
                        mask &= !emask;
                        if mask == 0 {
                            continue 'pick;
                        }
                        pc += 1;
                    }
                    Op::Exit => {
                        if self.first_exit.is_none() && emask != 0 {
                            self.first_exit = Some((pc, w as u32 * 32 + emask.trailing_zeros()));
                        }
                        self.warps[w].exited |= emask;
                        mask &= !emask;
                        if mask == 0 {
                            continue 'pick;
                        }
                        pc += 1;
                    }
                    Op::Bar | Op::BarRed { .. } => {
                        if let Op::BarRed { p, neg, .. } = ins.op {
                            let pv = self.preds[pbase + p as usize];
                            let pv = if neg { !pv } else { pv };
                            let ws = &mut self.warps[w];
                            ws.bar_pred = (ws.bar_pred & !emask) | (pv & emask);
                        }
                        if emask != 0 {
                            self.warps[w].barrier.push(Group { pc, mask: emask, wait: false });
                        }
                        mask &= !emask;
                        if mask == 0 {
                            continue 'pick;
                        }
                        pc += 1;
                    }
                    Op::MbarWait { p, space, addr, a, parity } => {
                        let all = emask == 0 || self.mbar_wait(w, pc as usize, emask, p, space, addr, a, parity)?;
                        pc += 1;
                        if !all {
                            // let the warps that will arrive run first
                            self.warps[w].yielded.push(Group { pc, mask, wait: false });
                            continue 'pick;
                        }
                    }
                    Op::Shfl { mask: mreg, .. }
                    | Op::Vote { mask: mreg, .. }
                    | Op::WarpSync { mask: mreg }
                    | Op::Match { mask: mreg, .. }
                    | Op::Redux { mask: mreg, .. } => {
                        let ws = &self.warps[w];
                        let need =
                            self.member_mask(w, mreg, if emask != 0 { emask } else { mask }) & ws.valid & !ws.exited;
                        if need & !mask != 0 {
                            self.push_wait(w, pc, mask);
                            continue 'pick;
                        }
                        if emask != 0 {
                            self.check_members(w, pc, mreg, emask)?;
                            self.exec(w, pc as usize, emask)?;
                        }
                        pc += 1;
                    }
                    _ => {
                        if !self.deferred.is_empty() {
                            // before the sink runs: a `selp` may overwrite its own predicate's inputs
                            self.settle_deferred(w, pc, emask);
                        }
                        if emask != 0 {
                            self.exec(w, pc as usize, emask)?;
                        }
                        pc += 1;
                    }
                }
            }
        }
    }
}

/// Per instruction, what the global race detector needs to know of an
/// atomic: release semantics (`.release`, `.acq_rel`: its own
/// `__threadfence()`) and whether it is an `atomicCAS`/`atomicExch`; of a
/// load, whether it may read what other blocks' atomics change (`checked`,
/// from `crate::global_race::checked_loads`).
fn atomic_flags(k: &Kernel, checked: Vec<bool>) -> Vec<u8> {
    use crate::global_race::{CHECKED, LOCK, RELEASE};
    k.code
        .iter()
        .zip(&k.info)
        .zip(checked)
        .map(|((i, info), checked)| match i.op {
            Op::Atom { op, .. } => {
                let release = info.text.contains(".release") || info.text.contains(".acq_rel");
                (if release { RELEASE } else { 0 }) | if matches!(op, AtomOp::Cas | AtomOp::Exch) { LOCK } else { 0 }
            }
            _ if checked => CHECKED,
            _ => 0,
        })
        .collect()
}
