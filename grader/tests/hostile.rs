//! The hostile corpus (`grader/tests/hostile`, docs/hostile.md) without a GPU.
//! Every case is graded as a student's checkout would be, with `--backend none`
//! and, where the simulator is quick, `--backend sim`; each part must get the
//! verdict of `expected.json` and name its cause, nothing of the grading
//! machine may show in the output, and no message may be huge. The `gpu`
//! column is checked on a GPU by `grader/tests/hostile/run-gpu.sh`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use grader::report::{GradeReport, PartReport, Status};
use serde::Deserialize;

/// No string in a grades JSON may be longer (compile logs are capped at 64 KiB).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// The most a single-process run may print for one case.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// The generated case: a source file ten times the 1 MiB limit.
const HUGE_SOURCE_BYTES: usize = 10 << 20;
/// Short, so the macro bomb costs the test seconds, not the default minute.
const COMPILE_TIMEOUT_SECS: &str = "3";

#[derive(Deserialize)]
struct Table {
    cases: BTreeMap<String, Case>,
}

#[derive(Deserialize)]
struct Case {
    /// Made by the test (and by check.py for the GPU run), not committed.
    #[serde(default)]
    generated: bool,
    /// `<exercise>/<part>` → what it must get.
    parts: BTreeMap<String, Expected>,
}

#[derive(Deserialize)]
struct Expected {
    none: Option<String>,
    sim: Option<String>,
    gpu: Option<String>,
    #[serde(default)]
    says: Vec<String>,
    /// What the simulator's message says instead, where it finds more than a GPU
    /// (an out-of-bounds read as it happens).
    #[serde(default)]
    says_sim: Option<Vec<String>>,
}

#[derive(Clone, Copy, Debug)]
enum Backend {
    None,
    Sim,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::None => "none",
            Backend::Sim => "sim",
        }
    }

    fn expected(self, e: &Expected) -> Option<&str> {
        match self {
            Backend::None => e.none.as_deref(),
            Backend::Sim => e.sim.as_deref(),
        }
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus() -> PathBuf {
    workspace().join("grader/tests/hostile")
}

fn table() -> Table {
    let text = std::fs::read_to_string(corpus().join("expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("expected.json parses")
}

fn nvrtc_available() -> bool {
    let ok = ptx_build::Compiler::nvrtc().is_ok();
    if !ok && std::env::var_os("CUDA_LAB_REQUIRE_NVRTC").is_some() {
        panic!("CUDA_LAB_REQUIRE_NVRTC is set but NVRTC is missing");
    }
    ok
}

/// What one grading run of one case left behind.
struct Run {
    report: GradeReport,
    /// stdout, stderr and the JSON, for the leak and size checks.
    texts: [String; 3],
    elapsed: Duration,
}

fn grade(root: &Path, exercises: &[&str], backend: Backend) -> Run {
    let scratch = tempfile::tempdir().unwrap();
    let json = scratch.path().join("grades.json");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(exercises)
        .args(["--backend", backend.name(), "--seed", "1", "--root"])
        .arg(root)
        .arg("--json")
        .arg(&json)
        .args(["--", "--quiet", "--color", "never"])
        .current_dir(scratch.path())
        // A fresh cache per case: a part must not pass on another case's PTX.
        .env(grader::grade::PTX_CACHE_ENV, scratch.path().join("ptx-cache"))
        .env(grader::grade::COMPILE_TIMEOUT_ENV, COMPILE_TIMEOUT_SECS)
        .output()
        .expect("the grader runs");
    let elapsed = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json_text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!("{}: no grades JSON ({e}); exit {:?}\n{stdout}\n{stderr}", root.display(), out.status)
    });
    let report = serde_json::from_str(&json_text).expect("a grades JSON");
    Run { report, texts: [stdout, stderr, json_text], elapsed }
}

/// A part's verdict: that of its first failing test, else `pass`; and that test's message.
fn verdict(part: &PartReport) -> (String, String) {
    match part.tests.iter().find(|t| t.status == Status::Fail) {
        Some(t) => (t.verdict.clone().unwrap_or_default(), t.message.clone().unwrap_or_default()),
        None => ("pass".into(), String::new()),
    }
}

/// The pi_global.cu of `huge-source`: the reference kernel under 10 MB of comments.
fn generate_huge_source(dir: &Path) {
    let kernels = dir.join("exercises/ex01-pi/kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    let reference = workspace().join("reference/ex01-pi/kernels");
    let line = format!("// {}\n", "padding ".repeat(12));
    let mut text = line.repeat(HUGE_SOURCE_BYTES / line.len() + 1);
    text += &std::fs::read_to_string(reference.join("pi_global.cu")).unwrap();
    std::fs::write(kernels.join("pi_global.cu"), text).unwrap();
}

/// A case as a submission under `into`: the case's own (broken) files, plus
/// the reference file of every part it leaves alone. The corpus keeps only the
/// broken files; `check.py prepare` fills in the rest the same way.
fn materialize(name: &str, case: &Case, into: &Path) -> PathBuf {
    let root = into.join(name);
    if case.generated {
        generate_huge_source(&root);
    } else {
        let from = corpus().join(name);
        for entry in walkdir::WalkDir::new(&from) {
            let entry = entry.unwrap();
            let to = root.join(entry.path().strip_prefix(&from).unwrap());
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                std::fs::copy(entry.path(), &to).unwrap();
            }
        }
    }
    let registry = grader::registry::all();
    for key in case.parts.keys() {
        let (id, part) = key.split_once('/').expect("<exercise>/<part>");
        let exercise = registry.iter().find(|e| e.id == id).expect("a known exercise");
        let file = exercise.parts.iter().find(|p| p.name == part).expect("a known part").file;
        let rel = Path::new(exercise.folder_name()).join(file);
        let to = root.join("exercises").join(&rel);
        if !to.exists() {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(workspace().join("reference").join(&rel), &to).unwrap();
        }
    }
    root
}

/// Lines that must never reach a student: what the include cases try to read.
fn secrets() -> Vec<String> {
    let mut found = vec!["PRIVATE KEY".to_string()];
    if let Ok(passwd) = std::fs::read_to_string("/etc/passwd") {
        found.extend(passwd.lines().next().map(str::to_string));
    }
    let main_rs = std::fs::read_to_string(workspace().join("grader/src/main.rs")).unwrap();
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

/// Grades every case that has verdicts for `backend`; returns what differs from the table.
fn run_corpus(backend: Backend) -> Vec<String> {
    let generated = tempfile::tempdir().unwrap();
    let secrets = secrets();
    let mut problems = Vec::new();
    for (name, case) in table().cases {
        let wanted: Vec<(&String, &Expected, &str)> =
            case.parts.iter().filter_map(|(key, e)| Some((key, e, backend.expected(e)?))).collect();
        if wanted.is_empty() {
            continue;
        }
        let root = materialize(&name, &case, generated.path());
        let mut exercises: Vec<&str> = case.parts.keys().filter_map(|k| k.split('/').next()).collect();
        exercises.dedup();
        let run = grade(&root, &exercises, backend);
        let mut problem = |what: String| problems.push(format!("{name} ({}): {what}", backend.name()));

        let parts: BTreeMap<String, &PartReport> = run
            .report
            .exercises
            .iter()
            .flat_map(|e| e.parts.iter().map(move |p| (format!("{}/{}", e.id, p.name), p)))
            .collect();
        for (key, expected, verdict_wanted) in wanted {
            let Some(part) = parts.get(key) else {
                problem(format!("{key} was not graded"));
                continue;
            };
            let (got, message) = verdict(part);
            if got != verdict_wanted {
                problem(format!("{key}: verdict `{got}`, expected `{verdict_wanted}`: {message}"));
            } else if got != "pass" {
                let says = match (backend, &expected.says_sim) {
                    (Backend::Sim, Some(s)) => s,
                    _ => &expected.says,
                };
                for phrase in says.iter().filter(|p| !message.contains(p.as_str())) {
                    problem(format!("{key}: the message does not say {phrase:?}: {message}"));
                }
            }
        }
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
    problems
}

#[test]
fn without_a_gpu_every_case_gets_its_verdicts() {
    if !nvrtc_available() {
        return;
    }
    let problems = run_corpus(Backend::None);
    assert!(problems.is_empty(), "{} mismatch(es):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn on_the_simulator_every_quick_case_gets_its_verdicts() {
    if !nvrtc_available() {
        return;
    }
    let problems = run_corpus(Backend::Sim);
    assert!(problems.is_empty(), "{} mismatch(es):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn a_template_bomb_ends_in_seconds_with_the_line_named() {
    if !nvrtc_available() {
        return;
    }
    let run = grade(&corpus().join("template-bomb"), &["ex01"], Backend::None);
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
    let table = table();
    let folders: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    for folder in &folders {
        assert!(table.cases.contains_key(folder), "{folder} has no row in expected.json");
    }
    let registry = grader::registry::all();
    for (name, case) in &table.cases {
        assert!(case.generated != folders.contains(name), "{name}: committed xor generated");
        for (key, expected) in &case.parts {
            let (ex, part) = key.split_once('/').expect("<exercise>/<part>");
            let exercise = registry.iter().find(|e| e.id == ex).unwrap_or_else(|| panic!("{name}: no {ex}"));
            let part = exercise.parts.iter().find(|p| p.name == part).unwrap_or_else(|| panic!("{name}: no {key}"));
            assert!(expected.gpu.is_some(), "{name} {key}: every case runs on the GPU");
            assert!(part.kernels.iter().all(|k| !k.is_empty()), "{name}: {key} names its kernels");
        }
        if !case.generated {
            let broken = case.parts.keys().any(|key| {
                let (ex, part) = key.split_once('/').unwrap();
                let exercise = registry.iter().find(|e| e.id == ex).unwrap();
                let part = exercise.parts.iter().find(|p| p.name == part).unwrap();
                corpus().join(name).join("exercises").join(exercise.folder_name()).join(part.file).is_file()
            });
            assert!(broken, "{name}: the case holds none of its parts' files");
        }
    }
}
