//! The fidelity sweep: every kernel of the feature corpus, compiled by NVRTC at
//! each architecture the grader compiles for, must be fully supported by the
//! simulator. A new instruction, modifier, directive or predefined identifier
//! that the simulator rejects fails this test, with the list of them.
//!
//! The corpus: the differential corpus (`grader/differential`: cooperative
//! groups, `warpSize`, async copies, vector and cache-hinted accesses, bit
//! intrinsics, math functions, atomics of every type, warp intrinsics, ...),
//! the simulator's own test kernels and the reference solutions. The
//! architectures: compute_90 (the grader's, on the H100 and on the simulator)
//! for every file; for the differential corpus also compute_80 (`cp.async`'s
//! first) and compute_75 (ptx-build's default). (Every file at every
//! architecture takes 30 s here; the other pairs add nothing the sweep found.)
//! Whether the results match the CPU is the differential test's part
//! (grader/tests/differential.rs); this one only asks "does it all run".
//!
//! Items that stay unsupported on purpose are listed in [`KNOWN`], each with the
//! line of docs/grading-accuracy.md that says why. The list is empty.

use std::path::{Path, PathBuf};

use ptx_build::{CompileOptions, Compiler, SourceFile};

const ARCHES: &[(u32, u32)] = &[(7, 5), (8, 0), (9, 0)];
/// The grader's architecture, for files outside the differential corpus.
const GRADER_ARCH: (u32, u32) = (9, 0);

/// Files that use what an architecture lacks (`__reduce_*_sync` needs sm_80).
const MIN_ARCH: &[(&str, (u32, u32))] = &[("warp_reduce.cu", (8, 0)), ("warp_intrinsics.cu", (8, 0))];

/// Unsupported items accepted on purpose: (part of the message, why).
const KNOWN: &[(&str, &str)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cu_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cu_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "cu") {
            out.push(p);
        }
    }
}

fn corpus() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["grader/differential", "ptx-sim/tests/kernels", "reference"] {
        cu_files(&root().join(dir), &mut files);
    }
    files
}

/// The grader's compiler (`CUDA_LAB_COMPILER`; NVRTC by default), so that the
/// same sweep runs over another compiler's PTX (`CUDA_LAB_COMPILER=nvcc`, and
/// clang once ptx-build offers it).
fn nvrtc() -> Option<Compiler> {
    match Compiler::from_env() {
        Ok(c) => Some(c),
        Err(e) if std::env::var_os("CUDA_LAB_REQUIRE_NVRTC").is_some() => panic!("NVRTC is required: {e}"),
        Err(e) => {
            eprintln!("note: NVRTC not found, the feature sweep is skipped: {e}");
            None
        }
    }
}

/// Compiles and checks `files`: (modules compiled, problems found).
fn sweep(compiler: &Compiler, files: &[PathBuf]) -> (usize, Vec<String>) {
    let mut problems = Vec::new();
    let mut compiled = 0;
    for file in files {
        let rel = file.strip_prefix(root()).unwrap_or(file).display().to_string();
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let src = SourceFile::read(file, rel.clone()).unwrap();
        for &arch in ARCHES {
            let differential = rel.starts_with("grader/differential");
            if MIN_ARCH.iter().any(|(f, min)| *f == name && arch < *min) || (!differential && arch != GRADER_ARCH) {
                continue;
            }
            let opts = CompileOptions { arch, line_info: true, ..CompileOptions::default() };
            let ptx = match compiler.compile(&src, &opts) {
                Ok(p) => p,
                Err(e) => {
                    problems.push(format!("{rel} (compute_{}{}): does not compile: {e}", arch.0, arch.1));
                    continue;
                }
            };
            compiled += 1;
            match ptx_sim::unsupported_instructions(&ptx.text) {
                Ok(found) => {
                    for e in found {
                        let msg = e.to_string();
                        if !KNOWN.iter().any(|(k, _)| msg.contains(k)) {
                            problems.push(format!("{rel} (compute_{}{}): {msg}", arch.0, arch.1));
                        }
                    }
                }
                Err(e) => problems.push(format!("{rel} (compute_{}{}): does not load: {e}", arch.0, arch.1)),
            }
        }
    }
    (compiled, problems)
}

#[test]
fn every_instruction_of_the_feature_corpus_is_supported() {
    let Some(compiler) = nvrtc() else { return };
    let files = corpus();
    assert!(files.len() >= 40, "the corpus has {} files", files.len());
    // two threads: NVRTC compiles independent programs in parallel
    let half = files.len() / 2;
    let (a, b) = std::thread::scope(|s| {
        let first = s.spawn(|| sweep(&compiler, &files[..half]));
        let second = sweep(&compiler, &files[half..]);
        (first.join().unwrap(), second)
    });
    let compiled = a.0 + b.0;
    let mut problems: Vec<String> = a.1.into_iter().chain(b.1).collect();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "{} of {compiled} modules compiled by {} use what the simulator rejects (support it, or list it in \
         KNOWN with a line in docs/grading-accuracy.md):\n{}",
        problems.len(),
        compiler.version(),
        problems.join("\n")
    );
}
