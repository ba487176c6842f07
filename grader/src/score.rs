//! How points are given. Each part has points; within a part they are split by
//! kind of check, and equally among the checks of a kind:
//!
//! | kind        | share |
//! |-------------|-------|
//! | correctness | 60 %  |
//! | structure   | 15 %  |
//! | performance | 25 %  |
//!
//! A part without checks of some kind shares that kind's points among the
//! others in proportion. Structure and performance checks earn points only when
//! every correctness check of the part passed: a fast or well-shaped kernel that
//! computes the wrong thing is worth nothing, and where a correctness check
//! failed, one that passed is reported `not_counted`, never `pass`.
//!
//! A check this machine cannot run, which the course's policy leaves out
//! (`not_graded`, see `policy.rs`), keeps its points out of the maximum: the
//! score is out of what could be graded here. It does not hold back structure
//! and performance points either, since it did not fail.

use kit::CheckKind;

use crate::report::{Status, TestReport};

pub fn share(kind: CheckKind) -> f64 {
    match kind {
        CheckKind::Correctness => 0.60,
        CheckKind::Structure => 0.15,
        CheckKind::Performance => 0.25,
    }
}

/// Fills in `max_score` and `score` of every test of one part.
pub fn score_part(points: f64, tests: &mut [TestReport]) {
    let kinds = [CheckKind::Correctness, CheckKind::Structure, CheckKind::Performance];
    let counts = kinds.map(|k| tests.iter().filter(|t| t.kind == k).count());
    let count = |k: CheckKind| counts[kinds.iter().position(|&x| x == k).unwrap_or(0)];
    let present: f64 = kinds.iter().filter(|&&k| count(k) > 0).map(|&k| share(k)).sum();
    let correct_ok = tests
        .iter()
        .filter(|t| t.kind == CheckKind::Correctness && t.not_graded.is_none())
        .all(|t| t.status == Status::Pass);
    // The first correctness check that failed, if one did.
    let failed = tests
        .iter()
        .find(|t| t.kind == CheckKind::Correctness && t.not_graded.is_none() && t.status == Status::Fail)
        .map(|t| not_counted_note(&t.name));
    // A timed launch the grader proved wrong fails the part's correctness
    // (docs/hostile.md): the timed size counts as one more correctness case,
    // which failed, and structure and performance points are held back as
    // for any other. (Where a correctness check failed already, it is held
    // back as any timed failure.)
    let wrong_timed = tests
        .iter()
        .position(|t| {
            failed.is_none() && count(CheckKind::Correctness) > 0 && t.not_graded.is_none() && is_wrong_when_timed(t)
        })
        .map(|i| (i, tests[i].name.clone()));
    let correctness_cases = count(CheckKind::Correctness) + wrong_timed.is_some() as usize;
    let correct_ok = correct_ok && wrong_timed.is_none();
    let failed = failed.or_else(|| wrong_timed.as_ref().map(|(_, name)| not_counted_note(name)));
    for (i, t) in tests.iter_mut().enumerate() {
        let kind = t.kind;
        t.max_score = match kind {
            CheckKind::Correctness => points * share(kind) / present / correctness_cases as f64,
            _ => points * share(kind) / present / count(kind) as f64,
        };
        if wrong_timed.as_ref().is_some_and(|(w, _)| *w == i) {
            // Its own points and those of the correctness case it was.
            t.max_score += points * share(CheckKind::Correctness) / present / correctness_cases as f64;
            t.score = 0.0;
            let head = "fails this part's correctness: its output at the timed size was wrong, and the timed \
                        size counts as one more correctness case of this part";
            t.message = Some(match t.message.take().filter(|m| !m.is_empty()) {
                Some(found) => format!("{head}\n{found}"),
                None => head.into(),
            });
            continue;
        }
        if let Some(not_graded) = &mut t.not_graded {
            not_graded.points = t.max_score;
            t.max_score = 0.0;
            t.score = 0.0;
            continue;
        }
        let gated = kind != CheckKind::Correctness && !correct_ok;
        t.score = match t.credit {
            // Scaled by speed (crate::credit), whatever the bar said.
            Some(credit) if !gated => t.max_score * credit,
            _ if t.status == Status::Pass && !gated => t.max_score,
            _ => 0.0,
        };
        // A timed check's own failure depends on the GPU (too slow on one, wrong
        // when timed on another): held back, it reads the same everywhere.
        let timed_failure = kind == CheckKind::Performance && t.status == Status::Fail && failed.is_some();
        let held = gated && (t.status == Status::Pass || timed_failure);
        match (&failed, held) {
            // Nothing is passed, and no timing judged, while the part computes the wrong thing.
            (Some(why), true) => {
                t.status = Status::NotCounted;
                t.verdict = None;
                t.message = Some(match t.message.take().filter(|m| !m.is_empty()) {
                    Some(found) => format!("{why}\non its own this check found: {found}"),
                    None => format!("{why}; on its own this check found nothing wrong"),
                });
            }
            // Correctness did not run here (a filter, `--backend none`): what could be judged passed.
            (None, true) => {
                let head = "passed, but counts only once every correctness check of this part passes";
                t.message = Some(match t.message.take().filter(|m| !m.is_empty()) {
                    Some(found) => format!("{head}\n{found}"),
                    None => head.into(),
                });
            }
            _ => {}
        }
    }
}

/// A timed check that failed because a timed launch's output was wrong, or a
/// structure check whose run at the timed size was (kit::measure::WrongAtTimedSize).
fn is_wrong_when_timed(t: &TestReport) -> bool {
    matches!(t.kind, CheckKind::Performance | CheckKind::Structure)
        && t.status == Status::Fail
        && t.verdict.as_deref() == Some(crate::verdict::Verdict::WrongWhenTimed.to_string().as_str())
}

/// Why a part's structure and performance checks are not counted, naming the
/// correctness check `name` that failed.
fn not_counted_note(name: &str) -> String {
    format!(
        "not counted: `{name}` failed, and structure and performance points count only once every correctness \
         check of this part passes"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(kind: CheckKind, status: Status) -> TestReport {
        TestReport::new("t".into(), kind, status)
    }

    fn total(tests: &[TestReport]) -> (f64, f64) {
        (tests.iter().map(|t| t.score).sum(), tests.iter().map(|t| t.max_score).sum())
    }

    #[test]
    fn full_marks_when_everything_passes() {
        use CheckKind::*;
        let mut tests = vec![
            t(Correctness, Status::Pass),
            t(Correctness, Status::Pass),
            t(Structure, Status::Pass),
            t(Performance, Status::Pass),
        ];
        score_part(10.0, &mut tests);
        let (s, m) = total(&tests);
        assert!((s - 10.0).abs() < 1e-9 && (m - 10.0).abs() < 1e-9);
        assert!((tests[0].max_score - 3.0).abs() < 1e-9);
        assert!((tests[3].max_score - 2.5).abs() < 1e-9);
    }

    #[test]
    fn a_timed_launch_proven_wrong_fails_the_parts_correctness() {
        use CheckKind::*;
        let part = |verdict: &str| {
            let mut tests = vec![
                t(Correctness, Status::Pass),
                t(Correctness, Status::Pass),
                t(Structure, Status::Pass),
                t(Performance, Status::Fail),
            ];
            tests[1].name = "ex10::coarse::correct::n=1000".into();
            tests[3].name = "ex10::coarse::perf::share-of-copy".into();
            tests[3].verdict = Some(verdict.into());
            tests[3].message = Some("wrong when timed: launch 1 of the timing, on `data`: 268435456 elements …".into());
            score_part(10.0, &mut tests);
            tests
        };
        // Too slow: only the timed check's 2.5 points.
        let slow = part("too-slow");
        assert!((total(&slow).0 - 7.5).abs() < 1e-9, "{:?}", total(&slow));
        // Wrong when timed: one more correctness case failed (6 / 3 = 2 of the 6),
        // and structure (1.5) and performance (2.5) held back.
        let wrong = part("wrong-when-timed");
        let (score, max) = total(&wrong);
        assert!((max - 10.0).abs() < 1e-9 && (score - 4.0).abs() < 1e-9, "{score} / {max}: {wrong:?}");
        assert!((wrong[0].max_score - 2.0).abs() < 1e-9 && (wrong[3].max_score - 4.5).abs() < 1e-9, "{wrong:?}");
        assert_eq!(wrong[2].status, Status::NotCounted);
        assert!(wrong[2].message.as_deref().unwrap().contains("`ex10::coarse::perf::share-of-copy` failed"));
        let msg = wrong[3].message.as_deref().unwrap();
        assert!(msg.starts_with("fails this part's correctness") && msg.contains("268435456 elements"), "{msg}");
        assert_eq!((wrong[3].status, wrong[3].verdict.as_deref()), (Status::Fail, Some("wrong-when-timed")));
    }

    /// A structure check that runs the kernel at the timed size on the
    /// simulator (ex03's) and finds it wrong there counts as the timed launch would.
    #[test]
    fn a_structure_check_wrong_at_the_timed_size_fails_the_parts_correctness() {
        use CheckKind::*;
        let mut tests = vec![t(Correctness, Status::Pass), t(Structure, Status::Fail), t(Performance, Status::Pass)];
        tests[1].verdict = Some("wrong-when-timed".into());
        score_part(10.0, &mut tests);
        assert_eq!(tests[2].status, Status::NotCounted, "{tests:?}");
        assert!(tests[1].message.as_deref().unwrap().starts_with("fails this part's correctness"), "{tests:?}");
        assert_eq!(total(&tests).0, tests[0].score);
    }

    #[test]
    fn scaled_credit_gives_part_of_a_timed_checks_points_once_correct() {
        use CheckKind::*;
        let mut tests = vec![t(Correctness, Status::Pass), t(Performance, Status::Fail)];
        tests[1].credit = Some(0.5);
        score_part(10.0, &mut tests);
        assert!((tests[1].score - tests[1].max_score / 2.0).abs() < 1e-9, "{:?}", tests[1]);
        let mut wrong = vec![t(Correctness, Status::Fail), t(Performance, Status::Pass)];
        wrong[1].credit = Some(1.0);
        score_part(10.0, &mut wrong);
        assert_eq!(wrong[1].score, 0.0, "speed counts only for a kernel that computes the right thing");
    }

    #[test]
    fn missing_kinds_are_redistributed() {
        let mut tests = vec![t(CheckKind::Correctness, Status::Pass), t(CheckKind::Structure, Status::Pass)];
        score_part(15.0, &mut tests);
        assert!((tests[0].max_score - 12.0).abs() < 1e-9, "{}", tests[0].max_score);
        assert!((tests[1].max_score - 3.0).abs() < 1e-9);
    }

    #[test]
    fn structure_and_perf_need_correctness() {
        use CheckKind::*;
        let mut tests = vec![t(Correctness, Status::Fail), t(Structure, Status::Pass), t(Performance, Status::Pass)];
        score_part(10.0, &mut tests);
        assert_eq!(total(&tests).0, 0.0);
        assert!(tests[1].message.as_deref().unwrap().contains("count only once"));
        // Held back, a check that passed is never shown as passed.
        assert_eq!((tests[1].status, tests[2].status), (Status::NotCounted, Status::NotCounted));
        let failed = TestReport { message: Some("no shared tile".into()), ..t(Structure, Status::Fail) };
        let mut tests = vec![t(Correctness, Status::Pass), t(Correctness, Status::NotRun), failed];
        score_part(10.0, &mut tests);
        assert_eq!(tests[2].status, Status::Fail, "a check that failed stays failed");
        // A timed check of a wrong part reads the same on every GPU, whatever its own failure.
        for verdict in ["too-slow", "wrong-when-timed"] {
            let timed = TestReport { verdict: Some(verdict.into()), ..t(Performance, Status::Fail) };
            let mut tests = vec![t(Correctness, Status::Fail), timed];
            score_part(10.0, &mut tests);
            assert_eq!((tests[1].status, tests[1].verdict.as_deref()), (Status::NotCounted, None), "{verdict}");
        }
        // Correctness that did not run (filtered out, `--backend none`) failed nothing.
        let mut tests = vec![t(Correctness, Status::NotRun), t(Structure, Status::Pass)];
        score_part(10.0, &mut tests);
        assert_eq!((tests[1].status, tests[1].score), (Status::Pass, 0.0));
        assert!(tests[1].message.as_deref().unwrap().contains("counts only once"), "{:?}", tests[1].message);
    }

    #[test]
    fn not_graded_checks_leave_the_maximum_and_do_not_gate() {
        use CheckKind::*;
        let not_graded = |kind| TestReport {
            not_graded: Some(crate::report::NotGraded { why: "needs real timing".into(), points: 0.0 }),
            ..t(kind, Status::Ignored)
        };
        let mut tests = vec![
            t(Correctness, Status::Pass),
            not_graded(Correctness),
            t(Structure, Status::Pass),
            not_graded(Performance),
        ];
        score_part(10.0, &mut tests);
        let (s, m) = total(&tests);
        assert!((m - 4.5).abs() < 1e-9 && (s - 4.5).abs() < 1e-9, "{s} / {m}");
        assert!((tests[1].not_graded.as_ref().unwrap().points - 3.0).abs() < 1e-9);
        assert!((tests[3].not_graded.as_ref().unwrap().points - 2.5).abs() < 1e-9);
    }

    #[test]
    fn ignored_and_failed_score_nothing() {
        let mut tests = vec![t(CheckKind::Correctness, Status::Ignored), t(CheckKind::Correctness, Status::Pass)];
        score_part(10.0, &mut tests);
        assert_eq!(tests[0].score, 0.0);
        assert!((tests[1].score - 5.0).abs() < 1e-9);
    }
}
