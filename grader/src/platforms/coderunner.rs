//! Moodle CodeRunner's combinator template grader output: one JSON object
//! on stdout with `fraction` (the mark, in [0, 1]), `testresults` (a table
//! whose first row is the header; a column headed `iscorrect` shows a tick
//! for 1 and a cross for 0), and `prologuehtml` / `epiloguehtml` (shown above
//! and below the table), as CodeRunner's documentation on combinator-template
//! grading describes them. docs/platforms.md shows the question template.
//! A grading run with `--format coderunner` prints the object alone on
//! stdout (the report goes to stderr: main.rs).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{truncate, Grade};

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

pub fn outcome(grade: &Grade) -> Outcome {
    let mut rows: Vec<Vec<Value>> = vec![HEADER.iter().map(|h| json!(h)).collect()];
    for t in grade.tests() {
        rows.push(vec![
            // A check that cost nothing gets no cross.
            json!(u8::from(t.is_ok())),
            json!(t.name()),
            json!(format!("{} / {}", t.points, t.max)),
            json!(t.outcome.label()),
            json!(t.at.as_ref().map(ToString::to_string).unwrap_or_default()),
            json!(truncate(&t.message, MAX_CELL_CHARS)),
        ]);
    }
    let pct = 100.0 * grade.fraction();
    Outcome {
        fraction: grade.fraction(),
        testresults: rows,
        prologuehtml: format!("<p><strong>{} ({pct:.0}%)</strong></p>", escape(&grade.headline())),
        epiloguehtml: format!("<pre>{}</pre>", escape(grade.summary().trim_matches('\n'))),
    }
}

/// Text inside HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The one line CodeRunner reads (the whole of stdout must be this object).
pub fn json(grade: &Grade) -> anyhow::Result<String> {
    Ok(serde_json::to_string(&outcome(grade))?)
}
