//! A compiler log (which echoes the student's source) through ptx-build's
//! diagnostics reader. The input is `source \0 log`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (source, log) = text.split_once('\0').unwrap_or(("", &text));
    let diags = ptx_build::fuzzing::parse_log(log, "kernels/k.cu", &["input.cu"], source);
    assert!(diags.len() <= ptx_build::MAX_DIAGNOSTICS + 2, "{} diagnostics", diags.len());
    assert!(diags.iter().any(|d| d.severity == ptx_build::Severity::Error));
    for d in &diags {
        assert!(d.column.is_none_or(|c| c >= 1), "{d:?}");
        assert!(d.line.is_none_or(|l| l >= 1), "{d:?}");
        let _ = d.to_string();
    }
    assert!(ptx_build::fuzzing::cap_log(log).len() <= ptx_build::MAX_LOG_BYTES + 100);
});
