//! `target/grades/report.html`: one self-contained page (inline CSS and SVG, no
//! script, nothing fetched) with pictures of what each kernel does to memory,
//! drawn from the grades JSON so it shows whatever the checks recorded.

pub mod baseline;
pub mod charts;
pub mod resources;
pub mod svg;
pub mod warp;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;
use ptx_build::{CompileOptions, Compiler, SourceFile};

use crate::report::{CompileStatus, GradeReport, PartReport, Status, TestReport};
use baseline::BaselineProfiles;
use resources::KernelResources;
use svg::esc;

/// Where every run writes the page.
pub fn default_path(root: &Path) -> PathBuf {
    crate::batch::intake::outputs_root(root).join("target").join("grades").join("report.html")
}

/// Everything the page shows besides the JSON.
#[derive(Default)]
pub struct Extras {
    /// The reference's figures, measured on the run's own inputs (BaselineProfiles::for_run).
    pub reference: BaselineProfiles,
    /// Why the reference's figures are absent, when they are.
    pub reference_note: Option<String>,
    /// Part file -> its kernels' resources.
    pub resources: HashMap<String, Vec<KernelResources>>,
    /// Sections drawn elsewhere (a lab's, by `crate::lab`), shown after the parts.
    pub sections: Vec<String>,
}

impl Extras {
    /// The reference's figures on the run's inputs, the resources of every
    /// compiled part (from `root`), and the last coalescing lab under `root`'s grades folder.
    pub fn gather(report: &GradeReport, root: &Path) -> Self {
        let (reference, reference_note) = match BaselineProfiles::for_run(report, root, None) {
            Ok(r) => (r, None),
            Err(why) => (BaselineProfiles::default(), Some(why)),
        };
        Self { reference, reference_note, resources: gather_resources(report, root), sections: Vec::new() }
    }
}

/// The header's line on how performance is graded and which credit the course uses.
fn course_choices(report: &GradeReport) -> String {
    let credit = match report.environment.credit.as_deref() {
        Some("scaled") => crate::credit::Credit::Scaled,
        _ => crate::credit::Credit::Threshold,
    };
    let mut line = crate::credit::Credit::describe(credit);
    if let Some(p) = report.environment.policy.as_ref().filter(|p| p.applied) {
        line += &format!("; no GPU here: {}", p.describe());
    }
    line
}

/// Writes the page for `report` to `path`, atomically.
pub fn write(report: &GradeReport, extras: &Extras, path: &Path) -> Result<()> {
    crate::atomic::write(path, render(report, extras).as_bytes())?;
    Ok(())
}

pub fn render(report: &GradeReport, extras: &Extras) -> String {
    let mut h = String::new();
    let pct = if report.max_score > 0.0 { 100.0 * report.score / report.max_score } else { 0.0 };
    let env = &report.environment;
    // Off a GPU some points cannot be graded: the header says how many.
    let need_gpu = report.counts.not_graded_points;
    let (here, elsewhere) = if need_gpu > 0.0 {
        (" graded here", format!("; <span class=\"needs-gpu\">{} need a GPU</span>", crate::words::points(need_gpu)))
    } else {
        ("", String::new())
    };
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>cuda-lab report: {:.1} / {:.1}</title><style>{CSS}</style></head><body>\n\
         <h1>cuda-lab report <span class=\"score\">{:.2} / {:.2}{here} ({pct:.0} %){elsewhere}</span></h1>\n\
         <p class=\"env\">{} · seed {} · {} · {} · {} · {}</p>",
        report.score,
        report.max_score,
        report.score,
        report.max_score,
        esc(report.counts_line().trim()),
        report.seed,
        esc(&format!("backend {}", env.backend)),
        esc(env.gpu.as_deref().unwrap_or("no GPU")),
        esc(&match (&env.compiler, &env.device_headers) {
            (Some(c), Some(h)) => format!("{c} (device headers: {h})"),
            (Some(c), None) => c.clone(),
            (None, _) => "no compiler".into(),
        }),
        esc(&report.finished_at),
    );
    if let Some(note) = &env.note {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", esc(note));
    }
    // The course's choices, said to the student (issue 51.4).
    let _ = writeln!(h, "<p class=\"env\" data-credit>{}</p>", esc(&course_choices(report)));
    if let Some(note) = &extras.reference_note {
        let _ = writeln!(h, "<p class=\"note\">No reference figures beside yours: {}</p>", esc(note));
    }
    if report.exercises.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"dim\">No grading run yet: <code>{} exNN</code> adds its results here.</p>",
            crate::words::COMMAND
        );
    } else {
        h += &overview(report);
    }
    for e in &report.exercises {
        for p in &e.parts {
            h += &part_section(&e.id, &e.title, p, report, extras);
        }
    }
    for section in &extras.sections {
        h += section;
    }
    h += "</body></html>\n";
    h
}

fn overview(r: &GradeReport) -> String {
    let mut h = String::from(
        "<table class=\"overview\"><tr><th>exercise</th><th>part</th><th>file</th><th>score</th><th>state</th></tr>\n",
    );
    for e in &r.exercises {
        for p in &e.parts {
            let (state, class) = part_state(p);
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td><a href=\"#{}-{}\">{}</a></td><td><code>{}</code></td><td>{}</td><td class=\"{class}\">{state}</td></tr>",
                esc(&e.id),
                esc(&e.id),
                esc(&p.name),
                esc(&p.name),
                esc(&p.file),
                part_score(p)
            );
        }
    }
    h + "</table>\n"
}

/// "7.50 / 7.50", and "(+ 2.50 points need a GPU)" where some of the part's
/// checks could not be graded here.
fn part_score(p: &PartReport) -> String {
    let need_gpu: f64 = p.tests.iter().filter_map(|t| t.not_graded.as_ref()).map(|n| n.points).sum();
    let mut s = format!("{:.2} / {:.2}", p.score, p.max_score);
    if need_gpu > 0.0 {
        let _ = write!(s, " <span class=\"dim\">(+ {} need a GPU)</span>", crate::words::points(need_gpu));
    }
    s
}

/// A test's points: "2.50 / 2.50", or, for a check this machine cannot grade,
/// its worth where it can ("worth 2.50, needs a GPU"), never "0.00 / 0.00".
fn test_score(t: &TestReport) -> String {
    match &t.not_graded {
        Some(n) => format!("<span class=\"dim\">– / {:.2} (needs a GPU)</span>", n.points),
        None => format!("{:.2} / {:.2}", t.score, t.max_score),
    }
}

/// "done", "failing" or "not run", and its CSS class.
fn part_state(p: &PartReport) -> (&'static str, &'static str) {
    if p.compile.status == CompileStatus::Error || p.tests.iter().any(|t| t.status == Status::Fail) {
        ("failing", "bad")
    } else if p.tests.iter().any(|t| t.status == Status::NotGradedHere) {
        ("not graded here", "dim")
    } else if p.tests.iter().any(|t| t.status == Status::Pass) {
        ("done", "good")
    } else {
        ("not run", "dim")
    }
}

fn part_section(id: &str, title: &str, p: &PartReport, r: &GradeReport, x: &Extras) -> String {
    let (state, class) = part_state(p);
    let mut h = format!(
        "<section id=\"{0}-{1}\"><h2>{0} {1} <span class=\"{class}\">{state}</span> <small>{2} · {3}</small></h2>\n",
        esc(id),
        esc(&p.name),
        esc(title),
        part_score(p)
    );
    if p.compile.status == CompileStatus::Error {
        let why = if p.compile.missing {
            p.compile.message.clone().unwrap_or_default()
        } else {
            format!("did not compile: {}", p.compile.message.as_deref().unwrap_or_default())
        };
        let _ = writeln!(h, "<pre class=\"fail\">{}</pre>", esc(&why));
        for d in &p.compile.diagnostics {
            let _ = writeln!(h, "<pre class=\"diag\">{}</pre>", esc(&d.to_string()));
        }
    }
    if let Some(t) = p.tests.iter().find(|t| t.status == Status::Fail) {
        let _ = writeln!(
            h,
            "<p><b>first failure</b> <code>{}</code></p><pre class=\"fail\">{}</pre>",
            esc(&t.name),
            esc(t.message.as_deref().unwrap_or(""))
        );
    }
    h += &tests_table(p);
    // Memory: the largest test that ran each kernel (its averages are the steadiest).
    let mut kernels: Vec<(&TestReport, &kit::profile::MemoryProfile)> = Vec::new();
    for t in &p.tests {
        for prof in &t.profile {
            let size = prof.global_load_requests + prof.global_store_requests + prof.shared_requests;
            match kernels.iter_mut().find(|(_, k)| k.kernel == prof.kernel) {
                Some(slot) => {
                    if size > slot.1.global_load_requests + slot.1.global_store_requests + slot.1.shared_requests {
                        *slot = (t, prof);
                    }
                }
                None => kernels.push((t, prof)),
            }
        }
    }
    if !kernels.is_empty() {
        h += "<h3>What the kernel does to memory</h3>\n<div class=\"row\">";
        for (t, prof) in &kernels {
            h += &charts::memory(&t.name, prof, x.reference.kernel(&t.name, &prof.kernel));
        }
        h += "</div>\n";
        let samples: Vec<_> =
            kernels.iter().filter_map(|(_, k)| k.warp_sample.as_ref().map(|w| (&k.kernel, w))).collect();
        if !samples.is_empty() {
            h += "<h3>One warp, one load</h3>\n";
            for (k, w) in samples {
                h += &warp::chart(k, w);
            }
        }
    }
    let wrong: Vec<&TestReport> = p.tests.iter().filter(|t| t.mismatches.is_some()).take(3).collect();
    if !wrong.is_empty() {
        h += "<h3>Where the output is wrong</h3>\n";
        for t in wrong {
            h += &charts::mismatches(&t.name, t.mismatches.as_ref().unwrap(), id == "ex04");
        }
    }
    let timed: Vec<&TestReport> = p.tests.iter().filter(|t| t.perf.is_some()).collect();
    if !timed.is_empty() {
        h += "<h3>Timing</h3>\n";
        for t in timed {
            h += &charts::timing(&t.name, t.perf.as_ref().unwrap());
            if let (Some(scale), Some(share)) = (&t.credit_scale, t.credit) {
                h += &charts::credit(&t.name, t.perf.as_ref().unwrap(), scale, share);
            }
        }
    } else if p.tests.iter().any(|t| t.kind == kit::CheckKind::Performance) {
        let _ = writeln!(
            h,
            "<p class=\"dim\">Timed checks did not run here ({}): no timing bars.</p>",
            esc(&r.environment.backend)
        );
    }
    h += &resources_table(p, &kernels, r, x);
    h + "</section>\n"
}

/// Every test of the part with its status in words ("not counted", "not
/// graded here" with their first line, so that neither reads as passed).
fn tests_table(p: &PartReport) -> String {
    if p.tests.is_empty() {
        return String::new();
    }
    let mut rows = String::new();
    for t in &p.tests {
        let class = match t.status {
            Status::Pass => "good",
            Status::Fail => "bad",
            _ => "dim",
        };
        let note = match (t.status, &t.not_graded) {
            (Status::NotCounted | Status::NotGradedHere, _) => {
                t.message.as_deref().and_then(|m| m.lines().next()).unwrap_or("").to_string()
            }
            (_, Some(n)) => n.why.clone(),
            _ => String::new(),
        };
        let _ = write!(
            rows,
            "<tr><td><code>{}</code></td><td class=\"{class}\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&t.name),
            t.status.label(),
            test_score(t),
            esc(&note)
        );
    }
    format!("<table class=\"tests\"><tr><th>test</th><th>status</th><th>score</th><th></th></tr>{rows}</table>\n")
}

fn resources_table(
    p: &PartReport,
    kernels: &[(&TestReport, &kit::profile::MemoryProfile)],
    r: &GradeReport,
    x: &Extras,
) -> String {
    let Some(res) = x.resources.get(&p.file).filter(|v| !v.is_empty()) else { return String::new() };
    // The simulator reports an old compute capability; its limits would mislead: assume an H100.
    let real = kit::backend::Capabilities::of_named(&r.environment.backend).real_device_info;
    let cc = r.environment.compute_capability.as_deref().filter(|_| real);
    let limits = resources::limits(cc);
    let mut rows = String::new();
    let mut bars = Vec::new();
    for k in res {
        let block =
            kernels.iter().find(|(_, m)| m.kernel == k.kernel).map(|(_, m)| (m.block_threads, m.dynamic_shared_bytes));
        let (threads, dynamic) = block.unwrap_or((0, 0));
        let threads_shown = if threads > 0 { threads } else { 256 };
        let (occ, why) = resources::occupancy(&limits, threads_shown, k.registers, k.static_shared + dynamic as u64);
        let _ = write!(
            rows,
            "<tr><td><code>{}</code></td><td>{}</td><td>{} B{}</td><td>{}{}</td><td>{:.0}%{} (limited by {why})</td><td>{}</td></tr>",
            esc(&k.kernel),
            k.registers.map_or("unknown".to_string(), |r| r.to_string()),
            k.static_shared,
            if dynamic > 0 { format!(" + {dynamic} B dynamic") } else { String::new() },
            threads_shown,
            if threads == 0 { " (assumed)" } else { "" },
            100.0 * occ,
            if k.registers.is_none() { " at most" } else { "" },
            esc(&k.source)
        );
        bars.push(svg::Group {
            label: k.kernel.clone(),
            values: vec![Some(100.0 * occ)],
            ideal: None,
            full: Some(100.0),
        });
    }
    let chart = svg::grouped_bars(&[("occupancy %", svg::REFERENCE)], &bars, &|v| format!("{v:.0}%"));
    format!(
        "<h3>Resources and occupancy</h3>\n<table><tr><th>kernel</th><th>registers/thread</th><th>shared/block</th>\
         <th>threads/block</th><th>occupancy on {}</th><th>from</th></tr>{rows}</table>\n{}",
        esc(limits.name),
        svg::figure(
            "resources",
            "resident warps per SM over the most an SM holds; registers unknown means ptxas was not found and no GPU reported them",
            &chart
        )
    )
}

/// Compiles each part again (a cache hit) to read its kernels' resources.
fn gather_resources(report: &GradeReport, root: &Path) -> HashMap<String, Vec<KernelResources>> {
    let mut out = HashMap::new();
    let Ok(compiler) = Compiler::from_env() else { return out };
    let compiler = compiler.with_cache_dir(crate::batch::intake::outputs_root(root).join("target").join("ptx-cache"));
    let cc = report.environment.compute_capability.clone();
    let arch = cc
        .as_deref()
        .and_then(|c| c.split_once('.'))
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .unwrap_or(CompileOptions::default().arch);
    let caps = kit::backend::Capabilities::of_named(&report.environment.backend);
    let opts = CompileOptions { arch, line_info: caps.checks_accesses, ..CompileOptions::default() };
    let base = PathBuf::from(&report.source_root);
    let tmp = crate::batch::intake::outputs_root(root).join("target").join("grades");
    // On a GPU the driver says what it allocated; otherwise ptxas, or the PTX alone.
    let gpu = caps.reports_kernel_resources.then(|| kit::Gpu::cuda(std::time::Duration::from_secs(10)).ok()).flatten();
    for p in report.exercises.iter().flat_map(|e| &e.parts) {
        if p.compile.status != CompileStatus::Ok {
            continue;
        }
        let Ok(src) = SourceFile::read(&base.join(&p.file), p.file.clone()) else { continue };
        let Ok(ptx) = compiler.compile(&src, &opts) else { continue };
        let res = gpu
            .as_ref()
            .and_then(|g| resources::from_driver(g, &ptx.text))
            .or_else(|| resources::from_ptxas(&ptx.text, cc.as_deref(), &tmp))
            .unwrap_or_else(|| resources::from_ptx(&ptx.text));
        out.insert(p.file.clone(), res);
    }
    out
}

const CSS: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#222;background:#fff}\
h1 .score{font-weight:normal;color:#555}h2{border-top:1px solid #ddd;padding-top:14px}h2 small{font-weight:normal;color:#777}\
.good{color:#2e7d32}.bad{color:#c62828}.dim{color:#888}.env{color:#555}.note{background:#fff8e1;padding:6px 10px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}\
pre{white-space:pre-wrap;background:#f7f7f7;padding:8px;border-left:3px solid #ccc}pre.fail{border-left-color:#c62828}\
figure.chart{margin:10px 0;overflow-x:auto}figcaption{color:#555;font-size:13px}\
svg text.lbl{font:12px sans-serif;fill:#333}svg text.val{font:11px sans-serif;fill:#444}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CompileReport, Environment, ExerciseReport};
    use kit::CheckKind;

    fn part_of(name: &str, file: &str) -> PartReport {
        PartReport {
            max_score: 10.0,
            ..PartReport::new(name, file, CompileReport::with(CompileStatus::Ok, None), vec![])
        }
    }

    #[test]
    fn scaled_credit_shows_where_the_kernel_sits_between_no_points_and_all() {
        let mut timed =
            TestReport::new("ex02::dot::perf::share-of-copy-bandwidth".into(), CheckKind::Performance, Status::Fail);
        timed.perf = Some(kit::perf::PerfFigures {
            kind: "share".into(),
            value: 0.55,
            threshold: 0.65,
            student: 2137.0,
            baseline: 3886.0,
            unit: "GB/s".into(),
            baseline_name: "the copy bandwidth".into(),
            threshold_from: None,
            margin: None,
        });
        crate::credit::Scale { reference: 0.93, full: 0.78, none: 0.40 }.apply(&mut timed);
        let mut report = GradeReport::new(1, Path::new("."), "exercises", Environment::default());
        report.exercises.push(ExerciseReport {
            id: "ex02".into(),
            title: "dot".into(),
            score: 0.0,
            max_score: 10.0,
            parts: vec![PartReport { tests: vec![timed], ..part_of("dot", "exercises/ex02-dot/kernels/dot.cu") }],
        });
        let page = render(&report, &Extras::default());
        let chart = &page[page.find("data-chart=\"credit\"").expect("a credit chart")..];
        assert!(chart.contains("your kernel 0.55: 50 % of the points") && chart.contains("bar 0.65"), "{chart}");
        assert!(chart.contains("reference 0.93") && chart.contains(">none<"));
    }

    #[test]
    fn every_test_shows_its_status_and_not_counted_never_reads_as_passed() {
        let mut correct = TestReport::new("ex01::shared::correct::n=100".into(), CheckKind::Correctness, Status::Fail);
        correct.message = Some("`hits`: expected 70, got 0".into());
        let mut held = TestReport::new("ex01::shared::structure::x".into(), CheckKind::Structure, Status::NotCounted);
        held.message = Some("not counted: `ex01::shared::correct::n=100` failed, and …".into());
        let part =
            PartReport { tests: vec![correct, held], ..part_of("shared", "exercises/ex01-pi/kernels/pi_shared.cu") };
        let mut report = GradeReport::new(1, Path::new("."), "exercises", Environment::default());
        report.exercises.push(ExerciseReport {
            id: "ex01".into(),
            title: "pi".into(),
            score: 0.0,
            max_score: 10.0,
            parts: vec![part],
        });
        let page = render(&report, &Extras::default());
        let row = page.split("<tr>").find(|r| r.contains("ex01::shared::structure::x")).expect("a row per test");
        assert!(row.contains(">not counted<") && row.contains("not counted: `ex01::shared::correct::n=100` failed"));
        assert!(!row.contains(">pass<"), "{row}");
    }

    /// Off a GPU: the header says what was graded here and how many points need
    /// a GPU, and a check left out shows its worth, never "0.00 / 0.00".
    #[test]
    fn off_a_gpu_the_header_and_rows_say_what_needs_a_gpu() {
        let mut correct = TestReport::new("ex01::shared::correct::n=100".into(), CheckKind::Correctness, Status::Pass);
        (correct.score, correct.max_score) = (7.5, 7.5);
        let mut timed = TestReport::new("ex01::shared::perf::faster".into(), CheckKind::Performance, Status::Ignored);
        timed.not_graded =
            Some(crate::report::NotGraded { why: "needs real timing (no GPU here)".into(), points: 2.5 });
        let compiled = CompileReport::with(CompileStatus::Ok, None);
        let part = PartReport {
            score: 7.5,
            max_score: 7.5,
            ..PartReport::new("shared", "exercises/ex01-pi/kernels/pi_shared.cu", compiled, vec![correct, timed])
        };
        let mut report = GradeReport::new(1, Path::new("."), "exercises", Environment::default());
        report.exercises.push(ExerciseReport {
            id: "ex01".into(),
            title: "pi".into(),
            score: 7.5,
            max_score: 7.5,
            parts: vec![part],
        });
        report.total_up();
        let page = render(&report, &Extras::default());
        let header = page.split("<h1>").nth(1).unwrap().split("</h1>").next().unwrap();
        assert!(header.contains("7.50 / 7.50 graded here (100 %)"), "{header}");
        assert!(header.contains("2.50 points need a GPU"), "{header}");
        let row = page.split("<tr>").find(|r| r.contains("ex01::shared::perf::faster")).expect("a row per test");
        assert!(row.contains("– / 2.50 (needs a GPU)") && row.contains("needs real timing"), "{row}");
        assert!(!row.contains("0.00 / 0.00"), "{row}");
        let overview = page.split("<tr>").find(|r| r.contains("href=\"#ex01-shared\"")).expect("an overview row");
        assert!(overview.contains("(+ 2.50 points need a GPU)"), "{overview}");
        // The counts line agrees with the harness's: 1 ignored.
        assert!(page.contains("1 passed, 0 failed, 1 ignored, 0 not run"), "{page}");
    }
}
