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
//! own grading in a child process, or a fake in tests), `check` this machine
//! against the committed file (`--check`), `markdown` the tables
//! of every calibrated model side by side, `counters` the structure checks'
//! figures on the GPU's own counters beside the simulator's (issue 49).

pub mod check;
pub mod choose;
pub mod counters;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_calibrations_read_and_name_only_real_timed_checks() {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let files = file::CalibrationFile::all_in(&file::course_dir(&root));
        assert!(files.iter().any(|(_, f)| f.gpu.name == "NVIDIA H100 80GB HBM3"), "the H100's is committed");
        let plan = families::plan(&root, &crate::registry::all(), false).unwrap();
        for (path, f) in &files {
            assert_eq!(path, &file::path_in(&file::course_dir(&root), &f.gpu.name), "named after its model");
            let named: std::collections::BTreeSet<String> = f.checks.keys().cloned().collect();
            // An exercise just written by `grader new exercise` is not
            // calibrated yet (its CALIBRATION.md still says "(to measure)"):
            // its checks keep their compiled thresholds until `grader calibrate`.
            let uncalibrated = |check: &String| {
                let id = check.split("::").next().unwrap_or_default();
                crate::registry::all().iter().filter(|e| e.id == id).any(|e| {
                    std::fs::read_to_string(root.join(e.dir).join("CALIBRATION.md"))
                        .is_ok_and(|t| t.contains("(to measure)"))
                })
            };
            let wanted: std::collections::BTreeSet<String> =
                plan.checks.iter().filter(|c| named.contains(*c) || !uncalibrated(c)).cloned().collect();
            assert_eq!(named, wanted, "{}: every calibrated timed check, and nothing else", path.display());
            for (name, c) in &f.checks {
                assert!(c.threshold > 0.0 && c.threshold.is_finite(), "{name}");
                for (variant, v) in &c.variants {
                    assert_eq!(v.seeds.len(), v.figures.len(), "{name} {variant}");
                }
            }
        }
    }

    #[test]
    fn a_check_not_graded_here_keeps_a_stand_in_verdict_or_leaves_the_maximum() {
        let mut by_stand_in =
            TestReport::new("ex05::stencil::perf::share-of-copy".into(), kit::CheckKind::Performance, Status::Pass);
        by_stand_in.message = Some("16 lanes per load".into());
        mark_not_graded(&mut by_stand_in, "not graded here: on X ...");
        assert_eq!((by_stand_in.status, by_stand_in.graded_by.as_deref()), (Status::Pass, Some("stand-in")));
        assert!(by_stand_in.message.as_deref().unwrap().starts_with("16 lanes per load\njudged by the simulator"));
        let mut without = TestReport::new(
            "ex03::tiled::perf::faster-than-naive".into(),
            kit::CheckKind::Performance,
            Status::Ignored,
        );
        mark_not_graded(&mut without, "not graded here: on X ...");
        assert_eq!(
            (without.status, without.message.as_deref()),
            (Status::NotGradedHere, Some("not graded here: on X ..."))
        );
    }
}
