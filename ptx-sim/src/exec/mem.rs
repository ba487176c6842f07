//! Loads, stores, atomics and printf: address resolution per lane, fault
//! reporting, and the coalescing / bank-conflict / race bookkeeping.

use super::alu::{b32, b64, f32of, f64of, ftz32, sext};
use super::ops::lanes;
use super::sanitize::shared_mask;
use super::Exec;
use crate::error::SimError;
use crate::global_race::Kind as GKind;
use crate::ir::*;
use crate::memory::{read_le, write_le, GlobalMem, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOWS, WINDOW_SIZE};
use crate::race::Kind;
use crate::stats::{bank_wavefronts, count_sectors};

/// Where a lane's access landed.
#[derive(Clone, Copy)]
pub(super) enum Place {
    Global {
        alloc: usize,
        off: usize,
    },
    Shared(usize),
    /// Byte index into the block's local memory (thread frame already applied).
    Local(usize),
    Param(usize),
}

/// A region one warp access can fall entirely into.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Region {
    Global(usize),
    Shared,
    /// The block's local memory (offsets include the thread's frame).
    Local,
    Param,
}

/// One `ld` or `st` as the interpreter runs it: where, what and how many
/// elements per lane (the registers are the caller's).
#[derive(Clone, Copy)]
pub(super) struct MemAccess {
    pub space: Space,
    pub ty: MemTy,
    pub vec: u8,
    pub addr: Addr,
}

/// Where the lanes of one warp access landed.
pub(super) enum Access {
    /// All lanes in one region: their byte offsets into it are [`Lanes::offs`].
    Uniform(Region),
    /// Lanes in different allocations or spaces (rare).
    Mixed(Box<[Option<Place>; 32]>),
}

/// One warp access, resolved: each lane's address and where it landed. Its
/// two arrays are large (256 bytes each): they are filled where the `Lanes`
/// lives, in the frame of `ld`/`st`/`atom`, and only borrowed after that
/// (returning and moving them by value was a tenth of a run's time).
pub(super) struct Lanes {
    pub addrs: [u64; 32],
    /// Per lane, its byte offset into the region ([`Access::Uniform`]); for
    /// [`Access::Mixed`], its offset into shared memory where its place is
    /// shared (other lanes' entries mean nothing).
    pub offs: [usize; 32],
    pub acc: Access,
}

impl Lanes {
    #[inline(always)]
    fn new() -> Self {
        Lanes { addrs: [0; 32], offs: [0; 32], acc: Access::Uniform(Region::Param) }
    }
}

enum Fault {
    Illegal,
    Misaligned,
}

impl Exec<'_> {
    /// Resolves `len` bytes at `a` in `space` for thread `t`.
    #[inline]
    fn place(&self, space: Space, a: u64, len: usize, t: usize) -> Option<Place> {
        let len64 = len as u64;
        match space {
            Space::Global | Space::Const => self.global_place(a, len64),
            Space::Shared => (a.checked_add(len64)? <= self.shared.len() as u64).then_some(Place::Shared(a as usize)),
            Space::Local => {
                let lb = self.k.local_bytes as u64;
                (a.checked_add(len64)? <= lb).then(|| Place::Local(t * lb as usize + a as usize))
            }
            Space::KParam => (a.checked_add(len64)? <= self.params.len() as u64).then_some(Place::Param(a as usize)),
            Space::Generic => {
                if a < WINDOWS {
                    return self.global_place(a, len64);
                }
                let (space, base) = if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&a) {
                    (Space::Shared, SHARED_WINDOW)
                } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&a) {
                    (Space::Local, LOCAL_WINDOW)
                } else if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&a) {
                    (Space::KParam, PARAM_WINDOW)
                } else {
                    return None;
                };
                self.place(space, a - base, len, t)
            }
        }
    }

    #[inline]
    fn global_place(&self, a: u64, len: u64) -> Option<Place> {
        let allocs = &self.mem.allocs;
        let c = self.gcache.get();
        if let Some(al) = allocs.get(c) {
            if a >= al.base && a - al.base + len <= al.data.len() as u64 {
                return Some(Place::Global { alloc: c, off: (a - al.base) as usize });
            }
        }
        let i = self.mem.find(a, len)?;
        self.gcache.set(i);
        Some(Place::Global { alloc: i, off: (a - allocs[i].base) as usize })
    }

    #[inline]
    fn bytes(&self, p: Place, len: usize) -> &[u8] {
        match p {
            Place::Global { alloc, off } => &self.mem.allocs[alloc].data[off..off + len],
            Place::Shared(o) => &self.shared[o..o + len],
            Place::Local(o) => &self.local[o..o + len],
            Place::Param(o) => &self.params[o..o + len],
        }
    }

    #[inline]
    fn bytes_mut(&mut self, p: Place, len: usize) -> &mut [u8] {
        match p {
            Place::Global { alloc, off } => &mut self.mem.allocs[alloc].data[off..off + len],
            Place::Shared(o) => &mut self.shared[o..o + len],
            Place::Local(o) => &mut self.local[o..o + len],
            Place::Param(_) => unreachable!("kernel parameters are read-only"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fault(&self, f: Fault, space: Space, addr: u64, size: u32, w: usize, lane: usize, pc: usize) -> SimError {
        let (thread, _) = self.thread_of(w, lane);
        let k = self.k;
        let space = space.name().to_string();
        match f {
            Fault::Illegal => SimError::IllegalAddress {
                addr,
                space,
                ptx_line: k.ptx_line(pc),
                location: k.source_of(pc),
                kernel: k.name.clone(),
                thread,
                block: self.block_idx,
            },
            Fault::Misaligned => SimError::MisalignedAddress {
                addr,
                size,
                space,
                ptx_line: k.ptx_line(pc),
                location: k.source_of(pc),
                kernel: k.name.clone(),
                thread,
                block: self.block_idx,
            },
        }
    }

    /// Per-lane addresses of a memory operand.
    #[inline]
    pub(super) fn addrs(&self, w: usize, m: u32, addr: Addr) -> [u64; 32] {
        let mut out = [0; 32];
        self.addrs_into(w, m, addr, &mut out);
        out
    }

    /// [`Exec::addrs`] into `out` (the load/store path's, in place).
    #[inline]
    fn addrs_into(&self, w: usize, m: u32, addr: Addr, out: &mut [u64; 32]) {
        let off = addr.offset as u64;
        if addr.base == NO_REG {
            *out = [off; 32];
            return;
        }
        let rb = w * self.nslots * LANES + addr.base as usize;
        let keep = if addr.base32 { 0xffff_ffff } else { u64::MAX };
        if m == u32::MAX {
            // every lane written: one straight (vectorisable) pass
            let regs: &[u64; 32] = self.regs[rb..rb + 32].try_into().unwrap();
            for (o, &b) in out.iter_mut().zip(regs) {
                *o = (b & keep).wrapping_add(off);
            }
            return;
        }
        *out = [off; 32];
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            out[l] = (self.regs[rb + l] & keep).wrapping_add(off);
        }
    }

    /// Resolves all active lanes, reporting the first fault in lane order (the
    /// general path: lanes may land in different allocations or spaces).
    #[cold]
    fn resolve_mixed(
        &self,
        w: usize,
        pc: usize,
        m: u32,
        space: Space,
        len: usize,
        ln: &mut Lanes,
    ) -> Result<(), SimError> {
        let mut places = Box::new([None; 32]);
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let a = ln.addrs[l];
            if a % len as u64 != 0 {
                return Err(self.fault(Fault::Misaligned, space, a, len as u32, w, l, pc));
            }
            match self.place(space, a, len, w * 32 + l) {
                Some(p) => {
                    if let Place::Shared(o) = p {
                        ln.offs[l] = o;
                    }
                    places[l] = Some(p)
                }
                None => return Err(self.fault(Fault::Illegal, space, a, len as u32, w, l, pc)),
            }
        }
        ln.acc = Access::Mixed(places);
        Ok(())
    }

    /// Resolves the active lanes. The fast path: all lanes in one region (one
    /// allocation, the block's shared memory, the threads' local frames).
    /// `ln.addrs` in, `ln.offs` and `ln.acc` out.
    #[inline]
    fn resolve(&self, w: usize, pc: usize, m: u32, space: Space, len: usize, ln: &mut Lanes) -> Result<(), SimError> {
        let a0 = ln.addrs[m.trailing_zeros() as usize];
        let mut space_r = space;
        let mut base = 0u64;
        if space == Space::Generic {
            if a0 < WINDOWS {
                space_r = Space::Global;
            } else if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&a0) {
                (space_r, base) = (Space::Shared, SHARED_WINDOW);
            } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&a0) {
                (space_r, base) = (Space::Local, LOCAL_WINDOW);
            } else {
                return self.resolve_mixed(w, pc, m, space, len, ln);
            }
        }
        let lb = self.k.local_bytes as usize;
        let (region, limit) = match space_r {
            Space::Shared => (Region::Shared, self.shared.len()),
            Space::Local => (Region::Local, lb),
            Space::KParam => (Region::Param, self.params.len()),
            _ => match self.global_place(a0, len as u64) {
                Some(Place::Global { alloc, .. }) => {
                    base = self.mem.allocs[alloc].base;
                    (Region::Global(alloc), self.mem.allocs[alloc].data.len())
                }
                _ => return self.resolve_mixed(w, pc, m, space, len, ln),
            },
        };
        let mut ok = true;
        let amask = len as u64 - 1;
        let lim = limit.saturating_sub(len) as u64;
        let (addrs, offs) = (&ln.addrs, &mut ln.offs);
        lanes(m, |l| {
            let rel = addrs[l].wrapping_sub(base);
            ok &= rel <= lim && addrs[l] & amask == 0;
            offs[l] = rel as usize;
        });
        if !ok || limit < len {
            return self.resolve_mixed(w, pc, m, space, len, ln);
        }
        if region == Region::Local {
            lanes(m, |l| offs[l] += (w * 32 + l) * lb);
        }
        ln.acc = Access::Uniform(region);
        Ok(())
    }

    /// Fills the lazily filled global bytes the lanes `m` are about to touch
    /// (`crate::memory::Lazy`), before anything reads or writes them.
    #[inline]
    fn fill_lazy(&mut self, m: u32, ln: &Lanes, len: usize) {
        match &ln.acc {
            Access::Uniform(Region::Global(i)) => {
                let a = &mut self.mem.allocs[*i];
                if a.lazy.is_some() {
                    lanes(m, |l| a.touch_by_kernel(ln.offs[l], len));
                }
            }
            Access::Mixed(places) => lanes(m, |l| {
                if let Some(Place::Global { alloc, off }) = places[l] {
                    self.mem.allocs[alloc].touch_by_kernel(off, len);
                }
            }),
            Access::Uniform(_) => {}
        }
    }

    /// Coalescing / bank statistics and race checks for one warp access.
    #[allow(clippy::too_many_arguments)]
    fn account(&mut self, w: usize, pc: usize, m: u32, ln: &Lanes, len: usize, store: bool, atomic: bool, quiet: u32) {
        let (addrs, acc) = (&ln.addrs, &ln.acc);
        // the lanes in shared memory (at `shared_offs`), in global and in local memory
        let (smask, shared_offs) = (shared_mask(ln, m), &ln.offs);
        let mut gmask = 0u32;
        let mut lmask = 0u32;
        match acc {
            Access::Uniform(Region::Global(_)) => gmask = m,
            Access::Uniform(Region::Local) => lmask = m,
            Access::Uniform(Region::Shared | Region::Param) => {}
            Access::Mixed(places) => lanes(m, |l| match places[l] {
                Some(Place::Global { .. }) => gmask |= 1 << l,
                Some(Place::Local(_)) => lmask |= 1 << l,
                _ => {}
            }),
        }
        if let Some(rd) = &mut self.race {
            let kind = if atomic {
                Kind::Atomic
            } else if store {
                Kind::Write
            } else {
                Kind::Read
            };
            if let (Kind::Read, Some(sink)) = (kind, self.k.deferred[pc]) {
                // some lanes may throw the value away: counted at the sink (`crate::discard`)
                if smask != 0 {
                    self.deferred.push(super::discard::Pending {
                        warp: w,
                        load_pc: pc as u32,
                        sink,
                        len,
                        lanes: smask,
                        offs: *shared_offs,
                    });
                }
            } else {
                // a store that left the bytes as they were cannot be observed by anyone
                rd.access_warp(shared_offs, smask & !quiet, len, w as u32, pc as u32, kind);
            }
        }
        if let Some(g) = &mut self.grace {
            let kind = if atomic {
                GKind::Atomic
            } else if store {
                GKind::Write
            } else {
                GKind::Read
            };
            // constant memory is read-only; a store that left the bytes as they were changes nothing
            let is_const = matches!(self.k.code[pc].op, Op::Ld { space: Space::Const, .. });
            let lanes_g = if is_const { 0 } else { gmask & !quiet };
            match acc {
                Access::Uniform(Region::Global(i)) => {
                    g.access_warp(*i, self.mem.allocs[*i].base, &ln.offs, lanes_g, len, pc as u32, kind);
                }
                Access::Mixed(places) => lanes(lanes_g, |l| {
                    if let Some(Place::Global { alloc, off }) = places[l] {
                        g.access(alloc, self.mem.allocs[alloc].base, off, len, pc as u32, kind);
                    }
                }),
                _ => {}
            }
        }
        let Some(st) = &mut self.stats else { return };
        // kernel parameters are not memory traffic worth a row; constant loads go
        // through the constant cache, not the global memory path
        let space = match &self.k.code[pc].op {
            Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => *space,
            _ => Space::Generic,
        };
        match space {
            Space::KParam => return,
            Space::Const => {
                st.totals.const_load_requests += 1;
                // the constant cache serves one address per pass: a broadcast is one pass
                let passes = crate::stats::distinct_addresses(addrs, m);
                st.totals.const_load_passes += passes;
                let row = st.row(self.k, pc);
                row.executions += 1;
                row.thread_accesses += m.count_ones() as u64;
                row.const_passes += passes;
                return;
            }
            _ => {}
        }
        if atomic {
            st.atomic(addrs, gmask, shared_offs, smask);
        }
        let t = &mut st.totals;
        let (mut sectors, mut wave, mut conflicts, mut ways) = (0, 0, 0, 0);
        if gmask != 0 {
            let ng = gmask.count_ones() as u64;
            sectors = count_sectors(addrs, gmask, len as u32);
            if atomic {
                t.global_atomics += ng;
            } else if store {
                t.global_store_requests += 1;
                t.global_store_sectors += sectors;
                t.global_store_bytes += ng * len as u64;
            } else {
                t.global_load_requests += 1;
                t.global_load_sectors += sectors;
                t.global_load_lanes += ng;
                t.global_load_bytes += ng * len as u64;
            }
        }
        if smask != 0 {
            let (wf, phases, mw) = bank_wavefronts(shared_offs, smask, len as u32);
            wave = wf;
            conflicts = wf - phases;
            ways = mw;
            if atomic {
                t.shared_atomics += smask.count_ones() as u64;
            } else {
                if store {
                    t.shared_store_requests += 1;
                    t.shared_store_wavefronts += wf;
                } else {
                    t.shared_load_requests += 1;
                    t.shared_load_wavefronts += wf;
                }
                t.shared_bank_conflicts += conflicts;
            }
        }
        if lmask != 0 {
            let bytes = lmask.count_ones() as u64 * len as u64;
            if store {
                t.local_store_requests += 1;
                t.local_store_bytes += bytes;
            } else {
                t.local_load_requests += 1;
                t.local_load_bytes += bytes;
            }
        }
        let row = st.row(self.k, pc);
        // the first warp with the most active lanes: a full warp shows the pattern best
        if gmask != 0 && !atomic && row.first_warp.as_ref().is_none_or(|w| w.active() < gmask.count_ones()) {
            row.first_warp = Some(crate::stats::WarpAccess {
                lanes: (0..32).map(|l| (gmask >> l & 1 == 1).then(|| addrs[l])).collect(),
                bytes: len as u32,
            });
        }
        row.executions += 1;
        row.thread_accesses += m.count_ones() as u64;
        row.sectors += sectors;
        row.wavefronts += wave;
        row.bank_conflicts += conflicts;
        row.max_ways = row.max_ways.max(ways);
    }

    /// What a load or store `at` by lanes `m` touches, after the guard-zone
    /// and shared-bounds checks that both make: each lane's address and where
    /// it lands, into `ln`; returns the element size and the bytes per lane.
    #[inline]
    fn checked(
        &mut self,
        w: usize,
        pc: usize,
        m: u32,
        at: MemAccess,
        store: bool,
        ln: &mut Lanes,
    ) -> Result<(usize, usize), SimError> {
        let MemAccess { space, ty, vec, addr } = at;
        let es = ty.size as usize;
        let len = es * vec as usize;
        self.addrs_into(w, m, addr, &mut ln.addrs);
        self.resolve(w, pc, m, space, len, ln)?;
        self.fill_lazy(m, ln, len);
        self.check_zones(w, pc, m, ln, len, store)?;
        self.check_shared_bounds(w, pc, m, ln, len, store)?;
        Ok((es, len))
    }

    pub(super) fn ld(&mut self, w: usize, pc: usize, m: u32, at: MemAccess, dst: [Reg; 4]) -> Result<(), SimError> {
        let mut ln = Lanes::new();
        let (es, len) = self.checked(w, pc, m, at, false, &mut ln)?;
        let (ty, vec) = (at.ty, at.vec);
        self.check_initialised(w, pc, m, &ln, len);
        let rb = w * self.nslots * LANES;
        let offs = &ln.offs;
        match &ln.acc {
            Access::Uniform(region) => {
                let data = region_slice(self.mem, &self.shared, &self.local, self.params, *region);
                let regs = &mut self.regs[rb..rb + self.nslots * LANES];
                if vec == 1 {
                    let d = dst[0] as usize;
                    match (es, ty.signed) {
                        (4, false) => lanes(m, |l| {
                            let o = offs[l];
                            regs[d + l] = u32::from_le_bytes(data[o..o + 4].try_into().unwrap()) as u64;
                        }),
                        (4, true) => lanes(m, |l| {
                            let o = offs[l];
                            regs[d + l] = i32::from_le_bytes(data[o..o + 4].try_into().unwrap()) as i64 as u64;
                        }),
                        (8, _) => lanes(m, |l| {
                            let o = offs[l];
                            regs[d + l] = u64::from_le_bytes(data[o..o + 8].try_into().unwrap());
                        }),
                        _ => lanes(m, |l| {
                            let x = read_le(&data[offs[l]..], es);
                            regs[d + l] = if ty.signed { sext(x, (es * 8) as u8) as u64 } else { x };
                        }),
                    }
                } else {
                    lanes(m, |l| {
                        for (e, &d) in dst.iter().enumerate().take(vec as usize) {
                            let x = read_le(&data[offs[l] + e * es..], es);
                            regs[d as usize + l] = if ty.signed && es < 8 { sext(x, (es * 8) as u8) as u64 } else { x };
                        }
                    });
                }
            }
            Access::Mixed(places) => {
                let mut mm = m;
                while mm != 0 {
                    let l = mm.trailing_zeros() as usize;
                    mm &= mm - 1;
                    let p = places[l].unwrap();
                    let mut vals = [0u64; 4];
                    {
                        let b = self.bytes(p, len);
                        for (e, v) in vals.iter_mut().enumerate().take(vec as usize) {
                            let x = read_le(&b[e * es..], es);
                            *v = if ty.signed && es < 8 { sext(x, (es * 8) as u8) as u64 } else { x };
                        }
                    }
                    for (e, v) in vals.iter().enumerate().take(vec as usize) {
                        self.regs[rb + dst[e] as usize + l] = *v;
                    }
                }
            }
        }
        if self.stats.is_some() || self.race.is_some() || self.grace.is_some() {
            self.account(w, pc, m, &ln, len, false, false, 0);
        }
        Ok(())
    }

    pub(super) fn st(&mut self, w: usize, pc: usize, m: u32, at: MemAccess, src: [Reg; 4]) -> Result<(), SimError> {
        let mut ln = Lanes::new();
        let (es, len) = self.checked(w, pc, m, at, true, &mut ln)?;
        let vec = at.vec;
        let rb = w * self.nslots * LANES;
        let mut quiet = 0u32;
        let (addrs, offs) = (&ln.addrs, &ln.offs);
        match &ln.acc {
            Access::Uniform(Region::Shared) if self.race.is_some() && vec == 1 && es == 4 => {
                // lane by lane, in lane order, noting which lanes change nothing
                let s = src[0] as usize;
                lanes(m, |l| {
                    let o = offs[l];
                    let new = (self.regs[rb + s + l] as u32).to_le_bytes();
                    let word: &mut [u8; 4] = (&mut self.shared[o..o + 4]).try_into().unwrap();
                    if *word == new {
                        quiet |= 1 << l;
                    }
                    *word = new;
                });
            }
            Access::Uniform(Region::Shared) if self.race.is_some() => {
                lanes(m, |l| {
                    let mut b = [0u8; 32];
                    for (e, &s) in src.iter().enumerate().take(vec as usize) {
                        write_le(&mut b[e * es..], es, self.regs[rb + s as usize + l]);
                    }
                    let o = offs[l];
                    if self.shared[o..o + len] == b[..len] {
                        quiet |= 1 << l;
                    }
                    self.shared[o..o + len].copy_from_slice(&b[..len]);
                });
            }
            Access::Uniform(Region::Global(i)) if self.grace.is_some() && vec == 1 && es == 4 => {
                let (s, data) = (src[0] as usize, &mut self.mem.allocs[*i].data);
                lanes(m, |l| {
                    let new = (self.regs[rb + s + l] as u32).to_le_bytes();
                    let word: &mut [u8; 4] = (&mut data[offs[l]..offs[l] + 4]).try_into().unwrap();
                    if *word == new {
                        quiet |= 1 << l;
                    }
                    *word = new;
                });
            }
            Access::Uniform(Region::Global(i)) if self.grace.is_some() => {
                // lane by lane, in lane order, noting which lanes change nothing
                let data = &mut self.mem.allocs[*i].data;
                lanes(m, |l| {
                    let mut b = [0u8; 32];
                    for (e, &s) in src.iter().enumerate().take(vec as usize) {
                        write_le(&mut b[e * es..], es, self.regs[rb + s as usize + l]);
                    }
                    let o = offs[l];
                    if data[o..o + len] == b[..len] {
                        quiet |= 1 << l;
                    }
                    data[o..o + len].copy_from_slice(&b[..len]);
                });
            }
            Access::Uniform(Region::Param) => {
                let l = m.trailing_zeros() as usize;
                return Err(self.fault(Fault::Illegal, Space::KParam, addrs[l], len as u32, w, l, pc));
            }
            Access::Uniform(region) => {
                let regs = &self.regs[rb..rb + self.nslots * LANES];
                let data = region_slice_mut(self.mem, &mut self.shared, &mut self.local, *region);
                if vec == 1 {
                    let s = src[0] as usize;
                    match es {
                        4 => lanes(m, |l| {
                            let o = offs[l];
                            data[o..o + 4].copy_from_slice(&(regs[s + l] as u32).to_le_bytes());
                        }),
                        8 => lanes(m, |l| {
                            let o = offs[l];
                            data[o..o + 8].copy_from_slice(&regs[s + l].to_le_bytes());
                        }),
                        _ => lanes(m, |l| write_le(&mut data[offs[l]..], es, regs[s + l])),
                    }
                } else {
                    lanes(m, |l| {
                        for (e, &s) in src.iter().enumerate().take(vec as usize) {
                            write_le(&mut data[offs[l] + e * es..], es, regs[s as usize + l]);
                        }
                    });
                }
            }
            Access::Mixed(places) => {
                if let Some(l) = (0..32).find(|&l| matches!(places[l], Some(Place::Param(_)))) {
                    return Err(self.fault(Fault::Illegal, Space::KParam, addrs[l], len as u32, w, l, pc));
                }
                let mut mm = m;
                while mm != 0 {
                    let l = mm.trailing_zeros() as usize;
                    mm &= mm - 1;
                    let mut vals = [0u64; 4];
                    for (e, v) in vals.iter_mut().enumerate().take(vec as usize) {
                        *v = self.regs[rb + src[e] as usize + l];
                    }
                    let b = self.bytes_mut(places[l].unwrap(), len);
                    for (e, v) in vals.iter().enumerate().take(vec as usize) {
                        write_le(&mut b[e * es..], es, *v);
                    }
                }
            }
        }
        self.mark_initialised(m, &ln, len);
        if self.stats.is_some() || self.race.is_some() || self.grace.is_some() {
            self.account(w, pc, m, &ln, len, true, false, quiet);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn atom(
        &mut self,
        w: usize,
        pc: usize,
        m: u32,
        space: Space,
        op: AtomOp,
        ty: Ty,
        d: Reg,
        addr: Addr,
        a: Reg,
        b: Reg,
    ) -> Result<(), SimError> {
        let len = (ty.bits() / 8) as usize;
        let mut ln = Lanes::new();
        self.addrs_into(w, m, addr, &mut ln.addrs);
        self.resolve(w, pc, m, space, len, &mut ln)?;
        self.fill_lazy(m, &ln, len);
        let bad = match &ln.acc {
            Access::Uniform(Region::Param | Region::Local) => Some(m.trailing_zeros() as usize),
            Access::Uniform(..) => None,
            Access::Mixed(places) => {
                (0..32).find(|&l| matches!(places[l], Some(Place::Param(_)) | Some(Place::Local(_))))
            }
        };
        if let Some(l) = bad {
            return Err(self.fault(Fault::Illegal, space, ln.addrs[l], len as u32, w, l, pc));
        }
        self.check_zones(w, pc, m, &ln, len, true)?;
        self.check_shared_bounds(w, pc, m, &ln, len, true)?;
        self.check_initialised(w, pc, m, &ln, len);
        let rb = w * self.nslots * LANES;
        let wd = ty.bits();
        let mk = super::alu::mask(wd);
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let x = self.regs[rb + a as usize + l] & mk;
            let y = if b != NO_REG { self.regs[rb + b as usize + l] & mk } else { 0 };
            let bytes = match &ln.acc {
                Access::Uniform(region) => &mut region_slice_mut(self.mem, &mut self.shared, &mut self.local, *region)
                    [ln.offs[l]..ln.offs[l] + len],
                Access::Mixed(places) => self.bytes_mut(places[l].unwrap(), len),
            };
            let old = read_le(bytes, len);
            let new = atomic_op(op, ty, old, x, y);
            write_le(bytes, len, new);
            if d != NO_REG {
                self.regs[rb + d as usize + l] = old;
            }
        }
        self.mark_initialised(m, &ln, len);
        if self.stats.is_some() || self.race.is_some() || self.grace.is_some() {
            self.account(w, pc, m, &ln, len, false, true, 0);
        }
        Ok(())
    }

    /// Reads bytes at a generic address (for printf's `%s` and format string).
    fn read_generic(&self, a: u64, len: usize, t: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        let p = self.place(Space::Generic, a, len, t)?;
        if let Place::Global { alloc, off } = p {
            let al = &self.mem.allocs[alloc];
            if let Some(lazy) = &al.lazy {
                return Some(std::borrow::Cow::Owned(lazy.peek(&al.data, off, len)));
            }
        }
        Some(std::borrow::Cow::Borrowed(self.bytes(p, len)))
    }

    fn cstr(&self, a: u64, t: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        for i in 0..4096u64 {
            let b = self.read_generic(a + i, 1, t)?[0];
            if b == 0 {
                return Some(out);
            }
            out.push(b);
        }
        Some(out)
    }

    pub(super) fn printf(&mut self, w: usize, m: u32, fmt: u32, args: u32, ret: u32) -> Result<(), SimError> {
        struct Src<'e, 'a> {
            ex: &'e Exec<'a>,
            t: usize,
            base: u64,
        }
        impl crate::printf::ArgSource for Src<'_, '_> {
            fn arg(&mut self, offset: usize, size: usize) -> Option<u64> {
                let b = self.ex.read_generic(self.base + offset as u64, size, self.t)?;
                Some(read_le(&b, size))
            }
            fn cstr(&mut self, addr: u64) -> Option<Vec<u8>> {
                self.ex.cstr(addr, self.t)
            }
        }
        let lb = self.k.local_bytes as usize;
        // Calls not kept are not formatted (a kernel printing in a loop in
        // every thread would spend minutes on lines nobody sees); they return
        // 0, as where printf is not captured at all.
        if self.printf.discard || self.printf.full() {
            if self.printf.discard {
                self.printf.calls += m.count_ones() as u64;
            } else {
                self.printf.drop_calls(m.count_ones() as u64);
            }
            if ret != u32::MAX {
                lanes(m, |l| write_le(&mut self.local[(w * 32 + l) * lb + ret as usize..], 4, 0));
            }
            return Ok(());
        }
        let mut mm = m;
        while mm != 0 {
            let l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            let t = w * 32 + l;
            let frame = t * lb;
            let fptr = read_le(&self.local[frame + fmt as usize..], 8);
            let aptr = read_le(&self.local[frame + args as usize..], 8);
            let text = match self.cstr(fptr, t) {
                Some(f) => crate::printf::format(&f, &mut Src { ex: self, t, base: aptr }),
                None => format!("<printf: bad format pointer {fptr:#x}>\n"),
            };
            let n = text.len() as u64;
            self.printf.push(&text);
            if ret != u32::MAX {
                write_le(&mut self.local[frame + ret as usize..], 4, n);
            }
        }
        Ok(())
    }
}

/// The new value of an atomic read-modify-write.
fn atomic_op(op: AtomOp, ty: Ty, old: u64, x: u64, y: u64) -> u64 {
    let wd = ty.bits();
    let mk = super::alu::mask(wd);
    match op {
        AtomOp::Add => match ty {
            // atom.add.f32 flushes subnormals (PTX ISA)
            Ty::F(32) => b32(ftz32(ftz32(f32of(old)) + ftz32(f32of(x)))),
            Ty::F(_) => b64(f64of(old) + f64of(x)),
            _ => old.wrapping_add(x) & mk,
        },
        AtomOp::AddHalf(fmt) => {
            let fl = super::half::Flags { ftz: false, sat: false, relu: false, nan: false };
            super::half::half_op(HOp::Add, fmt, fl, old, x, 0)
        }
        AtomOp::Min => match ty {
            Ty::S(_) => sext(old, wd).min(sext(x, wd)) as u64 & mk,
            Ty::F(32) => b32(super::alu::fmin32(f32of(old), f32of(x))),
            _ => old.min(x),
        },
        AtomOp::Max => match ty {
            Ty::S(_) => sext(old, wd).max(sext(x, wd)) as u64 & mk,
            Ty::F(32) => b32(super::alu::fmax32(f32of(old), f32of(x))),
            _ => old.max(x),
        },
        AtomOp::Inc => {
            if old >= x {
                0
            } else {
                old + 1
            }
        }
        AtomOp::Dec => {
            if old == 0 || old > x {
                x
            } else {
                old - 1
            }
        }
        AtomOp::Exch => x,
        AtomOp::Cas => {
            if old == x {
                y
            } else {
                old
            }
        }
        AtomOp::And => old & x,
        AtomOp::Or => old | x,
        AtomOp::Xor => old ^ x,
    }
}

fn region_slice<'s>(mem: &'s GlobalMem, shared: &'s [u8], local: &'s [u8], params: &'s [u8], r: Region) -> &'s [u8] {
    match r {
        Region::Global(i) => &mem.allocs[i].data,
        Region::Shared => shared,
        Region::Local => local,
        Region::Param => params,
    }
}

fn region_slice_mut<'s>(mem: &'s mut GlobalMem, shared: &'s mut [u8], local: &'s mut [u8], r: Region) -> &'s mut [u8] {
    match r {
        Region::Global(i) => &mut mem.allocs[i].data,
        Region::Shared => shared,
        Region::Local => local,
        Region::Param => unreachable!("kernel parameters are read-only"),
    }
}
