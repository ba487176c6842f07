//! `grader`: compiles students' CUDA files, runs seeded correctness, structure
//! and performance checks as a libtest-mimic test suite, and writes JSON scores.
//!
//! This file is the front door only: the command line's model (`Cli`, the
//! list of commands) and the dispatch. Each command's flags and its `run`
//! live in `cli/<command>.rs`, and every `run` builds the options the grader
//! library takes (`grader::grade`, `grader::batch`, ...).

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(
    name = "grader",
    version,
    about = "Grades the cuda-lab exercises: compile, run seeded tests on the GPU, score.",
    after_help = "Examples:\n  grader ex01                 grade your ex01 files\n  grader all --reference      grade the instructor's solutions\n  grader ex04 --seed 42       rerun with the inputs of seed 42\n  grader ex01 -- shared       only tests whose name contains `shared` (libtest filter)\n  grader list                 the exercises and their parts\n  grader batch class/         grade a whole class (docs/ta-guide.md)",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    // Grading the exercises named (no command): cli/grade.rs.
    #[command(flatten)]
    grade: cli::grade::Args,
}

#[derive(Subcommand)]
enum Command {
    /// List the exercises, their parts, files and points.
    List,
    /// Measure every performance threshold on this GPU (needs a CUDA GPU; 3 to 6
    /// minutes on an H100 or an H200): writes calibration/<gpu model>.toml and a copy in the cache.
    Calibrate(cli::calibrate::Args),
    /// Keep the GPU busy streaming memory for SECONDS, then stop: a noisy
    /// neighbour for trying grading on a shared GPU.
    GpuLoad(cli::gpu_load::Args),
    /// Grade a whole class: every folder under DIR is one submission.
    Batch(cli::batch::Args),
    /// Combine the gradebooks of several shards (or batches) into one.
    Merge(cli::merge::Args),
    /// Turn a grades JSON (or a batch's submissions/<key>.json) into a course platform's results.
    Report(cli::report::Args),
    /// Every exercise and part with its last result (also what `grader` alone shows).
    Status(cli::status::Args),
    /// Re-grade an exercise whenever one of its .cu files is saved (q quits, h hints).
    Watch(cli::watch::Args),
    /// The next hint for the first failing check of an exercise (or of one part).
    Hint(cli::hint::Args),
    /// Experiments from the notes, drawn in the report: `coalescing`.
    Lab(cli::lab::Args),
    /// Rewrite grader/data/baseline-profiles.json: the reference kernels' memory
    /// profiles on the simulator, which the HTML report draws students' figures against.
    /// With exercises (`grader baseline-profiles ex10 ex11`), only their entries
    /// are regraded and replaced; every other entry stays byte for byte.
    #[command(hide = true)]
    BaselineProfiles(cli::baseline_profiles::Args),
    /// Write something new for the course: `grader new exercise ex09-slug` (docs/authoring.md).
    #[command(subcommand)]
    New(cli::new::New),
    /// Write the students' template repository (no reference solutions) into DIR.
    ExportTemplate(cli::export_template::Args),
    /// Compare two output-digest files (CUDA_LAB_OUTPUT_DIGESTS) from the same seed
    /// on two backends, e.g. the GPU and the simulator.
    CompareDigests(cli::compare_digests::Args),
    /// Run the differential corpus (grader/differential) on one backend; write one
    /// output digest per buffer to OUT, for compare-digests.
    #[command(hide = true)]
    Differential(cli::differential::Args),
    /// Grade parts sent as JSON lines on stdin, one process for many (started by `grader batch`).
    #[command(hide = true)]
    BatchWorker(cli::batch_worker::Args),
    /// Regrade a class and list every score Classroom recorded that differs, and every edited workflow.
    Audit(cli::audit::Args),
    /// Write OUT/class-report.html from a batch's output folder OUT (a batch writes it too): scores,
    /// verdicts, the checks failed most often, memory lessons, performance, time, similarity.
    ClassReport(cli::class_report::Args),
    /// Generate a class of submissions (reference, stubs, broken variants) for tests and throughput runs.
    MakeClass(cli::make_class::Args),
}

fn main() -> ExitCode {
    kit::backend::traced::phase("main");
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Some(command) => run_command(command),
        // `grader` alone: what `grader status` shows.
        None if cli.grade.exercises.is_empty() => cli::status::run(cli::status::Args { root: cli.grade.root }),
        None => cli::grade::run(cli.grade),
    }
}

fn run_command(command: Command) -> Result<ExitCode> {
    use cli::*;
    match command {
        Command::List => list::run(),
        Command::Calibrate(args) => calibrate::run(args),
        Command::GpuLoad(args) => gpu_load::run(args),
        Command::Batch(args) => batch::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Report(args) => report::run(args),
        Command::Status(args) => status::run(args),
        Command::Watch(args) => watch::run(args),
        Command::Hint(args) => hint::run(args),
        Command::Lab(args) => lab::run(args),
        Command::BaselineProfiles(args) => baseline_profiles::run(args),
        Command::New(new) => new::run(new),
        Command::ExportTemplate(args) => export_template::run(args),
        Command::CompareDigests(args) => compare_digests::run(args),
        Command::Differential(args) => differential::run(args),
        Command::BatchWorker(args) => batch_worker::run(args),
        Command::Audit(args) => audit::run(args),
        Command::ClassReport(args) => class_report::run(args),
        Command::MakeClass(args) => make_class::run(args),
    }
}
