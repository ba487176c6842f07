//! The result every platform shows: points, maximum and each test's outcome,
//! computed once from a grades JSON and the course's choice of maximum
//! ([`Maximum`], `[platforms] maximum` in cuda-lab.toml).
//!
//! Points are kept in hundredths ([`Cents`]): each exercise's maximum is
//! rounded once and shared among its tests by largest remainder, so the
//! tests of an exercise add up to its maximum, and the exercises to the
//! total, exactly, in every file.

use std::fmt;
use std::iter::Sum;
use std::ops::Add;

use serde::{Deserialize, Serialize};

use super::text::{source_line, SourceLine};
use crate::report::{CompileStatus, GradeReport, PartReport, Status, TestReport};

/// Points in hundredths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cents(pub i64);

impl Cents {
    pub const ZERO: Cents = Cents(0);

    pub fn of_points(points: f64) -> Cents {
        Cents((points * 100.0).round() as i64)
    }

    /// As a JSON number: 17.2 (the nearest double to the decimal).
    pub fn points(self) -> f64 {
        self.0 as f64 / 100.0
    }

    /// `self` out of `of` scaled to `to` (rounded once).
    pub fn scaled(self, of: Cents, to: Cents) -> Cents {
        if of.0 == 0 {
            return Cents::ZERO;
        }
        Cents((self.0 as f64 * to.0 as f64 / of.0 as f64).round() as i64).min(to)
    }
}

impl fmt::Display for Cents {
    /// `17.20`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        write!(f, "{sign}{}.{:02}", self.0.abs() / 100, self.0.abs() % 100)
    }
}

impl Add for Cents {
    type Output = Cents;
    fn add(self, o: Cents) -> Cents {
        Cents(self.0 + o.0)
    }
}

impl Sum for Cents {
    fn sum<I: Iterator<Item = Cents>>(iter: I) -> Cents {
        Cents(iter.map(|c| c.0).sum())
    }
}

/// Which maximum the platforms receive: cuda-lab.toml `[platforms] maximum`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Maximum {
    /// The grades JSON's own maximum: what the course's policy left out of it
    /// (checks this machine cannot run) stays out, so the maximum can be lower
    /// without a GPU (ex01: 17.2 of 20).
    #[default]
    GradedHere,
    /// Every check's points, always (`grader list`); a check not graded here
    /// is given its points when nothing else of its part lost any.
    FullGiven,
    /// Every check's points, always; a check not graded here earns nothing.
    FullWithheld,
}

impl Maximum {
    pub fn name(self) -> &'static str {
        match self {
            Maximum::GradedHere => "graded-here",
            Maximum::FullGiven => "full-given",
            Maximum::FullWithheld => "full-withheld",
        }
    }
}

/// What every platform records for a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// Ran and lost its points; or not counted (its part's correctness
    /// failed); or its part did not compile (verdict `compile-error`).
    Failed,
    /// In the maximum but not run (a test filter left it out).
    NotRun,
    /// This machine could not run it (no GPU, or an instruction the simulator
    /// lacks): the maximum decides whether it costs, gives or counts nothing.
    NotGradedHere,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [Outcome::Passed, Outcome::Failed, Outcome::NotRun, Outcome::NotGradedHere];

    fn of(t: &TestReport) -> Outcome {
        if t.not_graded.is_some() {
            return Outcome::NotGradedHere;
        }
        match t.status {
            Status::Pass => Outcome::Passed,
            Status::Fail | Status::NotCounted => Outcome::Failed,
            Status::NotRun => Outcome::NotRun,
            Status::Ignored | Status::NotGradedHere => Outcome::NotGradedHere,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::NotRun => "not run",
            Outcome::NotGradedHere => "not graded here",
        }
    }
}

/// One test as every platform shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Test<'r> {
    pub exercise: &'r str,
    pub part: &'r str,
    pub report: &'r TestReport,
    pub outcome: Outcome,
    pub points: Cents,
    pub max: Cents,
    /// `verdict: message`, or why it was not graded; the whole text.
    pub message: String,
    /// Where in the student's file, when the message (or the compiler) says.
    pub at: Option<SourceLine>,
}

impl Test<'_> {
    pub fn name(&self) -> &str {
        &self.report.name
    }

    /// Whether it cost the student nothing (a tick where a platform has only two states).
    pub fn is_ok(&self) -> bool {
        self.points == self.max && self.outcome != Outcome::Failed && self.outcome != Outcome::NotRun
    }

    /// The outcome and the message's first line, said once ("failed: race: ...").
    pub fn headline(&self) -> String {
        let (label, line) = (self.outcome.label(), super::text::first_line(&self.message));
        match line {
            "" => label.to_string(),
            _ if line.starts_with(label) => line.to_string(),
            _ => format!("{label}: {line}"),
        }
    }

    /// The failure's kind in one word: the verdict, else the outcome.
    pub fn verdict(&self) -> String {
        self.report.verdict.clone().unwrap_or_else(|| self.report.status.label().to_string())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Exercise<'r> {
    pub id: &'r str,
    pub title: &'r str,
    pub points: Cents,
    pub max: Cents,
    pub tests: Vec<Test<'r>>,
}

/// A grading's result, as every platform receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Grade<'r> {
    pub report: &'r GradeReport,
    pub maximum: Maximum,
    pub points: Cents,
    pub max: Cents,
    pub exercises: Vec<Exercise<'r>>,
}

impl<'r> Grade<'r> {
    pub fn of(report: &'r GradeReport, maximum: Maximum) -> Grade<'r> {
        let exercises: Vec<Exercise> = report
            .exercises
            .iter()
            .map(|e| {
                let mut raw = Vec::new();
                for p in &e.parts {
                    let clean = p.tests.iter().all(|t| !matches!(Outcome::of(t), Outcome::Failed | Outcome::NotRun));
                    for t in &p.tests {
                        raw.push(raw_test(e.id.as_str(), p, t, maximum, clean));
                    }
                }
                let max = Cents::of_points(raw.iter().map(|r| r.max).sum());
                let shares = largest_remainder(&raw.iter().map(|r| r.max).collect::<Vec<_>>(), max);
                let tests: Vec<Test> = raw
                    .into_iter()
                    .zip(shares)
                    .map(|(r, max)| {
                        let points = if r.max <= 0.0 {
                            Cents::ZERO
                        } else if r.points >= r.max - 1e-9 {
                            max
                        } else {
                            Cents(((r.points / r.max) * max.0 as f64).round() as i64).clamp(Cents::ZERO, max)
                        };
                        Test { points, max, ..r.test }
                    })
                    .collect();
                Exercise { id: &e.id, title: &e.title, points: tests.iter().map(|t| t.points).sum(), max, tests }
            })
            .collect();
        Grade {
            report,
            maximum,
            points: exercises.iter().map(|e| e.points).sum(),
            max: exercises.iter().map(|e| e.max).sum(),
            exercises,
        }
    }

    pub fn tests(&self) -> impl Iterator<Item = &Test<'r>> {
        self.exercises.iter().flat_map(|e| &e.tests)
    }

    /// Points out of the maximum, in [0, 1] (0 when nothing could be graded).
    pub fn fraction(&self) -> f64 {
        if self.max.0 > 0 {
            (self.points.0 as f64 / self.max.0 as f64).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// "18.60 / 20.00 points" with, where the maximum leaves points out or
    /// withholds them, one sentence saying so.
    pub fn headline(&self) -> String {
        let mut line = format!("{} / {} points", self.points, self.max);
        let not_graded: Vec<&Test> = self.tests().filter(|t| t.outcome == Outcome::NotGradedHere).collect();
        if !not_graded.is_empty() {
            let how = match self.maximum {
                Maximum::GradedHere => "out of what can be graded here",
                Maximum::FullGiven => "the checks a GPU grades are given where nothing else of their part lost points",
                Maximum::FullWithheld => "the checks a GPU grades earn nothing here",
            };
            line += &format!(" ({how}; {} need a GPU)", crate::words::count(not_graded.len(), "check"));
        }
        line
    }

    /// The grader's score table, the platforms' free text.
    pub fn summary(&self) -> String {
        let mut out = self.report.summary();
        if self.points.points() != self.report.score || self.max.points() != self.report.max_score {
            out +=
                &format!("  on this platform ([platforms] maximum = {}): {}\n", self.maximum.name(), self.headline());
        }
        out
    }
}

struct Raw<'r> {
    test: Test<'r>,
    points: f64,
    max: f64,
}

fn raw_test<'r>(exercise: &'r str, p: &'r PartReport, t: &'r TestReport, maximum: Maximum, clean: bool) -> Raw<'r> {
    let outcome = Outcome::of(t);
    let full = t.max_score + t.not_graded.as_ref().map_or(0.0, |n| n.points);
    let (points, max) = match (outcome, maximum) {
        (Outcome::NotGradedHere, Maximum::GradedHere) => (t.score, t.max_score),
        (Outcome::NotGradedHere, Maximum::FullGiven) => (if clean { full } else { 0.0 }, full),
        (Outcome::NotGradedHere, Maximum::FullWithheld) => (0.0, full),
        _ => (t.score, t.max_score),
    };
    let message = message(p, t, full);
    let at = source_line(&message).or_else(|| compile_line(p));
    let test = Test { exercise, part: &p.name, report: t, outcome, points: Cents::ZERO, max: Cents::ZERO, message, at };
    Raw { test, points, max }
}

fn message(p: &PartReport, t: &TestReport, full: f64) -> String {
    if let Some(n) = &t.not_graded {
        return format!("not graded here ({}): worth {} point(s) where a GPU grades it", n.why, Cents::of_points(full));
    }
    let text = [t.verdict.as_deref(), t.message.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(": ");
    if p.compile.status == CompileStatus::Error && t.status != Status::Pass {
        // The compiler's first error is what the student fixes; the test only says it could not run.
        if let Some(first) = p.compile.diagnostics.first() {
            return format!("{text}\n{first}");
        }
    }
    text
}

fn compile_line(p: &PartReport) -> Option<SourceLine> {
    let d = p.compile.diagnostics.first()?;
    Some(SourceLine { file: d.file.clone(), line: d.line? })
}

/// `total` shared in proportion to `weights` (points), each rounded to a
/// hundredth, largest remainders first, so that they add up to `total`.
pub fn largest_remainder(weights: &[f64], total: Cents) -> Vec<Cents> {
    let sum: f64 = weights.iter().sum();
    if sum <= 0.0 || total.0 <= 0 {
        return vec![Cents::ZERO; weights.len()];
    }
    let exact: Vec<f64> = weights.iter().map(|w| w / sum * total.0 as f64).collect();
    let mut shares: Vec<i64> = exact.iter().map(|x| x.floor() as i64).collect();
    let mut left = total.0 - shares.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] > 0.0).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b)));
    for &i in order.iter().cycle().take(order.len() * 2) {
        if left == 0 {
            break;
        }
        shares[i] += 1;
        left -= 1;
    }
    shares.into_iter().map(Cents).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_rounded_total() {
        let thirds = largest_remainder(&[1.0 / 3.0; 3], Cents(100));
        assert_eq!(thirds, [Cents(34), Cents(33), Cents(33)]);
        let w = [2.3, 0.575, 0.575, 1.15, 1.15, 1.15, 1.15, 1.15, 1.15, 1.15, 1.15, 1.15, 1.15, 1.15, 1.15, 1.15, 1.15];
        let total = Cents::of_points(w.iter().sum());
        assert_eq!(largest_remainder(&w, total).into_iter().sum::<Cents>(), total);
        assert_eq!(largest_remainder(&[0.0, 1.0], Cents(0)), [Cents(0), Cents(0)]);
    }

    #[test]
    fn cents_print_and_scale() {
        assert_eq!(Cents(1720).to_string(), "17.20");
        assert_eq!(Cents(5).to_string(), "0.05");
        assert_eq!(Cents(1720).scaled(Cents(1720), Cents(2000)), Cents(2000));
        assert_eq!(Cents(860).scaled(Cents(1720), Cents(2000)), Cents(1000));
        assert_eq!(Cents(1).scaled(Cents(3), Cents(100)), Cents(33));
    }
}
