//! On the simulator a run's parts are graded side by side, one simulator
//! each, on as many threads as there are cores: a simulated launch runs on
//! one core, and a part's checks (its correctness first: what the others
//! count for) must run in order. Nothing is timed on the simulator, so two
//! parts may share the machine; on a GPU a run stays one check at a time.
//!
//! Each part's trials take turns ([`Turns`]): a trial waits until every
//! earlier trial of its part that will run has ended. The test runner takes
//! trials in the order given, so the parts' trials are interleaved
//! ([`interleave`]) and the earliest waiting trial's turn always comes.

use std::sync::{Arc, Condvar, Mutex};

use kit::Gpu;
use libtest_mimic::{Arguments, Trial};

use super::BackendChoice;

/// How many threads grade parts side by side here: more than one only on the
/// simulator, for more than one part, where the machine has more than one core.
pub(super) fn threads(gpu: Option<&Gpu>, parts: usize) -> usize {
    let simulated = gpu.is_some_and(|g| g.info().backend == kit::backend::sim::NAME);
    let cores = std::thread::available_parallelism().map(usize::from).unwrap_or(1);
    if simulated {
        cores.min(parts).max(1)
    } else {
        1
    }
}

/// Another simulator like the run's, for one part.
pub(super) fn simulator(backend: BackendChoice, timeout: std::time::Duration) -> Gpu {
    match backend {
        BackendChoice::LuckySim => Gpu::new(Box::new(kit::backend::sim::SimBackend::lucky()), timeout),
        _ => Gpu::simulator(),
    }
}

/// A trial's place among its part's turns (none: it does not take turns).
pub type Place = Option<(Arc<Turns>, usize)>;

/// One part's trials' turns, in their running order.
#[derive(Default)]
pub struct Turns {
    state: Mutex<State>,
    ended: Condvar,
    /// What the part's trials spent in each of `kit::stats`' buckets, on
    /// their threads: the run's own thread takes it over ([`credit`]).
    spent: Mutex<[std::time::Duration; kit::stats::ALL.len()]>,
}

#[derive(Default)]
struct State {
    /// The trial whose turn it is.
    next: usize,
    /// Whether each trial will run (one filtered out or ignored never takes its turn).
    runs: Vec<bool>,
}

impl State {
    fn skip_those_not_run(&mut self) {
        while self.runs.get(self.next) == Some(&false) {
            self.next += 1;
        }
    }
}

/// A trial's turn: the next one's begins when it is dropped (also by a panic).
pub struct Turn<'a>(&'a Turns);

impl Turns {
    /// A place in the order for one more trial; its index.
    pub fn enrol(&self) -> usize {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.runs.push(true);
        s.runs.len() - 1
    }

    /// Marks which trials will run, once all are made.
    fn will_run(&self, index: usize, runs: bool) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.runs[index] = runs;
        s.skip_those_not_run();
    }

    /// Counts what the trial on this thread spends from now until dropped.
    pub fn spending(&self) -> Spending<'_> {
        Spending { turns: self, before: kit::stats::ALL.map(kit::stats::here) }
    }

    /// Waits for trial `index`'s turn.
    pub fn wait(&self, index: usize) -> Turn<'_> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while s.next != index {
            s = self.ended.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        Turn(self)
    }
}

/// A trial's spending in `kit::stats`' buckets, added to its part's when dropped.
pub struct Spending<'a> {
    turns: &'a Turns,
    before: [std::time::Duration; kit::stats::ALL.len()],
}

impl Drop for Spending<'_> {
    fn drop(&mut self) {
        let mut spent = self.turns.spent.lock().unwrap_or_else(|p| p.into_inner());
        for (i, c) in kit::stats::ALL.iter().enumerate() {
            spent[i] += kit::stats::here(*c).saturating_sub(self.before[i]);
        }
    }
}

/// Credits this thread with what every part's trials spent on theirs, so
/// that the run's time table has its buckets (summed over the threads).
pub(super) fn credit(parts: &[Arc<Turns>]) {
    for turns in parts {
        let spent = turns.spent.lock().unwrap_or_else(|p| p.into_inner());
        for (i, c) in kit::stats::ALL.iter().enumerate() {
            kit::stats::credit_here(*c, spent[i]);
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut s = self.0.state.lock().unwrap_or_else(|p| p.into_inner());
        s.next += 1;
        s.skip_those_not_run();
        self.0.ended.notify_all();
    }
}

/// The trials in the order the test runner takes them. `parts` holds each
/// part's trials with the turn each was enrolled with (none for a trial made
/// without one: it does not take turns). On one thread (a GPU) the parts run
/// one after the other, in the order [`crate::ahead`] computes their inputs
/// in; side by side they are interleaved.
pub(super) fn running_order(parts: Vec<Vec<(Trial, Place)>>, args: &Arguments) -> Vec<Trial> {
    if args.test_threads.unwrap_or(1) > 1 {
        interleave(parts, args)
    } else {
        parts.into_iter().flatten().map(|(trial, _)| trial).collect()
    }
}

/// The trials of every part, one from each in turn, with each part's turns
/// told which of its trials will run under `args`.
fn interleave(parts: Vec<Vec<(Trial, Place)>>, args: &Arguments) -> Vec<Trial> {
    let mut queues: Vec<std::collections::VecDeque<_>> = parts.into_iter().map(Into::into).collect();
    let mut out = Vec::new();
    while queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if let Some((trial, turn)) = q.pop_front() {
                if let Some((turns, index)) = turn {
                    turns.will_run(index, !args.is_filtered_out(&trial) && !args.is_ignored(&trial));
                }
                out.push(trial);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parts_trials_run_in_order_on_many_threads_and_parts_overlap() {
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let mut parts = Vec::new();
        for part in ["a", "b"] {
            let turns = Arc::new(Turns::default());
            let mut trials = Vec::new();
            for i in 0..4 {
                let index = turns.enrol();
                let (t, log, name) = (turns.clone(), log.clone(), format!("{part}::{i}"));
                let trial = Trial::test(name.clone(), move || {
                    let _turn = t.wait(index);
                    log.lock().unwrap().push(format!("start {name}"));
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    log.lock().unwrap().push(format!("end {name}"));
                    Ok(())
                });
                trials.push((trial, Some((turns.clone(), index))));
            }
            parts.push(trials);
        }
        // One trial filtered out: the next of its part does not wait for it.
        let args = Arguments { test_threads: Some(4), skip: vec!["a::1".into()], quiet: true, ..Default::default() };
        let trials = running_order(parts, &args);
        assert!(!libtest_mimic::run(&args, trials).has_failed());
        let log = log.lock().unwrap().clone();
        for part in ["a", "b"] {
            let mine: Vec<&String> = log.iter().filter(|l| l.contains(&format!(" {part}::"))).collect();
            let expected: Vec<String> = (0..4)
                .filter(|i| !(part == "a" && *i == 1))
                .flat_map(|i| [format!("start {part}::{i}"), format!("end {part}::{i}")])
                .collect();
            assert_eq!(mine, expected.iter().collect::<Vec<_>>(), "{log:?}");
        }
        let first_end = log.iter().position(|l| l.starts_with("end")).unwrap();
        assert!(first_end >= 2, "two parts' first trials overlap: {log:?}");
    }

    #[test]
    fn on_one_thread_the_parts_run_one_after_the_other() {
        let parts: Vec<Vec<(Trial, Place)>> = ["a", "b"]
            .iter()
            .map(|part| (0..3).map(|i| (Trial::test(format!("{part}::{i}"), || Ok(())), None)).collect())
            .collect();
        let args = Arguments { test_threads: Some(1), ..Default::default() };
        let names: Vec<String> = running_order(parts, &args).iter().map(|t| t.name().to_string()).collect();
        assert_eq!(names, ["a::0", "a::1", "a::2", "b::0", "b::1", "b::2"]);
    }
}
