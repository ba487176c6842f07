//! PTX text through ptx-sim's interpreter: every kernel of a module that loads
//! is launched on small buffers under a small step limit (the harness is the
//! property test's: ptx-sim/tests/support/hostile.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../../ptx-sim/tests/support/hostile.rs"]
mod hostile;

fuzz_target!(|data: &[u8]| hostile::load_and_run(data));
