//! A student's .cu text through ptx-build's include policy scan.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let src = ptx_build::SourceFile { display_path: "kernels/k.cu".into(), text };
    if let Err(e) = ptx_build::check_source(&src) {
        // A refusal names a line of the file.
        if let ptx_build::BuildError::Refused { line, .. } = e {
            let lines = src.text.split(['\n', '\r']).count() as u32;
            assert!(line >= 1 && line <= lines.max(1), "line {line} of {lines}");
        }
    }
});
