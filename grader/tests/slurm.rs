//! `scripts/slurm-grade.sh` on a real one-node Slurm (installed from Debian's
//! packages when absent, started and stopped by `scripts/test-slurm.sh`).
//! Needs root and apt on a fresh machine, and a few minutes: `#[ignore]`d;
//! `.ci/run` runs it with `cargo test -p grader --test suite -- --ignored slurm::`.

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "starts a Slurm cluster on this machine (root, apt); run by .ci/run"]
fn sharded_slurm_grading_matches_one_batch() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = Command::new("bash")
        .arg(root.join("scripts/test-slurm.sh"))
        .env("GRADER", env!("CARGO_BIN_EXE_grader"))
        .current_dir(&root)
        .status()
        .expect("bash runs scripts/test-slurm.sh");
    assert!(status.success(), "scripts/test-slurm.sh failed ({status}); its output above says which check");
    // No daemon or job of the test cluster outlives it (they carry its SLURM_CONF).
    let left: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter(|e| {
            let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // A zombie waits only for init to reap it.
            let zombie = stat.rsplit(')').next().is_some_and(|s| s.trim_start().starts_with('Z'));
            !zombie && env.split(|&b| b == 0).any(|v| v.starts_with(b"SLURM_CONF=/tmp/cuda-lab-slurm."))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "processes of the test cluster still running: {left:?}");
}
