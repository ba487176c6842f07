//! Who grades what, when: grading slots (by default two per GPU) take the next
//! submission and grade its parts, while one thread compiles the following
//! submissions ahead.
//!
//! A slot sends its parts to a persistent worker process ([`super::pool`]);
//! the two workers of a GPU overlap everything but timing, which takes the
//! GPU's lock alone (`kit::gpu_lock`). A part the worker cannot finish is
//! regraded in a child of its own, and the slot starts a new worker. With
//! `--isolate`, one slot per GPU grades every part in a child of its own.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressStyle};
use ptx_build::Compiler;

use std::time::Instant;

use anyhow::Result;

use super::breakdown::{Breakdown, Recorder};
use super::part::{ChildSettings, PartJob, SetupFailed};
use super::pool::{Answer, Worker};
use super::prefetch::{Prefetch, StagedFile};
use super::Planned;
use crate::report::GradeReport;

/// How parts are graded.
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    /// Every part in a child process of its own (one slot per GPU).
    pub isolate: bool,
    /// Worker processes per GPU (the GPU's lock keeps timing exclusive).
    pub workers_per_gpu: usize,
    /// Regrade alone even a part whose only trouble was a stuck kernel.
    pub regrade_hangs: bool,
}

/// What the grading phase did.
#[derive(Debug, Default)]
pub struct Graded {
    pub parts_graded: usize,
    pub submissions_graded: usize,
    pub files_compiled_ahead: usize,
    pub errors: Vec<String>,
    /// The grader could not run at all (see `errors`); the batch stopped.
    pub stopped: bool,
    pub time: Breakdown,
}

/// `compiler` (with the children's cache folder) compiles ahead; without one, nothing does.
pub fn grade_all(
    plans: &[Planned],
    settings: &ChildSettings,
    gpus: &[String],
    compiler: Option<Compiler>,
    mode: Mode,
) -> Graded {
    let started = Instant::now();
    let recorder = Recorder::with_timeline(&settings.ptx_cache.with_file_name("workers").join("timeline.jsonl"));
    let todo: Vec<&Planned> = plans.iter().filter(|p| !p.pending.is_empty()).collect();
    let total_parts: usize = todo.iter().map(|p| p.pending.len()).sum();
    let bar = progress_bar(total_parts as u64);
    let queue: Mutex<VecDeque<&Planned>> = Mutex::new(todo.iter().copied().collect());
    let prefetch_handle = Arc::new(Prefetch::default());
    let prefetch = &*prefetch_handle;
    let errors: Mutex<Vec<String>> = Mutex::default();
    // Ready-made results from an earlier run already tell the architecture.
    if let Some(report) = plans.iter().flat_map(|p| &p.jobs).find_map(|j| j.existing_result()) {
        prefetch.learn_arch(&report);
    }
    let compile_queue: Arc<Vec<Vec<StagedFile>>> = todo
        .iter()
        .map(|p| p.pending.iter().map(|&i| (p.staging.join(p.jobs[i].file()), p.jobs[i].file())).collect())
        .collect::<Vec<_>>()
        .into();
    // Compiling ahead runs on a detached thread that the batch never waits for:
    // NVRTC cannot be interrupted, and a compile bomb (deep macro expansion) would
    // otherwise hold the gradebook back. The children compile what it has not.
    if let Some(compiler) = compiler {
        let (prefetch, queue) = (prefetch_handle.clone(), compile_queue.clone());
        std::thread::spawn(move || prefetch.run(&compiler, &queue));
    }
    let devices: Vec<Option<&str>> =
        if gpus.is_empty() { vec![None] } else { gpus.iter().map(|g| Some(g.as_str())).collect() };
    let per_gpu = if mode.isolate { 1 } else { mode.workers_per_gpu.max(1) };
    let workers: Vec<(usize, Option<&str>)> =
        devices.iter().flat_map(|&gpu| (0..per_gpu).map(move |slot| (slot, gpu))).collect();
    let done = Mutex::new(0usize);
    // Set when the grader cannot run at all: everyone would fail the same way.
    let stop = AtomicBool::new(false);
    let parts_graded = AtomicUsize::new(0);
    let submissions = todo.len();

    std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .iter()
            .enumerate()
            .map(|(n, &(_, gpu))| {
                let (queue, bar, errors, done, stop) = (&queue, &bar, &errors, &done, &stop);
                let (parts_graded, recorder) = (&parts_graded, &recorder);
                let mut slot = Slot {
                    n,
                    gpu,
                    worker: None,
                    worker_parts: 0,
                    mode,
                    in_flight: VecDeque::new(),
                    waiting: VecDeque::new(),
                    careful: 0,
                };
                scope.spawn(move || {
                    // Parts finished per submission, to say when a submission is done.
                    let mut finished_parts: HashMap<String, usize> = HashMap::new();
                    let mut finished = |(plan, i): Job, graded: Result<GradeReport>| {
                        match graded {
                            Ok(report) => {
                                parts_graded.fetch_add(1, Ordering::Relaxed);
                                prefetch.learn_arch(&report);
                            }
                            Err(e) => {
                                if e.is::<SetupFailed>() {
                                    stop.store(true, Ordering::Relaxed);
                                }
                                errors.lock().unwrap().push(format!("{}: {e:#}", plan.jobs[i].result.display()));
                            }
                        }
                        bar.inc(1);
                        let count = finished_parts.entry(plan.submission.key.clone()).or_default();
                        *count += 1;
                        if *count < plan.pending.len() {
                            return;
                        }
                        let n = {
                            let mut d = done.lock().unwrap();
                            *d += 1;
                            *d
                        };
                        let line = format!(
                            "[{n}/{}] {}: {} parts graded",
                            submissions,
                            plan.submission.name,
                            plan.pending.len()
                        );
                        if bar.is_hidden() {
                            println!("{line}");
                        } else {
                            bar.println(line);
                        }
                    };
                    'plans: loop {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let Some(plan) = queue.lock().unwrap().pop_front() else { break };
                        prefetch.dispatched();
                        bar.set_message(plan.submission.name.clone());
                        for &i in &plan.pending {
                            if stop.load(Ordering::Relaxed) {
                                break 'plans;
                            }
                            for (job, graded) in slot.submit((plan, i), settings, recorder) {
                                finished(job, graded);
                            }
                        }
                    }
                    for (job, graded) in slot.drain(settings, recorder) {
                        finished(job, graded);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("a grading worker panicked");
        }
        prefetch.finish();
    });
    bar.finish_and_clear();
    let mode_name = if mode.isolate { "isolate" } else { "workers" };
    let time = recorder.finish(mode_name, per_gpu, &devices, started.elapsed().as_secs_f64(), prefetch.seconds());
    Graded {
        time,
        parts_graded: parts_graded.into_inner(),
        submissions_graded: done.into_inner().unwrap(),
        files_compiled_ahead: prefetch.files_compiled(),
        errors: errors.into_inner().unwrap(),
        stopped: stop.into_inner(),
    }
}

/// One part of one submission: the plan and the index of the job in it.
type Job<'p> = (&'p Planned<'p>, usize);

/// What became of parts: each with its grade, or why there is none.
type Finished<'p> = Vec<(Job<'p>, Result<GradeReport>)>;

/// Parts a worker holds at once: while the GPU runs the newest, the simulator
/// sanitizer pass of those before it finishes on other cores.
const IN_FLIGHT: usize = 3;

/// One grading thread: its GPU and, in worker mode, its worker, the parts sent
/// to it and not answered yet (oldest first), and the parts waiting to be sent.
struct Slot<'a, 'p> {
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

impl<'p> Slot<'_, 'p> {
    /// Grades `job` (in a worker, as soon as the GPU is free for it); returns
    /// the parts that finished meanwhile.
    fn submit(&mut self, job: Job<'p>, settings: &ChildSettings, recorder: &Recorder) -> Finished<'p> {
        if self.mode.isolate {
            return vec![(job, self.alone(part_of(job), settings, recorder, false))];
        }
        self.waiting.push_back(job);
        self.pump(false, settings, recorder)
    }

    /// Waits for every part still in the worker.
    fn drain(&mut self, settings: &ChildSettings, recorder: &Recorder) -> Finished<'p> {
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
            // Any of the parts in flight may have killed it (or hung): each is
            // sent again, one at a time, and the one that does it again goes alone.
            Answer::Died(_) | Answer::Hung if !self.in_flight.is_empty() => {
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

/// A bar with an estimate of the time left; drawn only on a terminal.
fn progress_bar(parts: u64) -> ProgressBar {
    let bar = ProgressBar::new(parts);
    bar.set_style(
        ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} parts, {elapsed} so far, ~{eta} left  {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar
}

fn part_of<'p>((plan, i): Job<'p>) -> &'p PartJob<'p> {
    &plan.jobs[i]
}
