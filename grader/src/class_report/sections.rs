//! The class report's sections, each a `<section data-section=NAME>` the
//! tests find: scores, parts (distribution, verdicts, checks failed most
//! often), memory lessons, performance (distribution and leaderboard), time,
//! attention, similarity. Charts are crate::html::svg's grouped bars.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use super::Class;
use crate::batch::part::Outcome;
use crate::batch::student::StudentReport;
use crate::html::svg::{self, esc, Group, REFERENCE, STUDENT};
use crate::report::{PartReport, Status, TestReport};
use kit::profile::MemoryProfile;

pub fn render(c: &Class) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>cuda-lab class report: {}</title><style>{CSS}</style></head><body>\n\
         <h1>cuda-lab class report</h1>\n<p class=\"env\">{} · seed {} · backend {} · grader {}{}{}</p>\n\
         <nav><a href=\"#wrong\">what went wrong</a> · <a href=\"#scores\">scores</a> · <a href=\"#parts\">parts</a> · <a href=\"#memory\">memory lessons</a> · \
         <a href=\"#performance\">performance</a> · <a href=\"#time\">time</a> · <a href=\"#attention\">a TA's eye</a> · \
         <a href=\"#similarity\">similarity</a></nav>\n",
        crate::words::count(c.book.students.len(), "student"),
        crate::words::count(c.book.students.len(), "student"),
        c.book.seed,
        esc(&c.book.backend),
        esc(&c.book.grader_version),
        c.book.shard.as_deref().map(|s| format!(" · shard {}", esc(s))).unwrap_or_default(),
        settings_line(c),
    );
    h += &wrong_first(c);
    h += &scores(c);
    h += &parts(c);
    h += &memory(c);
    h += &performance(c);
    h += &time(c);
    h += &attention(c);
    h += &similarity(c);
    h += "</body></html>\n";
    h
}

/// What the class got wrong, first: the checks failed by the most students
/// (unchanged stubs left out: they are in "What needs a TA's eye"), each with
/// its most common first message and where its part's table is.
/// Per failed check: the students, each first message's count, and where its table is.
type Failures<'a> = BTreeMap<&'a str, (BTreeSet<&'a str>, BTreeMap<&'a str, usize>, String)>;

fn wrong_first(c: &Class) -> String {
    let mut failed: Failures = BTreeMap::new();
    for s in &c.students {
        for e in &s.grades.exercises {
            for p in e.parts.iter().filter(|p| !is_stub(c, s, p)) {
                for t in p.tests.iter().filter(|t| t.status == Status::Fail) {
                    let first = t.message.as_deref().and_then(|m| m.lines().next()).unwrap_or("");
                    let entry = failed
                        .entry(t.name.as_str())
                        .or_insert_with(|| (BTreeSet::new(), BTreeMap::new(), format!("part-{}-{}", e.id, p.name)));
                    entry.0.insert(s.key.as_str());
                    *entry.1.entry(first).or_default() += 1;
                }
            }
        }
    }
    let mut ranked: Vec<_> = failed.into_iter().collect();
    ranked.sort_by(|a, b| b.1 .0.len().cmp(&a.1 .0.len()).then(a.0.cmp(b.0)));
    let stubs = c.stubs.len();
    let mut h = String::new();
    if ranked.is_empty() {
        h += "<p>No check failed, beside unchanged stubs.</p>\n";
    } else {
        h += "<table class=\"failed\" data-wrong-first><tr><th>check</th><th>students</th><th>most common first message</th></tr>\n";
        // Checks failed by the same students with the same message (numbers aside: every size of one race) share a row.
        let mut rows: Vec<(&str, &BTreeSet<&str>, &str, &String, usize)> = Vec::new();
        for (name, (who, messages, anchor)) in &ranked {
            let message = messages.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map_or("", |(m, _)| *m);
            match rows.iter_mut().find(|r| r.1 == who && shape_of(r.2) == shape_of(message)) {
                Some(r) => r.4 += 1,
                None => rows.push((*name, who, message, anchor, 0)),
            }
        }
        for (name, who, message, anchor, also) in rows.iter().take(6) {
            let message: String = message.chars().take(300).collect();
            let also = if *also > 0 {
                format!("<br><small>and {also} more check(s) failed by the same students with the same message</small>")
            } else {
                String::new()
            };
            let _ = writeln!(
                h,
                "<tr data-check=\"{0}\"><td><a href=\"#{1}\"><code>{0}</code></a>{also}</td><td class=\"n\">{2}</td><td><pre class=\"msg\">{3}</pre></td></tr>",
                esc(name),
                esc(anchor),
                who.len(),
                esc(&message)
            );
        }
        h += "</table>\n";
    }
    if stubs > 0 {
        let _ = writeln!(
            h,
            "<p class=\"dim\">Left out: {} handed in as the stub, unchanged (see <a href=\"#attention\">a TA's eye</a>).</p>",
            crate::words::count(stubs, "part")
        );
    }
    section("wrong", "What the class got wrong", &h)
}

/// The maximum every score is out of and the credit of timed checks, as the gradebook records them.
fn settings_line(c: &Class) -> String {
    let mut out = String::new();
    if let Some(m) = &c.book.maximum {
        let _ = write!(out, " · scores out of the maximum <code>{}</code>", esc(m));
    }
    if let Some(credit) = &c.book.credit {
        let _ = write!(out, " · credit <code>{}</code>", esc(credit));
    }
    out
}

fn section(id: &str, title: &str, body: &str) -> String {
    format!("<section id=\"{id}\" data-section=\"{id}\"><h2>{}</h2>\n{body}</section>\n", esc(title))
}

/// Points as the gradebook's CSV writes them.
fn pts(x: f64) -> String {
    format!("{x:.2}")
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Counts of `scores` out of `max` in six bins: nothing, four quarters, full marks.
fn score_bins(scores: &[f64], max: f64) -> Vec<(String, usize)> {
    let mut bins = vec![0usize; 6];
    for &s in scores {
        let f = if max > 0.0 { s / max } else { 0.0 };
        let i = if s <= 0.0 {
            0
        } else if f >= 1.0 - 1e-9 {
            5
        } else {
            1 + ((f * 4.0).floor() as usize).min(3)
        };
        bins[i] += 1;
    }
    let labels = [
        "0".to_string(),
        format!("under {}", pts(max / 4.0)),
        format!("{} to {}", pts(max / 4.0), pts(max / 2.0)),
        format!("{} to {}", pts(max / 2.0), pts(3.0 * max / 4.0)),
        format!("{} to under {}", pts(3.0 * max / 4.0), pts(max)),
        format!("full ({})", pts(max)),
    ];
    labels.into_iter().zip(bins).collect()
}

/// A histogram as grouped bars: one group per bin, one bar (the count).
fn histogram(kind: &str, caption: &str, bins: &[(String, usize)], what: &str) -> String {
    let total: usize = bins.iter().map(|b| b.1).sum();
    let groups: Vec<Group> = bins
        .iter()
        .map(|(label, n)| Group {
            label: label.clone(),
            values: vec![Some(*n as f64)],
            ideal: None,
            full: Some(total.max(1) as f64),
        })
        .collect();
    let body = svg::grouped_bars(&[(what, REFERENCE)], &groups, &|v| format!("{v:.0}"));
    svg::figure(kind, caption, &body)
}

fn scores(c: &Class) -> String {
    let mut h = String::new();
    let statuses: BTreeMap<&str, usize> = c.book.students.iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(r.status.as_str()).or_default() += 1;
        m
    });
    let _ = writeln!(
        h,
        "<p>Status: {}.</p>",
        statuses
            .iter()
            .map(|(s, n)| format!("<b data-status=\"{}\">{n}</b> {}", esc(s), esc(s)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    h += "<table class=\"num\"><tr><th>exercise</th><th>max</th><th>mean</th><th>median</th><th>full marks</th><th>zero</th></tr>\n";
    let mut charts = String::new();
    // One maximum: the gradebook's columns (the LMS files' Points Possible), and their sum.
    let mut columns: Vec<(String, f64)> = c.book.exercises.iter().map(|e| (e.id.clone(), e.max_score)).collect();
    columns.push(("total".into(), c.book.total_max()));
    for (id, max) in &columns {
        let mut v: Vec<f64> = c
            .book
            .students
            .iter()
            .map(|r| if id == "total" { r.total } else { r.scores.get(id).copied().unwrap_or(0.0) })
            .collect();
        let mean = if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
        let full = v.iter().filter(|&&s| *max > 0.0 && s >= max - 0.005).count();
        let zero = v.iter().filter(|&&s| s <= 0.0).count();
        let bins = score_bins(&v, *max);
        let med = median(&mut v);
        let _ = writeln!(
            h,
            "<tr data-exercise=\"{0}\"><td>{0}</td><td>{1}</td><td>{2}</td><td>{3}</td><td>{full}</td><td>{zero}</td></tr>",
            esc(id),
            pts(*max),
            pts(mean),
            pts(med)
        );
        charts += &histogram(
            "score-distribution",
            &format!("{id}: students per score band (out of {}), from the gradebook", pts(*max)),
            &bins,
            "students",
        );
    }
    h += "</table>\n<div class=\"row\">";
    h += &charts;
    h += "</div>\n";
    section("scores", "Scores", &h)
}

/// Every (exercise id, part) in the gradebook's order, with each student's part.
/// An exercise id, a part name, and each student's report of that part.
type PartOfClass<'c> = (String, String, Vec<(&'c StudentReport, &'c PartReport)>);

fn each_part(c: &Class) -> Vec<PartOfClass<'_>> {
    let mut out: Vec<PartOfClass> = Vec::new();
    for s in &c.students {
        for e in &s.grades.exercises {
            for p in &e.parts {
                match out.iter_mut().find(|(ex, part, _)| *ex == e.id && *part == p.name) {
                    Some(slot) => slot.2.push((s, p)),
                    None => out.push((e.id.clone(), p.name.clone(), vec![(s, p)])),
                }
            }
        }
    }
    out
}

/// Digits masked: messages that differ only in their numbers count as one.
fn shape_of(message: &str) -> String {
    let first = message.lines().next().unwrap_or("");
    let mut out = String::new();
    let mut in_number = false;
    for ch in first.chars() {
        if ch.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(ch);
        }
    }
    out
}

/// Up to three submissions: their result (grades JSON) and the file as graded.
fn example_links(keys: &[&str], ex: &str, part: &str, file: &str) -> String {
    keys.iter()
        .take(3)
        .map(|k| {
            format!(
                "<a href=\"results/{0}/{1}-{2}.json\">{3}</a> (<a href=\"staging/{0}/{4}\">source</a>)",
                esc(&percent(k)),
                esc(ex),
                esc(part),
                esc(k),
                esc(file)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A key in a link: keys are already `[A-Za-z0-9._-]` or percent-encoded; `%` itself must be encoded again.
fn percent(k: &str) -> String {
    k.replace('%', "%25")
}

fn parts(c: &Class) -> String {
    let mut h = String::new();
    for (ex, part, list) in each_part(c) {
        let max = list.first().map_or(0.0, |(_, p)| p.max_score);
        let scores: Vec<f64> = list.iter().map(|(_, p)| p.score).collect();
        let mean = scores.iter().sum::<f64>() / scores.len().max(1) as f64;
        let _ = writeln!(
            h,
            "<div class=\"part\" id=\"part-{0}-{1}\" data-part=\"{0}/{1}\"><h3>{0} {1} <small>{2} · mean {3} of {4}</small></h3>",
            esc(&ex),
            esc(&part),
            crate::words::count(list.len(), "student"),
            pts(mean),
            pts(max)
        );
        // Outcomes and verdicts: students per verdict (a student counts once per verdict).
        let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
        let mut verdicts: BTreeMap<String, usize> = BTreeMap::new();
        let mut all_passed = 0;
        let stubs = list.iter().filter(|(s, p)| is_stub(c, s, p)).count();
        for (s, p) in &list {
            *outcomes.entry(Outcome::of(p).label()).or_default() += 1;
            if is_stub(c, s, p) {
                continue;
            }
            let vs: BTreeSet<&str> = p.tests.iter().filter_map(|t| t.verdict.as_deref()).collect();
            for v in vs {
                *verdicts.entry(v.to_string()).or_default() += 1;
            }
            if !p.tests.is_empty()
                && p.tests.iter().all(|t| t.status != Status::Fail)
                && Outcome::of(p) == Outcome::Graded
            {
                all_passed += 1;
            }
        }
        let _ = writeln!(
            h,
            "<p>No check failed: <b>{all_passed}</b>. Outcomes: {}.{} Verdicts (students with at least one test of each): {}.</p>",
            outcomes.iter().map(|(o, n)| format!("{n} {}", esc(o))).collect::<Vec<_>>().join(", "),
            if stubs > 0 {
                format!(
                    " <span data-stubs=\"{stubs}\">{} the stub unchanged (left out of the verdicts and the failed checks below).</span>",
                    if stubs == 1 { "1 handed in".to_string() } else { format!("{stubs} handed in") }
                )
            } else {
                String::new()
            },
            if verdicts.is_empty() {
                "none".to_string()
            } else {
                verdicts
                    .iter()
                    .map(|(v, n)| {
                        format!(
                            "<span class=\"verdict\" data-verdict=\"{0}\" title=\"{1}\">{0}</span> ({1}): {n}",
                            esc(v),
                            esc(verdict_meaning(v))
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
        h += "<div class=\"row\">";
        h += &histogram(
            "part-distribution",
            &format!("{ex} {part}: students per score band (out of {})", pts(max)),
            &score_bins(&scores, max),
            "students",
        );
        if !verdicts.is_empty() {
            let mut v: Vec<(&String, &usize)> = verdicts.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let bins: Vec<(String, usize)> =
                v.into_iter().map(|(k, n)| (format!("{k}: {}", verdict_meaning(k)), *n)).collect();
            h += &histogram("verdicts", &format!("{ex} {part}: students per verdict"), &bins, "students");
        }
        h += "</div>\n";
        // The checks failed most often, with their most common first message.
        let mut failed: BTreeMap<&str, Vec<(&str, &TestReport)>> = BTreeMap::new();
        for (s, p) in list.iter().filter(|(s, p)| !is_stub(c, s, p)) {
            for t in p.tests.iter().filter(|t| t.status == Status::Fail) {
                failed.entry(t.name.as_str()).or_default().push((s.key.as_str(), t));
            }
        }
        let mut ranked: Vec<(&str, Vec<(&str, &TestReport)>)> = failed.into_iter().collect();
        ranked.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        // One row per problem: checks failed by the same students with the same
        // most common message (numbers aside, e.g. every size of one race) share it.
        let mut rows: Vec<FailedRow> = Vec::new();
        for (name, who) in &ranked {
            let mut by_shape: BTreeMap<String, Vec<(&str, &TestReport)>> = BTreeMap::new();
            for (k, t) in who {
                by_shape.entry(shape_of(t.message.as_deref().unwrap_or(""))).or_default().push((k, t));
            }
            let (shape, group) = by_shape
                .into_iter()
                .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(b.0.cmp(&a.0)))
                .expect("a failed check has a student");
            let mut students: Vec<&str> = who.iter().map(|(k, _)| *k).collect();
            students.sort();
            match rows.iter_mut().find(|r| r.students == students && r.shape == shape) {
                Some(r) => r.also.push(name),
                None => rows.push(FailedRow { name, students, shape, group, also: Vec::new() }),
            }
        }
        if !rows.is_empty() {
            h += "<table class=\"failed\"><tr><th>check</th><th>failed by</th><th>most common first message</th><th>examples</th></tr>\n";
            for r in rows.iter().take(5) {
                let message = r.group[0].1.message.as_deref().unwrap_or("").lines().next().unwrap_or("");
                let message: String = if message.chars().count() > 400 {
                    message.chars().take(400).collect::<String>() + "…"
                } else {
                    message.to_string()
                };
                let keys: Vec<&str> = r.group.iter().map(|(k, _)| *k).collect();
                let also = if r.also.is_empty() {
                    String::new()
                } else {
                    let short: Vec<&str> = r.also.iter().map(|n| n.rsplit("::").next().unwrap_or(n)).collect();
                    format!(
                        "<br><small>and {} more check(s) failed by the same students with the same message: {}</small>",
                        r.also.len(),
                        esc(&short.join(", "))
                    )
                };
                let _ = writeln!(
                    h,
                    "<tr data-check=\"{}\"><td><code>{}</code>{also}</td><td class=\"n\">{}</td><td><pre class=\"msg\">{}</pre><small>{} of {} failing it get this message{}</small></td><td>{}</td></tr>",
                    esc(r.name),
                    esc(r.name),
                    r.students.len(),
                    esc(&message),
                    r.group.len(),
                    r.students.len(),
                    if r.group.len() > 1 { " (numbers aside)" } else { "" },
                    example_links(&keys, &ex, &part, &list[0].1.file)
                );
            }
            h += "</table>\n";
        }
        h += "</div>\n";
    }
    if h.is_empty() {
        h = "<p class=\"dim\">No student report to read.</p>".into();
    }
    section("parts", "Per exercise and part", &h)
}

/// Whether `s` handed in `p` as the course's stub, unchanged.
fn is_stub(c: &Class, s: &StudentReport, p: &PartReport) -> bool {
    c.stubs.contains(&(s.key.clone(), p.file.clone()))
}

/// What a verdict means, in a few words, for a TA who reads the chart.
fn verdict_meaning(v: &str) -> &'static str {
    match v {
        "wrong" => "wrong output",
        "race" => "threads read and write the same memory without a barrier between",
        "out-of-bounds-read" => "reads past a buffer's end",
        "out-of-bounds-write" => "writes past a buffer's end",
        "uninitialised-read" => "reads memory never written",
        "barrier-divergence" => "a __syncthreads() not every thread reaches",
        "warp-mask" => "a warp intrinsic's mask names threads that are not there",
        "structure" => "the memory behaviour the part teaches is missing",
        "too-slow" => "slower than the bar",
        "timeout" => "a kernel that never ended",
        "compile-error" => "did not compile",
        "missing-file" => "file not handed in",
        "missing-kernel" => "the kernel is not in the file",
        "wrong-signature" => "the kernel's parameters are not the stub's",
        "input-modified" => "wrote into an input",
        "wrong-when-timed" => "right once, wrong when launched again to be timed",
        "launch-failed" => "the launch failed",
        _ if v.starts_with("crashed") => "the kernel crashed",
        _ => "see the grades JSON's verdicts",
    }
}

/// One row of the checks failed most often.
struct FailedRow<'a> {
    name: &'a str,
    /// Every student who failed it, sorted.
    students: Vec<&'a str>,
    /// The most common first message, numbers masked, and who got it.
    shape: String,
    group: Vec<(&'a str, &'a TestReport)>,
    /// Other checks failed by the same students with the same message.
    also: Vec<&'a str>,
}

/// A measured figure: its name, how to read it off a profile, and whether less is better.
struct Figure {
    name: &'static str,
    of: fn(&MemoryProfile) -> Option<f64>,
}

fn per(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

const FIGURES: &[Figure] = &[
    Figure { name: "global load sectors/request", of: |p| per(p.global_load_sectors, p.global_load_requests) },
    Figure { name: "global store sectors/request", of: |p| per(p.global_store_sectors, p.global_store_requests) },
    Figure { name: "shared passes/request", of: |p| per(p.shared_wavefronts, p.shared_requests) },
    Figure { name: "global load requests", of: |p| Some(p.global_load_requests as f64) },
    Figure { name: "global atomics", of: |p| Some(p.global_atomics as f64) },
    Figure { name: "constant passes/request", of: |p| per(p.const_passes, p.const_requests) },
    Figure { name: "divergent branches %", of: |p| per(p.divergent_branches, p.branches).map(|x| 100.0 * x) },
];

fn memory(c: &Class) -> String {
    // test -> kernel -> each student's profile
    let mut tests: BTreeMap<&str, BTreeMap<&str, Vec<&MemoryProfile>>> = BTreeMap::new();
    for s in &c.students {
        for t in s.grades.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests) {
            // The stand-ins of timed checks measure the same kernels again: the structure checks say it once.
            for m in t.measured.iter().filter(|_| t.kind == kit::CheckKind::Structure) {
                tests.entry(t.name.as_str()).or_default().entry(m.kernel.as_str()).or_default().push(m);
            }
        }
    }
    let reference = |test: &str, kernel: &str| -> Option<&MemoryProfile> {
        c.reference
            .as_ref()?
            .exercises
            .iter()
            .flat_map(|e| &e.parts)
            .flat_map(|p| &p.tests)
            .find(|t| t.name == test)?
            .measured
            .iter()
            .find(|m| m.kernel == kernel)
    };
    let mut h = String::from(
        "<p>Each structure check measures the student's kernel on a small fixed input on the simulator (the same on \
         every backend; bank conflicts show as more than one shared pass per request). Per figure: the class's median, the reference kernel's, and how many students are at the \
         reference's figure or lower (within 10%): how many really coalesced, tiled, or avoided bank conflicts.</p>\n",
    );
    if c.reference.is_none() {
        h += "<p class=\"note\">The reference's figures could not be measured here (no course folder or grader binary): \
              the class's figures are shown alone.</p>\n";
    }
    if tests.is_empty() {
        h += "<p class=\"dim\">No measured check in these reports (they predate the grades JSON's <code>measured</code>, \
              or no structure check ran).</p>\n";
    }
    for (test, kernels) in &tests {
        for (kernel, profiles) in kernels {
            let r = reference(test, kernel);
            let mut rows = String::new();
            let mut groups = Vec::new();
            for f in FIGURES {
                let mut v: Vec<f64> = profiles.iter().filter_map(|p| (f.of)(p)).collect();
                let rv = r.and_then(|r| (f.of)(r));
                if v.iter().all(|&x| x == 0.0) && rv.is_none_or(|x| x == 0.0) {
                    continue;
                }
                let at_ref = rv.map(|rv| v.iter().filter(|&&x| x <= rv * 1.1 + 1e-9).count());
                let n = v.len();
                let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                let med = median(&mut v);
                let _ = write!(
                    rows,
                    "<tr data-figure=\"{}\"><td>{}</td><td>{}</td><td>{} to {}</td><td>{}</td><td>{}</td></tr>",
                    esc(f.name),
                    esc(f.name),
                    svg::short(med),
                    svg::short(lo),
                    svg::short(hi),
                    rv.map_or("n/a".into(), svg::short),
                    at_ref.map_or("n/a".into(), |k| format!("{k} of {n}"))
                );
                groups.push(Group { label: f.name.to_string(), values: vec![Some(med), rv], ideal: None, full: None });
            }
            if groups.is_empty() {
                continue;
            }
            let _ = writeln!(
                h,
                "<h3><code>{}</code> · <code>{}</code> <small>{} measured</small></h3>\
                 <table class=\"num\"><tr><th>figure</th><th>class median</th><th>class range</th><th>reference</th>\
                 <th>at the reference's or lower (+10%)</th></tr>{rows}</table>",
                esc(test),
                esc(kernel),
                crate::words::count(profiles.len(), "student")
            );
            let body =
                svg::grouped_bars(&[("class median", STUDENT), ("reference", REFERENCE)], &groups, &|v| svg::short(v));
            h += &svg::figure(
                "memory-lessons",
                &format!("{test}: {kernel}, the class's median figure against the reference kernel's (each figure on its own scale)"),
                &body,
            );
        }
    }
    section("memory", "Memory lessons across the class", &h)
}

/// "s-1a2b3c": the same for a student within one batch (seeded), not their name.
pub fn anonymous(key: &str, seed: u64) -> String {
    let d = Sha256::digest(format!("{seed}:{key}").as_bytes());
    format!("s-{:02x}{:02x}{:02x}", d[0], d[1], d[2])
}

fn performance(c: &Class) -> String {
    let mut timed: BTreeMap<&str, Vec<(&StudentReport, &TestReport)>> = BTreeMap::new();
    for s in &c.students {
        for t in s.grades.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests) {
            if t.perf.is_some() {
                timed.entry(t.name.as_str()).or_default().push((s, t));
            }
        }
    }
    let mut h = String::new();
    if timed.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"dim\">No timed check measured anything in this batch (backend {}): timing needs a GPU.</p>",
            esc(&c.book.backend)
        );
    }
    for (test, list) in &timed {
        let f0 = list[0].1.perf.as_ref().expect("timed");
        let values: Vec<f64> = list.iter().map(|(_, t)| t.perf.as_ref().unwrap().value).collect();
        let passing = list.iter().filter(|(_, t)| t.status == Status::Pass).count();
        let max = values.iter().copied().fold(f0.threshold, f64::max);
        let step = (max / 6.0).max(1e-9);
        let mut bins = [0usize; 6];
        for v in &values {
            bins[((v / step) as usize).min(5)] += 1;
        }
        let labelled: Vec<(String, usize)> = bins
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let (a, b) = (i as f64 * step, (i + 1) as f64 * step);
                let mark = if b <= f0.threshold {
                    ""
                } else if a >= f0.threshold {
                    " (passes)"
                } else {
                    " (threshold inside)"
                };
                (format!("{} to {}{mark}", svg::short(a), svg::short(b)), n)
            })
            .collect();
        let _ = writeln!(
            h,
            "<h3><code>{}</code> <small>{} measured · {passing} passed · threshold {} ({}, {})</small></h3>",
            esc(test),
            list.len(),
            svg::short(f0.threshold),
            esc(&f0.kind),
            esc(&f0.baseline_name)
        );
        h += &histogram(
            "perf-distribution",
            &format!("{test}: students per {} band; the threshold is {}", f0.kind, svg::short(f0.threshold)),
            &labelled,
            "students",
        );
        if c.leaderboard {
            let mut ranked: Vec<&(&StudentReport, &TestReport)> = list.iter().collect();
            ranked.sort_by(|a, b| b.1.perf.as_ref().unwrap().value.total_cmp(&a.1.perf.as_ref().unwrap().value));
            // Under `scaled` credit the board says what share of the points each figure earned.
            let scaled = list.iter().any(|(_, t)| t.credit.is_some());
            let _ = writeln!(
                h,
                "<table class=\"leaderboard\"><tr><th>#</th><th>student</th><th>ratio</th><th>time or rate</th>{}</tr>",
                if scaled { "<th>credit</th>" } else { "" }
            );
            for (i, (s, t)) in ranked.iter().take(10).enumerate() {
                let f = t.perf.as_ref().unwrap();
                let who = if c.names { s.name.clone() } else { anonymous(&s.key, c.book.seed) };
                let credit = match (scaled, t.credit) {
                    (false, _) => String::new(),
                    (true, Some(c)) => format!("<td>{:.0} %</td>", c * 100.0),
                    (true, None) => "<td>n/a</td>".into(),
                };
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td>{} {}</td>{credit}</tr>",
                    i + 1,
                    esc(&who),
                    f.value,
                    svg::short(f.student),
                    esc(&f.unit)
                );
            }
            h += "</table>\n";
        }
    }
    if !c.leaderboard {
        h += "<p class=\"dim\">Leaderboards are off (<code>[class-report] leaderboard = false</code> in cuda-lab.toml).</p>\n";
    } else if !c.names && !timed.is_empty() {
        h += "<p class=\"dim\">Leaderboards show anonymous keys (the same for a student within this batch); \
              <code>grader class-report OUT --names</code> shows names.</p>\n";
    }
    section("performance", "Performance", &h)
}

fn time(c: &Class) -> String {
    let Some(t) = &c.time else {
        return section(
            "time",
            "Where the batch's time went",
            "<p class=\"dim\">No time breakdown in batch.json.</p>\n",
        );
    };
    let mut items: Vec<(String, f64)> = vec![
        ("wall clock (grading phase)".into(), t.wall_s),
        ("parts' wall, summed (workers)".into(), t.parts_wall_s),
        ("compiling (workers)".into(), t.compile_s),
        ("compiling ahead (overlaps)".into(), t.compile_ahead_s),
        ("setting up (environment, trials)".into(), t.setup_s),
        ("structure measurements (simulator)".into(), t.sim_measure_s),
        ("hardware counters (profiler)".into(), t.counters_s),
        ("CPU references".into(), t.cpu_reference_s),
        ("GPU correctness".into(), t.gpu_correctness_s),
        ("GPU timing".into(), t.gpu_timing_s),
        ("waiting behind the parts before".into(), t.queued_s),
        ("sanitizer (waiting for it)".into(), t.sanitizer_s),
        ("other".into(), t.other_s),
        ("process start-up".into(), t.process_overhead_s),
        ("waiting for the GPU lock".into(), t.lock_wait_s),
        ("stuck kernels".into(), t.stuck_kernels_s),
    ];
    for (gpu, idle) in &t.idle_gpu_s {
        items.push((format!("GPU {gpu} idle (estimate)"), *idle));
    }
    // One scale for every bar: the longest.
    let longest = items.iter().map(|i| i.1).fold(1e-9, f64::max);
    let groups: Vec<Group> = items
        .iter()
        .map(|(label, s)| Group { label: label.clone(), values: vec![Some(*s)], ideal: None, full: Some(longest) })
        .collect();
    let body = svg::grouped_bars(&[("seconds", REFERENCE)], &groups, &|v| format!("{} s", svg::short(v)));
    let h = format!(
        "<p>Mode {}, {} per GPU, {} in workers, {} isolated, {} regraded alone. Work summed over \
         workers can exceed the wall clock.</p>\n{}",
        esc(&t.mode),
        crate::words::count(t.workers_per_gpu, "worker"),
        crate::words::count(t.parts_in_workers, "part"),
        t.parts_isolated,
        t.parts_regraded_alone,
        svg::figure("time", "seconds per activity in the last run of this batch (batch.json's time breakdown)", &body)
    );
    section("time", "Where the batch's time went", &h)
}

fn attention(c: &Class) -> String {
    let mut h = String::from("<table class=\"attention\"><tr><th>student</th><th>status</th><th>notes</th></tr>\n");
    let mut n = 0;
    for r in &c.book.students {
        // Parts handed in as the stub, unchanged: graded, but a TA wants to know.
        let stubs: Vec<String> = c
            .stubs
            .iter()
            .filter(|(k, _)| *k == r.key)
            .map(|(_, file)| format!("{} unchanged (the stub)", file.rsplit('/').next().unwrap_or(file)))
            .collect();
        if r.status == "graded" && stubs.is_empty() {
            continue;
        }
        n += 1;
        let status = if r.status == "graded" { "unchanged stub" } else { r.status.as_str() };
        let notes: Vec<String> = r.notes.iter().cloned().chain(stubs).collect();
        let _ = writeln!(
            h,
            "<tr data-status=\"{0}\"><td><a href=\"{1}\">{2}</a></td><td class=\"bad\">{0}</td><td>{3}</td></tr>",
            esc(status),
            esc(&percent(&r.report)),
            esc(&r.name),
            esc(&notes.join("; "))
        );
    }
    h += "</table>\n";
    if n == 0 {
        h = "<p>Every student's parts were graded to the end.</p>\n".into();
    }
    let regraded = c.time.as_ref().map(|t| t.regraded.clone()).unwrap_or_default();
    if !regraded.is_empty() {
        h += "<h3>Parts a worker could not finish, graded again alone</h3><ul>";
        for r in &regraded {
            let _ = write!(h, "<li><code>{}</code></li>", esc(r));
        }
        h += "</ul>\n";
    }
    let who = if n == 1 { "1 student".to_string() } else { format!("{n} students") };
    section("attention", &format!("What needs a TA's eye ({who})"), &h)
}

fn similarity(c: &Class) -> String {
    let mut h = String::from(
        "<p>Pairs of kernels far more alike than the class's typical pair, once names, literals, layout, comments and \
         the order of independent statements are set aside, and the code every student starts from and every correct \
         solution shares is left out. Similar; a TA should look: alike code is not proof of anything.</p>\n\
         <table class=\"num\"><tr><th>part</th><th>kernels compared</th><th>typical pair</th><th>most alike pair not flagged</th><th>pairs to look at</th></tr>\n",
    );
    for p in &c.similarity {
        let _ = writeln!(
            h,
            "<tr><td>{} {}</td><td>{}</td><td>{:.0}%</td><td>{}</td><td>{}</td></tr>",
            esc(&p.exercise),
            esc(&p.part),
            p.submissions,
            100.0 * p.typical,
            p.closest_below.map_or("n/a".into(), |j| format!("{:.0}%", 100.0 * j)),
            p.flagged.len()
        );
    }
    h += "</table>\n";
    if c.similarity.iter().all(|p| p.submissions == 0) {
        h += "<p class=\"dim\">No staged kernels to compare here (a merged gradebook has none: run \
              <code>grader class-report</code> on each shard's folder).</p>\n";
    }
    let name = |key: &str| c.students.iter().find(|s| s.key == key).map_or(key.to_string(), |s| s.name.clone());
    for p in &c.similarity {
        for pair in &p.flagged {
            let source = |key: &str| std::fs::read_to_string(c.staging(key).join(&p.file)).unwrap_or_default();
            let _ = writeln!(
                h,
                "<div class=\"pair\" data-pair=\"{0}|{1}\"><h3>{2} {3}: {4} and {5} <small>similar; a TA should look · \
                 {6:.0}% of their own fingerprints shared ({7}){10}</small></h3><div class=\"side\">{8}{9}</div></div>",
                esc(&pair.a),
                esc(&pair.b),
                esc(&p.exercise),
                esc(&p.part),
                esc(&name(&pair.a)),
                esc(&name(&pair.b)),
                100.0 * pair.jaccard,
                pair.shared,
                listing(&name(&pair.a), &source(&pair.a), &pair.lines_a),
                listing(&name(&pair.b), &source(&pair.b), &pair.lines_b),
                pair.ptx_jaccard.map(|j| format!("; compiled PTX {:.0}% alike", 100.0 * j)).unwrap_or_default()
            );
        }
    }
    section("similarity", "Similarity", &h)
}

/// A source listing with the matching lines marked.
fn listing(title: &str, src: &str, marked: &[usize]) -> String {
    let marked: BTreeSet<usize> = marked.iter().copied().collect();
    let mut h = format!("<div><b>{}</b><pre class=\"src\">", esc(title));
    for (i, line) in src.lines().enumerate() {
        let n = i + 1;
        if marked.contains(&n) {
            let _ = writeln!(h, "<mark>{n:>3} {}</mark>", esc(line));
        } else {
            let _ = writeln!(h, "{n:>3} {}", esc(line));
        }
    }
    h + "</pre></div>"
}

impl Class {
    fn staging(&self, key: &str) -> std::path::PathBuf {
        self.out.join("staging").join(key)
    }
}

const CSS: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;background:#fff}\
h2{border-top:1px solid #ddd;padding-top:14px}h3 small,h2 small{font-weight:normal;color:#777}\
.good{color:#2e7d32}.bad{color:#c62828}.dim{color:#888}.env{color:#555}.note{background:#fff8e1;padding:6px 10px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}\
table.num td{text-align:right}table.num td:first-child{text-align:left}\
pre{white-space:pre-wrap;background:#f7f7f7;padding:6px;margin:2px 0}pre.msg{max-width:520px;font-size:12px}\
.row{display:flex;flex-wrap:wrap;gap:8px}.part{border-left:3px solid #eee;padding-left:10px;margin:12px 0}\
.verdict{font-family:monospace;background:#fdecea;padding:0 3px}\
.side{display:flex;gap:10px}.side>div{flex:1;min-width:0}pre.src{font-size:12px;white-space:pre;overflow-x:auto}\
mark{background:#fff3b0;display:block}\
figure.chart{margin:10px 0;overflow-x:auto}.row figure.chart{flex:1 1 460px;max-width:540px}\
.row figure.chart svg{width:100%;height:auto}figcaption{color:#555;font-size:13px}\
svg text.lbl{font:12px sans-serif;fill:#333}svg text.val{font:11px sans-serif;fill:#444}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::gradebook::{ExerciseColumn, Gradebook, Row};
    use crate::report::{CompileReport, CompileStatus, ExerciseReport, GradeReport};

    fn student(key: &str, name: &str, ratio: f64) -> StudentReport {
        let status = if ratio >= 1.25 { Status::Pass } else { Status::Fail };
        let mut t = TestReport::new("ex03::tiled::perf::faster-than-naive".into(), kit::CheckKind::Performance, status);
        t.perf = Some(kit::perf::PerfFigures {
            kind: "speedup".into(),
            value: ratio,
            threshold: 1.25,
            student: 10.0 / ratio,
            baseline: 10.0,
            unit: "ms".into(),
            baseline_name: "the naive kernel".into(),
            threshold_from: None,
            margin: None,
        });
        t.score = 2.5;
        t.max_score = 2.5;
        let mut grades = GradeReport::new(1, std::path::Path::new("/x"), "exercises", Default::default());
        grades.exercises = vec![ExerciseReport {
            id: "ex03".into(),
            title: "matmul".into(),
            score: 0.0,
            max_score: 0.0,
            parts: vec![PartReport::new(
                "tiled",
                "exercises/ex03-matmul/kernels/matmul_tiled.cu",
                CompileReport::with(CompileStatus::Ok, None),
                vec![t],
            )],
        }];
        grades.total_up();
        StudentReport {
            schema: crate::batch::student::SCHEMA.into(),
            key: key.into(),
            name: name.into(),
            status: "graded".into(),
            notes: vec![],
            intake: Default::default(),
            grades,
        }
    }

    fn class(leaderboard: bool, names: bool) -> Class {
        let students = vec![student("ana", "Ana Lima", 1.1), student("bo", "Bo Chen", 3.0)];
        let rows = students.iter().map(|s| Row::of(s, crate::platforms::Maximum::GradedHere)).collect();
        Class {
            out: "/nowhere".into(),
            book: Gradebook {
                schema: crate::batch::gradebook::SCHEMA.into(),
                grader_version: "0".into(),
                seed: 9,
                backend: "cuda".into(),
                exercises: vec![ExerciseColumn { id: "ex03".into(), max_score: 2.5 }],
                shard: None,
                maximum: None,
                credit: None,
                students: rows,
            },
            students,
            time: None,
            reference: None,
            similarity: vec![],
            leaderboard,
            names,
            stubs: Default::default(),
        }
    }

    #[test]
    fn leaderboards_are_anonymous_unless_asked_and_off_when_the_course_says_so() {
        let page = render(&class(true, false));
        let (bo, ana) = (anonymous("bo", 9), anonymous("ana", 9));
        assert_ne!(bo, ana);
        let board = &page[page.find("class=\"leaderboard\"").expect("a leaderboard")..];
        assert!(board.find(&bo).unwrap() < board.find(&ana).unwrap(), "the fastest first");
        assert!(!page.contains("Bo Chen") && !page.contains("Ana Lima"), "no names by default");
        assert!(page.contains("2 measured · 1 passed"), "the distribution counts both");
        let named = render(&class(true, true));
        assert!(named.contains("<td>Bo Chen</td>"));
        let off = render(&class(false, true));
        assert!(!off.contains("class=\"leaderboard\"") && off.contains("Leaderboards are off"));
    }

    #[test]
    fn under_scaled_credit_the_leaderboard_shows_each_share() {
        let mut c = class(true, false);
        for (s, share) in c.students.iter_mut().zip([0.75, 1.0]) {
            let t = &mut s.grades.exercises[0].parts[0].tests[0];
            t.credit = Some(share);
        }
        let page = render(&c);
        let board = &page[page.find("class=\"leaderboard\"").expect("a leaderboard")..];
        assert!(
            board.contains("<th>credit</th>") && board.contains("<td>75 %</td>") && board.contains("<td>100 %</td>")
        );
        assert!(!render(&class(true, false)).contains("<th>credit</th>"), "no column under threshold credit");
    }
    /// Issue 47: the failure tables were filled by unchanged stubs, and "What
    /// needs a TA's eye" counted none of them.
    #[test]
    fn unchanged_stubs_are_counted_for_a_ta_and_left_out_of_what_went_wrong() {
        let mut c = class(true, false);
        let file = c.students[0].grades.exercises[0].parts[0].file.clone();
        assert!(
            render(&c).contains("<td><a href=\"#part-ex03-tiled\"><code>ex03::tiled::perf::faster-than-naive</code>")
        );
        c.stubs.insert(("ana".into(), file));
        let page = render(&c);
        let wrong = &page[page.find("data-section=\"wrong\"").unwrap()..page.find("data-section=\"scores\"").unwrap()];
        assert!(!wrong.contains("faster-than-naive") && wrong.contains("1 part handed in as the stub"), "{wrong}");
        assert!(
            page.contains("What needs a TA&#39;s eye (1 student)")
                || page.contains("What needs a TA's eye (1 student)"),
            "{page}"
        );
        assert!(page.contains("<td class=\"bad\">unchanged stub</td>"));
        assert!(
            page.find("data-section=\"wrong\"").unwrap() < page.find("data-section=\"scores\"").unwrap(),
            "what went wrong comes first"
        );
    }

    #[test]
    fn full_marks_are_counted_out_of_the_gradebooks_one_maximum() {
        let mut c = class(true, false);
        // Graded without a GPU: the column is what counts here, 2.50 of the exercise's points.
        c.students[0].grades.exercises[0].parts[0].tests[0].score = 0.0;
        c.book.students = c.students.iter().map(|s| Row::of(s, crate::platforms::Maximum::GradedHere)).collect();
        c.book.exercises[0].max_score = 2.5;
        let page = render(&c);
        let row = &page[page.find("<tr data-exercise=\"ex03\">").unwrap()..];
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(row.contains("<td>2.50</td>"), "{row}");
        assert!(row.ends_with("<td>1</td><td>1</td>"), "bo's 2.50 of 2.50 is full marks: {row}");
        assert!(
            page.contains("<tr data-exercise=\"total\"><td>total</td><td>2.50</td>"),
            "the total is the columns' sum"
        );
    }

    #[test]
    fn a_verdict_shows_with_its_meaning() {
        assert!(verdict_meaning("race").contains("without a barrier"));
        let mut c = class(true, false);
        c.students[0].grades.exercises[0].parts[0].tests[0].verdict = Some("race".into());
        let page = render(&c);
        assert!(
            page.contains("race</span> (threads read and write the same memory without a barrier between): 1"),
            "{page}"
        );
        assert!(!page.contains(">race 1<"));
    }
}
