//! The dev container a Classroom assignment opens in a Codespace: its
//! configuration names a set-up script that exists, and the students' template
//! carries both. CI runs the script itself (.ci/run), as far as a machine
//! that is not a container can.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn config(root: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(root.join(".devcontainer/devcontainer.json")).expect("devcontainer.json");
    serde_json::from_str(&text).expect("devcontainer.json is plain JSON")
}

/// The script that `postCreateCommand` runs, relative to the workspace.
fn setup_script(config: &serde_json::Value) -> String {
    let command = config["postCreateCommand"].as_str().expect("postCreateCommand is one command line");
    let script = command.strip_prefix("bash ").expect("postCreateCommand runs a bash script");
    script.trim().to_string()
}

#[test]
fn the_dev_container_runs_a_script_that_exists() {
    let root = workspace();
    let c = config(&root);
    assert!(c["image"].as_str().is_some_and(|i| i.starts_with("rust:")), "a Rust image: {}", c["image"]);
    let script = setup_script(&c);
    let text = std::fs::read_to_string(root.join(&script)).unwrap_or_else(|e| panic!("{script}: {e}"));
    assert!(text.starts_with("#!/usr/bin/env bash"), "{script} is a bash script");
    // What the README's commands need and a bare Rust image lacks.
    for needed in ["python3-pip", "cargo build -p grader"] {
        assert!(text.contains(needed), "{script} must provide {needed}");
    }
    // No registry or download address in the set-up: the ordinary clients' settings apply.
    assert!(!text.contains("http://") && !text.contains("https://"), "{script} names an address");
}

#[test]
fn the_students_template_opens_in_a_codespace() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("template");
    // The course as committed (export refuses a stub filled in with its solution).
    let shipped = crate::support::shipped_copy();
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(["export-template", dest.to_str().unwrap(), "--exercises", "ex01", "--root"])
        .arg(shipped.path())
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let c = config(&dest);
    assert_eq!(c, config(&workspace()), "the template's dev container is this one");
    assert!(dest.join(setup_script(&c)).is_file(), "the template carries the set-up script");
    // Other hidden folders stay out (a student's .git, the instructors' CI).
    assert!(!dest.join(".ci").exists());
}
