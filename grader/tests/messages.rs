//! The words of the messages students and TAs read. Needs no compiler.
//!
//! Plurals: every message template (the string literals of the grader, the
//! kit, the exercises, ptx-build and ptx-sim) and every text a student reads
//! (READMEs, hints, docs) is read for a count that can be 1 in front of a
//! plural noun: "1 points" written out, or `{n} points` with nothing that
//! makes it "1 point" (`grader::words::count`, `words::points`).

use crate::support;

use std::path::{Path, PathBuf};

/// Nouns the grader counts, singular and plural.
const NOUNS: &[(&str, &str)] = &[
    ("point", "points"),
    ("copy", "copies"),
    ("check", "checks"),
    ("test", "tests"),
    ("part", "parts"),
    ("file", "files"),
    ("case", "cases"),
    ("student", "students"),
    ("submission", "submissions"),
    ("kernel", "kernels"),
    ("launch", "launches"),
    ("error", "errors"),
    ("failure", "failures"),
    ("gradebook", "gradebooks"),
    ("seed", "seeds"),
    ("worker", "workers"),
    ("grading", "gradings"),
];

/// Templates whose count is never 1, or that are not this change's to fix,
/// each with why: `(file, the text after the placeholder)`.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "grader/src/lms/mod.rs",
        "students)",
        "the LMS export's own line, in the platform formats' files (another change of issue 41 owns them)",
    ),
    ("grader/src/words.rs", "points\")", "the helper itself: it says \"point\" for one"),
];

fn files(dirs: &[&str], ext: &[&str]) -> Vec<PathBuf> {
    let root = support::workspace();
    let mut out = Vec::new();
    for dir in dirs {
        for e in walkdir::WalkDir::new(root.join(dir)).into_iter().flatten() {
            let p = e.path();
            let path_text = p.to_string_lossy();
            if path_text.contains("/target/") || path_text.contains("/tests/") {
                continue;
            }
            if p.is_file() && p.extension().is_some_and(|x| ext.iter().any(|e| x == *e)) {
                out.push(p.to_path_buf());
            }
        }
    }
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(support::workspace()).unwrap_or(p).display().to_string()
}

/// "1 points" written out: a `1` that is a whole number, then a plural noun.
fn one_with_plural(line: &str) -> Option<String> {
    let b = line.as_bytes();
    for (i, _) in line.match_indices("1 ") {
        let before = if i == 0 { b' ' } else { b[i - 1] };
        if before.is_ascii_alphanumeric() || matches!(before, b'.' | b',' | b'_' | b'-' | b'/' | b'x' | b'^') {
            continue;
        }
        let rest = &line[i + 2..];
        for (_, plural) in NOUNS {
            let after = rest.as_bytes().get(plural.len()).copied().unwrap_or(b' ');
            if rest.starts_with(plural) && !after.is_ascii_alphanumeric() && after != b'\'' {
                return Some(format!("1 {plural}"));
            }
        }
    }
    None
}

/// `{n} points` in a template: a placeholder, then a plural noun, with no
/// "of" or "/" before it (`{} of {} cases` counts the total), no rate after
/// it (`{:.1} parts per minute`), and not a constant (`{PERF_POINTS}`).
fn placeholder_with_plural(line: &str) -> Option<String> {
    let mut from = 0;
    while let Some(open) = line[from..].find('{').map(|o| o + from) {
        let Some(close) = line[open..].find('}').map(|c| c + open) else { break };
        from = close + 1;
        let inside = &line[open + 1..close];
        if inside.contains('{') || inside.starts_with(|c: char| c.is_ascii_uppercase()) || inside.contains('"') {
            continue;
        }
        let before = line[..open].trim_end();
        if before.ends_with(" of") || before.ends_with('/') || before.ends_with("of") {
            continue;
        }
        let rest = &line[close + 1..];
        let Some(rest) = rest.strip_prefix(' ') else { continue };
        for (_, plural) in NOUNS {
            let after = rest.as_bytes().get(plural.len()).copied().unwrap_or(b' ');
            if rest.starts_with(plural) && !after.is_ascii_alphanumeric() && after != b'\'' {
                if rest[plural.len()..].trim_start().starts_with("per ") {
                    continue;
                }
                return Some(format!("{{{inside}}} {plural}"));
            }
        }
    }
    None
}

#[test]
fn no_message_says_one_points() {
    let mut found = Vec::new();
    let sources = files(&["grader/src", "exercises", "ptx-build/src", "ptx-sim/src"], &["rs"]);
    let texts = files(&["exercises", "docs"], &["md", "toml"]);
    for path in sources.iter().chain(&texts).chain([&support::workspace().join("README.md")]) {
        let text = std::fs::read_to_string(path).unwrap();
        let is_rust = path.extension().is_some_and(|x| x == "rs");
        for (n, line) in text.lines().enumerate() {
            if is_rust && line.trim_start().starts_with("//") {
                continue;
            }
            if let Some(what) = one_with_plural(line) {
                found.push(format!("{}:{}: \"{what}\": {}", rel(path), n + 1, line.trim()));
            }
            if !is_rust {
                continue;
            }
            if let Some(what) = placeholder_with_plural(line) {
                let allowed = ALLOWED.iter().any(|(file, tail, _)| rel(path) == *file && line.contains(tail));
                if !allowed {
                    found.push(format!(
                        "{}:{}: `{what}` reads \"1 …s\" when the count is 1 (grader::words::count): {}",
                        rel(path),
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(found.is_empty(), "plural mistakes:\n{}", found.join("\n"));
}

#[test]
fn the_scanner_finds_what_it_looks_for() {
    assert_eq!(one_with_plural("then 1 points need a GPU").as_deref(), Some("1 points"));
    assert_eq!(one_with_plural("after counting 1 copies of one byte").as_deref(), Some("1 copies"));
    assert_eq!(one_with_plural("1 point needs a GPU"), None);
    assert_eq!(one_with_plural("0.1 points, 11 points, 21 tests, ex01 parts"), None);
    assert_eq!(placeholder_with_plural(r#"format!("{} points need a GPU", x)"#).as_deref(), Some("{} points"));
    assert_eq!(placeholder_with_plural(r#"format!("{n} copies")"#).as_deref(), Some("{n} copies"));
    assert_eq!(placeholder_with_plural(r#"format!("{} of {} cases ran")"#), None);
    assert_eq!(placeholder_with_plural(r#"format!("{} / {} points")"#), None);
    assert_eq!(placeholder_with_plural(r#"format!("{:.1} parts per minute")"#), None);
    assert_eq!(placeholder_with_plural(r#"format!("for {PERF_POINTS} points")"#), None);
    assert_eq!(placeholder_with_plural(r#"format!("{} tests' profiles")"#), None, "a possessive is not a count");
}
