//! Shared-memory race detection.
//!
//! The rules are compute-sanitizer racecheck's, so that a kernel the GPU runs
//! correctly is never called racy: two accesses to the same shared byte race
//! when they come from different threads of a block, no barrier separates them
//! (`bar.sync` orders the whole block, `bar.warp.sync` / `__syncwarp` the lanes
//! of one warp), and
//! - a plain write meets a plain read, a plain write, or an atomic; or
//! - a plain read meets an atomic, in either order: the value read depends on
//!   whether the other thread's atomic came first (a privatized histogram
//!   merged by a warp while other warps still count into it). Racecheck does
//!   not pair these; the rule is the one `crate::global_race` applies between
//!   blocks, with its exceptions: a load whose value an `atomicCAS` compares
//!   the word with (the Programming Guide's CAS loop reads the word plainly
//!   first, and the CAS fails if it changed) and a `volatile`/`.relaxed`/
//!   `.acquire` load (a polled flag) never race with an atomic
//!   (`crate::global_race::checked_loads`);
//! - atomic vs atomic is never a race, and a plain write that leaves the bytes
//!   as they were (every thread storing the same value) is harmless,
//!   racecheck's "INFO" level: it is not recorded.
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
    /// The earlier access was an atomic.
    pub atomic_a: bool,
    /// The later access was an atomic.
    pub atomic_b: bool,
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
/// `Acc::pc` bit: an atomic.
pub(crate) const ATOMIC: u32 = 1 << 31;
/// `Acc::pc` bit: a load that may meet another thread's atomic (see the module doc).
const CHECKED: u32 = 1 << 30;
/// `Acc::pc` bits of the instruction's index.
pub(crate) const PC: u32 = CHECKED - 1;

/// One recorded access, packed to 12 bytes (the shadow is large).
#[derive(Clone, Copy)]
#[cfg_attr(test, derive(Debug, PartialEq, Eq))]
struct Acc {
    epoch: u32,
    /// pc, with `ATOMIC` set for atomics and `CHECKED` for checked loads.
    pc: u32,
    tid: u16,
    /// The warp's `__syncwarp` count at the access (wrapping; compared for equality).
    wsync: u16,
}

const EMPTY: Acc = Acc { epoch: 0, pc: 0, tid: NONE, wsync: 0 };

#[derive(Clone, Copy)]
#[cfg_attr(test, derive(Debug, PartialEq, Eq))]
struct Cell {
    w: Acc,
    r1: Acc,
    r2: Acc,
}

const EMPTY_CELL: Cell = Cell { w: EMPTY, r1: EMPTY, r2: EMPTY };

/// A conflict found by the shadow: `(pc_a, tid_a, pc_b, tid_b, offset, kind)`;
/// each pc with its `ATOMIC` bit (mask with `PC` for the index).
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
    /// Per instruction: a load that may meet another thread's atomic.
    checked: Vec<bool>,
    /// Runs of lanes recorded at once by [`Detector::record_run`] (for the tests).
    #[cfg(test)]
    runs_at_once: u64,
    /// Warps [`Detector::read_halves`] recorded by pairs (for the tests).
    #[cfg(test)]
    halves_at_once: u64,
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

/// The tids of the first and the last lane of `run` in warp `warp`.
#[inline(always)]
fn run_ends(run: u32, warp: u32) -> (u16, u16) {
    ((warp * 32 + run.trailing_zeros()) as u16, (warp * 32 + 31 - run.leading_zeros()) as u16)
}

/// The lanes of `lanes` at the offset of the lane of `lanes` before them:
/// where runs of lanes on the same words start and go on.
#[inline(always)]
fn same_as_previous(offs: &[usize; 32], lanes: u32) -> u32 {
    let mut same = 0u32;
    if lanes == u32::MAX {
        // a whole warp: a branch-free pass the compiler vectorizes
        for l in 1..32 {
            same |= ((offs[l] == offs[l - 1]) as u32) << l;
        }
    } else {
        let (mut m, mut prev) = (lanes, None);
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if prev == Some(offs[l]) {
                same |= 1 << l;
            }
            prev = Some(offs[l]);
        }
    }
    same
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
            // a checked read (a CAS loop's first, a volatile one) may meet an atomic
            let excused = w_atomic && me.pc & CHECKED != 0;
            let hit = (!excused && concurrent(&c.w, me.epoch, me.tid, wsync)).then_some((c.w, RaceKind::WriteRead));
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
                hit = unordered_reader(c, me, wsync, false);
            }
            c.w = me;
            hit
        }
        Kind::Atomic => {
            // an unordered plain write or plain read races with an atomic; atomics do not
            let plain_w = !w_atomic && c.w.epoch == me.epoch && c.w.tid != NONE;
            let mut hit = (plain_w && concurrent(&c.w, me.epoch, me.tid, wsync)).then_some((c.w, RaceKind::WriteWrite));
            if hit.is_none() {
                hit = unordered_reader(c, me, wsync, true);
            }
            // keep a plain write of this interval: later atomics and reads of other threads race with it
            if !plain_w {
                c.w = me;
            }
            hit
        }
    }
}

/// A recorded read unordered with `me`'s write (`atomic`: an atomic, which
/// checked reads may meet).
#[inline(always)]
fn unordered_reader(c: &Cell, me: Acc, wsync: &[u32], atomic: bool) -> Option<(Acc, RaceKind)> {
    // r1 first, then r2; tested in place (copying them into an array to
    // iterate was a tenth of `access_warp` on stores)
    let races = |r: &Acc| !(atomic && r.pc & CHECKED != 0) && concurrent(r, me.epoch, me.tid, wsync);
    if races(&c.r1) {
        Some((c.r1, RaceKind::ReadWrite))
    } else if races(&c.r2) {
        Some((c.r2, RaceKind::ReadWrite))
    } else {
        None
    }
}

impl Detector {
    /// `checked`: per instruction, a load that may meet another thread's
    /// atomic (`crate::global_race::checked_loads`).
    pub fn new(shared_bytes: usize, nwarps: usize, checked: Vec<bool>) -> Self {
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
            checked,
            #[cfg(test)]
            runs_at_once: 0,
            #[cfg(test)]
            halves_at_once: 0,
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
        let me = self.me(tid / 32, pc, kind);
        self.access_as(off, len, Acc { tid: tid as u16, ..me }, kind);
    }

    /// [`Detector::access`] of every lane of `lanes` of warp `warp`, lane `l`
    /// at `offs[l]`, in the order of the lanes: what does not change from
    /// lane to lane (the warp's `__syncwarp` count, the instruction's flags)
    /// is worked out once, and a run of consecutive lanes reading the same
    /// words (a broadcast, as a tiled matrix product's `As[ty][k]`) is
    /// recorded at once where none of its lanes can race ([`Detector::read_run`]),
    /// and so is a 16-wide tile's row read by both halves ([`Detector::read_halves`]).
    pub fn access_warp(&mut self, offs: &[usize; 32], lanes: u32, len: usize, warp: u32, pc: u32, kind: Kind) {
        if lanes == 0 {
            return;
        }
        let me = self.me(warp, pc, kind);
        let same = if kind == Kind::Read && len % 4 == 0 { same_as_previous(offs, lanes) } else { 0 };
        let mut m = lanes;
        if same == 0 {
            if kind == Kind::Read && len == 4 && lanes == u32::MAX && self.read_halves(offs, warp, me) {
                return;
            }
            // no two consecutive lanes on the same offset (or not a read of words)
            while m != 0 {
                let l = m.trailing_zeros();
                m &= m - 1;
                self.access_as(offs[l as usize], len, Acc { tid: (warp * 32 + l) as u16, ..me }, kind);
            }
            return;
        }
        while m != 0 {
            // the run of lane `l`: it and the next lanes of `m` in `same`, up to the next lane not in it
            let l = m.trailing_zeros();
            let starts = m & (m - 1) & !same;
            let below_next = if starts == 0 { u32::MAX } else { (starts & starts.wrapping_neg()) - 1 };
            let mut run = m & below_next;
            m &= !below_next;
            let off = offs[l as usize];
            if run & (run - 1) != 0 && self.read_run(off, len, run, warp, me) {
                continue;
            }
            while run != 0 {
                let l = run.trailing_zeros();
                run &= run - 1;
                self.access_as(off, len, Acc { tid: (warp * 32 + l) as u16, ..me }, kind);
            }
        }
    }

    /// Reads of the whole words at `off..off + len` by the lanes `run` (two or
    /// more) of warp `warp`, as `access_as` would record them lane by lane, in
    /// lane order; false (and nothing recorded) unless that is certain to find
    /// no race: every word kept whole and in the shadow, and no lane's read
    /// concurrent with the word's writer.
    ///
    /// Then `check` leaves `w` as it was and only moves the readers. Lanes have
    /// distinct tids; `me` is the same for all but its tid; `E` is `me.epoch`:
    /// - `r1` from an older epoch: the first lane takes `r1`, each later lane
    ///   `r2`, so `r2` is the last lane;
    /// - `r1` of this epoch by thread `T`: each lane takes `r2`, except the lane
    ///   of thread `T` (if in `run`), which takes `r1` (and keeps it: no later
    ///   lane has its tid), so `r2` is the last lane other than `T`'s.
    fn read_run(&mut self, off: usize, len: usize, run: u32, warp: u32, me: Acc) -> bool {
        if !self.run_is_safe(off, len, run, warp, me) {
            return false;
        }
        self.record_run(off, len, run, warp, me);
        true
    }

    /// A whole warp's one-word reads in which lane `l + 16` reads lane `l`'s
    /// word and the lower half's words rise (a 16-wide tile's `Bs[k][tx]`):
    /// each pair is recorded as [`Detector::read_run`] records a run, the
    /// pairs' words all distinct; false (and nothing recorded) unless no
    /// pair can race, so that a race is still reported lane by lane.
    fn read_halves(&mut self, offs: &[usize; 32], warp: u32, me: Acc) -> bool {
        let mut ok = true;
        for l in 0..16 {
            ok &= offs[l + 16] == offs[l];
        }
        for l in 0..15 {
            ok &= offs[l + 1] > offs[l];
        }
        let pair = |l: usize| 1u32 << l | 1 << (l + 16);
        if !ok || !(0..16).all(|l| self.run_is_safe(offs[l], 4, pair(l), warp, me)) {
            return false;
        }
        for (l, &off) in offs[..16].iter().enumerate() {
            self.record_run(off, 4, pair(l), warp, me);
        }
        #[cfg(test)]
        {
            self.halves_at_once += 1;
        }
        true
    }

    /// Whether [`Detector::read_run`] may record the lanes `run` at once.
    #[inline(always)]
    fn run_is_safe(&self, off: usize, len: usize, run: u32, warp: u32, me: Acc) -> bool {
        let (w0, w1) = (off / 4, (off + len) / 4);
        if off % 4 != 0 || w1 > self.words.len() {
            return false;
        }
        let (first, last) = run_ends(run, warp);
        for wd in w0..w1 {
            if self.split[wd] {
                return false;
            }
            let c = &self.words[wd];
            let excused = c.w.pc & ATOMIC != 0 && me.pc & CHECKED != 0;
            // `concurrent` depends on the reader's tid only through `a.tid == tid`:
            // with two lanes or more, one of `first` and `last` is not the writer
            let probe = if c.w.tid == first { last } else { first };
            if !excused && concurrent(&c.w, me.epoch, probe, &self.wsync) {
                return false;
            }
        }
        true
    }

    /// What `access_as` leaves after reading lanes `run` one by one, where
    /// [`Detector::run_is_safe`] holds.
    #[inline(always)]
    fn record_run(&mut self, off: usize, len: usize, run: u32, warp: u32, me: Acc) {
        let (w0, w1) = (off / 4, (off + len) / 4);
        let (first, last) = run_ends(run, warp);
        let base = (warp * 32) as u16;
        for c in &mut self.words[w0..w1] {
            if c.r1.epoch != me.epoch {
                c.r1 = Acc { tid: first, ..me };
                c.r2 = Acc { tid: last, ..me };
                continue;
            }
            // the lane of `r1`'s thread, if in `run` (tids are lane tids as u16, as in `access_warp`)
            let l = c.r1.tid.wrapping_sub(base) as u32;
            if l < 32 && run >> l & 1 == 1 {
                c.r1 = Acc { tid: c.r1.tid, ..me };
                let others = run & !(1 << l);
                c.r2 = Acc { tid: base.wrapping_add((31 - others.leading_zeros()) as u16), ..me };
            } else {
                c.r2 = Acc { tid: last, ..me };
            }
        }
        #[cfg(test)]
        {
            self.runs_at_once += 1;
        }
    }

    /// The record of an access by warp `warp` at `pc` (its `tid` to be set).
    #[inline(always)]
    fn me(&self, warp: u32, pc: u32, kind: Kind) -> Acc {
        let wsync = self.wsync[warp as usize] as u16;
        let flag = match kind {
            Kind::Atomic => ATOMIC,
            Kind::Read if self.checked.get(pc as usize).copied().unwrap_or(false) => CHECKED,
            _ => 0,
        };
        Acc { epoch: self.epoch, pc: pc | flag, tid: NONE, wsync }
    }

    #[inline(always)]
    fn access_as(&mut self, off: usize, len: usize, me: Acc, kind: Kind) {
        let end = (off + len).min(self.words.len() * 4);
        if off % 4 == 0 && len == 4 {
            // one word (the common case): the loop below, without the loop
            if off / 4 < self.words.len() {
                self.access_word(off / 4, me, kind);
            }
        } else if off % 4 == 0 && len % 4 == 0 {
            for wd in off / 4..end / 4 {
                self.access_word(wd, me, kind);
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

    /// An access covering word `wd` whole.
    #[inline(always)]
    fn access_word(&mut self, wd: usize, me: Acc, kind: Kind) {
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

    #[cold]
    fn report(&mut self, (a, kind): (Acc, RaceKind), me: Acc, off: usize) {
        let keep = PC | ATOMIC;
        let c: Conflict = (a.pc & keep, a.tid as u32, me.pc & keep, me.tid as u32, off as u32, kind);
        let key = (c.0, c.2, c.5 as u8);
        if let Some(&i) = self.index.get(&key) {
            self.found[i].2 += 1;
        } else if self.found.len() < MAX_RACES {
            self.index.insert(key, self.found.len());
            self.found.push((c, self.block, 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    const COUNT: u32 = 1; // pc of the atomic
    const MERGE: u32 = 2; // pc of a plain read
    const CAS_READ: u32 = 3; // pc of a load that feeds a CAS (checked)

    /// A block of 64 threads (two warps) over 16 bytes of shared memory.
    fn detector() -> Detector {
        let mut checked = vec![false; 4];
        checked[CAS_READ as usize] = true;
        Detector::new(16, 2, checked)
    }

    fn kinds(d: &Detector) -> Vec<(RaceKind, bool, bool)> {
        d.found.iter().map(|&((a, _, b, _, _, kind), ..)| (kind, a & ATOMIC != 0, b & ATOMIC != 0)).collect()
    }

    #[test]
    fn a_plain_read_and_another_threads_atomic_race_in_either_order() {
        // warp 0 counts and merges before warp 1 has counted
        let mut d = detector();
        d.access(0, 4, 0, COUNT, Kind::Atomic);
        d.access(0, 4, 40, MERGE, Kind::Read);
        assert_eq!(kinds(&d), [(RaceKind::WriteRead, true, false)]);
        let mut d = detector();
        d.access(0, 4, 0, MERGE, Kind::Read);
        d.access(0, 4, 40, COUNT, Kind::Atomic);
        assert_eq!(kinds(&d), [(RaceKind::ReadWrite, false, true)]);
        // lanes of one warp with no __syncwarp between are not ordered either
        let mut d = detector();
        d.access(0, 4, 3, COUNT, Kind::Atomic);
        d.access(0, 4, 5, MERGE, Kind::Read);
        assert_eq!(kinds(&d).len(), 1);
    }

    #[test]
    fn a_cas_loops_first_read_meets_atomics_cleanly() {
        let mut d = detector();
        for t in 0..64 {
            d.access(4, 4, t, CAS_READ, Kind::Read);
            d.access(4, 4, t, COUNT, Kind::Atomic);
        }
        assert!(d.found.is_empty());
        // a plain write still races with them
        d.access(4, 4, 9, MERGE, Kind::Write);
        assert_eq!(kinds(&d), [(RaceKind::WriteWrite, true, false)]);
    }

    #[test]
    fn atomics_alone_never_race() {
        let mut d = detector();
        for t in 0..64 {
            d.access(8 * (t as usize % 2), 4, t, COUNT, Kind::Atomic);
        }
        assert!(d.found.is_empty());
    }

    #[test]
    fn a_read_after_a_barrier_or_a_syncwarp_or_by_the_same_thread_is_ordered() {
        let mut d = detector();
        for t in 0..64 {
            d.access(0, 4, t, COUNT, Kind::Atomic);
        }
        d.access(0, 4, 63, MERGE, Kind::Read);
        assert_eq!(d.found.len(), 0, "the last thread's own atomic");
        d.barrier();
        for t in 0..64 {
            d.access(0, 4, t, MERGE, Kind::Read);
        }
        d.barrier();
        for t in 0..64 {
            d.access(0, 4, t, COUNT, Kind::Atomic);
        }
        // within one warp, __syncwarp orders the lanes
        d.barrier();
        d.access(4, 4, 1, COUNT, Kind::Atomic);
        d.wsync[0] += 1;
        d.access(4, 4, 2, MERGE, Kind::Read);
        assert!(d.found.is_empty(), "{:?}", kinds(&d));
    }

    /// A 16-wide tile's row read by both halves of every warp, after a barrier
    /// and then against another thread's write: by pairs where nothing races,
    /// lane by lane where something does, and the same shadow and races as
    /// lane by lane throughout.
    #[test]
    fn a_tiles_row_read_by_both_halves_is_recorded_by_pairs() {
        let mut fast = Detector::new(64, 3, vec![false; 4]);
        let mut slow = Detector::new(64, 3, vec![false; 4]);
        let row: [usize; 32] = std::array::from_fn(|l| 4 * (l % 16));
        for d in [&mut fast, &mut slow] {
            (0..16).for_each(|l| d.access(4 * l, 4, l as u32, 0, Kind::Write));
            d.barrier();
        }
        for warp in [0, 1, 2, 1] {
            fast.access_warp(&row, u32::MAX, 4, warp, 1, Kind::Read);
            (0..32).for_each(|l| slow.access(row[l as usize], 4, warp * 32 + l, 1, Kind::Read));
        }
        assert_eq!(fast.halves_at_once, 4);
        // a thread of warp 2 writes word 5 with no barrier: warp 0's reads race with it
        for d in [&mut fast, &mut slow] {
            d.access(20, 4, 64 + 7, 2, Kind::Write);
        }
        fast.access_warp(&row, u32::MAX, 4, 0, 3, Kind::Read);
        (0..32).for_each(|l| slow.access(row[l as usize], 4, l, 3, Kind::Read));
        assert_eq!(fast.halves_at_once, 4, "lane by lane where one pair races");
        assert!(fast.words == slow.words && fast.found == slow.found);
        assert_eq!(kinds(&fast).len(), 2, "{:?}", kinds(&fast));
    }

    /// `access_warp` (with its runs of reads and its tile rows recorded at once) against
    /// `access` lane by lane, in lane order, on random programs of three warps
    /// over 64 bytes (few words, so that lanes meet on them often): broadcast
    /// runs, barriers, `__syncwarp`s, writes and atomics of every warp, checked
    /// loads, narrow, wide, unaligned and out-of-range accesses. After every
    /// step both shadows and both lists of races are the same.
    #[test]
    fn a_warps_access_matches_its_lanes_one_by_one() {
        const PCS: u64 = 8;
        let (mut runs, mut halves, mut races) = (0, 0, 0);
        for seed in 1..=400u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let checked: Vec<bool> = (0..PCS).map(|pc| pc % 3 == 0).collect();
            let mut fast = Detector::new(64, 3, checked.clone());
            let mut slow = Detector::new(64, 3, checked);
            for step in 0..150 {
                match rng.below(24) {
                    0..=2 => {
                        fast.barrier();
                        slow.barrier();
                    }
                    3 | 4 => {
                        let w = rng.below(3) as usize;
                        fast.wsync[w] += 1;
                        slow.wsync[w] += 1;
                    }
                    _ => {
                        let kind = match rng.below(32) {
                            0 | 1 => Kind::Write,
                            2 => Kind::Atomic,
                            _ => Kind::Read,
                        };
                        // a narrow or unaligned access splits a word for good: in one seed of four
                        let narrow = seed % 4 == 0;
                        let len = [4, 4, 4, 4, 8, 16, 1, 2][rng.below(if narrow { 8 } else { 6 }) as usize];
                        let warp = rng.below(3) as u32;
                        let lanes = match rng.below(4) {
                            // most writes by one thread, most reads by the whole warp
                            _ if kind != Kind::Read && rng.below(4) != 0 => 1 << rng.below(32),
                            0 | 1 => u32::MAX,
                            2 => rng.below(1 << 32) as u32,
                            _ => (rng.below(1 << 32) | rng.below(1 << 32)) as u32,
                        };
                        let pc = rng.below(PCS) as u32;
                        let pick = |rng: &mut Rng| match rng.below(32) {
                            0 => rng.below(68) as usize,
                            1..=3 if narrow => rng.below(68) as usize,
                            _ => rng.below(68 / len as u64) as usize * len,
                        };
                        let mut offs = [0usize; 32];
                        let mut at = pick(&mut rng);
                        for o in offs.iter_mut() {
                            if rng.below(5) == 0 {
                                at = pick(&mut rng);
                            }
                            *o = at;
                        }
                        if lanes == u32::MAX && rng.below(3) == 0 {
                            // a 16-wide tile's row, read by both halves (`read_halves`): rising words
                            // from word 0 or 1 (then the last is out of range), or one word repeated
                            let (from, repeat) = (rng.below(2) as usize, rng.below(8) == 0);
                            for l in 0..16 {
                                let word = if repeat && l == 9 { from + 8 } else { from + l };
                                (offs[l], offs[l + 16]) = (4 * word, 4 * word);
                            }
                        }
                        fast.access_warp(&offs, lanes, len, warp, pc, kind);
                        let mut m = lanes;
                        while m != 0 {
                            let l = m.trailing_zeros();
                            m &= m - 1;
                            slow.access(offs[l as usize], len, warp * 32 + l, pc, kind);
                        }
                    }
                }
                assert_eq!(fast.found, slow.found, "seed {seed}, step {step}");
                assert!(fast.words == slow.words, "seed {seed}, step {step}: word shadow");
                assert!(fast.bytes == slow.bytes && fast.split == slow.split, "seed {seed}, step {step}");
            }
            runs += fast.runs_at_once;
            halves += fast.halves_at_once;
            races += fast.found.len();
        }
        // both paths were taken, and races were found
        eprintln!("{runs} runs at once, {halves} warps by halves, {races} races");
        assert!(runs > 10_000 && halves > 50 && races > 1_000, "{runs} runs, {halves} by halves, {races} races");
    }
}
