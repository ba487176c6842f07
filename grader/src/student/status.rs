//! `grader` / `grader status`: every exercise and part with its last result,
//! from the grades JSONs the student's runs left in target/grades (newest wins).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use kit::Exercise;

use crate::report::{CompileStatus, GradeReport, PartReport, Status, TestReport};

/// The last result of one part.
#[derive(Debug, Clone)]
pub struct LastResult {
    pub part: PartReport,
    /// When that run finished (RFC 3339).
    pub finished_at: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Done,
    Failing,
    NotStarted,
}

impl LastResult {
    pub fn state(&self) -> State {
        state_of(&self.part)
    }

    /// The first failing test, if any.
    pub fn first_failure(&self) -> Option<&TestReport> {
        self.part.tests.iter().find(|t| t.status == Status::Fail)
    }
}

/// Done when every test that ran passed; failing when one failed or it did not
/// compile; not started when nothing ran.
pub fn state_of(p: &PartReport) -> State {
    if p.compile.status == CompileStatus::Error || p.tests.iter().any(|t| t.status == Status::Fail) {
        State::Failing
    } else if p.tests.iter().any(|t| t.status == Status::Pass) {
        State::Done
    } else {
        State::NotStarted
    }
}

/// (exercise id, part name) -> the newest result among the grades JSONs in
/// `dir` of the student's own files (`sources` = "exercises").
pub fn last_results(dir: &Path) -> HashMap<(String, String), LastResult> {
    let mut out: HashMap<(String, String), LastResult> = HashMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let Ok(report) = serde_json::from_slice::<GradeReport>(&bytes) else { continue };
        if report.sources != "exercises" {
            continue;
        }
        for e in report.exercises {
            for p in e.parts {
                // A run filtered to other tests says nothing about this part.
                if p.compile.status == CompileStatus::Ok && p.tests.iter().all(|t| t.status == Status::NotRun) {
                    continue;
                }
                let key = (e.id.clone(), p.name.clone());
                let newer = out.get(&key).is_none_or(|old| report.finished_at > old.finished_at);
                if newer {
                    out.insert(key, LastResult { part: p, finished_at: report.finished_at.clone() });
                }
            }
        }
    }
    out
}

/// The newest grades JSON of the student's own files in `dir`, for a report
/// written outside a grading run (the lab).
pub fn latest_report(dir: &Path) -> Option<GradeReport> {
    let reports = std::fs::read_dir(dir).ok()?.flatten().filter_map(|e| {
        let p = e.path();
        let r: GradeReport = serde_json::from_slice(&std::fs::read(&p).ok()?).ok()?;
        (r.sources == "exercises").then_some(r)
    });
    reports.max_by(|a, b| a.finished_at.cmp(&b.finished_at))
}

/// The rustlings-like list: one line per part, the first failure under it.
pub fn render(exercises: &[Exercise], results: &HashMap<(String, String), LastResult>, root: &Path) -> String {
    let mut out = String::new();
    let (mut done, mut total) = (0, 0);
    for e in exercises {
        let _ = writeln!(out, "{} {}", e.id, e.title);
        for p in &e.parts {
            total += 1;
            let last = results.get(&(e.id.to_string(), p.name.to_string()));
            let state = last.map_or(State::NotStarted, LastResult::state);
            done += (state == State::Done) as usize;
            let (mark, word) = match state {
                State::Done => ("✓", "done"),
                State::Failing => ("✗", "failing"),
                State::NotStarted => ("·", "not started"),
            };
            let score = last.map(|l| format!("{:>6.2} / {:<6.2}", l.part.score, l.part.max_score)).unwrap_or_default();
            let changed =
                last.filter(|l| changed_since(root, e, p.file, l)).map(|_| "  (edited since)").unwrap_or_default();
            let ignored = last.map_or(0, |l| l.part.tests.iter().filter(|t| t.status == Status::Ignored).count());
            let ignored = if ignored > 0 { format!("  ({ignored} check(s) need a GPU)") } else { String::new() };
            let _ = writeln!(out, "  {mark} {:<12} {:<12} {score}{changed}{ignored}", p.name, word);
            if let Some(t) = last.and_then(|l| l.first_failure()) {
                let msg = t.message.as_deref().unwrap_or("").lines().next().unwrap_or("");
                let _ = writeln!(out, "      {}: {}", t.name, cut(msg, 110));
            } else if let Some(l) = last.filter(|l| l.part.compile.status == CompileStatus::Error) {
                let msg = l.part.compile.message.as_deref().unwrap_or("did not compile");
                let _ = writeln!(out, "      {}", cut(msg.lines().next().unwrap_or(""), 110));
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{done} of {total} parts done. `{c} exNN` grades one, `{c} watch exNN` re-grades on save, `{c} hint exNN` \
         helps.",
        c = super::COMMAND
    );
    out
}

/// True when the graded file differs from the one the result was for.
fn changed_since(root: &Path, e: &Exercise, file: &str, last: &LastResult) -> bool {
    use sha2::{Digest, Sha256};
    let Some(old) = &last.part.sha256 else { return false };
    let Ok(bytes) = std::fs::read(root.join("exercises").join(e.folder_name()).join(file)) else { return false };
    let now: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    &now != old
}

pub fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}
