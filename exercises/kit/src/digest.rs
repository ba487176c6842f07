//! Output digests, to show that two backends compute the same bits: with
//! `CUDA_LAB_OUTPUT_DIGESTS=FILE`, every buffer a check reads back from the
//! device is hashed (SHA-256) into the check's record ([`crate::record`]),
//! and after the check the grader appends one line `check<TAB>buffer<TAB>sha256`
//! per read to FILE ([`write()`]). Grading the same seed on a GPU and on the simulator and
//! comparing the two files proves them bit-identical where the math is
//! deterministic (`grader compare-digests A B`).

use std::io::Write;

use sha2::{Digest, Sha256};

use crate::record::OutputDigest;

pub const ENV: &str = "CUDA_LAB_OUTPUT_DIGESTS";

/// Records `bytes` read back from buffer `buffer` into the running check's
/// record, when digests were asked for (outside a check, nothing).
pub(crate) fn record(buffer: &str, bytes: &[u8]) {
    if std::env::var_os(ENV).is_none() || !crate::record::recording() {
        return;
    }
    let sha256 = format!("{:x}", Sha256::digest(bytes));
    crate::record::with(|r| r.digests.push(OutputDigest { buffer: buffer.to_string(), sha256 }));
}

/// Appends the digests check `check` recorded to the file digests were asked
/// for, one line `check<TAB>buffer<TAB>sha256` each; nothing without it.
pub fn write(check: &str, digests: &[OutputDigest]) {
    let Some(path) = std::env::var_os(ENV) else { return };
    if digests.is_empty() {
        return;
    }
    let lines: String = digests.iter().map(|d| format!("{check}\t{}\t{}\n", d.buffer, d.sha256)).collect();
    // Best effort: a digest that cannot be written must not fail a grade.
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = f.write_all(lines.as_bytes());
    }
}
