//! Compiles real sources through NVRTC. Skipped (with a note) where NVRTC is
//! not installed, unless CUDA_LAB_REQUIRE_NVRTC=1 (CI), where that fails.

mod support;

use support::nvrtc;

use ptx_build::{BuildError, CompileOptions, CompilerKind, Severity, SourceFile};

const KERNEL: &str = r#"#include <stdio.h>
#include <stdint.h>
#include <cuda_runtime.h>

extern "C" __global__ void add_one(uint32_t *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1;
}
"#;

#[test]
fn compiles_a_kernel_to_ptx() {
    let Some(c) = nvrtc() else { return };
    assert_eq!(c.kind(), CompilerKind::Nvrtc);
    assert!(c.version().starts_with("NVRTC "), "{}", c.version());
    let ptx = c.compile(&SourceFile::from_text("kernels/add.cu", KERNEL), &CompileOptions::default()).unwrap();
    assert!(ptx.text.contains(".entry add_one("), "{}", ptx.text);
    assert!(ptx.text.contains(".target sm_75"), "{}", ptx.text);
    assert!(ptx.diagnostics.is_empty(), "{:?}", ptx.diagnostics);
    assert!(!ptx.from_cache);
    assert_eq!(ptx.compiler, c.version());
}

#[test]
fn options_reach_the_compiler() {
    let Some(c) = nvrtc() else { return };
    let src = SourceFile::from_text(
        "kernels/n.cu",
        "#ifndef N\n#error N must be defined\n#endif\nextern \"C\" __global__ void k(int *a) { a[0] = N; }\n",
    );
    let opts =
        CompileOptions { arch: (8, 0), line_info: true, defines: vec![("N".into(), "7".into())], ..Default::default() };
    let ptx = c.compile(&src, &opts).unwrap();
    assert!(ptx.text.contains(".target sm_80"));
    assert!(ptx.text.contains(".loc"), "line info");
    let e = c.compile(&src, &CompileOptions::default()).unwrap_err();
    assert!(e.to_string().contains("kernels/n.cu:2:"), "{e}");
}

#[test]
fn syntax_error_names_the_display_path_and_line() {
    let Some(c) = nvrtc() else { return };
    let src = SourceFile::from_text(
        "exercises/ex01-pi/kernels/pi_global.cu",
        "extern \"C\" __global__ void k(int *a)\n{\n    a[0] = x;\n    a[1] = 2\n}\n",
    );
    let e = c.compile(&src, &CompileOptions::default()).unwrap_err();
    let BuildError::Compile { file, diagnostics, log } = &e else { panic!("{e:?}") };
    assert_eq!(file, "exercises/ex01-pi/kernels/pi_global.cu");
    assert_eq!(diagnostics[0].file, "exercises/ex01-pi/kernels/pi_global.cu");
    assert_eq!((diagnostics[0].line, diagnostics[0].column), (Some(3), Some(12)));
    assert_eq!(diagnostics[0].severity, Severity::Error);
    assert!(diagnostics[0].message.contains("\"x\" is undefined"), "{diagnostics:?}");
    assert_eq!(diagnostics[1].line, Some(5), "missing `;` is reported on the next line");
    assert!(log.contains("error"));
    let shown = e.to_string();
    assert_eq!(shown.lines().count(), diagnostics.len(), "{shown}");
    assert!(
        shown.starts_with("exercises/ex01-pi/kernels/pi_global.cu:3:12: error: identifier \"x\" is undefined"),
        "{shown}"
    );
}

#[test]
fn warnings_are_kept_on_success() {
    let Some(c) = nvrtc() else { return };
    let src = SourceFile::from_text(
        "kernels/w.cu",
        "extern \"C\" __global__ void k(int *a)\n{\n    int unused;\n    a[0] = 1;\n}\n",
    );
    let ptx = c.compile(&src, &CompileOptions::default()).unwrap();
    assert_eq!(ptx.diagnostics.len(), 1, "{:?}", ptx.diagnostics);
    let w = &ptx.diagnostics[0];
    assert_eq!(w.severity, Severity::Warning);
    assert_eq!(w.to_string(), "kernels/w.cu:3:9: warning: variable \"unused\" was declared but never referenced");
}

#[test]
fn include_of_a_system_file_is_refused_before_nvrtc() {
    let Some(c) = nvrtc() else { return };
    for src in [
        "#include \"/etc/passwd\"\nextern \"C\" __global__ void k() {}\n",
        "%:include \"/etc/passwd\"\n",
        "int q; /*\n*/ #include \"/etc/passwd\"\n",
        "// x \\  \n#include \"/etc/passwd\"\n",
        "// x\r#include \"/etc/passwd\"\n",
        "#include_next \"/etc/passwd\"\n",
        "#if __has_include(\"/etc/passwd\")\n#endif\n",
    ] {
        let e = c.compile(&SourceFile::from_text("kernels/evil.cu", src), &CompileOptions::default()).unwrap_err();
        assert!(matches!(e, BuildError::Refused { .. }), "{src:?}: {e:?}");
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains("root:x:0"), "{shown}");
        assert!(shown.contains("kernels/evil.cu"), "{shown}");
    }
}

#[test]
fn allowed_headers_are_served_from_memory() {
    let Some(c) = nvrtc() else { return };
    let includes: String =
        ptx_build::allowed_headers().map(|h| format!("#include <{h}>\n#include \"{h}\"\n")).collect();
    let body = "extern \"C\" __global__ void k(float *a, int64_t *b, std::uint8_t *c)\n{\n\
                a[0] = fminf(FLT_MAX, std::sqrt(a[1])) + INT_MAX + UINT32_MAX;\n b[0] = INT64_MIN;\n\
                printf(\"%d\\n\", threadIdx.x);\n assert(a[0] > 0);\n}\n";
    let ptx = c
        .compile(&SourceFile::from_text("kernels/h.cu", format!("{includes}{body}")), &CompileOptions::default())
        .unwrap();
    assert!(ptx.text.contains(".entry k("));
    assert!(ptx.text.contains("vprintf"), "printf without a real stdio.h");
}

#[test]
fn second_compile_comes_from_the_cache() {
    let Some(c) = nvrtc() else { return };
    let dir = tempfile::tempdir().unwrap();
    let c = c.with_cache_dir(dir.path().join("ptx-cache"));
    let src = SourceFile::from_text(
        "kernels/c.cu",
        "extern \"C\" __global__ void k(int *a)\n{\n    int u;\n    a[0] = 3;\n}\n",
    );
    let opts = CompileOptions::default();
    let first = c.compile(&src, &opts).unwrap();
    let second = c.compile(&src, &opts).unwrap();
    assert!(!first.from_cache);
    assert!(second.from_cache);
    assert_eq!(first.text, second.text);
    assert_eq!(first.diagnostics, second.diagnostics, "warnings survive the cache");
    assert_eq!(second.compiler, c.version());
    // Another option is another entry.
    assert!(!c.compile(&src, &CompileOptions { arch: (8, 0), ..opts.clone() }).unwrap().from_cache);
    // A corrupted entry is recompiled and overwritten.
    for e in std::fs::read_dir(dir.path().join("ptx-cache")).unwrap() {
        std::fs::write(e.unwrap().path(), b"not json").unwrap();
    }
    assert!(!c.compile(&src, &opts).unwrap().from_cache);
    assert!(c.compile(&src, &opts).unwrap().from_cache);
    // Failures are not cached.
    let bad = SourceFile::from_text("kernels/bad.cu", "this is not cuda");
    assert!(c.compile(&bad, &opts).is_err());
    assert!(c.compile(&bad, &opts).is_err());
}

#[test]
fn unsupported_arch_says_so() {
    let Some(c) = nvrtc() else { return };
    let src = SourceFile::from_text("kernels/a.cu", "extern \"C\" __global__ void k() {}\n");
    let e = c.compile(&src, &CompileOptions { arch: (2, 0), ..Default::default() }).unwrap_err();
    assert!(matches!(e, BuildError::Other(_)), "{e:?}");
    assert!(e.to_string().contains("cannot compile for compute_20"), "{e}");
}

#[test]
fn many_threads_compile_at_once() {
    let Some(c) = nvrtc() else { return };
    std::thread::scope(|s| {
        for i in 0..4 {
            let c = c.clone();
            s.spawn(move || {
                let src = SourceFile::from_text(
                    format!("kernels/t{i}.cu"),
                    format!("extern \"C\" __global__ void k{i}(int *a) {{ a[0] = {i}; }}\n"),
                );
                let ptx = c.compile(&src, &CompileOptions::default()).unwrap();
                assert!(ptx.text.contains(&format!(".entry k{i}(")));
            });
        }
    });
}

const DEVICE_HEADERS_KERNEL: &str = r#"#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void mixed(__half *h, __nv_bfloat16 *b, float *sum)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    h[threadIdx.x] = __hadd(h[threadIdx.x], __float2half(1.0f));
    b[threadIdx.x] = __float2bfloat16(__bfloat162float(b[threadIdx.x]) * 2.0f);
    float s = cg::reduce(warp, __half2float(h[threadIdx.x]), cg::plus<float>());
    block.sync();
    if (warp.thread_rank() == 0)
        atomicAdd(sum, s);
}
"#;

#[test]
fn device_headers_compile_from_the_provisioned_cuda_headers() {
    let Some(c) = nvrtc() else { return };
    let ptx = c.compile(&SourceFile::from_text("kernels/mixed.cu", DEVICE_HEADERS_KERNEL), &CompileOptions::default());
    let ptx = ptx.unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.text.contains(".entry mixed("), "{}", ptx.text);
    // Half-precision arithmetic really came from cuda_fp16.h.
    assert!(ptx.text.contains(".f16"), "{}", ptx.text);
}

#[test]
fn a_students_own_cuda_fp16_h_is_never_read() {
    let Some(c) = nvrtc() else { return };
    // A submission folder holding its own cuda_fp16.h next to the kernel: the
    // angle-bracket include must still read CUDA's header, never this one.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cuda_fp16.h"), "#error EVIL_HEADER_FROM_THE_STUDENTS_FOLDER\n").unwrap();
    std::fs::write(dir.path().join("info.h"), "#error EVIL_INFO\n").unwrap();
    let kernel = dir.path().join("k.cu");
    let text = "#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n\
                extern \"C\" __global__ void k(__half *h) { h[0] = __float2half(2.0f); }\n";
    std::fs::write(&kernel, text).unwrap();
    let src = SourceFile::read(&kernel, kernel.to_str().unwrap()).unwrap();
    let ptx = c.compile(&src, &CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.text.contains(".entry k("));
    // Quoted, it would search that folder first: refused before any compiler runs.
    let quoted = SourceFile::from_text("kernels/q.cu", "#include \"cuda_fp16.h\"\n");
    let e = c.compile(&quoted, &CompileOptions::default()).unwrap_err();
    assert!(matches!(e, BuildError::Refused { line: 1, .. }), "{e}");
}

#[test]
fn host_headers_stay_refused_next_to_device_headers() {
    let Some(c) = nvrtc() else { return };
    for host in ["cuda_runtime_api.h", "cuda_fp16.hpp", "nv/target", "cooperative_groups/details/info.h", "stdlib.h"] {
        let text = format!("#include <cuda_fp16.h>\n#include <{host}>\nextern \"C\" __global__ void k() {{}}\n");
        let e = c.compile(&SourceFile::from_text("kernels/h.cu", text), &CompileOptions::default()).unwrap_err();
        assert!(matches!(e, BuildError::Refused { line: 2, .. }), "{host}: {e}");
        assert!(e.to_string().contains("is not allowed"), "{e}");
    }
}

#[test]
fn compile_errors_render_with_a_caret_and_a_hint() {
    let Some(c) = nvrtc() else { return };
    let text = "extern \"C\" __global__ void k(float *a)\n{\n    float *d;\n    cudaMalloc(&d, 4);\n}\n";
    let e = c.compile(&SourceFile::from_text("kernels/host.cu", text), &CompileOptions::default()).unwrap_err();
    let BuildError::Compile { diagnostics, .. } = &e else { panic!("{e:?}") };
    let shown = ptx_build::render_diagnostics(diagnostics, text);
    assert!(shown.starts_with("kernels/host.cu:4:5: error: identifier \"cudaMalloc\" is undefined\n"), "{shown}");
    assert!(shown.contains("     4 |     cudaMalloc(&d, 4);\n       |     ^\n"), "{shown}");
    assert!(shown.contains("= help: `cudaMalloc` is host code"), "{shown}");
}

/// Uses every constant of the prelude (NVRTC has no `<math.h>`: without it
/// "identifier "INFINITY" is undefined"); line 12 is a mistake, to show that
/// the prelude moved no line.
const CONSTANTS: &str = include_str!("kernels/lowest.cu");

#[test]
fn math_constants_are_defined_without_moving_a_line() {
    let Some(c) = nvrtc() else { return };
    let names: Vec<&str> = ptx_build::prelude_names().collect();
    for name in ["INFINITY", "NAN", "HUGE_VALF", "FLT_MAX", "FLT_MIN", "FLT_EPSILON", "INT_MAX", "INT_MIN", "UINT_MAX"]
    {
        assert!(names.contains(&name), "{name} is not in the prelude: {names:?}");
        assert!(CONSTANTS.contains(name), "the test kernel uses {name}");
    }
    let good = SourceFile::from_text("kernels/lowest.cu", CONSTANTS.replace("MISTAKE\n", "\n"));
    let ptx = c.compile(&good, &CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.text.contains(".entry lowest("), "{}", ptx.text);
    // INFINITY is +inf as a float constant: 0f7F800000.
    assert!(ptx.text.contains("0f7F800000"), "{}", ptx.text);
    let bad = SourceFile::from_text("kernels/lowest.cu", CONSTANTS);
    let e = c.compile(&bad, &CompileOptions::default()).unwrap_err().to_string();
    assert!(e.contains("kernels/lowest.cu:12:"), "the student's line 12: {e}");
    // A file that includes the headers as well compiles without a word.
    let with_headers = format!("#include <limits.h>\n#include <float.h>\n#include <math.h>\n{}", CONSTANTS);
    let with_headers = SourceFile::from_text("kernels/lowest.cu", with_headers.replace("MISTAKE\n", "\n"));
    let ptx = c.compile(&with_headers, &CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.diagnostics.is_empty(), "{:?}", ptx.diagnostics);
}
