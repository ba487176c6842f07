//! Every stub and every reference solution compiles through NVRTC and defines
//! the kernels its part needs; stubs hold TODOs and references do not. Runs
//! without a GPU (CI installs NVRTC from pip).

use std::path::{Path, PathBuf};

use ptx_build::{CompileOptions, Compiler, SourceFile};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn compiler() -> Option<Compiler> {
    match Compiler::nvrtc() {
        Ok(c) => Some(c),
        Err(e) if std::env::var_os("CUDA_LAB_REQUIRE_NVRTC").is_none() => {
            eprintln!("skipping: {e}");
            None
        }
        Err(e) => panic!("CUDA_LAB_REQUIRE_NVRTC is set but NVRTC is missing: {e}"),
    }
}

fn sources(tree: &str) -> Vec<(String, &'static [&'static str], String)> {
    let mut out = Vec::new();
    for ex in grader::registry::all() {
        for part in &ex.parts {
            let rel = format!("{tree}/{}/{}", ex.folder_name(), part.file);
            let text = std::fs::read_to_string(root().join(&rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
            out.push((rel, part.kernels, text));
        }
    }
    out
}

#[test]
fn stubs_and_references_compile_and_define_their_kernels() {
    let Some(compiler) = compiler() else { return };
    for tree in ["exercises", "reference"] {
        for (rel, kernels, text) in sources(tree) {
            let ptx = compiler
                .compile(&SourceFile::from_text(rel.clone(), text), &CompileOptions::default())
                .unwrap_or_else(|e| panic!("{rel} does not compile:\n{e}"));
            for k in kernels {
                assert!(kit::inspect::kernel(&ptx.text, k).is_some(), "{rel} does not define kernel `{k}`");
            }
        }
    }
}

#[test]
fn stubs_have_todos_and_references_do_not() {
    for (rel, _, text) in sources("exercises") {
        assert!(text.contains("TODO"), "{rel}: a stub must tell the student what to do");
    }
    for (rel, _, text) in sources("reference") {
        assert!(!text.contains("TODO"), "{rel}: a reference solution must be complete");
    }
}
