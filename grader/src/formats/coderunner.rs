//! Moodle CodeRunner's combinator template grader output: one JSON object
//! on stdout with `fraction` (the mark, in [0, 1]), `testresults` (a table
//! whose first row is the header; a column headed `iscorrect` shows a tick
//! for 1 and a cross for 0), and `prologuehtml` / `epiloguehtml` (shown above
//! and below the table), as CodeRunner's documentation on combinator-template
//! grading describes them. docs/platforms.md shows the question template.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{cases, fraction, round2, truncate};
use crate::report::GradeReport;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Outcome {
    pub fraction: f64,
    /// Header row, then one row per test: cells are strings or numbers.
    pub testresults: Vec<Vec<Value>>,
    pub prologuehtml: String,
    pub epiloguehtml: String,
}

/// The table's columns. `iscorrect` is CodeRunner's tick column.
pub const HEADER: [&str; 6] = ["iscorrect", "Test", "Points", "Status", "Where", "Message"];

/// A table cell is rendered in a `<pre>`; a page of text is plenty.
const MAX_CELL_CHARS: usize = 2000;

pub fn outcome(report: &GradeReport) -> Outcome {
    let mut rows: Vec<Vec<Value>> = vec![HEADER.iter().map(|h| json!(h)).collect()];
    for c in cases(report) {
        rows.push(vec![
            // A check the policy left out of the maximum costs nothing: no cross.
            json!(u8::from(c.outcome.is_ok())),
            json!(c.test.name),
            json!(format!("{} / {}", round2(c.test.score), round2(c.test.max_score))),
            json!(c.outcome.label()),
            json!(c.at.as_ref().map(ToString::to_string).unwrap_or_default()),
            json!(truncate(&c.message, MAX_CELL_CHARS)),
        ]);
    }
    let pct = 100.0 * fraction(report);
    Outcome {
        fraction: fraction(report),
        testresults: rows,
        prologuehtml: format!(
            "<p><strong>{} / {} points ({pct:.0}%)</strong></p>",
            round2(report.score),
            round2(report.max_score)
        ),
        epiloguehtml: epilogue(report),
    }
}

/// The score table with its notes (policy, no GPU), as the grader prints it.
fn epilogue(report: &GradeReport) -> String {
    format!("<pre>{}</pre>", escape(report.summary().trim_matches('\n')))
}

/// Text inside HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The one line CodeRunner reads (the whole of stdout must be this object).
pub fn json(report: &GradeReport) -> anyhow::Result<String> {
    Ok(serde_json::to_string(&outcome(report))?)
}
