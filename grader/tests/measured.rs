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

/// A structure check (or a measured stand-in) run whole ahead of its turn on a
/// GPU (grader/src/ahead.rs), without the GPU, comes out as it does in its
/// turn: the same verdict, message and measured figures, for every reference
/// and slow variant. None asks for the GPU (one that did would be run again in
/// its turn, and gain nothing ahead).
#[test]
fn a_structure_check_run_ahead_comes_out_as_in_its_turn() {
    use std::sync::Arc;

    use grader::ahead::{Ahead, Job, Outcomes};
    use kit::{Ctx, PartBuild, RunEnv};

    let Some(compiler) = kit::trial::compiler() else { return };
    let options = ptx_build::CompileOptions { line_info: true, ..Default::default() };
    let (seed, shapes) = (3, 0x5eed_a4ead);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut jobs = Vec::new();
    let exercises = grader::registry::all();
    for ex in &exercises {
        for part in &ex.parts {
            for sources in ["reference", "reference/slow"] {
                let path = root.join(sources).join(ex.folder_name()).join(part.file);
                let Ok(source) = ptx_build::SourceFile::read(&path, part.file) else { continue };
                let build = Arc::new(PartBuild::new(compiler.compile(&source, &options).unwrap().text));
                for check in &part.checks {
                    let name = format!("{} ({sources})", ex.test_name(part, check));
                    match (check.kind, &check.stand_in) {
                        (CheckKind::Structure, _) => jobs.push((Job::of(name, check.clone(), build.clone()), check)),
                        (CheckKind::Performance, Some(f)) => {
                            let stand_in = kit::Check { run: f.clone(), ..check.clone() };
                            jobs.push((Job::stand_in(name, stand_in, build.clone()), check));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let expected: Vec<_> = jobs.iter().map(|(job, check)| (job.name().to_string(), job.build(), *check)).collect();
    let outcomes = Outcomes::default();
    // Every job run first: a trial that came before a thread started its job
    // would run it itself (Outcomes::take), and here nothing would be compared.
    Ahead::start(seed, shapes, options.clone(), jobs.into_iter().map(|(j, _)| j).collect(), &outcomes).finish();
    let env = RunEnv::new(seed, Some(kit::Gpu::simulator()), Some(compiler), options).with_shapes_secret(shapes);
    let text = |r: &anyhow::Result<String>| match r {
        Ok(note) => format!("pass: {note}"),
        Err(e) => format!("fail: {e:#}"),
    };
    assert!(expected.len() >= 40, "every structure check and stand-in: {}", expected.len());
    for (name, build, check) in &expected {
        let ctx = Ctx::new(name, &env, build);
        let run = match check.kind {
            CheckKind::Performance => check.stand_in.clone().unwrap(),
            _ => check.run.clone(),
        };
        let in_turn = ctx.run_caught(|ctx| run(ctx));
        let (outcome, record) = outcomes.take(name).unwrap_or_else(|| panic!("{name} asked for the GPU ahead"));
        assert_eq!(text(&outcome), text(&in_turn), "{name}");
        assert_eq!(record.measured, ctx.take_record().measured, "{name}: the measured figures");
    }
}
