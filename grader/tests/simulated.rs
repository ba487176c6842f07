//! Every exercise on the PTX simulator, without a GPU: the reference solutions
//! pass every correctness and structure check, the stubs fail, and planted
//! flaws that a GPU hides (a race, uncoalesced writes, bank conflicts) are
//! caught or shown. This is what a student without an NVIDIA GPU gets.

use crate::support;

use std::path::Path;
use std::process::Command;

use grader::report::{GradeReport, Status, TestReport};
use kit::CheckKind;

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
    if !support::nvrtc_available() {
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
    if !support::nvrtc_available() {
        return;
    }
    let shipped = support::shipped_root();
    let r = grade(&["all", "--root", shipped.path().to_str().unwrap()]);
    assert_eq!(r.score, 0.0);
    for t in tests(&r).filter(|t| t.kind == CheckKind::Correctness && t.status != Status::Ignored) {
        assert_eq!(t.status, Status::Fail, "{} passes on a stub", t.name);
    }
}

#[test]
fn a_missing_barrier_is_reported_as_a_race() {
    if !support::nvrtc_available() {
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
    if !support::nvrtc_available() {
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

/// Grades on the simulator from the workspace root; the report and stdout.
fn grade_with_output(args: &[&str]) -> (GradeReport, String, Option<i32>) {
    grade_on("sim", args)
}

/// Grades on `backend` from the workspace root; the report, stdout and the exit status.
fn grade_on(backend: &str, args: &[&str]) -> (GradeReport, String, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("grades.json");
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .args(["--backend", backend, "--seed", "11", "--json", json.to_str().unwrap(), "--", "--color", "never"])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("grader runs");
    assert!(json.exists(), "no JSON; stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    let report = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    (report, String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
}

/// Lines of the test harness that say a test passed.
fn ok_lines(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|l| l.starts_with("test ") && l.trim_end().ends_with(" ok")).collect()
}

#[test]
fn stubs_pass_nothing_not_even_a_structure_or_performance_check() {
    if !support::nvrtc_available() {
        return;
    }
    // `simulate`: the performance checks' stand-ins run as well.
    let shipped = support::shipped_root();
    let root = shipped.path().to_str().unwrap();
    let (r, stdout, _) = grade_with_output(&["all", "--perf-without-gpu", "simulate", "--root", root]);
    let passed: Vec<&str> = tests(&r).filter(|t| t.status == Status::Pass).map(|t| t.name.as_str()).collect();
    assert!(passed.is_empty(), "stubs pass {passed:?}");
    assert!(ok_lines(&stdout).is_empty(), "{:?}", ok_lines(&stdout));
    assert!(stdout.contains("0 passed,"), "{stdout}");
}

#[test]
fn a_check_that_passes_while_correctness_fails_is_not_counted() {
    if !support::nvrtc_available() {
        return;
    }
    // Wrong numbers (a wrong stride) with both barriers in place.
    let variants = crate::corpus::Corpus::open("variants");
    let name = "ex03-rect-wrong-stride";
    let into = tempfile::tempdir().unwrap();
    let root = crate::corpus::materialize(&variants, name, &variants.table.cases[name], into.path());
    let (r, stdout, _) = grade_with_output(&["ex03", "--part", "rect", "--root", root.to_str().unwrap()]);
    let two = test(&r, "ex03::rect::structure::two-barriers");
    assert_eq!(two.status, Status::NotCounted, "{:?}", two.message);
    assert_eq!(two.score, 0.0);
    let msg = two.message.as_deref().unwrap();
    assert!(msg.starts_with("not counted: `ex03::rect::correct::") && msg.contains("failed"), "{msg}");
    let line = stdout.lines().find(|l| l.contains("ex03::rect::structure::two-barriers")).unwrap();
    assert!(line.contains("not counted"), "{line}");
    assert_eq!(r.counts.not_counted, 1);
    assert!(stdout.contains("1 not counted"), "{stdout}");
    assert!(tests(&r).filter(|t| t.kind != CheckKind::Correctness).all(|t| t.status != Status::Pass));
    // The harness's `test result:` line and the summary count the same ignored tests.
    let ignored = |line: &str| -> usize {
        let before = line.split(" ignored").next().unwrap();
        before.rsplit(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap_or_else(|_| panic!("{line}"))
    };
    let harness = stdout.lines().find(|l| l.starts_with("test result:")).expect(&stdout);
    let summary = stdout.lines().find(|l| l.contains(" passed, ") && l.contains(" ignored")).expect(&stdout);
    assert_eq!(ignored(harness), ignored(summary), "{harness}\n{summary}");
    assert!(summary.contains("ignored (1 not counted"), "{summary}");
}

/// Inline PTX the simulator may lack, each as a statement of `pi_global`
/// (`x` in scope), sm_80 or sm_90 and harmless on a GPU. The test takes the
/// first one the simulator rejects, so that it holds whatever it learns.
const UNSIMULATED: &[(&str, &str)] = &[
    ("applypriority", r#"asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(x));"#),
    ("griddepcontrol", r#"asm volatile("griddepcontrol.wait;" ::: "memory");"#),
    (
        "createpolicy",
        r#"{ unsigned long long p; asm volatile("createpolicy.fractional.L2::evict_last.b64.f32 %0, 1.0;" : "=l"(p)); }"#,
    ),
];

#[test]
fn an_instruction_the_simulator_lacks_is_not_graded_here_never_failed() {
    if !support::nvrtc_available() {
        return;
    }
    let reference = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference/ex01-pi/kernels/pi_global.cu"),
    )
    .unwrap();
    for (instruction, statement) in UNSIMULATED {
        let dir = tempfile::tempdir().unwrap();
        let kernels = dir.path().join("exercises/ex01-pi/kernels");
        std::fs::create_dir_all(&kernels).unwrap();
        let source = reference.replacen("    int stride", &format!("    {statement}\n    int stride"), 1);
        assert_ne!(source, reference);
        std::fs::write(kernels.join("pi_global.cu"), source).unwrap();
        let root = dir.path().to_str().unwrap();
        let (r, stdout, code) = grade_with_output(&["ex01", "--part", "global", "--root", root]);
        if tests(&r).all(|t| t.status != Status::NotGradedHere) {
            eprintln!("the simulator runs `{instruction}` now; trying the next");
            continue;
        }
        // The default policy for one's own runs, `exclude`: out of the maximum.
        for t in tests(&r) {
            assert_eq!(t.status, Status::NotGradedHere, "{}: {:?}", t.name, t.message);
            assert!(t.message.as_deref().unwrap().contains(instruction), "{:?}", t.message);
            assert!(t.not_graded.is_some(), "{}", t.name);
        }
        assert_eq!((r.score, r.max_score, r.counts.failed), (0.0, 0.0, 0));
        assert_eq!(code, Some(0), "nothing failed:\n{stdout}");
        let line = stdout.lines().find(|l| l.contains("checks not graded here")).expect(&stdout);
        assert!(line.contains(&format!("the simulator cannot run `{instruction}")), "{line}");
        assert!(line.contains("pi_global.cu:") && line.contains("10 points need a GPU"), "{line}");
        assert!(ok_lines(&stdout).is_empty() && !stdout.contains("FAILED"), "{stdout}");
        // `fail` keeps only performance points in the maximum (issue 47): `global`
        // has none, so nothing stays in it, and still nothing failed.
        let (r, _, _) = grade_with_output(&["ex01", "--part", "global", "--root", root, "--perf-without-gpu", "fail"]);
        assert_eq!((r.score, r.max_score, r.counts.failed), (0.0, 0.0, 0));
        assert!(tests(&r).all(|t| t.status == Status::NotGradedHere));
        // Where a GPU runs the kernel, the measured structure check (which runs
        // it on the simulator) falls back to the PTX: `--backend none` runs
        // structure checks just so.
        let (r, _, _) = grade_on("none", &["ex01", "--part", "global", "--root", root]);
        let structure = test(&r, "ex01::global::structure::global-atomics");
        let msg = structure.message.as_deref().unwrap_or("");
        assert_eq!(structure.status, Status::Pass, "{msg}");
        assert!(msg.contains(instruction) && msg.contains("judged by the PTX only"), "{msg}");
        return;
    }
    panic!("the simulator runs every instruction of UNSIMULATED: add one it does not");
}
