//! [`KernelPtx`], one `.entry` of a PTX module, with the questions every
//! structure check asks of it. A module of its own, below `inspect`'s other
//! parts (`entry`, `shared`), which add to it: when it lived in `inspect.rs`,
//! `inspect` re-exported their items while they imported its type, an import
//! cycle between the parent and its children.

use super::view::KernelView;
use super::{parsed, text};

/// The PTX of one `.entry`, with what it declares and which instructions it uses.
pub struct KernelPtx<'a> {
    pub name: String,
    pub(super) view: KernelView,
    /// The module's text, to quote a line of it.
    pub(super) module: &'a str,
}

/// Finds kernel `name` in a PTX module.
pub fn kernel<'a>(ptx: &'a str, name: &str) -> Option<KernelPtx<'a>> {
    let view = match parsed::read(ptx) {
        Some(m) => parsed::kernels(&m).find(|f| f.name == name).map(|f| parsed::kernel_view(&m, f)),
        None => text::kernel_view(ptx, name),
    }?;
    Some(KernelPtx { name: name.into(), view, module: ptx })
}

/// Every `.entry` name in the module (to suggest the right one when a name is wrong).
pub fn entries(ptx: &str) -> Vec<String> {
    match parsed::read(ptx) {
        Some(m) => parsed::kernels(&m).map(|f| f.name.clone()).collect(),
        None => text::entries(ptx),
    }
}

impl KernelPtx<'_> {
    /// Instructions in the body whose opcode starts with `prefix` (e.g. "atom.global", "bar.sync").
    pub fn count(&self, prefix: &str) -> usize {
        self.instructions().filter(|op| op.starts_with(prefix)).count()
    }

    pub fn uses(&self, prefix: &str) -> bool {
        self.count(prefix) > 0
    }

    /// Opcodes in text order, without any `@p` guard. Directives (`.loc`,
    /// `.reg`, ...), labels, comments and the label lists of a
    /// `.branchtargets` table are not instructions.
    pub fn instructions(&self) -> impl Iterator<Item = &str> {
        self.view.ops.iter().map(|op| op.opcode.as_str())
    }

    /// A barrier (`__syncthreads()`): `bar.sync` or `barrier.sync`.
    pub fn has_barrier(&self) -> bool {
        self.uses("bar.sync") || self.uses("barrier.sync") || self.uses("bar.red") || self.uses("barrier.red")
    }

    /// Declares or touches shared memory: a `.shared` variable (in the kernel or
    /// at module scope, including `extern __shared__`) that the kernel accesses.
    pub fn uses_shared(&self) -> bool {
        let accesses = ["ld.shared", "st.shared", "atom.shared", "red.shared", "cvta.shared", "cvta.to.shared"];
        accesses.iter().any(|p| self.uses(p)) || self.view.names_shared
    }

    /// Declares dynamic shared memory (`extern __shared__ T buf[];`).
    pub fn declares_dynamic_shared(&self) -> bool {
        self.view.dynamic_shared
    }

    /// Reads `__constant__` memory.
    pub fn reads_constant(&self) -> bool {
        self.uses("ld.const")
    }

    /// Global atomics (`atomicAdd` on a global address; `red` is the no-return form).
    pub fn global_atomics(&self) -> usize {
        self.count("atom.global") + self.count("red.global") + self.count("atom.add") + self.count("red.add")
    }
}
