//! Installs what the grader needs from CUDA (NVRTC, the device headers) into a
//! per-user cache on first use, so that a fresh machine needs nothing but Rust
//! and Python's pip.
//!
//! `python3 -m pip install --target <tmp> <pinned wheels>`: pip's own settings
//! (index, mirror, proxy, certificates) apply, nothing goes into the system's
//! Python. Several processes may start at once (parallel tests, `grader batch`
//! children): an exclusive file lock makes one of them install while the
//! others wait, and the install lands in a temporary folder that is renamed
//! into place only when complete, so a half-finished install is never used.

use std::fs::File;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Set to `1` to never download anything (the error says what to install).
pub const OFFLINE_ENV: &str = "CUDA_LAB_OFFLINE";

/// A set of pinned wheels installed together into one cache folder.
pub(crate) struct Bundle {
    /// Folder name under the cache root; carries the versions, so a new pin
    /// installs beside the old one instead of over it.
    pub dir: &'static str,
    /// What the student is told is being installed.
    pub what: &'static str,
    /// `name==version`, exactly as pip takes them.
    pub packages: &'static [&'static str],
    /// A file that must exist (relative to the install) for it to count as complete.
    pub proof: &'static str,
    /// Files and folders of the wheels that are not needed (shared libraries next to headers).
    pub prune: &'static [&'static str],
    /// More arguments for `pip install` (e.g. `--platform`, for wheels of plain files that
    /// pip would not offer for this machine).
    pub pip_args: &'static [&'static str],
    /// Run on the finished install before it is renamed into place: lays it out
    /// as its user needs it (see `clang::layout`). Its proof file is checked after.
    pub finish: Option<fn(&Path) -> std::io::Result<()>>,
}

/// NVRTC 12.9: loads with CUDA 12.x and 13.0 drivers (the H100's is 580 / CUDA
/// 13.0) and emits PTX that older 12.x drivers JIT as long as the PTX ISA
/// version is one they know (the grader targets compute_75 by default).
pub(crate) const NVRTC: Bundle = Bundle {
    dir: "nvrtc-12.9.86",
    what: "NVRTC 12.9 (the CUDA compiler the grader uses)",
    packages: &["nvidia-cuda-nvrtc-cu12==12.9.86"],
    proof: "nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
    // The "alt" builds (another C++ ABI, never loaded here): 110 MB.
    prune: &["nvidia/cuda_nvrtc/lib/libnvrtc.alt.so.12", "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.alt.so.12.9"],
    pip_args: &[],
    finish: None,
};

/// `cuda_fp16.h`, `cuda_bf16.h`, `cooperative_groups.h` and what they include:
/// the CUDA runtime wheel's include folder, plus CCCL's (`<nv/target>`).
pub(crate) const DEVICE_HEADERS: Bundle = Bundle {
    dir: "cuda-headers-12.9",
    what: "the CUDA 12.9 device headers (cuda_fp16.h, cuda_bf16.h, cooperative_groups.h, CUB)",
    packages: &["nvidia-cuda-runtime-cu12==12.9.79", "nvidia-cuda-cccl-cu12==12.9.27"],
    proof: "nvidia/cuda_runtime/include/cuda_fp16.h",
    prune: &["nvidia/cuda_runtime/lib", "nvidia/cuda_cccl/lib"],
    pip_args: &[],
    finish: None,
};

/// Include folders of [`DEVICE_HEADERS`], relative to its install.
pub(crate) const DEVICE_INCLUDE_DIRS: &[&str] = &["nvidia/cuda_runtime/include", "nvidia/cuda_cccl/include"];

/// Why a bundle is not there and could not be installed. Display: one line
/// that says what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// No cache folder: neither XDG_CACHE_HOME nor HOME is set.
    NoCache,
    /// CUDA_LAB_OFFLINE=1.
    Offline,
    /// `python3 -m pip` does not run.
    NoPip(String),
    /// pip ran and failed (network off, no such version on the index, ...).
    PipFailed(String),
    /// Creating, locking or renaming in the cache failed.
    Io(String),
}

impl Failure {
    /// One line: what happened, and the command that installs it by hand.
    pub fn message(&self, bundle: &Bundle) -> String {
        let by_hand = match bundle.pip_args {
            [] => format!("`python3 -m pip install {}`", bundle.packages.join(" ")),
            args => format!("`python3 -m pip install {} {}`", args.join(" "), bundle.packages.join(" ")),
        };
        match self {
            Failure::NoCache => format!(
                "{} is not installed, and there is no cache folder to install it into (set XDG_CACHE_HOME or HOME); \
                 install it with {by_hand}",
                bundle.what
            ),
            Failure::Offline => format!(
                "{} is not installed and {OFFLINE_ENV}=1 forbids downloading it; install it with {by_hand} \
                 (or the CUDA toolkit), or unset {OFFLINE_ENV}",
                bundle.what
            ),
            Failure::NoPip(why) => format!(
                "{} is not installed and cannot be installed automatically because `python3 -m pip` does not run \
                 ({why}); install Python's pip (e.g. `apt install python3-pip`), or install it with {by_hand} \
                 (or the CUDA toolkit)",
                bundle.what
            ),
            Failure::PipFailed(why) => format!(
                "{} is not installed and pip could not install it ({why}); is the network on, or does your pip \
                 index (PIP_INDEX_URL) carry it? Install it with {by_hand}, or the CUDA toolkit",
                bundle.what
            ),
            Failure::Io(why) => {
                format!("{} is not installed and could not be installed into the cache: {why}", bundle.what)
            }
        }
    }
}

/// `$XDG_CACHE_HOME/cuda-lab`, else `~/.cache/cuda-lab`: the one cache folder
/// of the project (NVRTC installs here; the grader keeps calibrations here).
pub fn cache_root() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
    var("XDG_CACHE_HOME").map(|d| d.join("cuda-lab")).or_else(|| var("HOME").map(|h| h.join(".cache").join("cuda-lab")))
}

/// Where `bundle` is when installed (it may not be).
pub(crate) fn installed(bundle: &Bundle) -> Option<PathBuf> {
    let dir = cache_root()?.join(bundle.dir);
    dir.join(bundle.proof).is_file().then_some(dir)
}

/// The first failed pip of this process: pip is not tried again until the
/// process ends (a grader run compiles many files; each would wait for the
/// same failure again, and an offline machine would pay pip's time-outs per file).
static PIP_UNUSABLE: OnceLock<Failure> = OnceLock::new();

/// Whether this process may download (decided once: `CUDA_LAB_OFFLINE=1`, or
/// an earlier failed pip); `Err` says why not.
pub(crate) fn may_download() -> Result<(), Failure> {
    if offline() {
        return Err(Failure::Offline);
    }
    match PIP_UNUSABLE.get() {
        Some(f) => Err(f.clone()),
        None => Ok(()),
    }
}

pub(crate) fn offline() -> bool {
    std::env::var(OFFLINE_ENV).is_ok_and(|v| v.trim() == "1")
}

/// The bundle's folder, installing it first when it is not there.
pub(crate) fn ensure(bundle: &Bundle) -> Result<PathBuf, Failure> {
    if let Some(dir) = installed(bundle) {
        return Ok(dir);
    }
    may_download()?;
    let root = cache_root().ok_or(Failure::NoCache)?;
    std::fs::create_dir_all(&root).map_err(|e| Failure::Io(format!("creating {}: {e}", root.display())))?;
    let _lock = lock(&root.join(format!(".{}.lock", bundle.dir)), bundle)?;
    // Another process may have installed it while we waited for the lock.
    if let Some(dir) = installed(bundle) {
        return Ok(dir);
    }
    let result = install(&root, bundle);
    if let Err(f @ (Failure::NoPip(_) | Failure::PipFailed(_))) = &result {
        let _ = PIP_UNUSABLE.set(f.clone());
    }
    result
}

/// An exclusive `flock` on `path`, held until the file is closed (also when
/// the process dies, so a killed installer never blocks the next one).
fn lock(path: &Path, bundle: &Bundle) -> Result<File, Failure> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Failure::Io(format!("opening {}: {e}", path.display())))?;
    if flock(&file, false).is_err() {
        eprintln!("cuda-lab: waiting for another process that is installing {}", bundle.what);
        flock(&file, true).map_err(|e| Failure::Io(format!("locking {}: {e}", path.display())))?;
    }
    Ok(file)
}

#[cfg(unix)]
fn flock(file: &File, wait: bool) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let op = if wait { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
    loop {
        // SAFETY: flock on a descriptor this File owns.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(not(unix))]
fn flock(_file: &File, _wait: bool) -> std::io::Result<()> {
    Ok(())
}

/// pip into a temporary folder beside the final one, then one rename.
fn install(root: &Path, bundle: &Bundle) -> Result<PathBuf, Failure> {
    pip_runs()?;
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{}-partial-", bundle.dir))
        .tempdir_in(root)
        .map_err(|e| Failure::Io(format!("creating a folder in {}: {e}", root.display())))?;
    let target = tmp.path().join("install");
    let started = Instant::now();
    let progress = Progress::start(&format!(
        "cuda-lab: installing {} into {} (first run only; pip: {})",
        bundle.what,
        root.join(bundle.dir).display(),
        bundle.packages.join(" ")
    ));
    let result = run_pip(&target, bundle);
    progress.finish(match &result {
        Ok(()) => format!("cuda-lab: installed {} in {:.0} s", bundle.what, started.elapsed().as_secs_f64()),
        Err(_) => format!("cuda-lab: installing {} failed", bundle.what),
    });
    result?;
    if bundle.finish.is_none() && !target.join(bundle.proof).is_file() {
        return Err(Failure::PipFailed(format!("pip finished but {} is missing from what it installed", bundle.proof)));
    }
    for p in bundle.prune {
        let p = target.join(p);
        let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
    }
    if let Some(finish) = bundle.finish {
        finish(&target).map_err(|e| Failure::Io(format!("laying out {}: {e}", bundle.what)))?;
    }
    if !target.join(bundle.proof).is_file() {
        return Err(Failure::Io(format!("{} is missing after laying out {}", bundle.proof, bundle.what)));
    }
    let dest = root.join(bundle.dir);
    // Under the lock nobody else writes `dest`; a leftover without its proof
    // file (an interrupted older layout) is moved out of the way first.
    if dest.exists() {
        let _ = std::fs::rename(&dest, tmp.path().join("stale"));
    }
    std::fs::rename(&target, &dest).map_err(|e| Failure::Io(format!("renaming into {}: {e}", dest.display())))?;
    Ok(dest)
}

fn pip_runs() -> Result<(), Failure> {
    let out = Command::new("python3")
        .args(["-m", "pip", "--version"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Failure::NoPip(format!("python3: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(Failure::NoPip(last_line(&out.stderr).unwrap_or_else(|| format!("exit status {}", out.status))))
}

/// Longest we let pip run: a slow mirror is fine, a hung one is not.
const PIP_TIME_LIMIT: Duration = Duration::from_secs(30 * 60);

fn run_pip(target: &Path, bundle: &Bundle) -> Result<(), Failure> {
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--no-deps", "--quiet"])
        .arg("--target")
        .arg(target)
        .args(bundle.pip_args)
        .args(bundle.packages)
        // `--target` cannot be combined with a user install a pip.conf may ask for.
        .env("PIP_USER", "0");
    match crate::process::output_with_timeout(&mut cmd, PIP_TIME_LIMIT) {
        Ok(Some(out)) if out.status.success() => Ok(()),
        Ok(Some(out)) => Err(Failure::PipFailed(pip_error(&out.stderr).unwrap_or_else(|| format!("{}", out.status)))),
        Ok(None) => Err(Failure::PipFailed(format!("no answer in {} minutes", PIP_TIME_LIMIT.as_secs() / 60))),
        Err(e) => Err(Failure::NoPip(format!("python3: {e}"))),
    }
}

/// pip's own "ERROR: ..." line, else its last line.
fn pip_error(stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let error = text.lines().map(str::trim).find(|l| l.starts_with("ERROR:"));
    error.map(|l| l.trim_start_matches("ERROR:").trim().chars().take(300).collect()).or_else(|| last_line(stderr))
}

fn last_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    text.lines().map(str::trim).rfind(|l| !l.is_empty()).map(|l| l.chars().take(300).collect())
}

/// A spinner on a terminal; plain lines otherwise (CI logs, pipes).
struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    fn start(line: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            eprintln!("{line}");
            return Progress(None);
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_message(line.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress(Some(bar))
    }

    fn finish(self, line: String) {
        match self.0 {
            Some(bar) => bar.finish_with_message(line),
            None => eprintln!("{line}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_install_in_one_line() {
        for f in [
            Failure::NoCache,
            Failure::Offline,
            Failure::NoPip("No module named pip".into()),
            Failure::PipFailed("Could not find a version".into()),
        ] {
            let m = f.message(&NVRTC);
            assert!(!m.contains('\n'), "{m}");
            assert!(m.contains("`python3 -m pip install nvidia-cuda-nvrtc-cu12==12.9.86`"), "{m}");
        }
        assert!(Failure::Offline.message(&NVRTC).contains("CUDA_LAB_OFFLINE=1"));
    }

    #[test]
    fn pip_errors_are_cut_to_their_error_line() {
        let stderr = b"WARNING: Retrying ...\nERROR: Could not find a version that satisfies the requirement x==1\n\
                       ERROR: No matching distribution found for x==1\n";
        assert_eq!(pip_error(stderr).unwrap(), "Could not find a version that satisfies the requirement x==1");
        assert_eq!(pip_error(b"Traceback\n  boom\n\n").unwrap(), "boom");
    }

    #[test]
    fn pins_are_exact() {
        for b in [&NVRTC, &DEVICE_HEADERS, &crate::clang::CLANG, &crate::clang::CLANG_CUDA] {
            assert!(b.packages.iter().all(|p| p.contains("==")), "{:?}", b.packages);
        }
    }
}
