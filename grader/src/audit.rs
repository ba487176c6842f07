//! `grader audit`: checks the scores GitHub Classroom recorded against a fresh
//! regrade, and every student's workflow against the course's.
//!
//! A student can edit the Classroom workflow of their repository and make their
//! own check say anything. The audit finds that after the fact: it regrades the
//! downloaded repositories with the batch machinery ([`crate::batch::run`]),
//! totals each student the way the Classroom reporter does (the sum of the
//! per-test scores of [`crate::classroom::runner_results`]), and lists
//!
//! - every student whose recorded `points_awarded` differs from the regrade;
//! - every repository whose `.github/workflows/classroom.yml` is not byte for
//!   byte the one [`crate::template::classroom_workflow`] renders (line endings
//!   aside), or that holds any other workflow file.
//!
//! The CSV is Classroom's grades download of one assignment. Its columns are
//! those of the REST API's `ClassroomAssignmentGrade`: `assignment_name`,
//! `assignment_url`, `starter_code_url`, `github_username`, `roster_identifier`,
//! `student_repository_name`, `student_repository_url`, `submission_timestamp`,
//! `points_awarded`, `points_available` (and `group_name` for group
//! assignments). Columns are found by name, in any order; only
//! `points_awarded` and one of `student_repository_name` / `github_username`
//! are required.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use kit::Exercise;
use serde::{Deserialize, Serialize};

use crate::batch::{self, gradebook, student::StudentReport, submission};
use crate::{classroom, template};

/// Recorded and regraded totals closer than this are equal: Classroom may keep
/// whole points while the grader's scores have two decimals.
pub const DEFAULT_TOLERANCE: f64 = 0.5;

/// A workflow file larger than this is not read (the course's is a few KiB).
const MAX_WORKFLOW_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Audit {
    pub schema: String,
    /// The batch's seed: `grader batch DIR --seed S` reproduces the regrade.
    pub seed: u64,
    pub backend: String,
    pub tolerance: f64,
    pub score_mismatches: Vec<ScoreMismatch>,
    pub workflow_findings: Vec<WorkflowFinding>,
    /// CSV rows that match no downloaded repository.
    pub not_downloaded: Vec<String>,
    /// Repositories that no CSV row names (or whose row has no score).
    pub not_recorded: Vec<String>,
    /// Repositories compared.
    pub compared: usize,
}

pub const SCHEMA: &str = "cuda-lab.audit/1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScoreMismatch {
    /// The repository folder.
    pub repository: String,
    pub github_username: String,
    pub recorded: f64,
    pub regraded: f64,
    pub recorded_max: Option<f64>,
    pub regraded_max: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct WorkflowFinding {
    pub repository: String,
    /// The file, relative to the repository.
    pub file: String,
    pub problem: String,
}

pub struct Options {
    /// The batch that regrades; its `dir` holds the downloaded repositories.
    pub batch: batch::Options,
    pub classroom_csv: PathBuf,
    pub tolerance: f64,
}

/// Regrades, compares and writes `<out>/audit.json`.
pub fn run(opts: &Options) -> Result<Audit> {
    let recorded = read_classroom_csv(&opts.classroom_csv)?;
    let summary = batch::run(&opts.batch)?;
    crate::class_report::after_batch(&opts.batch.out);
    let book = gradebook::Gradebook::read(&opts.batch.out.join(gradebook::JSON_NAME))?;
    let submissions = submission::discover(&opts.batch.dir)?;

    let mut audit = Audit {
        schema: SCHEMA.into(),
        seed: summary.seed,
        backend: book.backend.clone(),
        tolerance: opts.tolerance,
        score_mismatches: Vec::new(),
        workflow_findings: Vec::new(),
        not_downloaded: Vec::new(),
        not_recorded: Vec::new(),
        compared: 0,
    };
    let mut matched_rows = BTreeSet::new();
    for sub in &submissions {
        audit.workflow_findings.extend(check_workflows(&sub.dir, &sub.name, &opts.batch.exercises));
        let Some((index, row)) = recorded.iter().enumerate().find(|(_, r)| r.names(&sub.name)) else {
            audit.not_recorded.push(sub.name.clone());
            continue;
        };
        matched_rows.insert(index);
        let Some(points) = row.points_awarded else {
            audit.not_recorded.push(sub.name.clone());
            continue;
        };
        let (regraded, regraded_max) = classroom_total(&opts.batch.out.join(gradebook::report_path(&sub.key)))?;
        audit.compared += 1;
        let max_differs = row.points_available.is_some_and(|m| (m - regraded_max).abs() > opts.tolerance);
        if (points - regraded).abs() > opts.tolerance || max_differs {
            audit.score_mismatches.push(ScoreMismatch {
                repository: sub.name.clone(),
                github_username: row.github_username.clone(),
                recorded: points,
                regraded,
                recorded_max: row.points_available,
                regraded_max,
            });
        }
    }
    audit.not_downloaded =
        recorded.iter().enumerate().filter(|(i, _)| !matched_rows.contains(i)).map(|(_, r)| r.label()).collect();
    crate::atomic::write_json(&opts.batch.out.join("audit.json"), &audit)?;
    Ok(audit)
}

impl Audit {
    pub fn is_clean(&self) -> bool {
        self.score_mismatches.is_empty() && self.workflow_findings.is_empty()
    }
}

/// A student's total as the Classroom reporter posts it: the sum over runners
/// of the (rounded) test scores, out of the sum of the runners' maxima.
fn classroom_total(student_json: &Path) -> Result<(f64, f64)> {
    let bytes = std::fs::read(student_json).with_context(|| format!("reading {}", student_json.display()))?;
    let student: StudentReport = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a student report", student_json.display()))?;
    let runners = classroom::runner_results(&student.grades);
    let score = runners.values().flat_map(|r| &r.tests).map(|t| t.score).sum::<f64>();
    let max = runners.values().map(|r| r.max_score).sum::<f64>();
    Ok((classroom::round2(score), classroom::round2(max)))
}

/// One row of Classroom's grades CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedGrade {
    pub github_username: String,
    pub roster_identifier: String,
    pub student_repository_name: String,
    /// `None` where Classroom has no score (no run reported).
    pub points_awarded: Option<f64>,
    pub points_available: Option<f64>,
}

impl RecordedGrade {
    /// Whether this row is the repository downloaded into `folder`: the
    /// repository's name, or (for downloads named by student) the username,
    /// alone or as the `-<username>` suffix Classroom gives repository names.
    fn names(&self, folder: &str) -> bool {
        let user = self.github_username.as_str();
        (!self.student_repository_name.is_empty() && folder == self.student_repository_name)
            || (!user.is_empty() && (folder == user || folder.ends_with(&format!("-{user}"))))
    }

    fn label(&self) -> String {
        [&self.student_repository_name, &self.github_username, &self.roster_identifier]
            .into_iter()
            .find(|s| !s.is_empty())
            .cloned()
            .unwrap_or_else(|| "(a row without a name)".into())
    }
}

/// Reads Classroom's grades CSV (columns by name; a UTF-8 byte-order mark is fine).
pub fn read_classroom_csv(path: &Path) -> Result<Vec<RecordedGrade>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    parse_classroom_csv(&bytes).with_context(|| format!("reading the Classroom grades CSV {}", path.display()))
}

pub fn parse_classroom_csv(bytes: &[u8]) -> Result<Vec<RecordedGrade>> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let header: Vec<String> = reader.headers()?.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
    let column = |name: &str| header.iter().position(|h| h == name);
    let Some(points) = column("points_awarded") else {
        bail!("no `points_awarded` column (columns: {}); download the grades CSV of the assignment", header.join(", "))
    };
    let (repo, user) = (column("student_repository_name"), column("github_username"));
    if repo.is_none() && user.is_none() {
        bail!("neither a `student_repository_name` nor a `github_username` column to match repositories by");
    }
    let (roster, available) = (column("roster_identifier"), column("points_available"));
    let mut rows = Vec::new();
    for (n, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("row {}", n + 2))?;
        let field = |i: Option<usize>| i.and_then(|i| record.get(i)).unwrap_or("").trim().to_string();
        let number = |i: Option<usize>| -> Result<Option<f64>> {
            let text = field(i);
            if text.is_empty() {
                return Ok(None);
            }
            let value: f64 = text.parse().with_context(|| format!("row {}: `{text}` is not a number", n + 2))?;
            Ok(Some(value).filter(|v| v.is_finite()))
        };
        rows.push(RecordedGrade {
            github_username: field(user),
            roster_identifier: field(roster),
            student_repository_name: field(repo),
            points_awarded: number(Some(points))?,
            points_available: number(available)?,
        });
    }
    Ok(rows)
}

/// The repository's workflows against the course's: the Classroom workflow
/// must be exactly the rendered one, and there must be no other (any workflow
/// of the repository runs on the course's runners).
pub fn check_workflows(repo: &Path, repo_name: &str, exercises: &[Exercise]) -> Vec<WorkflowFinding> {
    let finding = |file: &str, problem: String| WorkflowFinding {
        repository: repo_name.to_string(),
        file: file.to_string(),
        problem,
    };
    let mut out = Vec::new();
    let expected = template::classroom_workflow(exercises);
    match read_plain_file(&repo.join(template::WORKFLOW_PATH)) {
        Err(problem) => out.push(finding(template::WORKFLOW_PATH, problem)),
        Ok(found) => {
            let found = String::from_utf8_lossy(&found).replace("\r\n", "\n");
            if let Some(problem) = first_difference(&expected, &found) {
                out.push(finding(template::WORKFLOW_PATH, problem));
            }
        }
    }
    let workflows = repo.join(".github/workflows");
    if let Ok(entries) = std::fs::read_dir(&workflows) {
        let mut others: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| format!(".github/workflows/{name}") != template::WORKFLOW_PATH)
            .collect();
        others.sort();
        for name in others {
            out.push(finding(
                &format!(".github/workflows/{name}"),
                "a workflow the course did not write: it runs on the course's runners too".into(),
            ));
        }
    }
    out
}

/// The bytes of a regular file reached without following a link, or why not.
fn read_plain_file(path: &Path) -> Result<Vec<u8>, String> {
    // Every folder on the way must be a real folder, like the file itself.
    for ancestor in path.ancestors().skip(1).take(2) {
        if std::fs::symlink_metadata(ancestor).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!("`{}` is a symbolic link", ancestor.display()));
        }
    }
    let meta = std::fs::symlink_metadata(path).map_err(|_| "missing: the course's workflow was deleted".to_string())?;
    if meta.file_type().is_symlink() {
        return Err("a symbolic link instead of the course's workflow".into());
    }
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_WORKFLOW_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > MAX_WORKFLOW_BYTES {
        return Err(format!("larger than {MAX_WORKFLOW_BYTES} bytes"));
    }
    Ok(bytes)
}

/// `None` when equal; else the first line that differs, both ways.
fn first_difference(expected: &str, found: &str) -> Option<String> {
    if expected == found {
        return None;
    }
    let (e, f): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), found.lines().collect());
    let n = (0..e.len().max(f.len())).find(|&i| e.get(i) != f.get(i)).unwrap_or(e.len().min(f.len()));
    let show = |l: Option<&&str>| l.map_or("(end of file)".to_string(), |l| format!("`{}`", l.trim()));
    Some(format!(
        "differs from the course's workflow at line {}: expected {}, found {}",
        n + 1,
        show(e.get(n)),
        show(f.get(n))
    ))
}

impl std::fmt::Display for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "\nAudit: {} repositories compared with Classroom's scores (seed {}, backend {}, tolerance {})",
            self.compared, self.seed, self.backend, self.tolerance
        )?;
        writeln!(f, "  {} recorded scores differ from the regrade", self.score_mismatches.len())?;
        for m in &self.score_mismatches {
            let max = m.recorded_max.map(|x| format!("/{x:.2}")).unwrap_or_default();
            writeln!(
                f,
                "    {} ({}): Classroom recorded {:.2}{max}, the regrade gives {:.2}/{:.2}",
                m.repository, m.github_username, m.recorded, m.regraded, m.regraded_max
            )?;
        }
        writeln!(f, "  {} workflow findings", self.workflow_findings.len())?;
        for w in &self.workflow_findings {
            writeln!(f, "    {}: {}: {}", w.repository, w.file, w.problem)?;
        }
        let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
        writeln!(f, "  in the CSV but not downloaded: {}", list(&self.not_downloaded))?;
        writeln!(f, "  downloaded without a recorded score: {}", list(&self.not_recorded))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classroom_csv_columns_are_found_by_name() {
        let csv = "\u{feff}assignment_name,assignment_url,starter_code_url,github_username,roster_identifier,\
                   student_repository_name,student_repository_url,submission_timestamp,points_awarded,points_available\n\
                   hw1,u,s,ana,Ana B,hw1-ana,https://x/hw1-ana,2026-10-01 10:00:00 UTC,37,60\n\
                   hw1,u,s,bo,,hw1-bo,https://x/hw1-bo,,,60\n";
        let rows = parse_classroom_csv(csv.as_bytes()).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].points_awarded, Some(37.0));
        assert_eq!(rows[0].points_available, Some(60.0));
        assert!(rows[0].names("hw1-ana") && rows[0].names("ana") && !rows[0].names("hw1-bo"));
        assert_eq!(rows[1].points_awarded, None, "no run reported: no score, not zero");
        let err = parse_classroom_csv(b"name,score\nana,3\n").unwrap_err();
        assert!(format!("{err:#}").contains("points_awarded"), "{err:#}");
    }

    #[test]
    fn a_workflow_is_compared_line_by_line_and_extra_workflows_are_named() {
        let exercises = crate::registry::select(&["ex02".to_string()]).unwrap();
        let repo = tempfile::tempdir().unwrap();
        let path = repo.path().join(template::WORKFLOW_PATH);
        assert!(check_workflows(repo.path(), "r", &exercises)[0].problem.starts_with("missing"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let expected = template::classroom_workflow(&exercises);
        std::fs::write(&path, expected.replace('\n', "\r\n")).unwrap();
        assert_eq!(check_workflows(repo.path(), "r", &exercises), [], "CRLF checkouts are the same workflow");
        std::fs::write(&path, expected.replace("--backend cuda", "--backend none")).unwrap();
        std::fs::write(path.with_file_name("mine.yml"), "on: push").unwrap();
        let found = check_workflows(repo.path(), "r", &exercises);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].problem.contains("--backend none"), "{found:?}");
        assert_eq!(found[1].file, ".github/workflows/mine.yml");
    }
}
