//! Where a kernel's `__shared__` variables live in the simulator's shared
//! memory, with a guard gap around each, so that an access past the end of
//! one (or before its start) lands in a gap and is reported with the
//! variable's name and size, instead of reading or writing a neighbour or the
//! alignment padding unnoticed.
//!
//! A GPU packs the variables back to back (each at its alignment) and rounds
//! the block's shared memory up; an array declared one element short is then
//! written and read past its end with nothing to see. Here every variable is
//! preceded and followed by [`GAP`] bytes that belong to no variable: a lane
//! whose access touches a gap is [`crate::SimError::SharedOutOfBounds`].
//! The dynamic area (`extern __shared__`) is one variable whose size is the
//! launch's dynamic size, so kernels that carve it into several typed arrays
//! by pointer arithmetic stay inside it and pass.
//!
//! The gap is a multiple of 128 bytes (32 banks of 4 bytes), so every
//! variable keeps the bank it would have on a GPU (bank-conflict counts do
//! not change), and at least as wide as the widest access (`ld.v4.b64`, 32
//! bytes), so no access can jump a gap. An index far past the end that lands
//! inside another variable is not caught: the layout only knows addresses.
//! The shared-memory limit and `%total_smem_size` use the GPU's layout
//! ([`SharedLayout::gpu_static`], [`SharedLayout::gpu_dyn_offset`]).

/// Bytes of guard before, between and after the variables.
pub const GAP: u32 = 128;

/// One `__shared__` variable (or the dynamic area) of a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedVar {
    /// The name as written in the CUDA source (demangled from the PTX name).
    pub name: String,
    /// Byte offset in the simulator's shared memory.
    pub offset: u32,
    /// Byte offset on a GPU (no gaps), for messages.
    pub gpu_offset: u32,
    pub bytes: u64,
    /// Bytes per element (its PTX type's size).
    pub elem_bytes: u32,
}

/// The shared-memory layout of one kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SharedLayout {
    /// Static variables, by offset.
    pub vars: Vec<SharedVar>,
    /// End of the last static variable (simulator layout, gaps included).
    pub end: u32,
    /// End of the static variables as a GPU lays them out.
    pub gpu_end: u32,
    /// Where the dynamic area starts (simulator layout).
    pub dyn_offset: u32,
    /// Where the dynamic area starts on a GPU.
    pub gpu_dyn_offset: u32,
    /// The name of the kernel's `extern __shared__` array, if it declares one.
    pub extern_name: Option<String>,
}

fn align_up(x: u64, a: u32) -> u64 {
    let a = a.max(1) as u64;
    x.div_ceil(a).saturating_mul(a)
}

fn clamp(x: u64) -> u32 {
    x.min(u32::MAX as u64) as u32
}

impl SharedLayout {
    /// Places a static variable of `bytes` bytes; returns its offset. Saturates:
    /// a launch refuses anything above the shared-memory limit.
    pub fn place(&mut self, ptx_name: &str, bytes: u64, align: u32, elem_bytes: u32) -> u32 {
        let off = clamp(align_up(self.end as u64 + GAP as u64, align));
        self.end = clamp((off as u64).saturating_add(bytes));
        let gpu_offset = clamp(align_up(self.gpu_end as u64, align));
        self.gpu_end = clamp((gpu_offset as u64).saturating_add(bytes));
        self.vars.push(SharedVar { name: demangle(ptx_name), offset: off, gpu_offset, bytes, elem_bytes });
        off
    }

    /// Places the dynamic area after the static variables.
    pub fn place_dynamic(&mut self, align: u32) {
        self.dyn_offset = clamp(align_up(self.end as u64 + GAP as u64, align));
        self.gpu_dyn_offset = clamp(align_up(self.gpu_end as u64, align));
    }

    /// The simulator's shared-memory size for a launch with `dyn_bytes` of
    /// dynamic shared memory: the variables, their gaps and a gap at the end.
    /// A kernel with no shared memory at all gets none (an access faults, as
    /// on a GPU).
    pub fn sim_bytes(&self, dyn_bytes: u32) -> usize {
        if self.vars.is_empty() && self.extern_name.is_none() && dyn_bytes == 0 {
            return 0;
        }
        (self.dyn_offset as usize + dyn_bytes as usize).max(self.end as usize) + GAP as usize
    }

    /// What a GPU allocates per block (static rounding included).
    pub fn gpu_static(&self) -> u32 {
        self.gpu_end
    }

    /// The variables of one launch, by offset: the static ones, then the
    /// dynamic area sized by the launch.
    pub fn ranges(&self, dyn_bytes: u32) -> Vec<SharedVar> {
        let mut v = self.vars.clone();
        let name = self.extern_name.clone().unwrap_or_else(|| "extern __shared__ (dynamic)".to_string());
        v.push(SharedVar {
            name,
            offset: self.dyn_offset,
            gpu_offset: self.gpu_dyn_offset,
            bytes: dyn_bytes as u64,
            elem_bytes: 1,
        });
        v.sort_by_key(|s| s.offset);
        v
    }
}

/// The GPU's offset of the simulator's shared byte `off`, given the launch's
/// variables by offset ([`SharedLayout::ranges`]): what messages show.
pub fn gpu_offset(vars: &[SharedVar], off: u32) -> u32 {
    match vars.partition_point(|v| v.offset <= off).checked_sub(1) {
        Some(i) => vars[i].gpu_offset + (off - vars[i].offset),
        None => off,
    }
}

/// The source name of a shared variable: NVRTC and clang mangle a `__shared__`
/// variable declared in a kernel as `_ZZ<kernel>E<len><name>` (with an
/// optional `_<n>` discriminator); other names are returned as they are.
pub fn demangle(ptx: &str) -> String {
    let Some(rest) = ptx.strip_prefix("_ZZ") else { return ptx.to_string() };
    // the variable is the last <len><name> after an `E`
    for (i, _) in rest.match_indices('E').collect::<Vec<_>>().into_iter().rev() {
        let tail = &rest[i + 1..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(n) = tail[..digits].parse::<usize>() else { continue };
        let name = &tail[digits..];
        if n > 0 && name.len() >= n && name.is_char_boundary(n) {
            let after = &name[n..];
            if after.is_empty() || after.starts_with('_') {
                return name[..n].to_string();
            }
        }
    }
    ptx.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_back_as_written() {
        assert_eq!(demangle("_ZZ9pi_sharedPjjE5count"), "count");
        assert_eq!(demangle("_ZZ7stencilPKfPfiE4tile_0"), "tile");
        assert_eq!(demangle("sdata"), "sdata");
    }

    #[test]
    fn every_variable_has_gaps_and_keeps_its_bank() {
        let mut l = SharedLayout::default();
        let a = l.place("a", 1020, 4, 4);
        let b = l.place("b", 8, 8, 8);
        l.place_dynamic(16);
        assert_eq!(a, GAP);
        assert_eq!(b as u64, align_up(a as u64 + 1020, 8) + GAP as u64);
        assert!(l.dyn_offset >= b + 8 + GAP);
        // a GPU: a at 0, b at 1024, the dynamic area at 1040
        assert_eq!((l.gpu_end, l.gpu_dyn_offset), (1032, 1040));
        assert_eq!(b % 128, 1024 % 128, "the same bank as on a GPU");
        assert!(l.sim_bytes(64) >= l.dyn_offset as usize + 64 + GAP as usize);
    }
}
