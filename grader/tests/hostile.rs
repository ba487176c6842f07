//! The hostile corpus (`grader/tests/hostile`, docs/hostile.md) without a GPU,
//! through the runner every corpus shares (`tests/corpus`). Every case is
//! graded as a student's checkout would be, with `--backend none` and, where
//! the simulator is quick, `--backend sim`; each part must get the verdict of
//! `expected.json` and name its cause, nothing of the grading machine may show
//! in the output, and no message may be huge. The `gpu` column is checked on a
//! GPU by `grader/tests/hostile/run-gpu.sh`.

use crate::corpus;
use crate::support;

use std::time::Duration;

use corpus::{Backend, Corpus, Run, Settings};

/// No string in a grades JSON may be longer (compile logs are capped at 64 KiB).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// The most a single-process run may print for one case.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// Short, so the macro bomb costs the test seconds, not the default minute.
const SETTINGS: Settings = Settings { seed: 1, compile_timeout_secs: "3" };

/// Lines that must never reach a student: what the include cases try to read.
fn secrets() -> Vec<String> {
    let mut found = vec!["PRIVATE KEY".to_string()];
    if let Ok(passwd) = std::fs::read_to_string("/etc/passwd") {
        found.extend(passwd.lines().next().map(str::to_string));
    }
    let main_rs = std::fs::read_to_string(corpus::workspace().join("grader/src/main.rs")).unwrap();
    found.extend(main_rs.lines().find(|l| l.starts_with("fn real_main")).map(str::to_string));
    found
}

fn longest_string(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::String(s) => s.len(),
        serde_json::Value::Array(a) => a.iter().map(longest_string).max().unwrap_or(0),
        serde_json::Value::Object(o) => o.values().map(longest_string).max().unwrap_or(0),
        _ => 0,
    }
}

/// The hostile corpus's own checks of one run: no leak, bounded output, bounded time.
fn contained(secrets: &[String], name: &str, run: &Run, problems: &mut Vec<String>) {
    let mut problem = |what: String| problems.push(format!("{name}: {what}"));
    for (text, secret) in run.texts.iter().flat_map(|t| secrets.iter().map(move |s| (t, s))) {
        if text.contains(secret.as_str()) {
            problem(format!("the output shows {secret:?}, from a file the student may not read"));
        }
    }
    let output = run.texts[0].len() + run.texts[1].len();
    if output > MAX_OUTPUT_BYTES {
        problem(format!("{output} bytes of output"));
    }
    let longest = longest_string(&serde_json::from_str(&run.texts[2]).unwrap());
    if longest > MAX_MESSAGE_BYTES {
        problem(format!("a string of {longest} bytes in the JSON"));
    }
    // Compile-time bombs end: the template one by NVRTC's own depth limit,
    // the macro one by the grader's compile time limit.
    if run.elapsed > Duration::from_secs(30) {
        problem(format!("grading took {:.0?}", run.elapsed));
    }
}

fn every_case_gets_its_verdicts(backend: Backend) {
    if !support::nvrtc_available() {
        return;
    }
    let secrets = secrets();
    let outcome = corpus::run(&Corpus::open("hostile"), backend, &SETTINGS, |name, run, problems| {
        contained(&secrets, name, run, problems)
    });
    assert!(outcome.problems.is_empty(), "{}", outcome.report("hostile", backend));
}

#[test]
#[ignore = "the hostile corpus a second time, with --backend none, about 15 s on 2 cores: .ci/run runs the ignored lane; the plain run grades it on the simulator"]
fn without_a_gpu_every_case_gets_its_verdicts() {
    every_case_gets_its_verdicts(Backend::None);
}

#[test]
fn on_the_simulator_every_quick_case_gets_its_verdicts() {
    every_case_gets_its_verdicts(Backend::Sim);
}

#[test]
fn a_template_bomb_ends_in_seconds_with_the_line_named() {
    if !support::nvrtc_available() {
        return;
    }
    let dir = Corpus::open("hostile").dir.join("template-bomb");
    let run = corpus::grade(&dir, &["ex01"], None, Backend::None, &SETTINGS);
    assert!(run.elapsed < Duration::from_secs(10), "took {:?}", run.elapsed);
    let part = &run.report.exercises[0].parts[0];
    let message = part.compile.message.as_deref().unwrap_or("");
    assert!(message.starts_with("exercises/ex01-pi/kernels/pi_global.cu:3:"), "{message}");
    assert!(
        part.compile.diagnostics.len() <= ptx_build::MAX_DIAGNOSTICS + 1,
        "{} diagnostics",
        part.compile.diagnostics.len()
    );
}

/// Needs no compiler: the table, the folders and the registry agree.
#[test]
fn the_table_covers_the_corpus_and_names_real_parts() {
    corpus::check_table(&Corpus::open("hostile"));
}
