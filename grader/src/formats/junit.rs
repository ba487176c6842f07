//! JUnit XML, which CodeGrade's unit-test step, GitLab and Jenkins read:
//! `<testsuites>` holding one `<testsuite>` per exercise (counts of tests,
//! failures, errors and skipped, time), each holding one `<testcase>` per
//! check (`name`, `classname` = exercise.part, `time`, and `file`/`line` of
//! the student's line where the message names one) with a `<failure>`,
//! `<error>` or `<skipped>` child unless it passed. A check's points are
//! `<properties>` of its testcase (`points`, `max_points`), as pytest writes
//! testcase properties, and its `<system-out>`; the run's seed, backend and
//! score are properties of each suite.

use std::path::Path;

use anyhow::Result;
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use super::{cases, first_line, round2, truncate, Case, Outcome};
use crate::report::GradeReport;

/// Failure texts are shown in CI pages; a page of each is plenty.
const MAX_TEXT_CHARS: usize = 8000;

#[derive(Default)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    seconds: f64,
}

impl Counts {
    fn of<'a>(cases: impl IntoIterator<Item = &'a Case<'a>>) -> Counts {
        let mut n = Counts::default();
        for c in cases {
            n.tests += 1;
            n.seconds += c.test.duration_ms / 1000.0;
            match c.outcome {
                Outcome::Passed => {}
                Outcome::Failed => n.failures += 1,
                Outcome::Error => n.errors += 1,
                Outcome::Skipped => n.skipped += 1,
            }
        }
        n
    }

    fn attributes(&self) -> [(&'static str, String); 5] {
        [
            ("tests", self.tests.to_string()),
            ("failures", self.failures.to_string()),
            ("errors", self.errors.to_string()),
            ("skipped", self.skipped.to_string()),
            ("time", format!("{:.3}", self.seconds)),
        ]
    }
}

/// The whole document.
pub fn xml(report: &GradeReport) -> Result<String> {
    let all = cases(report);
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let total = Counts::of(&all);
    w.create_element("testsuites")
        .with_attribute(("name", "cuda-lab"))
        .with_attributes(total.attributes().iter().map(|(k, v)| (*k, v.as_str())))
        .write_inner_content(|w| {
            for e in &report.exercises {
                let suite: Vec<&Case> = all.iter().filter(|c| c.exercise == e.id).collect();
                let counts = Counts::of(suite.iter().copied());
                let properties = [
                    ("seed", report.seed.to_string()),
                    ("backend", report.environment.backend.clone()),
                    ("score", round2(e.score).to_string()),
                    ("max_score", round2(e.max_score).to_string()),
                ];
                w.create_element("testsuite")
                    .with_attribute(("name", e.id.as_str()))
                    .with_attributes(counts.attributes().iter().map(|(k, v)| (*k, v.as_str())))
                    .with_attribute(("timestamp", report.finished_at.as_str()))
                    .write_inner_content(|w| {
                        write_properties(w, &properties)?;
                        for c in &suite {
                            write_case(w, c)?;
                        }
                        Ok(())
                    })?;
            }
            Ok(())
        })?;
    let mut text = String::from_utf8(w.into_inner()).expect("written from strings");
    text.push('\n');
    Ok(text)
}

fn write_properties(w: &mut Writer<Vec<u8>>, properties: &[(&str, String)]) -> std::io::Result<()> {
    w.create_element("properties").write_inner_content(|w| {
        for (name, value) in properties {
            w.create_element("property")
                .with_attribute(("name", *name))
                .with_attribute(("value", value.as_str()))
                .write_empty()?;
        }
        Ok(())
    })?;
    Ok(())
}

fn write_case(w: &mut Writer<Vec<u8>>, c: &Case) -> std::io::Result<()> {
    let classname = format!("{}.{}", c.exercise, c.part);
    let time = format!("{:.3}", c.test.duration_ms / 1000.0);
    let mut element = w
        .create_element("testcase")
        .with_attribute(("name", c.test.name.as_str()))
        .with_attribute(("classname", classname.as_str()))
        .with_attribute(("time", time.as_str()));
    let at = c.at.as_ref().map(|at| (xml_text(&at.file), at.line.to_string()));
    if let Some((file, line)) = &at {
        element = element.with_attribute(("file", file.as_str())).with_attribute(("line", line.as_str()));
    }
    let points = [("points", round2(c.test.score).to_string()), ("max_points", round2(c.test.max_score).to_string())];
    let text = xml_text(&truncate(&c.message, MAX_TEXT_CHARS));
    let summary = xml_text(first_line(&c.message));
    element.write_inner_content(|w| {
        write_properties(w, &points)?;
        let verdict = c.test.verdict.clone().unwrap_or_else(|| c.test.status.label().to_string());
        let child = match c.outcome {
            Outcome::Passed => None,
            Outcome::Failed => Some("failure"),
            Outcome::Error => Some("error"),
            Outcome::Skipped => Some("skipped"),
        };
        if let Some(child) = child {
            let e = w.create_element(child).with_attribute(("message", summary.as_str()));
            if child == "skipped" {
                e.write_empty()?;
            } else {
                e.with_attribute(("type", xml_text(&verdict).as_str())).write_text_content(BytesText::new(&text))?;
            }
        }
        let out = format!("{} / {} points: {}", round2(c.test.score), round2(c.test.max_score), c.outcome.label());
        w.create_element("system-out").write_text_content(BytesText::new(&out))?;
        Ok(())
    })?;
    Ok(())
}

/// XML 1.0 has no place for most control characters (a student's printf can
/// put any byte in a message): each becomes U+FFFD.
fn xml_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// Writes the XML to `path` atomically.
pub fn write(report: &GradeReport, path: &Path) -> Result<()> {
    crate::atomic::write(path, xml(report)?.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_never_reach_the_xml() {
        assert_eq!(xml_text("a\u{1b}[31mb\u{0}\tc\n"), "a\u{FFFD}[31mb\u{FFFD}\tc\n");
    }
}
