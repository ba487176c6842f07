//! Every platform's output has its published shape, made from the same
//! grades: GitHub Classroom's and Gradescope's field names and JSON types, as
//! the autograding-grading-reporter action and Gradescope's autograder
//! specification read them; PrairieLearn's results.json, CodeRunner's
//! combinator-grader object, Autolab's autoresult and JUnit XML, as their
//! documentation describes them; and PrairieLearn's `run` script end to end.

use std::path::Path;
use std::process::{Command, Output};

use base64::Engine;
use grader::report::{GradeReport, NotGraded, Status};
use kit::CheckKind;
use serde_json::Value;

use crate::support;

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
    let out = graded(
        dir.path(),
        &["--format", "classroom", "--github-output", outputs.to_str().unwrap(), "--maximum", "full-given"],
    );

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
        // Without a GPU the GPU checks could not run: not graded here, which fails nothing.
        assert_eq!(result["status"], "pass", "{result}");
        let not_graded = result["tests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["message"].as_str().unwrap().starts_with("not graded here") && t["status"] == "pass");
        assert!(not_graded.count() > 0, "{result}");
    }
    // The same results are printed, keyed by runner id.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let printed: Value = serde_json::from_str(&stdout[stdout.rfind("\n{").unwrap()..]).unwrap();
    check_classroom_runner(&printed["ex01"]);
    assert_eq!(printed["ex01"]["max_score"], 20.0);
    assert_eq!(printed["ex02"]["max_score"], 10.0);
}

/// Without a GPU, Classroom gets the grade of record every platform gets
/// (the course's maximum, `graded-here` by default): the reference is full marks.
#[test]
fn classroom_without_a_gpu_scores_the_reference_full_marks() {
    if !support::nvrtc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("github_output");
    let out = grader(&[
        "ex02",
        "--reference",
        "--backend",
        "sim",
        "--seed",
        "3",
        "--no-report",
        "--format",
        "classroom",
        "--github-output",
        outputs.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&outputs).unwrap();
    let (_, b64) = text.trim().split_once('=').unwrap();
    let result: Value =
        serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(b64).unwrap()).unwrap();
    assert_eq!(result["status"], "pass", "{result}");
    let sum: f64 = result["tests"].as_array().unwrap().iter().map(|t| t["score"].as_f64().unwrap()).sum();
    let max = result["max_score"].as_f64().unwrap();
    assert!(max > 0.0 && (sum - max).abs() < 1e-9, "{sum} of {max}: {result}");
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

/// One grades JSON for every other platform: ex01 and ex02 graded without a
/// GPU (structure checks pass, GPU checks could not run), then one check
/// failed at the student's line and one left out by the policy, so that every
/// outcome is there. Returns its path and the report.
fn fixture(dir: &Path) -> (std::path::PathBuf, GradeReport) {
    graded(dir, &["--perf-without-gpu", "fail"]);
    let mut report: GradeReport = serde_json::from_slice(&std::fs::read(dir.join("grades.json")).unwrap()).unwrap();
    let tests = || report.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests);
    let failed = tests().find(|t| t.kind == CheckKind::Correctness).unwrap().name.clone();
    let left_out = tests().find(|t| t.kind == CheckKind::Performance).unwrap().name.clone();
    for t in report.exercises.iter_mut().flat_map(|e| &mut e.parts).flat_map(|p| &mut p.tests) {
        if t.name == failed {
            t.status = Status::Fail;
            t.verdict = Some("race".into());
            t.message = Some(format!("{AT_LINE} with no __syncthreads() between\nsecond line <&>"));
            t.score = 0.0;
        } else if t.name == left_out {
            t.status = Status::NotGradedHere;
            t.not_graded = Some(NotGraded { why: "needs real timing".into(), points: t.max_score });
            t.score = 0.0;
            t.max_score = 0.0;
        }
    }
    report.total_up();
    let path = dir.join("fixture.json");
    std::fs::write(&path, serde_json::to_vec(&report).unwrap()).unwrap();
    (path, report)
}

const AT_LINE: &str = "shared memory race at exercises/ex01-pi/kernels/pi_shared.cu:8 (PTX line 44)";

fn report_as(json: &Path, format: &str, results: Option<&Path>) -> String {
    let mut args = vec!["report", json.to_str().unwrap(), "--format", format];
    if let Some(path) = results {
        args.extend(["--results", path.to_str().unwrap()]);
    }
    let out = grader(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn tests_of(report: &GradeReport) -> Vec<&grader::report::TestReport> {
    report.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests).collect()
}

fn fraction_of(report: &GradeReport) -> f64 {
    report.score / report.max_score
}

#[test]
fn prairielearn_results_have_the_documented_keys() {
    let dir = tempfile::tempdir().unwrap();
    let (json, report) = fixture(dir.path());
    let path = dir.path().join("results/results.json");
    report_as(&json, "prairielearn", Some(&path));
    let results: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(results["gradable"], true);
    let score = results["score"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&score), "score {score} is a fraction");
    assert!((score - fraction_of(&report)).abs() < 1e-3);
    assert!(results["message"].is_string() && results["output"].is_string());
    let tests = results["tests"].as_array().unwrap();
    assert_eq!(tests.len(), tests_of(&report).len(), "every test once");
    for t in tests {
        for key in ["name", "description", "message", "output"] {
            assert!(t[key].is_string(), "{key} of {t}");
        }
        let (points, max) = (t["points"].as_f64().unwrap(), t["max_points"].as_f64().unwrap());
        assert!(0.0 <= points && points <= max, "{t}");
    }
    let failed = tests.iter().find(|t| t["message"].as_str().unwrap().starts_with("failed: race")).unwrap();
    assert!(failed["description"].as_str().unwrap().ends_with("at exercises/ex01-pi/kernels/pi_shared.cu:8"));
    assert!(failed["output"].as_str().unwrap().contains("second line <&>"), "the whole message");
    let max: f64 = tests.iter().map(|t| t["max_points"].as_f64().unwrap()).sum();
    assert!((max - report.max_score).abs() < 0.05, "{max} of {}", report.max_score);
}

#[test]
fn coderunner_prints_one_json_object_with_a_result_table() {
    let dir = tempfile::tempdir().unwrap();
    let (json, report) = fixture(dir.path());
    let stdout = report_as(&json, "coderunner", None);
    // CodeRunner reads the whole output as the object: nothing else may be printed.
    let outcome: Value = serde_json::from_str(stdout.trim_end()).unwrap();
    let fraction = outcome["fraction"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&fraction) && (fraction - fraction_of(&report)).abs() < 1e-3);
    assert!(outcome["prologuehtml"].is_string() && outcome["epiloguehtml"].is_string());
    assert!(outcome["epiloguehtml"].as_str().unwrap().starts_with("<pre>"));
    let rows = outcome["testresults"].as_array().unwrap();
    let header: Vec<&str> = rows[0].as_array().unwrap().iter().map(|h| h.as_str().unwrap()).collect();
    assert_eq!(header[0], "iscorrect", "the first row is the header");
    assert_eq!(rows.len(), 1 + tests_of(&report).len());
    for row in &rows[1..] {
        let row = row.as_array().unwrap();
        assert_eq!(row.len(), header.len());
        assert!(row[0] == 0 || row[0] == 1, "{row:?}");
    }
    let failed = rows.iter().find(|r| r[3] == "failed").unwrap();
    assert_eq!(failed[0], 0);
    assert_eq!(failed[4], "exercises/ex01-pi/kernels/pi_shared.cu:8");
    // Left out by the policy: no cross for what costs nothing.
    let left_out =
        rows.iter().find(|r| r[5].as_str().unwrap().starts_with("not graded here (needs real timing)")).unwrap();
    assert_eq!(left_out[3], "not graded here");
    assert_eq!(left_out[0], 1);
}

#[test]
fn autolab_output_ends_with_the_autoresult() {
    let dir = tempfile::tempdir().unwrap();
    let (json, report) = fixture(dir.path());
    let stdout = report_as(&json, "autolab", None);
    let lines: Vec<&str> = stdout.lines().collect();
    let autoresult: Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
    let scores = autoresult["scores"].as_object().unwrap();
    let keys: Vec<&str> = scores.keys().map(String::as_str).collect();
    assert_eq!(keys, ["ex01", "ex02"], "a problem per exercise");
    let sum: f64 = scores.values().map(|v| v.as_f64().unwrap()).sum();
    assert!((sum - report.score).abs() < 0.05);
    let board = autoresult["scoreboard"].as_array().unwrap();
    assert!((board[0].as_f64().unwrap() - report.score).abs() < 0.01, "the total first");
    assert_eq!(board.len(), 3);
    let semantic: Value = serde_json::from_str(lines[lines.len() - 2]).unwrap();
    assert_eq!(semantic["_presentation"], "semantic");
    assert_eq!(semantic["stages"], serde_json::json!(["ex01", "ex02"]));
    let stage = semantic["ex01"].as_object().unwrap();
    let race = stage.values().find(|t| t["hint"].as_str().is_some_and(|h| h.starts_with("failed: race"))).unwrap();
    assert_eq!(race["passed"], false);
    assert!(race["hint"].as_str().unwrap().ends_with("(at exercises/ex01-pi/kernels/pi_shared.cu:8)"));
    assert!(stdout.starts_with("\nScores") || stdout.starts_with("Scores"), "the score table as feedback");

    // From a grading run too: the autoresult is still the last line printed.
    let run = graded(dir.path(), &["--format", "autolab"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert!(last["scores"]["ex01"].is_number() && last["scoreboard"].is_array());
}

use grader::platforms::junit::schema::{self, Element};

fn count(e: &Element, attribute: &str) -> usize {
    e.attributes[attribute].parse().unwrap()
}

#[test]
fn junit_xml_has_suites_of_testcases_with_failures() {
    let dir = tempfile::tempdir().unwrap();
    let (json, report) = fixture(dir.path());
    let path = dir.path().join("junit.xml");
    report_as(&json, "junit", Some(&path));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    let root = schema::parse(&text).unwrap();
    assert_eq!(schema::validate(&root), Vec::<String>::new(), "Jenkins xunit-plugin's junit-10.xsd accepts it");
    assert_eq!(root.name, "testsuites");
    let suites: Vec<&Element> = root.all("testsuite").collect();
    let names: Vec<&str> = suites.iter().map(|s| s.attributes["name"].as_str()).collect();
    assert_eq!(names, ["ex01", "ex02"], "a suite per exercise");
    let mut total = 0;
    for suite in &suites {
        let cases: Vec<&Element> = suite.all("testcase").collect();
        assert_eq!(count(suite, "tests"), cases.len());
        let with = |child: &str| cases.iter().filter(|c| c.all(child).count() == 1).count();
        assert_eq!(count(suite, "failures"), with("failure"));
        assert_eq!(count(suite, "errors"), with("error"));
        assert_eq!(count(suite, "skipped"), with("skipped"));
        let properties: Vec<&Element> = suite.all("properties").flat_map(|p| p.all("property")).collect();
        for case in &cases {
            assert!(!case.attributes["name"].is_empty() && case.attributes["classname"].contains('.'));
            assert!(case.attributes["time"].parse::<f64>().is_ok());
            // Its points: a property of the suite, and the first words of its output.
            let name = format!("points {}", case.attributes["name"]);
            let points = properties.iter().find(|p| p.attributes["name"] == name).unwrap();
            let out = &case.all("system-out").next().unwrap().text;
            assert!(out.starts_with(&format!("points {}:", points.attributes["value"])), "{out}");
        }
        total += cases.len();
    }
    assert_eq!(total, tests_of(&report).len(), "every test once");
    assert_eq!(count(&root, "tests"), total);
    let failures: Vec<&Element> =
        suites.iter().flat_map(|s| s.all("testcase")).filter(|c| c.all("failure").count() == 1).collect();
    let failed = tests_of(&report).iter().filter(|t| matches!(t.status, Status::Fail | Status::NotCounted)).count();
    assert_eq!(failures.len(), failed);
    let race = failures.iter().map(|c| c.all("failure").next().unwrap()).find(|f| f.attributes["type"] == "race");
    let failure = race.unwrap();
    assert_eq!(
        failure.attributes["message"],
        format!("race: {AT_LINE} with no __syncthreads() between (at exercises/ex01-pi/kernels/pi_shared.cu:8)")
    );
    assert!(failure.text.ends_with("second line <&>"), "{:?}", failure.text);
    // Without a GPU the GPU checks could not run here: skipped.
    let skipped: usize = suites.iter().map(|s| count(s, "skipped")).sum();
    assert!(skipped >= 1);

    // A grading run writes the same document.
    let again = dir.path().join("run.xml");
    graded(dir.path(), &["--format", "junit", "--results", again.to_str().unwrap(), "--perf-without-gpu", "fail"]);
    let again = schema::parse(&std::fs::read_to_string(&again).unwrap()).unwrap();
    assert_eq!(again.all("testsuite").count(), 2);
    assert_eq!(schema::validate(&again), Vec::<String>::new());
}

/// `docs/prairielearn/run` as PrairieLearn runs it, on a reference
/// submission uploaded file by file: full marks without a GPU, and the
/// results where PrairieLearn reads them.
#[test]
fn prairielearn_run_gives_a_reference_full_marks_without_a_gpu() {
    if !support::nvrtc_available() {
        return;
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let grade = tempfile::tempdir().unwrap();
    let student = grade.path().join("student");
    std::fs::create_dir_all(&student).unwrap();
    for f in std::fs::read_dir(workspace.join("reference/ex01-pi/kernels")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, student.join(f.file_name().unwrap())).unwrap();
    }
    let out = Command::new("bash")
        .arg(workspace.join("docs/prairielearn/run"))
        .env("GRADE", grade.path())
        .env("GRADER", env!("CARGO_BIN_EXE_grader"))
        .env("EXERCISES", "ex01")
        .current_dir(grade.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let path = grade.path().join("results/results.json");
    let results: grader::formats::prairielearn::Results =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "any user of the grader host reads it");
    assert!(results.gradable);
    assert!((results.score - 1.0).abs() < 1e-9, "{}: {:#?}", results.message, results.tests);
    assert!(results.tests.iter().all(|t| t.points == t.max_points), "{:#?}", results.tests);
    assert!(results.tests.iter().any(|t| t.max_points > 0.0));
    // The Dockerfile puts the script where the question's info.json points.
    let dockerfile = std::fs::read_to_string(workspace.join("docs/prairielearn/Dockerfile")).unwrap();
    assert!(dockerfile.contains("/opt/cuda-lab/docs/prairielearn/run"));
    assert!(std::fs::read_to_string(workspace.join("docs/prairielearn/run"))
        .unwrap()
        .contains("/opt/cuda-lab/target/release/grader"));
}
