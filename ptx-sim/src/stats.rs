//! Memory and control-flow counters: what a profiler would show on a GPU.
//!
//! Counting rules (per warp-level instruction executed with at least one active lane):
//! - global load/store: one *request*; *sectors* = distinct 32-byte segments touched
//!   by the active lanes (perfect coalescing of 32 × 4 bytes = 4 sectors).
//! - shared load/store: one request; *wavefronts* = the number of serialised bank
//!   passes. Words are 4 bytes in 32 banks; lanes reading the same word are a
//!   broadcast. Accesses wider than 4 bytes are split into phases (8 lanes per
//!   phase for 16-byte, 16 for 8-byte) as the hardware does, and each phase costs
//!   its "ways" = the most distinct words any one bank must serve.
//!   `bank_conflicts` = wavefronts − phases (0 for a conflict-free access).
//! - branches: conditional branches (`@p bra`) executed by a warp; *divergent* when
//!   the active lanes disagree.
//! - atomics: thread-level operations (one per active lane), global and shared;
//!   per block and per address (the most atomics one block made to one global
//!   address), and contention (lanes of one warp-level atomic on an address
//!   another lane of it also hit).
//! - data additions: thread-level adds whose operand came from memory (`crate::work`).

use std::collections::HashMap;

use crate::ir::{Kernel, Op, Space};

/// What a per-instruction row counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    GlobalLoad,
    GlobalStore,
    SharedLoad,
    SharedStore,
    LocalLoad,
    LocalStore,
    ConstLoad,
    ParamLoad,
    /// A generic `ld` whose lanes resolved to different spaces is counted per space
    /// in the totals and listed here once.
    GenericLoad,
    GenericStore,
    GlobalAtomic,
    SharedAtomic,
    GenericAtomic,
    Branch,
}

/// Counters for one PTX instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstrStats {
    pub ptx_line: usize,
    /// `file:line` when the PTX has `.loc` line info.
    pub source: Option<String>,
    /// The opcode as written, e.g. `ld.global.f32`.
    pub instruction: String,
    pub kind: AccessKind,
    /// Warp-level executions with at least one active lane.
    pub executions: u64,
    /// Thread-level accesses (active lanes summed).
    pub thread_accesses: u64,
    /// Global: 32-byte sectors touched.
    pub sectors: u64,
    /// Shared: bank wavefronts (≥ phases).
    pub wavefronts: u64,
    /// Shared: extra wavefronts caused by bank conflicts.
    pub bank_conflicts: u64,
    /// Shared: the worst "n-way" conflict seen.
    pub max_ways: u32,
    /// Branches: executions where the warp diverged.
    pub divergent: u64,
    /// Global load/store: the addresses of the first warp that executed it,
    /// kept so a report can draw which 32-byte sectors one warp touches.
    pub first_warp: Option<WarpAccess>,
    /// Constant loads: passes of the constant cache, one per distinct address
    /// (equal to executions when every access is a broadcast).
    pub const_passes: u64,
}

/// One warp's addresses for one global access: `None` for inactive lanes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpAccess {
    pub lanes: Vec<Option<u64>>,
    /// Bytes each lane reads or writes.
    pub bytes: u32,
}

impl WarpAccess {
    pub fn active(&self) -> u32 {
        self.lanes.iter().filter(|a| a.is_some()).count() as u32
    }
}

impl InstrStats {
    /// Average sectors per request (global).
    pub fn sectors_per_request(&self) -> f64 {
        if self.executions == 0 {
            0.0
        } else {
            self.sectors as f64 / self.executions as f64
        }
    }
}

/// Totals of one launch, plus the per-instruction table (memory, atomic and
/// branch instructions that executed, in program order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub kernel: String,
    pub global_load_requests: u64,
    pub global_load_sectors: u64,
    pub global_store_requests: u64,
    pub global_store_sectors: u64,
    /// Thread-level global loads: the active lanes of every load that reached
    /// global memory, generic loads (`ld` without a space, which clang emits
    /// for `c ? tile[i] : in[i]`) included.
    pub global_load_lanes: u64,
    /// Bytes the threads asked for (useful bytes; compare with sectors × 32).
    pub global_load_bytes: u64,
    pub global_store_bytes: u64,
    pub shared_load_requests: u64,
    pub shared_store_requests: u64,
    pub shared_load_wavefronts: u64,
    pub shared_store_wavefronts: u64,
    pub shared_bank_conflicts: u64,
    /// Local memory (`ld.local`/`st.local`, and generic accesses that reached
    /// a thread's local frame): a per-thread array the compiler could not keep
    /// in registers, or spilled registers. Warp-level requests, and the bytes
    /// the active lanes moved.
    pub local_load_requests: u64,
    pub local_store_requests: u64,
    pub local_load_bytes: u64,
    pub local_store_bytes: u64,
    pub const_load_requests: u64,
    /// Constant-cache passes: distinct addresses summed over constant loads.
    pub const_load_passes: u64,
    pub branches: u64,
    pub divergent_branches: u64,
    pub global_atomics: u64,
    pub shared_atomics: u64,
    /// Barrier releases (`__syncthreads()` completed by a block).
    pub barriers: u64,
    /// Blocks that ran.
    pub blocks: u64,
    /// The most global (and shared) atomics any one block performed.
    pub max_block_global_atomics: u64,
    pub max_block_shared_atomics: u64,
    /// The most global atomics any one block made to one address: 1 when a
    /// block merges a private copy once per address (a privatized histogram).
    pub max_global_atomics_per_block_address: u64,
    /// Distinct (block, address) pairs that got a global atomic, summed over blocks.
    pub global_atomic_block_addresses: u64,
    /// Warp-level atomic instructions (global and shared).
    pub atomic_requests: u64,
    /// Contention: lanes of a warp-level atomic whose address another lane of
    /// the same instruction also hit (they are served one after another).
    pub atomic_same_address_lanes: u64,
    /// The most lanes of one warp-level atomic on one address.
    pub max_lanes_per_atomic_address: u32,
    /// Thread-level additions (integer or float add/sub, fma, carry adds, add
    /// reductions) with an operand loaded from memory or computed from loaded
    /// values: the work of a scan or a reduction, not its index arithmetic
    /// (`crate::work`).
    pub data_additions: u64,
    pub per_instruction: Vec<InstrStats>,
}

impl Stats {
    /// Rows for one PTX source line (`.loc`), e.g. `"kernel.cu:12"` suffix match.
    pub fn at_source_line(&self, line: u32) -> impl Iterator<Item = &InstrStats> {
        let suffix = format!(":{line}");
        self.per_instruction.iter().filter(move |r| r.source.as_deref().is_some_and(|s| s.ends_with(&suffix)))
    }

    pub fn global_load_sectors_per_request(&self) -> f64 {
        ratio(self.global_load_sectors, self.global_load_requests)
    }
    pub fn global_store_sectors_per_request(&self) -> f64 {
        ratio(self.global_store_sectors, self.global_store_requests)
    }

    /// Adds another launch's counters (e.g. to total several launches of a kernel);
    /// per-instruction rows are matched by PTX line and opcode.
    pub fn merge(&mut self, o: &Stats) {
        self.global_load_requests += o.global_load_requests;
        self.global_load_sectors += o.global_load_sectors;
        self.global_store_requests += o.global_store_requests;
        self.global_store_sectors += o.global_store_sectors;
        self.global_load_lanes += o.global_load_lanes;
        self.global_load_bytes += o.global_load_bytes;
        self.global_store_bytes += o.global_store_bytes;
        self.shared_load_requests += o.shared_load_requests;
        self.shared_store_requests += o.shared_store_requests;
        self.shared_load_wavefronts += o.shared_load_wavefronts;
        self.shared_store_wavefronts += o.shared_store_wavefronts;
        self.shared_bank_conflicts += o.shared_bank_conflicts;
        self.local_load_requests += o.local_load_requests;
        self.local_store_requests += o.local_store_requests;
        self.local_load_bytes += o.local_load_bytes;
        self.local_store_bytes += o.local_store_bytes;
        self.const_load_requests += o.const_load_requests;
        self.const_load_passes += o.const_load_passes;
        self.branches += o.branches;
        self.divergent_branches += o.divergent_branches;
        self.global_atomics += o.global_atomics;
        self.shared_atomics += o.shared_atomics;
        self.barriers += o.barriers;
        self.blocks += o.blocks;
        self.max_block_global_atomics = self.max_block_global_atomics.max(o.max_block_global_atomics);
        self.max_block_shared_atomics = self.max_block_shared_atomics.max(o.max_block_shared_atomics);
        self.max_global_atomics_per_block_address =
            self.max_global_atomics_per_block_address.max(o.max_global_atomics_per_block_address);
        self.global_atomic_block_addresses += o.global_atomic_block_addresses;
        self.atomic_requests += o.atomic_requests;
        self.atomic_same_address_lanes += o.atomic_same_address_lanes;
        self.max_lanes_per_atomic_address = self.max_lanes_per_atomic_address.max(o.max_lanes_per_atomic_address);
        self.data_additions += o.data_additions;
        // one PTX instruction may be two accesses (`cp.async`: a global load and a shared store)
        for r in &o.per_instruction {
            match self
                .per_instruction
                .iter_mut()
                .find(|x| x.ptx_line == r.ptx_line && x.instruction == r.instruction && x.kind == r.kind)
            {
                Some(x) => {
                    x.executions += r.executions;
                    x.thread_accesses += r.thread_accesses;
                    x.sectors += r.sectors;
                    x.wavefronts += r.wavefronts;
                    x.bank_conflicts += r.bank_conflicts;
                    x.max_ways = x.max_ways.max(r.max_ways);
                    x.divergent += r.divergent;
                    x.const_passes += r.const_passes;
                }
                None => self.per_instruction.push(r.clone()),
            }
        }
        self.per_instruction.sort_by_key(|r| r.ptx_line);
    }

    /// A human-readable table.
    pub fn report(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "kernel {}", self.kernel);
        let _ = writeln!(
            s,
            "  global loads  {:>10} requests {:>10} sectors ({:.2}/req)",
            self.global_load_requests,
            self.global_load_sectors,
            self.global_load_sectors_per_request()
        );
        let _ = writeln!(
            s,
            "  global stores {:>10} requests {:>10} sectors ({:.2}/req)",
            self.global_store_requests,
            self.global_store_sectors,
            self.global_store_sectors_per_request()
        );
        let _ = writeln!(
            s,
            "  shared        {:>10} loads {:>10} stores, {} bank-conflict wavefronts",
            self.shared_load_requests, self.shared_store_requests, self.shared_bank_conflicts
        );
        if self.local_load_requests + self.local_store_requests > 0 {
            let _ = writeln!(
                s,
                "  local         {:>10} loads {:>10} stores, {} bytes",
                self.local_load_requests,
                self.local_store_requests,
                self.local_load_bytes + self.local_store_bytes
            );
        }
        let _ = writeln!(
            s,
            "  branches      {:>10} ({} divergent); atomics {} global, {} shared",
            self.branches, self.divergent_branches, self.global_atomics, self.shared_atomics
        );
        for r in &self.per_instruction {
            let _ = write!(
                s,
                "  line {:>5} {:<28} {:<22} x{:<8}",
                r.ptx_line,
                r.source.as_deref().unwrap_or("-"),
                r.instruction,
                r.executions
            );
            match r.kind {
                AccessKind::Branch => {
                    let _ = write!(s, " divergent {}", r.divergent);
                }
                AccessKind::SharedLoad | AccessKind::SharedStore | AccessKind::SharedAtomic => {
                    let _ = write!(s, " wavefronts {} (max {}-way)", r.wavefronts, r.max_ways);
                }
                _ => {
                    let _ = write!(s, " sectors {} ({:.2}/req)", r.sectors, r.sectors_per_request());
                }
            }
            s.push('\n');
        }
        s
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Per-launch accumulation, indexed by instruction.
pub(crate) struct Collector {
    pub rows: Vec<Option<InstrStats>>,
    pub totals: Stats,
    /// Per instruction: whether it is a data addition (`crate::work`).
    pub data_add: Vec<bool>,
    /// The running block's global atomics per address, and its atomic counts.
    block_addresses: HashMap<u64, u64>,
    block_global_atomics: u64,
    block_shared_atomics: u64,
}

impl Collector {
    pub fn new(k: &Kernel) -> Self {
        Collector {
            rows: vec![None; k.code.len()],
            totals: Stats { kernel: k.name.clone(), ..Default::default() },
            data_add: crate::work::data_additions(&k.code),
            block_addresses: HashMap::new(),
            block_global_atomics: 0,
            block_shared_atomics: 0,
        }
    }

    /// Closes the running block's per-block and per-address figures.
    pub fn end_block(&mut self) {
        let t = &mut self.totals;
        t.blocks += 1;
        t.max_block_global_atomics = t.max_block_global_atomics.max(self.block_global_atomics);
        t.max_block_shared_atomics = t.max_block_shared_atomics.max(self.block_shared_atomics);
        let most = self.block_addresses.values().copied().max().unwrap_or(0);
        t.max_global_atomics_per_block_address = t.max_global_atomics_per_block_address.max(most);
        t.global_atomic_block_addresses += self.block_addresses.len() as u64;
        self.block_addresses.clear();
        (self.block_global_atomics, self.block_shared_atomics) = (0, 0);
    }

    /// One warp-level atomic: the global lanes `gm` at `addrs`, the shared lanes
    /// `sm` at `offs`.
    pub fn atomic(&mut self, addrs: &[u64; 32], gm: u32, offs: &[usize; 32], sm: u32) {
        let t = &mut self.totals;
        t.atomic_requests += 1;
        let mut contention = |same: u64, most: u32| {
            t.atomic_same_address_lanes += same;
            t.max_lanes_per_atomic_address = t.max_lanes_per_atomic_address.max(most);
        };
        if gm != 0 {
            let (distinct, most) = address_multiplicity(|l| addrs[l], gm);
            contention(gm.count_ones() as u64 - distinct, most);
            self.block_global_atomics += gm.count_ones() as u64;
            each_lane(gm, |l| *self.block_addresses.entry(addrs[l]).or_default() += 1);
        }
        if sm != 0 {
            let (distinct, most) = address_multiplicity(|l| offs[l] as u64, sm);
            contention(sm.count_ones() as u64 - distinct, most);
            self.block_shared_atomics += sm.count_ones() as u64;
        }
    }

    pub fn row(&mut self, k: &Kernel, pc: usize) -> &mut InstrStats {
        self.rows[pc].get_or_insert_with(|| {
            let kind = match &k.code[pc].op {
                Op::Ld { space, .. } => match space {
                    Space::Global => AccessKind::GlobalLoad,
                    Space::Shared => AccessKind::SharedLoad,
                    Space::Local => AccessKind::LocalLoad,
                    Space::Const => AccessKind::ConstLoad,
                    Space::KParam => AccessKind::ParamLoad,
                    Space::Generic => AccessKind::GenericLoad,
                },
                Op::St { space, .. } => match space {
                    Space::Global => AccessKind::GlobalStore,
                    Space::Shared => AccessKind::SharedStore,
                    Space::Local => AccessKind::LocalStore,
                    _ => AccessKind::GenericStore,
                },
                Op::Atom { space, .. } => match space {
                    Space::Global => AccessKind::GlobalAtomic,
                    Space::Shared => AccessKind::SharedAtomic,
                    _ => AccessKind::GenericAtomic,
                },
                _ => AccessKind::Branch,
            };
            InstrStats {
                ptx_line: k.ptx_line(pc),
                source: k.source_of(pc),
                instruction: k.info[pc].text.clone(),
                kind,
                executions: 0,
                thread_accesses: 0,
                sectors: 0,
                wavefronts: 0,
                bank_conflicts: 0,
                max_ways: 0,
                divergent: 0,
                first_warp: None,
                const_passes: 0,
            }
        })
    }

    pub fn finish(self) -> Stats {
        let mut t = self.totals;
        t.per_instruction = self.rows.into_iter().flatten().collect();
        t
    }
}

#[inline(always)]
fn each_lane(m: u32, mut f: impl FnMut(usize)) {
    let mut m = m;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        f(l)
    }
}

/// Distinct 32-byte sectors touched by the lanes `m` accessing `len` bytes at `addrs`.
pub(crate) fn count_sectors(addrs: &[u64; 32], m: u32, len: u32) -> u64 {
    if m == 0 {
        return 0;
    }
    let len = len.max(1) as u64;
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    each_lane(m, |l| {
        lo = lo.min(addrs[l] >> 5);
        hi = hi.max((addrs[l] + len - 1) >> 5);
    });
    if hi - lo < 64 {
        // the common case: a bitmap of the sectors in a small window
        let mut bits = 0u64;
        each_lane(m, |l| {
            for s in (addrs[l] >> 5)..=((addrs[l] + len - 1) >> 5) {
                bits |= 1 << (s - lo);
            }
        });
        return bits.count_ones() as u64;
    }
    let mut secs: Vec<u64> = Vec::with_capacity(64);
    each_lane(m, |l| secs.extend((addrs[l] >> 5)..=((addrs[l] + len - 1) >> 5)));
    secs.sort_unstable();
    secs.dedup();
    secs.len() as u64
}

/// Distinct addresses among the lanes `m` (passes of the constant cache).
/// Distinct addresses among lanes `m`, and the most lanes on one address.
fn address_multiplicity(addr: impl Fn(usize) -> u64, m: u32) -> (u64, u32) {
    let mut seen = [(0u64, 0u32); 32];
    let mut n = 0;
    each_lane(m, |l| match seen[..n].iter_mut().find(|(a, _)| *a == addr(l)) {
        Some((_, count)) => *count += 1,
        None => {
            seen[n] = (addr(l), 1);
            n += 1;
        }
    });
    (n as u64, seen[..n].iter().map(|&(_, c)| c).max().unwrap_or(0))
}

pub(crate) fn distinct_addresses(addrs: &[u64; 32], m: u32) -> u64 {
    let mut seen = [0u64; 32];
    let mut n = 0;
    each_lane(m, |l| {
        if !seen[..n].contains(&addrs[l]) {
            seen[n] = addrs[l];
            n += 1;
        }
    });
    n as u64
}

/// Bank wavefronts of one warp-level shared access by lanes `m` of `len` bytes at
/// byte offsets `offs`. Returns `(wavefronts, phases, max_ways)`.
///
/// An access of at most 4 bytes a lane that stays within one word in every
/// lane (the common case) takes [`bank_wavefronts_word`]; any other, the
/// general [`bank_wavefronts_generic`]. Both give the same result (checked by
/// a randomized test).
#[inline]
pub(crate) fn bank_wavefronts(offs: &[usize; 32], m: u32, len: u32) -> (u64, u64, u32) {
    if len <= 4 {
        if let Some(r) = bank_wavefronts_word(offs, m, len) {
            return r;
        }
    }
    bank_wavefronts_generic(offs, m, len)
}

/// [`bank_wavefronts`] of an access of `len` ≤ 4 bytes a lane: one phase of
/// all 32 lanes, each touching the one word `off / 4`. `None` when some lane's
/// bytes reach into a second word (an unaligned access).
#[inline]
fn bank_wavefronts_word(offs: &[usize; 32], m: u32, len: u32) -> Option<(u64, u64, u32)> {
    if m == 0 {
        return Some((0, 0, 0));
    }
    let extra = len.max(1) as u64 - 1;
    // bank_word[b] is meaningful where bit b of `used` is set
    let mut bank_word = [0u64; 32];
    let (mut used, mut conflict, mut straddle) = (0u32, false, false);
    let mut lane = |l: usize| {
        let o = offs[l] as u64;
        let wd = o >> 2;
        straddle |= o.wrapping_add(extra) >> 2 != wd;
        let b = (wd % 32) as usize;
        let bit = 1u32 << b;
        if used & bit == 0 {
            used |= bit;
            bank_word[b] = wd;
        } else {
            conflict |= bank_word[b] != wd;
        }
    };
    if m == u32::MAX {
        (0..32).for_each(&mut lane);
    } else {
        each_lane(m, &mut lane);
    }
    if straddle {
        return None;
    }
    if !conflict {
        return Some((1, 1, 1));
    }
    // the most distinct words in one bank
    let mut words = [0u64; 32];
    let mut n = 0;
    each_lane(m, |l| {
        words[n] = offs[l] as u64 >> 2;
        n += 1;
    });
    let words = &mut words[..n];
    words.sort_unstable();
    let mut per_bank = [0u32; 32];
    let mut prev = None;
    for &wd in words.iter() {
        if prev != Some(wd) {
            per_bank[(wd % 32) as usize] += 1;
            prev = Some(wd);
        }
    }
    let ways = per_bank.iter().copied().max().unwrap_or(1).max(1);
    Some((ways as u64, 1, ways))
}

/// [`bank_wavefronts`] of any access: the lanes split into phases by `len`,
/// each lane touching the words of its bytes.
fn bank_wavefronts_generic(offs: &[usize; 32], m: u32, len: u32) -> (u64, u64, u32) {
    let lanes_per_phase = match len {
        0..=4 => 32,
        5..=8 => 16,
        _ => 8,
    };
    let nphases = 32 / lanes_per_phase;
    let phase_mask = if lanes_per_phase == 32 { u32::MAX } else { (1u32 << lanes_per_phase) - 1 };
    let (mut wavefronts, mut phases, mut max_ways) = (0u64, 0u64, 0u32);
    for ph in 0..nphases {
        let pm = m & (phase_mask << (ph * lanes_per_phase));
        if pm == 0 {
            continue;
        }
        // fast path: no bank holds two different words
        let mut bank_word = [u64::MAX; 32];
        let mut conflict = false;
        each_lane(pm, |l| {
            let first = offs[l] as u64 >> 2;
            let last = (offs[l] as u64 + len.max(1) as u64 - 1) >> 2;
            for wd in first..=last {
                let b = (wd % 32) as usize;
                if bank_word[b] == u64::MAX {
                    bank_word[b] = wd;
                } else if bank_word[b] != wd {
                    conflict = true;
                }
            }
        });
        let ways = if !conflict {
            1
        } else {
            let mut words: Vec<u64> = Vec::with_capacity(64);
            each_lane(pm, |l| {
                let first = offs[l] as u64 >> 2;
                let last = (offs[l] as u64 + len.max(1) as u64 - 1) >> 2;
                words.extend(first..=last);
            });
            words.sort_unstable();
            words.dedup();
            let mut per_bank = [0u32; 32];
            for wd in words {
                per_bank[(wd % 32) as usize] += 1;
            }
            per_bank.iter().copied().max().unwrap_or(1).max(1)
        };
        wavefronts += ways as u64;
        phases += 1;
        max_ways = max_ways.max(ways);
    }
    (wavefronts, phases, max_ways)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    fn addrs(f: impl Fn(u64) -> u64) -> [u64; 32] {
        std::array::from_fn(|i| f(i as u64))
    }
    fn offs(f: impl Fn(usize) -> usize) -> [usize; 32] {
        std::array::from_fn(f)
    }

    #[test]
    fn sectors() {
        assert_eq!(count_sectors(&addrs(|i| 1024 + 4 * i), u32::MAX, 4), 4);
        assert_eq!(count_sectors(&addrs(|i| 1024 + 128 * i), u32::MAX, 4), 32);
        assert_eq!(count_sectors(&addrs(|_| 1024), u32::MAX, 4), 1);
        assert_eq!(count_sectors(&addrs(|i| 1024 + 4 * i), 0xffff, 4), 2);
        assert_eq!(count_sectors(&addrs(|i| (1 << 20) | (4096 * i)), u32::MAX, 8), 32);
        assert_eq!(count_sectors(&addrs(|i| 1024 + 16 * i), u32::MAX, 16), 16);
    }

    #[test]
    fn constant_passes_count_distinct_addresses() {
        assert_eq!(distinct_addresses(&addrs(|_| 64), u32::MAX), 1);
        assert_eq!(distinct_addresses(&addrs(|i| 64 + i % 8), u32::MAX), 8);
        assert_eq!(distinct_addresses(&addrs(|i| 64 + i), 0b101), 2);
        assert_eq!(distinct_addresses(&addrs(|i| i), 0), 0);
    }

    #[test]
    fn banks() {
        let all = u32::MAX;
        assert_eq!(bank_wavefronts(&offs(|i| 4 * i), all, 4), (1, 1, 1));
        assert_eq!(bank_wavefronts(&offs(|i| 128 * i), all, 4), (32, 1, 32));
        assert_eq!(bank_wavefronts(&offs(|i| 132 * i), all, 4), (1, 1, 1));
        assert_eq!(bank_wavefronts(&offs(|_| 0), all, 4), (1, 1, 1));
        assert_eq!(bank_wavefronts(&offs(|i| 8 * i), all, 4), (2, 1, 2));
        assert_eq!(bank_wavefronts(&offs(|i| 8 * i), all, 8), (2, 2, 1));
        assert_eq!(bank_wavefronts(&offs(|i| 16 * i), all, 16), (4, 4, 1));
        assert_eq!(bank_wavefronts(&offs(|i| 4 * i), 0b1011, 4), (1, 1, 1));
    }

    /// `bank_wavefronts` (with its one-word-a-lane path) against the general
    /// `bank_wavefronts_generic` on random accesses: widths 0–16 bytes,
    /// aligned and unaligned offsets, strides (conflicts of 2 to 32 ways),
    /// broadcasts, few words (lanes meet often), wide ranges, and empty,
    /// full, sparse and random masks.
    #[test]
    fn word_path_matches_the_general_one() {
        let (mut word, mut conflicts) = (0, 0);
        for seed in 1..=20_000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let len = match rng.below(4) {
                0..=1 => [1, 2, 4][rng.below(3) as usize],
                2 => rng.below(17) as u32,
                _ => [4, 8, 16][rng.below(3) as usize],
            };
            let align = match rng.below(4) {
                0 => 1,
                1 => len.max(1) as usize,
                _ => 4,
            };
            let base = rng.below(64) as usize * align;
            let stride = [0, 1, 2, 4, 8, 16, 32, 33, 64, 128, 132][rng.below(11) as usize];
            let span = [4, 16, 64, 256, 4096, 1 << 20][rng.below(6) as usize];
            let how = rng.below(4);
            let offs: [usize; 32] = std::array::from_fn(|i| {
                let o = match how {
                    0 => base + stride * i * align,
                    1 => rng.below(span) as usize,
                    2 => base + (rng.below(span) as usize / align) * align,
                    _ => base + stride * (i % 8) * align + 128 * rng.below(3) as usize,
                };
                if rng.below(16) == 0 {
                    o + rng.below(4) as usize
                } else {
                    o
                }
            });
            let m = match rng.below(6) {
                0 => 0,
                1 => u32::MAX,
                2 => 1 << rng.below(32),
                3 => (rng.below(1 << 32) as u32) & (rng.below(1 << 32) as u32),
                _ => rng.below(1 << 32) as u32 | rng.below(1 << 32) as u32,
            };
            let fast = bank_wavefronts(&offs, m, len);
            let slow = bank_wavefronts_generic(&offs, m, len);
            assert_eq!(fast, slow, "len {len} mask {m:#x} offs {offs:?}");
            if len <= 4 && bank_wavefronts_word(&offs, m, len).is_some() {
                word += 1;
                conflicts += (fast.0 > fast.1) as u32;
            }
        }
        // the word path ran often, conflicting and not
        assert!(word > 5_000 && conflicts > 1_000, "{word} word-path cases, {conflicts} conflicting");
    }
}
