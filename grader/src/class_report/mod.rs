//! `OUT/class-report.html`: what a class got wrong, at a glance, from a
//! batch's output folder. One self-contained page (inline CSS and SVG drawn
//! with the student report's helpers, crate::html::svg; no script, nothing
//! fetched), written at the end of every batch and by `grader class-report OUT`.
//!
//! Everything on it is read back from what the batch wrote (the gradebook,
//! each student's report, `batch.json`'s time breakdown), so its numbers are
//! the gradebook's; two things are computed here: the reference kernels'
//! measured memory figures (the reference graded once with the batch's seed
//! and backend, structure checks only: a second or two, kept in
//! `OUT/class-report/`), and
//! the similarity of the staged kernels (crate::similarity).
//!
//! The batch also gets `gradebook-parts.csv` here (batch::gradebook::parts_csv):
//! one row per student and part with the first failure, for an LMS import.

mod sections;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::batch::breakdown::Breakdown;
use crate::batch::gradebook::{self, Gradebook};
use crate::batch::student::StudentReport;
use crate::report::GradeReport;
use crate::similarity::PartSimilarity;

pub const FILE_NAME: &str = "class-report.html";

/// How the page is built.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Students' names in the leaderboards instead of anonymous keys.
    pub names: bool,
    /// `Some(false)`: no leaderboards, whatever the course's file says.
    pub leaderboard: Option<bool>,
    /// The course's folder (stubs, reference, cuda-lab.toml); found as the grader finds it when absent.
    pub root: Option<PathBuf>,
    /// The grader binary that grades the reference for its measured figures (this one when absent).
    pub exe: Option<PathBuf>,
}

/// A batch's output folder, read back.
pub struct Class {
    /// The batch's output folder.
    pub out: PathBuf,
    pub book: Gradebook,
    /// In the gradebook's order; a row whose report is missing is left out.
    pub students: Vec<StudentReport>,
    pub time: Option<Breakdown>,
    /// The reference's grades with its measured figures (structure checks), when they could be had.
    pub reference: Option<GradeReport>,
    pub similarity: Vec<PartSimilarity>,
    pub leaderboard: bool,
    pub names: bool,
    /// (student key, part file) of every part handed in as the course's stub,
    /// unchanged: what the class got wrong is told apart from what it never started.
    pub stubs: std::collections::BTreeSet<(String, String)>,
}

/// The parts of `students` whose staged file (under `out/staging/<key>/`) is
/// the course's stub under `root`, byte for byte.
pub fn unchanged_stubs(
    out: &Path,
    root: &Path,
    students: &[StudentReport],
) -> std::collections::BTreeSet<(String, String)> {
    let mut stubs = std::collections::BTreeSet::new();
    let mut course: std::collections::BTreeMap<String, Option<Vec<u8>>> = Default::default();
    for s in students {
        for p in s.grades.exercises.iter().flat_map(|e| &e.parts) {
            let stub = course.entry(p.file.clone()).or_insert_with(|| std::fs::read(root.join(&p.file)).ok());
            let Some(stub) = stub else { continue };
            if std::fs::read(out.join("staging").join(&s.key).join(&p.file)).ok().as_ref() == Some(stub) {
                stubs.insert((s.key.clone(), p.file.clone()));
            }
        }
    }
    stubs
}

#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    time: Option<Breakdown>,
}

/// `[class-report]` of cuda-lab.toml.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Settings {
    /// Leaderboards of the timed checks (default true).
    pub leaderboard: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct CourseFile {
    #[serde(default)]
    class_report: Settings,
}

/// The course's `[class-report]` settings (defaults when the file or the section is absent).
pub fn settings(root: &Path) -> Result<Settings> {
    let path = root.join(crate::policy::CONFIG_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(toml::from_str::<CourseFile>(&text)
            .with_context(|| format!("reading [class-report] in {}", path.display()))?
            .class_report),
        Err(_) => Ok(Settings::default()),
    }
}

impl Class {
    pub fn read(out: &Path, opts: &Options) -> Result<Class> {
        let book = Gradebook::read(&out.join(gradebook::JSON_NAME))?;
        let mut students = Vec::new();
        for row in &book.students {
            let path = out.join(&row.report);
            let Ok(bytes) = std::fs::read(&path) else { continue };
            let s: StudentReport =
                serde_json::from_slice(&bytes).with_context(|| format!("{} is damaged", path.display()))?;
            students.push(s);
        }
        let time = std::fs::read(out.join("batch.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
            .and_then(|m| m.time);
        let root = opts.root.clone().or_else(crate::course::root);
        let exercises: Vec<kit::Exercise> =
            crate::registry::select(&book.exercises.iter().map(|e| e.id.clone()).collect::<Vec<_>>())
                .unwrap_or_default();
        let stubs = root.as_deref().map(|r| unchanged_stubs(out, r, &students)).unwrap_or_default();
        let (reference, similarity, leaderboard) = match &root {
            Some(root) => {
                let reference = reference_figures(out, root, &exercises, &book, opts);
                let mut parts = crate::similarity::from_staging(out, &exercises, root);
                // The second opinion from the PTX the batch compiled (hits in its cache).
                let arch = students
                    .iter()
                    .find_map(|s| s.grades.environment.compute_capability.as_deref())
                    .and_then(|cc| cc.split_once('.'))
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                if let Ok(compiler) = ptx_build::Compiler::from_env() {
                    let compiler = compiler.with_cache_dir(out.join("ptx-cache"));
                    for p in parts.iter_mut().filter(|p| p.submissions.len() > 1) {
                        p.ptx =
                            Some(crate::similarity::compile_part(&compiler, arch, &p.file, &p.common, &p.submissions));
                    }
                }
                let similarity = parts.iter().map(crate::similarity::compare).collect();
                let course = settings(root)?.leaderboard.unwrap_or(true);
                (reference, similarity, course)
            }
            None => (None, Vec::new(), true),
        };
        Ok(Class {
            out: out.to_path_buf(),
            book,
            students,
            time,
            reference,
            similarity,
            leaderboard: leaderboard && opts.leaderboard != Some(false),
            names: opts.names,
            stubs,
        })
    }
}

/// The reference's structure checks graded once with the batch's seed and
/// backend (like with like: a student whose kernel is the reference's reads
/// the reference's figures exactly), kept in `OUT/class-report/reference.json`
/// for the next report of the same grader and seed.
fn reference_figures(
    out: &Path,
    root: &Path,
    exercises: &[kit::Exercise],
    book: &Gradebook,
    opts: &Options,
) -> Option<GradeReport> {
    let path = out.join("class-report").join("reference.json");
    let ids: Vec<&str> = exercises.iter().map(|e| e.id).collect();
    let fits = |r: &GradeReport| {
        r.grader_version == env!("CARGO_PKG_VERSION")
            && r.seed == book.seed
            && ids.iter().all(|id| r.exercises.iter().any(|e| e.id == *id))
    };
    if let Some(r) = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<GradeReport>(&b).ok()) {
        if fits(&r) {
            return Some(r);
        }
    }
    // This process only when it is the grader (a test binary would take the arguments as filters).
    let this = std::env::current_exe().ok().filter(|e| e.file_stem().is_some_and(|s| s == "grader"));
    let exe = opts.exe.clone().or(this)?;
    std::fs::create_dir_all(path.parent()?).ok()?;
    let mut cmd = std::process::Command::new(exe);
    // The batch's shapes: the reference measured as its students were (batch::shapes).
    if let Some(secret) = crate::batch::shapes::kept(out) {
        cmd.env(kit::SHAPES_SECRET_ENV, format!("{secret:x}"));
    }
    cmd.args(&ids)
        .args(["--reference", "--seed", &book.seed.to_string(), "--backend", &book.backend])
        .args(["--no-report", "--json"])
        .arg(&path)
        .arg("--root")
        .arg(root)
        .args(["--", "::structure::"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).filter(fits)
}

/// Writes `OUT/class-report.html` (and `OUT/similarity.json`); returns the page's path.
pub fn write(out: &Path, opts: &Options) -> Result<PathBuf> {
    let class = Class::read(out, opts)?;
    crate::atomic::write_json(&out.join("similarity.json"), &class.similarity)?;
    let path = out.join(FILE_NAME);
    crate::atomic::write(&path, sections::render(&class).as_bytes())?;
    Ok(path)
}

/// At the end of a batch: the per-part CSV and the class report. A failure
/// here is a warning, never the batch's: the gradebook is already written.
pub fn after_batch(out: &Path) {
    if let Err(e) = gradebook::write_parts_csv(out) {
        eprintln!("warning: writing {}: {e:#}", gradebook::PARTS_CSV_NAME);
    }
    match write(out, &Options::default()) {
        Ok(path) => println!("class report: {}", path.display()),
        Err(e) => {
            eprintln!("warning: writing {FILE_NAME}: {e:#} (`grader class-report {}` tries again)", out.display())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_course_turns_leaderboards_off_and_a_misspelt_setting_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(settings(dir.path()).unwrap().leaderboard, None, "no file: the default");
        let file = dir.path().join(crate::policy::CONFIG_FILE);
        std::fs::write(&file, "[perf-without-gpu]\nown-runs = \"exclude\"\n[class-report]\nleaderboard = false\n")
            .unwrap();
        assert_eq!(settings(dir.path()).unwrap().leaderboard, Some(false));
        // The grading policy still reads the same file.
        crate::policy::resolve(dir.path(), None, crate::policy::Audience::OwnRun).unwrap();
        std::fs::write(&file, "[class-report]\nleaderbord = false\n").unwrap();
        assert!(settings(dir.path()).is_err());
    }
}
