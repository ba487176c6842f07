//! Every course platform's file, as a view of one result ([`model::Grade`]):
//! the points, the maximum and each test's outcome are computed once, from a
//! grades JSON and the course's choice of maximum (`[platforms] maximum` in
//! cuda-lab.toml, [`config`]), and each module here only writes them in its
//! platform's format:
//!
//! - GitHub Classroom's reporter results ([`classroom`]) and the job summary
//!   ([`job_summary`]); Gradescope's `results.json` ([`gradescope`]);
//! - PrairieLearn's `results.json` ([`prairielearn`]), Moodle CodeRunner's
//!   combinator-grader JSON ([`coderunner`]), Autolab's autoresult
//!   ([`autolab`]) and JUnit XML for CodeGrade, GitLab and Jenkins ([`junit`]);
//! - the CSV a Canvas or Moodle gradebook imports ([`lms`]).
//!
//! [`outcomes`] is the table of what each platform records for each outcome,
//! which docs/platforms.md shows.

pub mod autolab;
pub mod classroom;
pub mod coderunner;
pub mod config;
pub mod gradescope;
pub mod job_summary;
pub mod junit;
pub mod lms;
pub mod model;
pub mod outcomes;
pub mod prairielearn;
pub mod text;

pub use model::{Cents, Grade, Maximum, Outcome, Test};
pub use text::{first_line, round2, source_line, truncate, SourceLine};
