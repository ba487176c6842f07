//! The batch worker: one process and one CUDA context per GPU slot, grading
//! part after part as the batch asks (`grader batch-worker`, started by
//! [`super::pool`]). Each request is one JSON line on stdin; each answer one
//! JSON line on the process's original stdout. Everything else the process
//! prints (the grader's report, a kernel's `printf`) goes to /dev/null, so a
//! student cannot write into the protocol.
//!
//! Inputs, CPU references and yardstick timings are kept between parts
//! (`kit::shared`), so every student after the first reuses them. The batch
//! sends a few parts ahead: while the GPU runs one part's checks, the simulator
//! sanitizer pass of the part before finishes on other cores. A part after
//! which the context may be broken (a crash, a stuck kernel) is answered with
//! `poisoned` and the worker exits: the batch regrades that part alone in a
//! fresh process and starts a new worker. A kernel that never ended is the
//! exception: the part ran start to end as it would alone (a stuck kernel
//! fails its check and every later check is not run, in a worker as in a
//! fresh process), so its result is kept unless `--regrade-hangs`, which
//! would spend the kernel time limit twice.

use std::io::{BufRead, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::grade::{self, BackendChoice};
use crate::verdict::Verdict;

/// Test hook: a worker asked to grade `<exercise>/<part>` named here aborts,
/// as one whose context broke would (tests prove the isolated regrade).
pub const DIE_ON_ENV: &str = "CUDA_LAB_WORKER_DIE_ON";
/// Test hook: a worker asked to grade the part named here never answers, as
/// one stuck past the part's time limit would.
pub const HANG_ON_ENV: &str = "CUDA_LAB_WORKER_HANG_ON";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub exercise: String,
    pub part: String,
    /// The submission's staging root.
    pub root: PathBuf,
    /// Where the part's grades JSON goes.
    pub json: PathBuf,
}

/// The answer to a request (or, with `ready`, to the start).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Reply {
    /// The first line: the GPU and compiler are open.
    #[serde(default)]
    pub ready: bool,
    /// The part's JSON was written.
    #[serde(default)]
    pub written: bool,
    /// Why this worker must not grade anything else (it exits after saying so).
    pub poisoned: Option<String>,
    /// Whether the part's result is still right although the worker is done
    /// (an abandoned compile: the verdict stands, later compiles would queue).
    #[serde(default)]
    pub keep_result: bool,
    /// The part's only trouble was a kernel that never ended: its verdicts
    /// are those of a fresh process (the batch keeps them unless `--regrade-hangs`).
    #[serde(default)]
    pub hang_only: bool,
    pub error: Option<String>,
    #[serde(default)]
    pub time: PartTime,
    #[serde(default)]
    pub drift: Vec<kit::shared::Drift>,
}

/// Where one part's time went in the worker (`grade::profile`).
pub use crate::grade::PartTime;

pub struct Settings {
    pub seed: u64,
    pub backend: BackendChoice,
    pub timeout: Duration,
    pub sanitize: crate::sanitize::Sanitize,
    pub policy: crate::policy::Policy,
    /// Where performance thresholds come from (`--calibration`, as the batch passed it).
    pub calibration: crate::calibrate::Choice,
    /// How timed checks give their points (`--credit`, as the batch passed it).
    pub credit: Option<crate::credit::Credit>,
}

/// Serves requests until stdin closes. The GPU work of a part runs on this
/// thread; its sanitizer pass is waited for, its result written and its answer
/// sent on another, so the next part's checks start at once. Answers go out
/// in the order of the requests.
pub fn serve(settings: &Settings) -> Result<()> {
    let mut proto = protocol_channel()?;
    // Into the slot's log: every worker, the first and each replacement, says
    // what it was started with, so that two can be compared (issue 46: a
    // replacement after a kill measured a reference 24 % apart).
    eprintln!("{}", started_with(std::env::args().skip(1), std::env::vars()));
    grade::keep_environment();
    let start = Instant::now();
    // Opens the GPU and the compiler now, so the first student does not pay for it.
    let _ = grade::run(&[], &options(settings, PathBuf::from(".")))?;
    answer(
        &mut proto,
        &Reply {
            ready: true,
            time: PartTime { wall: secs(start.elapsed()), ..Default::default() },
            ..Default::default()
        },
    )?;
    // Unbounded: the batch sends at most a few parts ahead (`slot::IN_FLIGHT`).
    let (checked, to_finish) = std::sync::mpsc::channel::<Checked>();
    let finisher = std::thread::spawn(move || -> Result<()> {
        for part in to_finish {
            answer(&mut proto, &part.finish())?;
        }
        Ok(())
    });
    for line in std::io::stdin().lock().lines() {
        let line = line.context("reading a request")?;
        if line.trim().is_empty() {
            continue;
        }
        let request: Request = serde_json::from_str(&line).context("a request that is not JSON")?;
        let part = check(settings, request);
        // After a part that may have broken the context, nothing else runs here.
        let last = part.reply.poisoned.is_some();
        if checked.send(part).is_err() || last {
            break;
        }
    }
    drop(checked);
    finisher.join().map_err(|_| anyhow::anyhow!("the finishing thread panicked"))?
}

/// How a worker's log names what it was started with: its arguments and
/// every variable of the environment that changes grading (the GPU, the
/// compiler, the caches, the lock, the limits), each in order. The lock's
/// descriptor number is left out: it is the batch's, not a setting.
pub const STARTED_WITH: &str = "batch worker started with:";

pub fn started_with(args: impl Iterator<Item = String>, vars: impl Iterator<Item = (String, String)>) -> String {
    let args: Vec<String> = args.collect();
    let mut env: Vec<String> = vars
        .filter(|(k, _)| {
            (k.starts_with("CUDA") || k.starts_with("NVRTC") || k == "LD_LIBRARY_PATH" || k == "NO_COLOR")
                && k != kit::gpu_lock::FD_ENV
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    env.sort();
    format!("{STARTED_WITH} {} | {}", args.join(" "), env.join(" "))
}

/// A part whose checks ran; what is left is the sanitizer pass and the result file.
struct Checked {
    request: Request,
    pending: Result<grade::Pending>,
    reply: Reply,
    /// Started and stopped around the checks on the GPU thread; the part's
    /// time is read when it is finished.
    clock: grade::Clock,
}

/// Runs the part's checks and decides whether the worker may go on after it.
fn check(settings: &Settings, request: Request) -> Checked {
    let named = |env: &str| std::env::var(env).is_ok_and(|v| v == format!("{}/{}", request.exercise, request.part));
    if named(DIE_ON_ENV) {
        std::process::abort();
    }
    if named(HANG_ON_ENV) {
        loop {
            std::thread::park();
        }
    }
    let mut clock = grade::Clock::start();
    let pending = (|| -> Result<grade::Pending> {
        let mut exercises = crate::registry::select(std::slice::from_ref(&request.exercise))?;
        crate::registry::keep_part(&mut exercises, &request.part)?;
        grade::start(&exercises, &options(settings, request.root.clone()))
    })();
    clock.checked();
    let mut reply = Reply { drift: kit::shared::take_drift(), ..Default::default() };
    match &pending {
        Ok(p) => {
            if let Some(poison) = poisoned(p.backend(), p.verdicts().iter().map(String::as_str)) {
                reply.poisoned = Some(poison.why);
                reply.hang_only = poison.hang_only;
            }
            if reply.poisoned.is_none() && grade::compile_stuck() {
                reply.poisoned = Some("a compile was abandoned; later ones would queue behind it".into());
                reply.keep_result = true;
            }
        }
        // The grader itself failed (e.g. the GPU went away): nothing is written,
        // and a fresh process says why.
        Err(e) => {
            reply.error = Some(format!("{e:#}"));
            reply.poisoned = Some("the grader failed in the worker".into());
        }
    }
    Checked { request, pending, reply, clock }
}

impl Checked {
    /// Waits for the sanitizer pass, scores and writes the part.
    fn finish(self) -> Reply {
        let Checked { request, pending, mut reply, clock } = self;
        let Ok(pending) = pending else { return reply };
        let finish_started = Instant::now();
        let (report, _) = pending.finish();
        if let Err(e) = report.write(&request.json) {
            reply.error = Some(format!("writing the result: {e:#}"));
            reply.poisoned.get_or_insert_with(|| "the grader failed in the worker".into());
            return reply;
        }
        reply.time = clock.finished(finish_started, &report);
        reply.written = true;
        reply
    }
}

/// Why the context may be unusable (or its memory not to be trusted) after a
/// part whose checks gave `verdicts`, if it may: a fatal CUDA error, a kernel
/// that never ended, or a write out of bounds found on the GPU. (The sanitizer
/// pass's findings come later and from the simulator, which shares nothing
/// with the context: the GPU thread has moved on by then.)
/// Only a CUDA context breaks: the simulator is an interpreter that starts
/// every launch afresh, and its step limit stops an endless kernel cleanly.
/// `backend` is the name the part's report recorded.
pub fn poisoned<'v>(backend: &str, verdicts: impl IntoIterator<Item = &'v str>) -> Option<Poison> {
    if !kit::backend::Capabilities::of_named(backend).loses_context {
        return None;
    }
    let mut found: Option<Poison> = None;
    for v in verdicts {
        let verdict = Verdict::from(v);
        let hang = verdict.never_ended();
        // A write past a buffer's guard zone may have landed in memory another
        // part will use: that part is regraded alone too.
        let broken = verdict.crashed() || matches!(verdict, Verdict::GpuError | Verdict::OutOfBoundsWrite);
        if broken {
            return Some(Poison { why: format!("verdict `{v}`"), hang_only: false });
        }
        if hang && found.is_none() {
            found = Some(Poison { why: format!("verdict `{v}`"), hang_only: true });
        }
    }
    found
}

/// Why a worker must stop after a part.
pub struct Poison {
    pub why: String,
    /// Only a kernel that never ended (and the checks it left unrun): the part
    /// ran start to end as in a fresh process, so its verdicts stand; the
    /// worker still goes, since the kernel may still be running.
    pub hang_only: bool,
}

fn options(settings: &Settings, root: PathBuf) -> grade::Options {
    grade::Options {
        root,
        sources: "exercises".into(),
        seed: settings.seed,
        backend: settings.backend,
        timeout: settings.timeout,
        // One thread: the batch runs workers side by side, and a part's time
        // buckets add up to its wall only where its checks run one at a time.
        test_args: libtest_mimic::Arguments::from_iter([
            "grader",
            "--quiet",
            "--color",
            "never",
            "--test-threads",
            "1",
        ]),
        sanitize: settings.sanitize,
        policy: settings.policy.clone(),
        calibration: settings.calibration.clone(),
        credit: settings.credit,
    }
}

/// Keeps the original stdout for answers and points fd 1 at /dev/null.
fn protocol_channel() -> Result<std::fs::File> {
    std::io::stdout().flush()?;
    // SAFETY: dup/dup2 on descriptors this process owns; the duplicate is owned by the File.
    unsafe {
        let saved = libc::dup(1);
        if saved < 0 {
            return Err(std::io::Error::last_os_error()).context("keeping stdout for the protocol");
        }
        let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
        if libc::dup2(null.as_raw_fd(), 1) < 0 {
            return Err(std::io::Error::last_os_error()).context("silencing stdout");
        }
        Ok(std::fs::File::from_raw_fd(saved))
    }
}

fn answer(proto: &mut std::fs::File, reply: &Reply) -> Result<()> {
    let mut line = serde_json::to_string(reply)?;
    line.push('\n');
    proto.write_all(line.as_bytes())?;
    Ok(())
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_cuda_context_is_poisoned_and_a_hang_alone_keeps_its_verdicts() {
        assert!(poisoned("cuda", ["wrong", "too-slow"]).is_none());
        let hang = poisoned("cuda", ["wrong", "timeout", "not-run: GPU lost earlier"]).unwrap();
        assert!(hang.hang_only, "{}", hang.why);
        for broken in ["crashed: illegal address", "out-of-bounds-write", "gpu-error"] {
            let p = poisoned("cuda", ["timeout", broken]).unwrap();
            assert!(!p.hang_only, "{broken}");
            assert!(p.why.contains(broken));
        }
        assert!(poisoned("sim", ["timeout", "crashed"]).is_none(), "the simulator breaks nothing");
    }
}
