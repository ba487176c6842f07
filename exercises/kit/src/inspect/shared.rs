//! Shared memory in a kernel's PTX: the `__shared__` arrays it declares and
//! their sizes, whether it stores to and loads from shared memory, and how far
//! past a base address its shared accesses reach. Used by the structure checks
//! of the exercises about shared memory (halo sizes, padded tiles, dynamic buffers).
//!
//! NVRTC writes a kernel's static `__shared__` variables as declarations such as
//! `.shared .align 4 .b8 _ZZ16transpose_paddedE4tile[4224];`: inside the
//! `.entry` body when the variable was "demoted" to the one kernel that uses it,
//! at module scope otherwise (file-scope `__shared__` used by several kernels).
//! `extern __shared__` arrays are `.extern .shared ... name[];`, sized at launch.

use super::kernel_ptx::KernelPtx;
use super::view::SharedArray;

impl KernelPtx<'_> {
    /// The shared variables declared in this kernel's body plus those declared
    /// at module scope that the body refers to by name.
    pub fn shared_arrays(&self) -> Vec<SharedArray> {
        self.view.shared.clone()
    }

    /// Bytes of static shared storage this kernel declares (extern arrays excluded).
    pub fn static_shared_bytes(&self) -> usize {
        self.view.shared.iter().filter_map(SharedArray::static_bytes).sum()
    }

    /// Stores to shared memory (or generic accesses, which the PTX cannot tell apart).
    pub fn writes_shared(&self) -> bool {
        ["st.shared", "atom.shared", "red.shared", "cvta.shared", "cvta.to.shared"].iter().any(|op| self.uses(op))
    }

    /// Loads from shared memory (or generic accesses, which the PTX cannot tell apart).
    pub fn reads_shared(&self) -> bool {
        ["ld.shared", "atom.shared", "cvta.shared", "cvta.to.shared"].iter().any(|op| self.uses(op))
    }

    /// The shared access that reaches furthest past its base address:
    /// `(immediate offset + access width, the instruction)`. In `st.shared.u32
    /// [%rd12+1024], %r17` the base register holds the buffer's address plus a
    /// non-negative index in any ordinary kernel, so the access touches byte 1027
    /// of the buffer or beyond. The instruction is quoted as its line is written.
    pub fn furthest_shared_access(&self) -> Option<(usize, String)> {
        self.furthest_shared_access_where(|_| true)
    }

    /// [`Self::furthest_shared_access`] among the instructions whose PTX line
    /// `executed` accepts (a measured launch's rows): what the launch runs,
    /// not a branch it never takes (another block size's instantiation).
    pub fn furthest_shared_access_where(&self, executed: impl Fn(usize) -> bool) -> Option<(usize, String)> {
        let quote = |line: usize| {
            let l = self.module.lines().nth(line.saturating_sub(1)).unwrap_or("");
            l.split_whitespace().collect::<Vec<_>>().join(" ")
        };
        self.view
            .ops
            .iter()
            .filter(|op| executed(op.line))
            .filter_map(|op| Some((op.shared_end?, op.line)))
            .max_by_key(|(end, _)| *end)
            .map(|(end, line)| (end, quote(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::kernel_ptx::kernel;
    use crate::inspect::text::{mentions, parse_declaration, shared_access_end};
    use crate::inspect::view::{type_bytes, SharedSize};

    const STENCIL_PTX: &str = r#"
.version 8.8
.target sm_75
.address_size 64
.extern .shared .align 16 .b8 dyn[];
.shared .align 4 .u32 counter;
// .globl	stencil_1d
.visible .entry other(
	.param .u64 p
)
{
	.shared .align 4 .b8 _ZZ5otherE1x[4096];
	ret;
}
.visible .entry stencil_1d(
	.param .u64 stencil_1d_param_0
)
{
	.reg .b32 	%r<29>;
	// demoted variable
	.shared .align 4 .b8 _ZZ10stencil_1dE3tmp[2072];
	.shared .align 8 .f64 _ZZ10stencil_1dE4grid[2][3];
	ld.shared.u32 	%r11, [%rd2+24];
	@%p1 st.shared.u32 	[%rd2+2048], %r10;
	ret;
}
"#;

    /// Trimmed from NVRTC 12.9 output (`--gpu-architecture=compute_75`).
    const PTX: &str = r#"
.version 8.8
.target sm_75
.address_size 64

	// .globl	transpose_padded
// _ZZ16transpose_paddedE4tile has been demoted
.shared .align 4 .b8 gtile[4096];
// vt has been demoted
.extern .shared .align 16 .b8 dyn[];
.shared .align 4 .b8 unused_by_padded[128];

.visible .entry transpose_padded(
	.param .u64 transpose_padded_param_0,
	.param .u32 transpose_padded_param_3
)
{
	.reg .b32 	%r<20>;
	// demoted variable
	.shared .align 4 .b8 _ZZ16transpose_paddedE4tile[4224];
	st.shared.f32 	[%rd3+1056], %f2;
	bar.sync 	0;
	ld.shared.f32 	%f5, [%rd5];
	ret;
}
.visible .entry other(
	.param .u64 other_param_0
)
{
	// demoted variable
	.shared .align 8 .b8 vt[24];
	.shared .align 4 .u32 _ZZ5otherE5count;
	.shared .align 4 .f32 grid2d[32][33];
	mov.u64 	%rd8, gtile;
	cvt.u32.u64 	%r3, %rd12;
	mov.u64 	%rd16, dyn;
	ret;
}
"#;

    fn kernel_arrays(name: &str) -> Vec<SharedArray> {
        kernel(PTX, name).map(|k| k.shared_arrays()).unwrap_or_default()
    }

    fn sizes(kernel: &str) -> Vec<(String, SharedSize)> {
        kernel_arrays(kernel).into_iter().map(|a| (a.name, a.size)).collect()
    }

    #[test]
    fn finds_a_demoted_tile_in_the_body() {
        assert_eq!(sizes("transpose_padded"), vec![("_ZZ16transpose_paddedE4tile".into(), SharedSize::Static(4224))]);
    }

    #[test]
    fn finds_module_scope_arrays_only_when_the_kernel_names_them() {
        use SharedSize::*;
        let got = sizes("other");
        assert_eq!(
            got,
            vec![
                ("vt".into(), Static(24)),
                ("_ZZ5otherE5count".into(), Static(4)),
                ("grid2d".into(), Static(32 * 33 * 4)),
                ("gtile".into(), Static(4096)),
                ("dyn".into(), Dynamic),
            ]
        );
        assert!(!got.iter().any(|(n, _)| n == "unused_by_padded"));
    }

    #[test]
    fn unknown_kernel_and_non_declarations() {
        assert!(kernel_arrays("transpose").is_empty());
        assert_eq!(parse_declaration("\tst.shared.f32 \t[%rd3], %f1;"), None);
        assert_eq!(parse_declaration(".global .align 4 .b8 g[16];"), None);
        let v = parse_declaration(".shared .align 16 .v4 .f32 quad[2]; // four lanes").unwrap();
        assert_eq!(v.static_bytes(), Some(32));
        assert_eq!(type_bytes(".f16x2"), Some(4));
        assert_eq!(type_bytes(".pred"), None);
    }

    #[test]
    fn whole_identifiers_only() {
        assert!(mentions("mov.u64 %rd8, gtile;", "gtile"));
        assert!(!mentions("mov.u64 %rd8, gtile2;", "gtile"));
        assert!(!mentions("cvt.u32.u64 %r3, %rd12;", "rd1"));
        assert!(!mentions("cvt.u32.u64 %r3, %rd12;", "r3"));
        assert!(!mentions("ld.shared.f32 %f1, [%rd1];", "shared"));
    }
    #[test]
    fn finds_the_furthest_shared_access() {
        // 2048 + 4 (st.shared.u32 at +2048); ld.shared.u32 at +24 reaches 28.
        assert_eq!(kernel(STENCIL_PTX, "stencil_1d").unwrap().furthest_shared_access().map(|(end, _)| end), Some(2052));
        assert_eq!(kernel(STENCIL_PTX, "other").unwrap().furthest_shared_access(), None);
        assert_eq!(shared_access_end("st.shared.u32 	[%rd12+1024], %r17;"), Some(1028));
        assert_eq!(shared_access_end("@%p1 st.shared.u8 	[%rd12], %rs1;"), Some(1));
        assert_eq!(shared_access_end("ld.shared.v4.u32 	{%r1, %r2, %r3, %r4}, [%rd66+496];"), Some(512));
        assert_eq!(shared_access_end("ld.shared.u8 	%r32, [%rd16+-8];"), Some(1));
        assert_eq!(shared_access_end("atom.shared.add.u32 	%r1, [counter], 1;"), Some(4));
        assert_eq!(shared_access_end("ld.global.u32 	%r7, [%rd1+4096];"), None);
        assert_eq!(shared_access_end(".shared .align 4 .b8 tmp[2072];"), None);
    }

    #[test]
    fn static_bytes_count_the_kernels_own_arrays() {
        // tmp (2072) + grid (48) in the body; the module's `counter` is not named by the body.
        assert_eq!(kernel(STENCIL_PTX, "stencil_1d").unwrap().static_shared_bytes(), 2072 + 48);
        assert_eq!(kernel(STENCIL_PTX, "other").unwrap().static_shared_bytes(), 4096);
    }
}
