//! Races between blocks on global memory.
//!
//! The simulator runs the blocks of a launch one after another, so a kernel
//! whose blocks each do a plain `*hits += local` never loses an update here,
//! while on a GPU, where blocks run at the same time, it does. This detector
//! finds such conflicts whatever order the blocks ran in: a shadow memory
//! records, per 4-byte word of every allocation a launch touches, the last
//! block that wrote it (plainly or atomically) and the first other block that
//! read it plainly since that write, each with its instruction. An access
//! *conflicts* with a recorded one from a different block when at least one
//! writes and they are not both atomics. A plain read conflicts with another
//! block's atomic too (`atomicExch(&bins[b], bins[b] + n)`: the read and the
//! exchange are two steps, and an update between them is lost), unless the
//! value read is what an `atomicCAS` compares the word with (the CAS loop
//! reads the word plainly first, and the CAS fails if it changed) or the load
//! is `volatile`/`.relaxed`/`.acquire` (a polled flag: no data race in the
//! memory model). See [`checked_loads`].
//!
//! A conflict is a race unless the Programming Guide's ordering covers it:
//! block A's access is followed, in A, by a `__threadfence()` (`membar.gl`,
//! `fence.sc.gpu`/`.acq_rel.gpu` or wider; a `.release`/`.acq_rel` atomic is
//! its own fence) and then an atomic on some word X; and block B, before its
//! access, did an atomic on X itself, and no block did an atomic on X after
//! B's (B drew the last ticket: only then does B's atomic prove that A's came
//! first on every schedule). An atomic by A on the very word B touches after
//! its own atomic there is covered the same way (the last block resetting the
//! ticket counter). Whether B drew the last ticket is known only at the end of
//! the launch: such conflicts wait there, and become races if another block
//! takes a ticket on X later. This is the threadfence reduction. When B's
//! atomic on X is an `atomicCAS` or `atomicExch` (a lock, or a flag set and
//! tested with atomics), B took what A released, and the two are ordered
//! whichever came first: no last-ticket condition. Flags polled with volatile
//! or `.acquire` loads are not recognised as ordering.
//!
//! Granularity is the block: a fence by any thread of A covers every access A
//! made before it (the simulator runs a block's threads in an order a barrier
//! would allow), and B's ticket covers all of B's later accesses. Writes that
//! leave the bytes as they were are not recorded (racecheck's same-value
//! rule). Per word the shadow keeps one writer and one reader, so a second
//! conflicting pair on a word already involved may go unnamed; bytes of one
//! word written by different blocks are told apart by a byte mask.
//!
//! Memory: 8 bytes per 4-byte word read and 8 per word written, in pages
//! allocated on first need, at most [`MAX_SHADOW_BYTES`] per launch; beyond that, words on new
//! pages are not checked.

use std::collections::{HashMap, HashSet};

use crate::error::Dim3;
use crate::ir::{AtomOp, FUn, IUn, Instr, InstrInfo, Op, Reg};
use crate::race::RaceKind;

/// Words per shadow page.
const PAGE_WORDS: usize = 4096;
/// Shadow memory a launch may use (16 bytes per word touched).
pub const MAX_SHADOW_BYTES: usize = 256 << 20;
/// `pc_flags` bit: an atomic with release semantics (its own fence).
pub(crate) const RELEASE: u8 = 1;
/// `pc_flags` bit: an `atomicCAS`/`atomicExch` (a lock or a flag).
pub(crate) const LOCK: u8 = 2;
/// `pc_flags` bit: a load that may read a word other blocks' atomics change
/// (see [`checked_loads`]).
pub(crate) const CHECKED: u8 = 4;
/// Distinct instruction pairs reported per launch.
pub const MAX_GLOBAL_RACES: usize = 64;

const PC_MASK: u32 = (1 << 20) - 1;
const ATOMIC: u32 = 1 << 20;
const MASK_SHIFT: u32 = 21;
const STAMP_SHIFT: u32 = 25;
const STAMP_MAX: u32 = 127;

/// What one access does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Read,
    Write,
    Atomic,
}

/// A race between two blocks on one global word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalRace {
    pub kernel: String,
    pub kind: RaceKind,
    /// The earlier access (in the simulator's order) was an atomic.
    pub atomic_a: bool,
    /// The later access was an atomic (and the earlier a plain read).
    pub atomic_b: bool,
    pub ptx_line_a: usize,
    pub ptx_line_b: usize,
    pub source_a: Option<String>,
    pub source_b: Option<String>,
    pub block_a: Dim3,
    pub block_b: Dim3,
    /// The first byte of the word (a global address).
    pub addr: u64,
    /// The buffer's name and the word's byte offset in it, where the host
    /// named the buffer (its guard zones, `Simulator::protect`).
    pub buffer: Option<(String, u64)>,
    /// How many conflicting word accesses this pair of instructions had.
    pub occurrences: u64,
}

/// One access recorded for a word, `[block, info]`: blocks are numbered from
/// 1 (0: none); the info packs the pc, the atomic bit, the byte mask and the
/// block's fence count at the access. An array, so that pages are allocated
/// zeroed (`vec![[0; 2]; n]`).
type Rec = [u32; 2];

/// A conflict found: earlier (block, info), later (block, info), kind, address.
#[derive(Clone, Copy)]
pub(crate) struct Conflict {
    pub block_a: u32,
    pub info_a: u32,
    pub block_b: u32,
    pub pc_b: u32,
    /// The later access is an atomic.
    pub atomic_b: bool,
    pub kind: RaceKind,
    pub addr: u64,
}

impl Conflict {
    pub fn pc_a(&self) -> u32 {
        self.info_a & PC_MASK
    }
    pub fn atomic_a(&self) -> bool {
        self.info_a & ATOMIC != 0
    }
}

/// The shadow of one allocation: the writers and the readers of its words,
/// in pages allocated on first need (a read-only input has no writer pages,
/// an output written once no reader pages).
#[derive(Default)]
struct AllocShadow {
    writers: Vec<Option<Box<[Rec]>>>,
    readers: Vec<Option<Box<[Rec]>>>,
}

pub(crate) struct GlobalDetector {
    shadows: Vec<AllocShadow>,
    shadow_bytes: usize,
    /// The running block, numbered from 1.
    block: u32,
    /// Its fence count (saturating at `STAMP_MAX`).
    fences: u32,
    /// Per block that fenced and then took a ticket: (ticket word, fence count then).
    releases: HashMap<u32, Vec<(u64, u32)>>,
    /// Words the running block did atomics on.
    tickets: HashSet<u64>,
    last_ticket: u64,
    /// Conflicts excused by a ticket on a word, if no later block takes one
    /// there: per word, (the excused block, conflict).
    waiting: HashMap<u64, Vec<(u32, Conflict)>>,
    pub found: Vec<(Conflict, u64)>,
    index: HashMap<(u32, u32, u8), usize>,
    /// Per pc: an atomic with `.release`/`.acq_rel` semantics (bit 0), an
    /// `atomicCAS`/`atomicExch` (bit 1: a lock or a flag, not a ticket).
    pc_flags: Vec<u8>,
    /// Words the running block did an `atomicCAS`/`atomicExch` on.
    locks: HashSet<u64>,
}

/// Per instruction: whether it is a load that may read a word other blocks'
/// (or, in shared memory, other threads') atomics change with no race. Either a strong load (`ld.volatile`,
/// `.relaxed`, `.acquire`: a polled flag), or one whose value reaches, through
/// moves and conversions, the compare operand of an `atom.cas`: the CAS loop's
/// first read, which the CAS itself checks (it fails, and the loop goes on
/// with the value it returns, when another block changed the word). Flow-
/// insensitive, as `crate::work`: a register reused for two purposes may
/// excuse a load it should not, never the other way round.
pub(crate) fn checked_loads(code: &[Instr], info: &[InstrInfo]) -> Vec<bool> {
    let mut compared: HashSet<Reg> = code
        .iter()
        .filter_map(|i| match i.op {
            Op::Atom { op: AtomOp::Cas, a, .. } => Some(a),
            _ => None,
        })
        .collect();
    loop {
        let before = compared.len();
        for i in code {
            let moved = match i.op {
                Op::IUn { op: IUn::Mov | IUn::Zext | IUn::Sext, d, a, .. }
                | Op::FUn { op: FUn::Mov, d, a, .. }
                | Op::Cvt { d, a, .. } => Some((d, a)),
                _ => None,
            };
            if let Some((d, a)) = moved {
                if compared.contains(&d) {
                    compared.insert(a);
                }
            }
        }
        if compared.len() == before {
            break;
        }
    }
    code.iter()
        .zip(info)
        .map(|(i, inf)| match i.op {
            Op::Ld { dst, vec, .. } => {
                let strong = [".volatile", ".relaxed", ".acquire"].iter().any(|m| inf.text.contains(m));
                strong || dst[..vec as usize].iter().any(|r| compared.contains(r))
            }
            _ => false,
        })
        .collect()
}

fn word_mask(off: usize, len: usize, word: usize) -> u32 {
    let (lo, hi) = (word * 4, word * 4 + 4);
    let (a, b) = (off.max(lo), (off + len).min(hi));
    if a >= b {
        return 0;
    }
    ((1u32 << (b - a)) - 1) << (a - lo)
}

/// Shadow pages kept by the process for its next launches. A page the
/// allocator hands out fresh is the operating system's zero page until first
/// written, and replacing that mapping flushes the TLB of every core the
/// process runs on: with checks side by side, that was a tenth of a
/// transpose's time. Pages come back when a launch's detector is dropped.
mod spare_pages {
    use super::{Rec, PAGE_WORDS};
    use std::sync::Mutex;

    /// At most this many pages (64 MiB: two launches over two 4-million-word
    /// buffers) kept by the process, whatever its number of threads.
    const KEEP: usize = 2048;

    static SPARE: Mutex<Vec<Box<[Rec]>>> = Mutex::new(Vec::new());

    /// A page of empty records: a kept one cleared, or a new one written
    /// through (never left to the zero page: `black_box` keeps the compiler
    /// from turning the zeros it writes into a `calloc`).
    pub(super) fn take() -> Box<[Rec]> {
        let kept = SPARE.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match kept {
            Some(mut page) => {
                page.fill([0; 2]);
                page
            }
            None => {
                let mut page = Vec::with_capacity(PAGE_WORDS);
                page.resize(PAGE_WORDS, std::hint::black_box([0u32; 2]));
                page.into_boxed_slice()
            }
        }
    }

    pub(super) fn give_back(pages: impl Iterator<Item = Box<[Rec]>>) {
        let mut spare = SPARE.lock().unwrap_or_else(|p| p.into_inner());
        let room = KEEP.saturating_sub(spare.len());
        spare.extend(pages.take(room));
    }
}

impl Drop for GlobalDetector {
    fn drop(&mut self) {
        let pages = self.shadows.drain(..).flat_map(|sh| sh.writers.into_iter().chain(sh.readers)).flatten();
        spare_pages::give_back(pages);
    }
}

impl GlobalDetector {
    /// `pc_flags`: per instruction, [`RELEASE`] and [`LOCK`] bits.
    pub fn new(nallocs: usize, pc_flags: Vec<u8>) -> Self {
        GlobalDetector {
            shadows: (0..nallocs).map(|_| AllocShadow::default()).collect(),
            shadow_bytes: 0,
            block: 0,
            fences: 0,
            releases: HashMap::new(),
            tickets: HashSet::new(),
            last_ticket: u64::MAX,
            waiting: HashMap::new(),
            found: Vec::new(),
            index: HashMap::new(),
            pc_flags,
            locks: HashSet::new(),
        }
    }

    /// A new block starts (`linear` is its index in launch order).
    pub fn new_block(&mut self, linear: u32) {
        self.block = linear.wrapping_add(1).max(1);
        self.fences = 0;
        self.tickets.clear();
        self.locks.clear();
        self.last_ticket = u64::MAX;
    }

    /// A `__threadfence()` (or wider) by a thread of the running block.
    pub fn fence(&mut self) {
        self.fences = (self.fences + 1).min(STAMP_MAX);
    }

    /// The record of `word` (its writer, or its first other reader since the
    /// last write); `create`: allocate its page if need be.
    #[inline(always)]
    fn rec(&mut self, alloc: usize, word: usize, readers: bool, create: bool) -> Option<&mut Rec> {
        let p = word / PAGE_WORDS;
        let sh = &self.shadows[alloc];
        let pages = if readers { &sh.readers } else { &sh.writers };
        if !matches!(pages.get(p), Some(Some(_))) {
            return if create { self.new_page(alloc, word, readers) } else { None };
        }
        let sh = &mut self.shadows[alloc];
        let pages = if readers { &mut sh.readers } else { &mut sh.writers };
        pages[p].as_mut().map(|pg| &mut pg[word % PAGE_WORDS])
    }

    #[cold]
    fn new_page(&mut self, alloc: usize, word: usize, readers: bool) -> Option<&mut Rec> {
        let bytes = PAGE_WORDS * std::mem::size_of::<Rec>();
        if self.shadow_bytes + bytes > MAX_SHADOW_BYTES {
            return None;
        }
        self.shadow_bytes += bytes;
        let sh = &mut self.shadows[alloc];
        let pages = if readers { &mut sh.readers } else { &mut sh.writers };
        let p = word / PAGE_WORDS;
        if p >= pages.len() {
            pages.resize_with(p + 1, || None);
        }
        let page = pages[p].insert(spare_pages::take());
        Some(&mut page[word % PAGE_WORDS])
    }

    /// One warp's access of `len` bytes per lane at the byte offsets `offs`
    /// (lanes `m`) of allocation `alloc`, whose first byte is at `base`.
    #[allow(clippy::too_many_arguments)]
    pub fn access_warp(
        &mut self,
        alloc: usize,
        base: u64,
        offs: &[usize; 32],
        m: u32,
        len: usize,
        pc: u32,
        kind: Kind,
    ) {
        let mut mm = m;
        if len <= 4 && kind != Kind::Atomic {
            // the rule: each lane within one word (accesses are aligned)
            let info = (pc & PC_MASK) | (self.fences << STAMP_SHIFT);
            let bytes = (1u32 << len) - 1;
            while mm != 0 {
                let l = mm.trailing_zeros() as usize;
                mm &= mm - 1;
                let off = offs[l];
                let bm = bytes << (off & 3);
                if bm <= 0xf {
                    self.word(alloc, base, off / 4, bm, info | (bm << MASK_SHIFT), pc, kind);
                } else {
                    self.access(alloc, base, off, len, pc, kind);
                }
            }
        } else {
            while mm != 0 {
                let l = mm.trailing_zeros() as usize;
                mm &= mm - 1;
                self.access(alloc, base, offs[l], len, pc, kind);
            }
        }
    }

    /// One lane's access of `len` bytes at byte `off` of allocation `alloc`
    /// (whose first byte is at `base`).
    #[allow(clippy::too_many_arguments)]
    pub fn access(&mut self, alloc: usize, base: u64, off: usize, len: usize, pc: u32, kind: Kind) {
        if kind == Kind::Atomic {
            self.ticket(base + (off & !3) as u64, pc);
        }
        let stamp = self.fences << STAMP_SHIFT;
        for word in off / 4..(off + len).div_ceil(4) {
            let m = word_mask(off, len, word);
            let info = (pc & PC_MASK) | (m << MASK_SHIFT) | stamp | if kind == Kind::Atomic { ATOMIC } else { 0 };
            self.word(alloc, base, word, m, info, pc, kind);
        }
    }

    /// Checks and records one access to the bytes `m` of one word.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn word(&mut self, alloc: usize, base: u64, word: usize, m: u32, info: u32, pc: u32, kind: Kind) {
        let me = self.block;
        let overlaps = |i: u32| (i >> MASK_SHIFT) & 0xf & m != 0;
        let plain_read = kind == Kind::Read && !self.checked(pc);
        let mut hit: Option<(u32, u32, RaceKind)> = None;
        match kind {
            Kind::Read => {
                if let Some(&mut [wb, wi]) = self.rec(alloc, word, false, false) {
                    if wb != 0 && wb != me && (wi & ATOMIC == 0 || plain_read) && overlaps(wi) {
                        hit = Some((wb, wi, RaceKind::WriteRead));
                    }
                }
                if let Some(r) = self.rec(alloc, word, true, true) {
                    if r[0] == 0 {
                        *r = [me, info];
                    } else if r[0] == me && r[1] != info {
                        // the latest read counts: it needs a release after it
                        r[1] = (r[1] & (0xf << MASK_SHIFT)) | info;
                    }
                }
            }
            Kind::Write => {
                if let Some(r) = self.rec(alloc, word, true, false) {
                    if r[0] != 0 && r[0] != me && overlaps(r[1]) {
                        hit = Some((r[0], r[1], RaceKind::ReadWrite));
                    }
                    r[0] = 0;
                }
                if let Some(w) = self.rec(alloc, word, false, true) {
                    if w[0] != 0 && w[0] != me && overlaps(w[1]) {
                        hit = Some((w[0], w[1], RaceKind::WriteWrite));
                    }
                    if w[0] == me && w[1] & ATOMIC == 0 {
                        w[1] = (w[1] & !(PC_MASK | (STAMP_MAX << STAMP_SHIFT))) | info;
                    } else {
                        *w = [me, info];
                    }
                }
            }
            Kind::Atomic => {
                // another block's plain read of the word, then this atomic: the
                // value read may be stale by now
                let read = self.rec(alloc, word, true, false).map(std::mem::take);
                if let Some([rb, ri]) = read {
                    if rb != 0 && rb != me && overlaps(ri) && !self.checked(ri & PC_MASK) {
                        hit = Some((rb, ri, RaceKind::ReadWrite));
                    }
                }
                if let Some(w) = self.rec(alloc, word, false, true) {
                    if w[0] != 0 && w[0] != me && w[1] & ATOMIC == 0 && overlaps(w[1]) {
                        hit = Some((w[0], w[1], RaceKind::WriteWrite));
                    }
                    *w = [me, info];
                }
            }
        }
        if let Some((block_a, info_a, race)) = hit {
            let atomic_b = kind == Kind::Atomic;
            let addr = base + word as u64 * 4;
            let c = Conflict { block_a, info_a, block_b: me, pc_b: pc, atomic_b, kind: race, addr };
            self.conflict(c);
        }
    }

    /// Whether the load at `pc` may read a word other blocks' atomics change.
    fn checked(&self, pc: u32) -> bool {
        self.pc_flags.get(pc as usize).is_some_and(|f| f & CHECKED != 0)
    }

    /// The running block takes a ticket (does an atomic) on `word`.
    fn ticket(&mut self, word: u64, pc: u32) {
        let flags = self.pc_flags.get(pc as usize).copied().unwrap_or(0);
        if flags & RELEASE != 0 {
            self.fence();
        }
        if flags & LOCK != 0 {
            self.locks.insert(word);
        }
        if word != self.last_ticket {
            self.last_ticket = word;
            self.tickets.insert(word);
        }
        if self.fences > 0 {
            let f = self.fences;
            let r = self.releases.entry(self.block).or_default();
            if let Some(i) = r.iter().position(|(x, _)| *x == word) {
                r[i].1 = f;
            } else if r.len() < 16 {
                r.push((word, f));
            }
        }
        // a later ticket on a word undoes the excuses of the blocks before
        if !self.waiting.is_empty() {
            if let Some(v) = self.waiting.get_mut(&word) {
                let me = self.block;
                let (stay, go): (Vec<_>, Vec<_>) = v.drain(..).partition(|(b, _)| *b == me);
                *v = stay;
                for (_, c) in go {
                    self.record(c);
                }
            }
        }
    }

    /// The word whose ticket orders the earlier access of `c` before the
    /// running block's, if any.
    fn ordered_by(&self, c: &Conflict, word: u64) -> Option<u64> {
        if c.atomic_a() && self.tickets.contains(&word) {
            return Some(word);
        }
        let stamp = (c.info_a >> STAMP_SHIFT) & STAMP_MAX;
        let rel = self.releases.get(&c.block_a)?;
        rel.iter().find(|&&(x, f)| (f > stamp || f == STAMP_MAX) && self.tickets.contains(&x)).map(|&(x, _)| x)
    }

    #[cold]
    fn conflict(&mut self, c: Conflict) {
        match self.ordered_by(&c, c.addr) {
            // a lock (or a flag) taken with atomicCAS/atomicExch after the other
            // block released it: ordered whichever block comes first
            Some(x) if self.locks.contains(&x) => {}
            Some(x) => {
                let v = self.waiting.entry(x).or_default();
                // one waiting conflict per instruction pair is enough
                if !v.iter().any(|(b, w)| *b == c.block_b && w.pc_a() == c.pc_a() && w.pc_b == c.pc_b) {
                    v.push((c.block_b, c));
                }
            }
            None => self.record(c),
        }
    }

    fn record(&mut self, c: Conflict) {
        let key = (c.pc_a(), c.pc_b, c.kind as u8);
        if let Some(&i) = self.index.get(&key) {
            self.found[i].1 += 1;
        } else if self.found.len() < MAX_GLOBAL_RACES {
            self.index.insert(key, self.found.len());
            self.found.push((c, 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page given back dirty comes out again empty: a later launch's shadow
    /// never sees an earlier one's records.
    #[test]
    fn kept_shadow_pages_come_back_empty() {
        let mut d = GlobalDetector::new(1, vec![0; 8]);
        d.new_block(0);
        d.access(0, 0x1000, 0, 4, 1, Kind::Write);
        let page = d.shadows[0].writers[0].as_ref().expect("a writer page");
        assert!(page[0] != [0; 2], "the write is recorded");
        drop(d);
        for _ in 0..4 {
            let page = spare_pages::take();
            assert_eq!(page.len(), PAGE_WORDS);
            assert!(page.iter().all(|r| *r == [0; 2]));
            spare_pages::give_back(std::iter::once(page));
        }
    }

    #[test]
    fn byte_masks() {
        assert_eq!(word_mask(0, 4, 0), 0xf);
        assert_eq!(word_mask(1, 1, 0), 0x2);
        assert_eq!(word_mask(0, 8, 1), 0xf);
        assert_eq!(word_mask(6, 4, 1), 0xc);
        assert_eq!(word_mask(6, 4, 2), 0x3);
        assert_eq!(word_mask(6, 4, 3), 0x0);
    }

    fn run(d: &mut GlobalDetector, block: u32, steps: &[(usize, Kind)]) {
        d.new_block(block);
        for &(off, k) in steps {
            if off == usize::MAX {
                d.fence();
            } else {
                d.access(0, 0x1000, off, 4, 7, k);
            }
        }
    }

    const FENCE: (usize, Kind) = (usize::MAX, Kind::Read);

    #[test]
    fn plain_read_modify_write_by_two_blocks_is_a_race() {
        let mut d = GlobalDetector::new(1, vec![0; 8]);
        run(&mut d, 0, &[(0, Kind::Read), (0, Kind::Write)]);
        run(&mut d, 1, &[(0, Kind::Read), (0, Kind::Write)]);
        let kinds: Vec<_> = d.found.iter().map(|(c, _)| c.kind).collect();
        assert_eq!(kinds, [RaceKind::WriteRead, RaceKind::WriteWrite]);
    }

    #[test]
    fn a_plain_read_and_another_blocks_atomic_on_the_word_are_a_race() {
        // `atomicExch(&bin, bin + n)`: read (pc 1), then the exchange (pc 2)
        let mut d = GlobalDetector::new(1, vec![0, 0, LOCK, 0]);
        for b in 0..3 {
            d.new_block(b);
            d.access(0, 0x1000, 0, 4, 1, Kind::Read);
            d.access(0, 0x1000, 0, 4, 2, Kind::Atomic);
        }
        let found: Vec<_> = d.found.iter().map(|(c, n)| (c.kind, c.atomic_a(), c.atomic_b, *n)).collect();
        assert_eq!(found, [(RaceKind::WriteRead, true, false, 2)]);
        // every block reads first, then every block does its atomic
        let mut d = GlobalDetector::new(1, vec![0; 4]);
        d.new_block(0);
        d.access(0, 0x1000, 0, 4, 1, Kind::Read);
        d.new_block(1);
        d.access(0, 0x1000, 0, 4, 2, Kind::Atomic);
        let found: Vec<_> = d.found.iter().map(|(c, _)| (c.kind, c.atomic_a(), c.atomic_b)).collect();
        assert_eq!(found, [(RaceKind::ReadWrite, false, true)]);
    }

    #[test]
    fn a_checked_read_and_another_blocks_atomic_are_not() {
        // the CAS loop's first read (pc 1, CHECKED), then the CAS (pc 2)
        let mut d = GlobalDetector::new(1, vec![0, CHECKED, LOCK, 0]);
        for b in 0..3 {
            d.new_block(b);
            d.access(0, 0x1000, 0, 4, 1, Kind::Read);
            d.access(0, 0x1000, 0, 4, 2, Kind::Atomic);
        }
        assert!(d.found.is_empty());
    }

    #[test]
    fn atomics_disjoint_words_and_shared_inputs_are_not() {
        let mut d = GlobalDetector::new(1, vec![0; 8]);
        for b in 0..4 {
            run(&mut d, b, &[(0, Kind::Atomic), (64, Kind::Read), (128 + 4 * b as usize, Kind::Write)]);
        }
        assert!(d.found.is_empty());
    }

    #[test]
    fn a_lock_with_a_fence_before_its_release_orders_the_critical_sections() {
        // every block: lock (CAS on 64), *c += x (word 0), __threadfence(), unlock (Exch on 64)
        for (fence, races) in [(true, 0), (false, 2)] {
            let mut d = GlobalDetector::new(1, vec![LOCK; 8]);
            for b in 0..4 {
                let mut s = vec![(64, Kind::Atomic), (0, Kind::Read), (0, Kind::Write)];
                if fence {
                    s.push(FENCE);
                }
                s.push((64, Kind::Atomic));
                run(&mut d, b, &s);
            }
            assert_eq!(d.found.len(), races, "fence {fence}");
        }
    }

    #[test]
    fn the_last_ticket_orders_the_partials_and_an_earlier_one_does_not() {
        // partial of block b at 4b, ticket counter at 64; the last block reads all
        let blocks = 4u32;
        let mut d = GlobalDetector::new(1, vec![0; 8]);
        for b in 0..blocks {
            let mut s = vec![(4 * b as usize, Kind::Write), FENCE, (64, Kind::Atomic)];
            if b == blocks - 1 {
                s.extend((0..blocks as usize).map(|i| (4 * i, Kind::Read)));
                s.push((64, Kind::Write)); // count = 0
            }
            run(&mut d, b, &s);
        }
        assert!(d.found.is_empty(), "{:?}", d.found.len());
        // without the fence, the partials are not ordered
        let mut d = GlobalDetector::new(1, vec![0; 8]);
        for b in 0..blocks {
            let mut s = vec![(4 * b as usize, Kind::Write), (64, Kind::Atomic)];
            if b == blocks - 1 {
                s.extend((0..blocks as usize).map(|i| (4 * i, Kind::Read)));
            }
            run(&mut d, b, &s);
        }
        assert_eq!(d.found.len(), 1);
        // every block reads its predecessor's partial after its ticket: only the last is ordered
        let mut d = GlobalDetector::new(1, vec![0; 8]);
        for b in 0..blocks {
            let mut s = vec![(4 * b as usize, Kind::Write), FENCE, (64, Kind::Atomic)];
            if b > 0 {
                s.push((4 * (b as usize - 1), Kind::Read));
            }
            run(&mut d, b, &s);
        }
        assert_eq!(d.found.len(), 1);
        assert_eq!(d.found[0].1, 2, "blocks 1 and 2 were not the last to take a ticket");
    }
}
