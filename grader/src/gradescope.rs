//! Gradescope output: `results.json` in the format of Gradescope's autograder
//! specification (top-level `score`, `output`, `tests` with `name`, `score`,
//! `max_score`, `status`, `output`, `visibility`). `docs/gradescope/run_autograder`
//! shows the script Gradescope runs.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::classroom::{round2, truncate};
use crate::report::{GradeReport, Status, TestReport};

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
    /// "passed" or "failed". A check that could not run counts as failed, unless
    /// the course's policy left it out of the maximum (then 0 of 0, "passed").
    pub status: String,
    pub output: String,
    pub visibility: String,
}

const MAX_OUTPUT_CHARS: usize = 8000;

pub fn results(report: &GradeReport) -> Results {
    let tests = report
        .exercises
        .iter()
        .flat_map(|e| &e.parts)
        .flat_map(|p| &p.tests)
        .map(|t| Test {
            name: t.name.clone(),
            score: round2(t.score),
            max_score: round2(t.max_score),
            // A check the course's policy left out (no GPU here) is no failure: 0 of 0 points.
            status: if t.status == Status::Pass || t.not_graded.is_some() { "passed" } else { "failed" }.into(),
            output: truncate(&test_output(t), MAX_OUTPUT_CHARS),
            visibility: "visible".into(),
        })
        .collect();
    Results {
        score: round2(report.score),
        output: report.summary(),
        visibility: "visible".into(),
        // The run's log is the TAs' debugging aid; students get the score table and each test's message.
        stdout_visibility: "hidden".into(),
        tests,
    }
}

fn test_output(t: &TestReport) -> String {
    if let Some(n) = &t.not_graded {
        return format!(
            "not graded here ({}): worth {} point(s) where a GPU grades it; left out of the maximum by the \
             course's policy",
            n.why,
            round2(n.points)
        );
    }
    [t.verdict.as_deref(), t.message.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(": ")
}

/// Writes `results.json` atomically.
pub fn write(report: &GradeReport, path: &Path) -> Result<()> {
    crate::atomic::write_json(path, &results(report))?;
    Ok(())
}
