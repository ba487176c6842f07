//! What ptx-build's test files share.

use ptx_build::Compiler;

/// NVRTC, or `None` (the test passes with a note) where it is not installed,
/// unless CUDA_LAB_REQUIRE_NVRTC=1 (CI), where that fails.
pub fn nvrtc() -> Option<Compiler> {
    match Compiler::nvrtc() {
        Ok(c) => Some(c),
        Err(e) if std::env::var("CUDA_LAB_REQUIRE_NVRTC").map_or(true, |v| v.is_empty() || v == "0") => {
            eprintln!("skipping: {e}");
            None
        }
        Err(e) => panic!("CUDA_LAB_REQUIRE_NVRTC is set but NVRTC is missing: {e}"),
    }
}
