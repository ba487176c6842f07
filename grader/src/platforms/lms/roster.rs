//! `--roster FILE`: which LMS student each submission folder is. A CSV with
//! a header; a row names its submission by `folder` (the folder's name in the
//! class folder), `student_repository_name` or `github_username` (so the
//! grades CSV GitHub Classroom downloads is a roster as it is), and carries
//! the LMS's identifiers in columns named as the LMS names them (Canvas:
//! `Student`, `ID`, `SIS User ID`, `SIS Login ID`, `Section`; Moodle: `Email
//! address`, `Username` or `ID number`) or Classroom's `roster_identifier`.

use std::path::Path;

use anyhow::{bail, Context, Result};

/// The columns a row is matched to a submission folder by.
const MATCHED_BY: [&str; 3] = ["folder", "student_repository_name", "github_username"];

#[derive(Debug, Clone, PartialEq)]
pub struct Roster {
    /// The header as written (trimmed).
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Roster {
    pub fn read(path: &Path) -> Result<Roster> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        Roster::parse(&bytes).with_context(|| format!("reading the roster {}", path.display()))
    }

    /// Columns by name (any case); a UTF-8 byte-order mark, as spreadsheets write, is fine.
    pub fn parse(bytes: &[u8]) -> Result<Roster> {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
        let columns: Vec<String> = reader.headers()?.iter().map(|h| h.trim().to_string()).collect();
        let roster = Roster { columns, rows: Vec::new() };
        if MATCHED_BY.iter().all(|m| roster.column(m).is_none()) {
            bail!(
                "no column to find the submissions by: name one `folder` (the submission folder's name), \
                 `student_repository_name` or `github_username` (columns: {})",
                roster.columns.join(", ")
            );
        }
        let mut rows = Vec::new();
        for (n, record) in reader.records().enumerate() {
            let record = record.with_context(|| format!("row {}", n + 2))?;
            rows.push(record.iter().map(|f| f.trim().to_string()).collect());
        }
        Ok(Roster { rows, ..roster })
    }

    /// The index of the column named `name`, in any case.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.eq_ignore_ascii_case(name))
    }

    /// The value of column `name` in `row` ("" where absent).
    pub fn field<'r>(&'r self, row: &'r [String], name: &str) -> &'r str {
        self.column(name).and_then(|i| row.get(i)).map_or("", String::as_str)
    }

    /// The row of the submission in folder `folder`: its name, its repository's
    /// name, or the `-<username>` suffix Classroom gives repositories.
    pub fn find(&self, folder: &str) -> Option<&[String]> {
        self.rows.iter().map(Vec::as_slice).find(|row| self.matches(row, folder))
    }

    /// Whether `row` names the submission in folder `folder`.
    fn matches(&self, row: &[String], folder: &str) -> bool {
        let (by_folder, repo, user) =
            (self.field(row, "folder"), self.field(row, "student_repository_name"), self.field(row, "github_username"));
        (!by_folder.is_empty() && by_folder == folder)
            || (!repo.is_empty() && repo == folder)
            || (!user.is_empty() && (folder == user || folder.ends_with(&format!("-{user}"))))
    }

    /// The roster's students no folder of `folders` is: they handed in
    /// nothing. Each with the name their row would be found by (its
    /// `folder`, else its repository's name, else its GitHub user name).
    pub fn absent<'r>(&'r self, folders: &[&str]) -> Vec<(String, &'r [String])> {
        self.rows
            .iter()
            .map(Vec::as_slice)
            .filter(|row| !folders.iter().any(|f| self.matches(row, f)))
            .filter_map(|row| {
                let name = MATCHED_BY.iter().map(|c| self.field(row, c)).find(|v| !v.is_empty())?;
                Some((name.to_string(), row))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classrooms_grades_csv_is_a_roster() {
        let csv = "\u{feff}assignment_name,github_username,roster_identifier,student_repository_name,points_awarded\n\
                   lab1,ana,ana@uni.edu,lab1-ana,10\nlab1,bo,bo@uni.edu,,3\n";
        let roster = Roster::parse(csv.as_bytes()).unwrap();
        assert_eq!(roster.field(roster.find("lab1-ana").unwrap(), "roster_identifier"), "ana@uni.edu");
        assert_eq!(roster.field(roster.find("lab1-bo").unwrap(), "ROSTER_IDENTIFIER"), "bo@uni.edu");
        assert!(roster.find("lab1-cy").is_none());
        let absent: Vec<String> = roster.absent(&["lab1-ana"]).into_iter().map(|(n, _)| n).collect();
        assert_eq!(absent, ["bo"], "bo handed in nothing: named by the column the batch would find them by");
        assert!(roster.absent(&["lab1-ana", "lab1-bo"]).is_empty());
    }

    #[test]
    fn a_roster_without_a_column_to_match_by_is_refused() {
        let err = Roster::parse(b"Student,SIS Login ID\nAna,ana\n").unwrap_err().to_string();
        assert!(err.contains("`folder`"), "{err}");
    }
}
