//! The batch's side of a [`super::worker`]: starts one, sends it parts, and
//! turns whatever happens (an answer, a death, a hang) into what the schedule
//! does next. A worker that dies or hangs is killed with everything it started.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use clap::ValueEnum;

use super::part::{ChildSettings, PartJob};
use super::stall;
use super::worker::{Reply, Request};

/// What became of one part sent to a worker.
pub enum Answer {
    /// The worker answered (the part may still be poisoned: see [`Reply`]).
    Replied(Reply),
    /// The worker ended without answering (crashed, killed).
    Died(String),
    /// No answer within the part's time limit; the worker was killed.
    Hung,
}

pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<String>,
    /// Its stderr, where the batch also notes what a silent worker is doing.
    log: PathBuf,
    /// Seconds from the start to the worker's first answer (process and CUDA context).
    pub startup: f64,
    /// The GPU lock file handed down to it, closed once it is reaped ([`super::lock_hold`]).
    lock: Option<std::fs::File>,
}

impl Worker {
    /// Starts a worker for `gpu` and waits until it has opened the GPU.
    pub fn start(settings: &ChildSettings, gpu: Option<&str>, log: &Path) -> std::io::Result<Worker> {
        let started = Instant::now();
        let (mut cmd, lock) = command(settings, gpu);
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // Appended: the log keeps what every worker of this slot said, the replaced ones too.
        let log_path = log.to_path_buf();
        let log = std::fs::OpenOptions::new().create(true).append(true).open(log)?;
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(log);
        cmd.process_group(0);
        crate::process::child::die_with_parent(&mut cmd);
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut worker = Worker { child, stdin, replies, log: log_path, startup: 0.0, lock };
        match worker.wait_reply(settings.limits.wall) {
            Answer::Replied(r) if r.ready => {
                worker.startup = started.elapsed().as_secs_f64();
                Ok(worker)
            }
            Answer::Replied(r) => Err(std::io::Error::other(format!("the worker did not start: {:?}", r.error))),
            Answer::Died(why) => Err(std::io::Error::other(format!("the worker did not start: {why}"))),
            Answer::Hung => Err(std::io::Error::other("the worker did not start in time")),
        }
    }

    /// Sends one part; its answer comes, in order, from [`receive`](Self::receive).
    pub fn send(&mut self, job: &PartJob) -> Result<(), String> {
        let request = Request {
            exercise: job.exercise.id.into(),
            part: job.part.name.into(),
            root: job.root.clone(),
            json: job.scratch_path(),
        };
        let line = serde_json::to_string(&request).expect("a request serializes") + "\n";
        self.stdin.write_all(line.as_bytes()).and_then(|_| self.stdin.flush()).map_err(|e| e.to_string())
    }

    /// The answer to the oldest part sent and not yet answered, waiting at most `limit`.
    pub fn receive(&mut self, limit: Duration) -> Answer {
        self.wait_reply(limit)
    }

    fn wait_reply(&mut self, limit: Duration) -> Answer {
        let start = Instant::now();
        let received = loop {
            let left = limit.saturating_sub(start.elapsed());
            match self.replies.recv_timeout(left.min(stall::REPORT_AFTER)) {
                Err(RecvTimeoutError::Timeout) if !left.is_zero() && left > stall::REPORT_AFTER => {
                    let what = format!("no answer for {:.0} s", start.elapsed().as_secs_f64());
                    stall::note(&self.log, self.child.id(), &what);
                }
                other => break other,
            }
        };
        match received {
            Ok(line) => match serde_json::from_str::<Reply>(&line) {
                Ok(reply) => Answer::Replied(reply),
                Err(e) => Answer::Died(format!("it answered something that is not JSON ({e}): {line:.200}")),
            },
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Answer::Hung
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
                self.kill();
                Answer::Died(format!("the worker ended ({status})"))
            }
        }
    }

    /// Ends the worker and anything it started, and waits until it is gone
    /// (with its CUDA context: the GPU is not shared with a dying kernel).
    pub fn kill(&mut self) {
        // SAFETY: kill(2) on the worker's own process group.
        unsafe {
            libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
        }
        let start = Instant::now();
        let mut noted = Duration::ZERO;
        while let Ok(None) = self.child.try_wait() {
            if start.elapsed() >= noted + stall::REPORT_AFTER {
                noted = start.elapsed();
                stall::note(
                    &self.log,
                    self.child.id(),
                    &format!("still dying {:.0} s after SIGKILL", noted.as_secs_f64()),
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
        // Only now: whatever the worker still held of the GPU is free.
        drop(self.lock.take());
    }
}

/// `grader batch-worker ...` with the children's environment, and its GPU lock file.
fn command(settings: &ChildSettings, gpu: Option<&str>) -> (Command, Option<std::fs::File>) {
    let backend = settings.backend.to_possible_value().expect("every backend has a name");
    let mut cmd = Command::new(&settings.exe);
    cmd.arg("batch-worker")
        .args(["--seed", &settings.seed.to_string()])
        .args(["--backend", backend.get_name()])
        .args(["--timeout", &settings.kernel_timeout.as_secs_f64().to_string()])
        .args(&settings.grading_flags);
    let lock = settings.child_env(&mut cmd, gpu);
    (cmd, lock)
}
