//! Every stub and every reference solution compiles through NVRTC and defines
//! the kernels its part needs; stubs hold TODOs and references do not. Runs
//! without a GPU (CI installs NVRTC from pip).
//!
//! The stubs are read as shipped (`support::shipped`: as committed), never
//! from the working files: a student runs `cargo test --workspace` mid-term
//! with half the kernels filled in, and these tests are about the course's
//! files, not the student's.

use crate::support;

use std::path::{Path, PathBuf};

use ptx_build::{CompileOptions, Compiler, SourceFile};

fn root() -> PathBuf {
    support::workspace()
}

fn compiler() -> Option<Compiler> {
    match Compiler::nvrtc() {
        Ok(c) => Some(c),
        Err(e) if !support::nvrtc_required() => {
            eprintln!("skipping: {e}");
            None
        }
        Err(e) => panic!("CUDA_LAB_REQUIRE_NVRTC is set but NVRTC is missing: {e}"),
    }
}

#[test]
fn stubs_and_references_compile_and_define_their_kernels() {
    let Some(compiler) = compiler() else { return };
    for tree in ["exercises", "reference"] {
        for (rel, kernels, text) in support::part_sources(&root(), tree) {
            let ptx = compiler
                .compile(&SourceFile::from_text(rel.clone(), text), &CompileOptions::default())
                .unwrap_or_else(|e| panic!("{rel} does not compile:\n{e}"));
            for k in kernels {
                assert!(kit::inspect::kernel(&ptx.text, k).is_some(), "{rel} does not define kernel `{k}`");
            }
        }
    }
}

/// What `stubs_have_todos_and_references_do_not` checks, in the course at `root`.
fn stubs_have_todos(root: &Path) {
    for (rel, _, text) in support::part_sources(root, "exercises") {
        assert!(text.contains("TODO"), "{rel}: a stub must tell the student what to do");
    }
    for (rel, _, text) in support::part_sources(root, "reference") {
        assert!(!text.contains("TODO"), "{rel}: a reference solution must be complete");
    }
}

#[test]
fn stubs_have_todos_and_references_do_not() {
    stubs_have_todos(&root());
}

/// A copy of the course's stubs and references at `dir`, committed when `git`.
fn course_copy(dir: &Path, git: bool) {
    let git_in = |args: &[&str]| {
        let out = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    for tree in ["exercises", "reference"] {
        for (rel, _, text) in support::part_sources(&root(), tree) {
            let to = dir.join(&rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(to, text).unwrap();
        }
    }
    if git {
        git_in(&["init", "-q"]);
        git_in(&["add", "."]);
        git_in(&["-c", "user.name=course", "-c", "user.email=course@example.org", "commit", "-qm", "the course"]);
    }
}

/// Every stub filled with its reference solution (a student at the end of the
/// term): the stub tests read the stubs as committed and still pass.
#[test]
fn a_student_who_filled_every_stub_still_passes_the_stub_tests() {
    if std::process::Command::new("git").arg("--version").output().is_err() {
        eprintln!("skipping: no git here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    course_copy(dir.path(), true);
    for (rel, _, _) in support::part_sources(dir.path(), "exercises") {
        let reference = std::fs::read(dir.path().join(rel.replacen("exercises/", "reference/", 1))).unwrap();
        std::fs::write(dir.path().join(&rel), reference).unwrap();
    }
    let (rel, _, text) = &support::part_sources(dir.path(), "exercises")[0];
    assert!(!std::fs::read_to_string(dir.path().join(rel)).unwrap().contains("TODO"), "the working file is filled");
    assert!(text.contains("TODO"), "{rel} is read as committed");
    stubs_have_todos(dir.path());
}

/// Outside a git checkout the working files are the stubs.
#[test]
fn outside_git_the_working_files_are_the_stubs() {
    let dir = tempfile::tempdir().unwrap();
    course_copy(dir.path(), false);
    stubs_have_todos(dir.path());
    let (rel, _, _) = &support::part_sources(dir.path(), "exercises")[0];
    std::fs::write(dir.path().join(rel), "// filled in, nothing left to do\n").unwrap();
    let caught = std::panic::catch_unwind(|| stubs_have_todos(dir.path()));
    assert!(caught.is_err(), "without git, an edited working file is what is read");
}
