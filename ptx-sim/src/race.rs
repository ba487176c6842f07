//! Shared-memory race detection.
//!
//! Two accesses to the same shared byte race when they come from different
//! threads of a block, at least one writes, they are not both atomics, and no
//! barrier separates them: `bar.sync` orders the whole block, `bar.warp.sync`
//! (`__syncwarp`) orders the lanes of one warp. The shadow keeps, per byte, the
//! last writer and up to two readers of the current barrier interval (an
//! "epoch"), which finds every race whose accesses lie in one interval.

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
fn concurrent(a: &Acc, epoch: u32, tid: u16, atomic: bool, wsync: &[u32]) -> bool {
    if a.epoch != epoch || a.tid == NONE || a.tid == tid || (a.pc & ATOMIC != 0 && atomic) {
        return false;
    }
    let (wa, wb) = (a.tid / 32, tid / 32);
    !(wa == wb && wsync[wa as usize] as u16 != a.wsync)
}

/// Checks one shadow cell and records the access; returns a conflict if any.
#[inline(always)]
fn check(c: &mut Cell, me: Acc, write: bool, atomic: bool, wsync: &[u32]) -> Option<(Acc, RaceKind)> {
    let mut hit = None;
    if concurrent(&c.w, me.epoch, me.tid, atomic, wsync) {
        hit = Some((c.w, if write { RaceKind::WriteWrite } else { RaceKind::WriteRead }));
    }
    if write {
        if hit.is_none() {
            for r in [c.r1, c.r2] {
                if concurrent(&r, me.epoch, me.tid, atomic, wsync) {
                    hit = Some((r, RaceKind::ReadWrite));
                    break;
                }
            }
        }
        c.w = me;
    } else if c.r1.epoch != me.epoch || c.r1.tid == me.tid {
        c.r1 = me;
    } else {
        // keep readers from two distinct threads: any later writer differs from one
        c.r2 = me;
    }
    hit
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

    pub fn access(&mut self, off: usize, len: usize, tid: u32, pc: u32, write: bool, atomic: bool) {
        let wsync = self.wsync[(tid / 32) as usize] as u16;
        let me = Acc { epoch: self.epoch, pc: pc | if atomic { ATOMIC } else { 0 }, tid: tid as u16, wsync };
        let end = (off + len).min(self.words.len() * 4);
        if off % 4 == 0 && len % 4 == 0 {
            for wd in off / 4..end / 4 {
                if self.split[wd] {
                    for b in wd * 4..wd * 4 + 4 {
                        if let Some(h) = check(&mut self.bytes[b], me, write, atomic, &self.wsync) {
                            self.report(h, me, b);
                        }
                    }
                } else if let Some(h) = check(&mut self.words[wd], me, write, atomic, &self.wsync) {
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
                if let Some(h) = check(&mut self.bytes[b], me, write, atomic, &self.wsync) {
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
