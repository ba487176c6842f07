//! `--lms-csv FILE`: the class's scores as a CSV an LMS gradebook imports,
//! one row per student and one column per exercise, then the total. Each
//! student's points and maxima come from the same result every platform
//! shows ([`crate::platforms::Grade`], with the course's maximum), read from
//! the batch's `submissions/<key>.json`.
//!
//! - **Canvas** (Grades, Import): the columns `Student`, `ID`, `SIS User ID`,
//!   `SIS Login ID` and `Section`, in that order, then the assignments, as
//!   Canvas's own gradebook export has them. Canvas finds a student by `ID`,
//!   `SIS User ID` or `SIS Login ID`, and offers to create an assignment for a
//!   column it does not know; the second row, `Points Possible`, gives those
//!   their points: the maximum of the scores below it.
//! - **Moodle** (Grade administration, Import, CSV file): an identifier column
//!   (`Email address`, `Username` or `ID number`), which the import maps to
//!   the user field it holds, then the scores, each mapped to a grade item.
//!   Moodle abandons the whole import at one identifier it does not know, and
//!   refuses a grade above its item's maximum (100 for a new item): only the
//!   students the roster names go in FILE (the others in a file of their own,
//!   [`not_imported_path`]), and the total is a percentage.
//!
//! Who each submission folder is in the LMS comes from `--roster` ([`roster`]);
//! without one, Canvas gets the folder's name as the identifier, Moodle none.

pub mod roster;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

use super::{Cents, Grade, Maximum};
use crate::batch::gradebook::{Gradebook, Row, JSON_NAME};
use crate::batch::student::StudentReport;
use roster::Roster;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Lms {
    #[default]
    Canvas,
    Moodle,
}

/// The total's column; not "Total" or "Final Score", which Canvas's export uses for its own read-only sums.
pub const TOTAL_COLUMN: &str = "cuda-lab total";

/// Moodle's total: a percentage, within a new grade item's maximum of 100.
pub const MOODLE_TOTAL_COLUMN: &str = "cuda-lab total (%)";

/// Canvas's identity columns, in the order its import wants them.
pub const CANVAS_COLUMNS: [&str; 5] = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"];

/// The roster columns that can identify a Moodle user, in order of preference.
const MOODLE_COLUMNS: [&str; 3] = ["Email address", "Username", "ID number"];

/// Classroom's grades CSV calls the LMS identity this.
const CLASSROOM_IDENTIFIER: &str = "roster_identifier";

/// One student's points and maxima per exercise.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scores {
    pub points: BTreeMap<String, Cents>,
    pub max: BTreeMap<String, Cents>,
}

impl Scores {
    pub fn of(grade: &Grade) -> Scores {
        Scores {
            points: grade.exercises.iter().map(|e| (e.id.to_string(), e.points)).collect(),
            max: grade.exercises.iter().map(|e| (e.id.to_string(), e.max)).collect(),
        }
    }

    /// From the gradebook's row alone (its report could not be read): the
    /// row's points out of each exercise's full points.
    pub fn of_row(book: &Gradebook, row: &Row) -> Scores {
        Scores {
            points: row.scores.iter().map(|(id, s)| (id.clone(), Cents::of_points(*s))).collect(),
            max: book.exercises.iter().map(|e| (e.id.clone(), Cents::of_points(e.max_score))).collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LmsCsv {
    pub bytes: Vec<u8>,
    /// Rows in `bytes`.
    pub students: usize,
    /// Folders the roster does not name (Canvas: their folder name stands in;
    /// Moodle: they are in [`LmsCsv::not_imported`] instead).
    pub not_in_roster: Vec<String>,
    /// Moodle: the rows left out of the import, by folder, when there are any.
    pub not_imported: Option<Vec<u8>>,
    /// Each exercise's points possible, in column order.
    pub possible: Vec<(String, Cents)>,
    /// Students whose maximum differed from the column's (a check not graded
    /// for them alone): their points were scaled to it.
    pub rescaled: Vec<String>,
    /// Roster students with no submission: a row of 0 each ([`write`]).
    pub absent: Vec<String>,
}

/// The CSV of `book` for `lms`, with each student's `scores` (in the book's order).
pub fn csv(book: &Gradebook, scores: &[Scores], lms: Lms, roster: Option<&Roster>) -> Result<LmsCsv> {
    let ids: Vec<&str> = book.exercises.iter().map(|e| e.id.as_str()).collect();
    let possible: Vec<Cents> = ids.iter().map(|id| most_common(scores.iter().filter_map(|s| s.max.get(*id)))).collect();
    let total_possible: Cents = possible.iter().copied().sum();
    let mut rescaled = Vec::new();
    // Each row's cells in points, scaled where its maximum is not the column's.
    let cells: Vec<Vec<Cents>> = book
        .students
        .iter()
        .zip(scores)
        .map(|(row, s)| {
            let mut scaled = false;
            let cells = ids
                .iter()
                .zip(&possible)
                .map(|(id, &to)| {
                    let (p, m) = (s.points.get(*id).copied().unwrap_or_default(), s.max.get(*id).copied());
                    match m {
                        Some(m) if m != to => {
                            scaled = true;
                            p.scaled(m, to)
                        }
                        _ => p.min(to),
                    }
                })
                .collect();
            if scaled {
                rescaled.push(row.name.clone());
            }
            cells
        })
        .collect();
    let assignments = |total: &str| ids.iter().map(|i| i.to_string()).chain([total.to_string()]).collect::<Vec<_>>();
    let entry = |row: &Row| roster.and_then(|r| r.find(&row.name).map(|found| (r, found)));
    let mut not_in_roster = Vec::new();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut students = 0;
    let mut not_imported = None;
    match lms {
        Lms::Canvas => {
            w.write_record(CANVAS_COLUMNS.iter().map(|c| c.to_string()).chain(assignments(TOTAL_COLUMN)))?;
            let points = possible.iter().chain([&total_possible]).map(ToString::to_string);
            w.write_record(["Points Possible", "", "", "", ""].map(String::from).into_iter().chain(points))?;
            for (row, cells) in book.students.iter().zip(&cells) {
                let found = entry(row);
                if roster.is_some() && found.is_none() {
                    not_in_roster.push(row.name.clone());
                }
                let total: Cents = cells.iter().copied().sum();
                let scores = cells.iter().chain([&total]).map(ToString::to_string);
                w.write_record(canvas_identity(row, found).into_iter().chain(scores))?;
                students += 1;
            }
        }
        Lms::Moodle => {
            let (header, column) = moodle_identifier(book, roster);
            w.write_record([header.to_string()].into_iter().chain(assignments(MOODLE_TOTAL_COLUMN)))?;
            let mut left = csv::Writer::from_writer(Vec::new());
            left.write_record(["folder".to_string()].into_iter().chain(assignments(MOODLE_TOTAL_COLUMN)))?;
            for (row, cells) in book.students.iter().zip(&cells) {
                let percent = Cents::of_points(
                    100.0 * cells.iter().copied().sum::<Cents>().0 as f64 / total_possible.0.max(1) as f64,
                );
                let scores: Vec<String> = cells.iter().chain([&percent]).map(ToString::to_string).collect();
                let id = entry(row).map(|(r, fields)| r.field(fields, column)).filter(|v| !v.is_empty());
                match id {
                    Some(id) => {
                        w.write_record([id.to_string()].into_iter().chain(scores))?;
                        students += 1;
                    }
                    None => {
                        not_in_roster.push(row.name.clone());
                        left.write_record([row.name.clone()].into_iter().chain(scores))?;
                    }
                }
            }
            if !not_in_roster.is_empty() {
                not_imported = Some(left.into_inner().map_err(|e| anyhow!("writing the CSV: {e}"))?);
            }
        }
    }
    let bytes = w.into_inner().map_err(|e| anyhow!("writing the CSV: {e}"))?;
    let possible = ids.iter().map(|i| i.to_string()).zip(possible).collect();
    Ok(LmsCsv { bytes, students, not_in_roster, not_imported, possible, rescaled, absent: Vec::new() })
}

/// The value most rows share (the largest of equals); 0 for none.
fn most_common<'a>(values: impl Iterator<Item = &'a Cents>) -> Cents {
    let mut counts: BTreeMap<Cents, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(*v).or_default() += 1;
    }
    counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0))).map_or(Cents::ZERO, |(v, _)| v)
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

/// Each student's scores: from their report in `dir`, else from the gradebook's row.
pub fn scores(dir: &Path, book: &Gradebook, maximum: Maximum) -> Vec<Scores> {
    book.students
        .iter()
        .map(|row| {
            let read = std::fs::read(dir.join(&row.report))
                .ok()
                .and_then(|bytes| serde_json::from_slice::<StudentReport>(&bytes).ok());
            match read {
                Some(student) => Scores::of(&Grade::of(&student.grades, maximum)),
                None => Scores::of_row(book, row),
            }
        })
        .collect()
}

/// Where Moodle's rows left out of `file` go: `<file's stem>-not-imported.csv`.
pub fn not_imported_path(file: &Path) -> PathBuf {
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "lms".into());
    file.with_file_name(format!("{stem}-not-imported.csv"))
}

/// Writes `file` from the gradebook in `dir` (a batch's, a merge's or a class report's folder).
/// A roster student with no submission folder gets a row first (0, status
/// "no submission") in the gradebook, and so in this file and the class report.
pub fn write(dir: &Path, file: &Path, lms: Lms, roster: Option<&Path>, maximum: Maximum) -> Result<LmsCsv> {
    let roster = roster.map(Roster::read).transpose()?;
    let (absent, added) = match &roster {
        Some(r) => crate::batch::gradebook::add_absent_in(dir, r)?,
        None => (Vec::new(), false),
    };
    if added && dir.join(crate::class_report::FILE_NAME).is_file() {
        // The class report names them too.
        if let Err(e) = crate::class_report::write(dir, &crate::class_report::Options::default()) {
            eprintln!("warning: writing {}: {e:#}", crate::class_report::FILE_NAME);
        }
    }
    let book = Gradebook::read(&dir.join(JSON_NAME))?;
    let mut out = csv(&book, &scores(dir, &book, maximum), lms, roster.as_ref())?;
    out.absent = absent;
    crate::atomic::write(file, &out.bytes)?;
    let left = not_imported_path(file);
    match &out.not_imported {
        Some(bytes) => crate::atomic::write(&left, bytes)?,
        None if left.exists() => std::fs::remove_file(&left)?,
        None => {}
    }
    Ok(out)
}

impl LmsCsv {
    /// What the TA reads after the file is written.
    pub fn describe(&self, file: &Path, lms: Lms) -> String {
        let possible = self.possible.iter().map(|(id, p)| format!("{id} {p}")).collect::<Vec<_>>().join(", ");
        let mut text = match lms {
            Lms::Canvas => format!(
                "Canvas gradebook CSV ({}): {}\n  Points Possible: {possible}",
                crate::words::count(self.students, "student"),
                file.display()
            ),
            Lms::Moodle => format!(
                "Moodle gradebook CSV ({}): {}\n  set each grade item's maximum grade to its points \
                 ({possible}): Moodle refuses a grade above it; `{MOODLE_TOTAL_COLUMN}` is out of 100",
                crate::words::count(self.students, "student"),
                file.display()
            ),
        };
        if !self.not_in_roster.is_empty() {
            text += &match lms {
                Lms::Canvas => format!(
                    "\n  not in the roster, named by their folder: {} (add them to --roster)",
                    self.not_in_roster.join(", ")
                ),
                Lms::Moodle => format!(
                    "\n  NOT in {}: {} submission(s) the roster does not name ({}), since Moodle abandons a whole \
                     import at one identifier it does not know; their scores are in {}. Add them to --roster and \
                     write the CSV again, or enter their grades by hand",
                    file.display(),
                    self.not_in_roster.len(),
                    self.not_in_roster.join(", "),
                    not_imported_path(file).display()
                ),
            };
        }
        if !self.absent.is_empty() {
            text += &format!(
                "\n  on the roster with no submission, a row of 0 each (status \"no submission\", also in \
                 gradebook.json and the class report): {}",
                self.absent.join(", ")
            );
        }
        if !self.rescaled.is_empty() {
            text += &format!(
                "\n  scaled to the column's points (their own maximum differed: a check could not be graded for \
                 them here): {}",
                self.rescaled.join(", ")
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
            max_scores: Default::default(),
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
            maximum: None,
            credit: None,
            students: vec![row("lab1-ana", 20.0, 7.5), row("lab1-bo", 0.0, 10.0)],
        }
    }

    fn text(c: &LmsCsv) -> String {
        String::from_utf8(c.bytes.clone()).unwrap()
    }

    fn of_rows(book: &Gradebook) -> Vec<Scores> {
        book.students.iter().map(|r| Scores::of_row(book, r)).collect()
    }

    #[test]
    fn canvas_gets_its_identity_columns_and_points_possible() {
        let roster = Roster::parse(b"github_username,roster_identifier\nana,ana@uni.edu\n").unwrap();
        let book = book();
        let out = csv(&book, &of_rows(&book), Lms::Canvas, Some(&roster)).unwrap();
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
    fn points_possible_is_the_maximum_of_the_scores_below_it() {
        // Graded without a GPU, out of what could be graded there: 17.2 of ex01's 20 points.
        let book = book();
        let here = |p: i64, m: i64| Scores {
            points: [("ex01".to_string(), Cents(p)), ("ex02".to_string(), Cents(579))].into(),
            max: [("ex01".to_string(), Cents(m)), ("ex02".to_string(), Cents(579))].into(),
        };
        let out = csv(&book, &[here(1720, 1720), here(860, 1000)], Lms::Canvas, None).unwrap();
        let t = text(&out);
        assert!(t.contains("\nPoints Possible,,,,,17.20,5.79,22.99\nlab1-ana,,,lab1-ana,,17.20,5.79,22.99\n"), "{t}");
        assert!(t.ends_with(",14.79,5.79,20.58\n"), "the student whose maximum differed is scaled: {t}");
        assert_eq!(out.rescaled, ["lab1-bo"]);
    }

    #[test]
    fn canvas_ids_come_from_a_roster_with_canvas_columns() {
        let roster =
            Roster::parse(b"folder,Student,ID,SIS User ID,SIS Login ID,Section\nlab1-bo,\"Bo, B\",42,s42,bo,A\n")
                .unwrap();
        let book = book();
        let out = text(&csv(&book, &of_rows(&book), Lms::Canvas, Some(&roster)).unwrap());
        assert!(out.contains("\n\"Bo, B\",42,s42,bo,A,0.00,10.00,10.00\n"), "{out}");
    }

    #[test]
    fn moodle_gets_an_identifier_column_named_for_what_it_holds() {
        let book = book();
        let roster = Roster::parse(b"github_username,roster_identifier\nana,ana@uni.edu\nbo,bo@uni.edu\n").unwrap();
        assert_eq!(
            text(&csv(&book, &of_rows(&book), Lms::Moodle, Some(&roster)).unwrap()),
            "Email address,ex01,ex02,cuda-lab total (%)\nana@uni.edu,20.00,7.50,91.67\nbo@uni.edu,0.00,10.00,33.33\n"
        );
        let usernames = Roster::parse(b"folder,Username\nlab1-ana,ana\n").unwrap();
        let out = csv(&book, &of_rows(&book), Lms::Moodle, Some(&usernames)).unwrap();
        assert_eq!(text(&out), "Username,ex01,ex02,cuda-lab total (%)\nana,20.00,7.50,91.67\n");
        // One identifier Moodle does not know abandons the whole import: that row goes elsewhere.
        assert_eq!(out.not_in_roster, ["lab1-bo"]);
        let left = String::from_utf8(out.not_imported.clone().unwrap()).unwrap();
        assert_eq!(left, "folder,ex01,ex02,cuda-lab total (%)\nlab1-bo,0.00,10.00,33.33\n");
        assert!(out.describe(Path::new("m.csv"), Lms::Moodle).contains("NOT in m.csv: 1 submission(s)"));
        let without = csv(&book, &of_rows(&book), Lms::Moodle, None).unwrap();
        assert_eq!(text(&without), "Username,ex01,ex02,cuda-lab total (%)\n", "no roster: nobody Moodle could miss");
        assert_eq!(without.not_in_roster.len(), 2);
    }
    /// Issue 47: a student on the roster who handed in nothing was in no CSV.
    #[test]
    fn a_roster_student_with_no_submission_gets_a_zero_row_in_every_file() {
        use crate::batch::gradebook::{add_absent, NO_SUBMISSION};
        let mut book = book();
        let roster =
            Roster::parse(b"github_username,roster_identifier\nana,ana@uni.edu\nbo,bo@uni.edu\ncy,cy@uni.edu\n")
                .unwrap();
        assert_eq!(add_absent(&mut book, &roster), ["cy"]);
        assert_eq!(add_absent(&mut book, &roster), ["cy"], "a second time adds no second row");
        assert_eq!(book.students.len(), 3);
        let cy = book.students.last().unwrap();
        assert_eq!((cy.status.as_str(), cy.total, cy.max_score), (NO_SUBMISSION, 0.0, 30.0));
        let canvas = text(&csv(&book, &of_rows(&book), Lms::Canvas, Some(&roster)).unwrap());
        assert!(canvas.ends_with("\ncy,,,cy@uni.edu,,0.00,0.00,0.00\n"), "{canvas}");
        let moodle = csv(&book, &of_rows(&book), Lms::Moodle, Some(&roster)).unwrap();
        assert!(text(&moodle).ends_with("\ncy@uni.edu,0.00,0.00,0.00\n"), "{}", text(&moodle));
        let gradebook = String::from_utf8(book.csv().unwrap()).unwrap();
        assert!(gradebook.contains("\ncy,cy,0.00,0.00,0.00,30.00,no submission,"), "{gradebook}");
    }

    #[test]
    fn the_moodle_message_has_no_runs_of_spaces() {
        let book = book();
        let out = csv(&book, &of_rows(&book), Lms::Moodle, None).unwrap();
        let said = out.describe(Path::new("m.csv"), Lms::Moodle);
        assert!(said.contains("abandons a whole import"), "{said}");
        assert!(!said.contains("   "), "runs of spaces: {said:?}");
    }
}
