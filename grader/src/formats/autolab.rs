//! Autolab's autograder output: free text (the feedback a student reads), a
//! line `{"_presentation": "semantic", "stages": [...], ...}` that Autolab's
//! formatted feedback turns into one table of tests per stage (here: per
//! exercise, each test `passed` with a `hint` where it did not), and last the
//! autoresult `{"scores": {...}, "scoreboard": [...]}`, which must be the last
//! line of the output. The problems are the exercises, named by id (`ex01`),
//! as the assessment must define them; the scoreboard's columns are the total
//! and then each exercise (docs/platforms.md has the column specification).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{cases, round2, truncate, Outcome};
use crate::report::GradeReport;

/// The last line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Autoresult {
    /// Points per problem (exercise id).
    pub scores: std::collections::BTreeMap<String, f64>,
    /// The total, then each exercise's points, in the report's order.
    pub scoreboard: Vec<f64>,
}

const MAX_HINT_CHARS: usize = 1000;

pub fn autoresult(report: &GradeReport) -> Autoresult {
    Autoresult {
        scores: report.exercises.iter().map(|e| (e.id.clone(), round2(e.score))).collect(),
        scoreboard: std::iter::once(round2(report.score))
            .chain(report.exercises.iter().map(|e| round2(e.score)))
            .collect(),
    }
}

/// The formatted-feedback line: one stage per exercise, its tests as rows.
pub fn semantic(report: &GradeReport) -> Value {
    let mut stages: Map<String, Value> = report.exercises.iter().map(|e| (e.id.clone(), json!({}))).collect();
    for c in cases(report) {
        let mut row = Map::new();
        row.insert("passed".into(), json!(c.outcome.is_ok()));
        if c.outcome != Outcome::Passed {
            let mut hint = c.headline();
            if let Some(at) = &c.at {
                hint += &format!(" (at {at})");
            }
            row.insert("hint".into(), json!(truncate(&hint, MAX_HINT_CHARS)));
        }
        if let Some(Value::Object(stage)) = stages.get_mut(c.exercise) {
            stage.insert(c.test.name.clone(), Value::Object(row));
        }
    }
    let order: Vec<&str> = report.exercises.iter().map(|e| e.id.as_str()).collect();
    let mut out = Map::new();
    out.insert("_presentation".into(), json!("semantic"));
    out.insert("stages".into(), json!(order));
    out.extend(stages);
    Value::Object(out)
}

/// The two JSON lines that end the output, each ending in a newline.
pub fn lines(report: &GradeReport) -> anyhow::Result<String> {
    Ok(format!("{}\n{}\n", serde_json::to_string(&semantic(report))?, serde_json::to_string(&autoresult(report))?))
}

/// Everything for `grader report`: the score table as feedback, then [`lines`].
pub fn feedback(report: &GradeReport) -> anyhow::Result<String> {
    Ok(format!("{}\n{}", report.summary().trim_matches('\n'), lines(report)?))
}
