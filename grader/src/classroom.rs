//! GitHub Classroom output: one result per exercise in the shape that
//! `classroom-resources/autograding-grading-reporter` reads. The reporter takes
//! `runners: ex01,ex02,…` and, per runner, the environment variable
//! `<ID>_RESULTS` (upper-cased id) holding base64 of this JSON; it sums `score`
//! over tests and `max_score` over runners, and posts "Points X/Y".
//!
//! The grading step hands each result over as a step output, `ex01=<base64>`
//! appended to the file named by `$GITHUB_OUTPUT`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use base64::Engine;
use serde::{Deserialize, Serialize};

use crate::report::{GradeReport, Status};

/// One runner's result (`version` 1 of the reporter's format).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunnerResult {
    pub version: u32,
    /// "pass" (every test passed), "fail" (one failed) or "error" (some could not run).
    pub status: String,
    pub max_score: f64,
    pub tests: Vec<RunnerTest>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunnerTest {
    pub name: String,
    /// "pass", "fail" or "error".
    pub status: String,
    pub score: f64,
    pub message: String,
}

/// The reporter prints messages in the Actions log; a page of them is plenty.
const MAX_MESSAGE_CHARS: usize = 2000;

/// One runner per exercise, keyed by exercise id (the runner id).
pub fn runner_results(report: &GradeReport) -> BTreeMap<String, RunnerResult> {
    report
        .exercises
        .iter()
        .map(|ex| {
            let tests: Vec<RunnerTest> = ex
                .parts
                .iter()
                .flat_map(|p| &p.tests)
                .map(|t| RunnerTest {
                    name: t.name.clone(),
                    status: match t.status {
                        Status::Pass => "pass",
                        Status::Fail | Status::NotCounted => "fail",
                        Status::Ignored | Status::NotRun | Status::NotGradedHere => "error",
                    }
                    .into(),
                    score: round2(t.score),
                    message: truncate(&message(t.verdict.as_deref(), t.message.as_deref()), MAX_MESSAGE_CHARS),
                })
                .collect();
            let status = if tests.iter().any(|t| t.status == "fail") {
                "fail"
            } else if tests.iter().any(|t| t.status == "error") {
                "error"
            } else {
                "pass"
            };
            (ex.id.clone(), RunnerResult { version: 1, status: status.into(), max_score: round2(ex.max_score), tests })
        })
        .collect()
}

/// `ex01=<base64 of the JSON>`, one line per exercise: the step outputs.
pub fn github_output_lines(report: &GradeReport) -> Result<String> {
    let mut lines = String::new();
    for (id, result) in runner_results(report) {
        let json = serde_json::to_vec(&result)?;
        lines += &format!("{id}={}\n", base64::engine::general_purpose::STANDARD.encode(json));
    }
    Ok(lines)
}

/// Appends the step outputs to `path` (Actions' `$GITHUB_OUTPUT` file).
pub fn append_github_output(path: &Path, report: &GradeReport) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    file.write_all(github_output_lines(report)?.as_bytes()).with_context(|| format!("writing {}", path.display()))
}

fn message(verdict: Option<&str>, message: Option<&str>) -> String {
    match (verdict, message) {
        (Some(v), Some(m)) => format!("{v}: {m}"),
        (Some(s), None) | (None, Some(s)) => s.to_string(),
        (None, None) => String::new(),
    }
}

pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{} [...]", &text[..cut]),
        None => text.to_string(),
    }
}

/// Points as people read them (2.5, not 2.4999999999999996).
pub(crate) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
