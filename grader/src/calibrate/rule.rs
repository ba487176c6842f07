//! The one rule that places a performance threshold (docs/grading-accuracy.md,
//! "Where a threshold sits"): in the measured gap between the slowest correct
//! kernel and the fastest slow one, at their geometric middle, only where each
//! side clears it by [`MIN_MARGIN`]. Pure, so that the rule is tested alone.

/// Each side must clear the threshold by at least this factor (5 %).
pub const MIN_MARGIN: f64 = 1.05;
/// Without a slow variant: the threshold is the slowest correct figure divided by this.
pub const NO_SLOW_DIVISOR: f64 = 1.25;

/// The rule in one sentence, written into every calibration file.
pub const RULE: &str =
    "threshold = sqrt(slowest correct x fastest slow) (min over correct variants and seeds, max over \
                        slow ones); graded only where slowest correct / threshold >= 1.05 and threshold / fastest \
                        slow >= 1.05, else not graded here (the measured stand-in grades the lesson); without a slow \
                        variant, threshold = slowest correct / 1.25";

/// Where one check's threshold sits on one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub threshold: f64,
    /// False: the gap is too narrow (or upside down) on this GPU; the check is
    /// not graded here.
    pub graded: bool,
    /// slowest correct / threshold.
    pub margin_correct: f64,
    /// threshold / fastest slow, where there is a slow variant.
    pub margin_slow: Option<f64>,
    /// In words, for the file and the reports.
    pub why: String,
}

/// Places the threshold of a check whose correct kernels measured at least
/// `slowest_correct` and whose slow ones at most `fastest_slow` (ratios where
/// higher is faster: a speedup or a share of a yardstick's bandwidth).
pub fn place(slowest_correct: f64, fastest_slow: Option<f64>) -> Placement {
    let usable = |x: f64| x.is_finite() && x > 0.0;
    if !usable(slowest_correct) || fastest_slow.is_some_and(|s| !usable(s)) {
        return Placement {
            threshold: f64::NAN,
            graded: false,
            margin_correct: f64::NAN,
            margin_slow: None,
            why: format!("no usable figures (slowest correct {slowest_correct}, fastest slow {fastest_slow:?})"),
        };
    }
    let Some(slow) = fastest_slow else {
        let threshold = slowest_correct / NO_SLOW_DIVISOR;
        return Placement {
            threshold,
            graded: true,
            margin_correct: NO_SLOW_DIVISOR,
            margin_slow: None,
            why: format!("no slow variant: slowest correct {slowest_correct:.3} / {NO_SLOW_DIVISOR}"),
        };
    };
    let threshold = (slowest_correct * slow).sqrt();
    let (margin_correct, margin_slow) = (slowest_correct / threshold, threshold / slow);
    // Both margins are sqrt(gap): compare the gap itself, so rounding cannot decide.
    let graded = slowest_correct / slow >= MIN_MARGIN * MIN_MARGIN;
    let why = if graded {
        format!(
            "geometric middle of slowest correct {slowest_correct:.3} and fastest slow {slow:.3}: {:.0} % margin each side",
            (margin_correct - 1.0) * 100.0
        )
    } else {
        format!(
            "not graded here: slowest correct {slowest_correct:.3} and fastest slow {slow:.3} are less than {:.0} % \
             apart on each side of any threshold",
            (MIN_MARGIN - 1.0) * 100.0
        )
    };
    Placement { threshold, graded, margin_correct, margin_slow: Some(margin_slow), why }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_sits_at_the_geometric_middle_of_a_wide_gap() {
        // ex05 on the H100: correct stencils 0.602 at worst, the serial loader 0.061.
        let p = place(0.602, Some(0.061));
        assert!((p.threshold - (0.602f64 * 0.061).sqrt()).abs() < 1e-12);
        assert!(p.graded, "{p:?}");
        assert!((p.margin_correct - p.margin_slow.unwrap()).abs() < 1e-12, "the same margin each side");
        assert!(p.margin_correct >= MIN_MARGIN);
    }

    #[test]
    fn a_gap_narrower_than_the_margins_is_not_graded_here() {
        // 1.10 apart: 4.9 % each side.
        let p = place(1.10, Some(1.0));
        assert!(!p.graded, "{p:?}");
        assert!(p.why.starts_with("not graded here"), "{}", p.why);
        // Exactly 1.05 each side is enough.
        assert!(place(1.1025, Some(1.0)).graded);
        // Upside down: a slow variant faster than a correct one (ex03 tiled on the H100: 1.300 vs 1.178).
        assert!(!place(1.178, Some(1.300)).graded);
    }

    #[test]
    fn without_a_slow_variant_the_threshold_is_a_quarter_under_the_slowest_correct() {
        let p = place(2.5, None);
        assert_eq!(p.threshold, 2.0);
        assert!(p.graded);
        assert_eq!(p.margin_slow, None);
        assert!(p.why.contains("no slow variant"));
    }

    #[test]
    fn figures_that_are_not_ratios_place_nothing() {
        assert!(!place(f64::NAN, Some(1.0)).graded);
        assert!(!place(1.0, Some(0.0)).graded);
        assert!(!place(-1.0, None).graded);
    }
}
