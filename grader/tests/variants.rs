//! The variants corpus (`grader/tests/variants`, docs/grading-accuracy.md) on
//! the simulator: correct kernels unlike the reference must get full marks, and
//! broken ones (races that pass by luck, off-by-one bounds, reads past the end
//! that do not change the output, wrong non-square strides, global where shared
//! was asked, the wrong technique, hard-coded answers) must fail the check and
//! with the verdict `expected.json` names. The `gpu` column is checked on a GPU
//! by `grader/tests/corpus/run-gpu.sh variants`, which also times every family
//! of variants the performance thresholds are calibrated from.

use crate::corpus;
use crate::support;

use std::collections::BTreeMap;

use corpus::{Backend, Corpus, Settings};

const SETTINGS: Settings = Settings { seed: 1, compile_timeout_secs: "60" };

/// The whole corpus (169 cases, one grader process each, as many at once as
/// there are cores): minutes on 2 cores
/// (docs/authoring.md, "Before pushing"), so it is left out of
/// `cargo test --workspace` and CI runs it explicitly:
/// `cargo test -p grader --test suite -- --ignored variants::`.
#[test]
#[ignore = "the whole corpus, minutes on 2 cores: CI runs it with -- --ignored; the default lane grades a sample"]
fn on_the_simulator_every_variant_gets_its_verdict() {
    if !support::nvrtc_available() {
        return;
    }
    let outcome = corpus::run(&Corpus::open("variants").in_parallel(), Backend::Sim, &SETTINGS, |_, _, _| {});
    let report = outcome.report("variants", Backend::Sim);
    // The whole table, mismatches or not: docs/grading-accuracy.md is written from it.
    println!("{report}");
    assert!(outcome.problems.is_empty(), "{report}");
}

/// The default lane's share of the corpus: one case of each exercise, picked
/// by `support::sample` (the same every run; `CUDA_LAB_SAMPLE_SEED=N` picks
/// another one each), so that every exercise's grading is exercised on a
/// variant unlike its reference in every `cargo test --workspace`.
#[test]
fn on_the_simulator_a_sample_of_variants_gets_its_verdict() {
    if !support::nvrtc_available() {
        return;
    }
    let corpus = Corpus::open("variants").in_parallel();
    let chosen: Vec<String> =
        support::sample("variants", &corpus::cases_by_exercise(&corpus), 1).into_iter().map(|(n, _)| n).collect();
    assert!(chosen.len() >= grader::registry::all().len(), "one case per exercise: {chosen:?}");
    let outcome =
        corpus::run_only(&corpus, Backend::Sim, &SETTINGS, |name| chosen.iter().any(|c| c == name), |_, _, _| {});
    let report = outcome.report("variants", Backend::Sim);
    println!("{report}");
    assert!(outcome.problems.is_empty(), "{report}");
}

/// Issue 51: kernels using CUB (`cub::BlockReduce`, `cub::BlockScan`) and
/// cooperative groups' reduce, each under the default `[headers]` and under a
/// course's own (the case's cuda-lab.toml): a compile error naming the setting
/// where the family is not allowed, graded by memory like any kernel where it is.
pub const HEADER_CASES: &[&str] = &[
    "ex08-sequential-cub-block-reduce",
    "ex08-sequential-cub-block-reduce-allowed",
    "ex08-sequential-cg-reduce",
    "ex08-sequential-cg-reduce-forbidden",
    "ex11-brent-kung-cub-block-scan",
    "ex11-brent-kung-cub-block-scan-allowed",
];

/// `cargo test -p grader --test suite -- --ignored variants::header_cases`.
#[test]
#[ignore = "six gradings on the simulator (a minute on 2 cores); run by name or with the whole corpus"]
fn header_cases_get_their_verdicts() {
    if !support::nvrtc_available() {
        return;
    }
    let outcome = corpus::run_only(
        &Corpus::open("variants"),
        Backend::Sim,
        &SETTINGS,
        |name| HEADER_CASES.contains(&name),
        |_, _, _| {},
    );
    let report = outcome.report("variants", Backend::Sim);
    println!("{report}");
    assert!(outcome.problems.is_empty(), "{report}");
}

/// Needs no compiler: the table, the folders and the registry agree.
#[test]
fn the_table_covers_the_corpus_and_names_real_parts() {
    corpus::check_table(&Corpus::open("variants"));
}

/// Every timed check is bracketed by a family: at least three correct variants
/// unlike the reference and one slow or wrong-technique variant; and every
/// family a case names is a real timed check of the part the case varies.
#[test]
fn every_timed_check_has_a_family() {
    let corpus = Corpus::open("variants");
    let mut families: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for exercise in grader::registry::all() {
        for part in &exercise.parts {
            for check in part.checks.iter().filter(|c| c.kind.label() == "perf") {
                families.insert(format!("{}/{}/perf::{}", exercise.id, part.name, check.name), (0, 0));
            }
        }
    }
    assert!(families.len() >= 11, "{families:?}");
    for (name, case) in &corpus.table.cases {
        for family in &case.calibrates {
            let (part, _) = family.rsplit_once('/').unwrap();
            assert!(case.parts.contains_key(part), "{name}: calibrates {family} but does not vary {part}");
            let counts = families.get_mut(family).unwrap_or_else(|| panic!("{name}: no timed check {family}"));
            match case.role.as_deref() {
                Some("correct") => counts.0 += 1,
                Some("slow" | "technique") => counts.1 += 1,
                other => panic!("{name}: role {other:?}, expected `correct`, `slow` or `technique`"),
            }
        }
    }
    for (family, (correct, slow)) in families {
        assert!(correct >= 3 && slow >= 1, "{family}: {correct} correct and {slow} slow variant(s)");
    }
}

/// Needs no compiler: the comparison itself. A wrong verdict, a wrong failing
/// check or a missing phrase is a mismatch (the corpus test then fails); the
/// same on a part marked as waiting for unmerged work is only pending; a mark
/// whose verdict is already met is reported for removal.
#[test]
fn a_wrong_verdict_is_a_mismatch_and_a_marked_one_is_pending() {
    let row = |needs: &str| -> corpus::Expected {
        let needs = if needs.is_empty() { String::new() } else { format!(r#", "needs": {{"sim": "{needs}"}}"#) };
        serde_json::from_str(&format!(
            r#"{{"sim": "race", "gpu": "race", "check": "correct::", "says": ["pi_shared.cu:"]{needs}}}"#
        ))
        .unwrap()
    };
    let mut outcome = corpus::Outcome::default();
    let race = "data race at exercises/ex01-pi/kernels/pi_shared.cu:8";
    let sim = Backend::Sim;
    outcome.add(sim, "good", "ex01/shared", &row(""), "race", "race", "ex01::shared::correct::n=1", race);
    assert!(outcome.problems.is_empty() && outcome.pending.is_empty() && outcome.met.is_empty());
    outcome.add(sim, "passes", "ex01/shared", &row(""), "race", "pass", "", "");
    outcome.add(sim, "other-check", "ex01/shared", &row(""), "race", "race", "ex01::shared::perf::x", race);
    outcome.add(sim, "no-line", "ex01/shared", &row(""), "race", "race", "ex01::shared::correct::n=1", "data race");
    assert_eq!(outcome.problems.len(), 3, "{:?}", outcome.problems);
    assert!(outcome.problems[0].contains("verdict `pass`, expected `race`"));
    assert!(outcome.problems[1].contains("first failing test `ex01::shared::perf::x`"));
    assert!(outcome.problems[2].contains("does not say \"pi_shared.cu:\""));
    outcome.add(sim, "waits", "ex01/shared", &row("racecheck"), "race", "pass", "", "");
    assert_eq!((outcome.problems.len(), outcome.pending.len()), (3, 1));
    outcome.add(sim, "done", "ex01/shared", &row("racecheck"), "race", "race", "ex01::shared::correct::n=1", race);
    assert_eq!(outcome.met.len(), 1);
    assert!(outcome
        .report("variants", sim)
        .contains("3 mismatch(es), 1 pending on unmerged work, 1 mark(s) to remove"));
}

/// The kernels kept outside the corpus that a case may point at instead of
/// holding a copy: the calibration kernels, the slow variants, the references.
fn kernels_kept_elsewhere(workspace: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut kept = Vec::new();
    for top in ["exercises", "reference"].into_iter().filter(|top| workspace.join(top).is_dir()) {
        for entry in walkdir::WalkDir::new(workspace.join(top)).sort_by_file_name() {
            let path = entry.unwrap().into_path();
            let rel = path.strip_prefix(workspace).unwrap().to_string_lossy().replace('\\', "/");
            let kept_kernel = rel.ends_with(".cu")
                && (rel.starts_with("reference/") || (rel.starts_with("exercises/") && rel.contains("/calibration/")));
            if kept_kernel {
                kept.push(path);
            }
        }
    }
    kept
}

/// Every file under `cases` that is byte for byte one of `kept` (as the
/// submission gets it: an edit applied), with the pointer that should stand
/// in its place.
fn copies(cases: &std::path::Path, kept: &[std::path::PathBuf], workspace: &std::path::Path) -> Vec<String> {
    let mut by_bytes: std::collections::HashMap<Vec<u8>, &std::path::PathBuf> = std::collections::HashMap::new();
    for k in kept {
        by_bytes.entry(std::fs::read(k).unwrap()).or_insert(k);
    }
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(cases).sort_by_file_name() {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        // A kernel kept as an edit that changes nothing is a copy too.
        let text = kit::case_file::text(workspace, entry.path()).unwrap_or_else(|e| panic!("{e:#}"));
        if let Some(original) = by_bytes.get(text.as_bytes()) {
            let rel = entry.path().strip_prefix(cases).unwrap().to_string_lossy().replace('\\', "/");
            let rel = kit::case_file::submitted_name(&rel);
            let Some((case, below)) = rel.split_once("/exercises/") else { continue };
            let original = original.strip_prefix(workspace).unwrap_or(original).display();
            found.push(format!(
                "{case}: {below} is {original} byte for byte: remove the case's copy and point at the file in \
                 expected.json (\"files\": {{\"{below}\": \"{original}\"}})"
            ));
        }
    }
    found
}

/// One copy of each kernel (issue 50): a case whose file is a calibration
/// kernel, a slow variant or a reference names that file (`files` in
/// expected.json) instead of holding a copy that a fix to the original would
/// leave behind.
#[test]
fn no_case_holds_a_copy_of_a_kernel_kept_elsewhere() {
    let workspace = corpus::workspace();
    let kept = kernels_kept_elsewhere(&workspace);
    assert!(kept.len() > 60, "read the calibration, slow and reference kernels: {}", kept.len());
    let found = copies(&Corpus::open("variants").dir, &kept, &workspace);
    assert!(found.is_empty(), "{} case file(s) copied from elsewhere:\n{}", found.len(), found.join("\n"));
}

#[test]
fn a_copied_kernel_is_found_and_an_edited_one_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let calibration = tmp.path().join("exercises/ex01-pi/calibration/pi_ballot.cu");
    std::fs::create_dir_all(calibration.parent().unwrap()).unwrap();
    std::fs::write(&calibration, "__global__ void k() {}\n").unwrap();
    let cases = tmp.path().join("variants");
    for (case, text) in [("copy", "__global__ void k() {}\n"), ("edited", "__global__ void k() { }\n")] {
        let file = cases.join(case).join("exercises/ex01-pi/kernels/pi_global.cu");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let kept = kernels_kept_elsewhere(tmp.path());
    assert_eq!(kept, [calibration]);
    let found = copies(&cases, &kept, tmp.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("copy: ex01-pi/kernels/pi_global.cu is exercises/ex01-pi/calibration/pi_ballot.cu"));
    assert!(
        found[0].contains(r#""files": {"ex01-pi/kernels/pi_global.cu": "exercises/ex01-pi/calibration/pi_ballot.cu"}"#)
    );
}
