//! Who may use the GPU how, when several processes share one: kernels being
//! timed need the GPU to themselves, everything else may overlap.
//!
//! A batch runs two workers per GPU so that one can compile, compute CPU
//! references and run correctness launches while the other times kernels.
//! With `CUDA_LAB_GPU_LOCK=FILE` set, every check holds a shared lock on FILE
//! ([`shared`]) and timing ([`crate::perf::measure`]) an exclusive one
//! ([`exclusive`]), so nothing else runs on the GPU while a kernel is timed.
//! Without the variable (a student's `grader ex01`) both are no-ops.
//!
//! The batch opens FILE for each process it starts and hands the descriptor
//! down ([`FD_ENV`]): a lock held on it is the batch's too, so it outlives a
//! process that dies holding it until the batch has reaped that process. A
//! kernel left running by a part that timed out is gone, with its context,
//! before another worker may time anything.
//!
//! flock alone would let a stream of shared holders starve one waiting to time,
//! so a second file, FILE.turnstile, gives timing the right of way: a process
//! about to wait for the exclusive lock holds the turnstile, and a new shared
//! holder passes through the turnstile first. No one waits on the turnstile
//! while holding the main lock, so the two cannot deadlock.

use std::cell::RefCell;
use std::fs::File;
use std::time::{Duration, Instant};

pub const ENV: &str = "CUDA_LAB_GPU_LOCK";
/// The descriptor of FILE that this process inherited, if any.
pub const FD_ENV: &str = "CUDA_LAB_GPU_LOCK_FD";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Shared,
    Exclusive,
}

/// This thread's lock files and the modes it holds (innermost last).
struct Held {
    main: File,
    turnstile: File,
    modes: Vec<Mode>,
}

thread_local! {
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// Opens (creating) a lock file: also what the batch hands down ([`FD_ENV`]).
pub fn open(path: impl AsRef<std::path::Path>) -> std::io::Result<File> {
    File::options().create(true).truncate(false).write(true).open(path)
}

/// The lock file's descriptor this process was given ([`FD_ENV`]), to the
/// first thread that asks (one thread of a process grades on the GPU).
fn inherited() -> Option<File> {
    use std::os::fd::FromRawFd;
    use std::sync::atomic::{AtomicBool, Ordering};
    static TAKEN: AtomicBool = AtomicBool::new(false);
    let fd: libc::c_int = std::env::var(FD_ENV).ok()?.trim().parse().ok()?;
    // SAFETY: fcntl only asks whether the descriptor is open.
    if fd < 0 || TAKEN.swap(true, Ordering::SeqCst) || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return None;
    }
    // SAFETY: the descriptor is open, was handed to this process for this use
    // alone, and is taken once (TAKEN).
    Some(unsafe { File::from_raw_fd(fd) })
}

/// Holds a mode until dropped; dropping returns to the mode held before.
pub struct Guard {
    active: bool,
}

/// Shared use: correctness launches, uploads, reads (a check as a whole).
pub fn shared() -> Guard {
    acquire(Mode::Shared)
}

/// Sole use, for timing. Inside a [`shared`] guard the lock is converted
/// (flock releases and re-takes it, so two converting holders cannot deadlock).
pub fn exclusive() -> Guard {
    acquire(Mode::Exclusive)
}

fn acquire(mode: Mode) -> Guard {
    let Some(path) = std::env::var_os(ENV) else { return Guard { active: false } };
    let start = Instant::now();
    let active = HELD.with(|held| {
        let mut held = held.borrow_mut();
        if held.is_none() {
            let mut turnstile = path.clone();
            turnstile.push(".turnstile");
            match (inherited().map_or_else(|| open(&path), Ok), open(&turnstile)) {
                (Ok(main), Ok(turnstile)) => *held = Some(Held { main, turnstile, modes: Vec::new() }),
                // Best effort: a lock that cannot be opened must not fail a grade.
                _ => return false,
            }
        }
        let h = held.as_mut().expect("opened above");
        if h.modes.last() != Some(&mode) {
            match mode {
                Mode::Shared => {
                    flock(&h.turnstile, libc::LOCK_SH);
                    lock(&h.main, Mode::Shared);
                    flock(&h.turnstile, libc::LOCK_UN);
                }
                Mode::Exclusive => {
                    // Let go of a shared hold before queueing, then bar newcomers.
                    flock(&h.main, libc::LOCK_UN);
                    flock(&h.turnstile, libc::LOCK_EX);
                    lock(&h.main, Mode::Exclusive);
                    flock(&h.turnstile, libc::LOCK_UN);
                }
            }
        }
        h.modes.push(mode);
        true
    });
    crate::stats::add(crate::stats::Counter::LockWait, start.elapsed());
    Guard { active }
}

/// flock(2): converting a held lock releases it first, so two holders that
/// both convert cannot deadlock. (`File::lock` is newer than our MSRV.)
fn lock(file: &File, mode: Mode) {
    let op = match mode {
        Mode::Shared => libc::LOCK_SH,
        Mode::Exclusive => libc::LOCK_EX,
    };
    flock(file, op);
}

fn flock(file: &File, op: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this File owns; retried when a signal interrupts it.
    while unsafe { libc::flock(file.as_raw_fd(), op) } != 0 {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return; // best effort: a lock that fails must not fail a grade
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.active {
            return;
        }
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            let Some(h) = held.as_mut() else { return };
            let left = h.modes.pop();
            match h.modes.last() {
                Some(&outer) if Some(outer) != left => lock(&h.main, outer),
                Some(_) => {}
                None => flock(&h.main, libc::LOCK_UN),
            }
        });
    }
}

/// How long this process waited for the lock so far (see [`crate::stats`]).
pub fn waited() -> Duration {
    crate::stats::get(crate::stats::Counter::LockWait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_waits_for_another_holder_of_shared() {
        let dir = std::env::temp_dir().join(format!("gpu-lock-test-{}", std::process::id()));
        // The only test in the crate that sets ENV; others only ever see it set.
        std::env::set_var(ENV, &dir);
        let outer = shared();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let _sole = exclusive();
            tx.send(Instant::now()).unwrap();
        });
        std::thread::sleep(Duration::from_millis(200));
        let released = Instant::now();
        drop(outer);
        let got = rx.recv().unwrap();
        assert!(got >= released, "the exclusive holder ran while a shared one held the lock");
        t.join().unwrap();

        // Two holders of shared that both go exclusive (two workers whose checks
        // both time) take turns instead of deadlocking.
        let both: Vec<_> = (0..2)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..20 {
                        let _check = shared();
                        let _timing = exclusive();
                    }
                })
            })
            .collect();
        for t in both {
            t.join().unwrap();
        }
        let _ = std::fs::remove_file(&dir);
        let mut turnstile = dir.into_os_string();
        turnstile.push(".turnstile");
        let _ = std::fs::remove_file(turnstile);
    }
}
