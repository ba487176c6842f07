//! What the integration tests share. Each test file uses only part of it.
#![allow(dead_code)]

pub mod intake_tree;

/// CI sets it: there NVRTC (and the device headers it installs) must be
/// found, and a test that would skip without it fails instead.
pub const REQUIRE_NVRTC_ENV: &str = "CUDA_LAB_REQUIRE_NVRTC";

/// Whether NVRTC must be found here ([`REQUIRE_NVRTC_ENV`]).
pub fn nvrtc_required() -> bool {
    std::env::var_os(REQUIRE_NVRTC_ENV).is_some()
}

/// NVRTC, if it loads here; without it the grader compiles nothing, and the
/// tests that grade `.cu` files prove nothing and skip. Panics where it is
/// required and missing.
pub fn nvrtc() -> Option<ptx_build::Compiler> {
    match ptx_build::Compiler::nvrtc() {
        Ok(c) => Some(c),
        Err(_) if nvrtc_required() => panic!("CUDA_LAB_REQUIRE_NVRTC is set but NVRTC is missing"),
        Err(_) => None,
    }
}

/// Whether NVRTC loads here (see [`nvrtc`]).
pub fn nvrtc_available() -> bool {
    nvrtc().is_some()
}
