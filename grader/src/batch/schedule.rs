//! Who grades what, when: grading slots (by default two per GPU) take the next
//! submission and grade its parts, while one thread compiles the following
//! submissions ahead.
//!
//! Each slot ([`super::slot`]) sends its parts to a persistent worker process
//! ([`super::pool`]); the two workers of a GPU overlap everything but timing,
//! which takes the GPU's lock alone (`kit::gpu_lock`). A part the worker
//! cannot finish is regraded in a child of its own, and the slot starts a new
//! worker. With `--isolate`, one slot per GPU grades every part in a child of
//! its own.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use ptx_build::Compiler;

use super::breakdown::{Breakdown, Recorder};
use super::part::{ChildSettings, SetupFailed};
use super::prefetch::{Prefetch, StagedFile};
pub use super::slot::Mode;
use super::slot::{Job, Slot};
use super::Planned;
use crate::report::GradeReport;

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
                let mut slot = Slot::new(n, gpu, mode);
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
                            "[{n}/{}] {}: {} graded",
                            submissions,
                            plan.submission.name,
                            crate::words::count(plan.pending.len(), "part")
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
