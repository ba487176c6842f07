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

/// What a batch grades with besides a submission's files: the course's
/// settings as the batch applies them (policy, credit: [`staged_settings`]),
/// its hints and its calibrations. Staged beside the files, so that
/// `OUT/staging/<key>` graded again as a `--root` gives the batch's grade.
pub struct Course<'a> {
    /// The course's folder (its `cuda-lab.toml`, `calibration/`, `exercises/*/hints.toml`).
    pub root: &'a Path,
    /// `--perf-without-gpu` as the batch's workers get it.
    pub perf_without_gpu: Option<&'a str>,
    /// `--credit` as the batch's workers get it.
    pub credit: Option<&'a str>,
}

impl<'a> Course<'a> {
    /// From the flags a batch passes to every worker (`--perf-without-gpu X`, `--credit Y`).
    pub fn of_flags(root: &'a Path, flags: &'a [String]) -> Course<'a> {
        let value = |name: &str| flags.windows(2).find(|w| w[0] == name).map(|w| w[1].as_str());
        Course { root, perf_without_gpu: value("--perf-without-gpu"), credit: value("--credit") }
    }
}

/// The course's `cuda-lab.toml` for a staged submission: the course's own
/// settings, with the policy the batch graded with as the one a student's own
/// run reads (`own-runs`) and the batch's credit, so a re-grade of the staged
/// folder scores as the batch did.
pub fn staged_settings(course: &Course) -> Result<String> {
    let path = course.root.join(crate::policy::CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut table: toml::Table = toml::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    if let Some(p) = course.perf_without_gpu {
        let section = table.entry("perf-without-gpu").or_insert_with(|| toml::Table::new().into());
        if let Some(t) = section.as_table_mut() {
            t.insert("own-runs".into(), p.into());
            t.remove("gradescope");
            t.insert(crate::policy::BATCH_KEY.into(), p.into());
        }
    }
    if let Some(c) = course.credit {
        let section = table.entry("performance").or_insert_with(|| toml::Table::new().into());
        if let Some(t) = section.as_table_mut() {
            t.insert("credit".into(), c.into());
        }
    }
    Ok(format!(
        "# Written by `grader batch`: the course's settings ({}) as this batch graded with them;\n\
         # a student's own run of this folder (`own-runs`) uses the batch's policy.\n{}",
        path.display(),
        toml::to_string(&table).context("writing the staged cuda-lab.toml")?
    ))
}

/// The file that marks a folder as a batch's staged submission ([`outputs_root`]).
pub const STAGED_MARKER: &str = ".cuda-lab-staged";

/// Where a run with `--root root` writes what it writes by default (its
/// grades JSON, its report, its PTX cache: `<that>/target/...`): `root`
/// itself, except for a batch's staged submission `OUT/staging/<key>`, whose
/// re-grade writes into `OUT/regraded/<key>` so the staged folder stays
/// exactly what was graded.
pub fn outputs_root(root: &Path) -> std::path::PathBuf {
    let staged = root.join(STAGED_MARKER).is_file();
    match (staged, root.parent(), root.file_name()) {
        (true, Some(staging), Some(key)) if staging.file_name().is_some_and(|n| n == "staging") => {
            staging.parent().unwrap_or(Path::new(".")).join("regraded").join(key)
        }
        _ => root.to_path_buf(),
    }
}

/// Stages what the batch grades with beside the submission's files (see [`Course`]).
pub fn stage_course(course: &Course, exercises: &[Exercise], staging: &Path) -> Result<()> {
    crate::atomic::write(&staging.join(crate::policy::CONFIG_FILE), staged_settings(course)?.as_bytes())?;
    crate::atomic::write(
        &staging.join(STAGED_MARKER),
        b"A batch's staged submission, exactly as graded: a run with --root here writes into ../../regraded/<key>.\n",
    )?;
    let mut copies: Vec<String> =
        exercises.iter().map(|e| format!("exercises/{}/hints.toml", e.folder_name())).collect();
    if let Ok(dir) = std::fs::read_dir(course.root.join("calibration")) {
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".toml") {
                copies.push(format!("calibration/{name}"));
            }
        }
    }
    for rel in copies {
        let from = course.root.join(&rel);
        if from.is_file() {
            let to = staging.join(&rel);
            std::fs::create_dir_all(to.parent().expect("a folder"))
                .with_context(|| format!("creating {}", to.display()))?;
            std::fs::copy(&from, &to).with_context(|| format!("staging {}", from.display()))?;
        }
    }
    Ok(())
}

/// What a part's stored result was graded from: the staged file's content,
/// and everything else that decides its grade (the grader, the course's
/// settings, the batch's flags, seed and backend), as `files <sha256>` and
/// `settings <sha256>` lines. A result is reused only where both match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub files: String,
    pub settings: String,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl Stamp {
    /// `file` (relative to `staging`: absent is a content of its own) and `settings` (any text).
    pub fn of(staging: &Path, file: &str, settings: &str) -> Stamp {
        let files = match std::fs::read(staging.join(file)) {
            Ok(bytes) => sha256_hex(&bytes),
            Err(_) => "absent".into(),
        };
        Stamp { files, settings: sha256_hex(settings.as_bytes()) }
    }

    pub fn text(&self) -> String {
        format!("files {}\nsettings {}\n", self.files, self.settings)
    }

    pub fn parse(text: &str) -> Option<Stamp> {
        let mut lines = text.lines();
        let files = lines.next()?.strip_prefix("files ")?.to_string();
        let settings = lines.next()?.strip_prefix("settings ")?.to_string();
        Some(Stamp { files, settings })
    }

    /// Where a result's stamp lives: beside it, `<ex>-<part>.inputs`.
    pub fn path(result: &Path) -> std::path::PathBuf {
        result.with_extension("inputs")
    }

    pub fn read(result: &Path) -> Option<Stamp> {
        Stamp::parse(&std::fs::read_to_string(Stamp::path(result)).ok()?)
    }
}

/// Everything but the files that decides a batch's grades: the grader (its
/// version and binary), the course's `cuda-lab.toml` as staged, the flags its
/// workers get, the seed and the backend.
pub fn settings_text(exe: &Path, staged_settings: &str, flags: &[String], seed: u64, backend: &str) -> String {
    let binary = std::fs::metadata(exe)
        .ok()
        .map(|m| format!("{} bytes, modified {:?}", m.len(), m.modified().ok()))
        .unwrap_or_default();
    format!(
        "grader {} ({binary})\nseed {seed}\nbackend {backend}\nflags {}\n{staged_settings}",
        env!("CARGO_PKG_VERSION"),
        flags.join(" ")
    )
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
    fn the_staged_settings_are_the_courses_as_the_batch_graded() {
        let course = tempfile::tempdir().unwrap();
        put(
            course.path(),
            "cuda-lab.toml",
            "[perf-without-gpu]\nown-runs = \"exclude\"\ngradescope = \"fail\"\n[class-report]\nleaderboard = false\n",
        );
        let flags: Vec<String> =
            ["--sanitize", "on", "--perf-without-gpu", "fail", "--credit", "scaled"].map(String::from).into();
        let text = staged_settings(&Course::of_flags(course.path(), &flags)).unwrap();
        let staged = tempfile::tempdir().unwrap();
        put(staged.path(), "cuda-lab.toml", &text);
        // A student's own run of the staged folder reads the batch's policy and credit.
        let own = crate::policy::resolve(staged.path(), None, crate::policy::Audience::OwnRun).unwrap();
        assert_eq!(own.perf_without_gpu, crate::policy::PerfWithoutGpu::Fail, "{text}");
        assert_eq!(crate::credit::of_course(staged.path()).unwrap(), crate::credit::Credit::Scaled);
        assert!(text.contains("leaderboard = false"), "the rest of the course's settings stays: {text}");
    }

    #[test]
    fn a_staged_submissions_regrade_writes_elsewhere() {
        let out = tempfile::tempdir().unwrap();
        let staging = out.path().join("staging").join("ana");
        put(&staging, STAGED_MARKER, "");
        assert_eq!(outputs_root(&staging), out.path().join("regraded").join("ana"));
        let course = tempfile::tempdir().unwrap();
        assert_eq!(outputs_root(course.path()), course.path(), "a course's own folder writes into itself");
    }

    #[test]
    fn a_stamp_changes_with_the_file_and_with_the_settings() {
        let staging = tempfile::tempdir().unwrap();
        put(staging.path(), "exercises/ex01-pi/kernels/a.cu", "// stub");
        let before = Stamp::of(staging.path(), "exercises/ex01-pi/kernels/a.cu", "seed 1");
        assert_eq!(Stamp::parse(&before.text()), Some(before.clone()));
        put(staging.path(), "exercises/ex01-pi/kernels/a.cu", "// the reference, copied in");
        let after = Stamp::of(staging.path(), "exercises/ex01-pi/kernels/a.cu", "seed 1");
        assert_ne!(before.files, after.files);
        assert_eq!(before.settings, after.settings);
        assert_ne!(after.settings, Stamp::of(staging.path(), "x", "seed 2").settings);
        assert_eq!(Stamp::of(staging.path(), "exercises/none.cu", "").files, "absent");
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
