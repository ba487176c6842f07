//! What every exercise folder must hold, checked against the registry: an
//! `exercises/ex*` folder the grader does not link is never graded, and one
//! without its README, hints, calibration notes, reference or slow variant
//! cannot be taught, hinted or calibrated; and the README's table of exercises
//! must name each one's real parts (the generated row names the template's
//! part, which the teacher then replaces). A test runs [`problems`] on the
//! workspace (below), so a missing piece fails `cargo test`.

use std::path::Path;

use kit::{CheckKind, Exercise};

use crate::student::hint::HintFile;

/// Files every exercise folder has, relative to it.
pub const REQUIRED_FILES: &[&str] = &["Cargo.toml", "README.md", "CALIBRATION.md", "hints.toml", "src/lib.rs"];
/// Folders every exercise folder has, each with at least one file: the
/// style and wrong-technique variants its measured checks are tested on.
pub const REQUIRED_FOLDERS: &[&str] = &["calibration"];

/// Everything missing, one line each; empty when every exercise is complete.
pub fn problems(root: &Path, registered: &[Exercise]) -> Vec<String> {
    let mut found = Vec::new();
    let folders = exercise_folders(root);
    for folder in &folders {
        if !registered.iter().any(|e| e.folder_name() == folder) {
            found.push(format!(
                "exercises/{folder} is not registered: add `{folder} = {{ path = \"../exercises/{folder}\" }}` to the \
                 [dependencies] of grader/Cargo.toml (`grader new exercise` writes it), then rebuild"
            ));
        }
    }
    for e in registered {
        let dir = root.join(e.dir);
        let folder = e.folder_name();
        if e.dir != format!("exercises/{folder}") || !folders.iter().any(|f| f == folder) {
            found.push(format!("{}: its folder `{}` is not exercises/{} in this workspace", e.id, e.dir, folder));
            continue;
        }
        if !folder.starts_with(&format!("{}-", e.id)) || !folder.ends_with(&format!("-{}", e.slug)) {
            found.push(format!("{}: the folder `{folder}` should be `{}-{}` (id, then slug)", e.id, e.id, e.slug));
        }
        for file in REQUIRED_FILES {
            if !dir.join(file).is_file() {
                found.push(format!("{}: exercises/{folder}/{file} is missing", e.id));
            }
        }
        for sub in REQUIRED_FOLDERS {
            if !has_a_file(&dir.join(sub)) {
                found.push(format!("{}: exercises/{folder}/{sub}/ is missing or empty", e.id));
            }
        }
        if !has_a_file(&root.join("reference/slow").join(folder)) {
            found.push(format!(
                "{}: reference/slow/{folder}/ is missing or empty (the slow variant a timed check is calibrated with)",
                e.id
            ));
        }
        for part in &e.parts {
            for (what, path) in
                [("stub", dir.join(part.file)), ("reference", root.join("reference").join(folder).join(part.file))]
            {
                if !path.is_file() {
                    found.push(format!("{}::{}: the {what} {} is missing", e.id, part.name, rel(root, &path)));
                }
            }
        }
        found.extend(hint_problems(&dir.join("hints.toml"), e));
    }
    found.extend(readme_problems(&root.join("README.md"), registered));
    found
}

/// The row of the README's table of exercises for `e`: `| exNN | title | `a`, `b` |`,
/// its parts in the order `grader list` shows them.
pub fn readme_row(e: &Exercise, title: &str) -> String {
    format!("| {} | {} | {} |", e.id, title.replace('|', "\\|"), readme_parts(e.parts.iter().map(|p| p.name)))
}

/// The parts column: each part in backticks, comma-separated.
pub fn readme_parts<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    parts.into_iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
}

/// A row of the README's table of exercises (`| exNN | ... |`): its id, title
/// and parts cells, or `None` for any other line.
pub fn readme_table_row(line: &str) -> Option<(&str, &str, &str)> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let (id, rest) = inner.split_once('|')?;
    let id = id.trim();
    let digits = id.strip_prefix("ex")?;
    if digits.len() != 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (title, parts) = rest.rsplit_once('|')?;
    Some((id, title.trim(), parts.trim()))
}

/// Every registered exercise has one row in the README's table, naming its real
/// parts. Without a README (a scratch copy) there is nothing to check.
fn readme_problems(path: &Path, registered: &[Exercise]) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let rows: Vec<(&str, &str, &str)> = text.lines().filter_map(readme_table_row).collect();
    let mut found = Vec::new();
    for e in registered {
        let want = readme_parts(e.parts.iter().map(|p| p.name));
        let mine: Vec<_> = rows.iter().filter(|(id, _, _)| *id == e.id).collect();
        match mine.as_slice() {
            [] => found.push(format!(
                "{}: README.md's table of exercises has no row for it: add `{}`",
                e.id,
                readme_row(e, e.title)
            )),
            [(_, title, parts)] if *parts != want => found.push(format!(
                "{}: README.md's row names the parts {parts}, but its parts are {want}: write `{}`",
                e.id,
                readme_row(e, title)
            )),
            [_] => {}
            _ => found.push(format!("{}: README.md's table of exercises has {} rows for it", e.id, mine.len())),
        }
    }
    found
}

/// Every (part, kind) with checks has a hint.
fn hint_problems(path: &Path, e: &Exercise) -> Vec<String> {
    if !path.is_file() {
        return Vec::new(); // said above
    }
    let hints = match HintFile::read(path) {
        Ok(h) => h,
        Err(err) => return vec![format!("{}: {err:#}", e.id)],
    };
    let mut found = Vec::new();
    for part in &e.parts {
        for kind in [CheckKind::Correctness, CheckKind::Structure, CheckKind::Performance] {
            let Some(check) = part.checks.iter().find(|c| c.kind == kind) else { continue };
            if hints.find(&e.test_name(part, check)).is_none() {
                found.push(format!(
                    "{}: hints.toml has no hint for part `{}`, kind `{}` (`grader hint` would have nothing to say)",
                    e.id,
                    part.name,
                    kind.label()
                ));
            }
        }
    }
    found
}

/// The `ex*` folders under exercises/, sorted.
pub fn exercise_folders(root: &Path) -> Vec<String> {
    let mut folders: Vec<String> = std::fs::read_dir(root.join("exercises"))
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| name.starts_with("ex") && name[2..].starts_with(|c: char| c.is_ascii_digit()))
                .collect()
        })
        .unwrap_or_default();
    folders.sort();
    folders
}

fn has_a_file(dir: &Path) -> bool {
    walkdir::WalkDir::new(dir).into_iter().filter_map(|e| e.ok()).any(|e| e.file_type().is_file())
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn every_exercise_folder_is_registered_and_complete() {
        let problems = problems(&workspace(), &crate::registry::all());
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        assert_eq!(exercise_folders(&workspace()).len(), crate::registry::all().len());
        let folders: Vec<&str> = crate::registry::all().iter().map(|e| e.folder_name()).collect();
        assert_eq!(folders, crate::registry::FOLDERS, "build.rs lists the folders it links");
    }

    /// A copy of what the completeness check reads of one exercise (its
    /// folder, reference, slow variant), in a scratch workspace.
    fn scratch(folder: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for sub in [format!("exercises/{folder}"), format!("reference/{folder}"), format!("reference/slow/{folder}")] {
            for entry in walkdir::WalkDir::new(workspace().join(&sub)).into_iter().map(|e| e.unwrap()) {
                let to = tmp.path().join(entry.path().strip_prefix(workspace()).unwrap());
                if entry.file_type().is_dir() {
                    std::fs::create_dir_all(&to).unwrap();
                } else {
                    std::fs::copy(entry.path(), &to).unwrap();
                }
            }
        }
        tmp
    }

    #[test]
    fn a_missing_file_or_an_unregistered_folder_is_named() {
        let ex05 = crate::registry::select(&["ex05".into()]).unwrap();
        let tmp = scratch("ex05-stencil");
        assert_eq!(problems(tmp.path(), &ex05), Vec::<String>::new());
        for (file, says) in [
            ("exercises/ex05-stencil/hints.toml", "exercises/ex05-stencil/hints.toml is missing"),
            ("exercises/ex05-stencil/CALIBRATION.md", "CALIBRATION.md is missing"),
            ("exercises/ex05-stencil/kernels/stencil.cu", "the stub exercises/ex05-stencil/kernels/stencil.cu"),
            ("reference/ex05-stencil/kernels/stencil.cu", "the reference reference/ex05-stencil/kernels/stencil.cu"),
            ("reference/slow/ex05-stencil/kernels/stencil.cu", "reference/slow/ex05-stencil/ is missing or empty"),
        ] {
            let tmp = scratch("ex05-stencil");
            std::fs::remove_file(tmp.path().join(file)).unwrap();
            let found = problems(tmp.path(), &ex05);
            assert!(found.len() == 1 && found[0].contains(says), "{file}: {found:?}");
        }
        // A hint file that forgets a kind of check.
        let tmp = scratch("ex05-stencil");
        let hints = tmp.path().join("exercises/ex05-stencil/hints.toml");
        let text = std::fs::read_to_string(&hints).unwrap().replace("kind = \"perf\"", "kind = \"structure\"");
        std::fs::write(&hints, text).unwrap();
        let found = problems(tmp.path(), &ex05);
        assert!(found.len() == 1 && found[0].contains("no hint for part `stencil`, kind `perf`"), "{found:?}");
        // A folder the grader does not link.
        let tmp = scratch("ex05-stencil");
        std::fs::create_dir_all(tmp.path().join("exercises/ex10-new/src")).unwrap();
        let found = problems(tmp.path(), &ex05);
        assert!(found.len() == 1 && found[0].contains("exercises/ex10-new is not registered"), "{found:?}");
        // kit is not an exercise.
        std::fs::create_dir_all(tmp.path().join("exercises/kit")).unwrap();
        assert_eq!(exercise_folders(tmp.path()), ["ex05-stencil", "ex10-new"]);
    }

    #[test]
    fn the_readme_row_must_name_the_real_parts() {
        let ex03 = crate::registry::select(&["ex03".into()]).unwrap();
        let tmp = scratch("ex03-matmul");
        let readme = tmp.path().join("README.md");
        let table = "| id | exercise | parts |\n| --- | --- | --- |\n";
        let problems_with = |row: &str| {
            std::fs::write(&readme, format!("Intro.\n\n{table}| ex01 | pi | `global` |\n{row}\nMore.\n")).unwrap();
            problems(tmp.path(), &ex03)
        };
        assert_eq!(problems_with("| ex03 | matrix product | `naive`, `tiled`, `rect` |"), Vec::<String>::new());
        // The generator's row, the template's part left in it.
        let found = problems_with("| ex03 | matrix product | `matmul` |");
        assert!(
            found.len() == 1
                && found[0].contains("names the parts `matmul`")
                && found[0].contains("write `| ex03 | matrix product | `naive`, `tiled`, `rect` |`"),
            "{found:?}"
        );
        let found = problems_with("| ex03 | matrix product | `naive`, `rect`, `tiled` |");
        assert!(found.len() == 1 && found[0].contains("its parts are `naive`, `tiled`, `rect`"), "in order: {found:?}");
        let found = problems_with("");
        assert!(found.len() == 1 && found[0].contains("has no row for it"), "{found:?}");
        let found = problems_with("| ex03 | a | `naive`, `tiled`, `rect` |\n| ex03 | b | `naive`, `tiled`, `rect` |");
        assert!(found.len() == 1 && found[0].contains("2 rows"), "{found:?}");
        // A title with a `|` in it is one cell.
        let row = readme_row(&ex03[0], "a | b");
        assert_eq!(readme_table_row(&row), Some(("ex03", "a \\| b", "`naive`, `tiled`, `rect`")));
        assert_eq!(readme_table_row("| id | exercise | parts |"), None);
        assert_eq!(readme_table_row("| ex1 | x | y |"), None);
    }
}
