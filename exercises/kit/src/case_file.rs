//! A kernel of a graded corpus case (grader/tests/variants, cheats, hostile)
//! as a submission holds it. Most cases are a kernel kept elsewhere with one
//! thing changed (the reference with a barrier missing, a calibration kernel
//! that unrolls differently), so a case keeps its kernel whole (`FILE.cu`)
//! or as that change: `FILE.cu.diff`, a unified diff whose `---` line names
//! the kernel it was written from, from the repository's root. A fix to that
//! kernel then reaches the case; an edit that no longer applies fails,
//! naming both files. `scripts/case-as-edit.py` writes such diffs, and
//! `grader/tests/corpus/corpus.py` applies them the same way on a GPU machine.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// What a case file kept as an edit adds to the kernel's name.
pub const EDIT: &str = ".diff";

/// The name a case file has in a submission: `FILE.cu` for `FILE.cu.diff`.
pub fn submitted_name(rel: &str) -> &str {
    rel.strip_suffix(EDIT).unwrap_or(rel)
}

/// Case file `path` as the corpus keeps it: `path` itself, or its edit
/// (`path` + [`EDIT`]) where only that is there.
pub fn kept(path: &Path) -> PathBuf {
    let edit = PathBuf::from(format!("{}{EDIT}", path.display()));
    if !path.exists() && edit.exists() {
        edit
    } else {
        path.to_path_buf()
    }
}

/// Whether case file `file` is kept as an edit (`FILE.cu.diff`).
pub fn is_edit(file: &Path) -> bool {
    file.to_string_lossy().ends_with(EDIT)
}

/// The text of case file `file` as the submission gets it: the file itself,
/// or for an edit the kernel it makes of the file its `---` line names
/// (below `root`, the repository).
pub fn text(root: &Path, file: &Path) -> Result<String> {
    let raw = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    if !is_edit(file) {
        return Ok(raw);
    }
    apply(root, &raw).with_context(|| format!("{}", file.display()))
}

/// Writes case file `file` to `dest` as the submission gets it ([`text`]).
pub fn write(root: &Path, file: &Path, dest: &Path) -> Result<()> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    if !is_edit(file) {
        // Byte for byte: a hostile case's file need not be text.
        return std::fs::copy(file, dest).map(drop).with_context(|| format!("copying {}", file.display()));
    }
    std::fs::write(dest, text(root, file)?).with_context(|| format!("writing {}", dest.display()))
}

/// The kernel `diff` makes of the file it names. Strict, as corpus.py is:
/// every hunk must apply at the lines it states, with its context and
/// removed lines as they are there.
pub fn apply(root: &Path, diff: &str) -> Result<String> {
    let patch = diffy::Patch::from_str(diff).context("not a unified diff")?;
    // The kernel the edit was written from: its `---` line, below `root`.
    let Some(base) = patch.original() else { bail!("the edit names no kernel (`--- PATH` line)") };
    let base_path = root.join(base.trim());
    let base = std::fs::read_to_string(&base_path)
        .with_context(|| format!("reading {}, the kernel the edit was written from", base_path.display()))?;
    let lines: Vec<&str> = base.split_inclusive('\n').collect();
    let (mut out, mut at) = (String::with_capacity(base.len() + diff.len()), 0usize);
    for hunk in patch.hunks() {
        let old = hunk.old_range();
        let start = if old.is_empty() { old.start() } else { old.start().saturating_sub(1) };
        if start < at || start > lines.len() {
            bail!("a hunk at line {} of {} is out of order or past its end", old.start(), base_path.display());
        }
        out.extend(lines[at..start].iter().copied());
        at = start;
        for line in hunk.lines() {
            match line {
                diffy::Line::Context(l) | diffy::Line::Delete(l) => {
                    if lines.get(at) != Some(l) {
                        bail!(
                            "{} line {} is no longer `{}` as the edit expects: the kernel changed since the case was \
                             written; write the case's kernel again and run scripts/case-as-edit.py on it",
                            base_path.display(),
                            at + 1,
                            l.trim_end()
                        );
                    }
                    if matches!(line, diffy::Line::Context(_)) {
                        out.push_str(l);
                    }
                    at += 1;
                }
                diffy::Line::Insert(l) => out.push_str(l),
            }
        }
    }
    out.extend(lines[at..].iter().copied());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("reference")).unwrap();
        std::fs::write(dir.path().join("reference/k.cu"), "a\nb\nc\nd\ne\n").unwrap();
        dir
    }

    const EDIT_C: &str = "--- reference/k.cu\n+++ case/k.cu\n@@ -2,3 +2,4 @@\n b\n-c\n+C\n+C2\n d\n";

    #[test]
    fn an_edit_makes_its_kernel_of_the_file_it_names() {
        let dir = tree();
        assert_eq!(apply(dir.path(), EDIT_C).unwrap(), "a\nb\nC\nC2\nd\ne\n");
        let file = dir.path().join("k.cu.diff");
        std::fs::write(&file, EDIT_C).unwrap();
        assert_eq!(text(dir.path(), &file).unwrap(), "a\nb\nC\nC2\nd\ne\n");
        assert_eq!(submitted_name("ex/kernels/k.cu.diff"), "ex/kernels/k.cu");
        let insert_at_top = "--- reference/k.cu\n+++ case/k.cu\n@@ -0,0 +1 @@\n+// top\n";
        assert_eq!(apply(dir.path(), insert_at_top).unwrap(), "// top\na\nb\nc\nd\ne\n");
    }

    #[test]
    fn an_edit_of_a_changed_kernel_fails_naming_the_line() {
        let dir = tree();
        std::fs::write(dir.path().join("reference/k.cu"), "a\nb\nX\nd\ne\n").unwrap();
        let e = format!("{:#}", apply(dir.path(), EDIT_C).unwrap_err());
        assert!(e.contains("k.cu line 3 is no longer `c`") && e.contains("case-as-edit.py"), "{e}");
        // Shifted is changed too: the hunk must apply where it says.
        std::fs::write(dir.path().join("reference/k.cu"), "z\na\nb\nc\nd\ne\n").unwrap();
        assert!(apply(dir.path(), EDIT_C).is_err());
        let plain = dir.path().join("k.cu");
        std::fs::write(&plain, "whole\n").unwrap();
        assert_eq!(text(dir.path(), &plain).unwrap(), "whole\n", "a file kept whole is itself");
        assert_eq!(kept(&plain), plain, "whole where the file is there");
        std::fs::write(dir.path().join("e.cu.diff"), EDIT_C).unwrap();
        assert_eq!(kept(&dir.path().join("e.cu")), dir.path().join("e.cu.diff"), "the edit where only it is there");
    }
}
