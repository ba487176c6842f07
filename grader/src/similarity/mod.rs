//! Pairs of submissions whose kernels are far more alike than the class's
//! typical pair, per part: a prompt for a TA to look, never a verdict.
//!
//! Each kernel becomes a stream of normalised tokens ([`tokens`]: comments,
//! layout, names and literals gone, independent statements in one order),
//! hashed in overlapping k-grams and winnowed (Schleimer, Wilkerson and Aiken,
//! "Winnowing: local algorithms for document fingerprinting", SIGMOD 2003, the
//! method of MOSS): of every window of `W` consecutive k-gram hashes the
//! smallest is kept, so any shared run of at least `K + W - 1` tokens shares a
//! fingerprint. Fingerprints of the code every student starts from (the
//! exercise's stub) and of the reference solution (what every correct solution
//! shares) are dropped: two kernels are alike only by what they share beyond
//! those. A pair is flagged when nearly all the fingerprints either kernel
//! holds beyond those are held by both (Jaccard), enough of them to mean
//! something, and far more than in the class's typical pair.

pub mod ptx;
pub mod tokens;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kit::Exercise;
use serde::{Deserialize, Serialize};

/// Tokens per k-gram.
pub const K: usize = 8;
/// k-grams per winnowing window.
pub const W: usize = 4;
/// Of the fingerprints either kernel holds beyond the common ones, the share
/// both must hold (Jaccard). Planted copies (renamed, reformatted, reordered,
/// re-commented) score 1; the most alike distinct kernels of the variants
/// corpus (one is the other plus a `#pragma unroll 1`) 0.82.
pub const MIN_JACCARD: f64 = 0.9;
/// Fingerprints the two must share beyond the stub's and the reference's.
pub const MIN_SHARED: usize = 2;
/// A flagged pair's Jaccard is at least this many times the class's median pair's.
pub const OVER_TYPICAL: f64 = 2.0;

/// A kernel's fingerprints: hash → the token positions where it was selected.
#[derive(Debug, Clone, Default)]
pub struct Fingerprints {
    pub tokens: Vec<tokens::Token>,
    pub selected: BTreeMap<u64, Vec<usize>>,
}

fn fnv(s: &[tokens::Token]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for t in s {
        for b in t.text.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// Tokens per k-gram of PTX (an instruction is 4 to 8 tokens).
pub const PTX_K: usize = 16;

/// Winnowed fingerprints of `src`.
pub fn fingerprint(src: &str) -> Fingerprints {
    winnow(tokens::normalise(src), K)
}

/// Winnowed fingerprints of a PTX text (the second opinion).
pub fn fingerprint_ptx(text: &str) -> Fingerprints {
    winnow(ptx::tokens(text), PTX_K)
}

fn winnow(toks: Vec<tokens::Token>, k: usize) -> Fingerprints {
    let mut selected: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    if toks.len() >= k {
        let hashes: Vec<u64> = toks.windows(k).map(fnv).collect();
        let mut last = usize::MAX;
        for start in 0..hashes.len().saturating_sub(W - 1).max(1) {
            let end = (start + W).min(hashes.len());
            // The rightmost smallest hash of the window (as the paper does).
            let (pos, &h) = hashes[start..end]
                .iter()
                .enumerate()
                .rev()
                .min_by_key(|(_, h)| **h)
                .map(|(i, h)| (start + i, h))
                .expect("a window is never empty");
            if pos != last {
                selected.entry(h).or_default().push(pos);
                last = pos;
            }
        }
    }
    Fingerprints { tokens: toks, selected }
}

impl Fingerprints {
    pub fn hashes(&self) -> BTreeSet<u64> {
        self.selected.keys().copied().collect()
    }

    /// Source lines covered by the k-grams of `hashes`.
    pub fn lines_of(&self, hashes: &BTreeSet<u64>) -> BTreeSet<usize> {
        let mut lines = BTreeSet::new();
        for (h, positions) in &self.selected {
            if hashes.contains(h) {
                for &p in positions {
                    lines.extend(self.tokens[p..(p + K).min(self.tokens.len())].iter().map(|t| t.line));
                }
            }
        }
        lines
    }
}

/// One part's kernels: the students' and what everyone shares.
pub struct PartSources {
    pub exercise: String,
    pub part: String,
    /// As graded: "exercises/ex03-matmul/kernels/matmul_tiled.cu".
    pub file: String,
    /// The stub and the reference, whose fingerprints do not count.
    pub common: Vec<String>,
    /// (submission key, source).
    pub submissions: Vec<(String, String)>,
    /// The second opinion, where the batch's PTX could be had: the stub's and
    /// the reference's PTX, and each submission's by key.
    pub ptx: Option<PartPtx>,
}

impl PartSources {
    /// The stub's and the reference's fingerprints: what no pair is alike by.
    pub fn common_fingerprints(&self) -> BTreeSet<u64> {
        self.common.iter().flat_map(|s| fingerprint(s).hashes()).collect()
    }
}

#[derive(Debug, Clone, Default)]
pub struct PartPtx {
    pub common: Vec<String>,
    pub submissions: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Pair {
    pub a: String,
    pub b: String,
    /// Fingerprints both hold beyond the stub's and the reference's.
    pub shared: usize,
    /// `shared` over the smaller kernel's own fingerprints.
    pub containment: f64,
    /// `shared` over the fingerprints either holds (beyond the common ones).
    pub jaccard: f64,
    /// The same Jaccard on the compiled PTX (registers, labels and names
    /// normalised, the stub's and reference's PTX left out): a second opinion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptx_jaccard: Option<f64>,
    /// Source lines of each that the shared fingerprints cover.
    pub lines_a: Vec<usize>,
    pub lines_b: Vec<usize>,
}

/// One part's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PartSimilarity {
    pub exercise: String,
    pub part: String,
    pub file: String,
    pub submissions: usize,
    /// The median Jaccard over every pair of the class (the typical pair).
    pub typical: f64,
    /// The Jaccard of the most alike pair that is not flagged (how near the flag the class came).
    #[serde(default)]
    pub closest_below: Option<f64>,
    /// Pairs far more alike than that, most alike first.
    pub flagged: Vec<Pair>,
}

/// Every pair of `p`'s submissions, and those flagged.
pub fn compare(p: &PartSources) -> PartSimilarity {
    let common = p.common_fingerprints();
    let prints: Vec<(&str, Fingerprints, BTreeSet<u64>)> = p
        .submissions
        .iter()
        .map(|(k, src)| {
            let f = fingerprint(src);
            let own: BTreeSet<u64> = f.hashes().difference(&common).copied().collect();
            (k.as_str(), f, own)
        })
        .collect();
    let mut all = Vec::new();
    for i in 0..prints.len() {
        for j in i + 1..prints.len() {
            let (a, b) = (&prints[i], &prints[j]);
            let shared: BTreeSet<u64> = a.2.intersection(&b.2).copied().collect();
            let smaller = a.2.len().min(b.2.len());
            let containment = if smaller == 0 { 0.0 } else { shared.len() as f64 / smaller as f64 };
            let union = a.2.union(&b.2).count();
            let jaccard = if union == 0 { 0.0 } else { shared.len() as f64 / union as f64 };
            all.push((i, j, shared, containment, jaccard));
        }
    }
    let mut cs: Vec<f64> = all.iter().map(|x| x.4).collect();
    cs.sort_by(f64::total_cmp);
    let typical = if cs.is_empty() { 0.0 } else { cs[cs.len() / 2] };
    let flags =
        |shared: &BTreeSet<u64>, j: f64| shared.len() >= MIN_SHARED && j >= MIN_JACCARD && j >= OVER_TYPICAL * typical;
    let closest_below = all
        .iter()
        .filter(|x| !flags(&x.2, x.4))
        .map(|x| x.4)
        .fold(None, |m: Option<f64>, j| Some(m.map_or(j, |m| m.max(j))));
    let mut flagged: Vec<Pair> = all
        .into_iter()
        .filter(|(_, _, shared, _, j)| flags(shared, *j))
        .map(|(i, j, shared, containment, jaccard)| Pair {
            a: prints[i].0.to_string(),
            b: prints[j].0.to_string(),
            shared: shared.len(),
            containment,
            jaccard,
            ptx_jaccard: p.ptx.as_ref().and_then(|x| ptx_jaccard(x, prints[i].0, prints[j].0)),
            lines_a: prints[i].1.lines_of(&shared).into_iter().collect(),
            lines_b: prints[j].1.lines_of(&shared).into_iter().collect(),
        })
        .collect();
    flagged.sort_by(|x, y| y.jaccard.total_cmp(&x.jaccard).then(y.shared.cmp(&x.shared)));
    PartSimilarity {
        exercise: p.exercise.clone(),
        part: p.part.clone(),
        file: p.file.clone(),
        submissions: p.submissions.len(),
        typical,
        closest_below,
        flagged,
    }
}

/// The Jaccard of two submissions' PTX beyond the common PTX's fingerprints.
fn ptx_jaccard(p: &PartPtx, a: &str, b: &str) -> Option<f64> {
    let common: BTreeSet<u64> = p.common.iter().flat_map(|t| fingerprint_ptx(t).hashes()).collect();
    let own = |k: &str| -> Option<BTreeSet<u64>> {
        Some(fingerprint_ptx(p.submissions.get(k)?).hashes().difference(&common).copied().collect())
    };
    let (a, b) = (own(a)?, own(b)?);
    let union = a.union(&b).count();
    (union > 0).then(|| a.intersection(&b).count() as f64 / union as f64)
}

/// The PTX of each source as the batch compiled it (`compile_options` for
/// `arch`, so a batch's files are hits in its cache `<out>/ptx-cache`); a
/// source that does not compile has none.
pub fn compile_part(
    compiler: &ptx_build::Compiler,
    arch: Option<(u32, u32)>,
    file: &str,
    common: &[String],
    submissions: &[(String, String)],
) -> PartPtx {
    let options = crate::grade::compile_options(arch);
    let ptx = |text: &str| {
        let src = ptx_build::SourceFile { display_path: file.to_string(), text: text.to_string() };
        compiler.compile(&src, &options).ok().map(|p| p.text)
    };
    PartPtx {
        common: common.iter().filter(|t| !t.is_empty()).filter_map(|t| ptx(t)).collect(),
        submissions: submissions.iter().filter_map(|(k, t)| Some((k.clone(), ptx(t)?))).collect(),
    }
}

/// The sources of every part of `exercises` from a batch's staging folders
/// (`<out>/staging/<key>/<file>`), with the stub and the reference from the
/// course's `root`. Submissions without the file, or with the stub unchanged,
/// are left out.
pub fn from_staging(out: &Path, exercises: &[Exercise], root: &Path) -> Vec<PartSources> {
    let staging = out.join("staging");
    let mut keys: Vec<String> = std::fs::read_dir(&staging)
        .map(|d| {
            d.flatten().filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
        })
        .unwrap_or_default();
    keys.sort();
    let mut parts = Vec::new();
    for ex in exercises {
        for part in &ex.parts {
            let file = format!("exercises/{}/{}", ex.folder_name(), part.file);
            let stub = std::fs::read_to_string(root.join(&file)).unwrap_or_default();
            let reference = std::fs::read_to_string(root.join("reference").join(ex.folder_name()).join(part.file))
                .unwrap_or_default();
            let submissions = keys
                .iter()
                .filter_map(|k| Some((k.clone(), std::fs::read_to_string(staging.join(k).join(&file)).ok()?)))
                .filter(|(_, src)| *src != stub)
                .collect();
            parts.push(PartSources {
                exercise: ex.id.into(),
                part: part.name.into(),
                file,
                common: vec![stub, reference],
                submissions,
                ptx: None,
            });
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_run_long_enough_shares_a_fingerprint() {
        let body = "int a = b[c] * d + e; f[g] = a - h[i]; while (j < k) { l += m[j] * n; j += o; }";
        let x = fingerprint(&format!("void p() {{ q = 1; {body} }}"));
        let y = fingerprint(&format!("float r(int s) {{ if (s) return 2.0f; {body} return 0; }}"));
        assert!(!x.hashes().is_disjoint(&y.hashes()));
        assert!(fingerprint("int a;").selected.is_empty(), "shorter than one k-gram");
    }
}
