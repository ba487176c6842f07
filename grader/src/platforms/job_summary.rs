//! The Markdown a GitHub Actions job writes to `$GITHUB_STEP_SUMMARY`: the score
//! table and the first failure of each part, so a student sees them on the
//! run's page without opening the log.

use std::fmt::Write as _;

use super::Grade;
use crate::report::{CompileStatus, Status};

pub fn markdown(grade: &Grade) -> String {
    let r = grade.report;
    let pct = 100.0 * grade.fraction();
    let mut s = format!("## cuda-lab: {} / {} ({pct:.0}%)\n\n", grade.points, grade.max);
    // The same counts as the grader's summary and Gradescope's file (ignored with what they were).
    let _ = writeln!(
        s,
        "{} · seed `{}` · {}\n",
        r.counts_line().trim(),
        r.seed,
        r.environment.gpu.as_deref().unwrap_or(&r.environment.backend)
    );
    s += "| exercise | part | score | first failure |\n| --- | --- | ---: | --- |\n";
    for (e, shown) in r.exercises.iter().zip(&grade.exercises) {
        for p in &e.parts {
            let tests = shown.tests.iter().filter(|t| t.part == p.name);
            let (points, max) =
                tests.fold((super::Cents::ZERO, super::Cents::ZERO), |(s, m), t| (s + t.points, m + t.max));
            let failure = if p.compile.status == CompileStatus::Error {
                if p.compile.missing {
                    p.compile.message.clone().unwrap_or_default()
                } else {
                    format!("did not compile: {}", p.compile.message.as_deref().unwrap_or(""))
                }
            } else {
                match p.tests.iter().find(|t| t.status == Status::Fail) {
                    Some(t) => {
                        format!("`{}`: {}", t.name, t.message.as_deref().unwrap_or("").lines().next().unwrap_or(""))
                    }
                    None if p.tests.iter().any(|t| t.status == Status::Pass) => "✓".into(),
                    None => "not run".into(),
                }
            };
            let _ = writeln!(s, "| {} | {} | {points} / {max} | {} |", e.id, p.name, cell(&failure));
        }
    }
    if let Some(note) = &r.environment.note {
        let _ = writeln!(s, "\n> {}", cell(note));
    }
    s += "\nThe report with pictures (report.html) is attached to this run as an artifact.\n";
    s
}

/// Text safe inside a Markdown table cell.
fn cell(s: &str) -> String {
    let s: String = s.replace('|', "\\|").replace(['\n', '\r'], " ");
    if s.chars().count() > 300 {
        format!("{}…", s.chars().take(300).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CompileReport, Environment, ExerciseReport, GradeReport, PartReport, TestReport};
    use kit::CheckKind;

    #[test]
    fn table_names_each_part_and_its_first_failure() {
        let mut r = GradeReport::new(7, std::path::Path::new("."), "exercises", Environment::default());
        let mut failing = TestReport::new("ex01::shared::correct::n=100".into(), CheckKind::Correctness, Status::Fail);
        failing.message = Some("`hits`: expected 3 | got 4\nmore".into());
        let part = |name: &str, tests| {
            let file = format!("exercises/ex01-pi/kernels/pi_{name}.cu");
            PartReport::new(name, file, CompileReport::with(CompileStatus::Ok, None), tests)
        };
        let passing = TestReport::new("ex01::global::correct::n=100".into(), CheckKind::Correctness, Status::Pass);
        r.exercises.push(ExerciseReport {
            id: "ex01".into(),
            title: "pi".into(),
            score: 0.0,
            max_score: 0.0,
            parts: vec![part("global", vec![passing]), part("shared", vec![failing])],
        });
        r.total_up();
        let md = markdown(&Grade::of(&r, crate::platforms::Maximum::GradedHere));
        assert!(md.contains("| ex01 | global | 0.00 / 0.00 | ✓ |"), "{md}");
        assert!(md.contains("`ex01::shared::correct::n=100`: `hits`: expected 3 \\| got 4 |"), "{md}");
        assert!(!md.contains("more"), "only the first line of the message: {md}");
    }

    /// Issue 47: the summary said "5 ignored" where Gradescope's file said
    /// "6 ignored (1 not counted)": both now count as the grader's summary does.
    #[test]
    fn the_ignored_count_is_the_graders_own() {
        let mut r = GradeReport::new(7, std::path::Path::new("."), "exercises", Environment::default());
        r.counts.ignored = 5;
        r.counts.not_counted = 1;
        let md = markdown(&Grade::of(&r, crate::platforms::Maximum::GradedHere));
        assert!(md.contains("6 ignored (1 not counted)"), "{md}");
        assert!(md.contains(r.counts_line().trim()), "{md}");
    }
}
