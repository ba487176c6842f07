//! Global memory (device allocations) and the generic address map.
//!
//! Generic addresses: allocations live in `[GLOBAL_BASE, WINDOWS)`; the shared,
//! local and param windows sit above, each 4 GiB, so `cvta` is plain arithmetic
//! and a generic `ld`/`st` resolves its space from the address alone.

/// First byte of the global heap; addresses are never small so that a null or
/// small-integer pointer is caught, and they look like `cudaMalloc`'s on a
/// 64-bit Linux host (`0x7f..`), so that a kernel cannot tell the simulator by
/// its pointers.
pub const GLOBAL_BASE: u64 = 0x0000_7f3a_4000_0000;
/// Unmapped bytes between allocations, so an out-of-bounds index lands nowhere.
pub const GUARD_GAP: u64 = 1 << 20;
pub const WINDOWS: u64 = 0x0000_FD00_0000_0000;
pub const PARAM_WINDOW: u64 = 0x0000_FD00_0000_0000;
pub const SHARED_WINDOW: u64 = 0x0000_FE00_0000_0000;
pub const LOCAL_WINDOW: u64 = 0x0000_FF00_0000_0000;
pub const WINDOW_SIZE: u64 = 1 << 32;
/// Cap on the simulated heap (the host must hold it all).
pub const MAX_GLOBAL_BYTES: u64 = 16 << 30;

#[derive(Debug)]
pub struct Alloc {
    pub base: u64,
    pub data: Vec<u8>,
    /// Byte ranges kernels may not touch (host accesses still may): a buffer's
    /// guard zones, marked by [`crate::Simulator::protect`].
    pub zones: Vec<Zone>,
    /// Bytes filled from a generator when first touched ([`crate::Simulator::fill_lazily`]).
    pub lazy: Option<Box<Lazy>>,
}

/// What fills a lazily filled range: called with the offset of `out`'s first
/// byte in the range, it writes the bytes the host would have uploaded there.
/// The same offset must always give the same bytes.
pub type Filler = std::sync::Arc<dyn Fn(usize, &mut [u8]) + Send + Sync>;

/// Bytes of a lazily filled range that are filled at once: small, since a
/// launch that reads a column of a large matrix touches one in every row.
pub const LAZY_CHUNK: usize = 1024;

/// A range of an allocation whose bytes come from a [`Filler`] the first time
/// a kernel or the host touches them, a chunk ([`LAZY_CHUNK`]) at a time: an
/// input of hundreds of megabytes of which a launch of a few sampled blocks
/// reads little costs what those blocks read, while every byte still holds
/// what an upload would have put there (no zeros where nobody looked).
pub struct Lazy {
    /// Offsets in the allocation.
    pub range: std::ops::Range<usize>,
    fill: Filler,
    /// One bit per chunk of `range`: filled.
    filled: Vec<u64>,
    /// One bit per byte that a kernel touched, by chunk of `range` (the
    /// chunk's bits made when a kernel first touches it): which elements of
    /// an input the sampled blocks of a reduction read, where their sums must
    /// add up to those elements'.
    by_kernels: Vec<Option<Box<[u64; LAZY_CHUNK / 64]>>>,
}

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let filled: u32 = self.filled.iter().map(|w| w.count_ones()).sum();
        write!(f, "Lazy {{ range: {:?}, chunks filled: {filled} }}", self.range)
    }
}

impl Lazy {
    pub fn new(range: std::ops::Range<usize>, fill: Filler) -> Self {
        let chunks = range.len().div_ceil(LAZY_CHUNK);
        Lazy { range, fill, filled: vec![0; chunks.div_ceil(64)], by_kernels: vec![None; chunks] }
    }

    /// The chunks of `range` that `off..off + len` (offsets in the allocation) touches.
    #[inline]
    fn chunks(&self, off: usize, len: usize) -> Option<std::ops::RangeInclusive<usize>> {
        let (lo, hi) = (off.max(self.range.start), (off + len).min(self.range.end));
        (lo < hi).then(|| (lo - self.range.start) / LAZY_CHUNK..=(hi - 1 - self.range.start) / LAZY_CHUNK)
    }

    #[inline]
    fn is_filled(&self, c: usize) -> bool {
        self.filled[c / 64] >> (c % 64) & 1 == 1
    }

    /// The bytes of chunk `c`, offsets in the allocation.
    fn chunk_bytes(&self, c: usize) -> std::ops::Range<usize> {
        let start = self.range.start + c * LAZY_CHUNK;
        start..(start + LAZY_CHUNK).min(self.range.end)
    }

    /// Fills the chunks of `off..off + len` not filled yet in `data`.
    #[inline]
    pub fn ensure(&mut self, data: &mut [u8], off: usize, len: usize) {
        let Some(chunks) = self.chunks(off, len) else { return };
        for c in chunks {
            if !self.is_filled(c) {
                let r = self.chunk_bytes(c);
                (self.fill)(r.start - self.range.start, &mut data[r]);
                self.filled[c / 64] |= 1 << (c % 64);
            }
        }
    }

    /// [`Lazy::ensure`] for a kernel's access, which is also marked byte by byte.
    #[inline]
    pub fn touch_by_kernel(&mut self, data: &mut [u8], off: usize, len: usize) {
        self.ensure(data, off, len);
        let (lo, hi) = (off.max(self.range.start), (off + len).min(self.range.end));
        for byte in lo - self.range.start..hi.max(lo) - self.range.start {
            let bits = self.by_kernels[byte / LAZY_CHUNK].get_or_insert_with(|| Box::new([0; LAZY_CHUNK / 64]));
            let b = byte % LAZY_CHUNK;
            bits[b / 64] |= 1 << (b % 64);
        }
    }

    /// The stretches of `off..off + len` (offsets in the allocation) that
    /// kernels touched, byte for byte.
    pub fn touched_by_kernels(&self, off: usize, len: usize) -> Vec<std::ops::Range<usize>> {
        let mut out: Vec<std::ops::Range<usize>> = Vec::new();
        for c in self.chunks(off, len).into_iter().flatten() {
            let Some(bits) = &self.by_kernels[c] else { continue };
            let r = self.chunk_bytes(c);
            for at in r.start.max(off)..r.end.min(off + len) {
                let b = (at - self.range.start) % LAZY_CHUNK;
                if bits[b / 64] >> (b % 64) & 1 == 0 {
                    continue;
                }
                match out.last_mut() {
                    Some(last) if last.end == at => last.end = at + 1,
                    _ => out.push(at..at + 1),
                }
            }
        }
        out
    }

    /// The filled stretches of `off..off + len` (offsets in the allocation):
    /// what kernels and the host have touched of it.
    pub fn filled(&self, off: usize, len: usize) -> Vec<std::ops::Range<usize>> {
        let mut out: Vec<std::ops::Range<usize>> = Vec::new();
        for c in self.chunks(off, len).into_iter().flatten().filter(|&c| self.is_filled(c)) {
            let r = self.chunk_bytes(c);
            let r = r.start.max(off)..r.end.min(off + len);
            match out.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => out.push(r),
            }
        }
        out
    }

    /// `data[off..off + len]` as it reads once filled, without filling it.
    pub fn peek(&self, data: &[u8], off: usize, len: usize) -> Vec<u8> {
        let mut out = data[off..off + len].to_vec();
        for c in self.chunks(off, len).into_iter().flatten().filter(|&c| !self.is_filled(c)) {
            let r = self.chunk_bytes(c);
            let mut chunk = vec![0; r.len()];
            (self.fill)(r.start - self.range.start, &mut chunk);
            let (lo, hi) = (r.start.max(off), r.end.min(off + len));
            out[lo - off..hi - off].copy_from_slice(&chunk[lo - r.start..hi - r.start]);
        }
        out
    }
}

/// A no-access byte range of an allocation.
#[derive(Debug, Clone)]
pub struct Zone {
    /// Offsets in the allocation, `start..end`.
    pub start: usize,
    pub end: usize,
    /// The buffer it guards.
    pub name: String,
    /// The zone lies before the buffer's first byte (else after its last).
    pub before: bool,
}

impl Alloc {
    /// Fills whatever of `off..off + len` is lazily filled and not filled yet.
    #[inline]
    pub fn ensure(&mut self, off: usize, len: usize) {
        if let Some(lazy) = &mut self.lazy {
            lazy.ensure(&mut self.data, off, len);
        }
    }

    /// [`Alloc::ensure`] for a kernel's access ([`Lazy::touch_by_kernel`]).
    #[inline]
    pub fn touch_by_kernel(&mut self, off: usize, len: usize) {
        if let Some(lazy) = &mut self.lazy {
            lazy.touch_by_kernel(&mut self.data, off, len);
        }
    }

    /// The zone overlapping `off..off+len`, if any.
    #[inline]
    pub fn zone_hit(&self, off: usize, len: usize) -> Option<&Zone> {
        self.zones.iter().find(|z| off < z.end && off + len > z.start)
    }
}

#[derive(Debug)]
pub struct GlobalMem {
    /// Sorted by base.
    pub allocs: Vec<Alloc>,
    next: u64,
    pub bytes_in_use: u64,
}

impl Default for GlobalMem {
    fn default() -> Self {
        GlobalMem { allocs: Vec::new(), next: GLOBAL_BASE, bytes_in_use: 0 }
    }
}

impl GlobalMem {
    /// Allocates zeroed memory, 256-byte aligned, followed by a guard gap. Zero-size
    /// allocations get a distinct address too.
    pub fn alloc(&mut self, bytes: usize) -> Option<u64> {
        if self.bytes_in_use.saturating_add(bytes as u64) > MAX_GLOBAL_BYTES {
            return None;
        }
        let base = self.next;
        let end = base.checked_add(bytes as u64)?;
        let next = (end + GUARD_GAP + 255) & !255;
        if next >= WINDOWS {
            return None;
        }
        self.next = next;
        self.bytes_in_use += bytes as u64;
        // bases only grow, so pushing keeps the vector sorted
        self.allocs.push(Alloc { base, data: vec![0; bytes], zones: Vec::new(), lazy: None });
        Some(base)
    }

    pub fn free(&mut self, addr: u64) {
        if let Ok(i) = self.allocs.binary_search_by_key(&addr, |a| a.base) {
            self.bytes_in_use -= self.allocs[i].data.len() as u64;
            self.allocs.remove(i);
        }
    }

    /// Index of the allocation holding `[addr, addr+len)`.
    #[inline]
    pub fn find(&self, addr: u64, len: u64) -> Option<usize> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        if i == 0 {
            return None;
        }
        let a = &self.allocs[i - 1];
        let off = addr - a.base;
        if off.checked_add(len)? <= a.data.len() as u64 {
            Some(i - 1)
        } else {
            None
        }
    }

    /// The bytes at `addr`, lazily filled ones as they will be filled
    /// (a copy where some are not filled yet).
    pub fn slice(&self, addr: u64, len: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        let i = self.find(addr, len as u64)?;
        let a = &self.allocs[i];
        let off = (addr - a.base) as usize;
        Some(match &a.lazy {
            Some(lazy) => std::borrow::Cow::Owned(lazy.peek(&a.data, off, len)),
            None => std::borrow::Cow::Borrowed(&a.data[off..off + len]),
        })
    }

    /// The bytes at `addr`, lazily filled ones filled first (a host write
    /// over part of a chunk keeps the rest of it as generated).
    pub fn slice_mut(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        let i = self.find(addr, len as u64)?;
        let a = &mut self.allocs[i];
        let off = (addr - a.base) as usize;
        a.ensure(off, len);
        Some(&mut a.data[off..off + len])
    }
}

#[inline]
pub fn read_le(b: &[u8], size: usize) -> u64 {
    match size {
        1 => b[0] as u64,
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
        _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
    }
}

#[inline]
pub fn write_le(b: &mut [u8], size: usize, v: u64) {
    match size {
        1 => b[0] = v as u8,
        2 => b[..2].copy_from_slice(&(v as u16).to_le_bytes()),
        4 => b[..4].copy_from_slice(&(v as u32).to_le_bytes()),
        _ => b[..8].copy_from_slice(&v.to_le_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_and_separated() {
        let mut m = GlobalMem::default();
        let a = m.alloc(100).unwrap();
        let b = m.alloc(8).unwrap();
        assert_eq!(a % 256, 0);
        assert_eq!(b % 256, 0);
        assert!(b >= a + 100 + GUARD_GAP);
        assert!(m.find(a, 100).is_some());
        assert!(m.find(a + 96, 8).is_none());
        assert!(m.find(a + 100, 1).is_none());
        m.free(a);
        assert!(m.find(a, 1).is_none());
        assert!(m.find(b, 8).is_some());
    }
}
