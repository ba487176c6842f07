//! One check as a libtest-mimic trial: it runs the check on the part's PTX,
//! records what came back (status, verdict, message, figures) and says on its
//! line whether it counts. Apart because this is where a check's outcome is
//! read, and the part's correctness decides what its other checks count for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Result;
use kit::{CheckKind, Ctx, RunEnv, Skip};
use libtest_mimic::{Completion, Failed, Trial};

use super::compile::BuiltPart;
use super::profile::{collect_profiles, discard_profiles};
use super::side_by_side::Place;
use crate::not_graded_here;
use crate::report::{Status, TestReport};
use crate::verdict::{NoFile, NotCompiled, Verdict};

/// A part's checks in the order they run: its correctness checks first (in
/// their order), so that a structure or performance check's line can already
/// say whether it counts.
pub(super) fn in_running_order(checks: &[kit::Check]) -> Vec<&kit::Check> {
    let mut ordered: Vec<&kit::Check> = checks.iter().collect();
    ordered.sort_by_key(|c| c.kind != CheckKind::Correctness);
    ordered
}

/// What every trial of a run shares: the records the checks leave (by test
/// name), and the checks run whole ahead of their turn.
#[derive(Clone, Default)]
pub(super) struct RunShared {
    pub records: Arc<Mutex<HashMap<String, TestReport>>>,
    pub ahead: Arc<crate::ahead::Outcomes>,
}

/// `check`'s trial. `correctness` names its part's correctness checks, which
/// run before it: a structure or performance check that passes while one of
/// them failed is shown `not counted`, and every check of a part the
/// simulator cannot run is `not graded here`.
pub(super) fn make_trial(
    name: String,
    check: kit::Check,
    built: &BuiltPart,
    env: &Arc<RunEnv>,
    run: &RunShared,
    correctness: &Arc<Vec<String>>,
    turn: Place,
) -> Trial {
    let build = built.build.clone();
    let rel = built.rel.clone();
    let missing = built.report.missing;
    let (env, records, ahead, correctness) = (env.clone(), run.records.clone(), run.ahead.clone(), correctness.clone());
    Trial::ignorable_test(name.clone(), move || {
        // Side by side on the simulator: after the part's checks before it.
        let _turn = turn.as_ref().map(|(turns, index)| turns.wait(*index));
        let _spending = turn.as_ref().map(|(turns, _)| turns.spending());
        let start = Instant::now();
        let cpu_before = kit::stats::get(kit::stats::Counter::CpuReference);
        // A fatal error of an earlier check left nothing this one could run on.
        let mut lost_before: Option<String> = None;
        // What the check records lives in its context, taken from there after it ran.
        let (outcome, recorded): (Result<String>, kit::record::Record) = match &build {
            Err(why) if missing => (Err(anyhow::anyhow!(NoFile(format!("not run: {why}")))), Default::default()),
            Err(why) => (
                Err(anyhow::anyhow!(NotCompiled(format!("not run: {rel} did not compile ({why})")))),
                Default::default(),
            ),
            Ok(build) => {
                lost_before = env.gpu.as_ref().and_then(|g| g.lost());
                let ctx = Ctx::new(&name, &env, build);
                discard_profiles(&env);
                // Shared with other batch workers on this GPU one device operation at a
                // time, never with a timing (kit::backend::locked), and held for good
                // by a kernel that never ends.
                if let Some(gpu) = &env.gpu {
                    gpu.begin_check();
                    // Correctness and timed launches compare their inputs with what
                    // was uploaded after every launch: a timed launch that writes
                    // into an input is `input-modified` too (kit::timed).
                    gpu.watch_inputs(check.kind != CheckKind::Structure);
                    // `grader batch --timeout-from-reference`: this check's own limit.
                    if let Some(limit) = crate::check_limits::for_check(&name) {
                        gpu.limit_check(limit);
                    }
                }
                // A structure check the threads ahead ran whole (crate::ahead) is taken as it came out.
                match ahead.take(&name) {
                    Some(done) => done,
                    None => (ctx.run_caught(|ctx| (check.run)(ctx)), ctx.take_record()),
                }
            }
        };
        kit::digest::write(&name, &recorded.digests);
        if kit::backend::traced::enabled() {
            let (ops, device_ms) = kit::backend::traced::take();
            let cpu_ms = (kit::stats::get(kit::stats::Counter::CpuReference) - cpu_before).as_secs_f64() * 1e3;
            let all_ms = start.elapsed().as_secs_f64() * 1e3;
            eprintln!("trace {name}: {all_ms:.1} ms: device calls {device_ms:.1}, shared inputs and references {cpu_ms:.1}; {ops}");
        }
        let profile = collect_profiles(&env);
        let mut record = TestReport {
            duration_ms: start.elapsed().as_secs_f64() * 1e3,
            profile,
            perf: recorded.perf,
            measured: recorded.measured,
            mismatches: recorded.mismatches,
            ..TestReport::new(name.clone(), check.kind, Status::Pass)
        };
        // Where the GPU's counters witnessed a measurement: its figures beside the simulator's.
        let witnessed = kit::counters::side_by_side(&record.measured);
        let with_witnesses = |text: String| -> String {
            std::iter::once(text)
                .chain(witnessed.iter().cloned())
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let result = match outcome {
            Err(e) if not_graded_here::cause(&e).is_some() => {
                let why = not_graded_here::message(&e);
                record.status = Status::NotGradedHere;
                record.verdict = Some(Verdict::NotSimulated.into());
                let first = why.lines().next().unwrap_or_default().to_string();
                record.message = Some(why);
                Ok(Completion::ignored_with(first))
            }
            Ok(note) => {
                let lines: Vec<String> = std::iter::once(with_witnesses(note))
                    .chain(record.profile.iter().map(|p| p.summary()))
                    .filter(|l| !l.is_empty())
                    .collect();
                record.message = (!lines.is_empty()).then(|| lines.join("\n"));
                Ok(Completion::Completed)
            }
            // A GPU too busy to time on (another process): no verdict on the
            // kernel either way, and its points leave the maximum.
            Err(e) if e.downcast_ref::<kit::perf::TimingDisturbed>().is_some() => {
                record.status = Status::NotGradedHere;
                record.message = Some(e.to_string());
                Ok(Completion::ignored_with(e.to_string()))
            }
            Err(e) if e.downcast_ref::<Skip>().is_some() => {
                record.status = Status::Ignored;
                record.message = Some(e.to_string());
                Ok(Completion::ignored_with(e.to_string()))
            }
            Err(e) => {
                let verdict = Verdict::of_run(&e, check.kind, lost_before.is_some());
                let msg = match (&verdict, &lost_before) {
                    (Verdict::GpuLost, Some(why)) => {
                        format!("not run: the GPU context was lost earlier ({why})\n{e:#}")
                    }
                    _ => with_witnesses(format!("{e:#}")),
                };
                record.status = Status::Fail;
                record.verdict = Some(verdict.into());
                record.message = Some(msg.clone());
                Err(Failed::from(msg))
            }
        };
        let mut records = records.lock().unwrap();
        let result = match part_verdict(&records, &correctness, check.kind) {
            Some(PartVerdict::NotGradedHere(why)) if record.status != Status::NotGradedHere => {
                not_graded_here::mark(&mut record, &why);
                Ok(Completion::ignored_with(why.lines().next().unwrap_or_default()))
            }
            Some(PartVerdict::Failed(first)) if record.status == Status::Pass => {
                // Scoring says so in the JSON; the line must not say `ok` either.
                Ok(Completion::ignored_with(format!("not counted: `{first}` failed")))
            }
            _ => result,
        };
        records.insert(name, record);
        result
    })
}

/// What a part's correctness checks that have run say about its other checks.
enum PartVerdict {
    /// One could not be graded here (why).
    NotGradedHere(String),
    /// One failed (its name).
    Failed(String),
}

/// For a structure or performance check: what its part's correctness checks
/// (`correctness`, all run before it) came to; `None` for a correctness check.
fn part_verdict(records: &HashMap<String, TestReport>, correctness: &[String], kind: CheckKind) -> Option<PartVerdict> {
    if kind == CheckKind::Correctness {
        return None;
    }
    let ran: Vec<&TestReport> = correctness.iter().filter_map(|n| records.get(n)).collect();
    if let Some(t) = ran.iter().find(|t| t.status == Status::NotGradedHere) {
        return Some(PartVerdict::NotGradedHere(t.message.clone().unwrap_or_default()));
    }
    ran.iter().find(|t| t.status == Status::Fail).map(|t| PartVerdict::Failed(t.name.clone()))
}
