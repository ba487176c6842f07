//! The grader's command line, end to end, without a GPU: it compiles, says why
//! nothing ran, ignores the GPU checks, scores zero and writes a valid JSON.

use std::path::Path;
use std::process::Command;

use grader::report::{CompileStatus, GradeReport, Status, SCHEMA};

fn grader(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("grader runs")
}

fn nvrtc_available() -> bool {
    let ok = ptx_build::Compiler::nvrtc().is_ok();
    if !ok && std::env::var_os("CUDA_LAB_REQUIRE_NVRTC").is_some() {
        panic!("CUDA_LAB_REQUIRE_NVRTC is set but NVRTC is missing");
    }
    ok
}

#[test]
fn list_names_every_exercise() {
    let out = grader(&["list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for id in ["ex01", "ex02", "ex03", "ex04", "ex05", "ex06", "ex07", "ex08"] {
        assert!(text.contains(id), "{id} missing from:\n{text}");
    }
}

#[test]
fn unknown_exercise_is_a_clear_error() {
    let out = grader(&["ex99"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no exercise called `ex99`") && err.contains("ex01 (pi)"), "{err}");
}

fn run_without_gpu(extra: &[&str]) -> (std::process::Output, GradeReport) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ex01.json");
    let mut args = vec!["ex01", "--backend", "none", "--seed", "7", "--json", json.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = grader(&args);
    let report = serde_json::from_slice(&std::fs::read(&json).expect("the JSON is written")).unwrap();
    (out, report)
}

#[test]
fn without_a_gpu_references_compile_pass_structure_and_gpu_checks_are_ignored() {
    if !nvrtc_available() {
        return;
    }
    let (out, report) = run_without_gpu(&["--reference"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "nothing that could run failed, so exit 0:\n{stdout}");
    assert!(stdout.contains("ignored"), "{stdout}");
    assert_eq!(report.schema, SCHEMA);
    assert_eq!(report.seed, 7);
    assert_eq!(report.sources, "reference");
    assert_eq!(report.environment.backend, "none");
    assert!((report.max_score - 20.0).abs() < 1e-9);
    assert_eq!(report.score, 0.0, "structure alone earns nothing before correctness is shown");
    for part in &report.exercises[0].parts {
        assert_eq!(part.compile.status, CompileStatus::Ok, "{} compiles", part.file);
        assert_eq!(part.sha256.as_ref().map(|s| s.len()), Some(64));
        for t in &part.tests {
            assert!(t.name.starts_with(&format!("ex01::{}::", part.name)));
            let expected = if t.kind == kit::CheckKind::Structure { Status::Pass } else { Status::Ignored };
            assert_eq!(t.status, expected, "{}", t.name);
        }
    }
}

#[test]
fn without_a_gpu_stubs_fail_their_structure_checks() {
    if !nvrtc_available() {
        return;
    }
    let (out, report) = run_without_gpu(&[]);
    assert_eq!(out.status.code(), Some(101), "a failed structure check is a failure");
    assert_eq!(report.score, 0.0);
    let structure: Vec<_> = report.exercises[0]
        .parts
        .iter()
        .flat_map(|p| &p.tests)
        .filter(|t| t.kind == kit::CheckKind::Structure)
        .collect();
    assert!(!structure.is_empty());
    for t in structure {
        assert_eq!(t.status, Status::Fail, "{}", t.name);
        assert_eq!(t.verdict.as_deref(), Some("structure"));
        assert!(t.message.as_deref().unwrap_or("").len() > 40, "a failure explains itself: {:?}", t.message);
    }
}

#[test]
fn a_missing_file_is_a_compile_error_not_a_crash() {
    if !nvrtc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("exercises")).unwrap();
    let json = dir.path().join("out.json");
    let out = grader(&[
        "ex01",
        "--backend",
        "none",
        "--root",
        dir.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(101), "structure checks of uncompiled files fail");
    let report: GradeReport = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let part = &report.exercises[0].parts[0];
    assert_eq!(part.compile.status, CompileStatus::Error);
    assert!(part.compile.message.as_deref().unwrap_or("").contains("pi_global.cu"), "{:?}", part.compile);
    assert!(part.sha256.is_none());
}
