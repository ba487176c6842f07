//! One student's results: the part reports of the children merged into one
//! grades JSON, with what was taken from the submission and a status.

use kit::Exercise;
use serde::{Deserialize, Serialize};

use super::intake::Intake;
use super::part::Outcome;
use super::submission::Submission;
use crate::report::{ExerciseReport, GradeReport};

pub const SCHEMA: &str = "cuda-lab.batch-student/1";

/// `<out>/submissions/<key>.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StudentReport {
    pub schema: String,
    pub key: String,
    pub name: String,
    /// "graded" when every part was graded to the end (whatever it scored);
    /// otherwise the worst thing that happened: "crashed", "timeout",
    /// "compile-error", "missing"; "no-files" when nothing could be taken;
    /// "incomplete" while some part has no result.
    pub status: String,
    /// One line per part that was not simply graded, and per refused file.
    pub notes: Vec<String>,
    pub intake: Intake,
    /// All parts in one report of schema `cuda-lab.grades/1`.
    pub grades: GradeReport,
}

/// Merges the one-part reports of one submission, in `exercises` order.
pub fn assemble(
    submission: &Submission,
    intake: Intake,
    exercises: &[Exercise],
    part_reports: &[GradeReport],
    seed: u64,
    source_root: String,
) -> StudentReport {
    let find = |ex: &str, part: &str| {
        part_reports
            .iter()
            .flat_map(|r| &r.exercises)
            .filter(|e| e.id == ex)
            .flat_map(|e| &e.parts)
            .find(|p| p.name == part)
    };
    let mut grades = GradeReport {
        schema: crate::report::SCHEMA.into(),
        grader_version: env!("CARGO_PKG_VERSION").into(),
        seed,
        // The latest part's finish: the same on every rerun of the same results.
        finished_at: part_reports.iter().map(|r| r.finished_at.clone()).max().unwrap_or_default(),
        source_root,
        sources: "exercises".into(),
        // That of a part whose grader really ran (a crashed one knows nothing).
        environment: part_reports
            .iter()
            .find(|r| r.environment.compiler.is_some())
            .or(part_reports.first())
            .map(|r| r.environment.clone())
            .unwrap_or_default(),
        score: 0.0,
        max_score: 0.0,
        counts: Default::default(),
        exercises: Vec::new(),
    };
    let mut notes = Vec::new();
    let mut worst: Option<Outcome> = None;
    let mut incomplete = false;
    for ex in exercises {
        let mut ex_report =
            ExerciseReport { id: ex.id.into(), title: ex.title.into(), score: 0.0, max_score: 0.0, parts: Vec::new() };
        for p in &ex.parts {
            let Some(mut part) = find(ex.id, p.name).cloned() else {
                notes.push(format!("{}/{}: no result yet (run the batch again)", ex.id, p.name));
                incomplete = true;
                continue;
            };
            if let Some(refused) = intake.refused.iter().find(|r| r.file == part.file) {
                part.compile.message =
                    Some(format!("`{}` was not taken from the submission: {}", refused.file, refused.reason));
            }
            let outcome = Outcome::of(&part);
            if outcome != Outcome::Graded {
                notes.push(format!("{}/{}: {}", ex.id, part.name, outcome.label()));
                worst = worst.max(Some(outcome));
            }
            ex_report.parts.push(part);
        }
        grades.exercises.push(ex_report);
    }
    for r in &intake.refused {
        notes.push(format!("refused {}: {}", r.file, r.reason));
    }
    grades.total_up();
    notes.extend(crate::policy::gradebook_note(&grades));
    let status = if incomplete {
        "incomplete"
    } else if intake.taken.is_empty() {
        "no-files"
    } else {
        worst.map(Outcome::label).unwrap_or(Outcome::Graded.label())
    };
    StudentReport {
        schema: SCHEMA.into(),
        key: submission.key.clone(),
        name: submission.name.clone(),
        status: status.into(),
        notes,
        intake,
        grades,
    }
}
