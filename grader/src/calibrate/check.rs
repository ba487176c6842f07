//! `grader calibrate --check`: this machine's measurement against the
//! committed calibration of its GPU model, without writing it. Every
//! threshold is shown with how far it moved; every decision "graded by the
//! clock" that the rule alone would move is shown with its margin and what the
//! hysteresis keeps ([`super::rule::HYSTERESIS`]). Only a decision that moves
//! beyond the band counts as a difference (the exit status of `--check`).

use std::path::Path;

use anyhow::{Context, Result};

use super::file::{self, CalibrationFile, CheckCalibration};
use super::rule;
use super::run::{self, Collected, Provenance};

/// `grader calibrate --check` after measuring: compares `collected` (this
/// machine, GPU `gpu`) with the committed file of its model under `root`,
/// writes what this machine would have written to `work/check.toml`, and
/// returns the report and whether a decision moves beyond the band.
pub fn against_committed(
    root: &Path,
    gpu: file::GpuModel,
    collected: &Collected,
    how: impl Fn() -> Provenance,
    work: &Path,
) -> Result<(String, bool)> {
    let path = file::path_in(&file::course_dir(root), &gpu.name);
    let committed = CalibrationFile::read(&path).with_context(|| {
        format!("`grader calibrate --check` compares with the committed file of {}: {}", gpu.name, path.display())
    })?;
    let by_rule = run::calibration_file(gpu.clone(), collected, how());
    let kept = run::calibration_file_keeping(gpu, collected, how(), Some(&committed));
    std::fs::create_dir_all(work)?;
    let written = work.join("check.toml");
    kept.write(&written)?;
    let cmp = compare(&committed, &by_rule, &kept);
    let shown = path.strip_prefix(root).unwrap_or(&path).display().to_string();
    let text = format!("{}(what this machine would write: {})\n", cmp.text(&shown), written.display());
    Ok((text, cmp.moved().count() > 0))
}

/// One check's comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub check: String,
    /// The line for the terminal.
    pub line: String,
    /// The decision differs from the committed one even with the hysteresis.
    pub moved: bool,
    /// The rule alone would move it; the hysteresis keeps the committed side.
    pub kept: bool,
}

/// Every check of either file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    pub rows: Vec<Row>,
}

impl Comparison {
    /// Decisions that move beyond the hysteresis band.
    pub fn moved(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.moved)
    }

    /// Decisions the rule alone would move, kept by the hysteresis.
    pub fn kept(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.kept)
    }

    /// The report: every row, then one line of conclusion.
    pub fn text(&self, committed_path: &str) -> String {
        let mut out = format!("this machine against {committed_path}:\n");
        for r in &self.rows {
            out += &format!("  {}\n", r.line);
        }
        let moved = self.moved().count();
        let kept = self.kept().count();
        out += &match (moved, kept) {
            (0, 0) => "no decision moves: every check is graded (or not) as the committed file says\n".to_string(),
            (0, k) => format!(
                "no decision moves beyond the hysteresis band {:.3}..{:.3}; {k} the rule alone would move, kept on the \
                 committed side (marked `kept`)\n",
                rule::MIN_MARGIN / rule::HYSTERESIS,
                rule::MIN_MARGIN * rule::HYSTERESIS
            ),
            (m, _) => format!(
                "{m} decision(s) MOVE beyond the hysteresis band (marked `MOVES`): this machine would grade them \
                 differently; recalibrate (`grader calibrate`) and commit, or keep the committed file and say why\n"
            ),
        };
        out
    }
}

fn decision(graded: bool) -> &'static str {
    if graded {
        "graded"
    } else {
        "not graded"
    }
}

fn margins(c: &CheckCalibration) -> String {
    let m = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    format!("margins correct {} / slow {}", m(c.margin_correct), m(c.margin_slow))
}

/// Compares `committed` with this machine's figures placed by the rule alone
/// (`by_rule`) and with the committed decisions kept inside the band (`kept`,
/// [`super::run::calibration_file_keeping`]).
pub fn compare(committed: &CalibrationFile, by_rule: &CalibrationFile, kept: &CalibrationFile) -> Comparison {
    let mut names: Vec<&String> = committed.checks.keys().chain(kept.checks.keys()).collect();
    names.sort();
    names.dedup();
    let mut rows = Vec::new();
    for name in names {
        let row = match (committed.checks.get(name), kept.checks.get(name), by_rule.checks.get(name)) {
            (Some(_), None, _) => Row {
                check: name.clone(),
                line: format!("{name}: not measured here (the committed entry stands)"),
                moved: false,
                kept: false,
            },
            (None, Some(k), _) => Row {
                check: name.clone(),
                line: format!(
                    "{name}: not in the committed file; measured here: threshold {:.3}, {}",
                    k.threshold,
                    decision(k.graded)
                ),
                moved: false,
                kept: false,
            },
            (Some(c), Some(k), r) => {
                let change = if c.threshold > 0.0 { (k.threshold / c.threshold - 1.0) * 100.0 } else { f64::NAN };
                let rule_alone = r.map_or(k.graded, |r| r.graded);
                let moved = k.graded != c.graded;
                let kept = !moved && rule_alone != c.graded;
                let verdict = if moved {
                    format!(
                        "{} -> {}: MOVES ({}, outside the band {:.3}..{:.3})",
                        decision(c.graded),
                        decision(k.graded).to_uppercase(),
                        margins(k),
                        rule::MIN_MARGIN / rule::HYSTERESIS,
                        rule::MIN_MARGIN * rule::HYSTERESIS
                    )
                } else if kept {
                    format!(
                        "{}: kept (the rule alone: {}; {}, inside the band {:.3}..{:.3})",
                        decision(c.graded),
                        decision(rule_alone),
                        margins(k),
                        rule::MIN_MARGIN / rule::HYSTERESIS,
                        rule::MIN_MARGIN * rule::HYSTERESIS
                    )
                } else {
                    format!("{}, as committed ({})", decision(k.graded), margins(k))
                };
                Row {
                    check: name.clone(),
                    line: format!(
                        "{name}: threshold {:.3} -> {:.3} ({change:+.1} %); {verdict}",
                        c.threshold, k.threshold
                    ),
                    moved,
                    kept,
                }
            }
            (None, None, _) => continue,
        };
        rows.push(row);
    }
    Comparison { rows }
}

#[cfg(test)]
mod tests {
    use super::super::families::Role;
    use super::super::run::{calibration_file, calibration_file_keeping, CheckFigures, Collected, Provenance};
    use super::*;

    const RECT: &str = "ex03::rect::perf::faster-than-naive";
    const STENCIL: &str = "ex05::stencil::perf::share-of-copy";

    /// A machine's figures: ex03 rect's slowest correct kernel at `rect`, ex05's family far apart.
    fn measured(rect: f64) -> Collected {
        let family = |reference: f64, correct: f64, slow: f64| CheckFigures {
            kind: Some("speedup".into()),
            compiled: Some(0.8),
            variants: [
                ("reference".to_string(), (Role::Correct, vec![(1, reference)])),
                ("correct-a".to_string(), (Role::Correct, vec![(1, correct)])),
                ("slow-a".to_string(), (Role::Slow, vec![(1, slow)])),
            ]
            .into_iter()
            .collect(),
            problems: Vec::new(),
        };
        Collected {
            checks: [(RECT.to_string(), family(1.35, rect, 0.979)), (STENCIL.to_string(), family(0.40, 0.34, 0.05))]
                .into_iter()
                .collect(),
            copy_gbps: None,
        }
    }

    fn files(committed_rect: f64, here_rect: f64) -> (CalibrationFile, CalibrationFile, CalibrationFile) {
        let model = super::super::run::gpu_model(&kit::Gpu::simulator().info().clone());
        let how = || Provenance { date: "d".into(), command: "c".into(), seeds: vec![1] };
        let committed = calibration_file(model.clone(), &measured(committed_rect), how());
        let by_rule = calibration_file(model.clone(), &measured(here_rect), how());
        let kept = calibration_file_keeping(model, &measured(here_rect), how(), Some(&committed));
        (committed, by_rule, kept)
    }

    #[test]
    fn the_same_machine_moves_nothing() {
        let (c, r, k) = files(1.052, 1.052);
        let cmp = compare(&c, &r, &k);
        assert_eq!((cmp.moved().count(), cmp.kept().count()), (0, 0));
        assert!(cmp.text("calibration/x.toml").contains("no decision moves"), "{}", cmp.text("x"));
        assert!(cmp.rows[0].line.contains("threshold 1.000 -> 1.000 (+0.0 %)"), "{}", cmp.rows[0].line);
    }

    #[test]
    fn a_second_machine_near_the_margin_is_reported_and_kept() {
        // The committed H200: 1.052 (graded); another H200: 1.047 (the rule alone: not graded).
        let (c, r, k) = files(1.052, 1.047);
        let cmp = compare(&c, &r, &k);
        assert_eq!(cmp.moved().count(), 0, "{cmp:?}");
        let kept: Vec<_> = cmp.kept().collect();
        assert_eq!(kept.len(), 1);
        assert!(
            kept[0].line.contains("graded: kept (the rule alone: not graded; margins correct 1.047"),
            "{}",
            kept[0].line
        );
        assert!(kept[0].line.contains("inside the band 1.000..1.103"), "{}", kept[0].line);
        assert!(cmp.text("x").contains("1 the rule alone would move"), "{}", cmp.text("x"));
        assert!(k.checks[RECT].graded && !r.checks[RECT].graded);
    }

    #[test]
    fn a_clear_move_is_a_difference() {
        // A correct kernel slower than naive here: the decision moves, whatever the hysteresis.
        let (c, r, k) = files(1.052, 0.98);
        let cmp = compare(&c, &r, &k);
        let moved: Vec<_> = cmp.moved().collect();
        assert_eq!(moved.len(), 1, "{cmp:?}");
        assert!(moved[0].line.contains("graded -> NOT GRADED: MOVES"), "{}", moved[0].line);
        assert!(cmp.text("x").contains("1 decision(s) MOVE"), "{}", cmp.text("x"));
        // And from not graded to graded: only with a margin clearing the band.
        let (c, r, k) = files(1.03, 1.08);
        assert_eq!((compare(&c, &r, &k).moved().count(), compare(&c, &r, &k).kept().count()), (0, 1));
        let (c, r, k) = files(1.03, 1.12);
        assert_eq!(compare(&c, &r, &k).moved().count(), 1);
    }

    #[test]
    fn checks_in_one_file_only_are_listed_not_counted() {
        let (mut c, r, mut k) = files(1.052, 1.052);
        k.checks.remove(STENCIL);
        c.checks.remove(RECT);
        let cmp = compare(&c, &r, &k);
        assert_eq!(cmp.rows.len(), 2);
        assert!(cmp.rows.iter().any(|r| r.line.contains("not measured here")));
        assert!(cmp.rows.iter().any(|r| r.line.contains("not in the committed file")));
        assert_eq!(cmp.moved().count(), 0);
    }
}
