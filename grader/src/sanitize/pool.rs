//! The threads that run the replays: one pool per process, first come first
//! served. A batch worker keeps several parts in flight and answers them in
//! order, so the oldest part's replays must not share the cores evenly with
//! the newer parts' (as threads of their own per part would): its answer is
//! the one being waited for.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, OnceLock};

type Task = Box<dyn FnOnce() + Send>;

struct Queue {
    tasks: Mutex<VecDeque<Task>>,
    ready: Condvar,
}

fn queue() -> &'static Queue {
    static QUEUE: OnceLock<Queue> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let spawned = (0..super::threads())
            .filter(|i| std::thread::Builder::new().name(format!("sanitizer {i}")).spawn(serve).is_ok())
            .count();
        assert!(spawned > 0, "no sanitizer thread could be started");
        Queue { tasks: Mutex::default(), ready: Condvar::new() }
    })
}

/// Runs `task` on a pool thread, after every task submitted before it has started.
pub fn submit(task: impl FnOnce() + Send + 'static) {
    let q = queue();
    q.tasks.lock().unwrap_or_else(|p| p.into_inner()).push_back(Box::new(task));
    q.ready.notify_one();
}

fn serve() {
    super::lower_priority();
    let q = queue();
    loop {
        let task = {
            let mut tasks = q.tasks.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                match tasks.pop_front() {
                    Some(t) => break t,
                    None => tasks = q.ready.wait(tasks).unwrap_or_else(|p| p.into_inner()),
                }
            }
        };
        // A task catches its own panics; this keeps the thread for the next one regardless.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    #[test]
    fn every_task_runs_once() {
        let (tx, rx) = mpsc::channel();
        for i in 0..64 {
            let tx = tx.clone();
            super::submit(move || tx.send(i).unwrap());
        }
        let mut got: Vec<i32> = (0..64).map(|_| rx.recv().unwrap()).collect();
        got.sort();
        assert_eq!(got, (0..64).collect::<Vec<_>>(), "every task ran once");
    }
}
