//! The one rule that places a performance threshold (docs/grading-accuracy.md,
//! "Where a threshold sits"). A bar sits near what correct kernels reach on
//! the GPU that grades, measured against the reference there:
//!
//! - at [`REFERENCE_SHARE`] of the reference's own figure, raised over the
//!   fastest slow kernel (by [`MIN_MARGIN`]) where a realistic mistake reaches
//!   it, lowered only as far as the slowest correct kernel needs to clear it
//!   by [`MIN_MARGIN`], and never under [`MIN_REFERENCE_SHARE`] of the reference;
//! - never under what the check's name promises: a check named
//!   `faster-than-X` passes only kernels at least as fast as X ([`promise`]);
//! - graded by the clock on that GPU only where every correct kernel clears
//!   the bar by [`MIN_MARGIN`] and every slow one falls under it by as much
//!   (or, for a bar the name sets, under the promise at all);
//!   elsewhere the check is not graded here and its measured stand-in grades
//!   the lesson.
//!
//! The slow family no longer pulls the bar down: it can only raise it, and it
//! decides whether the clock can tell correct from slow kernels on that GPU. Pure, so that the
//! rule is tested alone.

/// The bar, as a share of the reference's own figure on the GPU that grades.
pub const REFERENCE_SHARE: f64 = 0.7;
/// The lowest a bar may sit; a correct kernel slower than this (with its
/// margin) is not correct for the lesson, or the clock cannot grade the check.
pub const MIN_REFERENCE_SHARE: f64 = 0.6;
/// Each side must clear the threshold by at least this factor (5 %).
pub const MIN_MARGIN: f64 = 1.05;
/// The hysteresis of the decision "graded by the clock" against a committed
/// calibration of the same GPU model ([`place_keeping`]): a check the
/// committed file grades stays graded while its decisive margin is at least
/// `MIN_MARGIN / HYSTERESIS` (1.00: every correct kernel still clears the bar
/// and every slow one still falls under it); one it does not grade becomes
/// graded only at `MIN_MARGIN * HYSTERESIS` (1.1025: 10 %) or more. Margins in
/// between are the band where two machines of one model disagree by noise
/// (two H200s reproduced every threshold within 4.1 %), and keep the committed side.
pub const HYSTERESIS: f64 = 1.05;
/// Partial credit (`scaled`): full points at or above this share of the
/// reference's figure (Stanford CS149's renderer: within 1.2x the
/// reference's time).
pub const FULL_CREDIT_SHARE: f64 = 1.0 / 1.2;
/// Partial credit comes in these steps of the points: coarse enough that an
/// H100 and an H200 grade a class the same (docs/grading-accuracy.md).
pub const CREDIT_STEP: f64 = 0.25;

/// The rule in one sentence, written into every calibration file.
pub const RULE: &str = "threshold = min(max(0.7 x reference, fastest slow x 1.05), slowest correct / 1.05), at least 1.0 for a check named \
                        faster-than-X; graded only where it is >= 0.6 x reference, every correct kernel clears it by \
                        5 % and every slow one falls under it by 5 % (or under the name's promise), else not graded here (the measured stand-in \
                        grades the lesson). Scaled credit: full at >= reference / 1.2, none at or under the fastest \
                        slow kernel, between them figure / reference in steps of 0.25. Against the committed file of the same GPU model the decision \
                        graded / not graded moves only where the least margin leaves 1.00..1.1025 (hysteresis)";

/// The least figure a check's name promises: 1.0 (as fast as X) for a
/// speedup named `faster-than-X`, nothing for a share of a yardstick.
///
/// ```
/// use grader::calibrate::rule::promise;
/// assert_eq!(promise("ex03::rect::perf::faster-than-naive"), Some(1.0));
/// assert_eq!(promise("ex05::stencil::perf::share-of-copy"), None);
/// ```
pub fn promise(check: &str) -> Option<f64> {
    check.rsplit("::").next().filter(|name| name.starts_with("faster-than-")).map(|_| 1.0)
}

/// What one check's family measured on one GPU (ratios where higher is
/// faster: a speedup or a share of a yardstick's bandwidth).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Family {
    /// The reference's own figure (the median of its seeds).
    pub reference: f64,
    /// The least figure of any correct kernel, the reference included.
    pub slowest_correct: f64,
    /// The greatest figure of any slow kernel.
    pub fastest_slow: Option<f64>,
    /// The least figure the check's name promises ([`promise`]).
    pub promise: Option<f64>,
}

/// Where one check's threshold sits on one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub threshold: f64,
    /// False: the clock cannot grade the check on this GPU.
    pub graded: bool,
    /// slowest correct / threshold.
    pub margin_correct: f64,
    /// threshold / fastest slow, where there is a slow variant.
    pub margin_slow: Option<f64>,
    /// The figure at and above which a kernel gets every point (`scaled`).
    pub full_credit: f64,
    /// The figure at and under which it gets none (`scaled`): the fastest
    /// slow kernel, or the threshold where there is none.
    pub no_credit: f64,
    /// The least of the margins the decision reads (`margin_correct`, and
    /// `margin_slow` where the slow kernel does not fail by the name's promise):
    /// graded by the rule alone where it is at least [`MIN_MARGIN`]. NaN without usable figures.
    pub decisive_margin: f64,
    /// What the rule alone decides, before any hysteresis ([`place_keeping`]).
    pub graded_by_rule: bool,
    /// In words, for the file and the reports.
    pub why: String,
}

/// Where a measured decision lands against the committed one of the same GPU model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// No committed decision, or the same one: the rule decides.
    ByRule,
    /// The rule alone would move it, but the margin is inside the hysteresis band: the committed side stays.
    Kept,
    /// The margin clears the band: the decision moves.
    Moved,
}

/// The decision for a check whose decisive margin is `margin`, given the
/// committed file's decision (`None`: no committed file, the rule alone).
pub fn decide(margin: f64, committed: Option<bool>) -> (bool, Decision) {
    // Compared in ratios with a hair of slack, so that rounding cannot decide.
    let at_least = |bar: f64| margin.is_finite() && margin >= bar * (1.0 - 1e-12);
    let by_rule = at_least(MIN_MARGIN);
    match committed {
        None => (by_rule, Decision::ByRule),
        Some(c) if c == by_rule => (by_rule, Decision::ByRule),
        Some(true) if at_least(MIN_MARGIN / HYSTERESIS) => (true, Decision::Kept),
        Some(false) if !at_least(MIN_MARGIN * HYSTERESIS) => (false, Decision::Kept),
        Some(_) => (by_rule, Decision::Moved),
    }
}

/// Places the threshold of a check from its family's figures (see the module).
pub fn place(f: Family) -> Placement {
    place_keeping(f, None)
}

/// As [`place`], with the decision "graded by the clock" kept from the
/// committed calibration of the same GPU model (`committed`) unless the
/// new figures clear the hysteresis band ([`HYSTERESIS`], [`decide`]). The
/// threshold itself is always the new figures'.
pub fn place_keeping(f: Family, committed: Option<bool>) -> Placement {
    let usable = |x: f64| x.is_finite() && x > 0.0;
    if !usable(f.reference) || !usable(f.slowest_correct) || f.fastest_slow.is_some_and(|s| !usable(s)) {
        return Placement {
            threshold: f64::NAN,
            graded: false,
            margin_correct: f64::NAN,
            margin_slow: None,
            full_credit: f64::NAN,
            no_credit: f64::NAN,
            decisive_margin: f64::NAN,
            graded_by_rule: false,
            why: format!("no usable figures ({f:?})"),
        };
    }
    let r = f.reference;
    // At 0.7 of the reference, raised over a slow kernel that reaches it (where the
    // correct ones leave room), lowered for a slow correct one, within the floors.
    // A slow kernel under what the name promises fails by the promise itself
    // (ex03 rect's rolled tile at 0.98x naive): it neither raises the bar nor needs a margin.
    let by_promise = |s: f64| f.promise.is_some_and(|p| s < p);
    let over_slow = f.fastest_slow.filter(|&s| !by_promise(s)).map_or(0.0, |s| s * MIN_MARGIN);
    let threshold = (REFERENCE_SHARE * r)
        .max(over_slow)
        .min(f.slowest_correct / MIN_MARGIN)
        .max(f.promise.unwrap_or(0.0))
        .max(MIN_REFERENCE_SHARE * r);
    let margin_correct = f.slowest_correct / threshold;
    let margin_slow = f.fastest_slow.map(|s| threshold / s);
    // Compared in ratios with a hair of slack, so that rounding cannot decide.
    let clears = |margin: f64| margin >= MIN_MARGIN * (1.0 - 1e-12);
    let reasons: Vec<String> = [
        (!clears(margin_correct)).then(|| {
            format!(
                "the slowest correct kernel ({:.3}) does not clear {threshold:.3} by {:.0} %",
                f.slowest_correct,
                (MIN_MARGIN - 1.0) * 100.0
            )
        }),
        margin_slow.filter(|&m| !clears(m) && !f.fastest_slow.is_some_and(by_promise)).map(|_| {
            format!(
                "the fastest slow kernel ({:.3}) is not {:.0} % under {threshold:.3}",
                f.fastest_slow.unwrap_or_default(),
                (MIN_MARGIN - 1.0) * 100.0
            )
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    let graded_by_rule = reasons.is_empty();
    let slow_counts = !f.fastest_slow.is_some_and(by_promise);
    let decisive_margin = margin_slow.filter(|_| slow_counts).map_or(margin_correct, |m| m.min(margin_correct));
    let (graded, decision) = decide(decisive_margin, committed);
    debug_assert!(decision != Decision::ByRule || graded == graded_by_rule, "{f:?}");
    let graded = if decision == Decision::ByRule { graded_by_rule } else { graded };
    let bar = match f.promise {
        Some(p) if threshold <= p => format!("{p:.2} (the check's name promises as fast as its baseline)"),
        _ => format!("{:.2} of the reference's {r:.3}", threshold / r),
    };
    let figures = format!(
        "threshold {threshold:.3} = {bar}; slowest correct {:.3} ({:.0} % over){}",
        f.slowest_correct,
        (margin_correct - 1.0) * 100.0,
        f.fastest_slow
            .map(|s| format!(", fastest slow {s:.3} ({:.0} % under)", (threshold / s - 1.0) * 100.0))
            .unwrap_or_default()
    );
    let band = format!(
        "the hysteresis band {:.3}..{:.3} of the decisive margin {decisive_margin:.3}",
        MIN_MARGIN / HYSTERESIS,
        MIN_MARGIN * HYSTERESIS
    );
    let why = match (graded, decision) {
        (true, Decision::Kept) => format!(
            "{figures}; graded, kept from the committed calibration of this model: {} ({band}; \
             it moves to not graded under {:.3})",
            reasons.join("; "),
            MIN_MARGIN / HYSTERESIS
        ),
        (false, Decision::Kept) => format!(
            "not graded here, kept from the committed calibration of this model: the rule alone would grade it \
             ({figures}), but within {band} (it moves to graded at {:.3})",
            MIN_MARGIN * HYSTERESIS
        ),
        (true, _) => figures,
        (false, _) => format!("not graded here: {} (a bar at {bar})", reasons.join("; ")),
    };
    Placement {
        threshold,
        graded,
        margin_correct,
        margin_slow,
        full_credit: r * FULL_CREDIT_SHARE,
        no_credit: f.fastest_slow.unwrap_or(threshold).min(threshold),
        decisive_margin,
        graded_by_rule,
        why,
    }
}

/// The share of a timed check's points a kernel at `figure` gets under
/// `scaled`: 1 at or above `full_credit`, 0 at or under `no_credit`,
/// between them `figure / reference` rounded down to a [`CREDIT_STEP`]
/// (CS149's `T_ref / T`), and never 0 above `no_credit` nor 1 under `full_credit`.
///
/// ```
/// use grader::calibrate::rule::scaled_credit;
/// // The reference at 1.0: half its speed gets half the points.
/// assert_eq!(scaled_credit(0.5, 1.0, 1.0 / 1.2, 0.3), 0.5);
/// assert_eq!(scaled_credit(0.9, 1.0, 1.0 / 1.2, 0.3), 1.0);
/// assert_eq!(scaled_credit(0.3, 1.0, 1.0 / 1.2, 0.3), 0.0);
/// ```
pub fn scaled_credit(figure: f64, reference: f64, full_credit: f64, no_credit: f64) -> f64 {
    if !figure.is_finite() || figure <= no_credit {
        return 0.0;
    }
    if figure >= full_credit {
        return 1.0;
    }
    let steps = (figure / reference / CREDIT_STEP).floor() * CREDIT_STEP;
    steps.clamp(CREDIT_STEP, 1.0 - CREDIT_STEP)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family(reference: f64, slowest_correct: f64, fastest_slow: Option<f64>, check: &str) -> Family {
        Family { reference, slowest_correct, fastest_slow, promise: promise(check) }
    }

    #[test]
    fn the_bar_sits_at_seven_tenths_of_the_reference_whatever_the_slow_family() {
        // ex02 on the H100: reference 0.980 of a copy; the old rule put the bar at 0.14.
        let p = place(family(0.980, 0.977, Some(0.018), "ex02::dot::perf::share-of-copy-bandwidth"));
        assert!((p.threshold - 0.686).abs() < 1e-9, "{p:?}");
        assert!(p.graded, "{p:?}");
        // A slow kernel over 0.7 of the reference raises the bar above it, where the correct ones leave room
        // (ex09 on the H100: reference 0.898, correct 0.868, a column-major walk 0.716).
        let raised = place(family(0.898, 0.868, Some(0.716), "ex09::picture::perf::share-of-linear"));
        assert!((raised.threshold - 0.716 * 1.05).abs() < 1e-12 && raised.graded, "{raised:?}");
        // Where they leave none, the clock cannot grade the check.
        let near = place(family(0.980, 0.977, Some(0.95), "ex02::dot::perf::share-of-copy-bandwidth"));
        assert!(!near.graded && near.why.contains("fastest slow"), "{}", near.why);
    }

    #[test]
    fn a_check_named_faster_than_x_never_passes_a_kernel_slower_than_x() {
        // ex03 rect on the H100: reference 1.342x naive, 0.7 of it is 0.94: the bar rises to 1.0.
        let p = place(family(1.342, 1.053, Some(0.51), "ex03::rect::perf::faster-than-naive"));
        assert_eq!(p.threshold, 1.0);
        assert!(p.graded, "{p:?}");
        assert!(p.why.contains("promises"), "{}", p.why);
        // A correct kernel at 0.98x naive cannot pass it: the check is not graded until it is re-roled.
        let q = place(family(1.342, 0.980, Some(0.51), "ex03::rect::perf::faster-than-naive"));
        assert!(!q.graded && q.why.contains("slowest correct"), "{}", q.why);
        // Re-roled slow, it fails by the promise: no 5 % margin asked.
        assert!(place(family(1.342, 1.053, Some(0.98), "ex03::rect::perf::faster-than-naive")).graded);
        // Where the bar is the reference's share, a slow kernel near it still needs the margin.
        assert!(!place(family(2.0, 1.5, Some(1.45), "exNN::p::perf::faster-than-x")).graded);
        // ex12 constant: the mask in global memory is as fast (1.027): the clock cannot grade it.
        assert!(!place(family(1.027, 1.027, Some(0.45), "ex12::constant::perf::faster-than-global-mask")).graded);
    }

    #[test]
    fn the_bar_comes_down_for_a_slow_correct_kernel_but_not_under_six_tenths() {
        // The slowest correct at 0.70 of the reference: the bar drops to 0.70 / 1.05.
        let p = place(family(1.0, 0.70, Some(0.4), "exNN::p::perf::share-of-copy"));
        assert!((p.threshold - 0.70 / 1.05).abs() < 1e-12 && p.graded, "{p:?}");
        // At 0.6 it would have to go under 0.6: not graded.
        let q = place(family(1.0, 0.6, Some(0.4), "exNN::p::perf::share-of-copy"));
        assert!(!q.graded && (q.threshold - 0.6).abs() < 1e-12, "{q:?}");
    }

    #[test]
    fn without_a_slow_variant_the_correct_kernels_alone_decide() {
        let p = place(family(2.0, 1.9, None, "exNN::p::perf::share-of-x"));
        assert_eq!((p.threshold, p.graded, p.margin_slow), (1.4, true, None));
        assert_eq!(p.no_credit, 1.4);
    }

    #[test]
    fn figures_that_are_not_ratios_place_nothing() {
        assert!(!place(family(f64::NAN, 1.0, Some(1.0), "x")).graded);
        assert!(!place(family(1.0, 1.0, Some(0.0), "x")).graded);
        assert!(!place(family(1.0, -1.0, None, "x")).graded);
    }

    #[test]
    fn near_the_margin_the_committed_decision_stays_on_both_sides() {
        // ex03 rect on the committed H200: slowest correct 1.052x naive (5.2 % over the promised 1.0): graded.
        let rect = |slowest| family(1.35, slowest, Some(0.979), "ex03::rect::perf::faster-than-naive");
        assert!(place(rect(1.052)).graded);
        // Another H200 measures 1.047: the rule alone would stop grading it...
        let other = place(rect(1.047));
        assert!(!other.graded && !other.graded_by_rule, "{other:?}");
        // ...the committed file grades it, and 1.047 is inside the band: it stays graded.
        let kept = place_keeping(rect(1.047), Some(true));
        assert!(kept.graded && !kept.graded_by_rule, "{kept:?}");
        assert!(
            kept.why.contains("kept from the committed calibration") && kept.why.contains("1.000..1.103"),
            "{}",
            kept.why
        );
        assert_eq!(kept.threshold, other.threshold, "hysteresis keeps the decision, not the threshold");
        // The other side: committed not graded, new figures at 1.06 (the rule alone would grade): stays not graded.
        let held = place_keeping(rect(1.06), Some(false));
        assert!(!held.graded && held.graded_by_rule, "{held:?}");
        assert!(held.why.starts_with("not graded here, kept"), "{}", held.why);
        // The slow side's margin counts the same way (a slow kernel 3.6 % under a bar the correct ones hold down).
        let slow_near = family(0.898, 0.87, Some(0.80), "ex09::picture::perf::share-of-linear");
        assert!(!place(slow_near).graded);
        assert!(place_keeping(slow_near, Some(true)).graded);
    }

    #[test]
    fn a_clear_move_moves_the_decision() {
        let rect = |slowest| family(1.35, slowest, Some(0.979), "ex03::rect::perf::faster-than-naive");
        // A correct kernel slower than naive (margin 0.99 < 1.00): no longer graded, whatever was committed.
        let gone = place_keeping(rect(0.99), Some(true));
        assert!(!gone.graded && gone.why.starts_with("not graded here:"), "{gone:?}");
        // Margins of 10.25 % or more: graded, whatever was committed.
        assert!(place_keeping(rect(1.11), Some(false)).graded);
        assert_eq!(decide(1.11, Some(false)), (true, Decision::Moved));
        assert_eq!(decide(0.99, Some(true)), (false, Decision::Moved));
        assert_eq!(decide(1.06, None), (true, Decision::ByRule));
        assert_eq!(decide(1.06, Some(true)), (true, Decision::ByRule));
        assert_eq!(decide(1.0, Some(true)), (true, Decision::Kept), "the band's lower edge is inside");
        assert_eq!(decide(f64::NAN, Some(true)), (false, Decision::Moved), "no figures: never kept");
        // Unusable figures are never kept graded.
        assert!(!place_keeping(family(f64::NAN, 1.0, None, "x"), Some(true)).graded);
    }

    #[test]
    fn scaled_credit_steps_between_the_slow_family_and_the_reference() {
        let (r, full, none) = (1.0, FULL_CREDIT_SHARE, 0.3);
        assert_eq!(scaled_credit(r, r, full, none), 1.0);
        assert_eq!(scaled_credit(0.84, r, full, none), 1.0, "within 1.2x the reference's time");
        assert_eq!(scaled_credit(0.82, r, full, none), 0.75);
        assert_eq!(scaled_credit(0.5, r, full, none), 0.5, "half the speed: part of the points");
        assert_eq!(scaled_credit(0.34, r, full, none), 0.25, "over the slow family: never nothing");
        assert_eq!(scaled_credit(0.3, r, full, none), 0.0);
        assert_eq!(scaled_credit(f64::NAN, r, full, none), 0.0);
    }
}
