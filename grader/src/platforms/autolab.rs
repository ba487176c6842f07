//! Autolab's autograder output: free text (the feedback a student reads), a
//! line `{"_presentation": "semantic", "stages": [...], ...}` that Autolab's
//! formatted feedback turns into one table of tests per stage (here: per
//! exercise, each test `passed` with a `hint` where it did not), and last the
//! autoresult `{"scores": {...}, "scoreboard": [...]}`, which must be the last
//! line of the output. The problems are the exercises, named by id (`ex01`),
//! as the assessment must define them, each with the maximum the feedback
//! prints (`ex01: 20.00 / 20.00`); the scoreboard's columns are the total and
//! then each exercise (docs/platforms.md has the column specification).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{truncate, Grade, Outcome};

/// The last line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Autoresult {
    /// Points per problem (exercise id).
    pub scores: std::collections::BTreeMap<String, f64>,
    /// The total, then each exercise's points, in the report's order.
    pub scoreboard: Vec<f64>,
}

const MAX_HINT_CHARS: usize = 1000;

pub fn autoresult(grade: &Grade) -> Autoresult {
    Autoresult {
        scores: grade.exercises.iter().map(|e| (e.id.to_string(), e.points.points())).collect(),
        scoreboard: std::iter::once(grade.points.points())
            .chain(grade.exercises.iter().map(|e| e.points.points()))
            .collect(),
    }
}

/// The formatted-feedback line: one stage per exercise, its tests as rows.
pub fn semantic(grade: &Grade) -> Value {
    let mut out = Map::new();
    out.insert("_presentation".into(), json!("semantic"));
    out.insert("stages".into(), json!(grade.exercises.iter().map(|e| e.id).collect::<Vec<_>>()));
    for e in &grade.exercises {
        let mut stage = Map::new();
        for t in &e.tests {
            let mut row = Map::new();
            row.insert("passed".into(), json!(t.is_ok()));
            if t.outcome != Outcome::Passed {
                let mut hint = t.headline();
                if let Some(at) = &t.at {
                    hint += &format!(" (at {at})");
                }
                row.insert("hint".into(), json!(truncate(&hint, MAX_HINT_CHARS)));
            }
            stage.insert(t.name().to_string(), Value::Object(row));
        }
        out.insert(e.id.to_string(), Value::Object(stage));
    }
    Value::Object(out)
}

/// Each problem's points out of the maximum its problem must have.
pub fn problems(grade: &Grade) -> String {
    let mut s = format!("Autolab problems ([platforms] maximum = {}):\n", grade.maximum.name());
    for e in &grade.exercises {
        let _ = writeln!(s, "  {}: {} / {}", e.id, e.points, e.max);
    }
    s
}

/// The two JSON lines that end the output, each ending in a newline.
pub fn lines(grade: &Grade) -> anyhow::Result<String> {
    Ok(format!("{}\n{}\n", serde_json::to_string(&semantic(grade))?, serde_json::to_string(&autoresult(grade))?))
}

/// Everything for `grader report`: the score table and the problems as feedback, then [`lines`].
pub fn feedback(grade: &Grade) -> anyhow::Result<String> {
    Ok(format!("{}\n{}{}", grade.summary().trim_matches('\n'), problems(grade), lines(grade)?))
}
