//! Every exercise on the PTX simulator, without a GPU: the reference solutions
//! pass every correctness and structure check, the stubs fail, and planted
//! flaws that a GPU hides (a race, uncoalesced writes, bank conflicts) are
//! caught or shown. This is what a student without an NVIDIA GPU gets.

use std::path::Path;
use std::process::Command;

use grader::report::{GradeReport, Status, TestReport};
use kit::CheckKind;

fn nvrtc_available() -> bool {
    let ok = ptx_build::Compiler::nvrtc().is_ok();
    if !ok && std::env::var_os("CUDA_LAB_REQUIRE_NVRTC").is_some() {
        panic!("CUDA_LAB_REQUIRE_NVRTC is set but NVRTC is missing");
    }
    ok
}

fn grade(args: &[&str]) -> GradeReport {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("grades.json");
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .args(["--backend", "sim", "--seed", "11", "--json", json.to_str().unwrap()])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("grader runs");
    assert!(json.exists(), "no JSON; stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

fn tests(r: &GradeReport) -> impl Iterator<Item = &TestReport> {
    r.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests)
}

fn test<'a>(r: &'a GradeReport, name: &str) -> &'a TestReport {
    tests(r).find(|t| t.name == name).unwrap_or_else(|| panic!("no test {name}"))
}

#[test]
fn references_pass_everything_the_simulator_can_run() {
    if !nvrtc_available() {
        return;
    }
    let start = std::time::Instant::now();
    let r = grade(&["all", "--reference"]);
    eprintln!("all references simulated in {:.1} s", start.elapsed().as_secs_f64());
    assert_eq!(r.environment.backend, "sim");
    for t in tests(&r) {
        match t.kind {
            CheckKind::Performance => assert_eq!(t.status, Status::Ignored, "{}: no timing on the simulator", t.name),
            _ if t.status == Status::Ignored => {} // a case too big to simulate
            _ => assert_eq!(t.status, Status::Pass, "{}: {:?}", t.name, t.message),
        }
    }
    let simulated = tests(&r).filter(|t| t.kind == CheckKind::Correctness && t.status == Status::Pass).count();
    assert!(simulated >= 80, "only {simulated} correctness checks ran");
    // Every correctness check that ran carries the memory profile of its kernels.
    assert!(tests(&r)
        .filter(|t| t.kind == CheckKind::Correctness && t.status == Status::Pass)
        .all(|t| !t.profile.is_empty()));
}

#[test]
fn stubs_score_zero() {
    if !nvrtc_available() {
        return;
    }
    let r = grade(&["all"]);
    assert_eq!(r.score, 0.0);
    for t in tests(&r).filter(|t| t.kind == CheckKind::Correctness && t.status != Status::Ignored) {
        assert_eq!(t.status, Status::Fail, "{} passes on a stub", t.name);
    }
}

#[test]
fn a_missing_barrier_is_reported_as_a_race() {
    if !nvrtc_available() {
        return;
    }
    let r = grade(&["ex03", "--part", "tiled", "--root", "grader/tests", "--sources", "planted"]);
    let raced: Vec<_> = tests(&r).filter(|t| t.verdict.as_deref() == Some("race")).collect();
    assert!(!raced.is_empty(), "no race found");
    let msg = raced[0].message.as_deref().unwrap();
    assert!(msg.contains("no __syncthreads() between") && msg.contains("PTX line"), "{msg}");
    // With line info the race names the student's file and line.
    assert!(msg.contains("planted/ex03-matmul/kernels/matmul_tiled.cu:"), "{msg}");
}

fn sectors_per_store(t: &TestReport) -> f64 {
    let p = &t.profile[0];
    p.global_store_sectors as f64 / p.global_store_requests as f64
}

fn shared_passes_per_request(t: &TestReport) -> f64 {
    let p = &t.profile[0];
    p.shared_wavefronts as f64 / p.shared_requests as f64
}

#[test]
fn uncoalesced_writes_and_bank_conflicts_show_in_the_profile() {
    if !nvrtc_available() {
        return;
    }
    let good = grade(&["ex07", "--reference"]);
    let planted = grade(&["ex07", "--root", "grader/tests", "--sources", "planted"]);
    let case = "ex07::coalesced::correct::1024x1024";
    assert_eq!(sectors_per_store(test(&good, case)), 4.0);
    assert_eq!(sectors_per_store(test(&planted, case)), 32.0);
    let case = "ex07::padded::correct::1024x1024";
    assert_eq!(shared_passes_per_request(test(&good, case)), 1.0);
    assert!(shared_passes_per_request(test(&planted, case)) > 8.0);
    assert!(test(&planted, case).message.as_deref().unwrap().contains("bank-conflict passes"));
}
