//! Checks the simulator cannot run: never a failure of the student.
//!
//! ptx-sim runs most of what NVRTC emits, but not every instruction (it names
//! the one it lacks, `BackendError::NotSimulated`). A check that meets one has
//! no verdict on this machine: its status is `not_graded_here`, its message
//! names the instruction, and it is scored as the course's policy scores
//! checks that need a GPU (`policy.rs`: out of the maximum under `exclude` and
//! `simulate`, nothing under `fail`). When a part's kernel cannot run on the
//! simulator at all, its correctness is unknown here, and its structure and
//! performance checks (which count only on top of correctness) are not graded
//! here either. With a GPU the GPU's verdict stands: only the sanitizer replay
//! (`sanitize`, "not checked") and the measured structure checks (which fall
//! back to the PTX, `kit::measure::Unmeasurable`) need the simulator.

use kit::backend::BackendError;
use kit::CheckKind;

use crate::report::{Status, TestReport};

/// The instruction the simulator could not run, if that is why `e` happened.
pub fn cause(e: &anyhow::Error) -> Option<&str> {
    e.chain().find_map(|c| match c.downcast_ref::<BackendError>() {
        Some(BackendError::NotSimulated(what)) => Some(what.as_str()),
        _ => None,
    })
}

/// The message of a check that met an instruction the simulator cannot run:
/// its first line is what the score line repeats.
pub fn message(e: &anyhow::Error) -> String {
    let what = cause(e).unwrap_or("an instruction of this kernel");
    format!(
        "not graded here: the simulator cannot run {what}; a GPU grades this check\n\
         The simulator has no verdict on a kernel it cannot run, which is no fault of the kernel: \
         it is graded on a GPU (or scored as the course's policy scores checks that need one)"
    )
}

/// Marks `t` not graded here because its part's correctness checks could not
/// be (`why`, the message of the first of them), keeping what it found itself.
pub fn mark(t: &mut TestReport, why: &str) {
    let first = why.lines().next().unwrap_or(why);
    let own = match (t.status, t.message.take().filter(|m| !m.is_empty())) {
        (Status::Pass | Status::NotCounted, Some(m)) => format!("; on its own it passed: {m}"),
        (Status::Fail, Some(m)) => format!("; on its own it failed: {m}"),
        (_, Some(m)) => format!(": {m}"),
        (_, None) => String::new(),
    };
    t.status = Status::NotGradedHere;
    t.verdict = None;
    t.message = Some(format!(
        "{first}\nthis part's correctness cannot be checked here, and its structure and performance count only on \
         top of it{own}"
    ));
}

/// Within one part: once a correctness check could not be graded here, no
/// other check of the part is (except those a test filter left out).
pub fn spread(tests: &mut [TestReport]) {
    let Some(why) = tests
        .iter()
        .find(|t| t.kind == CheckKind::Correctness && t.status == Status::NotGradedHere)
        .and_then(|t| t.message.clone())
    else {
        return;
    };
    for t in tests.iter_mut().filter(|t| !matches!(t.status, Status::NotGradedHere | Status::NotRun)) {
        mark(t, &why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instruction_is_named_and_the_whole_part_follows() {
        let e = anyhow::Error::new(BackendError::NotSimulated("`griddepcontrol.wait;` (PTX line 40)".into()))
            .context("running `pi_global`");
        assert_eq!(cause(&e), Some("`griddepcontrol.wait;` (PTX line 40)"));
        let why = message(&e);
        assert!(why.starts_with("not graded here: the simulator cannot run `griddepcontrol.wait;`"), "{why}");
        let mut correct = TestReport::new("ex01::global::correct::n=100".into(), CheckKind::Correctness, Status::Pass);
        correct.status = Status::NotGradedHere;
        correct.message = Some(why);
        let structure = TestReport {
            message: Some("judged by the PTX only".into()),
            ..TestReport::new("ex01::global::structure::x".into(), CheckKind::Structure, Status::Pass)
        };
        let filtered = TestReport::new("ex01::global::perf::x".into(), CheckKind::Performance, Status::NotRun);
        let mut tests = vec![correct, structure, filtered];
        spread(&mut tests);
        assert_eq!(tests[1].status, Status::NotGradedHere);
        let msg = tests[1].message.as_deref().unwrap();
        assert!(
            msg.contains("`griddepcontrol.wait;`") && msg.contains("on its own it passed: judged by the PTX"),
            "{msg}"
        );
        assert_eq!(tests[2].status, Status::NotRun, "left out by the filter stays so");
        let plain = anyhow::anyhow!("wrong");
        assert_eq!(cause(&plain), None);
    }
}
