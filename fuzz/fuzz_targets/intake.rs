//! Submission trees (names in any encoding, sizes at the limit, links, FIFOs)
//! through the batch intake; the decoder and the invariants are the property
//! test's (grader/tests/support/intake_tree.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../../grader/tests/support/intake_tree.rs"]
mod intake_tree;

fuzz_target!(|data: &[u8]| {
    let secrets = tempfile::tempdir().unwrap();
    intake_tree::plant_secrets(secrets.path());
    let sub = tempfile::tempdir().unwrap();
    intake_tree::build(sub.path(), &intake_tree::decode(data, secrets.path()));
    let staging = tempfile::tempdir().unwrap();
    let intake = grader::batch::intake::stage(sub.path(), &intake_tree::expected(), staging.path()).unwrap();
    intake_tree::check(sub.path(), staging.path(), &intake);
});
