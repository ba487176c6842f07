//! The student-controlled text ptx-build reads never panics it, and the
//! include policy holds for any surroundings (docs/hostile.md): replays of the
//! fuzz corpora (fuzz/corpus/include_scan, fuzz/corpus/diagnostics and the
//! crashes kept in fuzz/regressions/) and property tests.
//!
//! Case counts: `PROPTEST_CASES` (CI's fuzz smoke step raises it).

use proptest::prelude::*;
use ptx_build::{check_source, fuzzing, BuildError, Severity, SourceFile, MAX_DIAGNOSTICS, MAX_LOG_BYTES};

fn source(text: &str) -> SourceFile {
    SourceFile { display_path: "kernels/k.cu".into(), text: text.into() }
}

/// What the include_scan fuzz target checks.
fn scan(text: &str) {
    if let Err(BuildError::Refused { line, .. }) = check_source(&source(text)) {
        let lines = text.split(['\n', '\r']).count() as u32;
        assert!(line >= 1 && line <= lines.max(1), "refusal at line {line} of {lines}");
    }
}

/// What the diagnostics fuzz target checks; the input is `source \0 log`.
fn read_log(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (source, log) = text.split_once('\0').unwrap_or(("", &text));
    let diags = fuzzing::parse_log(log, "kernels/k.cu", &["input.cu"], source);
    assert!(diags.len() <= MAX_DIAGNOSTICS + 2, "{} diagnostics", diags.len());
    assert!(diags.iter().any(|d| d.severity == Severity::Error), "a failed compile always carries an error");
    for d in &diags {
        assert!(d.column.is_none_or(|c| c >= 1), "{d:?}");
        assert!(d.line.is_none_or(|l| l >= 1), "{d:?}");
        let _ = d.to_string();
    }
    assert!(fuzzing::cap_log(log).len() <= MAX_LOG_BYTES + 100);
}

/// One fuzz target's check.
type Reader = fn(&[u8]);

#[test]
fn the_corpora_and_every_crash_found_so_far_are_read_without_panic() {
    let mut n = 0;
    let scan_bytes: fn(&[u8]) = |b| scan(&String::from_utf8_lossy(b));
    let cases: [(&str, Reader); 4] = [
        ("corpus/include_scan", scan_bytes),
        ("regressions/include_scan", scan_bytes),
        ("corpus/diagnostics", read_log),
        ("regressions/diagnostics", read_log),
    ];
    for (dir, check) in cases {
        for (path, bytes) in ptx_build::fuzzing::fuzz_files(dir) {
            let run = std::panic::catch_unwind(|| check(&bytes));
            assert!(run.is_ok(), "{} panics ptx-build", path.display());
            n += 1;
        }
    }
    assert!(n >= 4, "only {n} inputs replayed");
}

/// Text that opens no comment, literal or directive and ends at a line start:
/// whatever it is, an include after it is an include.
fn harmless() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "int x;",
        "\n",
        " ",
        "\t",
        "__global__ void k(int *a) { a[0] = 1; }\n",
        "// a comment\n",
        "/* a\ncomment */",
        "#define N 4\n",
        "#pragma unroll\n",
        "'a'",
        "\"str\"",
        "1'000",
        "\\\n",
        "\r\n",
        "{",
        "}",
        "?",
        "??",
    ]);
    prop::collection::vec(piece, 0..12).prop_map(|v| format!("{}\n", v.concat()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn any_text_is_scanned_without_panic(text in "\\PC{0,300}") {
        scan(&text);
    }

    #[test]
    fn any_bytes_are_scanned_without_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        scan(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn an_include_after_harmless_text_is_always_refused_at_its_line(
        before in harmless(),
        spelling in prop::sample::select(vec!["#include", "# include", "%:include", "#  include_next", "#import", "#embed"]),
        target in prop::sample::select(vec!["\"/etc/passwd\"", "</etc/shadow>", "\"../../grader/src/score.rs\"", "\"k.cu\""]),
    ) {
        let text = format!("{before}{spelling} {target}\nint y;\n");
        let line = before.split('\n').count() as u32;
        match check_source(&source(&text)) {
            Err(BuildError::Refused { line: at, .. }) => prop_assert!(at <= line, "refused at {at}, include at {line}"),
            other => prop_assert!(false, "not refused: {other:?}\n{text}"),
        }
    }

    #[test]
    fn any_log_is_read_without_panic(source in "\\PC{0,200}", log in "\\PC{0,400}") {
        read_log(format!("{source}\0{log}").as_bytes());
    }

    #[test]
    fn nvrtc_shaped_logs_keep_their_lines_and_columns(
        entries in prop::collection::vec((1u32..5000, "[ -~\t]{0,40}", 0usize..60, "\\PC{0,30}"), 1..8),
        source in "[ -~\t\n]{0,400}",
    ) {
        let mut log = String::new();
        for (line, excerpt, caret, message) in &entries {
            log += &format!("kernels/k.cu({line}): error: {message}\n  {excerpt}\n{}^\n\n", " ".repeat(*caret));
        }
        let diags = fuzzing::parse_log(&log, "kernels/k.cu", &[], &source);
        for (line, ..) in &entries {
            prop_assert!(diags.iter().any(|d| d.line == Some(*line)), "line {line} lost: {diags:?}");
        }
        prop_assert!(diags.iter().all(|d| d.column.is_none_or(|c| c >= 1)));
    }
}
