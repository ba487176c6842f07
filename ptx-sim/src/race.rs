//! Shared-memory race detection.
//!
//! The rules are compute-sanitizer racecheck's, so that a kernel the GPU runs
//! correctly is never called racy: two accesses to the same shared byte race
//! when they come from different threads of a block, no barrier separates them
//! (`bar.sync` orders the whole block, `bar.warp.sync` / `__syncwarp` the lanes
//! of one warp), and
//! - a plain write meets a plain read, a plain write, or an atomic; but
//! - atomic vs atomic is never a race, nor is a plain read vs an atomic (the
//!   Programming Guide's `atomicCAS` loop reads the word plainly first), and
//! - a plain write that leaves the bytes as they were (every thread storing the
//!   same value) is harmless, racecheck's "INFO" level: it is not recorded.
//!
//! A plain write then an atomic *is* a race: a counter cleared by one thread
//! with no barrier before the others `atomicAdd` to it passes on a GPU by luck.
//! The shadow keeps, per byte, the last writer and up to two readers of the
//! current barrier interval (an "epoch"), which finds every race whose accesses
//! lie in one interval.

use crate::error::Dim3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceKind {
    /// Two writes.
    WriteWrite,
    /// A read, then a write by another thread.
    ReadWrite,
    /// A write, then a read by another thread.
    WriteRead,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Race {
    pub kernel: String,
    pub kind: RaceKind,
    /// The earlier access.
    pub ptx_line_a: usize,
    /// The later access.
    pub ptx_line_b: usize,
    pub source_a: Option<String>,
    pub source_b: Option<String>,
    /// Byte offset in the block's shared memory (first occurrence).
    pub offset: u32,
    pub thread_a: Dim3,
    pub thread_b: Dim3,
    pub block: Dim3,
    /// How many conflicting byte accesses had this pair of instructions.
    pub occurrences: u64,
}

const NONE: u16 = u16::MAX;
const ATOMIC: u32 = 1 << 31;

/// One recorded access, packed to 12 bytes (the shadow is large).
#[derive(Clone, Copy)]
struct Acc {
    epoch: u32,
    /// pc, with `ATOMIC` set for atomics.
    pc: u32,
    tid: u16,
    /// The warp's `__syncwarp` count at the access (wrapping; compared for equality).
    wsync: u16,
}

const EMPTY: Acc = Acc { epoch: 0, pc: 0, tid: NONE, wsync: 0 };

#[derive(Clone, Copy)]
struct Cell {
    w: Acc,
    r1: Acc,
    r2: Acc,
}

const EMPTY_CELL: Cell = Cell { w: EMPTY, r1: EMPTY, r2: EMPTY };

/// A conflict found by the shadow: `(pc_a, tid_a, pc_b, tid_b, offset, kind)`.
pub(crate) type Conflict = (u32, u32, u32, u32, u32, RaceKind);

/// Distinct instruction pairs reported per launch.
pub const MAX_RACES: usize = 64;

/// The shadow is kept per 4-byte word while every access to a word covers it
/// whole (the common case), and per byte once a word sees a narrower access.
pub(crate) struct Detector {
    words: Vec<Cell>,
    bytes: Vec<Cell>,
    split: Vec<bool>,
    pub epoch: u32,
    pub wsync: Vec<u32>,
    pub block: Dim3,
    /// One entry per `(pc_a, pc_b, kind)`: the first conflict, its block and a count.
    pub found: Vec<(Conflict, Dim3, u64)>,
    index: std::collections::HashMap<(u32, u32, u8), usize>,
}

/// Whether an earlier access `a` is unordered with one by thread `tid` now.
#[inline(always)]
fn concurrent(a: &Acc, epoch: u32, tid: u16, wsync: &[u32]) -> bool {
    if a.epoch != epoch || a.tid == NONE || a.tid == tid {
        return false;
    }
    let (wa, wb) = (a.tid / 32, tid / 32);
    !(wa == wb && wsync[wa as usize] as u16 != a.wsync)
}

/// What one access does to a shadow cell.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
    Atomic,
}

/// Checks one shadow cell and records the access; returns a conflict if any.
#[inline(always)]
fn check(c: &mut Cell, me: Acc, kind: Kind, wsync: &[u32]) -> Option<(Acc, RaceKind)> {
    let w_atomic = c.w.pc & ATOMIC != 0;
    match kind {
        Kind::Read => {
            // a plain read never races with an atomic
            let hit = (!w_atomic && concurrent(&c.w, me.epoch, me.tid, wsync)).then_some((c.w, RaceKind::WriteRead));
            if c.r1.epoch != me.epoch || c.r1.tid == me.tid {
                c.r1 = me;
            } else {
                // keep readers from two distinct threads: any later writer differs from one
                c.r2 = me;
            }
            hit
        }
        Kind::Write => {
            let mut hit = concurrent(&c.w, me.epoch, me.tid, wsync).then_some((c.w, RaceKind::WriteWrite));
            if hit.is_none() {
                for r in [c.r1, c.r2] {
                    if concurrent(&r, me.epoch, me.tid, wsync) {
                        hit = Some((r, RaceKind::ReadWrite));
                        break;
                    }
                }
            }
            c.w = me;
            hit
        }
        Kind::Atomic => {
            // only an unordered plain write races with an atomic; reads and atomics do not
            let plain_w = !w_atomic && c.w.epoch == me.epoch && c.w.tid != NONE;
            let hit = (plain_w && concurrent(&c.w, me.epoch, me.tid, wsync)).then_some((c.w, RaceKind::WriteWrite));
            // keep a plain write of this interval: later atomics and reads of other threads race with it
            if !plain_w {
                c.w = me;
            }
            hit
        }
    }
}

impl Detector {
    pub fn new(shared_bytes: usize, nwarps: usize) -> Self {
        let nwords = shared_bytes.div_ceil(4);
        Detector {
            words: vec![EMPTY_CELL; nwords],
            bytes: vec![EMPTY_CELL; nwords * 4],
            split: vec![false; nwords],
            epoch: 1,
            wsync: vec![0; nwarps],
            block: (0, 0, 0),
            found: Vec::new(),
            index: Default::default(),
        }
    }

    /// A new block: everything before is ordered (a different block's memory).
    pub fn new_block(&mut self) {
        self.epoch += 1;
    }

    pub fn barrier(&mut self) {
        self.epoch += 1;
    }

    pub fn access(&mut self, off: usize, len: usize, tid: u32, pc: u32, kind: Kind) {
        let wsync = self.wsync[(tid / 32) as usize] as u16;
        let atomic = kind == Kind::Atomic;
        let me = Acc { epoch: self.epoch, pc: pc | if atomic { ATOMIC } else { 0 }, tid: tid as u16, wsync };
        let end = (off + len).min(self.words.len() * 4);
        if off % 4 == 0 && len % 4 == 0 {
            for wd in off / 4..end / 4 {
                if self.split[wd] {
                    for b in wd * 4..wd * 4 + 4 {
                        if let Some(h) = check(&mut self.bytes[b], me, kind, &self.wsync) {
                            self.report(h, me, b);
                        }
                    }
                } else if let Some(h) = check(&mut self.words[wd], me, kind, &self.wsync) {
                    self.report(h, me, wd * 4);
                }
            }
        } else {
            for b in off..end {
                let wd = b / 4;
                if !self.split[wd] {
                    self.split[wd] = true;
                    let c = self.words[wd];
                    self.bytes[wd * 4..wd * 4 + 4].fill(c);
                }
                if let Some(h) = check(&mut self.bytes[b], me, kind, &self.wsync) {
                    self.report(h, me, b);
                }
            }
        }
    }

    #[cold]
    fn report(&mut self, (a, kind): (Acc, RaceKind), me: Acc, off: usize) {
        let c: Conflict = (a.pc & !ATOMIC, a.tid as u32, me.pc & !ATOMIC, me.tid as u32, off as u32, kind);
        let key = (c.0, c.2, c.5 as u8);
        if let Some(&i) = self.index.get(&key) {
            self.found[i].2 += 1;
        } else if self.found.len() < MAX_RACES {
            self.index.insert(key, self.found.len());
            self.found.push((c, self.block, 1));
        }
    }
}
