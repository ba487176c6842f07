//! `grader batch DIR`: grade a whole class, every folder under DIR one
//! submission; the flags a batch shares with `grader audit`'s regrade.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::ValueEnum as _;
use grader::batch::{self, submission::Shard};
use grader::grade::{self, BackendChoice};
use grader::policy::{self, Audience};
use grader::registry;

use super::grading_flags::GradingFlags;
use super::lms::LmsArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    batch: BatchArgs,
    #[command(flatten)]
    lms: LmsArgs,
}

#[derive(clap::Args)]
pub struct BatchArgs {
    /// The folder holding one folder per submission (GitHub Classroom's download layout).
    pub dir: PathBuf,
    /// Where results, staging, logs and the gradebook go (default: `grades` beside DIR).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Exercises to grade: `ex01,ex02` or `all`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub exercises: Vec<String>,
    /// One seed for every student (default: the seed OUT was graded with, or a random one).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Regrade results already in OUT.
    #[arg(long)]
    pub force: bool,
    /// Grade only shard i of n (0 <= i < n); `grader merge` combines the shards.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// GPUs to grade on (`CUDA_VISIBLE_DEVICES` ids), e.g. `0,1` (default: every GPU visible).
    #[arg(long, value_delimiter = ',')]
    pub gpus: Vec<String>,
    /// Seconds one part of one submission may take before it is stopped (verdict `timeout`).
    #[arg(long, default_value_t = 300.0)]
    pub part_timeout: f64,
    /// Seconds one kernel may run before it is declared stuck.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    #[command(flatten)]
    pub grading: GradingFlags,
    /// Grade every part in a process of its own (slower; no state is shared between parts).
    #[arg(long)]
    pub isolate: bool,
    /// Worker processes per GPU: while one times kernels, the others compile,
    /// compute CPU references and run correctness checks (ignored with --isolate).
    /// Default: 3 on a GPU of 12 GiB or more in a host of 16 GiB or more, else 2.
    #[arg(long)]
    pub workers_per_gpu: Option<usize>,
    /// Also regrade alone a part whose kernel got stuck in a worker (its verdicts
    /// are already those of a fresh process; this costs the kernel time limit again).
    #[arg(long)]
    pub regrade_hangs: bool,
    /// Limit each correctness check to MULT times the reference kernel's time on
    /// the same input (graded once before the class), at least --timeout-floor and
    /// at most --timeout: an endless kernel then costs about a second, not --timeout.
    /// Default: 50 on a GPU where the course's reference/ is found, else off
    /// (docs/ta-guide.md); `off` keeps --timeout for every check.
    #[arg(long, value_name = "MULT|off")]
    pub timeout_from_reference: Option<grader::check_limits::FromReference>,
    /// The shortest limit --timeout-from-reference gives a check, in seconds.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub timeout_floor: f64,
    /// Do not calibrate a GPU model that has no calibration before grading
    /// (its grades then use the nearest calibrated model, and say so).
    #[arg(long)]
    pub no_calibrate: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Args { batch: args, lms } = args;
    if !args.no_calibrate && matches!(args.grading.calibration, grader::calibrate::Choice::Auto(_)) {
        calibrate_first(&args)?;
    }
    let out = args.out.clone().unwrap_or_else(|| batch::default_out(&args.dir));
    let opts = batch_options(args, out)?;
    if !opts.dir.is_dir() {
        anyhow::bail!("{} is not a folder of submissions", opts.dir.display());
    }
    let summary = batch::run(&opts)?;
    // The whole class's report, from what the batch wrote (class_report reads a batch's output).
    grader::class_report::after_batch(&opts.out);
    print!("{summary}");
    lms.write(&opts.out)?;
    Ok(if summary.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

/// What `grader batch` (and the audit's regrade) runs with, results going to `out`.
pub fn batch_options(args: BatchArgs, out: PathBuf) -> Result<batch::Options> {
    // Resolved here, from the course's own copy: a child's root is a staged submission.
    let course = super::default_root().unwrap_or_else(|_| PathBuf::from("."));
    let policy = policy::resolve(&course, args.grading.perf_without_gpu, Audience::Gradescope)?;
    // Its workers and children get the policy as a flag: this says where it really came from.
    std::env::set_var(policy::SET_BY_ENV, &policy.set_by);
    let sanitize = args.grading.sanitize.to_possible_value().expect("named").get_name().to_string();
    let mut grading_flags =
        vec!["--sanitize".into(), sanitize, "--perf-without-gpu".into(), policy.perf_without_gpu.name().into()];
    // A child's root is a staged submission: the course's calibrations are named for it,
    // and its choice of credit is passed on (the submission's own cuda-lab.toml is the student's).
    grading_flags.extend(["--calibration".into(), calibration_flag(&args.grading.calibration, &course)]);
    let credit = grader::credit::resolve(&course, args.grading.credit)?;
    grading_flags.extend(["--credit".into(), credit.name().into()]);
    Ok(batch::Options {
        timeout_from_reference: args.timeout_from_reference.unwrap_or(grader::check_limits::FromReference::Default),
        timeout_floor: Duration::from_secs_f64(args.timeout_floor),
        out,
        dir: args.dir,
        exercises: registry::select(&args.exercises)?,
        seed: args.seed,
        force: args.force,
        shard: args.shard,
        gpus: args.gpus,
        part_timeout: Duration::from_secs_f64(args.part_timeout),
        kernel_timeout: Duration::from_secs_f64(args.timeout),
        backend: args.backend,
        exe: std::env::current_exe().context("finding the grader's own binary")?,
        output_cap: 256 * 1024,
        grading_flags,
        isolate: args.isolate,
        workers_per_gpu: args.workers_per_gpu,
        regrade_hangs: args.regrade_hangs,
    })
}

/// `--calibration` for a batch's children: the course's folder in place of `auto`.
fn calibration_flag(choice: &grader::calibrate::Choice, course: &Path) -> String {
    use grader::calibrate::Choice;
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or(p.to_path_buf()).display().to_string();
    match choice {
        Choice::Off => "off".into(),
        Choice::File(p) => absolute(p),
        Choice::Auto(dirs) => match dirs.first() {
            Some(d) => absolute(d),
            None => {
                let dir = grader::calibrate::file::course_dir(course);
                if dir.is_dir() {
                    absolute(&dir)
                } else {
                    "auto".into()
                }
            }
        },
    }
}

/// Before a batch on a GPU: `grader calibrate --if-missing` on each GPU it
/// uses (a process of its own, so that the batch holds no CUDA context).
fn calibrate_first(args: &BatchArgs) -> Result<()> {
    let no_timing =
        matches!(args.backend, grade::BackendChoice::Sim | grade::BackendChoice::None | grade::BackendChoice::LuckySim);
    // No driver or no device (opens no context): nothing is timed, nothing to calibrate.
    if no_timing || kit::backend::cuda::gpu_count() == 0 {
        return Ok(());
    }
    let course = super::default_root().unwrap_or_else(|_| PathBuf::from("."));
    let gpus: Vec<Option<&String>> =
        if args.gpus.is_empty() { vec![None] } else { args.gpus.iter().map(Some).collect() };
    for gpu in gpus {
        let start = std::time::Instant::now();
        let mut cmd = std::process::Command::new(std::env::current_exe()?);
        cmd.args(["calibrate", "--if-missing", "--timeout", &args.timeout.to_string()]).arg("--root").arg(&course);
        if let Some(id) = gpu {
            cmd.env("CUDA_VISIBLE_DEVICES", id);
        }
        let status = cmd.status().context("starting `grader calibrate --if-missing`")?;
        let took = start.elapsed().as_secs_f64();
        if took > 5.0 {
            println!("calibrating this GPU model took {:.1} min (`--no-calibrate` skips it)", took / 60.0);
        }
        if !status.success() {
            println!(
                "calibration did not complete ({status}): the grades use the nearest calibrated model, and say so"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod credit_flag {
    use super::*;
    use crate::Cli;
    use clap::Parser as _;

    /// A batch passes its course's choice of credit to every worker and child
    /// (their root is a staged submission, whose cuda-lab.toml is the student's).
    #[test]
    fn the_credit_flag_parses_and_a_batch_passes_it_on() {
        let cli = Cli::try_parse_from(["grader", "ex01", "--credit", "scaled"]).unwrap();
        assert_eq!(cli.grade.grading.credit, Some(grader::credit::Credit::Scaled));
        assert!(Cli::try_parse_from(["grader", "ex01", "--credit", "half"]).is_err());
        let batch = Cli::try_parse_from(["grader", "batch", "class", "--credit", "scaled"]).unwrap();
        let Some(crate::Command::Batch(Args { batch: args, .. })) = batch.command else { panic!("a batch") };
        let opts = batch_options(args, PathBuf::from("out")).unwrap();
        let flags = opts.grading_flags.join(" ");
        assert!(flags.contains("--credit scaled"), "{flags}");
    }
}
