//! `mbarrier` objects and bulk copies (`cuda::barrier`, `cuda::memcpy_async`,
//! TMA-style `cp.async.bulk`).
//!
//! An mbarrier lives in shared memory as an opaque 64-bit word; the simulator
//! keeps its state beside the block (keyed by its shared-memory offset): the
//! current phase, the arrivals still pending in it, the count each phase expects,
//! and the transaction bytes still outstanding. A phase completes when both
//! reach zero. An arrive returns the phase it arrived in as the state token;
//! `test_wait`/`try_wait` with that token succeed once the phase has moved on
//! (with `.parity`: once the phase of that parity has completed).
//!
//! Copies are done when issued (see `compile::asynch`), so a bulk copy completes
//! its transaction bytes at once. For the race detector, the completion of a
//! phase orders the block's accesses like `__syncthreads()` (a phase that every
//! thread waits on is a barrier; one that only some threads wait on is treated
//! the same, which can hide a race but never reports a false one).

use std::collections::{HashMap, VecDeque};

use super::mem::MemAccess;
use super::Exec;
use crate::error::SimError;
use crate::ir::*;
use crate::memory::{SHARED_WINDOW, WINDOW_SIZE};

/// The state of one mbarrier object.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Mbar {
    phase: u64,
    expected: i64,
    pending: i64,
    tx: i64,
}

/// The block's mbarriers, and how many times any of them changed (for the
/// scheduler's deadlock check).
#[derive(Debug, Default)]
pub(super) struct Mbars {
    objs: HashMap<usize, Mbar>,
    pub(super) events: u64,
}

impl Mbars {
    pub(super) fn clear(&mut self) {
        self.objs.clear();
    }
}

/// Shared-memory ranges: (offset, length).
type Ranges = Vec<(usize, usize)>;

/// Destinations of `cp.async` copies a thread has not waited for, by thread:
/// those not yet committed, then the committed groups, oldest first.
#[derive(Debug, Default)]
pub(super) struct Copies {
    threads: HashMap<u32, (Ranges, VecDeque<Ranges>)>,
}

/// Copies (or groups) a thread may leave pending before the oldest are taken as done.
const MAX_PENDING: usize = 1024;

/// Marks the destinations of completed copies as written.
fn complete(init: &mut [u8], done: Ranges) {
    for (off, len) in done {
        init[off..off + len].fill(1);
    }
}

impl Copies {
    pub(super) fn clear(&mut self) {
        self.threads.clear();
    }
}

impl Exec<'_> {
    /// Marks the destinations of the lanes' copies as not yet written.
    pub(super) fn async_pending(&mut self, w: usize, m: u32, space: Space, addr: Addr, len: u8) {
        if self.init.is_none() {
            return;
        }
        let addrs = self.addrs(w, m, addr);
        let len = len as usize;
        let shared = self.shared.len() as u64;
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let off = match space {
                Space::Generic => addrs[l].wrapping_sub(SHARED_WINDOW),
                _ => addrs[l],
            };
            if off.saturating_add(len as u64) > shared {
                continue; // not shared memory: the store reported it
            }
            let off = off as usize;
            let Some(init) = &mut self.init else { return };
            let (open, groups) = self.copies.threads.entry((w * 32 + l) as u32).or_default();
            // Untrusted code may issue copies without end: past a bound, the oldest
            // count as complete (a missed report, never a false one).
            if open.len() >= MAX_PENDING {
                complete(init, std::mem::take(open));
            }
            if groups.len() >= MAX_PENDING {
                complete(init, groups.pop_front().unwrap_or_default());
            }
            init[off..off + len].fill(0);
            open.push((off, len));
        }
    }

    pub(super) fn async_commit(&mut self, w: usize, m: u32) {
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            if let Some((open, groups)) = self.copies.threads.get_mut(&((w * 32 + l) as u32)) {
                if !open.is_empty() {
                    groups.push_back(std::mem::take(open));
                }
            }
        }
    }

    /// Completes all but the `n` most recent committed groups of each lane.
    pub(super) fn async_wait(&mut self, w: usize, m: u32, n: u32) {
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let Some((_, groups)) = self.copies.threads.get_mut(&((w * 32 + l) as u32)) else { continue };
            while groups.len() > n as usize {
                let done = groups.pop_front().unwrap_or_default();
                if let Some(init) = &mut self.init {
                    complete(init, done);
                }
            }
        }
    }

    /// The shared-memory offset of lane `l`'s mbarrier operand.
    fn mbar_offset(&self, w: usize, pc: usize, l: usize, space: Space, a: u64) -> Result<usize, SimError> {
        let off = match space {
            Space::Shared => Some(a),
            Space::Generic if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&a) => Some(a - SHARED_WINDOW),
            _ => None,
        };
        match off.filter(|&o| o % 8 == 0 && o + 8 <= self.shared.len() as u64) {
            Some(o) => Ok(o as usize),
            None => {
                let (thread, _) = self.thread_of(w, l);
                Err(SimError::IllegalAddress {
                    addr: a,
                    space: format!("{} (an mbarrier must be 8-byte aligned shared memory)", space.name()),
                    ptx_line: self.k.ptx_line(pc),
                    location: self.k.source_of(pc),
                    kernel: self.k.name.clone(),
                    thread,
                    block: self.block_idx,
                })
            }
        }
    }

    fn mbar_state(&mut self, off: usize) -> &mut Mbar {
        self.mbars.objs.entry(off).or_default()
    }

    /// Completes the phase of the mbarrier at `off` if nothing is pending.
    fn mbar_settle(&mut self, off: usize) {
        let b = self.mbar_state(off);
        if b.pending <= 0 && b.tx == 0 {
            b.phase += 1;
            b.pending = b.expected;
            if let Some(r) = &mut self.race {
                r.barrier();
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn mbar(
        &mut self,
        w: usize,
        pc: usize,
        m: u32,
        op: MbarOp,
        space: Space,
        addr: Addr,
        d: Reg,
        a: Reg,
    ) -> Result<(), SimError> {
        let addrs = self.addrs(w, m, addr);
        let rb = w * self.nslots * LANES;
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let off = self.mbar_offset(w, pc, l, space, addrs[l])?;
            let n = if a == NO_REG { 0 } else { self.regs[rb + a as usize + l] as u32 as i64 };
            let mut b = *self.mbar_state(off);
            let token = b.phase;
            match op {
                MbarOp::Init => {
                    b = Mbar { phase: 0, expected: n, pending: n, tx: 0 };
                    // the word is written: later reads of it are not uninitialised
                    if let Some(init) = &mut self.init {
                        init[off..off + 8].fill(1);
                    }
                }
                MbarOp::Inval => {
                    self.mbars.objs.remove(&off);
                    continue;
                }
                MbarOp::Arrive => b.pending -= n,
                MbarOp::ArriveDrop => {
                    b.pending -= n;
                    b.expected -= n;
                }
                MbarOp::ArriveExpectTx => {
                    b.tx += n;
                    b.pending -= 1;
                }
                MbarOp::ExpectTx => b.tx += n,
                MbarOp::CompleteTx => b.tx -= n,
            }
            *self.mbar_state(off) = b;
            if d != NO_REG {
                self.regs[rb + d as usize + l] = token;
            }
            self.mbars.events += 1;
            if op != MbarOp::Init {
                self.mbar_settle(off);
            }
        }
        Ok(())
    }

    /// Sets `p` for the lanes whose phase has completed; returns whether all have.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mbar_wait(
        &mut self,
        w: usize,
        pc: usize,
        m: u32,
        p: Pred,
        space: Space,
        addr: Addr,
        a: Reg,
        parity: bool,
    ) -> Result<bool, SimError> {
        let addrs = self.addrs(w, m, addr);
        let rb = w * self.nslots * LANES;
        let mut done = 0u32;
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let off = self.mbar_offset(w, pc, l, space, addrs[l])?;
            let v = self.regs[rb + a as usize + l];
            let phase = self.mbar_state(off).phase;
            let complete = if parity { phase & 1 != v & 1 } else { phase > v };
            done |= (complete as u32) << l;
        }
        let pv = &mut self.preds[w * self.npreds + p as usize];
        *pv = (*pv & !m) | done;
        Ok(done == m)
    }

    /// A bulk copy, lane by lane in 16-byte pieces through the ordinary load and
    /// store paths (bounds, guard zones, statistics, races), then its
    /// transaction bytes complete on the mbarrier.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bulk_copy(
        &mut self,
        w: usize,
        pc: usize,
        m: u32,
        dst: Addr,
        dspace: Space,
        src: Addr,
        sspace: Space,
        size: Reg,
        mbar: Addr,
        mspace: Space,
        tmp: [Reg; 4],
    ) -> Result<(), SimError> {
        let (da, sa) = (self.addrs(w, m, dst), self.addrs(w, m, src));
        let rb = w * self.nslots * LANES;
        let ty = MemTy { size: 8, signed: false };
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let n = self.regs[rb + size as usize + l] as u32 as u64;
            if n % 16 != 0 {
                let (thread, _) = self.thread_of(w, l);
                return Err(SimError::MisalignedAddress {
                    addr: sa[l],
                    size: n as u32,
                    space: "global (a bulk copy's size must be a multiple of 16)".into(),
                    ptx_line: self.k.ptx_line(pc),
                    location: self.k.source_of(pc),
                    kernel: self.k.name.clone(),
                    thread,
                    block: self.block_idx,
                });
            }
            let vals = [tmp[0], tmp[1], NO_REG, NO_REG];
            let at = |base: Reg| Addr { base, base32: false, offset: 0 };
            for o in (0..n).step_by(16) {
                self.regs[rb + tmp[2] as usize + l] = sa[l].wrapping_add(o);
                self.regs[rb + tmp[3] as usize + l] = da[l].wrapping_add(o);
                self.ld(w, pc, 1 << l, MemAccess { space: sspace, ty, vec: 2, addr: at(tmp[2]) }, vals)?;
                self.st(w, pc, 1 << l, MemAccess { space: dspace, ty, vec: 2, addr: at(tmp[3]) }, vals)?;
            }
            self.regs[rb + tmp[0] as usize + l] = n;
            self.mbar(w, pc, 1 << l, MbarOp::CompleteTx, mspace, mbar, NO_REG, tmp[0])?;
        }
        Ok(())
    }
}
