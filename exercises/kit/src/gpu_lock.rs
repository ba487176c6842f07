//! Who may use the GPU how, when several processes share one: kernels being
//! timed need the GPU to themselves, everything else may overlap.
//!
//! A batch runs two workers per GPU so that one can compile, compute CPU
//! references and run correctness launches while the other times kernels.
//! With `CUDA_LAB_GPU_LOCK=FILE` set, every device operation holds a shared
//! lock on FILE while it works ([`shared`], taken by
//! [`crate::backend::locked`]), a launch until the wait that sees its kernels
//! end ([`hold_for_launched`]), and timing ([`crate::perf`]'s loop) an
//! exclusive one ([`exclusive`]), so nothing else runs on the GPU while a
//! kernel is timed, and a worker about to time waits for the other's current
//! operation, not for the CPU work of its whole check.
//! Without the variable (a student's `grader ex01`) all are no-ops.
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

/// This thread's lock files and how many guards of each mode it holds: the
/// file is locked in the strongest mode held (guards may end in any order: a
/// launch's hold outlives the timing that started inside it, or the reverse).
struct Held {
    main: File,
    turnstile: File,
    shared: usize,
    exclusive: usize,
}

impl Held {
    fn mode(&self) -> Option<Mode> {
        if self.exclusive > 0 {
            Some(Mode::Exclusive)
        } else if self.shared > 0 {
            Some(Mode::Shared)
        } else {
            None
        }
    }

    fn count(&mut self, mode: Mode) -> &mut usize {
        match mode {
            Mode::Shared => &mut self.shared,
            Mode::Exclusive => &mut self.exclusive,
        }
    }
}

thread_local! {
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
    /// The hold of the kernels this thread launched and has not yet seen end.
    static LAUNCHED: RefCell<Option<Guard>> = const { RefCell::new(None) };
    /// Inside a check ([`CheckScope`]): the sole use a student's timing took,
    /// kept until the check ends ([`keep_for_check`]).
    static FOR_CHECK: RefCell<Option<Option<Guard>>> = const { RefCell::new(None) };
}

/// A check running on this thread: a sole use kept for it ([`keep_for_check`])
/// ends with it.
pub struct CheckScope(());

impl CheckScope {
    pub fn enter() -> Self {
        FOR_CHECK.with(|c| {
            c.borrow_mut().get_or_insert(None);
        });
        CheckScope(())
    }
}

impl Drop for CheckScope {
    fn drop(&mut self) {
        let kept = FOR_CHECK.with(|c| c.borrow_mut().take());
        drop(kept);
    }
}

/// Keeps a timing's sole use of the GPU until the running check ends, so that
/// what the check times next (the yardstick its figure divides by) is timed
/// right after it, with nothing of another worker's between: the two timings
/// of a ratio see the same GPU. (It was tried against ex07's spread across a
/// class, 3-6 %, and did not narrow it: that was where the yardstick's output
/// lay, `ex07::time_placed`; it cost nothing measurable either.)
/// Outside a check the guard just ends.
pub fn keep_for_check(guard: Guard) {
    FOR_CHECK.with(|c| {
        if let Some(kept) = c.borrow_mut().as_mut() {
            kept.get_or_insert(guard);
        }
    });
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

/// Holds a mode until dropped; dropping returns to the strongest mode still held.
pub struct Guard {
    /// `None` where there is no lock to hold (no [`ENV`], or it cannot be opened).
    mode: Option<Mode>,
}

/// Shared use: one device operation (an upload, a read, a fill, a load).
pub fn shared() -> Guard {
    acquire(Mode::Shared)
}

/// Sole use, for timing. Inside a [`shared`] guard the lock is converted
/// (flock releases and re-takes it, so two converting holders cannot deadlock);
/// a [`shared`] guard taken inside this one changes nothing.
pub fn exclusive() -> Guard {
    acquire(Mode::Exclusive)
}

/// Kernels were launched: the shared hold lasts past the launch call, until a
/// wait sees them end ([`launched_ended`]).
pub fn hold_for_launched() {
    LAUNCHED.with(|l| {
        if l.borrow().is_none() {
            let guard = shared();
            *l.borrow_mut() = Some(guard);
        }
    });
}

/// Every kernel this thread launched has ended.
pub fn launched_ended() {
    let guard = LAUNCHED.with(|l| l.borrow_mut().take());
    drop(guard);
}

/// A kernel of this thread never ended and still runs: nobody may time on
/// this GPU until this process, and its context with it, is gone (the batch
/// holds the lock that a process held when it died: `batch::lock_hold`).
pub fn keep_until_exit() {
    hold_for_launched();
    if let Some(guard) = LAUNCHED.with(|l| l.borrow_mut().take()) {
        std::mem::forget(guard);
    }
}

fn acquire(mode: Mode) -> Guard {
    let Some(path) = std::env::var_os(ENV) else { return Guard { mode: None } };
    let start = Instant::now();
    let active = HELD.with(|held| {
        let mut held = held.borrow_mut();
        if held.is_none() {
            let mut turnstile = path.clone();
            turnstile.push(".turnstile");
            match (inherited().map_or_else(|| open(&path), Ok), open(&turnstile)) {
                (Ok(main), Ok(turnstile)) => *held = Some(Held { main, turnstile, shared: 0, exclusive: 0 }),
                // Best effort: a lock that cannot be opened must not fail a grade.
                _ => return false,
            }
        }
        let h = held.as_mut().expect("opened above");
        let before = h.mode();
        *h.count(mode) += 1;
        if h.mode() != before {
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
        true
    });
    crate::stats::add(crate::stats::Counter::LockWait, start.elapsed());
    Guard { mode: active.then_some(mode) }
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

pub(crate) fn flock(file: &File, op: libc::c_int) {
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
        let Some(mode) = self.mode else { return };
        // At thread exit the launch hold may outlive the thread's lock files.
        let _ = HELD.try_with(|held| {
            let mut held = held.borrow_mut();
            let Some(h) = held.as_mut() else { return };
            let before = h.mode();
            *h.count(mode) = h.count(mode).saturating_sub(1);
            match h.mode() {
                now if now == before => {}
                Some(weaker) => lock(&h.main, weaker),
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

    /// Another thread takes `take` only after `release` has run.
    fn second_waits(take: fn() -> Guard, release: impl FnOnce(), what: &str) {
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let _held = take();
            tx.send(Instant::now()).unwrap();
        });
        std::thread::sleep(Duration::from_millis(200));
        let released = Instant::now();
        release();
        assert!(rx.recv().unwrap() >= released, "{what}");
        t.join().unwrap();
    }

    #[test]
    fn exclusive_waits_for_another_holder_of_shared() {
        let dir = std::env::temp_dir().join(format!("gpu-lock-test-{}", std::process::id()));
        // The only test in the crate that sets ENV; others only ever see it set.
        std::env::set_var(ENV, &dir);
        let outer = shared();
        second_waits(exclusive, || drop(outer), "the exclusive holder ran while a shared one held the lock");

        // A launch holds the GPU past the call, until its kernels are seen to end.
        hold_for_launched();
        second_waits(exclusive, launched_ended, "timed while another's kernel ran");
        // Holds may end in any order; the lock stays in the strongest mode still held.
        let sole = exclusive();
        hold_for_launched();
        drop(sole);
        second_waits(exclusive, launched_ended, "timed while another's kernel ran (launched while it timed)");
        hold_for_launched();
        let sole = exclusive();
        launched_ended();
        drop(shared());
        second_waits(shared, || drop(sole), "used the GPU while another timed");
        // A student's timing keeps the GPU until its check ends (its yardstick
        // comes next); outside a check nothing is kept.
        let check = CheckScope::enter();
        keep_for_check(exclusive());
        drop(shared());
        second_waits(shared, || drop(check), "used the GPU between a student's timing and its yardstick's");
        keep_for_check(exclusive());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(exclusive());
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_secs(10)).is_ok(), "a sole use outside a check was kept");
        // A kernel that never ends holds it until the process (here: the thread) is gone.
        let (stuck, exit) = std::sync::mpsc::channel::<()>();
        let (held, is_held) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            keep_until_exit();
            held.send(()).unwrap();
            let _ = exit.recv();
        });
        is_held.recv().unwrap();
        second_waits(exclusive, || drop(stuck), "timed while a stuck kernel ran");
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
