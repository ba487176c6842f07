//! Runs one child process under a wall-clock limit, in its own process group,
//! with its output captured under a cap. Whatever the child does (hang, crash,
//! print forever), this returns, and nothing of the child is left running.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::capture::{read_capped, Captured};

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock time before the whole process group is killed.
    pub wall: Duration,
    /// Bytes kept of each of stdout and stderr.
    pub output_cap: usize,
}

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Signaled(i32),
    /// Killed by us at the wall-clock limit.
    TimedOut,
}

impl Ending {
    /// In the words a verdict uses: "exit code 3", "SIGSEGV (segmentation fault)".
    pub fn describe(self) -> String {
        match self {
            Ending::Exited(code) => format!("exit code {code}"),
            Ending::Signaled(sig) => signal_name(sig),
            Ending::TimedOut => "timeout".into(),
        }
    }
}

#[derive(Debug)]
pub struct ChildRun {
    pub ending: Ending,
    pub stdout: Captured,
    pub stderr: Captured,
    pub elapsed: Duration,
}

impl ChildRun {
    /// Both streams as one log, stderr after stdout.
    pub fn log(&self) -> String {
        let mut log = self.stdout.text();
        if self.stderr.total_bytes() > 0 {
            log += "\n---- stderr ----\n";
            log += &self.stderr.text();
        }
        log
    }
}

/// How long the output readers may lag behind the child's end: longer means a
/// stray process outside the group still holds the pipe, and we stop waiting.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

pub fn run_limited(cmd: Command, limits: Limits) -> std::io::Result<ChildRun> {
    run_watched(cmd, limits, None)
}

/// A child that must show progress: `progress` returns anything that changes
/// when it makes some (a log's length); no change for `after` ends it as the
/// wall-clock limit does ([`Ending::TimedOut`]).
pub struct Watch<'a> {
    pub progress: &'a dyn Fn() -> u64,
    pub after: Duration,
}

/// [`run_limited`], also stopped where `watch` sees no progress.
pub fn run_watched(mut cmd: Command, limits: Limits, watch: Option<Watch>) -> std::io::Result<ChildRun> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its own process group, so one kill reaches everything it started (nvcc, ...).
    cmd.process_group(0);
    die_with_parent(&mut cmd);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let group = child.id() as libc::pid_t;
    let stdout = spawn_reader(child.stdout.take().expect("piped stdout"), limits.output_cap);
    let stderr = spawn_reader(child.stderr.take().expect("piped stderr"), limits.output_cap);

    let mut seen = watch.as_ref().map(|w| ((w.progress)(), Instant::now()));
    let ending = loop {
        if let Some(status) = child.try_wait()? {
            break ending_of(status);
        }
        let stalled = match (&watch, &mut seen) {
            (Some(w), Some((last, since))) => {
                let now = (w.progress)();
                if now != *last {
                    (*last, *since) = (now, Instant::now());
                }
                since.elapsed() >= w.after
            }
            _ => false,
        };
        if stalled || start.elapsed() >= limits.wall {
            kill_group(group);
            child.wait()?;
            break Ending::TimedOut;
        }
        // Short sleeps first (most children are quick), at most 50 ms later on.
        std::thread::sleep((start.elapsed() / 20).clamp(Duration::from_millis(2), Duration::from_millis(50)));
    };
    // Anything the child left behind in its group goes too.
    kill_group(group);
    let elapsed = start.elapsed();
    let stdout = stdout.recv_timeout(DRAIN_GRACE).unwrap_or_default();
    let stderr = stderr.recv_timeout(DRAIN_GRACE).unwrap_or_default();
    Ok(ChildRun { ending, stdout, stderr, elapsed })
}

fn spawn_reader(stream: impl std::io::Read + Send + 'static, cap: usize) -> mpsc::Receiver<Captured> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read_capped(stream, cap));
    });
    rx
}

fn ending_of(status: ExitStatus) -> Ending {
    match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(sig)) => Ending::Signaled(sig),
        (None, None) => Ending::Exited(-1),
    }
}

fn kill_group(group: libc::pid_t) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
    // ESRCH (the group is already gone) is the common, harmless case.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}

/// A batch stopped with Ctrl-C or `kill` must not leave a child hogging the GPU:
/// the child sits in its own process group (so the terminal's Ctrl-C does not
/// reach it), hence the kernel kills it when the thread that started it exits.
#[cfg(target_os = "linux")]
pub(crate) fn die_with_parent(cmd: &mut Command) {
    // SAFETY: prctl is async-signal-safe, and the closure touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn die_with_parent(_cmd: &mut Command) {}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV (segmentation fault)",
        libc::SIGABRT => "SIGABRT (aborted)",
        libc::SIGBUS => "SIGBUS (bus error)",
        libc::SIGFPE => "SIGFPE (arithmetic error)",
        libc::SIGILL => "SIGILL (illegal instruction)",
        libc::SIGKILL => "SIGKILL (killed, perhaps for using too much memory)",
        libc::SIGTERM => "SIGTERM (terminated)",
        libc::SIGINT => "SIGINT (interrupted)",
        _ => return format!("signal {sig}"),
    };
    name.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script);
        cmd
    }

    fn limits(secs: f64) -> Limits {
        Limits { wall: Duration::from_secs_f64(secs), output_cap: 4096 }
    }

    #[test]
    fn exit_codes_and_output_come_back() {
        let run = run_limited(sh("echo out; echo err >&2; exit 3"), limits(10.0)).unwrap();
        assert_eq!(run.ending, Ending::Exited(3));
        assert_eq!(run.stdout.text(), "out\n");
        assert_eq!(run.stderr.text(), "err\n");
        assert!(run.log().contains("---- stderr ----\nerr"));
    }

    #[test]
    fn a_crash_is_named_by_its_signal() {
        let run = run_limited(sh("kill -SEGV $$"), limits(10.0)).unwrap();
        assert_eq!(run.ending, Ending::Signaled(libc::SIGSEGV));
        assert_eq!(run.ending.describe(), "SIGSEGV (segmentation fault)");
    }

    #[test]
    fn a_hang_is_killed_with_everything_it_started() {
        // The background sleep holds the pipes open: only a group kill ends it.
        let run = run_limited(sh("sleep 30 & sleep 30; echo never"), limits(0.5)).unwrap();
        assert_eq!(run.ending, Ending::TimedOut);
        assert!(run.elapsed < Duration::from_secs(5), "{:?}", run.elapsed);
        assert!(!run.stdout.text().contains("never"));
    }

    #[test]
    fn a_watched_child_is_stopped_when_it_stops_making_progress_and_not_while_it_makes_some() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("progress");
        let progress = || std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
        let watch = || Watch { progress: &progress, after: Duration::from_millis(400) };
        let writes = format!("for i in 1 2 3 4 5 6 7 8; do echo $i >> {}; sleep 0.15; done", file.display());
        let run = run_watched(sh(&writes), limits(30.0), Some(watch())).unwrap();
        assert_eq!(run.ending, Ending::Exited(0), "1.2 s of steady progress is not a stall");
        let run =
            run_watched(sh(&format!("echo 1 >> {}; sleep 30", file.display())), limits(30.0), Some(watch())).unwrap();
        assert_eq!(run.ending, Ending::TimedOut);
        assert!(run.elapsed < Duration::from_secs(5), "{:?}", run.elapsed);
    }

    #[test]
    fn endless_output_is_capped_and_the_child_still_ends() {
        let run = run_limited(sh("yes flood"), limits(1.0)).unwrap();
        assert_eq!(run.ending, Ending::TimedOut);
        assert!(run.stdout.head.len() + run.stdout.tail.len() <= 4096);
        assert!(run.stdout.dropped > 0);
        assert!(run.log().len() < 5000);
    }
}
