//! `grader hint exNN [part]`: the next hint for the first failing check, one
//! level at a time (what the check measures, where to look, the usual bug).
//! Hints are data beside each exercise (`exercises/exNN-*/hints.toml`); the
//! level reached per check is kept in `target/grades/hints.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use kit::Exercise;
use serde::{Deserialize, Serialize};

use super::status::{last_results, LastResult};

/// One exercise's hints file.
#[derive(Debug, Deserialize)]
pub struct HintFile {
    #[serde(rename = "hint")]
    pub hints: Vec<Hint>,
}

/// The hints of one check (or of every check of a kind in a part).
#[derive(Debug, Clone, Deserialize)]
pub struct Hint {
    /// The part's name, or "*" for every part.
    pub part: String,
    /// "correct", "structure" or "perf", as in the test names.
    pub kind: String,
    /// Matches checks whose name contains this; absent: any check of the kind.
    #[serde(default)]
    pub name: Option<String>,
    pub levels: Vec<String>,
}

impl HintFile {
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        toml::from_str(&text).with_context(|| format!("{} is not a hints file", path.display()))
    }

    /// The hint for test `ex::part::kind::name`: the one naming the check wins
    /// over the one for its kind.
    pub fn find(&self, test: &str) -> Option<&Hint> {
        let mut f = test.splitn(4, "::").skip(1);
        let (part, kind, name) = (f.next()?, f.next()?, f.next().unwrap_or(""));
        let fits = |h: &&Hint| (h.part == part || h.part == "*") && h.kind == kind;
        let named = self.hints.iter().filter(fits).find(|h| h.name.as_deref().is_some_and(|n| name.contains(n)));
        named.or_else(|| self.hints.iter().filter(fits).find(|h| h.name.is_none()))
    }
}

pub fn hints_path(root: &Path, e: &Exercise) -> PathBuf {
    root.join(e.dir).join("hints.toml")
}

/// Levels shown so far, per test name.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Levels {
    shown: BTreeMap<String, usize>,
}

fn levels_path(grades: &Path) -> PathBuf {
    grades.join("hints.json")
}

/// The text `grader hint` prints, and advances the level of the check it is about.
pub fn next_hint(root: &Path, e: &Exercise, part: Option<&str>) -> Result<String> {
    let grades = crate::batch::intake::outputs_root(root).join("target").join("grades");
    let results = last_results(&grades);
    let mut candidates: Vec<&LastResult> = e
        .parts
        .iter()
        .filter(|p| part.is_none_or(|want| p.name == want))
        .filter_map(|p| results.get(&(e.id.to_string(), p.name.to_string())))
        .collect();
    if let Some(want) = part {
        anyhow::ensure!(e.parts.iter().any(|p| p.name == want), "{} has no part `{want}`", e.id);
    }
    if candidates.is_empty() {
        return Ok(format!("No result for {} yet: run `{} {}` first, then ask again.\n", e.id, super::COMMAND, e.id));
    }
    candidates.retain(|r| r.first_failure().is_some() || r.part.compile.status == crate::report::CompileStatus::Error);
    let Some(failing) = candidates.first() else {
        return Ok(format!("Nothing fails in {} at the last run: no hint needed.\n", e.id));
    };
    if failing.part.compile.missing {
        // No hint about a kernel that is not there: where the file should be.
        return Ok(format!(
            "{} {}: {}\n",
            e.id,
            failing.part.name,
            failing.part.compile.message.as_deref().unwrap_or("no file for this part")
        ));
    }
    let Some(test) = failing.first_failure() else {
        return Ok(format!(
            "{} {} did not compile: the compiler's message points at the line.\n{}\n",
            e.id,
            failing.part.name,
            failing.part.compile.message.as_deref().unwrap_or("")
        ));
    };
    let file = HintFile::read(&hints_path(root, e))?;
    let Some(hint) = file.find(&test.name) else {
        return Ok(format!(
            "No hint is written for {} yet. Its message:\n{}\n",
            test.name,
            test.message.as_deref().unwrap_or("")
        ));
    };
    let mut levels: Levels =
        std::fs::read(levels_path(&grades)).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    // Levels belong to the hint (one per check, or per kind of check in a part),
    // so a failure that moves to another size keeps its level.
    let mut key = test.name.splitn(4, "::").take(3).collect::<Vec<_>>().join("::");
    if let Some(name) = &hint.name {
        key += &format!("::{name}");
    }
    let shown = levels.shown.entry(key).or_insert(0);
    let level = (*shown).min(hint.levels.len().saturating_sub(1));
    *shown = (level + 1).min(hint.levels.len());
    crate::atomic::write_json(&levels_path(&grades), &levels)?;
    let more = if level + 1 < hint.levels.len() {
        format!("(`{} hint {}` again for hint {} of {})", super::COMMAND, e.id, level + 2, hint.levels.len())
    } else {
        "(that was the last hint for this check)".to_string()
    };
    Ok(format!(
        "Hint {} of {} for {}:\n\n{}\n\n{more}\n",
        level + 1,
        hint.levels.len(),
        test.name,
        textwrap(hint.levels[level].trim(), 88)
    ))
}

/// Wraps at spaces so a hint reads well in any terminal.
pub fn textwrap(s: &str, width: usize) -> String {
    let mut out = String::new();
    for para in s.split("\n\n") {
        let mut line = 0;
        for word in para.split_whitespace() {
            if line > 0 && line + word.len() + 1 > width {
                out.push('\n');
                line = 0;
            } else if line > 0 {
                out.push(' ');
                line += 1;
            }
            out.push_str(word);
            line += word.len();
        }
        out.push_str("\n\n");
    }
    out.trim_end().to_string()
}
