//! Plain SVG charts: grouped bars, heat maps, strips, line charts. Written by
//! hand so the report stays one self-contained file with no script and no
//! dependency that draws; each chart is a `<figure data-chart=KIND>` the tests find.

use std::fmt::Write as _;

/// Colours of the series, in order: the student's kernel first.
pub const STUDENT: &str = "#d9534f";
pub const REFERENCE: &str = "#3a7bd5";
pub const IDEAL: &str = "#2e7d32";
pub const THRESHOLD: &str = "#f0ad4e";

/// Escapes text for HTML and SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Wraps an SVG (or any body) as a figure the tests can find by `kind`.
pub fn figure(kind: &str, caption: &str, body: &str) -> String {
    format!("<figure class=\"chart\" data-chart=\"{kind}\">{body}<figcaption>{}</figcaption></figure>\n", esc(caption))
}

/// One group of bars (a metric), one bar per series; `None` is drawn as "n/a".
pub struct Group {
    pub label: String,
    pub values: Vec<Option<f64>>,
    /// A dashed line across the group: the ideal value.
    pub ideal: Option<f64>,
    /// The value a full bar stands for (the worst case, or 100 %); the largest value when absent.
    pub full: Option<f64>,
}

/// Grouped horizontal bars, each group with its own scale (metrics differ in unit).
pub fn grouped_bars(series: &[(&str, &str)], groups: &[Group], value_fmt: &dyn Fn(f64) -> String) -> String {
    let bar_h = 16.0;
    let (left, width) = (210.0, 620.0);
    let plot_w = width - left - 80.0;
    let group_h = bar_h * series.len() as f64 + 18.0;
    let height = 30.0 + group_h * groups.len() as f64;
    let mut s = svg_open(width, height);
    legend(&mut s, series, left, 14.0);
    for (gi, g) in groups.iter().enumerate() {
        let y0 = 30.0 + gi as f64 * group_h;
        let max = g.values.iter().flatten().copied().chain(g.ideal).chain(g.full).fold(0.0f64, f64::max).max(1e-9);
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"lbl\">{}</text>",
            left - 8.0,
            y0 + group_h / 2.0 - 4.0,
            esc(&g.label)
        );
        // Labels start right of the bar and of the ideal's line, so neither hides them.
        let ideal_x = g.ideal.map_or(left, |i| left + i / max * plot_w);
        for (si, v) in g.values.iter().enumerate() {
            let y = y0 + si as f64 * bar_h;
            match v {
                Some(v) => {
                    let w = (v / max * plot_w).max(1.0);
                    let _ = write!(
                        s,
                        "<rect x=\"{left}\" y=\"{y}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {}</title></rect>\
                         <text x=\"{:.1}\" y=\"{:.1}\" class=\"val\">{}</text>",
                        bar_h - 3.0,
                        series[si].1,
                        esc(series[si].0),
                        value_fmt(*v),
                        left + w.max(ideal_x - left) + 5.0,
                        y + bar_h - 5.0,
                        value_fmt(*v)
                    );
                }
                None => {
                    let _ = write!(
                        s,
                        "<text x=\"{}\" y=\"{:.1}\" class=\"val\">n/a</text>",
                        ideal_x.max(left) + 5.0,
                        y + bar_h - 5.0
                    );
                }
            }
        }
        if let Some(ideal) = g.ideal {
            let x = left + ideal / max * plot_w;
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{IDEAL}\" stroke-width=\"2\" stroke-dasharray=\"4 3\"><title>ideal {}</title></line>",
                y0 - 2.0,
                y0 + bar_h * g.values.len() as f64,
                value_fmt(ideal)
            );
        }
    }
    s + "</svg>"
}

/// A heat map of `bins` (row-major `rows` x `cols`), darker where more is wrong.
pub fn heat_map(rows: usize, cols: usize, bins: &[u32], row_label: &str, col_label: &str) -> String {
    let cell = (360.0 / rows.max(cols) as f64).clamp(4.0, 40.0);
    let (left, top) = (40.0, 20.0);
    let (w, h) = (left + cell * cols as f64 + 20.0, top + cell * rows as f64 + 30.0);
    let max = bins.iter().copied().max().unwrap_or(0).max(1) as f64;
    let mut s = svg_open(w, h);
    let _ = write!(
        s,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#e8f5e9\" stroke=\"#999\"/>",
        cell * cols as f64,
        cell * rows as f64
    );
    for r in 0..rows {
        for c in 0..cols {
            let n = bins[r * cols + c];
            if n == 0 {
                continue;
            }
            let a = 0.25 + 0.75 * n as f64 / max;
            let _ = write!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{cell:.1}\" height=\"{cell:.1}\" fill=\"{STUDENT}\" fill-opacity=\"{a:.2}\"><title>{n} wrong</title></rect>",
                left + c as f64 * cell,
                top + r as f64 * cell
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{left}\" y=\"14\" class=\"lbl\">{} &#8594;</text><text x=\"12\" y=\"{top}\" class=\"lbl\" transform=\"rotate(90 12 {top})\">{} &#8594;</text>",
        esc(col_label),
        esc(row_label)
    );
    s + "</svg>"
}

/// A strip of `bins` for a vector of `len` elements, with optional tick marks
/// at exact positions (`wrong` in red, `right` in green) above and below it.
pub fn strip(len: usize, bins: &[u32], wrong: &[usize], right: &[usize]) -> String {
    let (left, width, top, h) = (20.0, 820.0, 24.0, 26.0);
    let plot_w = width - 2.0 * left;
    let mut s = svg_open(width, 90.0);
    let _ = write!(
        s,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{plot_w}\" height=\"{h}\" fill=\"#e8f5e9\" stroke=\"#999\"/>"
    );
    let max = bins.iter().copied().max().unwrap_or(0).max(1) as f64;
    let bw = plot_w / bins.len().max(1) as f64;
    for (i, &n) in bins.iter().enumerate() {
        if n > 0 {
            let a = 0.3 + 0.7 * n as f64 / max;
            let _ = write!(
                s,
                "<rect x=\"{:.2}\" y=\"{top}\" width=\"{:.2}\" height=\"{h}\" fill=\"{STUDENT}\" fill-opacity=\"{a:.2}\"><title>{n} wrong</title></rect>",
                left + i as f64 * bw,
                bw.max(1.0)
            );
        }
    }
    let x = |i: usize| left + (i as f64 + 0.5) / len.max(1) as f64 * plot_w;
    for &i in right {
        let _ = write!(s, "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{IDEAL}\"><title>expected match at {i}, found</title></line>", x(i), top + h + 2.0, top + h + 12.0);
    }
    for &i in wrong {
        let _ = write!(s, "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{STUDENT}\" stroke-width=\"1.5\"><title>wrong at {i}</title></line>", x(i), top - 12.0, top - 2.0);
    }
    let _ = write!(
        s,
        "<text x=\"{left}\" y=\"{}\" class=\"lbl\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"lbl\">{}</text>",
        top + h + 26.0,
        left + plot_w,
        top + h + 26.0,
        len
    );
    s + "</svg>"
}

/// One line of a line chart: a name, a colour and its (x, y) points.
pub struct Line<'a> {
    pub name: &'a str,
    pub colour: &'a str,
    pub points: Vec<(f64, f64)>,
}

/// A line chart with axes from 0 (x from the smallest x), labelled.
pub fn line_chart(lines: &[Line], x_label: &str, y_label: &str) -> String {
    let (left, top, width, height) = (60.0, 30.0, 620.0, 280.0);
    let (pw, ph) = (width - left - 20.0, height - top - 40.0);
    let xs = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let (x0, x1) = xs.clone().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let y_max = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).fold(0.0f64, f64::max).max(1e-9);
    let (x0, x1) = if x0 >= x1 { (x0.min(0.0), x0.max(0.0) + 1.0) } else { (x0, x1) };
    let y_step = nice_step(y_max / 4.0);
    let y1 = (y_max / y_step).ceil().max(1.0) * y_step;
    let x_step = nice_step((x1 - x0) / 4.0);
    let px = |x: f64| left + (x - x0) / (x1 - x0) * pw;
    let py = |y: f64| top + ph - y / y1 * ph;
    let mut s = svg_open(width, height);
    let series: Vec<(&str, &str)> = lines.iter().map(|l| (l.name, l.colour)).collect();
    legend(&mut s, &series, left, 14.0);
    let _ = write!(
        s,
        "<line x1=\"{left}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#333\"/><line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{0}\" stroke=\"#333\"/>",
        top + ph,
        left + pw
    );
    let mut y = 0.0;
    while y <= y1 + 1e-9 {
        let (tx, ty, gy, label, right) = (left - 4.0, py(y) + 4.0, py(y), short(y), left + pw);
        let _ = write!(
            s,
            "<text x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\" class=\"val\">{label}</text>\
             <line x1=\"{left}\" x2=\"{right:.1}\" y1=\"{gy:.1}\" y2=\"{gy:.1}\" stroke=\"#eee\"/>"
        );
        y += y_step;
    }
    // x ticks at multiples of the step (0, 8, 16, ...), plus the first x (a stride of 1).
    let mut ticks = vec![x0];
    let mut x = (x0 / x_step).floor() * x_step + x_step;
    while x <= x1 + 1e-9 {
        if x - x0 > x_step / 3.0 {
            ticks.push(x);
        }
        x += x_step;
    }
    for x in ticks {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" class=\"val\">{}</text>",
            px(x),
            top + ph + 14.0,
            short(x)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" class=\"lbl\">{}</text><text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" class=\"lbl\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
        left + pw / 2.0,
        height - 6.0,
        esc(x_label),
        top + ph / 2.0,
        top + ph / 2.0,
        esc(y_label)
    );
    for l in lines {
        let pts: Vec<String> = l.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>",
            l.colour,
            pts.join(" ")
        );
        for &(x, y) in &l.points {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{}\"><title>{}: {} at {}</title></circle>",
                px(x),
                py(y),
                l.colour,
                esc(l.name),
                short(y),
                short(x)
            );
        }
    }
    s + "</svg>"
}

/// A round step (1, 2 or 5 times a power of ten) near `raw`.
fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// A number in a few characters.
pub fn short(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn svg_open(w: f64, h: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" role=\"img\">"
    )
}

fn legend(s: &mut String, series: &[(&str, &str)], x0: f64, y: f64) {
    let mut x = x0;
    for (name, colour) in series {
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{y}\" class=\"lbl\">{}</text>",
            y - 9.0,
            x + 14.0,
            esc(name)
        );
        x += 24.0 + 7.0 * name.len() as f64;
    }
}
