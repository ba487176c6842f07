//! `grader audit` over a generated class of 20 (simulator backend, ex02
//! only, so it runs here without a GPU): every repository carries the
//! course's workflow but one, which a student edited; Classroom's CSV records
//! the regrade's scores but one, which a student's edited workflow inflated.
//! The audit must find exactly those two, and name the CSV row that matches
//! no repository.

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use grader::audit::Audit;
use grader::batch::gradebook::Gradebook;

fn grader(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("grader runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

const GRADING: &[&str] =
    &["--exercises", "ex02", "--backend", "sim", "--seed", "7", "--timeout", "5", "--part-timeout", "120"];

/// Ignored in the plain test run: grading a class of 20 on the simulator took 8
/// of the 12 minutes of `cargo test --workspace` on 2 cores (46 s since the
/// simulator stopped formatting printf past its cap, 2026-12-02). The audit's logic
/// has unit tests in src/audit.rs; CI runs this whole-class lane with
/// `cargo test -p grader --test suite -- --ignored audit::` (.ci/run).
#[test]
#[ignore]
fn audit_finds_a_planted_score_and_an_edited_workflow_in_a_class_of_20() {
    if !support::nvrtc_available() {
        eprintln!("skipped: NVRTC not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let class = dir.path().join("class");
    let out = grader(&["make-class", class.to_str().unwrap(), "--students", "20", "--exercises", "ex02"]);
    assert!(out.status.success(), "{}", text(&out));

    // Every repository has the course's workflow; student 4 edited theirs.
    let exercises = grader::registry::select(&["ex02".into()]).unwrap();
    let workflow = grader::template::classroom_workflow(&exercises);
    let mut repos: Vec<_> = std::fs::read_dir(&class).unwrap().flatten().filter(|e| e.path().is_dir()).collect();
    repos.sort_by_key(|e| e.file_name());
    assert_eq!(repos.len(), 20);
    for (i, repo) in repos.iter().enumerate() {
        let path = repo.path().join(grader::template::WORKFLOW_PATH);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = if i == 3 { workflow.replace("--backend cuda", "--backend none") } else { workflow.clone() };
        std::fs::write(path, text).unwrap();
    }
    let edited = repos[3].file_name().to_string_lossy().into_owned();

    // What Classroom recorded: the grades the workflows reported, i.e. a batch
    // of the same class, except one student whose workflow claimed full marks.
    let grades = dir.path().join("grades");
    let mut args = vec!["batch", class.to_str().unwrap(), "--out", grades.to_str().unwrap()];
    args.extend_from_slice(GRADING);
    let out = grader(&args);
    assert!(out.status.success(), "{}", text(&out));
    let book = Gradebook::read(&grades.join("gradebook.json")).unwrap();
    assert_eq!(book.students.len(), 20);
    let inflated = book.students.iter().find(|r| r.total + 1.0 < r.max_score).expect("a student short of full marks");
    let mut csv = String::from(
        "assignment_name,assignment_url,starter_code_url,github_username,roster_identifier,student_repository_name,\
         student_repository_url,submission_timestamp,points_awarded,points_available\n",
    );
    for (i, row) in book.students.iter().enumerate() {
        let user = row.name.trim_start_matches("cuda-lab-");
        // Some rows only name the user: matched by the `-<user>` suffix.
        let repo_name = if i % 5 == 0 { String::new() } else { row.name.clone() };
        let points = if row.key == inflated.key { row.max_score } else { classroom_total(&grades, &row.key) };
        csv += &format!(
            "cuda-lab,https://classroom.example/a/1,,{user},,\"{repo_name}\",,2026-11-20 10:00:00 UTC,{points:.2},{:.2}\n",
            row.max_score
        );
    }
    csv += "cuda-lab,https://classroom.example/a/1,,ghost,,cuda-lab-ghost,,,12,60\n";
    let csv_path = dir.path().join("grades.csv");
    std::fs::write(&csv_path, csv).unwrap();

    // The audit regrades into its own folder (reusing nothing of `grades`).
    let audit_out = dir.path().join("audit");
    let mut args = vec![
        "audit",
        class.to_str().unwrap(),
        "--out",
        audit_out.to_str().unwrap(),
        "--classroom-csv",
        csv_path.to_str().unwrap(),
        "--tolerance",
        "0.01",
    ];
    args.extend_from_slice(GRADING);
    let out = grader(&args);
    assert_eq!(out.status.code(), Some(1), "a difference found exits 1:\n{}", text(&out));
    let audit: Audit = serde_json::from_slice(&std::fs::read(audit_out.join("audit.json")).unwrap()).unwrap();

    assert_eq!(audit.compared, 20, "{audit:#?}");
    assert_eq!(audit.score_mismatches.len(), 1, "{audit:#?}");
    let m = &audit.score_mismatches[0];
    assert_eq!(m.repository, inflated.name);
    assert!((m.recorded - inflated.max_score).abs() < 0.01, "the CSV keeps two decimals: {m:?}");
    assert!((m.regraded - classroom_total(&grades, &inflated.key)).abs() < 1e-9, "{m:?}");
    assert_eq!(audit.workflow_findings.len(), 1, "{audit:#?}");
    assert_eq!(audit.workflow_findings[0].repository, edited);
    assert!(audit.workflow_findings[0].problem.contains("--backend none"), "{audit:#?}");
    assert_eq!(audit.not_downloaded, ["cuda-lab-ghost"]);
    assert!(audit.not_recorded.is_empty(), "{audit:#?}");
    let printed = text(&out);
    assert!(printed.contains(&format!("{}: .github/workflows/classroom.yml", edited)), "{printed}");
    assert!(printed.contains("1 recorded scores differ from the regrade"), "{printed}");
}

/// The student's total as the Classroom reporter posts it.
fn classroom_total(grades: &Path, key: &str) -> f64 {
    let path = grades.join(grader::batch::gradebook::report_path(key));
    let student: grader::batch::student::StudentReport = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let runners = grader::classroom::runner_results(&student.grades);
    let total: f64 = runners.values().flat_map(|r| &r.tests).map(|t| t.score).sum();
    (total * 100.0).round() / 100.0
}
