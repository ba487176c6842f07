//! The variants corpus (`grader/tests/variants`, docs/grading-accuracy.md) on
//! the simulator: correct kernels unlike the reference must get full marks, and
//! broken ones (races that pass by luck, off-by-one bounds, reads past the end
//! that do not change the output, wrong non-square strides, global where shared
//! was asked, the wrong technique, hard-coded answers) must fail the check and
//! with the verdict `expected.json` names. The `gpu` column is checked on a GPU
//! by `grader/tests/corpus/run-gpu.sh variants`, which also times every family
//! of variants the performance thresholds are calibrated from.

mod corpus;

use std::collections::BTreeMap;

use corpus::{Backend, Corpus, Settings};

const SETTINGS: Settings = Settings { seed: 1, compile_timeout_secs: "60" };

#[test]
fn on_the_simulator_every_variant_gets_its_verdict() {
    if !corpus::nvrtc_available() {
        return;
    }
    let outcome = corpus::run(&Corpus::open("variants"), Backend::Sim, &SETTINGS, |_, _, _| {});
    let report = outcome.report("variants", Backend::Sim);
    // The whole table, mismatches or not: docs/grading-accuracy.md is written from it.
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
            let part = family.rsplitn(2, '/').nth(1).unwrap();
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
