//! PrairieLearn's external-grader results: `/grade/results/results.json`
//! with `gradable`, `score` in [0, 1], `message`, `output` and `tests` (each
//! `name`, `description`, `points`, `max_points`, `message`, `output`), as
//! PrairieLearn's external grading documentation describes them and its
//! `<pl-external-grader-results>` element shows them. PrairieLearn refuses a
//! results file over 1 MB: the texts are cut until it fits ([`MAX_BYTES`]).
//! `docs/prairielearn/run` is the script its grader image runs.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{truncate, Grade, Outcome};

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

/// PrairieLearn's limit on the results file is 1 MB; this leaves room.
pub const MAX_BYTES: usize = 900_000;

/// How long each test's texts may be, tried in turn until the file fits.
const CAPS: [usize; 6] = [8000, 2000, 500, 120, 40, 0];

pub fn results(grade: &Grade) -> Results {
    for cap in CAPS {
        let r = results_capped(grade, cap);
        if serde_json::to_vec(&r).map_or(0, |b| b.len()) <= MAX_BYTES || cap == 0 {
            return r;
        }
    }
    unreachable!("the last cap returns")
}

fn results_capped(grade: &Grade, cap: usize) -> Results {
    let tests = grade
        .tests()
        .map(|t| {
            let mut description = format!("{} {}: {} check", t.exercise, t.part, kind_name(t.report.kind));
            if let Some(at) = &t.at {
                description += &format!(", at {at}");
            }
            let message = match t.outcome {
                Outcome::Passed => "passed".to_string(),
                _ => t.headline(),
            };
            Test {
                name: truncate(t.name(), cap.max(200)),
                description,
                points: t.points.points(),
                max_points: t.max.points(),
                message: truncate(&message, cap),
                output: truncate(&t.message, cap),
            }
        })
        .collect();
    Results {
        gradable: true,
        score: grade.fraction(),
        message: grade.headline(),
        output: truncate(&grade.summary(), 4 * cap),
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
/// PrairieLearn does not make `/grade/results`), readable by everyone: the
/// grader host may read it as another user than the one that graded.
pub fn write(grade: &Grade, path: &Path) -> Result<()> {
    crate::atomic::write_json(path, &results(grade))?;
    readable(path)
}

/// Mode 0644 (temporary files are made 0600).
pub fn readable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
        .with_context(|| format!("making {} readable", path.display()))
}
