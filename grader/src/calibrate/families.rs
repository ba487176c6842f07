//! What `grader calibrate` measures: every performance check of the registry
//! and, for each, its family of kernels: the reference (`reference/`, in
//! every family), and the variants of the variants corpus
//! (`grader/tests/variants/expected.json`, `calibrates` and `role`), whose
//! slow ones come from `reference/slow/`. A variant is graded as a submission
//! would be: its own files over the reference's.
//!
//! Not used: `exercises/*/calibration/*.cu`, variants of the measured
//! structure checks (the simulator's figures, the same on every GPU), which
//! record no role.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use kit::{CheckKind, Exercise};
use serde::Deserialize;

/// The corpus's table, under the root.
pub const CORPUS: &str = "grader/tests/variants";

/// What a kernel is in its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Must pass: the reference and style variants of it.
    Correct,
    /// Spells the technique without its effect: must fail.
    Slow,
    /// Does without the technique (a structure check fails it): shown for comparison.
    Technique,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Correct => "correct",
            Role::Slow => "slow",
            Role::Technique => "technique",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "correct" => Some(Role::Correct),
            "slow" => Some(Role::Slow),
            "technique" => Some(Role::Technique),
            _ => None,
        }
    }
}

/// One grading to run per seed: one variant, the checks it is measured for.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// `reference`, or the corpus case's name.
    pub variant: String,
    pub role: Role,
    /// The exercise ids to grade (`ex05`); every one for the reference.
    pub exercises: Vec<String>,
    /// The one part to grade, where the variant's checks are all of one part.
    pub part: Option<String>,
    /// Files over the reference's: (path under `exercises/`, e.g.
    /// `ex05-stencil/kernels/stencil.cu`, the source file). Empty for the reference.
    pub files: Vec<(String, PathBuf)>,
    /// The full names of the checks this variant is measured for.
    pub checks: BTreeSet<String>,
}

/// Every check to calibrate (full name) and the jobs that measure them.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub checks: BTreeSet<String>,
    pub jobs: Vec<Job>,
}

#[derive(Deserialize)]
struct Table {
    cases: BTreeMap<String, Case>,
}

#[derive(Deserialize)]
struct Case {
    #[serde(default)]
    calibrates: Vec<String>,
    role: Option<String>,
    #[serde(default)]
    slow_files: BTreeMap<String, String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
}

/// The corpus's family name (`ex05/stencil/perf::share-of-copy`) as a check's full name.
pub fn check_name(family: &str) -> String {
    family.replacen('/', "::", 2)
}

/// The plan for `exercises` (and `technique` variants when `with_technique`).
pub fn plan(root: &Path, exercises: &[Exercise], with_technique: bool) -> Result<Plan> {
    let checks: BTreeSet<String> = exercises
        .iter()
        .flat_map(|e| {
            e.parts.iter().flat_map(move |p| {
                p.checks.iter().filter(|c| c.kind == CheckKind::Performance).map(move |c| e.test_name(p, c))
            })
        })
        .collect();
    let mut jobs = vec![Job {
        variant: "reference".into(),
        role: Role::Correct,
        exercises: exercises.iter().map(|e| e.id.to_string()).collect(),
        part: None,
        files: Vec::new(),
        checks: checks.clone(),
    }];
    let table_path = root.join(CORPUS).join("expected.json");
    let text = match std::fs::read_to_string(&table_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("note: no variants corpus at {}: the reference alone measures each check", table_path.display());
            return Ok(Plan { checks, jobs });
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", table_path.display())),
    };
    let table: Table = serde_json::from_str(&text).with_context(|| format!("reading {}", table_path.display()))?;
    for (name, case) in &table.cases {
        let Some(role) = case.role.as_deref().and_then(Role::parse) else { continue };
        if role == Role::Technique && !with_technique {
            continue;
        }
        let mine: BTreeSet<String> =
            case.calibrates.iter().map(|f| check_name(f)).filter(|c| checks.contains(c)).collect();
        if mine.is_empty() {
            continue;
        }
        let parts: BTreeSet<(String, String)> = mine
            .iter()
            .map(|c| {
                let mut it = c.split("::");
                (it.next().unwrap_or_default().to_string(), it.next().unwrap_or_default().to_string())
            })
            .collect();
        let exercises: Vec<String> =
            parts.iter().map(|(e, _)| e.clone()).collect::<BTreeSet<_>>().into_iter().collect();
        let part = (parts.len() == 1).then(|| parts.iter().next().map(|(_, p)| p.clone())).flatten();
        let pointed = pointed_files(root, &case.slow_files, &case.files);
        let files = if pointed.is_empty() { case_files(&root.join(CORPUS).join(name))? } else { pointed };
        if files.is_empty() {
            bail!("the corpus case `{name}` has no files");
        }
        jobs.push(Job { variant: name.clone(), role, exercises, part, files, checks: mine });
    }
    Ok(Plan { checks, jobs })
}

/// A corpus case's files that live elsewhere in the repository, so that each
/// kernel has one copy: (path under `exercises/`, the file). `files` names
/// each from the repository's root (`exercises/ex10-histogram/calibration/…`,
/// `reference/slow/…`, `reference/…`); `slow_files`, the older spelling, from
/// `reference/slow/`. Empty for a case that holds its own files.
pub fn pointed_files(
    root: &Path,
    slow_files: &BTreeMap<String, String>,
    files: &BTreeMap<String, String>,
) -> Vec<(String, PathBuf)> {
    let slow = slow_files.iter().map(|(rel, source)| (rel.clone(), root.join("reference").join("slow").join(source)));
    let all = slow.chain(files.iter().map(|(rel, source)| (rel.clone(), root.join(source))));
    // Another case's kernel may be kept as an edit.
    all.map(|(rel, f)| (rel, kit::case_file::kept(&f))).collect()
}

/// A corpus case's files: everything under its `exercises/`, each kept whole
/// or as an edit of another kernel (kit::case_file).
fn case_files(case: &Path) -> Result<Vec<(String, PathBuf)>> {
    let base = case.join("exercises");
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&base).sort_by_file_name() {
        let entry = entry.with_context(|| format!("reading {}", base.display()))?;
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(&base).expect("under base").to_string_lossy().replace('\\', "/");
            // A kernel kept as an edit is submitted under its own name (kit::case_file).
            files.push((kit::case_file::submitted_name(&rel).to_string(), entry.path().to_path_buf()));
        }
    }
    Ok(files)
}

/// Writes `job`'s submission into `dest`: `exercises/<folder>/…` of each of its
/// exercises from the reference, its own files over them.
pub fn stage(root: &Path, exercises: &[Exercise], job: &Job, dest: &Path) -> Result<()> {
    for id in &job.exercises {
        let Some(ex) = exercises.iter().find(|e| e.id == id) else { bail!("no exercise `{id}`") };
        let from = root.join("reference").join(ex.folder_name());
        for entry in walkdir::WalkDir::new(&from) {
            let entry = entry.with_context(|| format!("reading {}", from.display()))?;
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(&from).expect("under from");
                copy(entry.path(), &dest.join("exercises").join(ex.folder_name()).join(rel))?;
            }
        }
    }
    for (rel, source) in &job.files {
        kit::case_file::write(root, source, &dest.join("exercises").join(rel))?;
    }
    Ok(())
}

fn copy(from: &Path, to: &Path) -> Result<()> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::copy(from, to).with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn every_timed_check_has_a_family_and_slow_variants_come_from_reference_slow() {
        let exercises = crate::registry::all();
        let plan = plan(&root(), &exercises, false).unwrap();
        assert!(plan.checks.contains("ex05::stencil::perf::share-of-copy"), "{:?}", plan.checks);
        assert_eq!(plan.jobs[0].variant, "reference");
        assert_eq!(plan.jobs[0].checks, plan.checks, "the reference is in every family");
        for check in &plan.checks {
            let correct = plan.jobs.iter().filter(|j| j.role == Role::Correct && j.checks.contains(check)).count();
            assert!(correct >= 2, "{check}: the reference and at least one correct variant");
        }
        let slow = plan.jobs.iter().find(|j| j.variant == "ex05-slow-one-loader").expect("a slow case");
        assert_eq!(slow.role, Role::Slow);
        assert_eq!(slow.part.as_deref(), Some("stencil"));
        assert!(slow.files[0].1.starts_with(root().join("reference/slow")), "{:?}", slow.files);
        assert!(plan.jobs.iter().all(|j| j.role != Role::Technique), "left out unless asked");

        let dir = tempfile::tempdir().unwrap();
        stage(&root(), &exercises, slow, dir.path()).unwrap();
        let staged = std::fs::read(dir.path().join("exercises/ex05-stencil/kernels/stencil.cu")).unwrap();
        assert_eq!(staged, std::fs::read(root().join("reference/slow/ex05-stencil/kernels/stencil.cu")).unwrap());
    }

    #[test]
    fn a_family_name_is_a_check_name() {
        assert_eq!(check_name("ex07/padded/perf::share-of-copy"), "ex07::padded::perf::share-of-copy");
    }
}
