//! Who grades what, when: grading slots (by default two per GPU) take the next
//! submission and grade its parts, while one thread compiles the following
//! submissions ahead.
//!
//! A slot sends its parts to a persistent worker process ([`super::pool`]);
//! the two workers of a GPU overlap everything but timing, which takes the
//! GPU's lock alone (`kit::gpu_lock`). A part the worker cannot finish is
//! regraded in a child of its own, and the slot starts a new worker. With
//! `--isolate`, one slot per GPU grades every part in a child of its own.

use std::collections::VecDeque;
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
    let recorder = Recorder::default();
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
                let mut slot = Slot { n, gpu, worker: None, worker_parts: 0, mode };
                scope.spawn(move || loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let Some(plan) = queue.lock().unwrap().pop_front() else { break };
                    prefetch.dispatched();
                    bar.set_message(plan.submission.name.clone());
                    for &i in &plan.pending {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        match slot.grade(&plan.jobs[i], settings, recorder) {
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
                    }
                    let n = {
                        let mut d = done.lock().unwrap();
                        *d += 1;
                        *d
                    };
                    let line =
                        format!("[{n}/{}] {}: {} parts graded", submissions, plan.submission.name, plan.pending.len());
                    if bar.is_hidden() {
                        println!("{line}");
                    } else {
                        bar.println(line);
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

/// One grading thread: its GPU and, in worker mode, its worker.
struct Slot<'a> {
    n: usize,
    gpu: Option<&'a str>,
    worker: Option<Worker>,
    /// Parts the current worker has graded.
    worker_parts: usize,
    mode: Mode,
}

/// Parts after which a worker is replaced anyway: every part loads its modules
/// into the context, and the driver frees them only with the context.
const PARTS_PER_WORKER: usize = 400;

impl Slot<'_> {
    fn grade(&mut self, job: &PartJob, settings: &ChildSettings, recorder: &Recorder) -> Result<GradeReport> {
        if self.mode.isolate {
            return self.alone(job, settings, recorder, false);
        }
        if self.worker_parts >= PARTS_PER_WORKER {
            self.worker = None;
        }
        if self.worker.is_none() {
            self.worker_parts = 0;
            let log = settings.ptx_cache.with_file_name("workers").join(format!("worker-{}.log", self.n));
            match Worker::start(settings, self.gpu, &log) {
                Ok(w) => {
                    recorder.worker_started(w.startup);
                    self.worker = Some(w);
                }
                // A child of its own says why (and stops the batch if the grader cannot run).
                Err(_) => return self.alone(job, settings, recorder, true),
            }
        }
        let worker = self.worker.as_mut().expect("started above");
        if let Some(dir) = job.result.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let answer = worker.grade(job, settings.limits.wall);
        self.worker_parts += 1;
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
                    self.worker = None;
                }
                match job.accept_worker_result(&log)? {
                    Some(report) => {
                        recorder.worker_part(self.gpu, &reply.time, &reply.drift, reply.hang_only);
                        return Ok(report);
                    }
                    None => "its result was not whole".to_string(),
                }
            }
            Answer::Replied(reply) => reply.poisoned.or(reply.error).unwrap_or_else(|| "no result".into()),
            Answer::Died(why) => why,
            Answer::Hung => format!("no answer within {:.0} s", settings.limits.wall.as_secs_f64()),
        };
        // Whatever happened in the worker, this part is graded as it would be alone.
        self.worker = None;
        recorder.regraded(&job.result, &why);
        self.alone(job, settings, recorder, true)
    }

    fn alone(
        &self,
        job: &PartJob,
        settings: &ChildSettings,
        recorder: &Recorder,
        regraded: bool,
    ) -> Result<GradeReport> {
        let start = Instant::now();
        let graded = job.grade(settings, self.gpu);
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
