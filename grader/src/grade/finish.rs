//! A run whose checks have all run, waiting to be scored: [`Pending`] folds
//! the sanitizer pass (which may still be replaying on other cores), the
//! course's policy and the scores into the report. Apart because a batch
//! worker starts the next part on the GPU while this one finishes.

use std::collections::HashMap;
use std::path::PathBuf;

use kit::Exercise;
use libtest_mimic::{Arguments, Conclusion};

use super::compile::BuiltPart;
use crate::not_graded_here;
use crate::policy::Policy;
use crate::report::{Environment, ExerciseReport, GradeReport, PartReport, Status, TestReport};
use crate::sanitize;
use crate::score;

/// A grading run whose checks have all run; the simulator sanitizer pass may
/// still be replaying on other cores. A batch worker starts the next part on
/// the GPU while this one [`finish`](Pending::finish)es.
pub struct Pending(pub(super) Stage);

pub(super) enum Stage {
    Finished(Box<(GradeReport, Conclusion)>),
    Checked(Box<Checked>),
}

/// What the checks left for scoring.
pub(super) struct Checked {
    pub(super) exercises: Vec<Exercise>,
    pub(super) parts: Vec<BuiltPart>,
    pub(super) records: HashMap<String, TestReport>,
    pub(super) ignored: HashMap<String, &'static str>,
    pub(super) stand_ins: std::collections::HashSet<String>,
    /// Timed checks this GPU's calibration does not grade, and why.
    pub(super) uncalibrated: HashMap<String, String>,
    /// Timed checks whose points are scaled by speed (the course's `scaled` credit).
    pub(super) scaled: HashMap<String, crate::credit::Scale>,
    pub(super) policy: Policy,
    pub(super) sanitizer: sanitize::Mode,
    pub(super) pass: Option<sanitize::Pass>,
    pub(super) conclusion: Conclusion,
    pub(super) env_report: Environment,
    pub(super) seed: u64,
    pub(super) root: PathBuf,
    pub(super) sources: String,
    pub(super) test_args: Arguments,
}

impl Pending {
    /// Every verdict the checks gave (before the sanitizer pass adds its own).
    pub fn verdicts(&self) -> Vec<String> {
        match &self.0 {
            Stage::Finished(finished) => finished
                .0
                .exercises
                .iter()
                .flat_map(|e| &e.parts)
                .flat_map(|p| &p.tests)
                .filter_map(|t| t.verdict.clone())
                .collect(),
            Stage::Checked(c) => c.records.values().filter_map(|t| t.verdict.clone()).collect(),
        }
    }

    /// The backend the checks ran on.
    pub fn backend(&self) -> &str {
        match &self.0 {
            Stage::Finished(finished) => &finished.0.environment.backend,
            Stage::Checked(c) => &c.env_report.backend,
        }
    }

    /// Waits for the sanitizer pass, folds it in and scores every part.
    pub fn finish(self) -> (GradeReport, Conclusion) {
        match self.0 {
            Stage::Finished(finished) => *finished,
            Stage::Checked(c) => c.finish(),
        }
    }
}

impl Checked {
    fn finish(self) -> (GradeReport, Conclusion) {
        let Checked {
            exercises,
            parts,
            records,
            ignored,
            stand_ins,
            uncalibrated,
            scaled,
            policy,
            sanitizer,
            pass,
            mut conclusion,
            env_report,
            seed,
            root,
            sources,
            test_args,
        } = self;
        let pass = pass.map(sanitize::Pass::join);
        let mut report = GradeReport::new(seed, &root, &sources, env_report);
        let mut built_iter = parts.into_iter();
        for ex in &exercises {
            let mut ex_report = ExerciseReport {
                id: ex.id.into(),
                title: ex.title.into(),
                score: 0.0,
                max_score: 0.0,
                parts: Vec::new(),
            };
            for part in &ex.parts {
                let built = built_iter.next().expect("one build per part");
                let mut tests: Vec<TestReport> = part
                    .checks
                    .iter()
                    .map(|c| {
                        let name = ex.test_name(part, c);
                        records.get(&name).cloned().unwrap_or_else(|| {
                            let status = if ignored.contains_key(&name) { Status::Ignored } else { Status::NotRun };
                            TestReport::new(name.clone(), c.kind, status)
                        })
                    })
                    .collect();
                for t in &mut tests {
                    if let Some(why) = uncalibrated.get(&t.name) {
                        crate::calibrate::mark_not_graded(t, why);
                    }
                    if let Some(scale) = scaled.get(&t.name) {
                        scale.apply(t);
                    }
                }
                not_graded_here::spread(&mut tests);
                for t in &mut tests {
                    policy.annotate(t, ignored.get(&t.name).copied(), stand_ins.contains(&t.name));
                }
                let (sanitizer, failed_now) = sanitizer.part_summary(pass.as_ref(), ex, part, &test_args, &mut tests);
                conclusion.num_failed += failed_now as u64;
                conclusion.num_passed = conclusion.num_passed.saturating_sub(failed_now as u64);
                score::score_part(part.points, &mut tests);
                ex_report.parts.push(PartReport {
                    name: part.name.into(),
                    file: built.rel,
                    sha256: built.sha256,
                    score: 0.0,
                    max_score: 0.0,
                    compile: built.report,
                    tests,
                    sanitizer,
                });
            }
            report.exercises.push(ex_report);
        }
        report.total_up();
        if let Some(pass) = &pass {
            print!("{}", sanitize::summary(pass, &report));
        }
        (report, conclusion)
    }
}
