//! Who grades what, when: one worker per GPU takes the next submission and
//! runs its parts one child at a time (kernels are timed, so two never share a
//! GPU), while one thread compiles the following submissions ahead.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressStyle};
use ptx_build::Compiler;

use super::part::{ChildSettings, SetupFailed};
use super::prefetch::{Prefetch, StagedFile};
use super::Planned;

/// What the grading phase did.
#[derive(Debug, Default)]
pub struct Graded {
    pub parts_graded: usize,
    pub submissions_graded: usize,
    pub files_compiled_ahead: usize,
    pub errors: Vec<String>,
    /// The grader could not run at all (see `errors`); the batch stopped.
    pub stopped: bool,
}

/// `compiler` (with the children's cache folder) compiles ahead; without one, nothing does.
pub fn grade_all(plans: &[Planned], settings: &ChildSettings, gpus: &[String], compiler: Option<Compiler>) -> Graded {
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
    let workers: Vec<Option<&str>> =
        if gpus.is_empty() { vec![None] } else { gpus.iter().map(|g| Some(g.as_str())).collect() };
    let done = Mutex::new(0usize);
    // Set when the grader cannot run at all: everyone would fail the same way.
    let stop = AtomicBool::new(false);
    let parts_graded = AtomicUsize::new(0);
    let submissions = todo.len();

    std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .iter()
            .map(|&gpu| {
                let (queue, bar, errors, done, stop) = (&queue, &bar, &errors, &done, &stop);
                let parts_graded = &parts_graded;
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
                        match plan.jobs[i].grade(settings, gpu) {
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
    Graded {
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
