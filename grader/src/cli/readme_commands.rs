//! Every `cargo run -p grader -- …` command the READMEs show a student parses
//! and names real exercises and parts, as the grader would read it before
//! doing anything (ex10's README once said `ex10 private`, which fails with
//! "no exercise called `private`").

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Parser as _;
use grader::registry;

use super::grade::selected;
use crate::{Cli, Command};

const PREFIX: &str = "cargo run -p grader --";

/// The commands in `text`: in a code block up to a `#` comment or the end
/// of the line, inline up to the closing backtick (across a line break).
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices(PREFIX) {
        let inline = text[..at].ends_with('`') && !text[..at].ends_with("```");
        let rest = &text[at + PREFIX.len()..];
        let end = if inline { rest.find('`') } else { rest.find(['#', '\n']) }.unwrap_or(rest.len());
        out.push(rest[..end].split_whitespace().collect::<Vec<_>>().join(" "));
    }
    out
}

/// Words as a shell splits them (double and single quotes).
fn words(command: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in command.chars() {
        match (quote, c) {
            (None, '"' | '\'') => (quote, any) = (Some(c), true),
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (_, c) => (word, any) = (word + &c.to_string(), true),
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// Parses `args` as the grader does, and checks what it names.
fn check(args: &[String]) -> Result<()> {
    let cli = Cli::try_parse_from(std::iter::once("grader".to_string()).chain(args.iter().cloned()))?;
    match &cli.command {
        None if cli.grade.exercises.is_empty() => Ok(()),
        None => selected(&cli.grade).map(|_| ()),
        Some(Command::Hint(super::hint::Args { exercise, part, .. })) => {
            let mut ex = registry::select(std::slice::from_ref(exercise))?;
            match part {
                Some(p) => registry::keep_part(&mut ex, p),
                None => Ok(()),
            }
        }
        Some(Command::Watch(super::watch::Args { exercise: Some(e), .. })) => {
            registry::select(std::slice::from_ref(e)).map(|_| ())
        }
        Some(_) => Ok(()),
    }
}

fn readmes() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("exercises")).unwrap().flatten() {
        if e.path().join("README.md").is_file() {
            files.push(e.path().join("README.md"));
        }
    }
    files.sort();
    files
}

#[test]
fn every_readme_command_parses_and_names_real_exercises() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for readme in readmes() {
        let text = std::fs::read_to_string(&readme).unwrap();
        for command in commands(&text) {
            // The generic forms (`cargo run -p grader -- …`) stand for any command.
            if command.is_empty() || command.contains('…') || command.contains("...") {
                continue;
            }
            // Placeholders: an optional `[part]` is left out, `<slug>` filled in.
            let concrete = command.replace(" [part]", "").replace("<slug>", "slug");
            if let Err(e) = check(&words(&concrete)) {
                let e = e.to_string();
                wrong.push(format!("{}: `{PREFIX} {command}`: {}", readme.display(), e.lines().next().unwrap_or("")));
            }
            checked += 1;
        }
    }
    assert!(wrong.is_empty(), "README commands that fail:\n{}", wrong.join("\n"));
    assert!(checked >= 40, "only {checked} commands found: is the prefix still `{PREFIX}`?");
}

#[test]
fn the_checker_rejects_what_the_grader_rejects() {
    let bad = |c: &str| check(&words(c)).is_err();
    assert!(bad("ex10 private"), "no exercise called `private`");
    assert!(bad("ex10 --part nope"));
    assert!(bad("hint ex99"));
    assert!(bad("ex01 --sede 4"));
    assert!(!bad("ex10 -- private"));
    assert!(!bad("ex03 -- \"rect::correct::m=17\""));
    assert!(!bad("hint ex03 tiled"));
    assert_eq!(words("ex03 -- \"rect::correct::m=17\""), ["ex03", "--", "rect::correct::m=17"]);
    assert_eq!(
        commands(
            "`cargo run -p grader -- new exercise\n  ex10-<slug>` writes\n```\ncargo run -p grader -- ex01   # x\n"
        ),
        ["new exercise ex10-<slug>", "ex01"]
    );
}
