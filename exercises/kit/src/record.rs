//! What a check records besides its verdict: the figures of its performance
//! verdict, where its first failed comparison was wrong, the memory behaviour
//! it measured and the digests of the buffers it read back. They are written
//! into the [`Recorder`] of the check's [`crate::Ctx`] while the check runs
//! ([`crate::Ctx::run`]), and the grader takes them from that context after
//! the check ([`crate::Ctx::take_record`]): nothing to reset between checks,
//! and a check run beside the graded ones (ahead of the GPU, a sanitizer
//! replay) records into a context of its own that nobody reads.
//!
//! The kit's comparisons, verdicts and buffer reads are free functions that
//! get no context, so the recorder of the check running on a thread is found
//! through that thread: [`Recorder::install`] names it for as long as the
//! check runs. Outside a check nothing is recorded.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use crate::profile::MemoryProfile;

/// The figures behind one performance verdict, for reports and gradebooks
/// (a bar chart of the student's kernel against the yardstick and threshold).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PerfFigures {
    /// `speedup` (baseline time / student time) or `share` (student throughput / reference throughput).
    pub kind: String,
    /// The measured ratio the threshold applies to.
    pub value: f64,
    /// The least ratio that passes.
    pub threshold: f64,
    /// The student's kernel: median milliseconds (`speedup`) or GB/s (`share`).
    pub student: f64,
    /// The yardstick, in the same unit.
    pub baseline: f64,
    /// `ms` or `GB/s`.
    pub unit: String,
    /// What the student's kernel was compared with.
    pub baseline_name: String,
    /// Where the threshold came from: the GPU model whose calibration set it
    /// (`None` in grades of graders before calibrations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_from: Option<crate::calibration::Source>,
    /// The student's margin to the threshold: `value / threshold` (at least 1 passes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
}

/// Where the wrong elements of the first failed comparison of a check lie, for
/// the report's pictures (a heat map for matrices, a strip for vectors). Counts
/// are binned, so the record stays small for any size.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Mismatches {
    /// The output's name, as in the message.
    pub what: String,
    /// `vector` or `matrix`.
    pub layout: String,
    pub rows: usize,
    pub cols: usize,
    pub wrong: usize,
    /// Wrong elements that still hold the poison (never written).
    pub unwritten: usize,
    /// `bin_rows` x `bin_cols` counts of wrong elements, row-major.
    pub bin_rows: usize,
    pub bin_cols: usize,
    pub bins: Vec<u32>,
    /// The first wrong indices (row-major), at most [`crate::check::MAX_MARKS`].
    pub marks: Vec<usize>,
    /// For a sparse vector (DNA match flags): the first indices where a nonzero
    /// value was expected and came back right, at most [`crate::check::MAX_MARKS`].
    #[serde(default)]
    pub right_marks: Vec<usize>,
}

/// One buffer read back from the device: its name and the SHA-256 of its bytes
/// (recorded only with `CUDA_LAB_OUTPUT_DIGESTS`, [`crate::digest`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputDigest {
    pub buffer: String,
    pub sha256: String,
}

/// Everything one check recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// The figures of the last performance verdict.
    pub perf: Option<PerfFigures>,
    /// The first failed comparison.
    pub mismatches: Option<Mismatches>,
    /// Every measurement of memory behaviour, in order (the grades JSON's `tests[].measured`).
    pub measured: Vec<MemoryProfile>,
    /// Every buffer read back, in order.
    pub digests: Vec<OutputDigest>,
}

/// One check's [`Record`], written while the check runs.
#[derive(Debug, Default)]
pub struct Recorder {
    record: Mutex<Record>,
    /// The full name of the check recording here: what a performance
    /// threshold is looked up by in the active calibration.
    check: Option<String>,
}

thread_local! {
    /// The recorder of the check running on this thread, if any: only where
    /// the kit's free functions find it, the records live in the recorder.
    static CURRENT: RefCell<Option<Arc<Recorder>>> = const { RefCell::new(None) };
}

/// While it lives, this thread records into its recorder; dropping it (also
/// when the check panics) restores the one before.
#[must_use = "records go to the recorder only while the guard lives"]
pub struct Installed {
    before: Option<Arc<Recorder>>,
}

impl Drop for Installed {
    fn drop(&mut self) {
        let before = self.before.take();
        CURRENT.with(|c| *c.borrow_mut() = before);
    }
}

impl Recorder {
    /// The recorder of the check named `check` (`ex05::stencil::perf::share-of-copy`).
    pub fn for_check(check: &str) -> Self {
        Self { check: Some(check.to_string()), ..Self::default() }
    }

    /// Makes this the recorder of this thread until the guard is dropped.
    pub fn install(self: &Arc<Self>) -> Installed {
        let before = CURRENT.with(|c| c.borrow_mut().replace(self.clone()));
        Installed { before }
    }

    /// What was recorded so far (and forgets it).
    pub fn take(&self) -> Record {
        std::mem::take(&mut *self.record.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Whether a check's recorder is installed on this thread (else `with` does
/// nothing): whether this thread runs a graded check, not one beside them
/// (whose time on shared values is then not the check's, [`crate::shared::value`]).
pub fn recording() -> bool {
    CURRENT.with(|c| c.borrow().is_some())
}

/// The name of the check running on this thread, if it has one.
pub fn check_name() -> Option<String> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|r| r.check.clone()))
}

/// Writes into the record of the check running on this thread; nothing outside a check.
pub(crate) fn with(write: impl FnOnce(&mut Record)) {
    let Some(recorder) = CURRENT.with(|c| c.borrow().clone()) else { return };
    write(&mut recorder.record.lock().unwrap_or_else(|p| p.into_inner()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_go_to_the_installed_recorder_and_nowhere_outside_one() {
        with(|r| r.measured.push(MemoryProfile::default()));
        let outer = Arc::new(Recorder::default());
        let inner = Arc::new(Recorder::default());
        {
            let _outer = outer.install();
            assert!(recording());
            {
                let _inner = inner.install();
                with(|r| r.measured.push(MemoryProfile { launches: 2, ..Default::default() }));
            }
            with(|r| r.measured.push(MemoryProfile { launches: 1, ..Default::default() }));
        }
        assert!(!recording());
        with(|r| r.measured.push(MemoryProfile::default()));
        assert_eq!(outer.take().measured.iter().map(|m| m.launches).collect::<Vec<_>>(), [1]);
        assert_eq!(inner.take().measured.iter().map(|m| m.launches).collect::<Vec<_>>(), [2]);
        assert_eq!(outer.take(), Record::default(), "taken once");
    }
}
