//! The cause of a failure in one word (`tests[].verdict` in the grades JSON,
//! the gradebooks' `verdict` column, the batch summaries), as a type.
//!
//! Verdicts are decided in one place ([`Verdict::of`]), and every other place
//! that builds or compares one (the sanitizer pass, a batch's worker and its
//! child processes) names a variant, so that a misspelt verdict cannot
//! compile. The JSON keeps the strings it always had: [`Verdict`]'s
//! `Display`, `From<&str>` and serde all use them, and the schema's field
//! stays a string, since a reader may meet verdicts of other grader versions
//! ([`Verdict::Other`]). This module uses nothing else of the grader's.

use std::fmt;

use kit::backend::BackendError;
use kit::exercise::MissingKernel;
use kit::gpu::OutOfBounds;
use kit::inspect::WrongSignature;
use kit::CheckKind;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// `wrong`: a correctness check's outputs were wrong.
    Wrong,
    /// `structure`: a structure check found the kernel's shape wrong.
    Structure,
    /// `too-slow`: a performance check's kernel missed its threshold.
    TooSlow,
    /// `compile-error`: the part did not compile, so the check could not run.
    CompileError,
    /// `missing-file`: the graded tree has no file for the part (a student's
    /// file not submitted or misnamed, a `--sources reference/slow` tree without
    /// a variant of this part), so the check could not run.
    MissingFile,
    /// `missing-kernel`: the PTX lacks a kernel (or symbol) the check launches.
    MissingKernel,
    /// `wrong-signature`: a kernel's parameters are not those the check passes.
    WrongSignature,
    /// `input-modified`: a correctness or timed launch changed one of its inputs.
    InputModified,
    /// `wrong-when-timed`: a launch of a performance check's timing wrote a
    /// wrong output (a replayed result, work done only once, a size it
    /// special-cases), or a structure check's run at the timed size did
    /// (kit::measure::WrongAtTimedSize): the part's correctness fails.
    WrongWhenTimed,
    /// `replays-results`: given the inputs of a timed launch once more, the
    /// kernel ran far faster: it keeps results between launches.
    ReplaysResults,
    /// `race`: a data race on shared or global memory.
    Race,
    /// `out-of-bounds-read`.
    OutOfBoundsRead,
    /// `out-of-bounds-write` (on the simulator, or into a GPU buffer's guard zone).
    OutOfBoundsWrite,
    /// `uninitialised-read`.
    UninitialisedRead,
    /// `barrier-divergence`: a `__syncthreads` not every thread reached.
    BarrierDivergence,
    /// `warp-mask`: a warp-synchronous call by a lane outside its member mask,
    /// or whose mask names lanes that never make it.
    WarpMask,
    /// `timeout`: a kernel (or a batch's child process) never ended.
    Timeout,
    /// `not-run: GPU lost earlier`: an earlier kernel left the CUDA context unusable.
    GpuLost,
    /// `crashed`, or `crashed: <how>` (`crashed: illegal address`, and in a
    /// batch how the child process ended: `crashed: SIGSEGV (segmentation fault)`).
    Crashed(Option<String>),
    /// `launch-failed` (also out of device memory).
    LaunchFailed,
    /// `load-failed`: the PTX could not be loaded.
    LoadFailed,
    /// `gpu-error`: any other backend error.
    GpuError,
    /// `not-simulated`: an instruction the simulator does not run.
    NotSimulated,
    /// A verdict this grader does not write (read from another version's JSON).
    Other(String),
}

/// The crash on a GPU that touched memory it does not own.
const ILLEGAL_ADDRESS: &str = "illegal address";

impl Verdict {
    /// The verdict of a check that failed with `e`: the first cause in its
    /// chain that is known, else what a failure of a check of `kind` means.
    pub fn of(e: &anyhow::Error, kind: CheckKind) -> Verdict {
        for cause in e.chain() {
            if cause.downcast_ref::<NotCompiled>().is_some() {
                return Verdict::CompileError;
            }
            if cause.downcast_ref::<NoFile>().is_some() {
                return Verdict::MissingFile;
            }
            if cause.downcast_ref::<OutOfBounds>().is_some() {
                return Verdict::OutOfBoundsWrite;
            }
            if cause.downcast_ref::<kit::gpu::CheckTimeLimit>().is_some() {
                return Verdict::Timeout;
            }
            if cause.downcast_ref::<MissingKernel>().is_some() {
                return Verdict::MissingKernel;
            }
            if cause.downcast_ref::<WrongSignature>().is_some() {
                return Verdict::WrongSignature;
            }
            if cause.downcast_ref::<kit::gpu::InputModified>().is_some() {
                return Verdict::InputModified;
            }
            if cause.downcast_ref::<kit::timed::WrongWhenTimed>().is_some()
                || cause.downcast_ref::<kit::measure::WrongAtTimedSize>().is_some()
            {
                return Verdict::WrongWhenTimed;
            }
            if cause.downcast_ref::<kit::timed::ReplaysResults>().is_some() {
                return Verdict::ReplaysResults;
            }
            if let Some(b) = cause.downcast_ref::<BackendError>() {
                return match b {
                    BackendError::IllegalAddress => Verdict::Crashed(Some(ILLEGAL_ADDRESS.into())),
                    BackendError::SharedRace(_) | BackendError::GlobalRace(_) => Verdict::Race,
                    BackendError::OutOfBoundsRead(_) => Verdict::OutOfBoundsRead,
                    BackendError::OutOfBoundsWrite(_) => Verdict::OutOfBoundsWrite,
                    BackendError::UninitialisedRead(_) => Verdict::UninitialisedRead,
                    BackendError::BarrierDivergence(_) => Verdict::BarrierDivergence,
                    BackendError::WarpMask(_) => Verdict::WarpMask,
                    BackendError::NotSimulated(_) => Verdict::NotSimulated,
                    BackendError::Crashed(_) => Verdict::Crashed(None),
                    BackendError::Timeout(_) => Verdict::Timeout,
                    BackendError::ContextLost(_) => Verdict::GpuLost,
                    BackendError::MissingKernel(_) | BackendError::MissingSymbol(_) => Verdict::MissingKernel,
                    BackendError::LaunchFailed(_) | BackendError::OutOfMemory(_) => Verdict::LaunchFailed,
                    BackendError::LoadFailed(_) => Verdict::LoadFailed,
                    _ => Verdict::GpuError,
                };
            }
        }
        match kind {
            CheckKind::Correctness => Verdict::Wrong,
            CheckKind::Structure => Verdict::Structure,
            CheckKind::Performance => Verdict::TooSlow,
        }
    }

    /// The verdict of a check that failed with `e` after it started on a GPU
    /// whose context was already lost (`lost_before`): it could not run, so it
    /// is `not-run: GPU lost earlier`, not what its failure would otherwise
    /// mean (a timed check whose yardstick could not be measured is no `too-slow`).
    /// Causes found without running anything (compile errors, a missing kernel,
    /// a wrong signature) stand.
    pub fn of_run(e: &anyhow::Error, kind: CheckKind, lost_before: bool) -> Verdict {
        let verdict = Verdict::of(e, kind);
        let found_without_running = matches!(
            verdict,
            Verdict::CompileError | Verdict::MissingFile | Verdict::MissingKernel | Verdict::WrongSignature
        );
        if lost_before && !found_without_running {
            Verdict::GpuLost
        } else {
            verdict
        }
    }

    /// Proves a bug in the kernel, whatever numbers a GPU got: the sanitizer
    /// pass fails a test the GPU passed for one of these.
    pub fn proves_a_bug(&self) -> bool {
        matches!(
            self,
            Verdict::Race
                | Verdict::OutOfBoundsRead
                | Verdict::OutOfBoundsWrite
                | Verdict::UninitialisedRead
                | Verdict::BarrierDivergence
                | Verdict::WarpMask
        )
    }

    /// The simulator could not run the kernel at all.
    pub fn not_simulated(&self) -> bool {
        matches!(self, Verdict::NotSimulated | Verdict::LoadFailed)
    }

    /// A kernel of the part never ended on the GPU (or the check was never run after one did).
    pub fn never_ended(&self) -> bool {
        matches!(self, Verdict::Timeout | Verdict::GpuLost)
    }

    /// Any crash, whatever its detail.
    pub fn crashed(&self) -> bool {
        matches!(self, Verdict::Crashed(_))
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self {
            Verdict::Wrong => "wrong",
            Verdict::Structure => "structure",
            Verdict::TooSlow => "too-slow",
            Verdict::CompileError => "compile-error",
            Verdict::MissingFile => "missing-file",
            Verdict::MissingKernel => "missing-kernel",
            Verdict::WrongSignature => "wrong-signature",
            Verdict::InputModified => "input-modified",
            Verdict::WrongWhenTimed => "wrong-when-timed",
            Verdict::ReplaysResults => "replays-results",
            Verdict::Race => "race",
            Verdict::OutOfBoundsRead => "out-of-bounds-read",
            Verdict::OutOfBoundsWrite => "out-of-bounds-write",
            Verdict::UninitialisedRead => "uninitialised-read",
            Verdict::BarrierDivergence => "barrier-divergence",
            Verdict::WarpMask => "warp-mask",
            Verdict::Timeout => "timeout",
            Verdict::GpuLost => "not-run: GPU lost earlier",
            Verdict::Crashed(None) => "crashed",
            Verdict::Crashed(Some(how)) => return write!(f, "crashed: {how}"),
            Verdict::LaunchFailed => "launch-failed",
            Verdict::LoadFailed => "load-failed",
            Verdict::GpuError => "gpu-error",
            Verdict::NotSimulated => "not-simulated",
            Verdict::Other(word) => word,
        };
        f.write_str(word)
    }
}

impl From<&str> for Verdict {
    /// The verdict a string of the grades JSON names (the inverse of `Display`).
    fn from(word: &str) -> Verdict {
        match word {
            "wrong" => Verdict::Wrong,
            "structure" => Verdict::Structure,
            "too-slow" => Verdict::TooSlow,
            "compile-error" => Verdict::CompileError,
            "missing-file" => Verdict::MissingFile,
            "missing-kernel" => Verdict::MissingKernel,
            "wrong-signature" => Verdict::WrongSignature,
            "input-modified" => Verdict::InputModified,
            "wrong-when-timed" => Verdict::WrongWhenTimed,
            "replays-results" => Verdict::ReplaysResults,
            "race" => Verdict::Race,
            "out-of-bounds-read" => Verdict::OutOfBoundsRead,
            "out-of-bounds-write" => Verdict::OutOfBoundsWrite,
            "uninitialised-read" => Verdict::UninitialisedRead,
            "barrier-divergence" => Verdict::BarrierDivergence,
            "warp-mask" => Verdict::WarpMask,
            "timeout" => Verdict::Timeout,
            "not-run: GPU lost earlier" => Verdict::GpuLost,
            "crashed" => Verdict::Crashed(None),
            "launch-failed" => Verdict::LaunchFailed,
            "load-failed" => Verdict::LoadFailed,
            "gpu-error" => Verdict::GpuError,
            "not-simulated" => Verdict::NotSimulated,
            other => match other.strip_prefix("crashed: ") {
                Some(how) => Verdict::Crashed(Some(how.to_string())),
                None => Verdict::Other(other.to_string()),
            },
        }
    }
}

impl From<Verdict> for String {
    fn from(v: Verdict) -> String {
        v.to_string()
    }
}

impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Verdict, D::Error> {
        Ok(Verdict::from(String::deserialize(d)?.as_str()))
    }
}

/// A check of a part that did not compile: why it could not run. Its verdict
/// is `compile-error`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotCompiled(pub String);

/// A check of a part whose file is not in the graded tree: why it could not
/// run. Its verdict is `missing-file`, not `compile-error`: nothing was compiled.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoFile(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every verdict the grader writes, as the JSON has always spelt it.
    const WRITTEN: &[&str] = &[
        "wrong",
        "structure",
        "too-slow",
        "compile-error",
        "missing-file",
        "missing-kernel",
        "wrong-signature",
        "input-modified",
        "wrong-when-timed",
        "replays-results",
        "race",
        "out-of-bounds-read",
        "out-of-bounds-write",
        "uninitialised-read",
        "barrier-divergence",
        "warp-mask",
        "timeout",
        "not-run: GPU lost earlier",
        "crashed",
        "crashed: illegal address",
        "crashed: SIGABRT (aborted)",
        "launch-failed",
        "load-failed",
        "gpu-error",
        "not-simulated",
    ];

    #[test]
    fn every_verdict_keeps_its_string_in_text_and_json() {
        for &word in WRITTEN {
            let v = Verdict::from(word);
            assert!(!matches!(v, Verdict::Other(_)), "{word} is a verdict of this grader");
            assert_eq!(v.to_string(), word);
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<Verdict>(&format!("\"{word}\"")).unwrap(), v);
        }
        let old = Verdict::from("gremlins");
        assert_eq!(old, Verdict::Other("gremlins".into()));
        assert_eq!(old.to_string(), "gremlins");
    }

    #[test]
    fn a_check_that_starts_after_the_context_was_lost_is_not_run_not_too_slow() {
        // The copy yardstick's failure keeps only its text (kit's `copy_bandwidth_gbps`).
        let e = anyhow::anyhow!("measuring the copy bandwidth failed: the GPU context was lost earlier in this run");
        assert_eq!(Verdict::of(&e, CheckKind::Performance), Verdict::TooSlow, "what the text alone says");
        assert_eq!(Verdict::of_run(&e, CheckKind::Performance, true), Verdict::GpuLost);
        assert_eq!(Verdict::of_run(&e, CheckKind::Performance, true).to_string(), "not-run: GPU lost earlier");
        assert_eq!(Verdict::of_run(&e, CheckKind::Correctness, true), Verdict::GpuLost);
        assert_eq!(Verdict::of_run(&e, CheckKind::Performance, false), Verdict::TooSlow, "a live context: too slow");
        let compile = anyhow::Error::new(NotCompiled("did not compile".into()));
        assert_eq!(Verdict::of_run(&compile, CheckKind::Performance, true), Verdict::CompileError);
        let no_file = anyhow::Error::new(NoFile("no file".into()));
        assert_eq!(Verdict::of_run(&no_file, CheckKind::Performance, true), Verdict::MissingFile);
    }

    #[test]
    fn a_failure_without_a_known_cause_is_judged_by_its_kind() {
        let e = anyhow::anyhow!("`out`: 1 of 256 element(s) wrong");
        assert_eq!(Verdict::of(&e, CheckKind::Correctness), Verdict::Wrong);
        assert_eq!(Verdict::of(&e, CheckKind::Structure), Verdict::Structure);
        assert_eq!(Verdict::of(&e, CheckKind::Performance), Verdict::TooSlow);
        let e = anyhow::Error::new(NotCompiled("did not compile".into())).context("running");
        assert_eq!(Verdict::of(&e, CheckKind::Performance), Verdict::CompileError);
        let e = anyhow::Error::new(BackendError::IllegalAddress);
        assert_eq!(Verdict::of(&e, CheckKind::Correctness).to_string(), "crashed: illegal address");
    }
}
