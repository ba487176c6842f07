//! GitHub Classroom output: one result per exercise in the shape that
//! `classroom-resources/autograding-grading-reporter` reads. The reporter takes
//! `runners: ex01,ex02,…` and, per runner, the environment variable
//! `<ID>_RESULTS` (upper-cased id) holding base64 of this JSON; it adds up
//! `score` over the tests of every runner in turn and `max_score` over the
//! runners, as JavaScript numbers, and posts "Points X/Y".
//!
//! The grading step hands each result over as a step output, `ex01=<base64>`
//! appended to the file named by `$GITHUB_OUTPUT`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use base64::Engine;
use serde::{Deserialize, Serialize};

use super::{truncate, Grade, Maximum, Outcome, Test};
use crate::report::GradeReport;

pub use super::text::round2;

/// One runner's result (`version` 1 of the reporter's format).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunnerResult {
    pub version: u32,
    /// "pass" (nothing lost points) or "fail" (a test failed or did not run).
    /// A check not graded here fails nothing: its test says what happened.
    pub status: String,
    pub max_score: f64,
    pub tests: Vec<RunnerTest>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunnerTest {
    pub name: String,
    /// "pass", "fail", or "error" for a check not graded here that earned nothing.
    pub status: String,
    pub score: f64,
    /// Starts with what happened: "passed", "failed: …", "not graded here …".
    pub message: String,
}

/// The reporter prints messages in the Actions log; a page of them is plenty.
const MAX_MESSAGE_CHARS: usize = 2000;

/// One runner per exercise, keyed by exercise id (the runner id), with the
/// grades JSON's own maximum (`graded-here`).
pub fn runner_results(report: &GradeReport) -> BTreeMap<String, RunnerResult> {
    results(&Grade::of(report, Maximum::GradedHere))
}

/// One runner per exercise, keyed by exercise id. The reporter's sums come
/// out exactly as [`Grade::points`] and [`Grade::max`]: where adding the
/// hundredths as doubles would drift (0.1 + 0.2), the last score (and the
/// last maximum) absorbs the difference.
pub fn results(grade: &Grade) -> BTreeMap<String, RunnerResult> {
    let mut out: BTreeMap<String, RunnerResult> = grade
        .exercises
        .iter()
        .map(|e| {
            let tests: Vec<RunnerTest> = e.tests.iter().map(runner_test).collect();
            let failed = e.tests.iter().any(|t| matches!(t.outcome, Outcome::Failed | Outcome::NotRun));
            let status = if failed { "fail" } else { "pass" };
            (e.id.to_string(), RunnerResult { version: 1, status: status.into(), max_score: e.max.points(), tests })
        })
        .collect();
    exact_sums(&mut out, grade);
    out
}

fn runner_test(t: &Test) -> RunnerTest {
    let status = match t.outcome {
        Outcome::Passed => "pass",
        Outcome::Failed | Outcome::NotRun => "fail",
        Outcome::NotGradedHere if t.points < t.max => "error",
        Outcome::NotGradedHere => "pass",
    };
    let message = match t.outcome {
        Outcome::Passed if t.message.is_empty() => "passed".to_string(),
        Outcome::Passed => format!("passed: {}", t.message),
        _ => {
            let head = t.headline();
            let rest = t.message.split_once('\n').map(|(_, r)| r).unwrap_or("");
            if rest.is_empty() {
                head
            } else {
                format!("{head}\n{rest}")
            }
        }
    };
    RunnerTest {
        name: t.name().to_string(),
        status: status.into(),
        score: t.points.points(),
        message: truncate(&message, MAX_MESSAGE_CHARS),
    }
}

/// The reporter's sums: every test's score of every runner with a maximum,
/// in turn, from 0; every such runner's `max_score`.
pub fn reporter_sums(results: &BTreeMap<String, RunnerResult>) -> (f64, f64) {
    let (mut points, mut max) = (0.0, 0.0);
    for r in results.values().filter(|r| r.max_score != 0.0) {
        max += r.max_score;
        for t in &r.tests {
            points += t.score;
        }
    }
    (points, max)
}

fn exact_sums(results: &mut BTreeMap<String, RunnerResult>, grade: &Grade) {
    let (want_points, want_max) = (grade.points.points(), grade.max.points());
    for _ in 0..8 {
        let (points, max) = reporter_sums(results);
        if points == want_points && max == want_max {
            return;
        }
        let Some(last) = results.values_mut().rev().find(|r| r.max_score != 0.0) else { return };
        if max != want_max {
            last.max_score += want_max - max;
        }
        if points != want_points {
            if let Some(t) = last.tests.iter_mut().rev().find(|t| t.score != 0.0) {
                t.score += want_points - points;
            }
        }
    }
}

/// `ex01=<base64 of the JSON>`, one line per exercise: the step outputs.
pub fn github_output_lines(grade: &Grade) -> Result<String> {
    let mut lines = String::new();
    for (id, result) in results(grade) {
        let json = serde_json::to_vec(&result)?;
        lines += &format!("{id}={}\n", base64::engine::general_purpose::STANDARD.encode(json));
    }
    Ok(lines)
}

/// Appends the step outputs to `path` (Actions' `$GITHUB_OUTPUT` file).
pub fn append_github_output(path: &Path, grade: &Grade) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    file.write_all(github_output_lines(grade)?.as_bytes()).with_context(|| format!("writing {}", path.display()))
}
