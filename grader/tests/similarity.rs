//! Similarity on a class of independently written kernels (the variants
//! corpus's cases of four exercises, each handed in as a flat upload) plus
//! planted copies of some of them, renamed, reformatted, reordered and
//! re-commented here: every planted pair is flagged, and no pair of distinct
//! variants is. No grading: the batch's intake stages the files, and
//! similarity reads the staging folders as it does after a batch.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use grader::batch::intake;
use grader::similarity;

const EXERCISES: &[&str] = &["ex03", "ex05", "ex07", "ex08"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Words a student's renaming would not touch.
fn is_keyword(w: &str) -> bool {
    [
        "int",
        "float",
        "unsigned",
        "const",
        "void",
        "for",
        "if",
        "else",
        "while",
        "return",
        "extern",
        "define",
        "pragma",
        "unroll",
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
        "x",
        "y",
        "z",
        "__global__",
        "__shared__",
        "__syncthreads",
        "__restrict__",
        "__ldg",
        "include",
    ]
    .contains(&w)
}

/// Every name the kernel declares (variables, parameters, macros; not the kernel), renamed.
fn rename(src: &str) -> String {
    let decl = regex_lite(src);
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if decl.contains(word.as_str()) {
            out.push_str(&format!("my_{word}"));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in src.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Names after a type word or `#define`, and parameters; the kernel's own name stays.
fn regex_lite(src: &str) -> BTreeSet<String> {
    let code: String = src.lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n");
    let words: Vec<&str> =
        code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
    let mut names = BTreeSet::new();
    for w in words.windows(2) {
        if ["int", "float", "define", "unsigned"].contains(&w[0])
            && !is_keyword(w[1])
            && !w[1].starts_with(|c: char| c.is_ascii_digit())
        {
            names.insert(w[1].to_string());
        }
    }
    // `int tx = ..., ty = ...;`: names after a comma followed by `=`.
    for piece in code.split(',').skip(1) {
        let mut it = piece.trim_start().splitn(2, |c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        if let (Some(name), Some(rest)) = (it.next(), it.next()) {
            if !name.is_empty()
                && !is_keyword(name)
                && rest.trim_start().starts_with('=')
                && !rest.trim_start().starts_with("==")
            {
                names.insert(name.to_string());
            }
        }
    }
    for kernel in code.split("void").skip(1) {
        if let Some(name) = kernel.trim_start().split('(').next() {
            names.remove(name.trim());
        }
    }
    names
}

/// Tabs instead of spaces, opening braces on a line of their own, no blank lines, spaces dropped after commas.
fn reformat(src: &str) -> String {
    src.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let body = l.trim_start();
            let indent = (l.len() - body.len()) / 4;
            let body = body.replace(", ", ",").replace(") {", ")\n{");
            format!("{}{body}", "\t".repeat(indent))
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Swaps the first two adjacent one-line declarations that do not use each other; `None` if there are none.
fn reorder(src: &str) -> Option<String> {
    let lines: Vec<&str> = src.lines().collect();
    let decl = |l: &str| -> Option<String> {
        let t = l.trim();
        let rest = t.strip_prefix("int ").or_else(|| t.strip_prefix("float "))?;
        let (name, _) = rest.split_once(" = ")?;
        (t.ends_with(';') && !t.contains(',') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .then(|| name.to_string())
    };
    let uses = |l: &str, name: &str| l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| w == name);
    for i in 0..lines.len().saturating_sub(1) {
        if let (Some(a), Some(b)) = (decl(lines[i]), decl(lines[i + 1])) {
            if !uses(lines[i + 1], &a) && !uses(lines[i], &b) {
                let mut l = lines.clone();
                l.swap(i, i + 1);
                return Some(l.join("\n") + "\n");
            }
        }
    }
    None
}

/// Every comment dropped, others written.
fn recomment(src: &str) -> String {
    let mut out = String::from("/* my solution, worked out on my own */\n");
    for (i, l) in src.lines().enumerate() {
        let code = l.split("//").next().unwrap().trim_end();
        if code.trim().is_empty() {
            continue;
        }
        if i % 3 == 0 && !code.trim_start().starts_with('#') {
            out += &format!("{code} // step {i}\n");
        } else {
            out += &format!("{code}\n");
        }
    }
    out
}

/// The variants of `EXERCISES`: (name, file name, source).
fn variants() -> Vec<(String, String, String)> {
    let dir = repo().join("grader/tests/variants");
    let mut out = Vec::new();
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in names.into_iter().filter(|n| EXERCISES.iter().any(|e| n.starts_with(&format!("{e}-")))) {
        // The case's kernel files only: a grader run with the case as its root leaves target/ there.
        let kernels = walkdir::WalkDir::new(dir.join(&name).join("exercises")).into_iter().flatten();
        for f in kernels.filter(|e| e.file_type().is_file()) {
            // A kernel kept whole or as an edit of another (kit::case_file).
            let file = f.file_name().to_string_lossy().into_owned();
            let file = kit::case_file::submitted_name(&file).to_string();
            if file.ends_with(".cu") {
                out.push((name.clone(), file, kit::case_file::text(&repo(), f.path()).unwrap()));
            }
        }
    }
    out
}

/// How many fingerprints `name`'s kernel holds beyond its part's stub and
/// reference: a variant that is the reference but for its names (ex03's
/// transposed tile: `Nt[tx][ty]` is `Ns[ty][tx]` renamed) holds none, so its
/// copy is what every correct solution shares and is rightly not flagged.
fn own_fingerprints(parts: &[similarity::PartSources], name: &str) -> usize {
    let part = parts.iter().find(|p| p.submissions.iter().any(|(k, _)| k == name)).expect(name);
    let src = &part.submissions.iter().find(|(k, _)| k == name).unwrap().1;
    similarity::fingerprint(src).hashes().difference(&part.common_fingerprints()).count()
}

#[test]
fn planted_copies_are_flagged_and_distinct_variants_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let class = dir.path().join("class");
    let variants = variants();
    assert!(variants.len() >= 25, "the corpus has {} variants of {EXERCISES:?}", variants.len());
    // One flat upload per variant, and a planted copy of every third one.
    let mut planted = Vec::new();
    let mut reordered = 0;
    for (i, (name, file, src)) in variants.iter().enumerate() {
        let own = class.join(name);
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join(file), src).unwrap();
        if i % 3 == 0 {
            let moved = reorder(src);
            reordered += usize::from(moved.is_some());
            let copy = recomment(&reformat(&rename(moved.as_deref().unwrap_or(src))));
            assert_ne!(copy, *src);
            let copier = format!("zz-copy-of-{name}");
            std::fs::create_dir_all(class.join(&copier)).unwrap();
            std::fs::write(class.join(&copier).join(file), copy).unwrap();
            planted.push((name.clone(), copier));
        }
    }
    assert!(planted.len() >= 8 && reordered >= 3, "{} planted, {reordered} with statements reordered", planted.len());

    let exercises = grader::registry::select(&EXERCISES.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let expected = intake::expected_files(&exercises);
    let out = dir.path().join("grades");
    for e in std::fs::read_dir(&class).unwrap().flatten() {
        let key = e.file_name().to_string_lossy().into_owned();
        let taken = intake::stage(&e.path(), &expected, &out.join("staging").join(&key)).unwrap();
        assert_eq!((taken.layout.as_str(), taken.taken.len()), ("flat", 1), "{key}");
    }
    let parts = similarity::from_staging(&out, &exercises, &repo());
    let results: Vec<_> = parts.iter().map(similarity::compare).collect();
    let flagged: BTreeSet<(String, String)> =
        results.iter().flat_map(|r| r.flagged.iter().map(|p| (p.a.clone(), p.b.clone()))).collect();
    for r in &results {
        for p in &r.flagged {
            eprintln!(
                "{}/{}: {} ~ {}: {} shared, {:.2} jaccard {:.2} (typical {:.2})",
                r.exercise, r.part, p.a, p.b, p.shared, p.containment, p.jaccard, r.typical
            );
        }
    }
    for r in &results {
        eprintln!(
            "{}/{}: typical {:.2}, most alike pair not flagged {:?}",
            r.exercise, r.part, r.typical, r.closest_below
        );
        assert!(r.closest_below.is_none_or(|j| j < similarity::MIN_JACCARD), "{r:?}");
    }
    let (flaggable, of_the_reference): (Vec<_>, Vec<_>) =
        planted.iter().partition(|(a, _)| own_fingerprints(&parts, a) >= similarity::MIN_SHARED);
    assert!(flaggable.len() >= 8, "{} planted copies hold something beyond the reference", flaggable.len());
    let missed: Vec<_> = flaggable.iter().filter(|(a, b)| !flagged.contains(&(a.clone(), b.clone()))).collect();
    assert!(missed.is_empty(), "planted copies not flagged: {missed:?}");
    let of_the_reference_flagged: Vec<_> =
        of_the_reference.iter().filter(|(a, b)| flagged.contains(&(a.clone(), b.clone()))).collect();
    assert!(of_the_reference_flagged.is_empty(), "copies of the reference flagged: {of_the_reference_flagged:?}");
    let wrong: Vec<_> =
        flagged.iter().filter(|(a, b)| !b.starts_with("zz-copy-of-") || !b.ends_with(a.as_str())).collect();
    assert!(wrong.is_empty(), "distinct variants flagged: {wrong:?}");
    // The matching regions are marked on both sides.
    for r in &results {
        for p in &r.flagged {
            assert!(!p.lines_a.is_empty() && !p.lines_b.is_empty(), "{p:?}");
        }
    }
}
