//! Every test can fail, proven (issue 23, item 7): for every correctness check
//! of every exercise (taken from the grader's registry, so a new check or
//! exercise is covered without editing this file), mutant kernels that keep
//! the part's signature but write nothing, write zeros, write a constant, copy
//! an input into the output, or replay the outputs a correct kernel produced
//! for another seed are graded on the simulator, and each must fail each
//! check it is run against. A mutant that passes is a weakness of the check:
//! the failure names the check and the mutant.
//!
//! The normal lane runs one check of every exercise (the first correctness
//! check of its first part); the whole sweep is `#[ignore]`d, for .ci/run:
//! `cargo test -p grader --test suite -- --ignored can_fail::`.
//!
//! Checks too large for the simulator (`heavy`) are graded on a GPU only and
//! are listed, not run. Timed launches are covered by their own test below:
//! a kernel that computes only on its first launch fails the timing check.

#[path = "can_fail/mutants.rs"]
mod mutants;
#[path = "can_fail/recorder.rs"]
mod recorder;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kit::backend::BackendError;
use kit::exercise::MissingKernel;
use kit::gpu::OutOfBounds;
use kit::inspect::WrongSignature;
use kit::{Check, CheckKind, Ctx, Exercise, Gpu, Part, PartBuild, RunEnv, Skip};
use mutants::{Kind, Signature};
use ptx_build::{Compiler, SourceFile};
use recorder::{CountingDevice, Launch, Recorder};

/// The seed the mutants are graded with.
const GRADE_SEED: u64 = 2;
/// The seed whose correct outputs the replaying mutant hard-codes.
const REPLAY_SEED: u64 = 1;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The checks one part is swept with.
struct Sweep<'a> {
    exercise: &'a Exercise,
    part: &'a Part,
    checks: Vec<&'a Check>,
}

/// What the sweep found.
#[derive(Default)]
struct Findings {
    /// A mutant passed a check, a check could not judge one, or a mutant was
    /// itself broken (it must fail for what it computes, nothing else).
    problems: Vec<String>,
    /// Per check: (mutants run against it, mutants it failed).
    coverage: BTreeMap<String, (usize, usize)>,
    /// Checks left to a GPU.
    heavy: Vec<String>,
    /// (check, mutant) pairs where an input-copying mutant computes exactly
    /// what the reference does, so it is a correct kernel on that input.
    equivalent: Vec<String>,
}

/// The launches wrote the same outputs, launch by launch.
fn same_outputs(a: &[Launch], b: &[Launch]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.output_after.is_some() && x.output_after == y.output_after)
}

fn env(seed: u64, gpu: Gpu, compiler: &Compiler) -> RunEnv {
    RunEnv::new(seed, Some(gpu), Some(compiler.clone()), grader::grade::compile_options(None))
}

/// Runs `check` on `ptx` with a fresh simulator `gpu`.
fn run_check(ex: &Exercise, part: &Part, check: &Check, ptx: &str, env: &RunEnv) -> anyhow::Result<String> {
    let name = ex.test_name(part, check);
    let build = PartBuild::new(ptx.to_string());
    let ctx = Ctx::new(&name, env, &build);
    env.gpu.as_ref().unwrap().begin_check();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (check.run)(&ctx)))
        .unwrap_or_else(|_| Err(anyhow::anyhow!("the check panicked")))
}

/// Failures that say the mutant itself is ill-formed, not that its numbers are wrong.
fn mutant_is_broken(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<OutOfBounds>().is_some()
            || c.downcast_ref::<WrongSignature>().is_some()
            || c.downcast_ref::<MissingKernel>().is_some()
            || matches!(
                c.downcast_ref::<BackendError>(),
                Some(
                    BackendError::OutOfBoundsRead(_)
                        | BackendError::OutOfBoundsWrite(_)
                        | BackendError::LoadFailed(_)
                        | BackendError::MissingKernel(_)
                        | BackendError::MissingSymbol(_)
                        | BackendError::LaunchFailed(_)
                        | BackendError::NotSimulated(_)
                        | BackendError::UninitialisedRead(_)
                )
            )
    })
}

fn compile(compiler: &Compiler, name: &str, text: &str) -> String {
    let src = SourceFile::from_text(name, text);
    match compiler.compile(&src, &grader::grade::compile_options(None)) {
        Ok(ptx) => ptx.text,
        Err(e) => panic!("the generated mutant {name} does not compile: {e}\n{text}"),
    }
}

/// The reference's launches for every check at `seed`, keeping the outputs;
/// the reference must pass each check (else the sweep proves nothing).
fn reference_launches(
    sweep: &Sweep,
    ptx: &str,
    sigs: &[Signature],
    compiler: &Compiler,
    seed: u64,
) -> BTreeMap<String, Vec<Launch>> {
    let mut by_check = BTreeMap::new();
    for check in &sweep.checks {
        let (backend, recording) = Recorder::new();
        recording.keep_output(sigs[0].output());
        let env = env(seed, Gpu::new(Box::new(backend), Duration::MAX), compiler);
        let name = sweep.exercise.test_name(sweep.part, check);
        if let Err(e) = run_check(sweep.exercise, sweep.part, check, ptx, &env) {
            panic!("the reference fails {name} at seed {seed}: {e:#}");
        }
        by_check.insert(name, recording.take());
    }
    by_check
}

/// Grades every mutant of one part against the sweep's checks.
fn sweep_part(sweep: &Sweep, compiler: &Compiler, findings: &mut Findings, extra: Option<(&str, &str)>) {
    let (ex, part) = (sweep.exercise, sweep.part);
    let rel = format!("reference/{}/{}", ex.folder_name(), part.file);
    let text = std::fs::read_to_string(root().join(&rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let sigs: Vec<Signature> = part.kernels.iter().map(|k| mutants::signature(&text, k)).collect();
    let preamble = mutants::preamble(&text);
    let reference = compile(compiler, &rel, &text);
    let graded = reference_launches(sweep, &reference, &sigs, compiler, GRADE_SEED);
    let replayed = reference_launches(sweep, &reference, &sigs, compiler, REPLAY_SEED);
    let all_graded: Vec<Launch> = graded.values().flatten().cloned().collect();

    // (label, source, the one check it is for, if any)
    let mut candidates: Vec<(String, String, Option<String>)> = Vec::new();
    for kind in mutants::kinds(&sigs, REPLAY_SEED) {
        let label = kind.label(&sigs[0]);
        if matches!(kind, Kind::Replay { .. }) {
            // One replay per check: its launches' outputs at the other seed, in order.
            for (name, launches) in &replayed {
                candidates.push((
                    label.clone(),
                    mutants::source(&preamble, &sigs, &kind, launches),
                    Some(name.clone()),
                ));
            }
        } else {
            candidates.push((label, mutants::source(&preamble, &sigs, &kind, &all_graded), None));
        }
    }
    // A kernel known to be right, as a mutant: the self-test of the detector.
    if let Some((label, source)) = extra {
        candidates.push((label.into(), source.into(), None));
    }
    for (label, source, only) in candidates {
        let file = format!("<mutant>/{}/{}/{label}.cu", ex.id, part.name);
        let ptx = compile(compiler, &file, &source);
        for check in &sweep.checks {
            let name = ex.test_name(part, check);
            if only.as_ref().is_some_and(|only| *only != name) {
                continue;
            }
            // A replay is run only where every output of the check was small enough to hard-code.
            if label.starts_with("replays-") {
                let small = replayed[&name]
                    .iter()
                    .all(|l| l.output_after.as_ref().is_some_and(|o| o.len() <= mutants::MAX_REPLAY_BYTES));
                if !small {
                    continue;
                }
            }
            let (backend, recording) = Recorder::new();
            recording.keep_output(sigs[0].output());
            let env = env(GRADE_SEED, Gpu::new(Box::new(backend), Duration::MAX), compiler);
            let result = run_check(ex, part, check, &ptx, &env);
            // A copy that is the right answer on this input (a 1x1 transpose,
            // a one-element sum) is a correct kernel here: no check could fail it.
            if result.is_ok() && label.starts_with("copies-") && same_outputs(&recording.take(), &graded[&name]) {
                findings.equivalent.push(format!("{name}: `{label}` is right on this input"));
                continue;
            }
            let entry = findings.coverage.entry(name.clone()).or_default();
            entry.0 += 1;
            match result {
                Ok(note) => findings.problems.push(format!("{name}: the mutant `{label}` PASSES ({note})")),
                Err(e) if e.downcast_ref::<Skip>().is_some() => {
                    findings.problems.push(format!("{name}: could not judge the mutant `{label}`: {e:#}"))
                }
                Err(e) if mutant_is_broken(&e) => findings.problems.push(format!(
                    "{name}: the mutant `{label}` is itself broken (fix the generator): {e:#}\n{source}"
                )),
                Err(_) => entry.1 += 1,
            }
        }
    }
}

/// The sweeps of `exercises`: every part and every correctness check the
/// simulator runs, or (`quick`) the first of the first part of each exercise.
fn sweeps(exercises: &[Exercise], quick: bool, findings: &mut Findings) -> Vec<(usize, usize, Vec<usize>)> {
    let mut out = Vec::new();
    for (e, ex) in exercises.iter().enumerate() {
        for (p, part) in ex.parts.iter().enumerate() {
            let mut checks = Vec::new();
            for (c, check) in part.checks.iter().enumerate() {
                if check.kind != CheckKind::Correctness {
                    continue;
                }
                if check.heavy {
                    findings.heavy.push(ex.test_name(part, check));
                } else {
                    checks.push(c);
                }
            }
            assert!(!checks.is_empty(), "{}::{} has no correctness check the simulator runs", ex.id, part.name);
            if quick {
                checks.truncate(1);
            }
            out.push((e, p, checks));
            if quick {
                break;
            }
        }
    }
    out
}

fn run(quick: bool) -> Findings {
    let mut findings = Findings::default();
    let Some(compiler) = kit::trial::compiler() else { return findings };
    let exercises = grader::registry::all();
    let start = Instant::now();
    for (e, p, checks) in sweeps(&exercises, quick, &mut findings) {
        let (exercise, part) = (&exercises[e], &exercises[e].parts[p]);
        let sweep = Sweep { exercise, part, checks: checks.iter().map(|&c| &part.checks[c]).collect() };
        let t = Instant::now();
        sweep_part(&sweep, &compiler, &mut findings, None);
        eprintln!("{}::{}: {} check(s) in {:.1} s", exercise.id, part.name, checks.len(), t.elapsed().as_secs_f64());
    }
    eprintln!("swept in {:.1} s", start.elapsed().as_secs_f64());
    findings
}

/// Fails on any problem, and on any check that no mutant was run against or
/// that some mutant passed.
fn require_every_check_fails_every_mutant(findings: &Findings) {
    for (check, (run, failed)) in &findings.coverage {
        eprintln!("{check}: {failed} of {run} mutants failed it");
    }
    for pair in &findings.equivalent {
        eprintln!("{pair} (not counted)");
    }
    for check in &findings.heavy {
        eprintln!("{check}: graded on a GPU only (too large for the simulator), not swept");
    }
    let uncovered: Vec<&String> = findings.coverage.iter().filter(|(_, (_, f))| *f == 0).map(|(c, _)| c).collect();
    assert!(
        findings.problems.is_empty() && uncovered.is_empty(),
        "{} problem(s):\n{}\nchecks no mutant failed: {uncovered:?}",
        findings.problems.len(),
        findings.problems.join("\n")
    );
}

/// The normal lane: one correctness check of every exercise, every mutant.
#[test]
fn every_exercise_fails_every_mutant() {
    let findings = run(true);
    if kit::trial::compiler().is_some() {
        assert_eq!(findings.coverage.len(), grader::registry::all().len(), "one check per exercise");
    }
    require_every_check_fails_every_mutant(&findings);
}

/// The whole sweep (several minutes): `cargo test -p grader --test suite -- --ignored can_fail::`.
#[test]
#[ignore = "several minutes: every correctness check of every part; .ci/run runs it"]
fn every_correctness_check_fails_every_mutant() {
    let findings = run(false);
    let exercises = grader::registry::all();
    if kit::trial::compiler().is_some() {
        for ex in &exercises {
            for part in &ex.parts {
                for check in part.checks.iter().filter(|c| c.kind == CheckKind::Correctness) {
                    let name = ex.test_name(part, check);
                    assert!(
                        findings.coverage.contains_key(&name) || findings.heavy.contains(&name),
                        "{name} was not swept"
                    );
                }
            }
        }
    }
    require_every_check_fails_every_mutant(&findings);
}

/// The detector can fail: the reference itself, offered as a mutant, is
/// reported as passing, with the check's name.
#[test]
fn a_kernel_that_is_right_is_reported_with_the_check_it_passes() {
    let Some(compiler) = kit::trial::compiler() else { return };
    let exercises = grader::registry::all();
    let ex = exercises.iter().find(|e| e.id == "ex01").unwrap();
    let part = &ex.parts[0];
    let check = part.checks.iter().find(|c| c.kind == CheckKind::Correctness && !c.heavy).unwrap();
    let sweep = Sweep { exercise: ex, part, checks: vec![check] };
    let reference =
        std::fs::read_to_string(root().join(format!("reference/{}/{}", ex.folder_name(), part.file))).unwrap();
    let mut findings = Findings::default();
    sweep_part(&sweep, &compiler, &mut findings, Some(("the-reference", &reference)));
    let name = ex.test_name(part, check);
    assert_eq!(findings.problems.len(), 1, "{:?}", findings.problems);
    assert!(
        findings.problems[0].starts_with(&format!("{name}: the mutant `the-reference` PASSES")),
        "{:?}",
        findings.problems
    );
}

/// ex02's dot, right on its first launch only: the last block of that launch
/// sets a flag (after an atomic ticket), and every later launch returns at once,
/// leaving whatever the output held. Fast when timed, and its output is right
/// unless the timed launches' own output is checked.
const FIRST_LAUNCH_ONLY: &str = r#"
#define THREADS 256
__device__ unsigned int tickets;
__device__ volatile unsigned int done;

extern "C" __global__ void dot(const float *a, const float *b, int n, float *partial)
{
    __shared__ float cache[THREADS];
    __shared__ unsigned int skip;
    unsigned int t = threadIdx.x;
    if (t == 0)
        skip = done;
    __syncthreads();
    if (skip)
        return;
    float sum = 0.0f;
    unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < (unsigned int)n; i += stride)
        sum += a[i] * b[i];
    cache[t] = sum;
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s)
            cache[t] += cache[t + s];
    }
    if (t == 0) {
        partial[blockIdx.x] = cache[0];
        __threadfence();
        if (atomicAdd(&tickets, 1) == gridDim.x - 1)
            done = 1;
    }
}
"#;

/// A timing check's output is checked on the very launches that are timed:
/// ex02's timing, run on the simulator dressed as a GPU that times by the work
/// it counts, fails a kernel that computes only on its first launch, and does not
/// fail the reference for its output.
#[test]
fn a_kernel_right_only_on_its_first_launch_fails_the_timing() {
    let Some(compiler) = kit::trial::compiler() else { return };
    let exercises = grader::registry::all();
    let ex = exercises.iter().find(|e| e.id == "ex02").unwrap();
    let part = &ex.parts[0];
    let check = part.checks.iter().find(|c| c.kind == CheckKind::Performance).expect("ex02 has a timed check");
    let reference = std::fs::read_to_string(root().join("reference/ex02-dot/kernels/dot.cu")).unwrap();
    let grade = |name: &str, source: &str| {
        let ptx = compile(&compiler, name, source);
        // 4 MiB of "device memory": 64 Ki elements per input.
        let env = env(GRADE_SEED, Gpu::new(Box::new(CountingDevice::new(4 << 20)), Duration::MAX), &compiler);
        run_check(ex, part, check, &ptx, &env).map_err(|e| format!("{e:#}"))
    };
    let cheat = grade("<test>/first_launch_only.cu", FIRST_LAUNCH_ONLY).expect_err("the cheat passes the timing");
    eprintln!("{cheat}");
    assert!(cheat.contains("wrong when timed: launch 2 "), "{cheat}");
    match grade("reference/ex02-dot/kernels/dot.cu", &reference) {
        Ok(_) => {}
        // The simulator's "times" say nothing of a GPU's: only the output matters here.
        Err(e) => assert!(e.contains("too slow") && !e.contains("wrong when timed"), "{e}"),
    }
}
