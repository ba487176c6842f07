//! The GitHub Classroom and Gradescope outputs have the published shapes:
//! field names and JSON types, as the autograding-grading-reporter action and
//! Gradescope's autograder specification read them.

use std::path::Path;
use std::process::{Command, Output};

use base64::Engine;
use serde_json::Value;

fn grader(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .env_remove("GITHUB_OUTPUT")
        .output()
        .expect("grader runs")
}

/// Grades ex01 and ex02 (reference files, no GPU) with `--format`, in `dir`.
fn graded(dir: &Path, format_args: &[&str]) -> Output {
    let json = dir.join("grades.json");
    let mut args =
        vec!["ex01", "ex02", "--reference", "--backend", "none", "--seed", "3", "--json", json.to_str().unwrap()];
    args.extend_from_slice(format_args);
    let out = grader(&args);
    assert!(out.status.code() == Some(0) || out.status.code() == Some(101), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn is_status(v: &Value, allowed: &[&str]) -> bool {
    v.as_str().is_some_and(|s| allowed.contains(&s))
}

fn check_classroom_runner(result: &Value) {
    let obj = result.as_object().expect("an object");
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["max_score", "status", "tests", "version"]);
    assert_eq!(result["version"], 1);
    assert!(is_status(&result["status"], &["pass", "fail", "error"]));
    assert!(result["max_score"].is_number());
    let tests = result["tests"].as_array().unwrap();
    assert!(!tests.is_empty());
    for t in tests {
        assert!(t["name"].is_string() && t["score"].is_number() && t["message"].is_string(), "{t}");
        assert!(is_status(&t["status"], &["pass", "fail", "error"]), "{t}");
    }
}

#[test]
fn classroom_outputs_are_base64_runner_results_per_exercise() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("github_output");
    std::fs::write(&outputs, "earlier=kept\n").unwrap();
    let out = graded(dir.path(), &["--format", "classroom", "--github-output", outputs.to_str().unwrap()]);

    let text = std::fs::read_to_string(&outputs).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "earlier=kept", "the outputs file is appended to");
    let ids: Vec<&str> = lines[1..].iter().map(|l| l.split_once('=').unwrap().0).collect();
    assert_eq!(ids, ["ex01", "ex02"], "one output per runner id");
    for line in &lines[1..] {
        let (_, b64) = line.split_once('=').unwrap();
        let json = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
        let result: Value = serde_json::from_slice(&json).unwrap();
        check_classroom_runner(&result);
        // Without a GPU the GPU checks could not run: an error, not a pass.
        assert_eq!(result["status"], "error");
    }
    // The same results are printed, keyed by runner id.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let printed: Value = serde_json::from_str(&stdout[stdout.rfind("\n{").unwrap()..]).unwrap();
    check_classroom_runner(&printed["ex01"]);
    assert_eq!(printed["ex01"]["max_score"], 20.0);
    assert_eq!(printed["ex02"]["max_score"], 10.0);
}

#[test]
fn gradescope_results_have_the_published_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results/results.json");
    // `fail`: every check stays in the maximum, so the tests carry all the points.
    let policy = ["--perf-without-gpu", "fail"];
    graded(dir.path(), &[&["--format", "gradescope", "--results", path.to_str().unwrap()][..], &policy].concat());
    let results: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(results["score"].is_number());
    assert!(results["output"].is_string());
    assert!(is_status(&results["visibility"], &["hidden", "after_due_date", "after_published", "visible"]));
    assert!(is_status(&results["stdout_visibility"], &["hidden", "after_due_date", "after_published", "visible"]));
    let tests = results["tests"].as_array().unwrap();
    let mut max = 0.0;
    for t in tests {
        assert!(t["name"].is_string() && t["output"].is_string(), "{t}");
        assert!(t["score"].is_number() && t["max_score"].is_number(), "{t}");
        assert!(is_status(&t["status"], &["passed", "failed"]), "{t}");
        assert!(is_status(&t["visibility"], &["hidden", "after_due_date", "after_published", "visible"]));
        max += t["max_score"].as_f64().unwrap();
    }
    assert!((max - 30.0).abs() < 0.05, "the tests carry all 30 points: {max}");

    // `grader report` turns a saved grades JSON into the same results.
    let again = dir.path().join("again.json");
    let out = grader(&[
        "report",
        dir.path().join("grades.json").to_str().unwrap(),
        "--format",
        "gradescope",
        "--results",
        again.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&path).unwrap());
}
