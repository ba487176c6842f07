//! `--lms-csv FILE`: the class's scores as a CSV an LMS gradebook imports,
//! one row per student and one column per exercise, then the total.
//!
//! - **Canvas** (Grades, Import): the columns `Student`, `ID`, `SIS User ID`,
//!   `SIS Login ID` and `Section`, in that order, then the assignments, as
//!   Canvas's own gradebook export has them. Canvas finds a student by `ID`,
//!   `SIS User ID` or `SIS Login ID`, and offers to create an assignment for a
//!   column it does not know; the second row, `Points Possible`, gives those
//!   their points, as in its export.
//! - **Moodle** (Grade administration, Import, CSV file): an identifier column
//!   (`Email address`, `Username` or `ID number`), which the import maps to
//!   the user field it holds, then the scores, each mapped to a grade item.
//!
//! Who each submission folder is in the LMS comes from `--roster` ([`roster`]);
//! without one, the folder's name stands in for the identifier.

pub mod roster;

use std::path::Path;

use anyhow::{anyhow, Result};

use crate::batch::gradebook::{Gradebook, Row, JSON_NAME};
use roster::Roster;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Lms {
    #[default]
    Canvas,
    Moodle,
}

/// The total's column; not "Total" or "Final Score", which Canvas's export uses for its own read-only sums.
pub const TOTAL_COLUMN: &str = "cuda-lab total";

/// Canvas's identity columns, in the order its import wants them.
pub const CANVAS_COLUMNS: [&str; 5] = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"];

/// The roster columns that can identify a Moodle user, in order of preference.
const MOODLE_COLUMNS: [&str; 3] = ["Email address", "Username", "ID number"];

/// Classroom's grades CSV calls the LMS identity this.
const CLASSROOM_IDENTIFIER: &str = "roster_identifier";

#[derive(Debug, Clone, PartialEq)]
pub struct LmsCsv {
    pub bytes: Vec<u8>,
    pub students: usize,
    /// Folders the roster does not name: their folder name stands in.
    pub not_in_roster: Vec<String>,
}

/// The CSV of `book` for `lms`.
pub fn csv(book: &Gradebook, lms: Lms, roster: Option<&Roster>) -> Result<LmsCsv> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut not_in_roster = Vec::new();
    let entry = |row: &Row| roster.and_then(|r| r.find(&row.name).map(|found| (r, found)));
    let scores = |row: &Row| -> Vec<String> {
        book.exercises
            .iter()
            .map(|e| row.scores.get(&e.id).copied().unwrap_or(0.0))
            .chain([row.total])
            .map(|s| format!("{s:.2}"))
            .collect()
    };
    let assignments: Vec<String> =
        book.exercises.iter().map(|e| e.id.clone()).chain([TOTAL_COLUMN.to_string()]).collect();
    match lms {
        Lms::Canvas => {
            w.write_record(CANVAS_COLUMNS.iter().map(|c| c.to_string()).chain(assignments))?;
            let possible: Vec<String> = book
                .exercises
                .iter()
                .map(|e| e.max_score)
                .chain([book.exercises.iter().map(|e| e.max_score).sum()])
                .map(|p| format!("{p:.2}"))
                .collect();
            w.write_record(["Points Possible", "", "", "", ""].map(String::from).into_iter().chain(possible))?;
            for row in &book.students {
                let found = entry(row);
                if roster.is_some() && found.is_none() {
                    not_in_roster.push(row.name.clone());
                }
                w.write_record(canvas_identity(row, found).into_iter().chain(scores(row)))?;
            }
        }
        Lms::Moodle => {
            let (header, column) = moodle_identifier(book, roster);
            w.write_record([header.to_string()].into_iter().chain(assignments))?;
            for row in &book.students {
                let found = entry(row);
                if roster.is_some() && found.is_none() {
                    not_in_roster.push(row.name.clone());
                }
                let id = found.map(|(r, fields)| r.field(fields, column)).filter(|v| !v.is_empty());
                w.write_record([id.unwrap_or(&row.name).to_string()].into_iter().chain(scores(row)))?;
            }
        }
    }
    let bytes = w.into_inner().map_err(|e| anyhow!("writing the CSV: {e}"))?;
    Ok(LmsCsv { bytes, students: book.students.len(), not_in_roster })
}

/// Canvas's five identity cells: from the roster's columns of the same names;
/// where it has no ID of any kind, its `roster_identifier` (else the folder's
/// name) as the SIS Login ID.
fn canvas_identity(row: &Row, found: Option<(&Roster, &[String])>) -> [String; 5] {
    let mut cells = CANVAS_COLUMNS.map(|c| found.map_or("", |(r, f)| r.field(f, c)).to_string());
    if cells[0].is_empty() {
        cells[0] = found.map(|(r, f)| r.field(f, "name")).filter(|n| !n.is_empty()).unwrap_or(&row.name).to_string();
    }
    if cells[1..4].iter().all(String::is_empty) {
        let id = found.map(|(r, f)| r.field(f, CLASSROOM_IDENTIFIER)).filter(|v| !v.is_empty());
        cells[3] = id.unwrap_or(&row.name).to_string();
    }
    cells
}

/// Moodle's identifier column: (its header, the roster column it comes from).
/// Classroom's `roster_identifier` is headed `Email address` when every one
/// matched is an email address, else `Username`.
fn moodle_identifier<'r>(book: &Gradebook, roster: Option<&'r Roster>) -> (&'static str, &'r str) {
    let Some(r) = roster else { return ("Username", "") };
    if let Some(named) = MOODLE_COLUMNS.iter().copied().find(|c| r.column(c).is_some()) {
        return (named, named);
    }
    let emails = book
        .students
        .iter()
        .filter_map(|row| r.find(&row.name))
        .map(|f| r.field(f, CLASSROOM_IDENTIFIER))
        .all(|v| v.contains('@'));
    (if emails { "Email address" } else { "Username" }, CLASSROOM_IDENTIFIER)
}

/// Writes `file` from the gradebook in `dir` (a batch's, a merge's or a class report's folder).
pub fn write(dir: &Path, file: &Path, lms: Lms, roster: Option<&Path>) -> Result<LmsCsv> {
    let book = Gradebook::read(&dir.join(JSON_NAME))?;
    let roster = roster.map(Roster::read).transpose()?;
    let out = csv(&book, lms, roster.as_ref())?;
    crate::atomic::write(file, &out.bytes)?;
    Ok(out)
}

impl LmsCsv {
    /// What the TA reads after the file is written.
    pub fn describe(&self, file: &Path, lms: Lms) -> String {
        let name = match lms {
            Lms::Canvas => "Canvas",
            Lms::Moodle => "Moodle",
        };
        let mut text = format!("{name} gradebook CSV ({} students): {}", self.students, file.display());
        if !self.not_in_roster.is_empty() {
            text += &format!(
                "\n  not in the roster, named by their folder: {} (add them to --roster)",
                self.not_in_roster.join(", ")
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::gradebook::{report_path, ExerciseColumn, SCHEMA};

    fn book() -> Gradebook {
        let row = |name: &str, ex01: f64, ex02: f64| Row {
            key: name.into(),
            name: name.into(),
            scores: [("ex01".to_string(), ex01), ("ex02".to_string(), ex02)].into(),
            total: ex01 + ex02,
            max_score: 30.0,
            status: "graded".into(),
            notes: vec![],
            report: report_path(name),
        };
        Gradebook {
            schema: SCHEMA.into(),
            grader_version: "0".into(),
            seed: 1,
            backend: "none".into(),
            exercises: vec![
                ExerciseColumn { id: "ex01".into(), max_score: 20.0 },
                ExerciseColumn { id: "ex02".into(), max_score: 10.0 },
            ],
            shard: None,
            students: vec![row("lab1-ana", 20.0, 7.5), row("lab1-bo", 0.0, 10.0)],
        }
    }

    fn text(c: &LmsCsv) -> String {
        String::from_utf8(c.bytes.clone()).unwrap()
    }

    #[test]
    fn canvas_gets_its_identity_columns_and_points_possible() {
        let roster = Roster::parse(b"github_username,roster_identifier\nana,ana@uni.edu\n").unwrap();
        let out = csv(&book(), Lms::Canvas, Some(&roster)).unwrap();
        assert_eq!(
            text(&out),
            "Student,ID,SIS User ID,SIS Login ID,Section,ex01,ex02,cuda-lab total\n\
             Points Possible,,,,,20.00,10.00,30.00\n\
             lab1-ana,,,ana@uni.edu,,20.00,7.50,27.50\n\
             lab1-bo,,,lab1-bo,,0.00,10.00,10.00\n"
        );
        assert_eq!(out.not_in_roster, ["lab1-bo"]);
    }

    #[test]
    fn canvas_ids_come_from_a_roster_with_canvas_columns() {
        let roster =
            Roster::parse(b"folder,Student,ID,SIS User ID,SIS Login ID,Section\nlab1-bo,\"Bo, B\",42,s42,bo,A\n")
                .unwrap();
        let out = text(&csv(&book(), Lms::Canvas, Some(&roster)).unwrap());
        assert!(out.contains("\n\"Bo, B\",42,s42,bo,A,0.00,10.00,10.00\n"), "{out}");
    }

    #[test]
    fn moodle_gets_an_identifier_column_named_for_what_it_holds() {
        let roster = Roster::parse(b"github_username,roster_identifier\nana,ana@uni.edu\nbo,bo@uni.edu\n").unwrap();
        assert_eq!(
            text(&csv(&book(), Lms::Moodle, Some(&roster)).unwrap()),
            "Email address,ex01,ex02,cuda-lab total\nana@uni.edu,20.00,7.50,27.50\nbo@uni.edu,0.00,10.00,10.00\n"
        );
        let usernames = Roster::parse(b"folder,Username\nlab1-ana,ana\n").unwrap();
        let out = text(&csv(&book(), Lms::Moodle, Some(&usernames)).unwrap());
        assert!(out.starts_with("Username,ex01,ex02,cuda-lab total\nana,20.00,7.50,27.50\nlab1-bo,"), "{out}");
        let without = text(&csv(&book(), Lms::Moodle, None).unwrap());
        assert!(without.starts_with("Username,ex01,ex02,cuda-lab total\nlab1-ana,20.00"), "{without}");
    }
}
