//! `grader export-template`: the students' template repository carries no
//! reference solution, and the Classroom workflow checked in here is the one
//! the template gets.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_type().is_dir())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect()
}

fn export(root: &Path, dest: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(["export-template", dest.to_str().unwrap(), "--root", root.to_str().unwrap()])
        .current_dir(workspace())
        .output()
        .unwrap()
}

/// An instructor who filled in a stub to try it and then exports: refused,
/// naming the file and how to put the stub back, and nothing half-written
/// stands for a template.
#[test]
fn a_stub_filled_in_with_its_reference_is_refused() {
    let shipped = support::shipped_copy();
    let stub = "exercises/ex04-dna/kernels/search_v2.cu";
    let solution = std::fs::read_to_string(workspace().join("reference/ex04-dna/kernels/search_v2.cu")).unwrap();
    std::fs::write(shipped.path().join(stub), solution.replace('\n', "\r\n")).unwrap();
    let dest = tempfile::tempdir().unwrap().path().join("template");
    let out = export(shipped.path(), &dest);
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    for says in [stub, "is the reference solution", "git checkout -- exercises/ex04-dna/kernels/search_v2.cu"] {
        assert!(text.contains(says), "{says}: {text}");
    }
}

#[test]
fn the_template_has_no_reference_and_everything_a_student_needs() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("template");
    // The course as committed: a student's or teacher's filled-in stubs stay out of it.
    let shipped = support::shipped_copy();
    let out = export(shipped.path(), &dest);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let exported = files(&dest);
    let reference_sources: HashSet<Vec<u8>> = files(&workspace().join("reference"))
        .into_iter()
        .map(|f| std::fs::read(workspace().join("reference").join(f)).unwrap())
        .collect();
    assert!(!reference_sources.is_empty());
    for f in &exported {
        let text = f.to_string_lossy().to_ascii_lowercase();
        assert!(!text.contains("reference"), "a path names reference: {}", f.display());
        assert!(!text.starts_with("target/") && !text.contains("/target/"), "build output: {}", f.display());
        let bytes = std::fs::read(dest.join(f)).unwrap();
        assert!(!reference_sources.contains(&bytes), "{} is a reference solution", f.display());
    }
    for f in &exported {
        assert!(!std::fs::symlink_metadata(dest.join(f)).unwrap().file_type().is_symlink(), "{}", f.display());
    }

    // What a student needs: the stubs, the grader and its crates, a README, the workflow.
    for needed in [
        "README.md",
        "Cargo.toml",
        "Cargo.lock",
        ".github/workflows/classroom.yml",
        "calibration/nvidia-h100-80gb-hbm3.toml",
        "exercises/ex01-pi/kernels/pi_global.cu",
        "exercises/kit/Cargo.toml",
        "grader/src/main.rs",
        "ptx-build/Cargo.toml",
        "ptx-sim/Cargo.toml",
    ] {
        assert!(dest.join(needed).is_file(), "{needed} is missing");
    }
    assert_eq!(
        std::fs::read(dest.join("exercises/ex01-pi/kernels/pi_global.cu")).unwrap(),
        support::shipped("exercises/ex01-pi/kernels/pi_global.cu").into_bytes(),
        "the stubs are the students' starting point"
    );
    // Every workspace member is there, so the template builds.
    let manifest: toml::Table = toml::from_str(&std::fs::read_to_string(dest.join("Cargo.toml")).unwrap()).unwrap();
    let members = manifest["workspace"]["members"].as_array().unwrap();
    for member in members.iter().map(|m| m.as_str().unwrap()) {
        match member.strip_suffix("/*") {
            // A glob (`exercises/*`): every exercise of the workspace is there.
            Some(folder) => {
                for e in grader::registry::all() {
                    assert!(dest.join(e.dir).join("Cargo.toml").is_file(), "member {} is missing", e.dir);
                }
                assert!(dest.join(folder).join("kit/Cargo.toml").is_file());
            }
            None => assert!(dest.join(member).join("Cargo.toml").is_file(), "member {member} is missing"),
        }
    }
    // The grader builds its registry and `grader new exercise` from these.
    assert!(
        dest.join("grader/build.rs").is_file() && dest.join("grader/src/author/template/solution.cu.tmpl").is_file()
    );
    // No instructors' material, no CI of this repository.
    for absent in [".ci", ".helpers", "grader/tests", "docs/ta-guide.md", ".github/workflows/ci.yml"] {
        assert!(!dest.join(absent).exists(), "{absent} is in the template");
    }
    assert!(!exported.iter().any(|f| f.ends_with("CALIBRATION.md")));

    // Exporting over it is refused.
    let again = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(["export-template", dest.to_str().unwrap()])
        .current_dir(workspace())
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn the_checked_in_classroom_workflow_is_the_template_one() {
    let checked_in = std::fs::read_to_string(workspace().join(grader::template::WORKFLOW_PATH)).unwrap();
    assert_eq!(checked_in, grader::template::classroom_workflow(&grader::registry::all()));
}

#[test]
fn the_workflow_reports_every_runner() {
    let exercises = grader::registry::select(&["ex01".into(), "ex03".into()]).unwrap();
    let yaml = grader::template::classroom_workflow(&exercises);
    assert!(yaml.contains("runs-on: [self-hosted, gpu]"));
    assert!(yaml.contains("          EX01_RESULTS: ${{ steps.grade.outputs.ex01 }}\n"), "{yaml}");
    assert!(yaml.contains("          EX03_RESULTS: ${{ steps.grade.outputs.ex03 }}\n"));
    assert!(!yaml.contains("EX02_RESULTS"));
    assert!(yaml.contains("runners: ex01,ex03\n"));
    assert!(yaml.contains("  EXERCISES: ex01,ex03\n"));
    for permission in ["checks: write", "actions: read", "contents: read"] {
        assert!(yaml.contains(permission), "{permission}");
    }
    assert!(yaml.contains("uses: classroom-resources/autograding-grading-reporter@v1"));
    assert!(
        yaml.contains("repository: ${{ vars.CUDA_LAB_GRADER_REPO }}"),
        "the grader comes from the trusted repository"
    );
}
