//! What each platform's file records for each outcome, read back from the
//! files themselves: [`table`] grades a small report holding one test of each
//! outcome through every view and describes what came out. docs/platforms.md
//! shows this table, and a test keeps the two the same.

use std::fmt::Write as _;

use kit::CheckKind;

use super::{classroom, coderunner, gradescope, junit, Grade, Maximum};
use crate::report::{
    CompileReport, CompileStatus, Environment, ExerciseReport, GradeReport, NotGraded, PartReport, Status, TestReport,
};

/// The tests of the sample, by row: (row label, test name).
const ROWS: [(&str, &str); 3] = [
    ("passed", "ex00::a::correct::pass"),
    ("failed, not counted (its part's correctness failed), or did not compile", "ex00::a::correct::fail"),
    ("not run: in the maximum, left out by a test filter", "ex00::a::structure::filtered"),
];
const NOT_GRADED: &str = "ex00::b::perf::not-graded";

/// One exercise, two parts: a test of every outcome; the one not graded here
/// sits beside a test that passed, as in a reference without a GPU.
pub fn sample() -> GradeReport {
    let mut r = GradeReport::new(1, std::path::Path::new("."), "exercises", Environment::default());
    let test = |name: &str, kind, status, max: f64| {
        let mut t = TestReport::new(name.into(), kind, status);
        t.max_score = max;
        t.score = if status == Status::Pass { max } else { 0.0 };
        t
    };
    let mut fail = test(ROWS[1].1, CheckKind::Correctness, Status::Fail, 1.0);
    fail.verdict = Some("wrong".into());
    fail.message = Some("3 of 100 elements differ".into());
    let mut not_graded = test(NOT_GRADED, CheckKind::Performance, Status::Ignored, 0.0);
    not_graded.not_graded = Some(NotGraded { why: "needs real timing".into(), points: 1.0 });
    let part = |name: &str, tests| {
        PartReport::new(
            name,
            format!("exercises/ex00/kernels/{name}.cu"),
            CompileReport::with(CompileStatus::Ok, None),
            tests,
        )
    };
    r.exercises.push(ExerciseReport {
        id: "ex00".into(),
        title: "sample".into(),
        score: 0.0,
        max_score: 0.0,
        parts: vec![
            part(
                "a",
                vec![
                    test(ROWS[0].1, CheckKind::Correctness, Status::Pass, 1.0),
                    fail,
                    test(ROWS[2].1, CheckKind::Structure, Status::NotRun, 1.0),
                ],
            ),
            part("b", vec![test("ex00::b::correct::pass", CheckKind::Correctness, Status::Pass, 1.0), not_graded]),
        ],
    });
    r.total_up();
    r
}

/// The Markdown table.
pub fn table() -> String {
    let report = sample();
    let mut s = String::from(
        "| outcome | points (every file) | Classroom `status` | Gradescope `status` | CodeRunner `iscorrect`, Status \
         | Autolab `passed` | JUnit |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for (label, name) in ROWS {
        let _ = writeln!(s, "| {label} | {} |", cells(&Grade::of(&report, Maximum::GradedHere), name));
    }
    for maximum in [Maximum::GradedHere, Maximum::FullGiven, Maximum::FullWithheld] {
        let label = format!("not graded here, maximum `{}`", maximum.name());
        let _ = writeln!(s, "| {label} | {} |", cells(&Grade::of(&report, maximum), NOT_GRADED));
    }
    s
}

/// What each file says for test `name`, read from the file.
fn cells(grade: &Grade, name: &str) -> String {
    let t = grade.tests().find(|t| t.name() == name).expect("in the sample");
    let points = if t.max.0 == 0 {
        "0 of 0"
    } else if t.points == t.max {
        "all its points"
    } else {
        "0 of its points"
    };
    let runners = classroom::results(grade);
    let classroom = runners.values().flat_map(|r| &r.tests).find(|x| x.name == name).expect("there").status.clone();
    let gradescope = gradescope::results(grade).tests.into_iter().find(|x| x.name == name).expect("there").status;
    let row = coderunner::outcome(grade).testresults.into_iter().find(|r| r[1] == name).expect("there");
    let semantic = super::autolab::semantic(grade);
    let passed = &semantic[t.exercise][name]["passed"];
    let hint = if semantic[t.exercise][name].get("hint").is_some() { " and a `hint`" } else { "" };
    let xml = junit::xml(grade).expect("written");
    let root = junit::schema::parse(&xml).expect("read");
    let case =
        root.all("testsuite").flat_map(|s| s.all("testcase")).find(|c| c.attributes["name"] == name).expect("there");
    let junit = match case.children.iter().find(|c| c.name != "system-out") {
        None => "no child".to_string(),
        Some(c) if c.attributes.contains_key("type") => format!("`<{} type=\"VERDICT\">`", c.name),
        Some(c) => format!("`<{}>`", c.name),
    };
    format!(
        "{points} | `{classroom}` | `{gradescope}` | {}, `{}` | `{passed}`{hint} | {junit}",
        row[0],
        row[3].as_str().unwrap_or("")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_has_every_outcome() {
        let report = sample();
        let grade = Grade::of(&report, Maximum::FullGiven);
        let outcomes: Vec<_> = grade.tests().map(|t| t.outcome).collect();
        for o in super::super::Outcome::ALL {
            assert!(outcomes.contains(&o), "{o:?}");
        }
        assert!(table().lines().count() == 2 + 3 + 3, "{}", table());
    }
}
