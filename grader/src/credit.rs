//! Partial credit by speed (issue 38), the course's choice in cuda-lab.toml:
//!
//! ```toml
//! [performance]
//! credit = "scaled"   # or "threshold" (the default): pass or fail at the bar
//! ```
//!
//! Under `scaled`, a timed check graded by the clock scores its points times
//! [`crate::calibrate::rule::scaled_credit`] of its figure: every point within
//! 1.2x the reference's time on that GPU, none at or under the fastest slow
//! kernel of its family, in quarter steps between (Stanford CS149's
//! `T_ref / T`). The verdict stays the bar's, so a kernel gets the same
//! verdict on every GPU; only the points are scaled.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::calibrate::rule::scaled_credit;
use crate::course::CONFIG_FILE;
use crate::report::{Status, TestReport};

/// How a timed check's points are given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Credit {
    /// All or nothing at the calibrated bar.
    #[default]
    Threshold,
    /// In steps between the slow family and the reference.
    Scaled,
}

#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    performance: Section,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct Section {
    credit: Option<Credit>,
}

impl Credit {
    /// As cuda-lab.toml and `--credit` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Credit::Threshold => "threshold",
            Credit::Scaled => "scaled",
        }
    }
}

/// `flag` where given (a batch passes its course's choice to its workers,
/// whose root is a staged submission), else the course's cuda-lab.toml under `root`.
pub fn resolve(root: &Path, flag: Option<Credit>) -> Result<Credit> {
    flag.map_or_else(|| of_course(root), Ok)
}

/// The course's choice, from cuda-lab.toml under `root` (`threshold` without one).
pub fn of_course(root: &Path) -> Result<Credit> {
    let path = root.join(CONFIG_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(parse(&text).with_context(|| format!("reading [performance] in {}", path.display()))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Credit::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// The share of the reference's speed 51.4's example kernel runs at.
pub const EXAMPLE_SHARE: f64 = 0.65;

impl Credit {
    /// What the credit means for a student, with what a kernel at
    /// [`EXAMPLE_SHARE`] of the reference's speed gets under it: the report's
    /// header and each README's grading section say it.
    pub fn describe(self) -> String {
        match self {
            Credit::Threshold => format!(
                "credit `threshold`: a timed check's points are all or nothing at its bar (about 0.7 of the \
                 reference's speed on the GPU that grades it), so a kernel at {EXAMPLE_SHARE} of the reference's \
                 speed gets none of them"
            ),
            Credit::Scaled => format!(
                "credit `scaled`: a timed check's points come in quarter steps of the kernel's share of the \
                 reference's speed on the GPU that grades it (every point from 1/1.2 of it, none at or under the \
                 slowest mistake of its family), so a kernel at {EXAMPLE_SHARE} of the reference's speed gets {:.0} % \
                 of them",
                100.0 * scaled_credit(EXAMPLE_SHARE, 1.0, 1.0 / 1.2, 0.0)
            ),
        }
    }
}

/// Each exercise README's paragraph on the course's credit (issue 51.4), the
/// same text in every README (and the new-exercise template): `credit` is the
/// course's choice. A test keeps the READMEs equal to it.
pub fn readme_paragraph(credit: Credit) -> String {
    let other = match credit {
        Credit::Threshold => Credit::Scaled,
        Credit::Scaled => Credit::Threshold,
    };
    let share = |c: Credit| match c {
        Credit::Threshold => "none of the check's points".to_string(),
        Credit::Scaled => {
            format!("{:.0} % of the check's points", 100.0 * scaled_credit(EXAMPLE_SHARE, 1.0, 1.0 / 1.2, 0.0))
        }
    };
    let how = |c: Credit| {
        match c {
        Credit::Threshold => "all or nothing at the check's bar, about 0.7 of the reference's speed on the GPU that grades it",
        Credit::Scaled => "in quarter steps of your kernel's share of the reference's speed on the GPU that grades it, every point from 1/1.2 of it",
    }
    };
    format!(
        "**Credit for speed.** This course gives a timed check its points by `{}` (`[performance] credit` in\n\
         `cuda-lab.toml`): {}. A correct kernel at {EXAMPLE_SHARE} of the reference's speed gets {}. Under `{}`,\n\
         the other choice, it would get {} ({}). Your report's header says which credit applies.\n",
        credit.name(),
        how(credit),
        share(credit),
        other.name(),
        share(other),
        how(other)
    )
}

fn parse(text: &str) -> Result<Credit> {
    let file: File = toml::from_str(text)?;
    Ok(file.performance.credit.unwrap_or_default())
}

/// Where a check's credit runs from on one GPU: its calibration's figures
/// (kept in the report, where the HTML chart reads them).
pub use crate::report::CreditScale as Scale;

impl Scale {
    /// Gives `t` (a timed check that ran, graded by the clock) its share of
    /// the points, and says where its figure sits.
    pub fn apply(&self, t: &mut TestReport) {
        let Some(figure) = t.perf.as_ref().map(|p| p.value) else { return };
        if t.graded_by.is_some() || !matches!(t.status, Status::Pass | Status::Fail) {
            return;
        }
        let credit = scaled_credit(figure, self.reference, self.full, self.none);
        t.credit = Some(credit);
        t.credit_scale = Some(*self);
        let line = format!(
            "scaled credit: {:.0} % of the points: {figure:.3} is {:.0} % of the reference's {:.3} on this GPU \
             (every point at {:.3} or more, none at {:.3} or less)",
            credit * 100.0,
            figure / self.reference * 100.0,
            self.reference,
            self.full,
            self.none
        );
        t.message = Some(match t.message.take().filter(|m| !m.is_empty()) {
            Some(m) => format!("{m}\n{line}"),
            None => line,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_course_chooses_and_threshold_is_the_default() {
        assert_eq!(parse("[performance]\ncredit = \"scaled\"\n").unwrap(), Credit::Scaled);
        assert_eq!(parse("[platforms]\nmaximum = \"full-given\"\n").unwrap(), Credit::Threshold);
        assert!(parse("[performance]\ncredit = \"half\"\n").is_err());
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        of_course(&here).expect("the repository's own cuda-lab.toml reads");
    }

    #[test]
    fn each_credit_says_what_a_kernel_at_065_of_the_reference_gets() {
        let t = Credit::Threshold.describe();
        assert!(t.contains("`threshold`") && t.contains("0.65 of the reference's speed gets none"), "{t}");
        let s = Credit::Scaled.describe();
        assert!(s.contains("`scaled`") && s.contains("0.65 of the reference's speed gets 50 %"), "{s}");
    }

    /// Issue 51.4: each exercise README says which credit the course uses and
    /// what a kernel at 0.65 of the reference gets under it.
    #[test]
    fn every_readme_says_the_courses_credit() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let paragraph = readme_paragraph(of_course(&here).unwrap());
        let mut missing = Vec::new();
        for e in crate::registry::all() {
            let path = here.join("exercises").join(e.folder_name()).join("README.md");
            let text = std::fs::read_to_string(&path).unwrap();
            if !text.contains(&paragraph) {
                missing.push(path.display().to_string());
            }
        }
        assert!(
            missing.is_empty(),
            "these READMEs lack the paragraph (or it is stale):\n{}\n\n{paragraph}",
            missing.join("\n")
        );
        let template = include_str!("author/template/README.md.tmpl");
        assert!(template.contains(&readme_paragraph(Credit::Threshold)), "the new-exercise template has it too");
    }

    #[test]
    fn half_the_reference_speed_gets_part_of_the_points_and_says_so() {
        let scale = Scale { reference: 2.0, full: 2.0 / 1.2, none: 0.6 };
        let timed = |value: f64, status| {
            let mut t =
                TestReport::new("ex05::stencil::perf::share-of-copy".into(), kit::CheckKind::Performance, status);
            t.perf = Some(kit::perf::PerfFigures {
                kind: "share".into(),
                value,
                threshold: 1.4,
                student: value,
                baseline: 1.0,
                unit: "GB/s".into(),
                baseline_name: "copy".into(),
                threshold_from: None,
                margin: None,
            });
            scale.apply(&mut t);
            t
        };
        let half = timed(1.0, Status::Fail);
        assert_eq!(half.credit, Some(0.5));
        assert!(half.message.as_deref().unwrap().contains("50 % of the reference's 2.000"), "{:?}", half.message);
        assert_eq!(timed(1.9, Status::Pass).credit, Some(1.0));
        assert_eq!(timed(0.5, Status::Fail).credit, Some(0.0));
        // Judged by its stand-in: not the clock's figure to scale.
        let mut by_stand_in = timed(1.0, Status::Pass);
        by_stand_in.credit = None;
        by_stand_in.graded_by = Some("stand-in".into());
        scale.apply(&mut by_stand_in);
        assert_eq!(by_stand_in.credit, None);
    }
}
