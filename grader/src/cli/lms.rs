//! `--lms-csv` and its companions, shared by `batch`, `merge` and `class-report`.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// The class's scores for an LMS gradebook (docs/platforms.md).
#[derive(clap::Args)]
pub struct LmsArgs {
    /// Also write the scores as a CSV the LMS's gradebook imports: one row per
    /// student, a column per exercise and the total.
    #[arg(long, value_name = "FILE")]
    lms_csv: Option<PathBuf>,
    /// Which LMS the CSV is for.
    #[arg(long, value_enum, default_value_t = grader::lms::Lms::Canvas, requires = "lms_csv")]
    lms: grader::lms::Lms,
    /// Who each submission folder is in the LMS: a CSV with a `folder`,
    /// `student_repository_name` or `github_username` column and the LMS's
    /// identifier columns (Classroom's grades CSV works as it is).
    #[arg(long, value_name = "FILE", requires = "lms_csv")]
    roster: Option<PathBuf>,
    /// Which maximum the CSV's scores are out of (default: cuda-lab.toml
    /// `[platforms] maximum`, else graded-here).
    #[arg(long, value_enum, requires = "lms_csv")]
    maximum: Option<grader::platforms::Maximum>,
}

impl LmsArgs {
    /// Writes the CSV from the gradebook in `dir`, when asked for.
    pub fn write(&self, dir: &Path) -> Result<()> {
        if let Some(file) = &self.lms_csv {
            let root = super::default_root()?;
            let maximum = grader::platforms::config::maximum(&root, self.maximum)?;
            let written = grader::lms::write(dir, file, self.lms, self.roster.as_deref(), maximum)?;
            println!("{}", written.describe(file, self.lms));
        }
        Ok(())
    }
}
