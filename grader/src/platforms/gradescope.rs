//! Gradescope output: `results.json` in the format of Gradescope's autograder
//! specification (top-level `score`, `output`, `tests` with `name`, `score`,
//! `max_score`, `status`, `output`, `visibility`). `docs/gradescope/run_autograder`
//! shows the script Gradescope runs. The assignment's points must be the
//! maximum the course chose (docs/classroom.md).

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{truncate, Grade, Outcome};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    pub score: f64,
    /// Shown above the tests: the grader's score table.
    pub output: String,
    pub visibility: String,
    pub stdout_visibility: String,
    pub tests: Vec<Test>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Test {
    pub name: String,
    pub score: f64,
    pub max_score: f64,
    /// "passed" or "failed". A check not graded here is "passed" unless it
    /// cost points (the maximum `full-withheld`); its output says so.
    pub status: String,
    pub output: String,
    pub visibility: String,
}

const MAX_OUTPUT_CHARS: usize = 8000;

pub fn results(grade: &Grade) -> Results {
    let tests = grade
        .tests()
        .map(|t| Test {
            name: t.name().to_string(),
            score: t.points.points(),
            max_score: t.max.points(),
            status: if t.is_ok() { "passed" } else { "failed" }.into(),
            output: truncate(
                &match t.outcome {
                    Outcome::Passed | Outcome::Failed => t.message.clone(),
                    _ => t.headline() + t.message.split_once('\n').map_or("", |(_, r)| r),
                },
                MAX_OUTPUT_CHARS,
            ),
            visibility: "visible".into(),
        })
        .collect();
    Results {
        score: grade.points.points(),
        output: grade.summary(),
        visibility: "visible".into(),
        // The run's log is the TAs' debugging aid; students get the score table and each test's message.
        stdout_visibility: "hidden".into(),
        tests,
    }
}

/// Writes `results.json` atomically.
pub fn write(grade: &Grade, path: &Path) -> Result<()> {
    crate::atomic::write_json(path, &results(grade))?;
    Ok(())
}
