//! The same kernel, the same figure: for every timed check, the spread of its
//! figure (the speedup or share it measured) over the students who submitted
//! the very same file (by SHA-256), written into `batch.json` (`figures`).
//! A course's reference kernel submitted by many students should measure
//! alike whichever worker graded it (issue 46: a restarted worker measured
//! `histogram_private` 24 % below the others); a spread above a few percent
//! is the grader's, not the students', and a TA sees it here first.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::report::{GradeReport, TestReport};

/// The spread of one timed check's figure over the students with one file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    /// `ex10::private::perf::faster-than-global-atomics`.
    pub check: String,
    pub sha256: String,
    /// The file is the course's reference solution (`reference/`).
    pub reference: bool,
    pub students: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// (max - min) / median.
    pub spread: f64,
}

/// What a TA should look at: a kernel whose figure moves by more than this
/// across one class (issue 46: "no reference figure spreads by more than 3 %").
pub const MAX_SPREAD: f64 = 0.03;

/// The spreads of every (timed check, file) that two students or more
/// share, the references first, then the widest. `reference_sha(file)`: the
/// SHA-256 of the course's reference of a part's `file` (`exercises/...`).
pub fn spreads<'r>(
    reports: impl IntoIterator<Item = &'r GradeReport>,
    reference_sha: impl Fn(&str) -> Option<String>,
) -> Vec<Spread> {
    let parts = reports.into_iter().flat_map(|r| &r.exercises).flat_map(|e| &e.parts);
    spreads_of(parts.map(|p| (p.file.as_str(), p.sha256.as_deref(), p.tests.as_slice())), reference_sha)
}

/// [`spreads`] of parts given as (file, SHA-256, tests).
pub fn spreads_of<'r>(
    parts: impl IntoIterator<Item = (&'r str, Option<&'r str>, &'r [TestReport])>,
    reference_sha: impl Fn(&str) -> Option<String>,
) -> Vec<Spread> {
    let mut groups: BTreeMap<(String, String), (bool, Vec<f64>)> = BTreeMap::new();
    let mut refs: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (file, sha, tests) in parts {
        let Some(sha) = sha else { continue };
        let reference = refs.entry(file.to_string()).or_insert_with(|| reference_sha(file)).as_deref() == Some(sha);
        for t in tests {
            let Some(value) = t.perf.as_ref().map(|p| p.value).filter(|v| v.is_finite()) else { continue };
            groups.entry((t.name.clone(), sha.to_string())).or_insert_with(|| (reference, Vec::new())).1.push(value);
        }
    }
    let mut out: Vec<Spread> = groups
        .into_iter()
        .filter(|(_, (_, v))| v.len() >= 2)
        .map(|((check, sha256), (reference, mut v))| {
            v.sort_by(f64::total_cmp);
            let (min, max) = (v[0], v[v.len() - 1]);
            let median = if v.len() % 2 == 1 { v[v.len() / 2] } else { (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0 };
            let spread = if median > 0.0 { (max - min) / median } else { 0.0 };
            Spread { check, sha256, reference, students: v.len(), min, median, max, spread }
        })
        .collect();
    out.sort_by(|a, b| b.reference.cmp(&a.reference).then(b.spread.total_cmp(&a.spread)));
    out
}

/// The SHA-256 of the reference of `file` (`exercises/<folder>/<file>`) under `course`.
pub fn reference_sha(course: &Path, file: &str) -> Option<String> {
    use sha2::Digest;
    let rel = file.strip_prefix("exercises/")?;
    let bytes = std::fs::read(course.join("reference").join(rel)).ok()?;
    Some(sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect())
}

/// One line per reference figure that spreads by more than [`MAX_SPREAD`].
pub fn warnings(spreads: &[Spread]) -> Vec<String> {
    spreads
        .iter()
        .filter(|s| s.reference && s.spread > MAX_SPREAD)
        .map(|s| {
            format!(
                "the reference's `{}` measured {:.2} to {:.2} (median {:.2}) across {}: {:.0}% apart, more \
                 than {:.0}% (batch.json `figures`; workers/timeline.jsonl says which worker graded which)",
                s.check,
                s.min,
                s.max,
                s.median,
                crate::words::count(s.students, "student"),
                s.spread * 100.0,
                MAX_SPREAD * 100.0
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::CheckKind;

    fn timed(value: f64) -> TestReport {
        let mut t = TestReport::new(
            "ex10::private::perf::faster-than-global-atomics".into(),
            CheckKind::Performance,
            crate::report::Status::Pass,
        );
        t.perf = Some(kit::perf::PerfFigures {
            kind: "speedup".into(),
            value,
            threshold: 3.0,
            student: 1.5,
            baseline: 15.0,
            unit: "ms".into(),
            baseline_name: "one global atomicAdd per byte".into(),
            threshold_from: None,
            margin: None,
        });
        t
    }

    #[test]
    fn the_same_kernel_measured_two_ways_is_shown_and_warned_about() {
        // Issue 46: 55 students' reference at 10.17x, 19 at 7.79x; one student's own kernel alone.
        let (good, bad, own) = (vec![timed(10.17)], vec![timed(7.79)], vec![timed(4.0)]);
        let file = "exercises/ex10-histogram/kernels/histogram_private.cu";
        let mut parts: Vec<(&str, Option<&str>, &[TestReport])> = Vec::new();
        parts.extend(std::iter::repeat_n((file, Some("ref"), good.as_slice()), 55));
        parts.extend(std::iter::repeat_n((file, Some("ref"), bad.as_slice()), 19));
        parts.push((file, Some("mine"), own.as_slice()));
        let spreads = spreads_of(parts, |_| Some("ref".into()));
        assert_eq!(spreads.len(), 1, "a file one student has shows no spread: {spreads:?}");
        let s = &spreads[0];
        assert!(s.reference && s.students == 74 && s.min == 7.79 && s.max == 10.17 && s.median == 10.17, "{s:?}");
        assert!((s.spread - (10.17 - 7.79) / 10.17).abs() < 1e-12);
        let w = warnings(&spreads);
        assert!(w.len() == 1 && w[0].contains("7.79 to 10.17") && w[0].contains("74 students"), "{w:?}");
        // Within 3 %: shown, not warned about.
        let close = [vec![timed(10.0)], vec![timed(10.2)]];
        let parts = close.iter().map(|t| (file, Some("ref"), t.as_slice()));
        let spreads = spreads_of(parts, |_| Some("ref".into()));
        assert_eq!((spreads.len(), warnings(&spreads).len()), (1, 0));
    }
}
