//! The cheat corpus (`grader/tests/cheats`, docs/hostile.md "Timing tricks")
//! on the simulator: every trick acts only at the timed size, so each case
//! must pass its correctness and structure checks here, its performance check
//! not graded (the simulator cannot time). That is what makes them tricks
//! rather than bugs, and it is the part of the corpus a machine without a GPU
//! can judge; `exercises/kit/tests/timed_cheats.rs` proves each family's
//! verdict without a GPU, and `grader/tests/corpus/run-gpu.sh cheats` checks
//! the `gpu` column on a GPU.

use crate::corpus;
use crate::support;

use corpus::{Backend, Corpus, Settings};

const SETTINGS: Settings = Settings { seed: 1, compile_timeout_secs: "60" };

#[test]
#[ignore = "the whole cheat corpus, about 25 s on 2 cores: .ci/run runs the ignored lane; kit/tests/timed_cheats.rs proves each family in the plain run"]
fn on_the_simulator_every_trick_passes_what_it_does_not_game() {
    if !support::nvrtc_available() {
        return;
    }
    let outcome = corpus::run(&Corpus::open("cheats"), Backend::Sim, &SETTINGS, |_, _, _| {});
    let report = outcome.report("cheats", Backend::Sim);
    assert!(outcome.problems.is_empty(), "{report}");
}

/// Needs no compiler: the table, the folders and the registry agree, and
/// every trick is expected to lose its point on a GPU with a verdict of its
/// own, never a bare `too-slow`: a kernel that makes its own timing spread
/// (the jitter family) is too slow by its slow launches, and its message must
/// say the spread was charged to it.
#[test]
fn the_table_covers_the_corpus_and_every_trick_has_its_own_verdict() {
    let corpus = Corpus::open("cheats");
    corpus::check_table(&corpus);
    let table = std::fs::read_to_string(corpus::workspace().join("grader/tests/cheats/expected.json")).unwrap();
    // A trick the clock cannot see, where a measured stand-in grades the
    // check (graded so without a GPU too: `sim_args`), fails it as too slow
    // with the stand-in's figures; so does a spread charged to the kernel
    // (its slow launches grade it); every other trick's verdict is its own.
    for (name, case) in &corpus.table.cases {
        let by_stand_in = case.sim_args.iter().any(|a| a == "simulate");
        for (part, e) in &case.parts {
            let own_spread = case.what.starts_with("jitter");
            for verdict in [&e.sim, &e.gpu].into_iter().flatten() {
                assert!(
                    verdict != "too-slow" || by_stand_in || own_spread,
                    "{name} {part}: a trick's verdict names what happened"
                );
            }
        }
    }
    for verdict in ["wrong-when-timed", "replays-results", "input-modified", "too-slow"] {
        assert!(table.contains(&format!("\"gpu\": \"{verdict}\"")), "no case of {verdict}");
    }
    // The jitter family (its `what` says so) loses its points on a GPU, in at
    // least three exercises: by its slow launches beside a steady witness, or
    // by its median where its spin makes even that too slow (an H200, 2026-12-02).
    let mut jitter = Vec::new();
    for (name, case) in corpus.table.cases.iter().filter(|(_, c)| c.what.starts_with("jitter")) {
        for (key, e) in &case.parts {
            assert_eq!(e.gpu.as_deref(), Some("too-slow"), "{name} {key}: a jittering kernel loses its points");
            jitter.push(key.split('/').next().unwrap().to_string());
        }
    }
    jitter.dedup();
    assert!(jitter.len() >= 3, "the jitter family covers at least three exercises: {jitter:?}");
    assert!(
        corpus
            .table
            .cases
            .values()
            .flat_map(|c| c.parts.values())
            .any(|e| e.says.iter().any(|s| s.contains("the spread is the kernel's own"))),
        "one jitter case shows the witness's verdict on a GPU"
    );
    // Wrong when timed fails the part's correctness, naming the launch.
    let wrong_timed = &corpus.table.cases["ex01-shared-grid-when-large"].parts["ex01/shared"];
    assert!(wrong_timed.says.iter().any(|s| s == "wrong when timed"), "wrong when timed names the launch");
}
