//! `--format`: which course platform's results a grading run or `grader
//! report` writes, and the writing of them.

use std::path::PathBuf;

use anyhow::Result;
use grader::{classroom, gradescope};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The report on the terminal and the grades JSON only.
    Human,
    /// GitHub Classroom's autograding-grading-reporter results, one per exercise.
    Classroom,
    /// Gradescope's results.json.
    Gradescope,
    /// The score table and first failures as Markdown, appended to
    /// $GITHUB_STEP_SUMMARY when set (printed otherwise).
    Summary,
    /// PrairieLearn's external-grader results.json.
    #[value(name = "prairielearn")]
    PrairieLearn,
    /// Moodle CodeRunner's combinator-grader JSON, printed (all `grader report` prints).
    #[value(name = "coderunner")]
    CodeRunner,
    /// Autolab's formatted feedback and autoresult, printed last.
    Autolab,
    /// JUnit XML (CodeGrade, GitLab, Jenkins): junit.xml.
    Junit,
}

impl Format {
    /// The file it writes where `--results` does not say.
    pub fn default_file(self) -> &'static str {
        match self {
            Format::Junit => "junit.xml",
            _ => "results.json",
        }
    }
}

/// What stdout already holds when the results are written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Printed {
    /// A grading run: the tests and the score table.
    Summary,
    /// `grader report`: nothing (CodeRunner reads the whole of stdout as its JSON).
    Nothing,
}

pub fn write_format(
    grade: &grader::platforms::Grade,
    format: Format,
    github_output: Option<PathBuf>,
    results: &std::path::Path,
    printed: Printed,
) -> Result<()> {
    use grader::platforms::{autolab, coderunner, junit, prairielearn};
    match format {
        Format::Human => {}
        Format::Classroom => {
            println!("{}", serde_json::to_string_pretty(&classroom::results(grade))?);
            if let Some(path) = github_output.or_else(|| std::env::var_os("GITHUB_OUTPUT").map(PathBuf::from)) {
                classroom::append_github_output(&path, grade)?;
            }
        }
        Format::Gradescope => {
            gradescope::write(grade, results)?;
            println!("Gradescope results written to {}", results.display());
        }
        Format::Summary => {
            let md = grader::job_summary::markdown(grade);
            match std::env::var_os("GITHUB_STEP_SUMMARY").map(PathBuf::from) {
                Some(path) => {
                    use std::io::Write as _;
                    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
                    f.write_all(md.as_bytes())?;
                    println!("job summary appended to {}", path.display());
                }
                None => print!("{md}"),
            }
        }
        Format::PrairieLearn => {
            prairielearn::write(grade, results)?;
            println!("PrairieLearn results written to {}", results.display());
        }
        Format::Junit => {
            junit::write(grade, results)?;
            println!("JUnit XML written to {}", results.display());
        }
        Format::CodeRunner => println!("{}", coderunner::json(grade)?),
        // The autoresult must be the output's last line: nothing is printed after it.
        Format::Autolab if printed == Printed::Summary => {
            print!("{}{}", autolab::problems(grade), autolab::lines(grade)?)
        }
        Format::Autolab => print!("{}", autolab::feedback(grade)?),
    }
    Ok(())
}
