//! No CUDA compiler and none can be installed (network off): the grader says
//! so once, lists every test as not run, one line each, and exits with 3.

use std::path::Path;
use std::process::Command;

use grader::report::{GradeReport, Status};

/// The grader as a new user without network runs it: an empty cache, nothing
/// on the library path, and `extra_env` saying why nothing can be downloaded.
fn grade_offline(extra_env: &[(&str, &str)]) -> Option<(std::process::Output, GradeReport)> {
    let home = tempfile::tempdir().unwrap();
    let json = home.path().join("ex01.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_grader"));
    cmd.args(["ex01", "--backend", "sim", "--seed", "7", "--json", json.to_str().unwrap()])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .envs(extra_env.iter().copied());
    let unset = [
        "LD_LIBRARY_PATH",
        "CUDA_PATH",
        "CUDA_HOME",
        "CONDA_PREFIX",
        "CUDA_LAB_COMPILER",
        "CUDA_LAB_OFFLINE",
        "CUDA_LAB_NO_NVRTC",
    ];
    for var in unset {
        if !extra_env.iter().any(|(k, _)| k == &var) {
            cmd.env_remove(var);
        }
    }
    let out = cmd.output().expect("grader runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !stdout.contains("nothing can be compiled") {
        // A CUDA toolkit (or a pip install) on this machine: nothing to provision.
        eprintln!("note: NVRTC is installed on this machine; the no-compiler path cannot be exercised here");
        return None;
    }
    let report = serde_json::from_slice(&std::fs::read(&json).expect("the JSON is written")).unwrap();
    Some((out, report))
}

fn assert_said_once_and_listed(out: &std::process::Output, report: &GradeReport, why: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "documented exit status 3:\n{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors: Vec<&str> = stdout.lines().filter(|l| l.contains("nothing can be compiled")).collect();
    assert_eq!(errors.len(), 1, "said once:\n{stdout}");
    assert!(errors[0].contains(why), "{}", errors[0]);
    assert!(errors[0].contains("`python3 -m pip install nvidia-cuda-nvrtc-cu12==12.9.86`"), "{}", errors[0]);
    // The install command is in that one line only, not repeated per test or part.
    assert_eq!(stdout.matches("pip install").count(), 1, "{stdout}");
    let tests: Vec<_> = report.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests).collect();
    assert!(tests.len() >= 10, "every ex01 test is listed");
    for t in &tests {
        assert_eq!(t.status, Status::NotRun, "{}", t.name);
        let line = format!("test {} ... not run (no compiler)", t.name);
        assert_eq!(stdout.lines().filter(|l| *l == line).count(), 1, "one line for {}:\n{stdout}", t.name);
    }
    assert_eq!(report.score, 0.0);
}

#[test]
fn offline_without_nvrtc_says_so_once_and_exits_3() {
    let Some((out, report)) = grade_offline(&[("CUDA_LAB_OFFLINE", "1")]) else { return };
    assert_said_once_and_listed(&out, &report, "CUDA_LAB_OFFLINE=1 forbids downloading it");
}

#[test]
fn an_unreachable_pip_index_says_so_once_and_exits_3() {
    // pip's own settings: an index nobody answers on, no retries, no local wheels.
    let env = [("PIP_INDEX_URL", "http://127.0.0.1:9/"), ("PIP_RETRIES", "0"), ("PIP_FIND_LINKS", "")];
    let Some((out, report)) = grade_offline(&env) else { return };
    assert_said_once_and_listed(&out, &report, "pip could not install it");
}
