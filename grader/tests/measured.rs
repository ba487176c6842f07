//! Structure checks are measured on the simulator on every backend, even
//! `--backend none` (no GPU, no simulated correctness): the references pass
//! them, and the slow variants whose flaw shows in memory fail them.

use crate::support;

use std::path::Path;
use std::process::Command;

use grader::report::{GradeReport, Status, TestReport};
use kit::CheckKind;

fn grade(args: &[&str]) -> Option<GradeReport> {
    if !support::nvrtc_available() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("grades.json");
    Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .args(["--backend", "none", "--seed", "1", "--json", json.to_str().unwrap()])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("grader runs");
    Some(serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap())
}

fn structure(r: &GradeReport) -> Vec<&TestReport> {
    r.exercises
        .iter()
        .flat_map(|e| &e.parts)
        .flat_map(|p| &p.tests)
        .filter(|t| t.kind == CheckKind::Structure)
        .collect()
}

#[test]
fn backend_none_measures_the_references() {
    let Some(r) = grade(&["all", "--reference"]) else { return };
    let checks = structure(&r);
    let registered = grader::registry::all()
        .iter()
        .flat_map(|e| &e.parts)
        .flat_map(|p| &p.checks)
        .filter(|c| c.kind == kit::CheckKind::Structure)
        .count();
    assert!(registered >= 21, "ex01 to ex09 at least: {registered}");
    assert_eq!(checks.len(), registered);
    for t in checks {
        assert_eq!(t.status, Status::Pass, "{}: {:?}", t.name, t.message);
    }
}

#[test]
fn backend_none_fails_a_padded_tile_that_is_not_used() {
    let Some(r) = grade(&["ex07", "--sources", "reference/slow"]) else { return };
    let t = structure(&r).into_iter().find(|t| t.name == "ex07::padded::structure::padded-tile").unwrap();
    assert_eq!(t.status, Status::Fail, "{:?}", t.message);
    assert!(t.message.as_deref().unwrap().contains("16.50 passes per request"), "{:?}", t.message);
}

/// A kernel that does nothing has an ideal memory profile: the measured checks
/// must judge only kernels whose measured run computes the right result.
#[test]
fn backend_none_fails_every_stub() {
    let shipped = support::shipped_root();
    let Some(r) = grade(&["all", "--root", shipped.path().to_str().unwrap()]) else { return };
    for t in structure(&r) {
        assert_eq!(t.status, Status::Fail, "{} passes on a stub: {:?}", t.name, t.message);
    }
}
