//! Orchestration: opens the environment, compiles every part (so a student
//! sees every compile error before any test runs), makes each check a trial
//! (or an ignored one, or its stand-in, as the policy says), starts the
//! sanitizer pass and the work done ahead, and runs the trials on one thread.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Result;
use kit::{CheckKind, Exercise, RunEnv};
use libtest_mimic::Trial;

use super::compile::{compile_options, compile_part, print_diagnostics, BuiltPart};
use super::environment::{open_environment, yardstick_compiler};
use super::finish::{Checked, Pending, Stage};
use super::no_compiler::without_compiler;
use super::side_by_side;
use super::trial::{in_running_order, make_trial, RunShared};
use super::{BackendChoice, Options};
use crate::ahead::{self, Ahead};
use crate::calibrate;
use crate::policy::{Instead, Policy};
use crate::sanitize::{self, Replay};
use crate::verdict::Verdict;

/// Compiles and runs every check of `exercises`; scoring waits for [`Pending::finish`].
pub fn start(exercises: &[Exercise], opts: &Options) -> Result<Pending> {
    kit::backend::traced::phase("start");
    let (mut env_report, gpu, compiler) = open_environment(opts)?;
    kit::backend::traced::phase("environment open");
    // The profiler's child (`--backend none`) compiles for the GPU it measures on.
    let arch = gpu.as_ref().map(|g| g.info().compute_capability).or_else(kit::counters::collecting_arch);
    let options = compile_options(arch);
    let can_time = gpu.as_ref().is_some_and(|g| g.capabilities().times_kernels);
    // `--backend none` only compiles: no grade to be fair about, the policy stays out.
    let policy = Policy { applied: gpu.is_some() && !can_time, ..opts.policy.clone() };
    env_report.policy = Some(policy.clone());
    // Which credit applies, in the grades JSON and the header.
    let credit = crate::credit::resolve(&opts.root, opts.credit)?;
    env_report.credit = Some(credit.name().into());
    // The simulator checks every launch itself; a GPU grade replays on it.
    let sanitizes_itself =
        gpu.as_ref().is_some_and(|g| g.capabilities().checks_accesses) && opts.backend != BackendChoice::LuckySim;
    let sanitizer = sanitize::Mode::of(opts.sanitize, gpu.is_some(), sanitizes_itself);
    env_report.sanitizer = Some(sanitizer.name().into());
    // The thresholds of this GPU's model (or the nearest), looked up by the kit's
    // `require_*` while the checks run; only where kernels are timed.
    let calibration = match gpu.as_ref().filter(|_| can_time) {
        Some(g) => {
            let chosen = calibrate::choose(&opts.calibration, &opts.root, g.info());
            chosen.install();
            env_report.calibration = Some(chosen.used(&g.info().name, &opts.root));
            Some(chosen)
        }
        None => {
            kit::calibration::install(None);
            None
        }
    };
    let compiler_for_env = compiler.as_ref().ok().cloned();
    if let (Err(why), false) = (&compiler, opts.test_args.list) {
        let (report, conclusion) = without_compiler(exercises, opts, env_report, why);
        return Ok(Pending(Stage::Finished(Box::new((report, conclusion)))));
    }
    println!("seed {} (rerun with --seed {})", opts.seed, opts.seed);
    println!("{}", crate::policy::header(&policy, gpu.is_some(), can_time, credit));
    if let Some(c) = &env_report.calibration {
        println!("{}", c.line);
    }
    // Compile first, so a student sees every compile error before any test runs.
    let mut parts = Vec::new();
    println!(
        "\nCompiling ({}, compute_{}{}; device headers: {})",
        env_report.compiler.as_deref().unwrap_or("no compiler"),
        options.arch.0,
        options.arch.1,
        env_report.device_headers.as_deref().unwrap_or("none")
    );
    // The course's header families, per exercise (cuda-lab.toml `[headers]`).
    let headers = crate::headers::resolve(&opts.root)?;
    for ex in exercises {
        let options = ptx_build::CompileOptions { headers: headers.for_exercise(ex.id), ..options.clone() };
        for part in &ex.parts {
            let rel = format!("{}/{}/{}", opts.sources, ex.folder_name(), part.file);
            let built = compile_part(&opts.root, &opts.sources, &rel, compiler.as_ref(), &options);
            println!("  {:<55} {}", rel, built.line());
            print_diagnostics(&opts.root.join(&rel), &built.report.diagnostics);
            parts.push(built);
        }
    }
    println!();
    kit::backend::traced::phase("compiled");
    // A file that included a device header has settled where headers come from
    // (the toolkit's, or just installed): the report says what was used.
    if let Some(c) = &compiler_for_env {
        env_report.device_headers = Some(c.header_source());
    }

    // The GPU's own counters for the structure checks' measurements, read
    // before anything is timed (crate::counters); said once in the header.
    let measured = measured_parts(exercises, &parts);
    // The shapes the structure checks measure: the profiler's child measures the same.
    let shapes_secret = kit::shapes_secret();
    if can_time && !opts.test_args.list {
        let selection = crate::counters::Selection {
            root: &opts.root,
            sources: &opts.sources,
            seed: opts.seed,
            test_args: &opts.test_args,
            gpu: gpu.as_ref().map(|g| g.info().name.as_str()).unwrap_or_default(),
            parts: measured.clone(),
            shapes_secret,
            stall: crate::counters::stall_limit(opts.timeout),
        };
        env_report.counters = Some(crate::counters::read_for(exercises, &selection));
        println!("hardware counters: {}", env_report.counters.as_deref().unwrap_or_default());
    }
    let yardstick_compiler = compiler_for_env.clone().map(|c| yardstick_compiler(c, can_time));
    let new_env = |gpu: Option<kit::Gpu>| {
        Arc::new(
            RunEnv::new(opts.seed, gpu, yardstick_compiler.clone(), options.clone()).with_shapes_secret(shapes_secret),
        )
    };
    let env = new_env(gpu.clone());
    let env_on_own_simulator = || new_env(Some(side_by_side::simulator(opts.backend, opts.timeout)));
    // On the simulator, parts are graded side by side, a simulator each, and
    // a part's correctness cases side by side, a simulator each (side_by_side).
    let at_once = exercises
        .iter()
        .flat_map(|ex| &ex.parts)
        .zip(&parts)
        .filter(|(_, built)| built.build.is_ok())
        .map(|(part, _)| part.checks.iter().filter(|c| c.kind == CheckKind::Correctness).count().max(1))
        .sum();
    // `--test-threads` (a batch worker's 1) caps them.
    let threads =
        side_by_side::threads(gpu.as_ref(), at_once).min(opts.test_args.test_threads.unwrap_or(usize::MAX)).max(1);
    let run = RunShared::default();
    let (mut by_part, mut all_turns) = (Vec::new(), Vec::new());
    // Tests that cannot run here, and why; and those judged by a stand-in instead.
    let mut ignored: HashMap<String, &'static str> = HashMap::new();
    let mut stand_ins = std::collections::HashSet::new();
    // Timed checks this GPU's calibration does not grade (the gap is too narrow here), and why.
    let mut uncalibrated: HashMap<String, String> = HashMap::new();
    // Timed checks whose points the course scales by speed (crate::credit), and where from.
    let mut scaled: HashMap<String, crate::credit::Scale> = HashMap::new();
    let mut replays = Vec::new();
    let mut ahead_jobs = Vec::new();
    let mut built_iter = parts.iter();
    for ex in exercises {
        for part in &ex.parts {
            let built = built_iter.next().expect("one build per part");
            let (env, turns) = match threads {
                1 => (env.clone(), None),
                _ => (env_on_own_simulator(), Some(Arc::default())),
            };
            all_turns.extend(turns.clone());
            let turn = |beside: bool| {
                turns
                    .as_ref()
                    .map(|t: &Arc<side_by_side::Turns>| (t.clone(), if beside { t.enrol_beside() } else { t.enrol() }))
            };
            let mut trials = Vec::new();
            // The part's correctness checks, whose outcome decides what the others count for.
            let correctness: Arc<Vec<String>> = Arc::new(
                part.checks
                    .iter()
                    .filter(|c| c.kind == CheckKind::Correctness)
                    .map(|c| ex.test_name(part, c))
                    .collect(),
            );
            for check in in_running_order(&part.checks) {
                let name = ex.test_name(part, check);
                // Side by side, a correctness case runs beside the part's others,
                // on a simulator (and so a module) of its own.
                let beside = turns.is_some() && check.kind == CheckKind::Correctness;
                let (env, own_build) = match beside {
                    true => (env_on_own_simulator(), Some(built.again())),
                    false => (env.clone(), None),
                };
                let built = own_build.as_ref().unwrap_or(built);
                let caps = gpu.as_ref().map(|g| g.capabilities()).unwrap_or_default();
                let skip_reason = match (check.needs_gpu(), &gpu) {
                    (true, None) => Some("no GPU"),
                    (true, Some(_)) if !caps.times_kernels && check.kind == CheckKind::Performance => {
                        Some("needs real timing")
                    }
                    (true, Some(_)) if !caps.full_speed && check.heavy => Some(crate::policy::TOO_BIG_TO_SIMULATE),
                    _ => None,
                };
                if let (sanitize::Mode::Pass, Replay::Yes, Ok(build)) =
                    (sanitizer, sanitize::replay(check, &name, &opts.test_args), &built.build)
                {
                    let ptx = Arc::new(build.ptx.clone());
                    replays.push(sanitize::Case::new(name.clone(), check.clone(), ptx));
                }
                let not_graded = match (skip_reason, check.kind, &calibration) {
                    (None, CheckKind::Performance, Some(c)) => c.not_graded(&name),
                    _ => None,
                };
                if let (None, CheckKind::Performance, Some(c), crate::credit::Credit::Scaled) =
                    (skip_reason, check.kind, &calibration, credit)
                {
                    if let Some(scale) = c.scale(&name) {
                        scaled.insert(name.clone(), scale);
                    }
                }
                if let Some(why) = not_graded {
                    uncalibrated.insert(name.clone(), why);
                    let trial = match &check.stand_in {
                        // The measured stand-in grades the lesson instead.
                        Some(stand_in) => {
                            let stand_in = kit::Check { run: stand_in.clone(), ..check.clone() };
                            if let Ok(build) = &built.build {
                                ahead_jobs.push(ahead::Job::stand_in(name.clone(), stand_in.clone(), build.clone()));
                            }
                            let turn = turn(beside);
                            let t = make_trial(name, stand_in, built, &env, &run, &correctness, turn.clone());
                            (t, turn)
                        }
                        None => {
                            ignored.insert(name.clone(), calibrate::NOT_GRADED_HERE);
                            let t = Trial::test(name.clone(), || Ok(()))
                                .with_ignored_flag(true)
                                .with_kind(calibrate::NOT_GRADED_HERE);
                            (t, None)
                        }
                    };
                    trials.push(trial);
                    continue;
                }
                let trial = match skip_reason.map(|reason| (reason, policy.instead(check))) {
                    Some((_, Instead::StandIn)) => {
                        stand_ins.insert(name.clone());
                        let stand_in = kit::Check { run: check.stand_in.clone().expect("has one"), ..check.clone() };
                        let turn = turn(beside);
                        (make_trial(name, stand_in, built, &env, &run, &correctness, turn.clone()), turn)
                    }
                    Some((reason, _)) => {
                        ignored.insert(name.clone(), reason);
                        (Trial::test(name.clone(), || Ok(())).with_ignored_flag(true).with_kind(reason), None)
                    }
                    None => {
                        if let Ok(build) = &built.build {
                            ahead_jobs.push(ahead::Job::of(name.clone(), check.clone(), build.clone()));
                        }
                        let turn = turn(beside);
                        (make_trial(name, check.clone(), built, &env, &run, &correctness, turn.clone()), turn)
                    }
                };
                trials.push(trial);
            }
            by_part.push(trials);
        }
    }

    let mut args = opts.test_args.clone();
    // Kernels are timed: two checks must never share a GPU. On the
    // simulator, parts may run side by side, a part's checks in turn.
    args.test_threads = Some(threads);
    let trials = side_by_side::running_order(by_part, &args);
    // The sanitizer pass runs on other cores while the GPU works through the tests.
    let pass =
        (!replays.is_empty()).then(|| sanitize::Pass::start(replays, opts.seed, compiler_for_env, options.clone()));
    // Only for a whole run on a GPU: a filtered one (or a listing) would run checks
    // it does not grade, and on the simulator the checks use every core.
    let whole_run = args.filter.is_none() && args.skip.is_empty() && !args.ignored && !args.list;
    let ahead =
        (can_time && whole_run).then(|| Ahead::start(opts.seed, shapes_secret, options, ahead_jobs, &run.ahead));
    let conclusion = libtest_mimic::run(&args, trials);
    side_by_side::credit(&all_turns);
    if kit::counters::collecting() {
        // The child run under the profiler: its launches were all it was for,
        // and the parts it measured may be kept (kit::counters::cache).
        for (part, ptx) in &measured {
            kit::counters::cache::mark_profiled(part, ptx);
        }
        std::process::exit(0);
    }
    kit::counters::clear();
    drop(ahead);
    kit::backend::traced::phase("checks run");
    let records = std::mem::take(&mut *run.records.lock().unwrap());
    if let Some(pass) = &pass {
        for stuck in records.values().filter(|t| t.verdict.as_deref().is_some_and(|v| Verdict::from(v).never_ended())) {
            let part: String = stuck.name.split("::").take(2).map(|s| format!("{s}::")).collect();
            pass.cancel_part(&part);
        }
    }
    Ok(Pending(Stage::Checked(Box::new(Checked {
        exercises: exercises.to_vec(),
        parts,
        records,
        ignored,
        stand_ins,
        uncalibrated,
        scaled,
        policy,
        sanitizer,
        pass,
        conclusion,
        env_report,
        seed: opts.seed,
        root: opts.root.clone(),
        sources: opts.sources.clone(),
        test_args: opts.test_args.clone(),
    }))))
}

/// Every compiled part with a structure check (`ex07::coalesced`) and its PTX:
/// what the GPU's counters are read for.
fn measured_parts<'a>(exercises: &[Exercise], built: &'a [BuiltPart]) -> Vec<(String, &'a str)> {
    let parts = exercises.iter().flat_map(|ex| ex.parts.iter().map(move |p| (ex, p)));
    parts
        .zip(built)
        .filter(|((_, part), _)| part.checks.iter().any(|c| c.kind == CheckKind::Structure))
        .filter_map(|((ex, part), b)| {
            b.build.as_ref().ok().map(|build| (format!("{}::{}", ex.id, part.name), build.ptx.as_str()))
        })
        .collect()
}
