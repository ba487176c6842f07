//! The batch's second look at disturbed timings: a part with a timed check
//! that was `not graded here` because its timing was disturbed (the student's
//! samples spread, and so did the grader's own kernel timed beside them in
//! the same rounds: `kit::perf::judge`) is graded once more at the end of the
//! batch, by fresh workers, when whatever disturbed the GPU may be gone. Only
//! a check disturbed again then stays out of the maximum. A spread that is
//! the kernel's own never comes here: it is graded by its slow launches.

use crate::report::{GradeReport, Status, TestReport};

use super::Planned;

/// How a disturbed timing's message starts (`kit::perf::TimingDisturbed`).
pub const DISTURBED: &str = "not graded here: the timing was disturbed";

/// Whether `report` holds a check left out of the maximum for a disturbed timing.
pub fn disturbed(report: &GradeReport) -> bool {
    report.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests).any(is_disturbed)
}

/// Whether `t` was left out of the maximum for a disturbed timing.
pub fn is_disturbed(t: &TestReport) -> bool {
    t.status == Status::NotGradedHere && t.message.as_deref().is_some_and(|m| m.starts_with(DISTURBED))
}

/// Sets every plan's pending parts to those whose result on disk has a
/// disturbed timing (see [`disturbed`]); returns how many there are.
pub fn mark(plans: &mut [Planned]) -> usize {
    let mut count = 0;
    for plan in plans.iter_mut() {
        plan.pending =
            (0..plan.jobs.len()).filter(|&i| plan.jobs[i].existing_result().is_some_and(|r| disturbed(&r))).collect();
        count += plan.pending.len();
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::CheckKind;

    fn test(status: Status, message: &str) -> TestReport {
        let name = "ex10::private::perf::faster-than-global-atomics".into();
        TestReport { message: Some(message.into()), ..TestReport::new(name, CheckKind::Performance, status) }
    }

    #[test]
    fn only_a_disturbed_timing_is_graded_again() {
        let msg = kit::perf::TimingDisturbed { spread: 0.4, witness_spread: Some(0.3) }.to_string();
        assert!(is_disturbed(&test(Status::NotGradedHere, &msg)), "{msg}");
        // The simulator's and the calibration's `not graded here`, and a kernel's own spread (too slow), are not.
        assert!(!is_disturbed(&test(Status::NotGradedHere, "not graded here: the simulator cannot run `x`")));
        assert!(!is_disturbed(&test(Status::NotGradedHere, "not graded here (calibration)")));
        assert!(!is_disturbed(&test(Status::Fail, "too slow. ...: the spread is the kernel's own")));
    }
}
