//! [`KernelPtx`], one `.entry` of a PTX module, with the questions every
//! structure check asks of it. A module of its own, below `inspect`'s other
//! parts (`entry`, `shared`), which add to it: when it lived in `inspect.rs`,
//! `inspect` re-exported their items while they imported its type, an import
//! cycle between the parent and its children.

/// The PTX of one `.entry`, with what it declares and which instructions it uses.
pub struct KernelPtx<'a> {
    pub name: String,
    pub(super) body: &'a str,
    pub(super) module: &'a str,
}

/// Finds kernel `name` in a PTX module.
pub fn kernel<'a>(ptx: &'a str, name: &str) -> Option<KernelPtx<'a>> {
    let start = ptx.match_indices(".entry ").map(|(i, _)| i).find(|&i| {
        let rest = &ptx[i + ".entry ".len()..];
        rest.starts_with(name) && rest[name.len()..].trim_start().starts_with('(')
    })?;
    let open = start + ptx[start..].find('{')?;
    let mut depth = 0usize;
    for (off, c) in ptx[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(KernelPtx { name: name.into(), body: &ptx[open..open + off], module: ptx });
                }
            }
            _ => {}
        }
    }
    None
}

/// Every `.entry` name in the module (to suggest the right one when a name is wrong).
pub fn entries(ptx: &str) -> Vec<String> {
    ptx.match_indices(".entry ")
        .filter_map(|(i, _)| {
            let rest = &ptx[i + ".entry ".len()..];
            let end = rest.find(|c: char| c == '(' || c.is_whitespace())?;
            Some(rest[..end].to_string())
        })
        .collect()
}

impl KernelPtx<'_> {
    /// Instructions in the body whose opcode starts with `prefix` (e.g. "atom.global", "bar.sync").
    pub fn count(&self, prefix: &str) -> usize {
        self.instructions().filter(|op| op.starts_with(prefix)).count()
    }

    pub fn uses(&self, prefix: &str) -> bool {
        self.count(prefix) > 0
    }

    /// The kernel's body, braces included.
    pub fn body(&self) -> &str {
        self.body
    }

    /// Opcodes in text order, with any `@p` guard removed. Directives (`.loc`,
    /// `.reg`, ...), labels, braces, comments and the label lists of a
    /// `.branchtargets` table are not instructions.
    pub fn instructions(&self) -> impl Iterator<Item = &str> {
        self.body.lines().filter_map(|l| {
            let l = l.trim();
            let l = if l.starts_with('@') { l.split_once(char::is_whitespace)?.1.trim_start() } else { l };
            let op = l.split(|c: char| c.is_whitespace() || c == ';').next()?;
            let word = op.starts_with(|c: char| c.is_ascii_alphabetic());
            (word && !op.ends_with(':') && !op.ends_with(',')).then_some(op)
        })
    }

    /// A barrier (`__syncthreads()`): `bar.sync` or `barrier.sync`.
    pub fn has_barrier(&self) -> bool {
        self.uses("bar.sync") || self.uses("barrier.sync") || self.uses("bar.red") || self.uses("barrier.red")
    }

    /// Declares or touches shared memory: a `.shared` variable (in the kernel or
    /// at module scope, including `extern __shared__`) that the kernel accesses.
    pub fn uses_shared(&self) -> bool {
        let accesses = ["ld.shared", "st.shared", "atom.shared", "red.shared", "cvta.shared", "cvta.to.shared"];
        accesses.iter().any(|p| self.uses(p)) || (self.module.contains(".shared") && self.body.contains(".shared"))
    }

    /// Declares dynamic shared memory (`extern __shared__ T buf[];`).
    pub fn declares_dynamic_shared(&self) -> bool {
        self.module.lines().chain(self.body.lines()).any(|l| l.contains(".extern") && l.contains(".shared"))
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
