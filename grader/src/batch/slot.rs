//! One grading slot (a thread of [`super::schedule`]) and the worker it
//! drives: parts are sent a few at a time, so that the GPU runs one part's
//! checks while the parts before it finish their simulator sanitizer pass;
//! whatever a worker could not finish is regraded alone or sent to the next
//! worker. With `--isolate` every part is graded in a child of its own.

use std::collections::VecDeque;
use std::time::Instant;

use anyhow::Result;

use super::breakdown::Recorder;
use super::part::{ChildSettings, PartJob};
use super::pool::{Answer, Worker};
use super::Planned;
use crate::report::GradeReport;

/// How parts are graded (the schedule's setting; here, where the slots read it).
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    /// Every part in a child process of its own (one slot per GPU).
    pub isolate: bool,
    /// Worker processes per GPU (the GPU's lock keeps timing exclusive).
    pub workers_per_gpu: usize,
    /// Regrade alone even a part whose only trouble was a stuck kernel.
    pub regrade_hangs: bool,
}

/// One part of one submission: the plan and the index of the job in it.
pub type Job<'p> = (&'p Planned<'p>, usize);

/// What became of parts: each with its grade, or why there is none.
pub type Finished<'p> = Vec<(Job<'p>, Result<GradeReport>)>;

/// Parts a worker holds at once: while the GPU runs the newest, the simulator
/// sanitizer pass of those before it finishes on other cores. The longest
/// replays (ex03 `rect`, ex06 `load`: about a second each on an H100 host)
/// take as long as the checks of the next three or four parts.
const IN_FLIGHT: usize = 6;

/// One grading thread: its GPU and, in worker mode, its worker, the parts sent
/// to it and not answered yet (oldest first), and the parts waiting to be sent.
pub struct Slot<'a, 'p> {
    n: usize,
    gpu: Option<&'a str>,
    worker: Option<Worker>,
    /// Parts the current worker has been sent.
    worker_parts: usize,
    mode: Mode,
    in_flight: VecDeque<(Job<'p>, f64)>,
    waiting: VecDeque<Job<'p>>,
    /// Parts to send one at a time: after a worker died with several parts in
    /// flight, nobody knows which one killed it, so each goes alone once.
    careful: usize,
}

/// Parts after which a worker is replaced anyway: every part loads its modules
/// into the context, and the driver frees them only with the context.
const PARTS_PER_WORKER: usize = 400;

impl<'a, 'p> Slot<'a, 'p> {
    /// Slot `n` of the batch, grading on `gpu`.
    pub fn new(n: usize, gpu: Option<&'a str>, mode: Mode) -> Self {
        Slot {
            n,
            gpu,
            worker: None,
            worker_parts: 0,
            mode,
            in_flight: VecDeque::new(),
            waiting: VecDeque::new(),
            careful: 0,
        }
    }

    /// Grades `job` (in a worker, as soon as the GPU is free for it); returns
    /// the parts that finished meanwhile.
    pub fn submit(&mut self, job: Job<'p>, settings: &ChildSettings, recorder: &Recorder) -> Finished<'p> {
        if self.mode.isolate {
            return vec![(job, self.alone(part_of(job), settings, recorder, false))];
        }
        self.waiting.push_back(job);
        self.pump(false, settings, recorder)
    }

    /// Waits for every part still in the worker.
    pub fn drain(&mut self, settings: &ChildSettings, recorder: &Recorder) -> Finished<'p> {
        self.pump(true, settings, recorder)
    }

    /// Sends waiting parts and takes answers until there is room for another
    /// part (or, with `all`, until nothing is left).
    fn pump(&mut self, all: bool, settings: &ChildSettings, recorder: &Recorder) -> Finished<'p> {
        let mut done = Vec::new();
        loop {
            while self.in_flight.len() < self.depth() {
                let Some(job) = self.waiting.pop_front() else { break };
                self.send(job, settings, recorder, &mut done);
            }
            let room = self.waiting.is_empty() && self.in_flight.len() < self.depth();
            if self.in_flight.is_empty() || (room && !all) {
                return done;
            }
            self.complete_oldest(settings, recorder, &mut done);
        }
    }

    fn depth(&self) -> usize {
        if self.careful > 0 {
            1
        } else {
            IN_FLIGHT
        }
    }

    /// Hands `job` to the worker, starting one if needed.
    fn send(&mut self, job: Job<'p>, settings: &ChildSettings, recorder: &Recorder, done: &mut Finished<'p>) {
        if self.worker_parts >= PARTS_PER_WORKER && self.in_flight.is_empty() {
            self.stop_worker(recorder);
        }
        if self.worker.is_none() {
            self.worker_parts = 0;
            let log = settings.ptx_cache.with_file_name("workers").join(format!("worker-{}.log", self.n));
            let start = recorder.now();
            let started = Worker::start(settings, self.gpu, &log);
            recorder.event(self.n, "worker-start", None, start, None);
            match started {
                Ok(w) => {
                    recorder.worker_started(w.startup);
                    self.worker = Some(w);
                }
                // A child of its own says why (and stops the batch if the grader cannot run).
                Err(_) => {
                    done.push((job, self.alone(part_of(job), settings, recorder, true)));
                    return;
                }
            }
        }
        let part = part_of(job);
        if let Some(dir) = part.result.parent() {
            if let Err(e) = std::fs::create_dir_all(dir) {
                done.push((job, Err(e.into())));
                return;
            }
        }
        // A worker that is gone cannot take it; its answer (`Died`) says so in turn.
        let _ = self.worker.as_mut().expect("started above").send(part);
        self.worker_parts += 1;
        self.careful = self.careful.saturating_sub(1);
        self.in_flight.push_back((job, recorder.now()));
    }

    /// Waits for the oldest part in the worker and takes its result, or grades
    /// it alone when the worker could not finish it.
    fn complete_oldest(&mut self, settings: &ChildSettings, recorder: &Recorder, done: &mut Finished<'p>) {
        let Some((job, sent)) = self.in_flight.pop_front() else { return };
        let part = part_of(job);
        let worker = self.worker.as_mut().expect("a worker holds every part in flight");
        let answer = worker.receive(settings.limits.wall);
        let time = match &answer {
            Answer::Replied(reply) => Some(reply.time),
            _ => None,
        };
        recorder.event(self.n, "worker-part", Some(&part.result), sent, time);
        let why = match answer {
            Answer::Replied(reply)
                if reply.written
                    && (reply.poisoned.is_none()
                        || reply.keep_result
                        || (reply.hang_only && !self.mode.regrade_hangs)) =>
            {
                let log = format!(
                    "graded in batch worker {} (one process for many parts; `grader batch --isolate` keeps each \
                     part's own output)\n---- {:.2} s ----\n",
                    self.n, reply.time.wall
                );
                if reply.poisoned.is_some() {
                    self.requeue_rest(recorder);
                }
                match part.accept_worker_result(&log) {
                    Ok(Some(report)) => {
                        recorder.worker_part(self.gpu, &reply.time, &reply.drift, reply.hang_only);
                        done.push((job, Ok(report)));
                        return;
                    }
                    Ok(None) => "its result was not whole".to_string(),
                    Err(e) => {
                        done.push((job, Err(e)));
                        return;
                    }
                }
            }
            // It stopped after this part, having started none of the others.
            Answer::Replied(reply) => reply.poisoned.or(reply.error).unwrap_or_else(|| "no result".into()),
            // Any of the parts in flight may have killed it (the GPU thread may be
            // parts ahead of the oldest answer): each is sent again, one at a
            // time, and the one that does it again goes alone. A hang is the
            // oldest part's own: the parts after it wait for its answer.
            Answer::Died(_) if !self.in_flight.is_empty() => {
                self.in_flight.push_front((job, sent));
                self.careful = self.in_flight.len();
                self.requeue_rest(recorder);
                return;
            }
            Answer::Died(why) => why,
            Answer::Hung => format!("no answer within {:.0} s", settings.limits.wall.as_secs_f64()),
        };
        // Whatever happened in the worker, this part is graded as it would be alone.
        self.requeue_rest(recorder);
        recorder.regraded(&part.result, &why);
        done.push((job, self.alone(part, settings, recorder, true)));
    }

    /// The worker is done (it stopped after a part, died or hung): the parts it
    /// had not answered go, first and in order, to the next one.
    fn requeue_rest(&mut self, recorder: &Recorder) {
        self.stop_worker(recorder);
        while let Some((job, _)) = self.in_flight.pop_back() {
            self.waiting.push_front(job);
        }
    }

    /// Ends the worker (and waits until it is gone, with its CUDA context).
    fn stop_worker(&mut self, recorder: &Recorder) {
        if let Some(worker) = self.worker.take() {
            let start = recorder.now();
            drop(worker);
            recorder.event(self.n, "worker-stop", None, start, None);
        }
    }

    fn alone(
        &self,
        job: &PartJob,
        settings: &ChildSettings,
        recorder: &Recorder,
        regraded: bool,
    ) -> Result<GradeReport> {
        let start = Instant::now();
        let at = recorder.now();
        let graded = job.grade(settings, self.gpu);
        recorder.event(self.n, if regraded { "regrade" } else { "alone" }, Some(&job.result), at, None);
        recorder.isolated_part(self.gpu, start.elapsed().as_secs_f64(), graded.as_ref().ok(), regraded);
        graded
    }
}

fn part_of<'p>((plan, i): Job<'p>) -> &'p PartJob<'p> {
    &plan.jobs[i]
}
