//! JUnit XML, which CodeGrade's unit-test step, GitLab and Jenkins (its
//! `junit` step and the xUnit plugin) read, valid against the xUnit plugin's
//! `junit-10.xsd` ([`schema`] holds the part of it these files use):
//! `<testsuites>` (counts of tests, failures and errors, time) holding one
//! `<testsuite>` per exercise (the same counts, skipped and a timestamp),
//! each holding its `<properties>` and one `<testcase>` per check (`name`,
//! `classname` = exercise.part, `time`) with a `<skipped>`, `<error>` or
//! `<failure>` child unless it passed, then its `<system-out>`. The schema
//! allows no properties and no `file`/`line` on a testcase: a check's points
//! are properties of its suite (`points <test name>` = `1.20 / 1.20`) and the
//! first line of its `<system-out>`, the student's line is in its message.

use std::path::Path;

use anyhow::Result;
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use super::{first_line, truncate, Grade, Outcome, Test};

pub mod schema;

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
    fn of<'a, 'r: 'a>(tests: impl IntoIterator<Item = &'a Test<'r>>) -> Counts {
        let mut n = Counts::default();
        for t in tests {
            n.tests += 1;
            n.seconds += t.report.duration_ms / 1000.0;
            match child(t) {
                None => {}
                Some("failure") => n.failures += 1,
                Some("error") => n.errors += 1,
                Some(_) => n.skipped += 1,
            }
        }
        n
    }

    fn attributes(&self) -> Vec<(&'static str, String)> {
        vec![
            ("tests", self.tests.to_string()),
            ("failures", self.failures.to_string()),
            ("errors", self.errors.to_string()),
            ("time", format!("{:.3}", self.seconds)),
        ]
    }
}

/// The child a testcase gets: `failure` (it failed or did not compile),
/// `error` (in the maximum but not run), `skipped` (not graded here).
pub fn child(t: &Test) -> Option<&'static str> {
    match t.outcome {
        Outcome::Passed => None,
        Outcome::Failed => Some("failure"),
        Outcome::NotRun => Some("error"),
        Outcome::NotGradedHere => Some("skipped"),
    }
}

/// The whole document.
pub fn xml(grade: &Grade) -> Result<String> {
    let report = grade.report;
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let total = Counts::of(grade.tests());
    w.create_element("testsuites")
        .with_attribute(("name", "cuda-lab"))
        .with_attributes(total.attributes().iter().map(|(k, v)| (*k, v.as_str())))
        .write_inner_content(|w| {
            for e in &grade.exercises {
                let counts = Counts::of(&e.tests);
                let mut properties = vec![
                    ("seed".to_string(), report.seed.to_string()),
                    ("backend".to_string(), report.environment.backend.clone()),
                    ("maximum".to_string(), grade.maximum.name().to_string()),
                    ("score".to_string(), e.points.to_string()),
                    ("max_score".to_string(), e.max.to_string()),
                ];
                properties.extend(e.tests.iter().map(|t| (format!("points {}", t.name()), points(t))));
                let skipped = counts.skipped.to_string();
                w.create_element("testsuite")
                    .with_attribute(("name", e.id))
                    .with_attributes(counts.attributes().iter().map(|(k, v)| (*k, v.as_str())))
                    .with_attribute(("skipped", skipped.as_str()))
                    .with_attribute(("timestamp", report.finished_at.as_str()))
                    .write_inner_content(|w| {
                        write_properties(w, &properties)?;
                        for t in &e.tests {
                            write_case(w, t)?;
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

/// `1.20 / 1.20`.
pub fn points(t: &Test) -> String {
    format!("{} / {}", t.points, t.max)
}

fn write_properties(w: &mut Writer<Vec<u8>>, properties: &[(String, String)]) -> std::io::Result<()> {
    w.create_element("properties").write_inner_content(|w| {
        for (name, value) in properties {
            w.create_element("property")
                .with_attribute(("name", xml_text(name).as_str()))
                .with_attribute(("value", xml_text(value).as_str()))
                .write_empty()?;
        }
        Ok(())
    })?;
    Ok(())
}

fn write_case(w: &mut Writer<Vec<u8>>, t: &Test) -> std::io::Result<()> {
    let classname = format!("{}.{}", t.exercise, t.part);
    let time = format!("{:.3}", t.report.duration_ms / 1000.0);
    let name = xml_text(t.name());
    let element = w
        .create_element("testcase")
        .with_attribute(("name", name.as_str()))
        .with_attribute(("classname", classname.as_str()))
        .with_attribute(("time", time.as_str()));
    let at = t.at.as_ref().map(|at| format!(" (at {at})")).unwrap_or_default();
    let text = xml_text(&truncate(&t.message, MAX_TEXT_CHARS));
    let summary = xml_text(&format!("{}{at}", first_line(&t.message)));
    element.write_inner_content(|w| {
        if let Some(child) = child(t) {
            let e = w.create_element(child).with_attribute(("message", summary.as_str()));
            if child == "skipped" {
                e.write_empty()?;
            } else {
                e.with_attribute(("type", xml_text(&t.verdict()).as_str()))
                    .write_text_content(BytesText::new(&text))?;
            }
        }
        let out = xml_text(&format!("points {}: {}{at}", points(t), t.outcome.label()));
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
pub fn write(grade: &Grade, path: &Path) -> Result<()> {
    crate::atomic::write(path, xml(grade)?.as_bytes())?;
    super::prairielearn::readable(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_never_reach_the_xml() {
        assert_eq!(xml_text("a\u{1b}[31mb\u{0}\tc\n"), "a\u{FFFD}[31mb\u{FFFD}\tc\n");
    }
}
