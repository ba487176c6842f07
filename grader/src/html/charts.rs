//! The report's charts drawn from the grades JSON: memory behaviour against the
//! reference kernel, where a wrong output is wrong, and timed checks as bars.

use kit::check::Mismatches;
use kit::perf::PerfFigures;
use kit::profile::MemoryProfile;

use super::svg::{self, Group, REFERENCE, STUDENT, THRESHOLD};
use crate::calibrate::rule::CREDIT_STEP;
use crate::report::CreditScale;

/// A full bar: one sector (or one shared pass) per lane of a warp.
const WORST: f64 = 32.0;

fn per(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Sectors per request that hold a full warp's words: as many as bytes per lane.
fn ideal_sectors(p: &MemoryProfile) -> f64 {
    p.warp_sample.as_ref().map_or(4.0, |w| w.bytes.max(1) as f64)
}

/// Global sectors per request (loads, stores), shared passes per request and
/// divergence of the student's kernel against the reference's in the same test.
pub fn memory(test: &str, p: &MemoryProfile, reference: Option<&MemoryProfile>) -> String {
    let pair = |f: &dyn Fn(&MemoryProfile) -> Option<f64>| vec![f(p), reference.and_then(f)];
    let ideal = ideal_sectors(p);
    let groups = vec![
        Group {
            label: "global load sectors/request".into(),
            values: pair(&|p| per(p.global_load_sectors, p.global_load_requests)),
            ideal: Some(ideal),
            full: Some(WORST),
        },
        Group {
            label: "global store sectors/request".into(),
            values: pair(&|p| per(p.global_store_sectors, p.global_store_requests)),
            ideal: Some(ideal),
            full: Some(WORST),
        },
        Group {
            label: "shared passes/request".into(),
            values: pair(&|p| per(p.shared_wavefronts, p.shared_requests)),
            ideal: Some(1.0),
            full: Some(WORST),
        },
        Group {
            label: "divergent branches %".into(),
            values: pair(&|p| per(p.divergent_branches, p.branches).map(|x| 100.0 * x)),
            ideal: None,
            full: Some(100.0),
        },
    ];
    let series = [("your kernel", STUDENT), ("reference", REFERENCE)];
    let body = svg::grouped_bars(&series, &groups, &|v| svg::short(v));
    let mut extra = if p.global_atomics + p.shared_atomics > 0 {
        format!("; atomics: {} global, {} shared", p.global_atomics, p.shared_atomics)
    } else {
        String::new()
    };
    if p.local_requests > 0 {
        extra += &format!("; {}", p.local_summary());
    }
    svg::figure(
        "memory",
        &format!(
            "{}: memory behaviour in {test} (dashed: ideal, {ideal:.0} sector(s) when 32 lanes read consecutive \
             elements; 1 shared pass without bank conflicts; a full bar is 32, one per lane, or 100%){extra}{}",
            p.kernel,
            if reference.is_none() { "; no reference figures for this test" } else { "" }
        ),
        &body,
    )
}

/// The student's time (or throughput) against the yardstick and the threshold.
pub fn timing(test: &str, f: &PerfFigures) -> String {
    // The threshold in the same unit: the slowest time (or least throughput) that passes.
    let (needed, rule) = if f.unit == "ms" {
        (
            f.baseline / f.threshold,
            format!("needs <= {} ms (yardstick / {:.2})", svg::short(f.baseline / f.threshold), f.threshold),
        )
    } else {
        (
            f.baseline * f.threshold,
            format!(
                "needs >= {} {} ({:.0}% of the yardstick)",
                svg::short(f.baseline * f.threshold),
                f.unit,
                100.0 * f.threshold
            ),
        )
    };
    let groups = vec![Group {
        label: f.unit.clone(),
        values: vec![Some(f.student), Some(f.baseline)],
        ideal: Some(needed),
        full: None,
    }];
    let series = [("your kernel", STUDENT), (f.baseline_name.as_str(), REFERENCE)];
    let body = svg::grouped_bars(&series, &groups, &|v| format!("{} {}", svg::short(v), f.unit));
    let body = body.replace(svg::IDEAL, THRESHOLD);
    // Which GPU's calibration set the threshold, and how far the kernel is from it.
    let provenance = match (&f.threshold_from, f.margin) {
        (Some(source), Some(margin)) => format!("; threshold {}; margin {margin:.2}x", source.describe()),
        (Some(source), None) => format!("; threshold {}", source.describe()),
        _ => String::new(),
    };
    svg::figure(
        "timing",
        &format!(
            "{test}: {} {} = {:.2} ({}); dashed: the threshold, {rule}{provenance}",
            svg::short(f.student),
            f.unit,
            f.value,
            f.kind
        ),
        &body,
    )
}

/// Under `scaled` credit: where the kernel's figure sits on the scale from no
/// points (the slow family) to all of them (near the reference), with the
/// pass-or-fail bar and the reference marked. One axis in the check's unit.
pub fn credit(test: &str, f: &PerfFigures, scale: &CreditScale, share: f64) -> String {
    use std::fmt::Write as _;
    let (left, width, top, band) = (20.0, 620.0, 34.0, 26.0);
    let plot_w = width - 2.0 * left;
    let end = [scale.reference * 1.15, f.value * 1.08, f.threshold * 1.1].into_iter().fold(0.0, f64::max).max(1e-9);
    let x = |v: f64| left + v.clamp(0.0, end) / end * plot_w;
    let mut s = svg::svg_open(width, top + band + 40.0);
    // Bands: none, the quarter steps (figure / reference), all.
    // Just above `none` a kernel earns its step of the reference's figure, at least one step.
    let first =
        ((scale.none / scale.reference / CREDIT_STEP).floor() * CREDIT_STEP).clamp(CREDIT_STEP, 1.0 - CREDIT_STEP);
    let mut edges =
        vec![(0.0, "#f2dede", "none".to_string()), (scale.none, "#f9e4bd", format!("{:.0} %", first * 100.0))];
    let mut k = 1.0;
    while k * CREDIT_STEP * scale.reference < scale.full {
        let at = k * CREDIT_STEP * scale.reference;
        if at > scale.none {
            edges.push((
                at,
                if k as u32 % 2 == 0 { "#fcf1dc" } else { "#f9e4bd" },
                format!("{:.0} %", k * CREDIT_STEP * 100.0),
            ));
        }
        k += 1.0;
    }
    edges.push((scale.full, "#dff0d8", "all".into()));
    for (i, (from, colour, label)) in edges.iter().enumerate() {
        let to = edges.get(i + 1).map_or(end, |e| e.0);
        let _ = write!(
            s,
            "<rect x=\"{:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{band}\" fill=\"{colour}\"/>",
            x(*from),
            (x(to) - x(*from)).max(0.0)
        );
        if !label.is_empty() {
            let _ = write!(s, "<text x=\"{:.1}\" y=\"{:.1}\" class=\"val\">{label}</text>", x(*from) + 3.0, top + 17.0);
        }
    }
    let mut mark = |v: f64, colour: &str, dash: &str, text: String, y: f64| {
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{2:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>\
             <text x=\"{0:.1}\" y=\"{y:.1}\" text-anchor=\"middle\" class=\"lbl\">{3}</text>",
            x(v),
            top - 4.0,
            top + band + 4.0,
            svg::esc(&text)
        );
    };
    mark(
        f.threshold,
        THRESHOLD,
        " stroke-dasharray=\"4 3\"",
        format!("bar {}", svg::short(f.threshold)),
        top + band + 18.0,
    );
    mark(scale.reference, REFERENCE, "", format!("reference {}", svg::short(scale.reference)), top + band + 34.0);
    mark(
        f.value,
        STUDENT,
        "",
        format!("your kernel {}: {:.0} % of the points", svg::short(f.value), share * 100.0),
        16.0,
    );
    s += "</svg>";
    svg::figure(
        "credit",
        &format!(
            "{test}: scaled credit {:.0} % at {} ({}); no points at or under {} (the slow family), every point at {} \
             or more (within 1.2x the reference's time), in {:.0} % steps of the reference's figure between; the \
             dashed line is the pass-or-fail bar",
            share * 100.0,
            svg::short(f.value),
            f.kind,
            svg::short(scale.none),
            svg::short(scale.full),
            CREDIT_STEP * 100.0
        ),
        &s,
    )
}

/// Where the wrong elements are: a heat map for a matrix, a strip for a vector,
/// marked positions for DNA match flags.
pub fn mismatches(test: &str, m: &Mismatches, dna: bool) -> String {
    let unwritten = if m.unwritten > 0 { format!(", {} never written", m.unwritten) } else { String::new() };
    if m.layout == "matrix" {
        let body = svg::heat_map(m.bin_rows, m.bin_cols, &m.bins, "row", "column");
        let bins = if (m.bin_rows, m.bin_cols) != (m.rows, m.cols) {
            format!(
                "; each cell is a block of about {} x {} elements",
                m.rows.div_ceil(m.bin_rows),
                m.cols.div_ceil(m.bin_cols)
            )
        } else {
            String::new()
        };
        return svg::figure(
            "mismatch",
            &format!(
                "{test}: `{}` ({} x {}): {} wrong element(s){unwritten} in red{bins}",
                m.what, m.rows, m.cols, m.wrong
            ),
            &body,
        );
    }
    let (marks, right): (&[usize], &[usize]) = if dna { (&m.marks, &m.right_marks) } else { (&[], &[]) };
    let body = svg::strip(m.cols, &m.bins, marks, right);
    let legend = if dna {
        "; red ticks above: positions answered wrongly; green ticks below: matches found correctly"
    } else {
        ""
    };
    svg::figure(
        "mismatch",
        &format!(
            "{test}: `{}` ({} elements): {} wrong{unwritten}, in red along the vector{legend}",
            m.what, m.cols, m.wrong
        ),
        &body,
    )
}
