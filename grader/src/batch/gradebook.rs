//! The gradebook: one row per student, as JSON (`gradebook.json`, schema
//! `cuda-lab.gradebook/1`) and CSV for spreadsheets (`gradebook.csv`); and the
//! merge of the gradebooks of several shards into one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::student::StudentReport;
use crate::atomic;
use crate::platforms::{Cents, Grade, Maximum};

pub const SCHEMA: &str = "cuda-lab.gradebook/1";
pub const JSON_NAME: &str = "gradebook.json";
pub const CSV_NAME: &str = "gradebook.csv";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Gradebook {
    pub schema: String,
    pub grader_version: String,
    /// Every student of the batch was graded with inputs from this seed.
    pub seed: u64,
    pub backend: String,
    /// The graded exercises, in order, with their points.
    pub exercises: Vec<ExerciseColumn>,
    /// "i/n" when this is one shard's gradebook; absent for a whole class.
    pub shard: Option<String>,
    /// The maximum every score here is out of (cuda-lab.toml `[platforms]
    /// maximum`, as every platform's file and the class report): `graded-here`,
    /// `full-given` or `full-withheld`. Absent in gradebooks of older graders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<String>,
    /// How timed checks gave their points (`threshold` or `scaled`, the
    /// course's `[performance] credit`), as the students' grades JSON say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit: Option<String>,
    pub students: Vec<Row>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ExerciseColumn {
    pub id: String,
    /// The points every student's score of this exercise is out of: the
    /// maximum most students have under the gradebook's `maximum` (the LMS
    /// files' "Points Possible"), so "full marks" means every point that counts here.
    pub max_score: f64,
}

/// The status of a roster student with no submission ([`add_absent`]).
pub const NO_SUBMISSION: &str = "no submission";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// The submission folder's name, percent-encoded where it is not `[A-Za-z0-9._-]`.
    pub key: String,
    /// The folder's name as people read it.
    pub name: String,
    /// Per exercise id, in points rounded to hundredths (as every platform's file).
    pub scores: BTreeMap<String, f64>,
    /// This student's maximum per exercise id (the column's, unless a check
    /// could not be graded for them alone).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub max_scores: BTreeMap<String, f64>,
    pub total: f64,
    pub max_score: f64,
    /// See [`StudentReport::status`].
    pub status: String,
    pub notes: Vec<String>,
    /// The student's full report, relative to the gradebook's folder.
    pub report: String,
}

impl Row {
    /// The student's row, out of `maximum`: the points every platform's file
    /// gets (crate::platforms::Grade), in hundredths.
    pub fn of(student: &StudentReport, maximum: Maximum) -> Row {
        let grade = Grade::of(&student.grades, maximum);
        Row {
            key: student.key.clone(),
            name: student.name.clone(),
            scores: grade.exercises.iter().map(|e| (e.id.to_string(), e.points.points())).collect(),
            max_scores: grade.exercises.iter().map(|e| (e.id.to_string(), e.max.points())).collect(),
            total: grade.points.points(),
            max_score: grade.max.points(),
            status: student.status.clone(),
            notes: student.notes.clone(),
            report: report_path(&student.key),
        }
    }
}

/// Each exercise's column: the maximum most rows have (the largest of
/// equals), else `full` (the exercise's points) when no row has one.
pub fn columns(full: &[(String, f64)], rows: &[Row]) -> Vec<ExerciseColumn> {
    full.iter()
        .map(|(id, points)| {
            let mut counts: BTreeMap<Cents, usize> = BTreeMap::new();
            for m in rows.iter().filter_map(|r| r.max_scores.get(id)) {
                *counts.entry(Cents::of_points(*m)).or_default() += 1;
            }
            let max = counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0))).map(|(c, _)| c.points());
            ExerciseColumn { id: id.clone(), max_score: max.unwrap_or(Cents::of_points(*points).points()) }
        })
        .collect()
}

/// Where a student's report lives, relative to the output folder.
pub fn report_path(key: &str) -> String {
    format!("submissions/{key}.json")
}

impl Gradebook {
    /// The total every student is out of: the sum of the columns.
    pub fn total_max(&self) -> f64 {
        self.exercises.iter().map(|e| Cents::of_points(e.max_score)).sum::<Cents>().points()
    }

    /// Writes `gradebook.json` and `gradebook.csv` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        atomic::write_json(&dir.join(JSON_NAME), self)?;
        atomic::write_if_changed(&dir.join(CSV_NAME), &self.csv()?)?;
        Ok(())
    }

    pub fn read(path: &Path) -> Result<Gradebook> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let book: Gradebook =
            serde_json::from_slice(&bytes).with_context(|| format!("{} is not a gradebook", path.display()))?;
        if book.schema != SCHEMA {
            bail!("{}: schema `{}`, expected `{SCHEMA}`", path.display(), book.schema);
        }
        Ok(book)
    }

    /// `key,name,ex01,…,total,max,status,notes`: scores with two decimals.
    pub fn csv(&self) -> Result<Vec<u8>> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header = vec!["key".to_string(), "name".into()];
        header.extend(self.exercises.iter().map(|e| e.id.clone()));
        header.extend(["total", "max", "status", "notes"].map(String::from));
        w.write_record(&header)?;
        for row in &self.students {
            let mut record = vec![row.key.clone(), row.name.clone()];
            record
                .extend(self.exercises.iter().map(|e| format!("{:.2}", row.scores.get(&e.id).copied().unwrap_or(0.0))));
            record.extend([
                format!("{:.2}", row.total),
                format!("{:.2}", row.max_score),
                row.status.clone(),
                row.notes.join("; "),
            ]);
            w.write_record(&record)?;
        }
        w.into_inner().map_err(|e| anyhow::anyhow!("writing the CSV: {e}"))
    }
}

/// Adds a row for every student of `roster` no row is (they handed in
/// nothing): 0 points of every column, status [`NO_SUBMISSION`], so they are
/// in the gradebook, every LMS file and the class report rather than missing
/// from all of them. Returns their names; rows added before are kept once.
pub fn add_absent(book: &mut Gradebook, roster: &crate::lms::roster::Roster) -> Vec<String> {
    let folders: Vec<&str> =
        book.students.iter().filter(|r| r.status != NO_SUBMISSION).map(|r| r.name.as_str()).collect();
    let absent: Vec<String> = roster.absent(&folders).into_iter().map(|(name, _)| name).collect();
    book.students.retain(|r| r.status != NO_SUBMISSION);
    let total_max = book.total_max();
    for name in &absent {
        let key = super::submission::key_of(std::ffi::OsStr::new(name));
        book.students.push(Row {
            report: report_path(&key),
            key,
            name: name.clone(),
            scores: book.exercises.iter().map(|e| (e.id.clone(), 0.0)).collect(),
            max_scores: book.exercises.iter().map(|e| (e.id.clone(), e.max_score)).collect(),
            total: 0.0,
            max_score: total_max,
            status: NO_SUBMISSION.into(),
            notes: vec!["on the roster, but no submission folder in the class: scored 0".into()],
        });
    }
    absent
}

/// [`add_absent`] on the gradebook in `dir`, written back when it changed
/// (then `true` comes back with the names).
pub fn add_absent_in(dir: &Path, roster: &crate::lms::roster::Roster) -> Result<(Vec<String>, bool)> {
    let path = dir.join(JSON_NAME);
    let mut book = Gradebook::read(&path)?;
    let before = book.clone();
    let absent = add_absent(&mut book, roster);
    let changed = book != before;
    if changed {
        book.write(dir)?;
    }
    Ok((absent, changed))
}

pub const PARTS_CSV_NAME: &str = "gradebook-parts.csv";

/// `gradebook-parts.csv`: one row per student and part, for an LMS import that
/// wants a grade and a comment per part: `key,name,exercise,part,score,max,
/// outcome,failed,first_failure,verdict,message` (the first failed test, its
/// verdict, and its message's first line). Scores as in `gradebook.csv`.
pub fn parts_csv(book: &Gradebook, students: &[StudentReport]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "key",
        "name",
        "exercise",
        "part",
        "score",
        "max",
        "outcome",
        "failed",
        "first_failure",
        "verdict",
        "message",
    ])?;
    for row in &book.students {
        let Some(student) = students.iter().find(|s| s.key == row.key) else { continue };
        for e in &student.grades.exercises {
            for p in &e.parts {
                let failed: Vec<_> = p.tests.iter().filter(|t| t.status == crate::report::Status::Fail).collect();
                let first = failed.first();
                let message = first
                    .and_then(|t| t.message.as_deref())
                    .or(p.compile.message.as_deref())
                    .and_then(|m| m.lines().next())
                    .map(|m| m.chars().take(300).collect::<String>())
                    .unwrap_or_default();
                w.write_record([
                    row.key.clone(),
                    row.name.clone(),
                    e.id.clone(),
                    p.name.clone(),
                    format!("{:.2}", p.score),
                    format!("{:.2}", p.max_score),
                    super::part::Outcome::of(p).label().to_string(),
                    failed.len().to_string(),
                    first.map(|t| t.name.clone()).unwrap_or_default(),
                    first.and_then(|t| t.verdict.clone()).unwrap_or_default(),
                    message,
                ])?;
            }
        }
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("writing the CSV: {e}"))
}

/// Writes `gradebook-parts.csv` into `dir` from its gradebook and students' reports.
pub fn write_parts_csv(dir: &Path) -> Result<()> {
    let book = Gradebook::read(&dir.join(JSON_NAME))?;
    let mut students = Vec::new();
    for row in &book.students {
        if let Ok(bytes) = std::fs::read(dir.join(&row.report)) {
            students.push(serde_json::from_slice::<StudentReport>(&bytes)?);
        }
    }
    atomic::write_if_changed(&dir.join(PARTS_CSV_NAME), &parts_csv(&book, &students)?)?;
    Ok(())
}

/// Combines shard gradebooks into one, in `out` (with the students' reports,
/// where they sit next to their gradebook). The shards must come from one
/// batch: the same seed, backend and exercises. A student in two shards must
/// have the same row in both.
pub fn merge(paths: &[PathBuf], out: &Path) -> Result<Gradebook> {
    let Some(first) = paths.first() else { bail!("name at least one gradebook.json to merge") };
    let mut merged = Gradebook::read(first)?;
    merged.shard = None;
    merged.students.clear();
    let mut rows: BTreeMap<String, (Row, &PathBuf)> = BTreeMap::new();
    for path in paths {
        let book = Gradebook::read(path)?;
        for (what, same) in [
            ("seed", book.seed == merged.seed),
            ("backend", book.backend == merged.backend),
            ("exercises", book.exercises == merged.exercises),
        ] {
            if !same {
                bail!(
                    "{} and {} were graded with a different {what}: shards of one class must share it \
                     (pass the same --seed and --exercises to every shard)",
                    first.display(),
                    path.display()
                );
            }
        }
        for row in book.students {
            if let Some((other, other_path)) = rows.get(&row.key) {
                if *other != row {
                    bail!(
                        "student `{}` is in {} and {} with different results: were these graded by one batch?",
                        row.name,
                        other_path.display(),
                        path.display()
                    );
                }
                continue;
            }
            copy_report(path, &row, out)?;
            rows.insert(row.key.clone(), (row, path));
        }
    }
    merged.students = rows.into_values().map(|(row, _)| row).collect();
    merged.write(out)?;
    Ok(merged)
}

/// Refuses a merge that lacks shards: every gradebook must be a shard `i/n`
/// of the same `n`, and every `i` of `0..n` present (a merge of a partial set
/// would silently drop whole groups of students). `grader merge --partial`
/// skips this check.
pub fn check_all_shards(paths: &[PathBuf]) -> Result<()> {
    let mut of: Option<u32> = None;
    let mut seen = std::collections::BTreeSet::new();
    for path in paths {
        let Some(shard) = Gradebook::read(path)?.shard else { continue };
        let parsed = shard.split_once('/').and_then(|(i, n)| Some((i.parse::<u32>().ok()?, n.parse::<u32>().ok()?)));
        let Some((i, n)) = parsed else { bail!("{}: shard `{shard}` is not of the form i/n", path.display()) };
        if of.is_some_and(|m| m != n) {
            bail!("{}: shard {shard} is of a class split {n} ways, the others {} ways", path.display(), of.unwrap());
        }
        of = Some(n);
        seen.insert(i);
    }
    if let Some(n) = of {
        let missing: Vec<String> = (0..n).filter(|i| !seen.contains(i)).map(|i| format!("{i}/{n}")).collect();
        if !missing.is_empty() {
            bail!(
                "shard(s) {} missing: their students would be left out. Grade them (rerun the batch; it resumes), \
                 or pass --partial to merge what is there",
                missing.join(", ")
            );
        }
    }
    Ok(())
}

fn copy_report(gradebook: &Path, row: &Row, out: &Path) -> Result<()> {
    let from = gradebook.parent().unwrap_or(Path::new(".")).join(&row.report);
    let to = out.join(&row.report);
    if from.is_file() && from.canonicalize().ok() != to.canonicalize().ok() {
        let bytes = std::fs::read(&from).with_context(|| format!("reading {}", from.display()))?;
        atomic::write_if_changed(&to, &bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(seed: u64, rows: &[(&str, f64)]) -> Gradebook {
        Gradebook {
            schema: SCHEMA.into(),
            grader_version: "0".into(),
            seed,
            backend: "none".into(),
            exercises: vec![ExerciseColumn { id: "ex01".into(), max_score: 20.0 }],
            shard: Some("0/2".into()),
            maximum: None,
            credit: None,
            students: rows
                .iter()
                .map(|&(key, score)| Row {
                    key: key.into(),
                    name: format!("{key}, the student"),
                    scores: [("ex01".to_string(), score)].into(),
                    max_scores: Default::default(),
                    total: score,
                    max_score: 20.0,
                    status: "graded".into(),
                    notes: vec![],
                    report: report_path(key),
                })
                .collect(),
        }
    }

    fn saved(dir: &Path, name: &str, b: &Gradebook) -> PathBuf {
        let d = dir.join(name);
        b.write(&d).unwrap();
        d.join(JSON_NAME)
    }

    #[test]
    fn csv_quotes_names_and_formats_scores() {
        let text = String::from_utf8(book(1, &[("ana", 12.5)]).csv().unwrap()).unwrap();
        assert_eq!(text, "key,name,ex01,total,max,status,notes\nana,\"ana, the student\",12.50,12.50,20.00,graded,\n");
    }

    #[test]
    fn a_partial_set_of_shards_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let shard = |name: &str, s: &str| {
            let mut b = book(1, &[(name, 1.0)]);
            b.shard = Some(s.into());
            saved(dir.path(), name, &b)
        };
        let (a, b, c) = (shard("a", "0/3"), shard("b", "1/3"), shard("c", "2/3"));
        check_all_shards(&[a.clone(), b.clone(), c]).unwrap();
        let err = check_all_shards(&[a.clone(), b]).unwrap_err().to_string();
        assert!(err.contains("shard(s) 2/3 missing") && err.contains("--partial"), "{err}");
        let err = check_all_shards(&[a, shard("d", "1/4")]).unwrap_err().to_string();
        assert!(err.contains("split 4 ways"), "{err}");
    }

    #[test]
    fn merge_unions_shards_and_rejects_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        let a = saved(dir.path(), "a", &book(1, &[("ana", 1.0), ("bob", 2.0)]));
        let b = saved(dir.path(), "b", &book(1, &[("cy", 3.0), ("bob", 2.0)]));
        let merged = merge(&[a.clone(), b], &dir.path().join("all")).unwrap();
        let keys: Vec<&str> = merged.students.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["ana", "bob", "cy"]);
        assert_eq!(merged.shard, None);
        assert!(dir.path().join("all").join(CSV_NAME).is_file());

        let conflict = saved(dir.path(), "c", &book(1, &[("bob", 3.0)]));
        let err = merge(&[a.clone(), conflict], &dir.path().join("x")).unwrap_err().to_string();
        assert!(err.contains("different results"), "{err}");
        let other_seed = saved(dir.path(), "d", &book(2, &[("dee", 3.0)]));
        let err = merge(&[a, other_seed], &dir.path().join("y")).unwrap_err().to_string();
        assert!(err.contains("different seed"), "{err}");
    }
}
