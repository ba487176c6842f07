//! The results for course platforms beyond Classroom and Gradescope, one
//! module per platform: PrairieLearn's `results.json`, Moodle CodeRunner's
//! combinator-grader JSON, Autolab's autoresult lines and JUnit XML (CodeGrade,
//! GitLab, Jenkins). Each is made from the same grades JSON (`report`), through
//! [`cases`]: every test once, with its points, outcome, message and, where
//! the message names one, the student's line.

pub mod autolab;
pub mod coderunner;
pub mod junit;
pub mod prairielearn;

pub(crate) use crate::classroom::{round2, truncate};
use crate::report::{CompileStatus, GradeReport, PartReport, Status, TestReport};

/// One test as every platform shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Case<'r> {
    pub exercise: &'r str,
    pub part: &'r str,
    pub test: &'r TestReport,
    pub outcome: Outcome,
    /// `verdict: message`, or why it was not graded; the full text.
    pub message: String,
    /// Where in the student's file, when the message (or the compiler) says.
    pub at: Option<SourceLine>,
}

impl Case<'_> {
    /// The outcome and the message's first line, said once ("failed: race: ...").
    pub fn headline(&self) -> String {
        let (label, line) = (self.outcome.label(), first_line(&self.message));
        match line {
            "" => label.to_string(),
            _ if line.starts_with(label) => line.to_string(),
            _ => format!("{label}: {line}"),
        }
    }
}

/// What a platform records for a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// Ran and lost its points, or earns nothing because correctness failed.
    Failed,
    /// Could not run (no GPU, did not compile, filtered out) and cost its points.
    Error,
    /// Could not run here and left out of the maximum by the course's policy: costs nothing.
    Skipped,
}

impl Outcome {
    pub fn of(t: &TestReport) -> Outcome {
        match t.status {
            Status::Pass => Outcome::Passed,
            Status::Fail | Status::NotCounted => Outcome::Failed,
            // A check that cannot run costs its points only where they stay in the maximum.
            Status::Ignored | Status::NotRun | Status::NotGradedHere if t.max_score > 0.0 => Outcome::Error,
            Status::Ignored | Status::NotRun | Status::NotGradedHere => Outcome::Skipped,
        }
    }

    /// Whether a student should read it as no loss (a tick on platforms with only two states).
    pub fn is_ok(self) -> bool {
        matches!(self, Outcome::Passed | Outcome::Skipped)
    }

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Error => "not run",
            Outcome::Skipped => "not graded here",
        }
    }
}

/// `file.cu:line` in the student's sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for SourceLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Every test of the report, in order.
pub fn cases(report: &GradeReport) -> Vec<Case<'_>> {
    let mut out = Vec::new();
    for e in &report.exercises {
        for p in &e.parts {
            for t in &p.tests {
                let message = message(p, t);
                let at = source_line(&message).or_else(|| compile_line(p));
                out.push(Case { exercise: &e.id, part: &p.name, test: t, outcome: Outcome::of(t), message, at });
            }
        }
    }
    out
}

fn message(p: &PartReport, t: &TestReport) -> String {
    if let Some(n) = &t.not_graded {
        return format!(
            "not graded here ({}): worth {} point(s) where a GPU grades it; left out of the maximum by the \
             course's policy",
            n.why,
            round2(n.points)
        );
    }
    let text = [t.verdict.as_deref(), t.message.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(": ");
    if p.compile.status == CompileStatus::Error && t.status != Status::Pass {
        // The compiler's first error is what the student fixes; the test only says it could not run.
        if let Some(first) = p.compile.diagnostics.first() {
            return format!("{text}\n{first}");
        }
    }
    text
}

/// The first `<path>.cu:<line>` a message names (the simulator's and the
/// sanitizer's findings point at the student's line this way).
pub fn source_line(message: &str) -> Option<SourceLine> {
    let mut from = 0;
    while let Some(i) = message[from..].find(".cu:") {
        let dot = from + i;
        let digits: String = message[dot + 4..].chars().take_while(char::is_ascii_digit).collect();
        let start = message[..dot]
            .rfind(|c: char| c.is_whitespace() || matches!(c, '(' | '`' | '\'' | '"' | ','))
            .map_or(0, |s| s + 1);
        if let (Ok(line), true) = (digits.parse::<u32>(), start < dot) {
            return Some(SourceLine { file: message[start..dot + 3].to_string(), line });
        }
        from = dot + 4;
    }
    None
}

fn compile_line(p: &PartReport) -> Option<SourceLine> {
    let d = p.compile.diagnostics.first()?;
    Some(SourceLine { file: d.file.clone(), line: d.line? })
}

/// Score out of the maximum, in [0, 1] (0 when nothing could be graded).
pub fn fraction(report: &GradeReport) -> f64 {
    if report.max_score > 0.0 {
        (report.score / report.max_score).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The first line, for places that take one (an attribute, a table cell's summary).
pub fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_students_line_is_found_in_a_message() {
        let m = "race: … at exercises/ex01-pi/kernels/pi_shared.cu:8 (PTX line 44) and …:17 with no barrier";
        assert_eq!(source_line(m), Some(SourceLine { file: "exercises/ex01-pi/kernels/pi_shared.cu".into(), line: 8 }));
        assert_eq!(source_line("`ld.global` (pi.cu:14, PTX line 3)").unwrap().to_string(), "pi.cu:14");
        assert_eq!(source_line("wrong: 3 of 1000 elements differ"), None);
        assert_eq!(source_line("see kernels/a.cu: no line"), None);
    }
}
