//! `grader batch --timeout-from-reference`: the reference is graded once with
//! the batch's seed and backend, every correctness check it passes gets a
//! limit between the floor and `--timeout` in `OUT/check-limits.json`, and the
//! class's gradebook is the one graded without it (on the simulator, which has
//! no wall-clock limits, nothing can be cut: this tests the plumbing; the
//! limit itself is kit's `a_check_limited_below_the_timeout_stops_there...`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use grader::batch::gradebook::Gradebook;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn ok(out: Output) -> String {
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "grader failed:\n{text}");
    text
}

#[test]
fn limits_follow_from_the_reference_and_change_no_verdict_that_finishes() {
    if ptx_build::Compiler::nvrtc().is_err() {
        assert!(std::env::var_os("CUDA_LAB_REQUIRE_NVRTC").is_none(), "NVRTC is required");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let class = dir.path().join("class");
    let file = "exercises/ex05-stencil/kernels/stencil.cu";
    for (student, from) in [
        ("ana", repo().join("reference/ex05-stencil/kernels/stencil.cu")),
        ("ben", repo().join(file)),
        ("cy", kit::trial::workspace_file(&format!("grader/tests/variants/ex05-missing-barrier/{file}"))),
    ] {
        std::fs::create_dir_all(class.join(student)).unwrap();
        std::fs::copy(from, class.join(student).join("stencil.cu")).unwrap();
    }
    let batch = |out: &str, extra: &[&str]| {
        let out = dir.path().join(out);
        let mut args = vec!["batch", class.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend(["--exercises", "ex05", "--backend", "sim", "--seed", "3", "--timeout", "4"]);
        args.extend_from_slice(extra);
        ok(Command::new(env!("CARGO_BIN_EXE_grader")).args(&args).current_dir(repo()).output().unwrap());
        out
    };
    let plain = batch("plain", &[]);
    let limited = batch("limited", &["--timeout-from-reference", "20", "--timeout-floor", "0.5"]);
    assert!(!plain.join(grader::check_limits::FILE_NAME).exists());
    let limits = grader::check_limits::load(&limited.join(grader::check_limits::FILE_NAME)).unwrap();
    assert_eq!(limits.seed, 3);
    let ex05 = grader::registry::select(&["ex05".into()]).unwrap();
    let correct = ex05[0].parts[0].checks.iter().filter(|c| c.kind == kit::CheckKind::Correctness).count();
    assert_eq!(limits.checks.len(), correct, "every correctness check the reference passes: {:?}", limits.checks);
    for (name, l) in &limits.checks {
        assert!(name.contains("::correct::"), "{name}");
        assert!(l.reference_s > 0.0 && (0.5..=4.0).contains(&l.limit_s), "{name}: {l:?}");
        assert!((l.limit_s - (20.0 * l.reference_s).clamp(0.5, 4.0)).abs() < 1e-9, "{name}: {l:?}");
    }
    let a = Gradebook::read(&plain.join("gradebook.json")).unwrap();
    let b = Gradebook::read(&limited.join("gradebook.json")).unwrap();
    assert_eq!(a, b);
}
