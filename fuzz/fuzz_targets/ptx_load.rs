//! PTX text (as NVRTC emits it, with inline `asm` of any content) through
//! ptx-sim's lexer, parser and compiler: an error is fine, a panic is not.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../../ptx-sim/tests/support/hostile.rs"]
mod hostile;

fuzz_target!(|data: &[u8]| hostile::load(data));
