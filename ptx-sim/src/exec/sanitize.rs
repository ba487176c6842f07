//! What a sanitizer adds to a memory access, beyond bounds and alignment:
//! guard zones of global buffers (out-of-bounds reads and writes a GPU would
//! silently allow), shared memory that nobody wrote in the launch (poisoned, and
//! tracked per byte), and which lanes of a shared store leave memory as it was
//! (harmless to the race detector: racecheck's same-value write).

use super::mem::{Access, Lanes, Place, Region};
use super::ops::lanes;
use super::Exec;
use crate::error::SimError;

/// The byte shared memory holds before anything writes it. Not zero, so a
/// counter "cleared" to 0 without a barrier is a write that changes memory.
pub(crate) const SHARED_POISON: u8 = 0xA5;

/// The mask of the shared-memory lanes of one warp access; their byte offsets
/// are `ln.offs` (borrowed where needed, not copied: this runs on every access).
#[inline]
pub(super) fn shared_mask(ln: &Lanes, m: u32) -> u32 {
    match &ln.acc {
        Access::Uniform(Region::Shared) => m,
        Access::Uniform(..) => 0,
        Access::Mixed(places) => {
            let mut sm = 0u32;
            lanes(m, |l| {
                if let Some(Place::Shared(_)) = places[l] {
                    sm |= 1 << l;
                }
            });
            sm
        }
    }
}

impl Exec<'_> {
    /// Faults the first lane (in lane order) whose access overlaps a guard zone.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_zones(
        &self,
        w: usize,
        pc: usize,
        m: u32,
        ln: &Lanes,
        len: usize,
        write: bool,
    ) -> Result<(), SimError> {
        if !self.any_zones {
            return Ok(());
        }
        let (addrs, offs) = (&ln.addrs, &ln.offs);
        let mut hit = None;
        match &ln.acc {
            Access::Uniform(Region::Global(i)) => {
                let a = &self.mem.allocs[*i];
                // zones sit at the allocation's edges: lanes spanning none of them are the rule
                let (mut lo, mut hi) = (usize::MAX, 0);
                lanes(m, |l| {
                    lo = lo.min(offs[l]);
                    hi = hi.max(offs[l]);
                });
                if a.zone_hit(lo, hi + len - lo).is_some() {
                    lanes(m, |l| {
                        if hit.is_none() && a.zone_hit(offs[l], len).is_some() {
                            hit = Some((l, *i, offs[l]));
                        }
                    });
                }
            }
            Access::Uniform(..) => {}
            Access::Mixed(places) => lanes(m, |l| {
                if let Some(Place::Global { alloc, off }) = places[l] {
                    if hit.is_none() && self.mem.allocs[alloc].zone_hit(off, len).is_some() {
                        hit = Some((l, alloc, off));
                    }
                }
            }),
        }
        let Some((l, i, off)) = hit else { return Ok(()) };
        let z = self.mem.allocs[i].zone_hit(off, len).expect("found above").clone();
        let (thread, _) = self.thread_of(w, l);
        let distance = if z.before { (z.end - off) as u64 } else { off.saturating_sub(z.start) as u64 };
        Err(SimError::OutOfBounds {
            write,
            addr: addrs[l],
            size: len as u32,
            zone: z.name,
            before: z.before,
            distance,
            ptx_line: self.k.ptx_line(pc),
            location: self.k.source_of(pc),
            kernel: self.k.name.clone(),
            thread,
            block: self.block_idx,
        })
    }

    /// Faults the first lane (in lane order) whose shared access is not inside
    /// one `__shared__` variable (it touches a guard gap of `shared_layout`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_shared_bounds(
        &self,
        w: usize,
        pc: usize,
        m: u32,
        ln: &Lanes,
        len: usize,
        write: bool,
    ) -> Result<(), SimError> {
        let (sm, offs) = (shared_mask(ln, m), &ln.offs);
        if sm == 0 {
            return Ok(());
        }
        let vars = &self.shared_vars;
        // the variable whose range starts at or before `off`
        let holder = |off: usize| vars.partition_point(|v| v.offset as usize <= off).checked_sub(1);
        let inside = |i: Option<usize>, lo: usize, hi: usize| {
            i.is_some_and(|i| {
                lo >= vars[i].offset as usize && hi as u64 <= (vars[i].offset as u64).saturating_add(vars[i].bytes)
            })
        };
        let (mut lo, mut hi) = (usize::MAX, 0);
        lanes(sm, |l| {
            lo = lo.min(offs[l]);
            hi = hi.max(offs[l]);
        });
        // the rule: all lanes inside one variable
        if inside(holder(lo), lo, hi + len) {
            return Ok(());
        }
        let mut bad = None;
        lanes(sm, |l| {
            if bad.is_none() && !inside(holder(offs[l]), offs[l], offs[l] + len) {
                bad = Some(l);
            }
        });
        let Some(l) = bad else { return Ok(()) };
        let off = offs[l] as u64;
        // the nearer of the variable before the access and the one after it
        let prev = holder(offs[l]).map(|i| &vars[i]);
        let next = vars.iter().find(|v| v.offset as u64 > off);
        let past = prev.map(|v| off.saturating_sub((v.offset as u64).saturating_add(v.bytes)));
        let before = next.map(|v| v.offset as u64 - off);
        let (v, before, distance) = match (prev, past, next, before) {
            (Some(p), Some(d), Some(n), Some(b)) => {
                if b < d + 1 {
                    (n, true, b)
                } else {
                    (p, false, d)
                }
            }
            (Some(p), Some(d), _, _) => (p, false, d),
            (_, _, Some(n), Some(b)) => (n, true, b),
            _ => return Ok(()),
        };
        let (thread, _) = self.thread_of(w, l);
        Err(SimError::SharedOutOfBounds {
            write,
            size: len as u32,
            var: v.name.clone(),
            var_bytes: v.bytes.min(u32::MAX as u64) as u32,
            dynamic: v.offset == self.k.shared_layout.dyn_offset && v.elem_bytes == 1,
            before,
            distance,
            ptx_line: self.k.ptx_line(pc),
            location: self.k.source_of(pc),
            kernel: self.k.name.clone(),
            thread,
            block: self.block_idx,
        })
    }

    /// Records the launch's first read of a shared byte no thread of the block has
    /// written. Not a fault: the launch goes on, so that a race behind it (a read
    /// that ran before another warp's write) is reported as the race it is.
    pub(super) fn check_initialised(&mut self, w: usize, pc: usize, m: u32, ln: &Lanes, len: usize) {
        if self.uninit_found.is_some() {
            return;
        }
        let Some(init) = &self.init else { return };
        let (sm, offs) = (shared_mask(ln, m), &ln.offs);
        let mut bad = None;
        if len == 4 {
            // one word compare per lane (the common case)
            lanes(sm, |l| {
                let w = u32::from_ne_bytes(init[offs[l]..offs[l] + 4].try_into().unwrap());
                if bad.is_none() && w != 0x0101_0101 {
                    bad = Some(l);
                }
            });
        } else {
            lanes(sm, |l| {
                if bad.is_none() && init[offs[l]..offs[l] + len].contains(&0) {
                    bad = Some(l);
                }
            });
        }
        let Some(l) = bad else { return };
        let (thread, _) = self.thread_of(w, l);
        self.uninit_found = Some(SimError::UninitialisedRead {
            offset: crate::shared_layout::gpu_offset(&self.shared_vars, offs[l] as u32),
            size: len as u32,
            ptx_line: self.k.ptx_line(pc),
            location: self.k.source_of(pc),
            kernel: self.k.name.clone(),
            thread,
            block: self.block_idx,
        });
    }

    /// Records that the shared bytes of this access have been written.
    pub(super) fn mark_initialised(&mut self, m: u32, ln: &Lanes, len: usize) {
        let Some(init) = &mut self.init else { return };
        let (sm, offs) = (shared_mask(ln, m), &ln.offs);
        if len == 4 {
            // one word store per lane (the common case; `fill` calls memset)
            lanes(sm, |l| init[offs[l]..offs[l] + 4].copy_from_slice(&[1; 4]));
        } else {
            lanes(sm, |l| init[offs[l]..offs[l] + len].fill(1));
        }
    }
}
