//! The command line: one file per command, each with its flags (a clap
//! `Args` struct) and a `run` that builds the options struct the grader
//! library takes and calls it. Nothing here grades, builds or times anything.
//! Flags several commands share have files of their own (`grading_flags`,
//! `lms`, `format`), as does the stdout juggling CodeRunner needs (`stdout`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use grader::batch::student::StudentReport;
use grader::report::GradeReport;

pub mod audit;
pub mod baseline_profiles;
pub mod batch;
pub mod batch_worker;
pub mod calibrate;
pub mod class_report;
pub mod compare_digests;
pub mod differential;
pub mod export_template;
pub mod format;
pub mod gpu_load;
pub mod grade;
pub mod grading_flags;
pub mod hint;
pub mod lab;
pub mod list;
pub mod lms;
pub mod make_class;
pub mod merge;
pub mod new;
pub mod report;
pub mod status;
pub mod stdout;
pub mod watch;

#[cfg(test)]
mod readme_commands;

/// A grades JSON, or the `grades` of a batch's per-student JSON.
fn read_grades(path: &std::path::Path) -> Result<GradeReport> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if let Ok(student) = serde_json::from_slice::<StudentReport>(&bytes) {
        return Ok(student.grades);
    }
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not a grades JSON", path.display()))
}

/// Writes the HTML report; a failure to draw never fails the grading.
fn write_html(report: &GradeReport, root: &std::path::Path, path: &std::path::Path) {
    let mut extras = grader::html::Extras::gather(report, root);
    extras.sections.extend(grader::lab::coalescing::last_section(root));
    match grader::html::write(report, &extras, path) {
        Ok(()) => {
            println!("  report with pictures: file://{}", path.canonicalize().unwrap_or(path.to_path_buf()).display())
        }
        Err(e) => println!("  (the HTML report could not be written: {e:#})"),
    }
}

/// The current folder when it holds the exercises (a student's checkout, or the
/// device machine's copy of the repository), else the workspace this was built in.
fn default_root() -> Result<PathBuf> {
    // Says so when it falls back to the checkout this grader was built in.
    grader::course::root().context("cannot find the exercises: run from the repository's folder, or pass --root")
}

/// `--root`, else [`default_root`].
fn root_or_default(root: Option<PathBuf>) -> Result<PathBuf> {
    root.map_or_else(default_root, Ok)
}
