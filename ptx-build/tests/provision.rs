//! A fresh machine: 8 processes start at once on an empty cache (parallel
//! tests, `grader batch` children). One of them installs NVRTC with pip, the
//! others wait for it; every one then compiles with it, and no half-finished
//! install is left behind.
//!
//! Downloads NVRTC (~100 MB) with pip, so it is `#[ignore]`d; `.ci/run` runs it:
//! `cargo test -p ptx-build --test provision -- --ignored`.

use std::path::Path;
use std::process::{Command, Stdio};

use ptx_build::{CompileOptions, Compiler, SourceFile};

const CHILD: &str = "CUDA_LAB_PROVISION_TEST_CHILD";
const PROCESSES: usize = 8;

#[test]
#[ignore = "downloads NVRTC with pip; run by .ci/run"]
fn eight_processes_on_an_empty_cache_install_once() {
    let cache = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            let mut cmd = Command::new(&exe);
            cmd.args(["--ignored", "--exact", "child_compiles_with_what_it_finds", "--nocapture", "--test-threads=1"])
                .env(CHILD, "1")
                .env("XDG_CACHE_HOME", cache.path())
                .env_remove(ptx_build::OFFLINE_ENV)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            // Nothing but the cache may offer NVRTC (a toolkit in /usr/local/cuda still would).
            for var in ["LD_LIBRARY_PATH", "CUDA_PATH", "CUDA_HOME", "CONDA_PREFIX", "CUDA_LAB_COMPILER"] {
                cmd.env_remove(var);
            }
            cmd.spawn().unwrap()
        })
        .collect();
    let outputs: Vec<_> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    let mut installs = 0;
    let mut found_elsewhere = Vec::new();
    for (i, out) in outputs.iter().enumerate() {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "process {i} failed:\n{stdout}\n{stderr}");
        assert!(stdout.contains("CHILD-COMPILED"), "process {i} did not compile:\n{stdout}\n{stderr}");
        installs += stderr.matches("cuda-lab: installing NVRTC").count();
        if let Some(path) = stdout.lines().find_map(|l| l.strip_prefix("CHILD-NVRTC ")) {
            if !Path::new(path).starts_with(cache.path()) {
                found_elsewhere.push(path.to_string());
            }
        }
    }
    if !found_elsewhere.is_empty() && installs == 0 {
        eprintln!("note: NVRTC is installed on this machine ({found_elsewhere:?}); provisioning was not needed");
        return;
    }
    assert_eq!(installs, 1, "exactly one process downloads NVRTC");
    assert!(found_elsewhere.is_empty(), "every process uses the provisioned NVRTC: {found_elsewhere:?}");
    // The finished install, its lock file, and nothing half-done.
    let mut left: Vec<String> = std::fs::read_dir(cache.path().join("cuda-lab"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [".nvrtc-12.9.86.lock", "nvrtc-12.9.86"]);
}

/// Run as a child process by the test above (does nothing otherwise).
#[test]
#[ignore = "a child of eight_processes_on_an_empty_cache_install_once"]
fn child_compiles_with_what_it_finds() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let c = Compiler::nvrtc().unwrap_or_else(|e| panic!("{e}"));
    println!("CHILD-NVRTC {}", c.path().map(|p| p.display().to_string()).unwrap_or_default());
    let src = SourceFile::from_text("kernels/k.cu", "extern \"C\" __global__ void k(int *a) { a[threadIdx.x] = 1; }\n");
    let ptx = c.compile(&src, &CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.text.contains(".entry k("));
    println!("CHILD-COMPILED");
}
