//! The same grade on every platform: a reference submission graded without a
//! GPU (on the simulator) and with one (the same report with every check
//! run and passed, as a GPU grades it) imports as 100 % everywhere, and a
//! stub as 0 %, each file read the way its platform reads it:
//!
//! - GitHub Classroom: the autograding-grading-reporter adds every test's
//!   `score` of every runner and every runner's `max_score` as JavaScript
//!   numbers (doubles, left to right) and posts "Points X/Y"; a runner whose
//!   `status` is not `pass` fails the step.
//! - Gradescope: `score` out of the assignment's points, the tests' `max_score`s.
//! - PrairieLearn: `makeGradingResult`'s checks on results.json (an object
//!   with a boolean `gradable`, a finite `score` in [0, 1], `tests` with a
//!   `name` and numeric `points`/`max_points`) and the grader host's 1 MB limit.
//! - CodeRunner: the combinator grader's `fraction`.
//! - Autolab: the last line's `scores`, each out of its problem's maximum.
//! - JUnit: Jenkins xunit-plugin's junit-10.xsd, and the suites' scores.
//! - Canvas: each score out of the `Points Possible` row above it.
//! - Moodle: every value within its grade item's maximum; the total in percent.
//!
//! And docs/platforms.md's outcome table is what the files contain.

use std::path::Path;
use std::process::Command;

use grader::batch::gradebook::{ExerciseColumn, Gradebook, Row, SCHEMA};
use grader::platforms::{
    autolab, classroom, coderunner, gradescope, junit, lms, outcomes, prairielearn, Grade, Maximum,
};
use grader::report::{GradeReport, Status};
use serde_json::Value;

use crate::support;

fn workspace() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// ex01 and ex02 graded on the simulator from `sources` ("reference", or
/// "exercises": the stubs as shipped, whatever the working files hold).
fn graded_without_gpu(sources: &str) -> GradeReport {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json");
    let shipped = (sources == "exercises").then(support::shipped_root);
    let root = shipped.as_ref().map_or_else(workspace, |s| s.path().to_path_buf());
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(["ex01", "ex02", "--backend", "sim", "--seed", "5", "--no-report", "--sources", sources])
        .arg("--root")
        .arg(&root)
        .args(["--perf-without-gpu", "exclude", "--json", json.to_str().unwrap()])
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 101)), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

/// As a GPU grades `report`: every check runs, and passes where `passed`.
fn as_on_a_gpu(report: &GradeReport, passed: bool) -> GradeReport {
    let mut r = report.clone();
    for t in r.exercises.iter_mut().flat_map(|e| &mut e.parts).flat_map(|p| &mut p.tests) {
        t.max_score += t.not_graded.take().map_or(0.0, |n| n.points);
        t.status = if passed { Status::Pass } else { Status::Fail };
        t.score = if passed { t.max_score } else { 0.0 };
    }
    r.environment.backend = "cuda".into();
    r.total_up();
    r
}

/// Each platform's grade for `grade`, as a fraction, read from its file.
fn imported(grade: &Grade) -> Vec<(&'static str, f64)> {
    let mut out = Vec::new();

    // GitHub Classroom, through the step outputs.
    let lines = classroom::github_output_lines(grade).unwrap();
    let (mut points, mut max, mut failed) = (0.0f64, 0.0f64, false);
    for line in lines.lines() {
        use base64::Engine;
        let json = base64::engine::general_purpose::STANDARD.decode(line.split_once('=').unwrap().1).unwrap();
        let r: Value = serde_json::from_slice(&json).unwrap();
        assert!(matches!(r["status"].as_str(), Some("pass" | "fail" | "error")));
        failed |= r["status"] != "pass";
        if r["max_score"].as_f64().unwrap() == 0.0 {
            continue;
        }
        max += r["max_score"].as_f64().unwrap();
        for t in r["tests"].as_array().unwrap() {
            points += t["score"].as_f64().unwrap();
        }
    }
    assert!(points <= max, "the reporter's Points {points}/{max}");
    assert_eq!(format!("{points}/{max}"), format!("{}/{}", grade.points.points(), grade.max.points()));
    if grade.maximum != Maximum::FullWithheld {
        assert_eq!(failed, points < max, "the step fails exactly when points were lost: {points}/{max}");
    }
    out.push(("classroom", points / max));

    // Gradescope: out of the tests' maxima, which the assignment's points must equal.
    let g: Value = serde_json::to_value(gradescope::results(grade)).unwrap();
    let possible: f64 = g["tests"].as_array().unwrap().iter().map(|t| t["max_score"].as_f64().unwrap()).sum();
    assert!((possible - grade.max.points()).abs() < 1e-9);
    out.push(("gradescope", g["score"].as_f64().unwrap() / grade.max.points()));

    // PrairieLearn.
    let bytes = serde_json::to_vec(&prairielearn::results(grade)).unwrap();
    assert!(bytes.len() <= 1 << 20, "the grader host's limit");
    let pl: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(pl["gradable"].is_boolean());
    let score = pl["score"].as_f64().unwrap();
    assert!(score.is_finite() && (0.0..=1.0).contains(&score));
    for t in pl["tests"].as_array().unwrap() {
        assert!(t["name"].is_string() && t["points"].is_number() && t["max_points"].is_number(), "{t}");
    }
    out.push(("prairielearn", score));

    // CodeRunner.
    let cr: Value = serde_json::from_str(&coderunner::json(grade).unwrap()).unwrap();
    out.push(("coderunner", cr["fraction"].as_f64().unwrap()));

    // Autolab: each problem out of the maximum the feedback gives it.
    let feedback = autolab::feedback(grade).unwrap();
    let last: Value = serde_json::from_str(feedback.lines().last().unwrap()).unwrap();
    let (mut points, mut max) = (0.0, 0.0);
    for e in &grade.exercises {
        let line = feedback.lines().find(|l| l.trim_start().starts_with(&format!("{}: ", e.id))).unwrap();
        let problem_max: f64 = line.rsplit(" / ").next().unwrap().parse().unwrap();
        if matches!(grade.maximum, Maximum::FullGiven | Maximum::FullWithheld) {
            // The problem's points are `grader list`'s, whatever the machine.
            let listed: f64 = grade.report.exercises.iter().find(|x| x.id == e.id).map_or(0.0, |x| {
                x.parts
                    .iter()
                    .flat_map(|p| &p.tests)
                    .map(|t| t.max_score + t.not_graded.as_ref().map_or(0.0, |n| n.points))
                    .sum()
            });
            assert!((problem_max - listed).abs() < 0.005, "{}: {problem_max} of {listed}", e.id);
        }
        points += last["scores"][e.id].as_f64().unwrap();
        max += problem_max;
    }
    out.push(("autolab", points / max));

    // JUnit.
    let root = junit::schema::parse(&junit::xml(grade).unwrap()).unwrap();
    assert_eq!(junit::schema::validate(&root), Vec::<String>::new());
    let (mut points, mut max) = (0.0, 0.0);
    for suite in root.all("testsuite") {
        let property = |name: &str| -> f64 {
            let p = suite.all("properties").flat_map(|p| p.all("property")).find(|p| p.attributes["name"] == name);
            p.unwrap().attributes["value"].parse().unwrap()
        };
        points += property("score");
        max += property("max_score");
    }
    out.push(("junit", points / max));

    // Canvas and Moodle, for a class of this one student.
    let book = Gradebook {
        schema: SCHEMA.into(),
        grader_version: "0".into(),
        seed: 1,
        backend: "sim".into(),
        exercises: grade.exercises.iter().map(|e| ExerciseColumn { id: e.id.into(), max_score: 0.0 }).collect(),
        shard: None,
        maximum: None,
        credit: None,
        students: vec![Row {
            key: "lab-ana".into(),
            name: "lab-ana".into(),
            scores: Default::default(),
            max_scores: Default::default(),
            total: 0.0,
            max_score: 0.0,
            status: "graded".into(),
            notes: vec![],
            report: "x".into(),
        }],
    };
    let scores = [lms::Scores::of(grade)];
    let canvas = lms::csv(&book, &scores, lms::Lms::Canvas, None).unwrap();
    let mut rows = csv::Reader::from_reader(canvas.bytes.as_slice());
    let records: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(&records[0][0], "Points Possible");
    let n = records[0].len();
    let possible: f64 = records[0][n - 1].parse().unwrap();
    let total: f64 = records[1][n - 1].parse().unwrap();
    for (p, s) in records[0].iter().zip(records[1].iter()).skip(5) {
        let (p, s): (f64, f64) = (p.parse().unwrap(), s.parse().unwrap());
        assert!(s <= p, "Canvas: {s} of {p} points possible");
    }
    out.push(("canvas", total / possible));
    let roster = lms::roster::Roster::parse(b"folder,Email address\nlab-ana,ana@uni.edu\n").unwrap();
    let moodle = lms::csv(&book, &scores, lms::Lms::Moodle, Some(&roster)).unwrap();
    assert!(moodle.not_imported.is_none());
    let mut rows = csv::Reader::from_reader(moodle.bytes.as_slice());
    let record = rows.records().next().unwrap().unwrap();
    assert_eq!(&record[0], "ana@uni.edu");
    for v in record.iter().skip(1) {
        assert!(v.parse::<f64>().unwrap() <= 100.0, "within a new grade item's maximum: {record:?}");
    }
    out.push(("moodle", record[record.len() - 1].parse::<f64>().unwrap() / 100.0));
    out
}

fn assert_all(grade: &Grade, want: f64, what: &str) {
    for (platform, fraction) in imported(grade) {
        assert!(
            (fraction - want).abs() < 1e-9,
            "{what}, maximum {}: {platform} imports {fraction}",
            grade.maximum.name()
        );
    }
}

#[test]
fn a_reference_is_full_marks_and_a_stub_nothing_on_every_platform() {
    if !support::nvrtc_available() {
        return;
    }
    let reference = graded_without_gpu("reference");
    let stub = graded_without_gpu("exercises");
    assert!(reference.counts.not_graded > 0, "some checks need a GPU: {:?}", reference.counts);
    let on_gpu = as_on_a_gpu(&reference, true);
    let stub_on_gpu = as_on_a_gpu(&stub, false);
    for maximum in [Maximum::GradedHere, Maximum::FullGiven] {
        assert_all(&Grade::of(&reference, maximum), 1.0, "the reference without a GPU");
        assert_all(&Grade::of(&on_gpu, maximum), 1.0, "the reference on a GPU");
        assert_all(&Grade::of(&stub, maximum), 0.0, "the stub without a GPU");
        assert_all(&Grade::of(&stub_on_gpu, maximum), 0.0, "the stub on a GPU");
    }
    // Withheld: a GPU's points are missing without one, and every file agrees on how many.
    let withheld = Grade::of(&reference, Maximum::FullWithheld);
    assert_eq!(withheld.max, Grade::of(&on_gpu, Maximum::GradedHere).max, "the full maximum");
    let fractions = imported(&withheld);
    assert!(fractions.iter().all(|(_, f)| (f - withheld.fraction()).abs() < 1e-4 && *f < 1.0), "{fractions:?}");
    // On a GPU every maximum is the same.
    assert_eq!(Grade::of(&on_gpu, Maximum::FullGiven).max, Grade::of(&on_gpu, Maximum::GradedHere).max);
}

/// Rounding each test's points to hundredths made Classroom's sum pass the
/// maximum (22.999999999999993/22.99); shared once, they add up exactly.
#[test]
fn classroom_sums_are_exact_with_thirds_of_points() {
    let mut report = outcomes::sample();
    for t in report.exercises.iter_mut().flat_map(|e| &mut e.parts).flat_map(|p| &mut p.tests) {
        t.status = Status::Pass;
        t.max_score = 10.0 / 3.0 + 0.1;
        t.score = t.max_score;
        t.not_graded = None;
    }
    report.total_up();
    let grade = Grade::of(&report, Maximum::GradedHere);
    let (points, max) = classroom::reporter_sums(&classroom::results(&grade));
    assert_eq!((points, max), (grade.max.points(), grade.max.points()));
    assert_all(&grade, 1.0, "thirds");
}

#[test]
fn docs_platforms_md_shows_the_outcome_table_the_files_hold() {
    let docs = std::fs::read_to_string(workspace().join("docs/platforms.md")).unwrap();
    let table = outcomes::table();
    assert!(docs.contains(&table), "docs/platforms.md must hold this table, as the files say:\n{table}");
}

/// A grading run with `--format coderunner` prints the JSON alone: CodeRunner
/// reads the whole of stdout as it.
#[test]
fn coderunner_from_a_grading_run_prints_only_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json");
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(["ex02", "--reference", "--backend", "none", "--seed", "3", "--format", "coderunner"])
        .args(["--json", json.to_str().unwrap()])
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 101 | 3)), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let outcome: Value = serde_json::from_str(stdout.trim_end()).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
    assert!(outcome["fraction"].is_number() && outcome["testresults"].is_array());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Scores"), "the report goes to stderr");
}

/// The PrairieLearn image keeps no build folder: it is removed in the layer
/// that made it, and only the binary is copied into the final image.
#[test]
fn the_prairielearn_image_copies_only_the_binary() {
    let dockerfile = std::fs::read_to_string(workspace().join("docs/prairielearn/Dockerfile")).unwrap();
    let build_run = dockerfile.split("\nRUN ").find(|r| r.starts_with("cargo build")).unwrap();
    let build_run = build_run.split("\n\n").next().unwrap();
    assert!(build_run.contains("rm -rf target"), "{build_run}");
    let last_stage = dockerfile.rsplit("\nFROM ").next().unwrap();
    assert!(!last_stage.contains("rm -rf /opt/cuda-lab/target"), "no later layer removes what an earlier one holds");
    assert!(last_stage.contains("COPY --from=build /opt/grader-bin/grader /opt/cuda-lab/target/release/grader"));
}
