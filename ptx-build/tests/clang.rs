//! clang's CUDA mode gives what NVRTC gives: PTX for the asked architecture,
//! the student's lines in `.loc`, caret diagnostics on the student's line with
//! the first-week hints, NVRTC's refusals of host code, device headers, and
//! the content-keyed cache. Installs clang with pip on first use; skipped
//! where it cannot be had, unless CUDA_LAB_REQUIRE_NVRTC=1 (CI), where that fails.

use ptx_build::{render_diagnostics, BuildError, CompileOptions, Compiler, CompilerKind, SourceFile};

fn clang() -> Option<Compiler> {
    match Compiler::clang() {
        Ok(c) => Some(c),
        Err(e) if std::env::var("CUDA_LAB_REQUIRE_NVRTC").map_or(true, |v| v.is_empty() || v == "0") => {
            eprintln!("skipping: {e}");
            None
        }
        Err(e) => panic!("CUDA_LAB_REQUIRE_NVRTC is set but clang could not be provisioned: {e}"),
    }
}

const PI: &str = "#include <stdio.h>\n#include <stdint.h>\n\
extern \"C\" __global__ void pi(const float *x, int n, unsigned int *hits)\n{\n\
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {\n\
        if (x[i] <= N)\n            atomicAdd(hits, 1u);\n    }\n}\n";

#[test]
fn compiles_for_the_arch_with_the_students_lines() {
    let Some(c) = clang() else { return };
    assert_eq!(c.kind(), CompilerKind::Clang);
    assert!(c.version().starts_with("clang 22."), "{}", c.version());
    let opts = CompileOptions {
        arch: (8, 0),
        line_info: true,
        defines: vec![("N".into(), "1.0f".into())],
        ..Default::default()
    };
    let ptx = c.compile(&SourceFile::from_text("kernels/pi.cu", PI), &opts).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.text.contains(".entry pi("), "{}", ptx.text);
    assert!(ptx.text.contains(".target sm_80"));
    assert_eq!(ptx.compiler, c.version());
    // The student's file is named as NVRTC names it, and the inlined atomicAdd's
    // instruction carries the student's line 7, not the wrapper header's.
    let file = ptx.text.lines().find(|l| l.contains(".file") && l.contains("\"kernels/pi.cu\"")).expect(".file");
    let id = file.trim_start().trim_start_matches(".file").split_whitespace().next().unwrap();
    let lines: Vec<&str> = ptx.text.lines().collect();
    let atom = lines.iter().position(|l| l.trim_start().starts_with("atom.")).expect("an atom");
    let loc = lines[..atom].iter().rev().find(|l| l.trim_start().starts_with(".loc")).unwrap();
    let fields: Vec<&str> = loc.trim_start().trim_start_matches(".loc").split_whitespace().collect();
    assert_eq!((fields[0], fields[1]), (id, "7"), "{loc}");
    assert!(!ptx.text.contains("cuda-lab-input"), "the temporary name is gone");
    // Without N, the student's line 6 is named.
    let e = c.compile(&SourceFile::from_text("kernels/pi.cu", PI), &CompileOptions::default()).unwrap_err();
    assert!(e.to_string().starts_with("kernels/pi.cu:6:13: error: use of undeclared identifier 'N'"), "{e}");
}

#[test]
fn errors_show_the_students_line_with_a_caret_and_hints() {
    let Some(c) = clang() else { return };
    let src = "extern \"C\" __global__ void k(int *a)\n{\n    /* é */ a[0] = x;\n    a[1] = 2\n}\n";
    let e = c.compile(&SourceFile::from_text("kernels/k.cu", src), &CompileOptions::default()).unwrap_err();
    let BuildError::Compile { diagnostics, .. } = &e else { panic!("{e:?}") };
    // Columns in characters (the é is two bytes), as NVRTC's caret gives them.
    assert_eq!((diagnostics[0].line, diagnostics[0].column), (Some(3), Some(20)), "{diagnostics:?}");
    let shown = render_diagnostics(diagnostics, src);
    assert!(
        shown.starts_with(
            "kernels/k.cu:3:20: error: use of undeclared identifier 'x'\n     3 |     /* é */ a[0] = x;\n       |                    ^\n"
        ),
        "{shown}"
    );
    let host = "extern \"C\" __global__ void k(float *a) { a[0] = 1; }\nint main() { return 0; }\n";
    let e = c.compile(&SourceFile::from_text("kernels/k.cu", host), &CompileOptions::default()).unwrap_err();
    let BuildError::Compile { diagnostics, .. } = &e else { panic!("{e:?}") };
    let shown = render_diagnostics(diagnostics, host);
    assert!(shown.contains("kernels/k.cu:2:5: error: A function without execution space annotations"), "{shown}");
    assert!(shown.contains("help: `main` is host code"), "{shown}");
}

#[test]
fn host_code_is_refused_as_nvrtc_refuses_it() {
    let Some(c) = clang() else { return };
    let opts = CompileOptions::default();
    for (src, line) in [
        ("float sq(float x) { return x * x; }\nextern \"C\" __global__ void k(float *a) { a[0] = 1; }\n", 1),
        ("int counter = 0;\nextern \"C\" __global__ void k(float *a) { a[0] = 1; }\n", 1),
        ("extern \"C\" __global__ void k(float *a) { a[0] = 1; }\nvoid helper(float *p) { p[0] = 2; }\n", 2),
        // Host code that fails on the host side alone (a __device__ function called from main).
        ("__device__ float sq(float x) { return x * x; }\nextern \"C\" __global__ void k(float *a) { a[0] = sq(1); }\n\
          int main() { return (int)sq(2.0f); }\n", 3),
    ] {
        let e = c.compile(&SourceFile::from_text("k.cu", src), &opts).unwrap_err();
        assert!(e.to_string().starts_with(&format!("k.cu:{line}:")), "{src}: {e}");
        assert!(e.to_string().contains("not allowed in JIT mode") || e.to_string().contains("__host__"), "{e}");
    }
    // What device code may have stays: __device__ and __host__ __device__ helpers, __constant__ data.
    let fine =
        "__constant__ float w[2];\n__device__ int hits;\n__host__ __device__ float sq(float x) { return x * x; }\n\
                __device__ float cube(float x) { return x * sq(x); }\n\
                extern \"C\" __global__ void k(float *a) { a[0] = cube(a[1]) + w[0]; atomicAdd(&hits, 1); }\n";
    c.compile(&SourceFile::from_text("k.cu", fine), &opts).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn device_headers_and_the_include_policy() {
    let Some(c) = clang() else { return };
    let src = "#include <cuda_fp16.h>\n#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n\
               extern \"C\" __global__ void k(__half *a, float *b) { cg::this_thread_block().sync(); \
               b[0] = __half2float(a[0]); }\n";
    c.compile(&SourceFile::from_text("k.cu", src), &CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(c.header_source().starts_with("clang's CUDA 12.9 layout "), "{}", c.header_source());
    let e = c.compile(&SourceFile::from_text("k.cu", "#include \"/etc/passwd\"\n"), &CompileOptions::default());
    assert!(matches!(e, Err(BuildError::Refused { line: 1, .. })), "{e:?}");
}

#[test]
fn the_cache_is_keyed_by_the_compiler() {
    let Some(c) = clang() else { return };
    let dir = tempfile::tempdir().unwrap();
    let c = c.with_cache_dir(dir.path());
    let src = SourceFile::from_text("k.cu", "extern \"C\" __global__ void k(int *a) { a[threadIdx.x] = 1; }\n");
    let opts = CompileOptions::default();
    assert!(!c.compile(&src, &opts).unwrap().from_cache);
    let hit = c.compile(&src, &opts).unwrap();
    assert!(hit.from_cache && hit.compiler == c.version());
    if let Ok(nvrtc) = Compiler::nvrtc() {
        assert!(!nvrtc.with_cache_dir(dir.path()).compile(&src, &opts).unwrap().from_cache, "NVRTC's is another entry");
    }
}

/// The same prelude as NVRTC's (ptx-build/tests/nvrtc.rs compiles the same kernel,
/// tests/kernels/lowest.cu): every constant compiles, and line 12's mistake is named on line 12.
#[test]
fn math_constants_are_defined_without_moving_a_line() {
    let Some(c) = clang() else { return };
    let kernel = include_str!("kernels/lowest.cu");
    let good = SourceFile::from_text("kernels/lowest.cu", kernel.replace("MISTAKE\n", "\n"));
    let ptx = c.compile(&good, &CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.text.contains(".entry lowest("), "{}", ptx.text);
    let e = c.compile(&SourceFile::from_text("kernels/lowest.cu", kernel), &CompileOptions::default()).unwrap_err();
    assert!(e.to_string().contains("kernels/lowest.cu:12:"), "the student's line 12: {e}");
}
