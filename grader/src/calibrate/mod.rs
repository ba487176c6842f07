//! Performance thresholds measured on the GPU that grades (issue 29).
//!
//! `grader calibrate` grades, on this GPU and over several seeds, every
//! performance check's family of kernels (the reference, the correct and slow
//! variants of the variants corpus and `reference/slow/`) with the grader's
//! own grading and the compiled thresholds switched off, reads each timed
//! check's figure from the grades JSON, places every threshold with one rule
//! and writes one TOML file per GPU model. Grading then takes its thresholds
//! from the file of its GPU's model, or the nearest calibrated one, and says
//! which.
//!
//! Split by concern: `rule` is the rule (pure), `file` the TOML schema and
//! where files live, `choose` which file grades on a GPU, `families` what is
//! measured, `run` the orchestration over a source of figures (the grader's
//! own grading in a child process, or a fake in tests), `markdown` the tables
//! of every calibrated model side by side.

pub mod choose;
pub mod families;
pub mod file;
pub mod markdown;
pub mod rule;
pub mod run;

pub use choose::{choose, Choice, Chosen, How};

use crate::report::{Status, TestReport};

/// The reason a timed check's trial shows when its calibration does not grade it here.
pub const NOT_GRADED_HERE: &str = "not graded here (calibration)";

/// Marks `t`, a timed check this GPU's calibration does not grade (`why`):
/// judged by its measured stand-in where it has one, else not graded here
/// (left out of the maximum, never a failure).
pub fn mark_not_graded(t: &mut TestReport, why: &str) {
    match t.status {
        Status::Pass | Status::Fail | Status::NotCounted => {
            t.graded_by = Some("stand-in".into());
            let own = t.message.take().unwrap_or_default();
            t.message =
                Some(format!("{own}\njudged by the simulator's measured memory behaviour instead of the clock: {why}"));
        }
        Status::Ignored => {
            t.status = Status::NotGradedHere;
            t.verdict = None;
            t.message = Some(why.to_string());
        }
        Status::NotRun | Status::NotGradedHere => {}
    }
}
