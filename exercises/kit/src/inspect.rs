//! Structural checks read the PTX, so they prove *how* a kernel works, not only
//! that its numbers are right (a global-memory kernel gives the same count as a
//! shared-memory one).
//!
//! Both compilers' spellings are read: NVRTC's and clang's (LLVM's NVPTX back
//! end). clang declares pointer parameters `.param .u64 .ptr .align 1 name`,
//! `__shared__` arrays inside the kernel (`// demoted variable`), types its
//! loads `.b32` where NVRTC writes `.f32`/`.u32`, writes a `switch` as a
//! `.branchtargets` table with `brx.idx`, and comments most lines; the
//! opcode prefixes the checks ask for (`atom.global`, `ld.shared`, `bar.sync`,
//! ...) are the same. The tests below read clang 22's PTX of reference kernels.

mod entry;
mod shared;

pub use entry::{check_args, entry_decls, EntryDecl, PtxParam, WrongSignature};
pub use shared::{SharedArray, SharedSize};

/// The PTX of one `.entry`, with what it declares and which instructions it uses.
pub struct KernelPtx<'a> {
    pub name: String,
    body: &'a str,
    module: &'a str,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// clang 22's PTX (`-O3 -gline-tables-only`, sm_90) of reference kernels,
    /// kept with the simulator's fixtures.
    fn clang(name: &str) -> String {
        let p = format!("{}/../../ptx-sim/tests/fixtures/{name}.clang.ptx.txt", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    #[test]
    fn reads_clangs_spelling_as_nvrtcs() {
        let dot = clang("dot");
        assert_eq!(entries(&dot), vec!["dot"]);
        let k = kernel(&dot, "dot").unwrap();
        assert!(k.has_barrier() && k.uses_shared() && k.writes_shared() && k.reads_shared());
        assert_eq!(k.static_shared_bytes(), 1024, "the array clang declares inside the kernel");
        assert_eq!(k.global_atomics(), 0);
        assert!(k.uses("ld.global") && k.uses("fma.rn.f32") && k.uses("st.global"));
        assert!(k.instructions().all(|op| !op.starts_with('.') && !op.starts_with('$')), "directives or labels");
        let decls = entry_decls(&dot);
        let sizes: Vec<usize> = decls["dot"].params.iter().map(|p| p.bytes).collect();
        assert_eq!(sizes, [8, 8, 4, 8], "`.ptr .align 1` pointers are 8-byte parameters");

        let pi = clang("pi_shared");
        let k = kernel(&pi, "pi_shared").unwrap();
        assert_eq!(k.global_atomics(), 1);
        assert_eq!(k.count("atom.shared"), 1);
        assert_eq!(k.static_shared_bytes(), 4);

        // a switch as a jump table: its label list is not a run of instructions
        let sw = clang("switch");
        let k = kernel(&sw, "k").unwrap();
        assert_eq!(k.count("brx.idx"), 1);
        assert!(k.instructions().all(|op| !op.starts_with('$')), "{:?}", k.instructions().collect::<Vec<_>>());
    }

    const PTX: &str = r#"
.version 8.0
.target sm_75
.address_size 64
.extern .shared .align 4 .b8 buf[];
.visible .entry other(.param .u64 p) { ret; }
.visible .entry count_shared(
	.param .u64 count_shared_param_0
)
{
	.reg .pred 	%p<2>;
	.shared .align 4 .u32 _ZZ12count_sharedE5local;
	@%p1 bra 	$L__BB0_2;
	atom.shared.add.u32 	%r1, [_ZZ12count_sharedE5local], 1;
$L__BB0_2:
	bar.sync 	0;
	@%p1 red.global.add.u32 	[%rd1], %r2;
	ret;
}
"#;

    #[test]
    fn finds_kernels_and_instructions() {
        assert_eq!(entries(PTX), vec!["other", "count_shared"]);
        let k = kernel(PTX, "count_shared").unwrap();
        assert!(k.has_barrier());
        assert!(k.uses_shared());
        assert_eq!(k.global_atomics(), 1);
        assert!(k.declares_dynamic_shared());
        assert!(!k.reads_constant());
        let o = kernel(PTX, "other").unwrap();
        assert!(!o.has_barrier());
        assert!(kernel(PTX, "count").is_none());
    }
}
