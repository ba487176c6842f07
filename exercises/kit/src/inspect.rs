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
//!
//! The PTX is read by the simulator's parser ([`ptx_sim::parse_module`], fuzzed,
//! the same reading that runs the kernels), in `parsed`. A module that parser
//! refuses may still load on a GPU; its checks keep the verdicts they had by
//! reading its text line by line, in `text`, the only place that does.

mod entry;
mod kernel_ptx;
mod parsed;
mod shared;
mod text;
mod view;

pub use entry::{check_args, entry_decls, EntryDecl, PtxParam, WrongSignature};
pub use kernel_ptx::{entries, kernel, KernelPtx};
pub use view::{SharedArray, SharedSize};

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

    /// What the structure checks ask of a kernel, in one line.
    fn answers(k: &KernelPtx) -> String {
        let ops: Vec<&str> = k.instructions().collect();
        format!(
            "{ops:?} {} {} {} {:?} {:?}",
            k.uses_shared(),
            k.declares_dynamic_shared(),
            k.static_shared_bytes(),
            k.shared_arrays(),
            k.furthest_shared_access()
        )
    }

    #[test]
    fn the_text_reader_agrees_with_the_parse() {
        // The text reader serves only modules the simulator's parser refuses;
        // on those it reads, both give the same answers.
        for name in ["dot", "pi_shared", "switch"] {
            let ptx = clang(name);
            let m = parsed::read(&ptx).expect("the simulator reads clang's PTX");
            let names: Vec<String> = parsed::kernels(&m).map(|f| f.name.clone()).collect();
            assert_eq!(names, text::entries(&ptx), "{name}");
            for f in parsed::kernels(&m) {
                let from_parse = KernelPtx { name: f.name.clone(), view: parsed::kernel_view(&m, f), module: &ptx };
                let view = text::kernel_view(&ptx, &f.name).unwrap();
                let from_text = KernelPtx { name: f.name.clone(), view, module: &ptx };
                assert_eq!(answers(&from_parse), answers(&from_text), "{name}: {}", f.name);
            }
        }
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
