//! The sanitizer pass, without a GPU: `--backend lucky-sim` is a simulator
//! with race detection off, playing a GPU on which a race fell the right way.
//! The pass replays the correctness cases on a real simulator and must fail
//! the test anyway, naming the student's line and the backend that found it.

use crate::support;

use std::path::Path;
use std::process::Command;

use grader::report::{GradeReport, PartReport, Status, TestReport};
use kit::CheckKind;

/// Grades with `args` and returns the report and the exit code.
fn grade(args: &[&str]) -> (GradeReport, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("grades.json");
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .args(["--seed", "11", "--json", json.to_str().unwrap()])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("grader runs");
    assert!(json.exists(), "no JSON; stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    (serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap(), out.status.code())
}

fn part<'a>(r: &'a GradeReport, name: &str) -> &'a PartReport {
    r.exercises.iter().flat_map(|e| &e.parts).find(|p| p.name == name).unwrap_or_else(|| panic!("no part {name}"))
}

fn correctness(p: &PartReport) -> impl Iterator<Item = &TestReport> {
    p.tests.iter().filter(|t| t.kind == CheckKind::Correctness && t.status != Status::Ignored)
}

const PLANTED: [&str; 4] = ["--root", "grader/tests", "--sources", "planted"];

#[test]
fn a_race_the_gpu_got_away_with_fails_the_part() {
    if !support::nvrtc_available() {
        return;
    }
    // Without the pass the lucky backend passes the racy kernel: the case is real.
    let (lucky, _) =
        grade(&[&["ex01", "--part", "shared", "--backend", "lucky-sim", "--sanitize", "off"][..], &PLANTED].concat());
    let shared = part(&lucky, "shared");
    assert!(correctness(shared).all(|t| t.status == Status::Pass), "the lucky backend should pass it: {shared:#?}");
    assert_eq!(shared.sanitizer.as_ref().map(|s| s.ran), Some(false));
    assert_eq!(lucky.environment.sanitizer.as_deref(), Some("off"));

    let (r, code) = grade(&[&["ex01", "--part", "shared", "--backend", "lucky-sim"][..], &PLANTED].concat());
    assert_eq!(r.environment.sanitizer.as_deref(), Some("on"));
    assert_ne!(code, Some(0), "a finding fails the run");
    let shared = part(&r, "shared");
    let s = shared.sanitizer.as_ref().expect("the part says what the pass did");
    assert!(s.ran && s.cases >= 3 && s.too_big >= 1, "{s:#?}");
    assert!(!s.findings.is_empty(), "{s:#?}");
    let raced: Vec<_> = correctness(shared).filter(|t| t.verdict.as_deref() == Some("race")).collect();
    assert!(!raced.is_empty(), "no race verdict: {shared:#?}");
    for t in &raced {
        assert_eq!(t.status, Status::Fail);
        assert_eq!(t.found_by.as_deref(), Some("sanitizer"));
        let msg = t.message.as_deref().unwrap();
        assert!(msg.contains("planted/ex01-pi/kernels/pi_shared.cu:8"), "names the student's line: {msg}");
        assert!(msg.contains("found by the simulator's sanitizer pass"), "{msg}");
    }
    // Correctness failed, so the part's structure points are gone as well.
    assert!(shared.tests.iter().filter(|t| t.kind != CheckKind::Correctness).all(|t| t.score == 0.0));
}

#[test]
fn a_missing_barrier_in_a_tiled_matmul_is_found_whatever_the_gpu_computed() {
    if !support::nvrtc_available() {
        return;
    }
    let (r, _) = grade(&[&["ex03", "--part", "tiled", "--backend", "lucky-sim"][..], &PLANTED].concat());
    let tiled = part(&r, "tiled");
    let s = tiled.sanitizer.as_ref().unwrap();
    let race = s.findings.iter().find(|f| f.verdict == "race").expect("the pass finds the race");
    assert!(race.message.contains("planted/ex03-matmul/kernels/matmul_tiled.cu:"), "{}", race.message);
    // On an H100 this kernel's numbers come out right and the race becomes the
    // verdict; the lucky simulator gets them wrong, and the race is added to the
    // message. Either way every case with a race fails (one tile has no second phase to race in).
    for f in &s.findings {
        let t = tiled.tests.iter().find(|t| t.name == f.test).unwrap();
        assert_eq!(t.status, Status::Fail, "{}", t.name);
        let msg = t.message.as_deref().unwrap();
        match t.found_by.as_deref() {
            Some("sanitizer") => assert_eq!(t.verdict.as_deref(), Some("race")),
            _ => assert!(msg.contains("the simulator's sanitizer pass also found: race"), "{msg}"),
        }
    }
}

#[test]
fn references_have_nothing_to_find() {
    if !support::nvrtc_available() {
        return;
    }
    let (r, code) = grade(&["ex01", "--reference", "--backend", "lucky-sim"]);
    assert_eq!(code, Some(0));
    for p in r.exercises.iter().flat_map(|e| &e.parts) {
        let s = p.sanitizer.as_ref().unwrap();
        assert!(s.ran && s.cases > 0, "{}: {s:#?}", p.name);
        assert!(s.findings.is_empty() && s.disagreements.is_empty() && s.not_checked.is_empty(), "{s:#?}");
    }
    assert_eq!(r.score, r.max_score);
}

#[test]
fn on_the_simulator_the_grading_run_is_the_sanitizer() {
    if !support::nvrtc_available() {
        return;
    }
    let (r, _) = grade(&[&["ex01", "--part", "shared", "--backend", "sim"][..], &PLANTED].concat());
    assert_eq!(r.environment.sanitizer.as_deref(), Some("grading-run"));
    let shared = part(&r, "shared");
    let s = shared.sanitizer.as_ref().unwrap();
    assert!(!s.ran && s.note.as_deref().unwrap().contains("simulator"), "{s:#?}");
    // The race is the grading run's own verdict, not a second opinion.
    let t = correctness(shared).find(|t| t.verdict.as_deref() == Some("race")).expect("a race verdict");
    assert_eq!(t.found_by, None);
}

/// ex04 v2 whose threads without a start position return before
/// `__syncthreads()`: a GPU (here the lucky simulator) gives the right
/// numbers, and so does the pass's replay, which notes the barrier on the
/// correctness tests without failing them; the structure check `barrier`
/// fails on it, naming both lines.
#[test]
fn a_return_before_the_barrier_is_noted_by_the_pass_and_fails_the_barrier_check() {
    if !support::nvrtc_available() {
        return;
    }
    let root = "grader/tests/variants/ex04-v2-returns-before-barrier";
    let (r, _) = grade(&["ex04", "--part", "v2", "--backend", "lucky-sim", "--root", root]);
    let v2 = part(&r, "v2");
    assert!(correctness(v2).all(|t| t.status == Status::Pass), "correctness stands: {v2:#?}");
    let noted = correctness(v2).filter(|t| {
        t.message
            .as_deref()
            .is_some_and(|m| m.contains("found a barrier that some threads skip") && m.contains("search_v2.cu:"))
    });
    assert!(noted.count() > 0, "the pass notes the barrier: {v2:#?}");
    let barrier = v2.tests.iter().find(|t| t.name.ends_with("structure::barrier")).expect("the barrier check");
    assert_eq!(barrier.status, Status::Fail, "{barrier:#?}");
    let msg = barrier.message.as_deref().unwrap_or_default();
    assert!(
        msg.contains("before the __syncthreads() at line") && msg.contains("every thread of the block must reach it"),
        "{msg}"
    );
}
