//! The batch intake takes only regular files of the submission, whatever the
//! tree holds: names in any encoding, sizes at the limit, links to secrets,
//! FIFOs (docs/hostile.md). The trees are decoded from bytes by the same code
//! as the cargo-fuzz target's (tests/support/intake_tree.rs); the corpus and
//! the crashes fuzzing found are replayed first.
//!
//! Case counts: `PROPTEST_CASES` (CI's fuzz smoke step raises it).

use crate::support;

use std::path::{Path, PathBuf};

use grader::batch::intake;
use proptest::prelude::*;
use support::intake_tree;

fn stage_and_check(data: &[u8]) -> intake::Intake {
    let secrets = tempfile::tempdir().unwrap();
    intake_tree::plant_secrets(secrets.path());
    let sub = tempfile::tempdir().unwrap();
    intake_tree::build(sub.path(), &intake_tree::decode(data, secrets.path()));
    let staging = tempfile::tempdir().unwrap();
    let taken = intake::stage(sub.path(), &intake_tree::expected(), staging.path()).unwrap();
    intake_tree::check(sub.path(), staging.path(), &taken);
    taken
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

#[test]
fn the_corpus_and_every_crash_found_so_far_stage_safely() {
    let mut n = 0;
    for dir in ["corpus/intake", "regressions/intake"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(fuzz_dir().join(dir))
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        paths.sort();
        for path in paths {
            let bytes = std::fs::read(&path).unwrap();
            let run = std::panic::catch_unwind(|| drop(stage_and_check(&bytes)));
            assert!(run.is_ok(), "{} breaks the intake", path.display());
            n += 1;
        }
    }
    assert!(n >= 1, "the intake corpus is missing");
}

#[test]
fn a_tree_of_every_kind_of_entry_is_staged_safely() {
    // op, depth, path words...: the expected files as a link to the secret,
    // a FIFO, a sparse file one byte over the limit, and a plain file.
    let data = [
        5, 3, 0, 1, 3, 4, 0, // exercises/ex01-pi/kernels/a.cu → the secret file
        6, 3, 0, 1, 3, 5, // exercises/ex01-pi/kernels/b.cu: a FIFO
        3, 3, 0, 2, 3, 6, 2, // exercises/ex02-dot/kernels/c.cu: MAX + 1 bytes
    ];
    let taken = stage_and_check(&data);
    let reasons: Vec<&str> = taken.refused.iter().map(|r| r.reason.as_str()).collect();
    assert!(taken.taken.is_empty(), "{taken:?}");
    assert!(reasons[0].contains("symbolic link"), "{reasons:?}");
    assert_eq!(reasons[1], "not a regular file");
    assert!(reasons[2].starts_with("too large"), "{reasons:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn any_submission_tree_is_staged_safely(data in prop::collection::vec(any::<u8>(), 0..200)) {
        stage_and_check(&data);
    }
}
