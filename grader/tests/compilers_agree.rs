//! Proof by difference: the grade must not depend on the compiler. Every
//! reference kernel, every `reference/slow` variant and every case of the
//! variants corpus is graded on the simulator twice, once compiled by NVRTC
//! and once by clang (`CUDA_LAB_COMPILER`), and each part must get the same
//! verdict (that of its first failing test, or `pass`). Where they may differ
//! for a reason, docs/grading-accuracy.md ("Two compilers") says why.
//!
//! Needs both compilers: skipped with a note where either is missing, and a
//! failure when CUDA_LAB_REQUIRE_NVRTC=1 (CI), as NVRTC's own tests do. The
//! whole sweep takes minutes in a debug build, so it is `#[ignore]`d and run by
//! `.ci/run` (`cargo test -p grader --test suite -- --ignored compilers_agree::`); the
//! normal lane grades a quick subset (ex01's references, three variants).
//!
//! No work twice: the runs go as many at once as there are cores, and in CI
//! (`CUDA_LAB_GRADE_CACHE`, `support::grade_cache`) the NVRTC run of a variants
//! case is the variants lane's own run of it (same binary, arguments, compile
//! limit and files), so only the clang builds are graded here.

use crate::corpus;
use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use corpus::{materialize, verdict, workspace, Corpus};

/// Whether both compilers are here (a failure where CI requires them).
fn both_compilers() -> bool {
    if !support::nvrtc_available() {
        eprintln!("skipping: NVRTC is not available");
        return false;
    }
    match ptx_build::Compiler::clang() {
        Ok(_) => true,
        Err(e) if std::env::var("CUDA_LAB_REQUIRE_NVRTC").is_ok_and(|v| !v.is_empty() && v != "0") => {
            panic!("CUDA_LAB_REQUIRE_NVRTC is set but clang could not be provisioned: {e}")
        }
        Err(e) => {
            eprintln!("skipping: clang is not available: {e}");
            false
        }
    }
}

/// Part (`ex01/global`) → (verdict, first failing test, its message).
type Verdicts = BTreeMap<String, (String, String, String)>;

/// The compile time limit: the variants lane's for NVRTC (so that its runs
/// are the same runs, taken from `support::grade_cache` in CI), more for clang.
fn compile_timeout(compiler: &str) -> &'static str {
    if compiler == "nvrtc" {
        "60"
    } else {
        "120"
    }
}

/// Grades `exercises` of the submission at `root` (from `sources`, default
/// `exercises`) on the simulator with `compiler`; where CI's lanes share their
/// results, a run the variants lane already made is taken from there.
fn grade(root: &Path, exercises: &[&str], part: Option<&str>, sources: Option<&str>, compiler: &str) -> Verdicts {
    let mut args: Vec<String> = exercises.iter().map(|e| e.to_string()).collect();
    if let Some(part) = part {
        args.extend(["--part".into(), part.into()]);
    }
    if let Some(sources) = sources {
        args.extend(["--sources".into(), sources.into()]);
    }
    args.extend(["--backend", "sim", "--seed", "1"].map(String::from));
    let graded = support::grade_cache::Run {
        args,
        root,
        graded: &[sources.unwrap_or("exercises")],
        compiler: Some(compiler),
        compile_timeout: compile_timeout(compiler),
    }
    .grade();
    let text = graded.json.unwrap_or_else(|| {
        panic!(
            "{} with {compiler}: no grades JSON; exit {:?}\n{}\n{}",
            root.display(),
            graded.status,
            graded.stdout,
            graded.stderr
        )
    });
    let report: grader::report::GradeReport = serde_json::from_str(&text).expect("a grades JSON");
    assert_eq!(report.environment.compiler_kind.as_deref(), Some(compiler), "the grader used {compiler}");
    // `reference/slow` holds only some parts: a missing file is no comparison.
    report
        .exercises
        .iter()
        .flat_map(|e| e.parts.iter().map(move |p| (e, p)))
        .filter(|(_, p)| root.join(&p.file).is_file())
        .map(|(e, p)| (format!("{}/{}", e.id, p.name), verdict(p)))
        .collect()
}

/// One line per part; a difference of verdict is a problem.
fn compare(case: &str, nvrtc: &Verdicts, clang: &Verdicts, lines: &mut Vec<String>, problems: &mut Vec<String>) {
    for (key, (n, n_test, n_msg)) in nvrtc {
        let Some((c, c_test, c_msg)) = clang.get(key) else {
            problems.push(format!("{case} {key}: not graded with clang"));
            continue;
        };
        let same = n == c;
        lines.push(format!("{} {case:<44} {key:<18} nvrtc {n:<22} clang {c}", if same { "ok  " } else { "DIFF" }));
        if !same {
            problems.push(format!(
                "{case} {key}: NVRTC `{n}` ({n_test}: {}) but clang `{c}` ({c_test}: {})",
                first_line(n_msg),
                first_line(c_msg)
            ));
        }
    }
}

fn first_line(s: &str) -> &str {
    let l = s.lines().next().unwrap_or("");
    &l[..(0..=l.len().min(240)).rev().find(|&i| l.is_char_boundary(i)).unwrap_or(0)]
}

/// One submission to grade with both compilers.
struct Case {
    label: String,
    root: PathBuf,
    exercises: Vec<String>,
    part: Option<String>,
    sources: Option<String>,
}

/// The references (`all`, or the given exercises) from `sources`.
fn references(sources: &str, exercises: &[&str]) -> Case {
    Case {
        label: sources.into(),
        root: workspace(),
        exercises: exercises.iter().map(|e| e.to_string()).collect(),
        part: None,
        sources: Some(sources.into()),
    }
}

/// Cases of the variants corpus (all when `only` is empty), materialized under `tmp`.
fn variants(only: &[&str], tmp: &Path) -> Vec<Case> {
    let corpus = Corpus::open("variants");
    let mut cases = Vec::new();
    for (name, case) in &corpus.table.cases {
        if !only.is_empty() && !only.contains(&name.as_str()) {
            continue;
        }
        let root = materialize(&corpus, name, case, tmp);
        let mut exercises: Vec<String> =
            case.parts.keys().filter_map(|k| k.split('/').next()).map(String::from).collect();
        exercises.dedup();
        let part = match (exercises.len(), case.parts.len()) {
            (1, 1) => case.parts.keys().next().and_then(|k| k.split_once('/')).map(|(_, p)| p.to_string()),
            _ => None,
        };
        cases.push(Case { label: format!("variants/{name}"), root, exercises, part, sources: None });
    }
    cases
}

/// Grades every case with NVRTC and with clang, as many runs at once as there
/// are cores (each grader process keeps one busy), and compares each pair.
fn sweep(cases: &[Case]) {
    let jobs: Vec<(&Case, &str)> = cases.iter().flat_map(|c| [(c, "nvrtc"), (c, "clang")]).collect();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let graded = corpus::in_parallel(cores, &jobs, |(case, compiler)| {
        let exercises: Vec<&str> = case.exercises.iter().map(String::as_str).collect();
        grade(&case.root, &exercises, case.part.as_deref(), case.sources.as_deref(), compiler)
    });
    let (mut lines, mut problems) = (Vec::new(), Vec::new());
    for (case, pair) in cases.iter().zip(graded.chunks(2)) {
        compare(&case.label, &pair[0], &pair[1], &mut lines, &mut problems);
    }
    finish(lines, problems);
}

fn finish(lines: Vec<String>, problems: Vec<String>) {
    println!("{}", lines.join("\n"));
    assert!(!lines.is_empty(), "nothing was compared");
    assert!(problems.is_empty(), "{} difference(s):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn a_quick_subset_gets_the_same_verdicts_from_both_compilers() {
    if !both_compilers() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = vec![references("reference", &["ex01"])];
    // A race that passes by luck, and an out-of-bounds read; a read that both
    // compilers if-convert into every thread's load and a selp (no race).
    cases.extend(variants(
        &["ex05-missing-barrier", "ex05-halo-reads-past-end", "ex01-shared-if-converted-read"],
        tmp.path(),
    ));
    sweep(&cases);
}

/// The cases of issue 51 (CUB and cooperative groups under a course's
/// `[headers]`): both compilers refuse or compile them alike, and grade what
/// they compile alike. `cargo test -p grader --test suite -- --ignored compilers_agree::header_cases`.
#[test]
#[ignore = "six gradings per compiler (a minute on 2 cores); run by name or with the whole lane"]
fn header_cases_get_the_same_verdicts_from_both_compilers() {
    if !both_compilers() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    sweep(&variants(crate::variants::HEADER_CASES, tmp.path()));
}

/// `ex01-shared-if-converted-read` proves the simulator's rule for discarded
/// reads only while both compilers do load `cache[0]` in every thread and keep
/// it with a `selp`: checked on their PTX, at the grader's options.
#[test]
fn both_compilers_if_convert_the_discarded_read_case() {
    if !both_compilers() {
        return;
    }
    let file = kit::trial::workspace_file(
        "grader/tests/variants/ex01-shared-if-converted-read/exercises/ex01-pi/kernels/pi_shared.cu",
    );
    let src = ptx_build::SourceFile::read(&file, "pi_shared.cu").unwrap();
    for compiler in [ptx_build::Compiler::nvrtc().unwrap(), ptx_build::Compiler::clang().unwrap()] {
        let ptx = compiler.compile(&src, &grader::grade::compile_options(None)).unwrap().text;
        let code: Vec<&str> = ptx
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('.') && !l.starts_with("//"))
            .collect();
        // `ld.shared.* %rA, [cache];` then, within a few instructions, `selp.* %rB, %rA, 0, %p`
        let converted = code.iter().enumerate().any(|(i, l)| {
            let Some(rest) = l.strip_prefix("ld.shared.").filter(|r| r.contains("cache];")) else { return false };
            let reg = rest.split_whitespace().nth(1).unwrap_or("").trim_end_matches(',');
            code[i + 1..].iter().take(4).any(|s| s.starts_with("selp.") && s.contains(&format!("{reg}, 0,")))
        });
        assert!(converted, "{} no longer if-converts the read of cache[0]:\n{ptx}", compiler.version());
    }
}

#[test]
#[ignore = "grades every reference, slow variant and variants case twice (minutes); run by .ci/run"]
fn every_reference_slow_variant_and_variants_case_gets_the_same_verdicts() {
    if !both_compilers() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = vec![references("reference", &["all"]), references("reference/slow", &["all"])];
    // `CUDA_LAB_CASES=a,b`: only the variants cases whose name contains one of
    // them (and the references), to measure or check a few cases.
    let picked: Vec<String> = std::env::var("CUDA_LAB_CASES")
        .map(|v| v.split(',').filter(|s| !s.is_empty()).map(String::from).collect())
        .unwrap_or_default();
    let all = variants(&[], tmp.path());
    cases.extend(all.into_iter().filter(|c| picked.is_empty() || picked.iter().any(|p| c.label.contains(p.as_str()))));
    sweep(&cases);
}
