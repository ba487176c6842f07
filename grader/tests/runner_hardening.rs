//! The Classroom runner keeps nothing between jobs that a later job trusts
//! (docs/classroom.md, "Runners that start clean"). These tests run the two
//! scripts the workflow calls, scripts/verify-grader.sh and
//! scripts/runner/check-ephemeral.sh, against what an earlier job could have
//! left behind: a fake grader where the cache or the old shared build folder
//! was, a forged runner marker.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn executable(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

const GOOD: &str = "#!/bin/sh\necho 'the course grader'\n";
const FAKE: &str = "#!/bin/sh\necho 'ex01=full marks for everyone'\n";

/// A job's surroundings: its temp folder, its workspace, and a folder
/// outside both where an earlier job could have written.
struct Job {
    _dir: tempfile::TempDir,
    temp: PathBuf,
    workspace: PathBuf,
    elsewhere: PathBuf,
}

impl Job {
    fn new() -> Job {
        let dir = tempfile::tempdir().unwrap();
        let (temp, workspace, elsewhere) =
            (dir.path().join("_temp"), dir.path().join("_work/repo"), dir.path().join("tool-cache"));
        for d in [&temp, &workspace, &elsewhere] {
            std::fs::create_dir_all(d).unwrap();
        }
        Job { _dir: dir, temp, workspace, elsewhere }
    }

    fn dest(&self) -> PathBuf {
        self.temp.join("grader")
    }

    /// Runs verify-grader.sh as the workflow does, with `env` on top.
    fn verify(&self, env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new("bash");
        cmd.arg(script("scripts/verify-grader.sh"))
            .arg(self.dest())
            .current_dir(&self.workspace)
            .env("RUNNER_TEMP", &self.temp)
            .env("GITHUB_WORKSPACE", &self.workspace)
            .env("CUDA_LAB_PREBUILT_GRADER", self.elsewhere.join("no-prebuilt-grader"))
            .env_remove("CUDA_LAB_GRADER_SHA256")
            .env_remove("CARGO_TARGET_DIR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }
}

#[test]
fn a_fake_grader_planted_in_the_cache_is_refused_loudly() {
    let job = Job::new();
    let cached = job.elsewhere.join("grader");
    let cached_s = cached.to_str().unwrap();
    let pin = sha256(GOOD.as_bytes());

    // An earlier job replaced the cached grader with its own program.
    executable(&cached, FAKE);
    let out = job.verify(&[("CUDA_LAB_PREBUILT_GRADER", cached_s), ("CUDA_LAB_GRADER_SHA256", &pin)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("::error title=Grader refused::"), "{}", text(&out));
    assert!(text(&out).contains(&sha256(FAKE.as_bytes())), "the message names the hash found: {}", text(&out));
    assert!(!job.dest().exists(), "the refused grader must not be left where the next step runs it");

    // The course's own grader passes, and is what the grading step runs.
    executable(&cached, GOOD);
    let out = job.verify(&[("CUDA_LAB_PREBUILT_GRADER", cached_s), ("CUDA_LAB_GRADER_SHA256", &pin.to_uppercase())]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(job.dest()).unwrap(), GOOD);
    let run = Command::new(job.dest()).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "the course grader\n");

    // A cache without a pin is not trusted either, nor a link, nor a bad pin.
    std::fs::remove_file(job.dest()).unwrap();
    let out = job.verify(&[("CUDA_LAB_PREBUILT_GRADER", cached_s)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("no SHA-256 pins it"), "{}", text(&out));
    let link = job.elsewhere.join("link");
    std::os::unix::fs::symlink(&cached, &link).unwrap();
    let out = job.verify(&[("CUDA_LAB_PREBUILT_GRADER", link.to_str().unwrap()), ("CUDA_LAB_GRADER_SHA256", &pin)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("not a regular file"), "{}", text(&out));
    let out = job.verify(&[("CUDA_LAB_PREBUILT_GRADER", cached_s), ("CUDA_LAB_GRADER_SHA256", "abc")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!job.dest().exists());
}

#[test]
fn a_fake_grader_in_a_shared_build_folder_is_never_run() {
    let job = Job::new();
    // Where the old workflow built (the runner's tool cache, shared by every
    // job): an earlier job left a fake `release/grader` there.
    let shared = job.elsewhere.join("cuda-lab-target");
    executable(&shared.join("release/grader"), FAKE);
    let out = job.verify(&[("CARGO_TARGET_DIR", shared.to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("outside this job's folders"), "{}", text(&out));
    assert!(!job.dest().exists());

    // A build folder of this job that is not empty was not made by this job.
    let own = job.temp.join("cuda-lab-target");
    executable(&own.join("release/grader"), FAKE);
    let out = job.verify(&[("CARGO_TARGET_DIR", own.to_str().unwrap())]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("not empty"), "{}", text(&out));
    std::fs::remove_dir_all(&own).unwrap();

    // A fresh folder: the grader is built (here by a stand-in for cargo) and
    // the built one is what runs.
    let bin = job.elsewhere.join("bin");
    let built = job.elsewhere.join("built-grader");
    std::fs::write(&built, GOOD).unwrap();
    executable(
        &bin.join("cargo"),
        &format!(
            "#!/bin/sh\nmkdir -p \"$CARGO_TARGET_DIR/release\"\ncp '{}' \"$CARGO_TARGET_DIR/release/grader\"\n",
            built.display()
        ),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = job.verify(&[("CARGO_TARGET_DIR", own.to_str().unwrap()), ("PATH", &path)]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(job.dest()).unwrap(), GOOD);
}

#[test]
fn the_workflow_checks_the_runner_and_the_grader_before_grading() {
    let yaml = grader::template::classroom_workflow(&grader::registry::all());
    let at = |needle: &str| yaml.find(needle).unwrap_or_else(|| panic!("{needle} is not in the workflow:\n{yaml}"));
    assert!(at("run: scripts/runner/check-ephemeral.sh") < at("run: scripts/verify-grader.sh \"$RUNNER_TEMP/grader\""));
    assert!(at("scripts/verify-grader.sh") < at("\"$RUNNER_TEMP/grader\" batch"));
    assert!(yaml.contains("CARGO_TARGET_DIR: ${{ runner.temp }}/cuda-lab-target"));
    assert!(!yaml.contains("tool_cache"), "no folder shared between jobs");
    assert!(yaml.contains("CUDA_LAB_GRADER_SHA256: ${{ vars.CUDA_LAB_GRADER_SHA256 }}"));
    assert!(yaml.contains("CUDA_LAB_ALLOW_PERSISTENT_RUNNER: ${{ vars.CUDA_LAB_ALLOW_PERSISTENT_RUNNER }}"));
    // The scripts run from the course's checkout, never the student's.
    for step in yaml.split("      - name: ").filter(|s| s.contains("run: scripts/")) {
        assert!(step.contains("working-directory: trusted-grader"), "{step}");
    }
}

fn check_ephemeral(marker: &Path, env: &[(&str, &str)], as_nobody: bool) -> Output {
    let mut cmd = if as_nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "bash"]);
        c
    } else {
        Command::new("bash")
    };
    // A copy every user can read (the worktree may not be).
    let copy = marker.parent().unwrap().parent().unwrap().join("check-ephemeral.sh");
    std::fs::copy(script("scripts/runner/check-ephemeral.sh"), &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    cmd.arg(&copy).env("CUDA_LAB_RUNNER_MARKER", marker).env_remove("CUDA_LAB_ALLOW_PERSISTENT_RUNNER");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn a_runner_that_is_not_ephemeral_is_refused_unless_the_course_opts_out() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let marker = dir.path().join("etc/ephemeral-runner");
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();

    let out = check_ephemeral(&marker, &[], false);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("::error title=Runner is not ephemeral::"), "{}", text(&out));
    assert!(text(&out).contains("was not started from the course's ephemeral runner recipe"), "{}", text(&out));

    let out = check_ephemeral(&marker, &[("CUDA_LAB_ALLOW_PERSISTENT_RUNNER", "True")], false);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("::warning title=Persistent runner::"), "the opt-out says why: {}", text(&out));

    std::fs::write(&marker, "ephemeral=true\n").unwrap();
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        // Written by this (unprivileged) user: a job could have forged it.
        let out = check_ephemeral(&marker, &[], false);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("not owned by root"), "{}", text(&out));
        eprintln!("note: not root, so the accepted case (a root-owned marker) is not run here");
        return;
    }
    // As root, a job could have written the marker itself.
    let out = check_ephemeral(&marker, &[], false);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("runs as root"), "{}", text(&out));

    // The recipe's set-up: a root-owned read-only marker in a read-only folder,
    // checked by an unprivileged job.
    std::fs::set_permissions(&marker, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(marker.parent().unwrap(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = check_ephemeral(&marker, &[], true);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("runner: ephemeral"), "{}", text(&out));

    // A folder the job can write is as bad as no marker.
    std::fs::set_permissions(marker.parent().unwrap(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = check_ephemeral(&marker, &[], true);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("writable by the job"), "{}", text(&out));
}
