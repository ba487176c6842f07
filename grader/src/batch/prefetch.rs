//! Compiles the next submissions' files into the shared PTX cache while the GPU
//! runs the current one, so a child mostly finds its PTX ready.
//!
//! The compile options must be the child's for the cache to hit, and those
//! depend on the GPU's compute capability; the parent never opens the GPU, so
//! the architecture is learned from the first grades JSON that comes back.

use std::path::PathBuf;
use std::sync::{Condvar, Mutex};

use ptx_build::{CompileOptions, Compiler, SourceFile};

use crate::report::GradeReport;

/// How many submissions ahead of the GPU work the compiles may run.
pub const LOOKAHEAD: usize = 4;

/// One staged file: its path and its name in diagnostics (as the child names it).
pub type StagedFile = (PathBuf, String);

#[derive(Default)]
struct State {
    arch: Option<(u32, u32)>,
    /// Submissions handed to a GPU worker so far (they compile their own).
    dispatched: usize,
    finished: bool,
}

/// Shared between the GPU workers (who report progress) and the compiling thread.
#[derive(Default)]
pub struct Prefetch {
    state: Mutex<State>,
    changed: Condvar,
    compiled: Mutex<usize>,
    /// Seconds spent compiling ahead.
    busy: Mutex<f64>,
}

impl Prefetch {
    /// A worker took the next submission.
    pub fn dispatched(&self) {
        self.update(|s| s.dispatched += 1);
    }

    /// A grades JSON came back: it tells the architecture the children compile for.
    pub fn learn_arch(&self, report: &GradeReport) {
        if self.state.lock().unwrap().arch.is_some() {
            return;
        }
        let arch = match &report.environment.compute_capability {
            Some(cc) => parse_cc(cc),
            // No GPU: the child compiled for the default architecture.
            None if report.environment.compiler.is_some() => Some(CompileOptions::default().arch),
            None => None,
        };
        if let Some(arch) = arch {
            self.update(|s| s.arch = Some(arch));
        }
    }

    pub fn finish(&self) {
        self.update(|s| s.finished = true);
    }

    pub fn seconds(&self) -> f64 {
        *self.busy.lock().unwrap()
    }

    pub fn files_compiled(&self) -> usize {
        *self.compiled.lock().unwrap()
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.state.lock().unwrap());
        self.changed.notify_all();
    }

    /// Compiles `queue[i]` (the files of the i-th submission to be dispatched)
    /// once the architecture is known and `i` is within [`LOOKAHEAD`] of the
    /// GPU work; returns when everything is compiled or the batch is over.
    /// Errors are left for the child to report.
    pub fn run(&self, compiler: &Compiler, queue: &[Vec<StagedFile>]) {
        for (i, files) in queue.iter().enumerate() {
            let arch = {
                let guard = self
                    .changed
                    .wait_while(self.state.lock().unwrap(), |s| {
                        !s.finished && (s.arch.is_none() || i >= s.dispatched + LOOKAHEAD)
                    })
                    .unwrap();
                if guard.finished {
                    return;
                }
                if i < guard.dispatched {
                    continue; // already on the GPU: its child compiles it
                }
                guard.arch.expect("waited for it")
            };
            let options = crate::grade::compile_options(Some(arch));
            let start = std::time::Instant::now();
            for (path, name) in files {
                if let Ok(source) = SourceFile::read(path, name) {
                    if compiler.compile(&source, &options).is_ok() {
                        *self.compiled.lock().unwrap() += 1;
                    }
                }
            }
            *self.busy.lock().unwrap() += start.elapsed().as_secs_f64();
        }
    }
}

/// "9.0" → (9, 0).
fn parse_cc(cc: &str) -> Option<(u32, u32)> {
    let (major, minor) = cc.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_capabilities_parse() {
        assert_eq!(parse_cc("9.0"), Some((9, 0)));
        assert_eq!(parse_cc("12.1"), Some((12, 1)));
        assert_eq!(parse_cc("nine"), None);
    }
}
