//! What the structure checks know of one kernel, whichever way its module was
//! read ([`super::parsed`], from the simulator's parse; [`super::text`] for a
//! module that parse refuses). The bottom of `inspect`: it imports none of it.

/// How big one shared declaration is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedSize {
    /// A fixed number of bytes, from the declaration.
    Static(usize),
    /// `extern __shared__`: sized by the launch (dynamic shared memory).
    Dynamic,
}

/// One `.shared` variable a kernel can reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedArray {
    /// The PTX name (C++-mangled for variables declared inside a kernel).
    pub name: String,
    pub size: SharedSize,
}

impl SharedArray {
    pub fn static_bytes(&self) -> Option<usize> {
        match self.size {
            SharedSize::Static(b) => Some(b),
            SharedSize::Dynamic => None,
        }
    }
}

/// One instruction of a kernel's body.
#[derive(Debug, Clone)]
pub(super) struct Op {
    /// The opcode as written, without its guard: `ld.shared.f32`.
    pub opcode: String,
    /// Its line in the module (1-based), to quote it.
    pub line: usize,
    /// For a shared-memory access `[base+K]`: K plus the bytes it accesses.
    pub shared_end: Option<usize>,
}

/// One `.entry`, as the questions of [`super::KernelPtx`] need it.
#[derive(Debug, Clone)]
pub(super) struct KernelView {
    /// Instructions in text order.
    pub ops: Vec<Op>,
    /// The shared variables declared in the body, then those declared at module
    /// scope that the body names.
    pub shared: Vec<SharedArray>,
    /// The body declares or names shared memory (`.shared` in a declaration or an opcode).
    pub names_shared: bool,
    /// The module declares `extern __shared__` memory.
    pub dynamic_shared: bool,
}

/// Bytes of a PTX fundamental type: `.b8` 1, `.f32` 4, `.u64` 8, `.f16x2` 4.
pub(super) fn type_bytes(ty: &str) -> Option<usize> {
    let spec = ty.strip_prefix('.')?.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let (bits, count) = spec.split_once('x').unwrap_or((spec, "1"));
    let bits: usize = bits.parse().ok()?;
    (bits % 8 == 0).then_some(bits / 8 * count.parse::<usize>().ok()?)
}

/// The bytes past its base address that a shared access of `opcode` with
/// immediate offset `offset` reaches: `st.shared.v2.f32` at +8 reaches 16.
/// `None` for anything but `ld`/`st`/`atom`/`red` on `.shared`.
pub(super) fn shared_end(opcode: &str, offset: i64) -> Option<usize> {
    let parts: Vec<&str> = opcode.split('.').collect();
    if !matches!(parts[0], "ld" | "st" | "atom" | "red") || !parts.contains(&"shared") {
        return None;
    }
    let lanes = parts.iter().find_map(|p| p.strip_prefix('v')?.parse::<usize>().ok()).unwrap_or(1);
    let width = parts.iter().rev().find_map(|p| type_bytes(&format!(".{p}")))?;
    Some((offset.max(0) as usize) + lanes * width)
}
