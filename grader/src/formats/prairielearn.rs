//! PrairieLearn's external-grader results: `/grade/results/results.json`
//! with `gradable`, `score` in [0, 1], `message`, `output` and `tests` (each
//! `name`, `description`, `points`, `max_points`, `message`, `output`), as
//! PrairieLearn's external grading documentation describes them and its
//! `<pl-external-grader-results>` element shows them. `docs/prairielearn/run`
//! is the script its grader image runs.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{cases, fraction, round2, truncate, Outcome};
use crate::report::GradeReport;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    /// Always true: a submission that does not compile is graded (0 for its
    /// parts), as on every other platform, rather than handed back unpenalised.
    pub gradable: bool,
    /// The fraction of the points: PrairieLearn scales it by the question's points.
    pub score: f64,
    /// One line above the tests: the points.
    pub message: String,
    /// The grader's score table.
    pub output: String,
    pub tests: Vec<Test>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Test {
    pub name: String,
    /// The exercise, part and kind of check, and the student's line where known.
    pub description: String,
    pub points: f64,
    pub max_points: f64,
    /// The outcome and the message's first line.
    pub message: String,
    /// The whole message.
    pub output: String,
}

/// PrairieLearn refuses results over 1 MB: each test's text is capped well below.
const MAX_OUTPUT_CHARS: usize = 8000;

pub fn results(report: &GradeReport) -> Results {
    let tests = cases(report)
        .into_iter()
        .map(|c| {
            let mut description = format!("{} {}: {} check", c.exercise, c.part, kind_name(c.test.kind));
            if let Some(at) = &c.at {
                description += &format!(", at {at}");
            }
            let message = match c.outcome {
                Outcome::Passed => "passed".to_string(),
                _ => c.headline(),
            };
            Test {
                name: c.test.name.clone(),
                description,
                points: round2(c.test.score),
                max_points: round2(c.test.max_score),
                message: truncate(&message, MAX_OUTPUT_CHARS),
                output: truncate(&c.message, MAX_OUTPUT_CHARS),
            }
        })
        .collect();
    Results {
        gradable: true,
        score: fraction(report),
        message: format!("{} / {} points", round2(report.score), round2(report.max_score)),
        output: truncate(&report.summary(), 4 * MAX_OUTPUT_CHARS),
        tests,
    }
}

pub(super) fn kind_name(kind: kit::CheckKind) -> &'static str {
    match kind {
        kit::CheckKind::Correctness => "correctness",
        kit::CheckKind::Structure => "structure",
        kit::CheckKind::Performance => "performance",
    }
}

/// Writes `results.json` atomically (its folder is made when missing:
/// PrairieLearn does not make `/grade/results`).
pub fn write(report: &GradeReport, path: &Path) -> Result<()> {
    crate::atomic::write_json(path, &results(report))?;
    Ok(())
}
