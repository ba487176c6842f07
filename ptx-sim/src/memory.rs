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
        self.allocs.push(Alloc { base, data: vec![0; bytes], zones: Vec::new() });
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

    pub fn slice(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let i = self.find(addr, len as u64)?;
        let a = &self.allocs[i];
        let off = (addr - a.base) as usize;
        Some(&a.data[off..off + len])
    }

    pub fn slice_mut(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        let i = self.find(addr, len as u64)?;
        let a = &mut self.allocs[i];
        let off = (addr - a.base) as usize;
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
