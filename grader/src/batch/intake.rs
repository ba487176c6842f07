//! Takes from a submission only the `.cu` files the exercises define, and
//! copies them into a private staging root that is graded instead. Nothing else
//! of the submission (Rust code, Cargo files, thresholds, scripts) reaches the
//! grader, and no symbolic link is ever followed.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Component, Path};

use anyhow::{Context, Result};
use kit::Exercise;
use serde::{Deserialize, Serialize};

/// A source file larger than this is not taken (the exercises' files are a few KiB).
pub const MAX_SOURCE_BYTES: u64 = 1 << 20;

/// What was taken from one submission, and why the rest was not.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Intake {
    /// "repository" (the files at `exercises/<folder>/<file>`) or "flat" (the
    /// `.cu` files uploaded side by side, matched by file name).
    pub layout: String,
    /// Paths as graded, e.g. "exercises/ex01-pi/kernels/pi_global.cu".
    pub taken: Vec<String>,
    pub refused: Vec<Refused>,
    pub missing: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Refused {
    pub file: String,
    pub reason: String,
}

/// `exercises/<folder>/<file>` of every part of `exercises`.
pub fn expected_files(exercises: &[Exercise]) -> Vec<String> {
    exercises.iter().flat_map(|e| e.parts.iter().map(|p| format!("exercises/{}/{}", e.folder_name(), p.file))).collect()
}

/// Copies the expected files of `submission` into `staging` (emptied first), so
/// that `staging` can be graded as a `--root`.
pub fn stage(submission: &Path, expected: &[String], staging: &Path) -> Result<Intake> {
    if staging.exists() {
        std::fs::remove_dir_all(staging).with_context(|| format!("emptying {}", staging.display()))?;
    }
    std::fs::create_dir_all(staging).with_context(|| format!("creating {}", staging.display()))?;

    // Flat uploads (Gradescope's file upload) have no exercises/ folder.
    let flat = std::fs::symlink_metadata(submission.join("exercises")).is_err();
    let wanted: BTreeMap<String, &String> = if flat {
        expected.iter().map(|rel| (file_name(rel).to_string(), rel)).collect()
    } else {
        expected.iter().map(|rel| (rel.clone(), rel)).collect()
    };
    let folders: BTreeSet<String> =
        if flat { BTreeSet::new() } else { expected.iter().flat_map(|r| ancestors(r)).collect() };

    let mut intake = Intake { layout: if flat { "flat" } else { "repository" }.into(), ..Default::default() };
    let walk = walkdir::WalkDir::new(submission).min_depth(1).follow_links(false).into_iter().filter_entry(|entry| {
        relative(submission, entry.path()).is_some_and(|rel| folders.contains(&rel) || wanted.contains_key(&rel))
    });
    for entry in walk.flatten() {
        let Some(rel) = relative(submission, entry.path()) else { continue };
        let file_type = entry.file_type();
        if folders.contains(&rel) {
            if file_type.is_symlink() {
                for file in expected.iter().filter(|f| f.starts_with(&format!("{rel}/"))) {
                    intake.refuse(file, format!("`{rel}` is a symbolic link; links are never followed"));
                }
            }
            continue;
        }
        let file = wanted[&rel];
        if file_type.is_symlink() {
            intake.refuse(file, "a symbolic link; links are never followed: commit the file itself".into());
        } else if !file_type.is_file() {
            intake.refuse(file, "not a regular file".into());
        } else {
            match copy_capped(entry.path(), &staging.join(file)) {
                Ok(()) => intake.taken.push(file.clone()),
                Err(why) => intake.refuse(file, why),
            }
        }
    }
    let seen: BTreeSet<&String> = intake.taken.iter().chain(intake.refused.iter().map(|r| &r.file)).collect();
    intake.missing = expected.iter().filter(|f| !seen.contains(f)).cloned().collect();
    intake.taken.sort();
    intake.refused.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(intake)
}

impl Intake {
    fn refuse(&mut self, file: &str, reason: String) {
        if !self.refused.iter().any(|r| r.file == file) {
            self.refused.push(Refused { file: file.into(), reason });
        }
    }
}

/// Copies at most [`MAX_SOURCE_BYTES`]; the error is the reason in words.
fn copy_capped(from: &Path, to: &Path) -> Result<(), String> {
    let too_large = |size: u64| format!("too large ({size} bytes; a source file may have at most {MAX_SOURCE_BYTES})");
    let file = std::fs::File::open(from).map_err(|e| format!("cannot be read: {e}"))?;
    let size = file.metadata().map_err(|e| format!("cannot be read: {e}"))?.len();
    if size > MAX_SOURCE_BYTES {
        return Err(too_large(size));
    }
    // Read one byte past the limit: the file may have grown since it was measured.
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(to.parent().expect("a staged file has a folder"))?;
        std::fs::write(to, &bytes)
    };
    write().map_err(|e| format!("could not be staged: {e}"))
}

/// `a/b/c` relative to `base`, with `/` separators; `None` for a path that is
/// not valid UTF-8 (no expected file is).
fn relative(base: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let parts: Option<Vec<&str>> =
        rel.components().map(|c| if let Component::Normal(s) = c { s.to_str() } else { None }).collect();
    Some(parts?.join("/"))
}

fn ancestors(rel: &str) -> Vec<String> {
    let parts: Vec<&str> = rel.split('/').collect();
    (1..parts.len()).map(|n| parts[..n].join("/")).collect()
}

fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn expected() -> Vec<String> {
        vec![
            "exercises/ex01-pi/kernels/a.cu".into(),
            "exercises/ex01-pi/kernels/b.cu".into(),
            "exercises/ex02-dot/kernels/c.cu".into(),
        ]
    }

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn only_expected_files_are_staged() {
        let sub = tempfile::tempdir().unwrap();
        let staging = tempfile::tempdir().unwrap();
        put(sub.path(), "exercises/ex01-pi/kernels/a.cu", "// a");
        put(sub.path(), "exercises/ex01-pi/kernels/extra.cu", "// extra");
        put(sub.path(), "exercises/ex01-pi/src/lib.rs", "evil");
        put(sub.path(), "Cargo.toml", "evil");
        let intake = stage(sub.path(), &expected(), staging.path()).unwrap();
        assert_eq!(intake.layout, "repository");
        assert_eq!(intake.taken, ["exercises/ex01-pi/kernels/a.cu"]);
        assert_eq!(intake.missing, ["exercises/ex01-pi/kernels/b.cu", "exercises/ex02-dot/kernels/c.cu"]);
        let staged: Vec<_> = walkdir::WalkDir::new(staging.path())
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().is_file())
            .map(|e| e.path().strip_prefix(staging.path()).unwrap().to_path_buf())
            .collect();
        assert_eq!(staged, [Path::new("exercises/ex01-pi/kernels/a.cu")]);
    }

    #[test]
    fn links_large_files_and_folders_are_refused_with_a_reason() {
        let sub = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        put(outside.path(), "secret.cu", "// secret");
        put(outside.path(), "kernels/c.cu", "// secret too");
        put(sub.path(), "exercises/ex01-pi/kernels/a.cu", &"x".repeat(MAX_SOURCE_BYTES as usize + 1));
        std::fs::create_dir_all(sub.path().join("exercises/ex01-pi/kernels/b.cu")).unwrap();
        std::fs::create_dir_all(sub.path().join("exercises/ex02-dot")).unwrap();
        symlink(outside.path().join("kernels"), sub.path().join("exercises/ex02-dot/kernels")).unwrap();
        let staging = tempfile::tempdir().unwrap();
        let intake = stage(sub.path(), &expected(), staging.path()).unwrap();
        assert!(intake.taken.is_empty(), "{intake:?}");
        let reasons: Vec<(&str, &str)> = intake.refused.iter().map(|r| (r.file.as_str(), r.reason.as_str())).collect();
        assert!(reasons[0].1.starts_with("too large"), "{reasons:?}");
        assert_eq!(reasons[1].1, "not a regular file");
        assert!(reasons[2].1.contains("`exercises/ex02-dot/kernels` is a symbolic link"), "{reasons:?}");

        // A link to a file is refused too.
        let sub = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(sub.path().join("exercises/ex01-pi/kernels")).unwrap();
        symlink(outside.path().join("secret.cu"), sub.path().join("exercises/ex01-pi/kernels/a.cu")).unwrap();
        let intake = stage(sub.path(), &expected(), staging.path()).unwrap();
        assert!(intake.refused[0].reason.contains("symbolic link"));
        assert!(!staging.path().join("exercises/ex01-pi/kernels/a.cu").exists());
    }

    #[test]
    fn flat_uploads_are_matched_by_file_name() {
        let sub = tempfile::tempdir().unwrap();
        put(sub.path(), "b.cu", "// b");
        put(sub.path(), "nested/a.cu", "// not at the top");
        let staging = tempfile::tempdir().unwrap();
        let intake = stage(sub.path(), &expected(), staging.path()).unwrap();
        assert_eq!(intake.layout, "flat");
        assert_eq!(intake.taken, ["exercises/ex01-pi/kernels/b.cu"]);
        assert!(staging.path().join("exercises/ex01-pi/kernels/b.cu").is_file());
    }

    #[test]
    fn part_file_names_are_unique_so_flat_uploads_are_unambiguous() {
        let files = expected_files(&crate::registry::all());
        let names: BTreeSet<&str> = files.iter().map(|f| file_name(f)).collect();
        assert_eq!(names.len(), files.len());
    }
}
