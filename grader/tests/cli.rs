//! The grader's command line, end to end, without a GPU: it compiles, says why
//! nothing ran, ignores the GPU checks, scores zero and writes a valid JSON.

use crate::support;

use std::path::Path;
use std::process::Command;

use grader::report::{CompileStatus, GradeReport, Status, SCHEMA};

fn grader(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("grader runs")
}

/// A test filter leaves whole parts out: they read "not run", not 0 points,
/// and the total says it counts only what ran.
#[test]
fn a_filtered_run_says_which_parts_did_not_run() {
    if !support::nvrtc_available() {
        return;
    }
    let out = grader(&[
        "ex03",
        "--reference",
        "--backend",
        "sim",
        "--seed",
        "1",
        "--no-report",
        "--",
        "::rect::correct::m=17",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let line = |part: &str| text.lines().find(|l| l.trim_start().starts_with(part)).unwrap_or_default().to_string();
    assert!(line("naive ").contains("not run / 10.00"), "{text}");
    assert!(line("rect ").contains("0.55 / 7.50"), "{text}");
    assert!(
        text.contains("tests not run (a filter chose the others): this total counts only the tests that ran"),
        "{text}"
    );
}

#[test]
fn list_names_every_exercise() {
    let out = grader(&["list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let all = grader::registry::all();
    assert!(all.len() >= 9, "ex01 to ex09 at least");
    for e in all {
        assert!(
            text.contains(&format!("{} ({}, {})", e.id, e.slug, e.folder_name())),
            "{} missing from:\n{text}",
            e.id
        );
    }
}

#[test]
fn unknown_exercise_is_a_clear_error() {
    let out = grader(&["ex99"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no exercise called `ex99`") && err.contains("ex01 (pi)"), "{err}");
}

fn run_without_gpu(extra: &[&str]) -> (std::process::Output, GradeReport) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ex01.json");
    let mut args = vec!["ex01", "--backend", "none", "--seed", "7", "--json", json.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = grader(&args);
    let report = serde_json::from_slice(&std::fs::read(&json).expect("the JSON is written")).unwrap();
    (out, report)
}

#[test]
fn without_a_gpu_references_compile_pass_structure_and_gpu_checks_are_ignored() {
    if !support::nvrtc_available() {
        return;
    }
    let (out, report) = run_without_gpu(&["--reference"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "nothing that could run failed, so exit 0:\n{stdout}");
    assert!(stdout.contains("ignored"), "{stdout}");
    assert_eq!(report.schema, SCHEMA);
    assert_eq!(report.seed, 7);
    assert_eq!(report.sources, "reference");
    assert_eq!(report.environment.backend, "none");
    assert!((report.max_score - 20.0).abs() < 1e-9);
    assert_eq!(report.score, 0.0, "structure alone earns nothing before correctness is shown");
    for part in &report.exercises[0].parts {
        assert_eq!(part.compile.status, CompileStatus::Ok, "{} compiles", part.file);
        assert_eq!(part.sha256.as_ref().map(|s| s.len()), Some(64));
        for t in &part.tests {
            assert!(t.name.starts_with(&format!("ex01::{}::", part.name)));
            let expected = if t.kind == kit::CheckKind::Structure { Status::Pass } else { Status::Ignored };
            assert_eq!(t.status, expected, "{}", t.name);
        }
    }
}

#[test]
fn without_a_gpu_stubs_fail_their_structure_checks() {
    if !support::nvrtc_available() {
        return;
    }
    let shipped = support::shipped_root();
    let (out, report) = run_without_gpu(&["--root", shipped.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(101), "a failed structure check is a failure");
    assert_eq!(report.score, 0.0);
    let structure: Vec<_> = report.exercises[0]
        .parts
        .iter()
        .flat_map(|p| &p.tests)
        .filter(|t| t.kind == kit::CheckKind::Structure)
        .collect();
    assert!(!structure.is_empty());
    for t in structure {
        assert_eq!(t.status, Status::Fail, "{}", t.name);
        assert_eq!(t.verdict.as_deref(), Some("structure"));
        assert!(t.message.as_deref().unwrap_or("").len() > 40, "a failure explains itself: {:?}", t.message);
    }
}

#[test]
fn a_missing_file_is_named_not_a_compile_error_nor_a_crash() {
    if !support::nvrtc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("exercises")).unwrap();
    let json = dir.path().join("out.json");
    let out = grader(&[
        "ex01",
        "--backend",
        "none",
        "--root",
        dir.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(101), "structure checks of missing files fail");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("did not compile"), "nothing was compiled:\n{stdout}");
    let report: GradeReport = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let part = &report.exercises[0].parts[0];
    assert_eq!(part.compile.status, CompileStatus::Error);
    assert!(part.compile.missing);
    let message = part.compile.message.as_deref().unwrap_or("");
    assert!(message.contains("no file for this part in exercises") && message.contains("pi_global.cu"), "{message}");
    assert!(message.contains("named exactly"), "a student is told what to check: {message}");
    assert!(part.sha256.is_none());
    // Without a GPU only the structure checks run: each fails as missing-file.
    let ran: Vec<_> = part.tests.iter().filter(|t| t.status != Status::Ignored).collect();
    assert!(!ran.is_empty());
    for t in ran {
        assert_eq!(t.status, Status::Fail, "{}", t.name);
        assert_eq!(t.verdict.as_deref(), Some("missing-file"), "{}", t.name);
    }
    assert!(stdout.contains("no file"), "the compile line says so:\n{stdout}");
}

/// `--sources reference/slow` grades the slow variants; ex01 has one only for
/// `shared`. `global` has no file there: it says so (verdict `missing-file`),
/// it is no compile error, and `shared` is graded as usual.
#[test]
fn a_sources_tree_without_a_part_says_no_file_not_did_not_compile() {
    if !support::nvrtc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("slow.json");
    let out = grader(&["ex01", "--sources", "reference/slow", "--backend", "none", "--json", json.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("no file for this part in reference/slow"), "{stdout}");
    assert!(!stdout.contains("did not compile"), "{stdout}");
    let report: GradeReport = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report.sources, "reference/slow");
    let parts = &report.exercises[0].parts;
    let global = parts.iter().find(|p| p.name == "global").unwrap();
    assert!(global.compile.missing, "{:?}", global.compile);
    assert!(global.compile.diagnostics.is_empty());
    let ran: Vec<_> = global.tests.iter().filter(|t| t.status != Status::Ignored).collect();
    assert!(!ran.is_empty() && ran.iter().all(|t| t.verdict.as_deref() == Some("missing-file")), "{ran:?}");
    let shared = parts.iter().find(|p| p.name == "shared").unwrap();
    assert_eq!(shared.compile.status, CompileStatus::Ok, "the slow shared variant compiles");
    assert!(!shared.compile.missing);
    assert!(shared.tests.iter().all(|t| t.verdict.as_deref() != Some("missing-file")));
}

/// `grader baseline-profiles ex09` in a scratch root: ex09's entries are
/// regraded (a tampered figure and a stale test go), and every other byte of
/// the file stays as it was.
#[test]
fn baseline_profiles_of_one_exercise_keep_every_other_entry_byte_for_byte() {
    if !support::nvrtc_available() {
        return;
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = tempfile::tempdir().unwrap();
    for dir in ["exercises/ex09-picture/kernels", "reference/ex09-picture/kernels"] {
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
        for f in std::fs::read_dir(workspace.join(dir)).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), root.path().join(dir).join(f.file_name())).unwrap();
        }
    }
    let shipped = std::fs::read_to_string(workspace.join("grader/data/baseline-profiles.json")).unwrap();
    let lines: Vec<&str> = shipped.lines().collect();
    let first = lines.iter().position(|l| l.starts_with("    \"ex09::")).expect("ex09's entries are shipped");
    // Tamper with ex09's first figure and add a stale ex09 test: both must go.
    let mut tampered: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let figure = (first..lines.len()).find(|&i| lines[i].contains("\"global_load_requests\": ")).unwrap();
    tampered[figure] = "            \"global_load_requests\": 987654321,".into();
    tampered.insert(first, "    \"ex09::gone::correct::x\": [],".into());
    let data = root.path().join("grader/data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("baseline-profiles.json"), tampered.join("\n") + "\n").unwrap();

    let out = grader(&["baseline-profiles", "ex09", "--root", root.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(data.join("baseline-profiles.json")).unwrap();
    assert!(!written.contains("987654321") && !written.contains("ex09::gone"), "ex09 regraded");
    let value: serde_json::Value = serde_json::from_str(&written).unwrap();
    let tests = value["tests"].as_object().unwrap();
    assert!(tests.keys().any(|k| k.starts_with("ex09::picture::")), "ex09's entries are back");
    // Outside ex09's entries, the lines are the shipped file's.
    let outside = |text: &str| -> Vec<String> {
        let mut in_ex09 = false;
        text.lines()
            .filter(|l| {
                if l.starts_with("    \"") {
                    in_ex09 = l.starts_with("    \"ex09::");
                } else if !l.starts_with("     ") {
                    in_ex09 = false;
                }
                !in_ex09
            })
            .map(|l| l.trim_end_matches(',').to_string())
            .collect()
    };
    assert_eq!(outside(&written), outside(&shipped));
    assert!(written.ends_with("}\n"));
}

/// The exercises the lane below writes, one per shape: folder, shape, its
/// part, and the checks its slow variant must lose (and only those).
const NEW_EXERCISES: [(&str, &str, &str, &[&str]); 3] = [
    ("ex42-scale", "linear", "scale", &["perf::share-of-copy"]),
    ("ex43-row-sum", "rows", "row_sum", &["structure::coalesced", "perf::share-of-copy"]),
    ("ex44-image-scale", "tiles-2d", "image_scale", &["structure::coalesced", "perf::share-of-copy"]),
];

/// `grader new exercise` in a scratch copy of the workspace, once per shape
/// (`linear`, `rows`, `tiles-2d`): each exercise it writes builds, its own
/// tests pass, its reference gets full marks on the simulator (its timed
/// check judged by its measured stand-in), its stub 0, its slow variant loses
/// its measured and timed checks only; and then the whole workspace's
/// `cargo test --workspace` passes with the three of them and their variants
/// families, untouched: what a teacher runs first. Ignored in the plain test
/// run: it builds and tests the workspace again in a copy (its build folder
/// target/new-exercise-test is kept for the next run; docs/authoring.md has
/// its time). CI runs it: `cargo test -p grader --test suite -- --ignored cli::new_exercise`.
#[test]
#[ignore]
fn new_exercise_of_every_shape_builds_tests_and_grades() {
    if !support::nvrtc_available() {
        return;
    }
    let started = std::time::Instant::now();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    // Everything but the build outputs and git's own files: the whole
    // workspace's tests run in the copy.
    let tops = std::fs::read_dir(&workspace).unwrap().map(|e| e.unwrap().file_name());
    for top in tops.filter(|t| t != "target" && t != ".git") {
        for entry in walkdir::WalkDir::new(workspace.join(top)).into_iter().filter_entry(|e| e.file_name() != "target")
        {
            let entry = entry.unwrap();
            let to = root.join(entry.path().strip_prefix(&workspace).unwrap());
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else if entry.file_type().is_file() {
                std::fs::copy(entry.path(), &to).unwrap();
            }
        }
    }
    for (folder, shape, _, _) in NEW_EXERCISES {
        let out = grader(&["new", "exercise", folder, "--shape", shape, "--root", root.to_str().unwrap()]);
        assert!(out.status.success(), "{shape}: {}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&format!("exercises/{folder}/src/lib.rs")), "{stdout}");
        assert!(stdout.contains("grader/tests/variants/expected.json"), "the variants family: {stdout}");
    }
    let target = workspace.join("target/new-exercise-test");
    let cargo = |args: &[&str]| {
        let out = Command::new(env!("CARGO"))
            .args(args)
            .current_dir(root)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("cargo runs");
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
    };
    let (code, log) = cargo(&["build", "-q", "-p", "grader"]);
    assert_eq!(code, Some(0), "the workspace with the new exercises builds:\n{log}");
    eprintln!("built in {:.0} s", started.elapsed().as_secs_f64());
    for (folder, shape, part, slow_loses) in NEW_EXERCISES {
        let id = &folder[..4];
        let grade = |extra: &[&str]| -> GradeReport {
            let json = root.join(format!("{id}.json"));
            let mut args =
                vec!["run", "-q", "-p", "grader", "--", id, "--backend", "sim", "--seed", "1", "--no-report"];
            args.extend_from_slice(&["--perf-without-gpu", "simulate", "--json", json.to_str().unwrap()]);
            args.extend_from_slice(extra);
            let (_, log) = cargo(&args);
            serde_json::from_slice(&std::fs::read(&json).unwrap_or_else(|e| panic!("{e}:\n{log}"))).unwrap()
        };
        let reference = grade(&["--reference"]);
        assert!(reference.max_score > 0.0 && reference.score == reference.max_score, "{shape}: {:?}", reference.score);
        assert_eq!(grade(&[]).score, 0.0, "{shape}: the stub scores 0");
        let slow = grade(&["--sources", "reference/slow"]);
        let failed: Vec<&str> = slow.exercises[0].parts[0]
            .tests
            .iter()
            .filter(|t| t.status == Status::Fail)
            .map(|t| t.name.as_str())
            .collect();
        let expected: Vec<String> = slow_loses.iter().map(|c| format!("{id}::{part}::{c}")).collect();
        assert_eq!(failed, expected, "{shape}: the slow variant loses these only");
        eprintln!("{folder} ({shape}) graded at {:.0} s", started.elapsed().as_secs_f64());
    }
    // What the teacher's first `cargo test --workspace` runs that a new
    // exercise can fail: its own tests, and the grader's tests that walk every
    // exercise, variants family and calibration. The crates below the grader
    // (kit, ptx-sim, ptx-build) never see an exercise, and the rest of the
    // suite would double this lane's time in CI.
    let own: Vec<String> =
        NEW_EXERCISES.iter().flat_map(|(folder, ..)| ["-p".to_string(), folder.to_string()]).collect();
    let mut args = vec!["test", "--no-fail-fast"];
    args.extend(own.iter().map(String::as_str));
    let (code, mut log) = cargo(&args);
    let walking = ["variants::", "module_graph::", "template::", "can_fail::", "sources_compile::"];
    let (grader_code, grader_log) = cargo(
        &[&["test", "--no-fail-fast", "-p", "grader", "--lib", "--test", "suite", "--"][..], &walking[..]].concat(),
    );
    log += &grader_log;
    let failures: Vec<&str> = log.lines().filter(|l| l.contains("FAILED") || l.contains("panicked")).collect();
    assert_eq!((code, grader_code), (Some(0), Some(0)), "the new exercises' tests:\n{}\n{log}", failures.join("\n"));
    for (folder, _, _, _) in NEW_EXERCISES {
        assert!(log.contains(&folder.replace('-', "_")), "{folder}'s tests ran:\n{log}");
    }
    eprintln!("new_exercise lane: {:.0} s in all", started.elapsed().as_secs_f64());
}

/// The JSON names the device headers a run used, also when the run itself
/// installed them (the line printed before compiling cannot know that yet).
/// A cache that holds NVRTC but no headers, so that the run installs them.
#[test]
#[ignore = "downloads the device headers with pip (network, about 30 s): .ci/run runs the ignored lane"]
fn the_json_names_device_headers_installed_during_the_run() {
    if !support::nvrtc_available() {
        return;
    }
    let home = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .expect("a cache folder");
    let nvrtc = home.join("cuda-lab/nvrtc-12.9.86");
    if !nvrtc.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12").is_file() {
        eprintln!("skipped: NVRTC is not the one the grader installs ({} is empty)", nvrtc.display());
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir(cache.path().join("cuda-lab")).unwrap();
    std::os::unix::fs::symlink(&nvrtc, cache.path().join("cuda-lab/nvrtc-12.9.86")).unwrap();
    let json = cache.path().join("ex01.json");
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(["ex01", "--sources", "grader/tests/variants/ex01-shared-cg-reduce/exercises", "--backend", "none"])
        .args(["--seed", "1", "--json", json.to_str().unwrap(), "--", "shared"])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .env("XDG_CACHE_HOME", cache.path())
        .env_remove("CUDA_PATH")
        .env_remove("CUDA_HOME")
        .output()
        .expect("grader runs");
    let report: GradeReport = serde_json::from_slice(&std::fs::read(&json).expect("the JSON is written"))
        .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&out.stderr)));
    let headers = report.environment.device_headers.unwrap_or_default();
    assert!(!headers.starts_with("none"), "the run compiled a file that includes cooperative_groups.h: {headers}");
    let shared = report.exercises[0].parts.iter().find(|p| p.name == "shared").unwrap();
    assert_eq!(shared.compile.status, CompileStatus::Ok, "{:?}", shared.compile.message);
}

#[test]
fn calibrate_says_it_needs_a_gpu_and_the_tables_need_none() {
    if kit::backend::cuda::gpu_count() > 0 {
        return; // on a GPU it would calibrate for real (minutes): `grader calibrate` itself is the test there
    }
    let out = grader(&["calibrate"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("grader calibrate needs a CUDA GPU"), "{err}");
    let out = grader(&["calibrate", "--markdown"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tables = String::from_utf8_lossy(&out.stdout);
    assert!(tables.contains("### `ex05::stencil::perf::share-of-copy`"), "{tables}");
    // Each row says when its file was measured (the file's `date`).
    for (model, file) in [("NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3"), ("NVIDIA H200", "nvidia-h200")] {
        let toml = std::fs::read_to_string(support::workspace().join(format!("calibration/{file}.toml"))).unwrap();
        let date = toml.lines().find_map(|l| l.strip_prefix("date = \"")).unwrap().trim_end_matches('"');
        assert!(tables.contains(&format!("| {model} | grader calibrate, {date}")), "{model} {date}: {tables}");
    }
}
