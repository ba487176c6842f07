//! On the simulator a run's parts are graded side by side, one simulator
//! each, on as many threads as there are cores: a simulated launch runs on
//! one core. A part's correctness checks are independent cases and run side
//! by side too, each on a simulator of its own; the part's other checks
//! (what the correctness counts for) run after all of them, one at a time in
//! their order. Nothing is timed on the simulator, so two checks may share
//! the machine; on a GPU a run stays one check at a time.
//!
//! Each part's trials take turns ([`Turns`]): a trial waits until every
//! trial of its part's earlier stages that will run has ended. The test
//! runner takes trials in the order given, so the parts' trials are
//! interleaved ([`interleave`]) and the earliest waiting trial's turn always
//! comes.

use std::sync::{Arc, Condvar, Mutex};

use kit::Gpu;
use libtest_mimic::{Arguments, Trial};

use super::BackendChoice;

/// How many threads grade side by side here: more than one only on the
/// simulator, where the machine has more than one core, for `trials` (the
/// run's trials that can run at once: a part's correctness checks, or one
/// check of each part) of more than one.
pub(super) fn threads(gpu: Option<&Gpu>, trials: usize) -> usize {
    let simulated = gpu.is_some_and(|g| g.info().backend == kit::backend::sim::NAME);
    let cores = std::thread::available_parallelism().map(usize::from).unwrap_or(1);
    if simulated {
        cores.min(trials).max(1)
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
    /// Each trial's stage: trials of one stage run side by side, a stage
    /// after every trial of the stages before it has ended.
    stage: Vec<usize>,
    /// Whether each trial is still to end: it will run (one filtered out or
    /// ignored never takes its turn) and has not ended yet.
    pending: Vec<bool>,
    /// Whether the last trial enrolled runs beside the ones before it.
    beside_last: bool,
}

impl State {
    /// Whether every trial of the stages before trial `index`'s has ended.
    fn turn_of(&self, index: usize) -> bool {
        let stage = self.stage[index];
        (0..index).all(|j| self.stage[j] == stage || !self.pending[j])
    }
}

/// A trial's turn: the next stage's may begin when it is dropped (also by a panic).
pub struct Turn<'a>(&'a Turns, usize);

impl Turns {
    /// A place in the order for one more trial, in a stage of its own; its index.
    pub fn enrol(&self) -> usize {
        self.enrol_in_stage(false)
    }

    /// A place for one more trial that runs side by side with the trials
    /// enrolled just before it the same way (a part's correctness cases).
    pub fn enrol_beside(&self) -> usize {
        self.enrol_in_stage(true)
    }

    fn enrol_in_stage(&self, beside: bool) -> usize {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let stage = match s.stage.last() {
            Some(&last) if beside && s.beside_last => last,
            Some(&last) => last + 1,
            None => 0,
        };
        s.beside_last = beside;
        s.stage.push(stage);
        s.pending.push(true);
        s.stage.len() - 1
    }

    /// Marks which trials will run, once all are made.
    fn will_run(&self, index: usize, runs: bool) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.pending[index] = runs;
        self.ended.notify_all();
    }

    /// Counts what the trial on this thread spends from now until dropped.
    pub fn spending(&self) -> Spending<'_> {
        Spending { turns: self, before: kit::stats::ALL.map(kit::stats::here) }
    }

    /// Waits for trial `index`'s turn.
    pub fn wait(&self, index: usize) -> Turn<'_> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while !s.turn_of(index) {
            s = self.ended.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        Turn(self, index)
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
        s.pending[self.1] = false;
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

    /// A part's correctness cases (enrolled beside each other) overlap; the
    /// checks after them start only once all have ended, one at a time.
    #[test]
    fn a_parts_correctness_cases_run_side_by_side_and_the_rest_after_them() {
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let turns = Arc::new(Turns::default());
        let mut trials = Vec::new();
        for (i, beside) in [(0, true), (1, true), (2, true), (3, false), (4, false)] {
            let index = if beside { turns.enrol_beside() } else { turns.enrol() };
            let (t, log, name) = (turns.clone(), log.clone(), format!("p::{i}"));
            let trial = Trial::test(name.clone(), move || {
                let _turn = t.wait(index);
                log.lock().unwrap().push(format!("start {name}"));
                // the first case is the longest: the others overlap it
                std::thread::sleep(std::time::Duration::from_millis(if i == 0 { 60 } else { 20 }));
                log.lock().unwrap().push(format!("end {name}"));
                Ok(())
            });
            trials.push((trial, Some((turns.clone(), index))));
        }
        let args = Arguments { test_threads: Some(3), quiet: true, ..Default::default() };
        assert!(!libtest_mimic::run(&args, running_order(vec![trials], &args)).has_failed());
        let log = log.lock().unwrap().clone();
        let at = |what: &str| log.iter().position(|l| l == what).unwrap_or_else(|| panic!("{what}: {log:?}"));
        assert!(at("start p::1") < at("end p::0") && at("start p::2") < at("end p::0"), "cases overlap: {log:?}");
        let last_case = ["end p::0", "end p::1", "end p::2"].map(at).into_iter().max().unwrap();
        assert!(last_case < at("start p::3") && at("end p::3") < at("start p::4"), "{log:?}");
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
