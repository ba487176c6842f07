//! `grader`: compiles students' CUDA files, runs seeded correctness, structure
//! and performance checks as a libtest-mimic test suite, and writes JSON scores.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use clap::ValueEnum as _;
use grader::batch::{self, gradebook, student::StudentReport, submission::Shard};
use grader::grade::{self, BackendChoice};
use grader::policy::{self, Audience, PerfWithoutGpu};
use grader::report::GradeReport;
use grader::sanitize::Sanitize;
use grader::{classroom, gradescope, registry, student, template};

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

    /// Exercises to grade: `ex01`, `ex01-pi`, `pi`, or `all`.
    exercises: Vec<String>,

    /// Grade the reference solutions in reference/ instead of exercises/.
    #[arg(long, conflicts_with = "sources")]
    reference: bool,

    /// Grade the .cu files under this folder of the root instead of exercises/
    /// (e.g. reference/slow: the deliberately slow variants used for calibration).
    #[arg(long)]
    sources: Option<String>,

    /// Seed for every input; printed and stored in the JSON. Random when absent.
    #[arg(long)]
    seed: Option<u64>,

    /// Folder holding exercises/ and reference/ (default: the current folder if it
    /// has exercises/, otherwise this workspace).
    #[arg(long)]
    root: Option<PathBuf>,

    /// Where to write the JSON scores (default: <root>/target/grades/<selection>.json).
    #[arg(long)]
    json: Option<PathBuf>,

    /// Grade only this part of the (single) selected exercise.
    #[arg(long)]
    part: Option<String>,

    /// Where kernels run.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,

    /// Seconds one kernel may run before it is declared stuck.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,

    #[command(flatten)]
    grading: GradingFlags,

    /// Also write the results for a course platform (docs/classroom.md, docs/platforms.md).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    /// With --format classroom: the file to append `ex01=<base64>` step outputs
    /// to (default: $GITHUB_OUTPUT when set).
    #[arg(long)]
    github_output: Option<PathBuf>,

    /// With --format gradescope, prairielearn or junit: where the results go
    /// (default: <root>/target/grades/results.json, or junit.xml).
    #[arg(long)]
    results: Option<PathBuf>,

    /// Which maximum the platforms' files receive (default: cuda-lab.toml
    /// `[platforms] maximum`, else graded-here; docs/platforms.md).
    #[arg(long, value_enum)]
    maximum: Option<grader::platforms::Maximum>,

    /// Do not write target/grades/report.html (batch grading's children skip it).
    #[arg(long)]
    no_report: bool,

    /// Arguments for the test harness after `--`: a name filter, --exact, --list, --skip, -q, ...
    #[arg(last = true)]
    test_args: Vec<String>,
}

/// How a grade is judged, for a single run and for every child of a batch.
#[derive(clap::Args, Clone)]
struct GradingFlags {
    /// On a GPU, also run every correctness case that fits the simulator on
    /// ptx-sim (on the other CPU cores): a race, an out-of-bounds access or an
    /// uninitialised read it finds fails the test, even where the GPU's
    /// numbers came out right.
    #[arg(long, value_enum, default_value_t = Sanitize::On)]
    sanitize: Sanitize,
    /// What performance checks count for where kernels cannot be timed (the
    /// simulator, no GPU). Default: cuda-lab.toml, else `exclude` (`simulate`
    /// with --format gradescope and in batches).
    #[arg(long, value_enum)]
    perf_without_gpu: Option<PerfWithoutGpu>,
    /// Where performance thresholds come from on a GPU: `auto` (this GPU
    /// model's calibration under calibration/ or in the cache, else the nearest
    /// model's), `off` (the constants compiled into the exercises), a
    /// calibration file, or a folder of them (docs/grading-accuracy.md).
    #[arg(long, default_value = "auto", value_name = "auto|off|FILE|DIR")]
    calibration: grader::calibrate::Choice,
    /// How a timed check graded by the clock gives its points: `threshold`
    /// (all or nothing at the calibrated bar) or `scaled` (by speed, between
    /// the slow family and the reference). Default: cuda-lab.toml's
    /// [performance] credit, else `threshold`.
    #[arg(long, value_enum)]
    credit: Option<grader::credit::Credit>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// The report on the terminal and the grades JSON only.
    Human,
    /// GitHub Classroom's autograding-grading-reporter results, one per exercise.
    Classroom,
    /// Gradescope's results.json.
    Gradescope,
    /// The score table and first failures as Markdown, appended to
    /// $GITHUB_STEP_SUMMARY when set (printed otherwise).
    Summary,
    /// PrairieLearn's external-grader results.json.
    #[value(name = "prairielearn")]
    PrairieLearn,
    /// Moodle CodeRunner's combinator-grader JSON, printed (all `grader report` prints).
    #[value(name = "coderunner")]
    CodeRunner,
    /// Autolab's formatted feedback and autoresult, printed last.
    Autolab,
    /// JUnit XML (CodeGrade, GitLab, Jenkins): junit.xml.
    Junit,
}

impl Format {
    /// The file it writes where `--results` does not say.
    fn default_file(self) -> &'static str {
        match self {
            Format::Junit => "junit.xml",
            _ => "results.json",
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// List the exercises, their parts, files and points.
    List,
    /// Measure every performance threshold on this GPU (needs a CUDA GPU; 3 to 6
    /// minutes on an H100 or an H200): writes calibration/<gpu model>.toml and a copy in the cache.
    Calibrate(CalibrateArgs),
    /// Keep the GPU busy streaming memory for SECONDS, then stop: a noisy
    /// neighbour for trying grading on a shared GPU.
    GpuLoad {
        /// How long (at most a day).
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
    },
    /// Grade a whole class: every folder under DIR is one submission.
    Batch {
        #[command(flatten)]
        batch: BatchArgs,
        #[command(flatten)]
        lms: LmsArgs,
    },
    /// Combine the gradebooks of several shards (or batches) into one.
    Merge {
        /// The gradebook.json of each shard.
        #[arg(required = true)]
        gradebooks: Vec<PathBuf>,
        /// Where the combined gradebook.json and gradebook.csv go.
        #[arg(long)]
        out: PathBuf,
        /// Merge even when shards are missing (their students are left out).
        #[arg(long)]
        partial: bool,
        #[command(flatten)]
        lms: LmsArgs,
    },
    /// Turn a grades JSON (or a batch's submissions/<key>.json) into a course platform's results.
    Report {
        json: PathBuf,
        #[arg(long, value_enum)]
        format: Format,
        /// As for the grading run.
        #[arg(long)]
        github_output: Option<PathBuf>,
        /// As for the grading run (default: results.json, or junit.xml, in the current folder).
        #[arg(long)]
        results: Option<PathBuf>,
        /// Also write the HTML report with pictures here (e.g. for a CI artifact).
        #[arg(long)]
        html: Option<PathBuf>,
        /// As for the grading run.
        #[arg(long, value_enum)]
        maximum: Option<grader::platforms::Maximum>,
        /// Where cuda-lab.toml is read from (default: the current folder when
        /// it holds the exercises, else the workspace).
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Every exercise and part with its last result (also what `grader` alone shows).
    Status {
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Re-grade an exercise whenever one of its .cu files is saved (q quits, h hints).
    Watch {
        /// The exercise graded at the start (default: wait for a save).
        exercise: Option<String>,
        #[arg(long)]
        root: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
        backend: BackendChoice,
    },
    /// The next hint for the first failing check of an exercise (or of one part).
    Hint {
        exercise: String,
        part: Option<String>,
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Experiments from the notes, drawn in the report: `coalescing`.
    Lab {
        #[arg(value_enum)]
        lab: Lab,
        /// Where the lab's CSV, JSON and report.html go (default: <root>/target/grades).
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        root: Option<PathBuf>,
        /// Seconds one kernel may run before it is declared stuck.
        #[arg(long, default_value_t = 10.0)]
        timeout: f64,
    },
    /// Rewrite grader/data/baseline-profiles.json: the reference kernels' memory
    /// profiles on the simulator, which the HTML report draws students' figures against.
    /// With exercises (`grader baseline-profiles ex10 ex11`), only their entries
    /// are regraded and replaced; every other entry stays byte for byte.
    #[command(hide = true)]
    BaselineProfiles {
        /// Only these exercises' entries (`ex10`, `ex10-histogram`, ...); none: all.
        exercises: Vec<String>,
        #[arg(long)]
        root: Option<PathBuf>,
        /// Default: 1, or with exercises the seed the file was made with.
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Write something new for the course: `grader new exercise ex09-slug` (docs/authoring.md).
    #[command(subcommand)]
    New(New),
    /// Write the students' template repository (no reference solutions) into DIR.
    ExportTemplate {
        dir: PathBuf,
        /// The exercises its Classroom workflow grades, e.g. `ex01,ex02`.
        #[arg(long, default_value = "all", value_delimiter = ',')]
        exercises: Vec<String>,
        /// The workspace to export (default: as for grading).
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Compare two output-digest files (CUDA_LAB_OUTPUT_DIGESTS) from the same seed
    /// on two backends, e.g. the GPU and the simulator.
    CompareDigests { a: PathBuf, b: PathBuf },
    /// Run the differential corpus (grader/differential) on one backend; write one
    /// output digest per buffer to OUT, for compare-digests.
    #[command(hide = true)]
    Differential {
        #[arg(long, value_enum)]
        backend: BackendChoice,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Grade parts sent as JSON lines on stdin, one process for many (started by `grader batch`).
    #[command(hide = true)]
    BatchWorker {
        #[arg(long)]
        seed: u64,
        #[arg(long, value_enum)]
        backend: BackendChoice,
        #[arg(long)]
        timeout: f64,
        #[command(flatten)]
        grading: GradingFlags,
    },
    /// Regrade a class and list every score Classroom recorded that differs, and every edited workflow.
    Audit(AuditArgs),
    /// Write OUT/class-report.html from a batch's output folder OUT (a batch writes it too): scores,
    /// verdicts, the checks failed most often, memory lessons, performance, time, similarity.
    ClassReport {
        /// The batch's output folder (with gradebook.json).
        out: PathBuf,
        /// Students' names in the leaderboards (default: anonymous keys).
        #[arg(long)]
        names: bool,
        /// No leaderboards (a course turns them off with `[class-report] leaderboard = false` in cuda-lab.toml).
        #[arg(long)]
        no_leaderboard: bool,
        /// The course's folder: stubs and reference for similarity and the memory lessons, cuda-lab.toml.
        #[arg(long)]
        root: Option<PathBuf>,
        #[command(flatten)]
        lms: LmsArgs,
    },
    /// Generate a class of submissions (reference, stubs, broken variants) for tests and throughput runs.
    MakeClass {
        dir: PathBuf,
        #[arg(long, default_value_t = 50)]
        students: usize,
        #[arg(long, default_value = "all", value_delimiter = ',')]
        exercises: Vec<String>,
        #[arg(long)]
        root: Option<PathBuf>,
        /// Give every student's kernels a PTX of their own (a device variable
        /// named after the student), so that no cache shares work between
        /// students, as in a class whose students all wrote their own kernels.
        #[arg(long)]
        distinct: bool,
    },
}

#[derive(Subcommand)]
enum New {
    /// A complete exercise that builds and grades (stub 0, reference full
    /// marks), registered in grader/Cargo.toml, the Classroom workflow and the README.
    Exercise {
        /// exNN-slug, e.g. `ex09-picture`.
        name: String,
        /// The title `grader list` and the README show.
        #[arg(long)]
        title: Option<String>,
        /// What the kernel is laid over: `linear` (a vector, one thread per
        /// element), `rows` (a matrix, one block per row) or `tiles-2d` (an
        /// image, a 2-D grid of 16 x 16 blocks). The launch, the yardstick and
        /// the measured check follow.
        #[arg(long, value_enum, default_value = "linear")]
        shape: grader::author::new_exercise::Shape,
        /// The workspace to write into (default: as for grading).
        #[arg(long)]
        root: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Lab {
    /// Bandwidth and sectors per request over offsets 0-32 and strides 1-32 (notes, seed 000).
    Coalescing,
}

#[derive(clap::Args)]
struct BatchArgs {
    /// The folder holding one folder per submission (GitHub Classroom's download layout).
    dir: PathBuf,
    /// Where results, staging, logs and the gradebook go (default: `grades` beside DIR).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Exercises to grade: `ex01,ex02` or `all`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    exercises: Vec<String>,
    /// One seed for every student (default: the seed OUT was graded with, or a random one).
    #[arg(long)]
    seed: Option<u64>,
    /// Regrade results already in OUT.
    #[arg(long)]
    force: bool,
    /// Grade only shard i of n (0 <= i < n); `grader merge` combines the shards.
    #[arg(long)]
    shard: Option<Shard>,
    /// GPUs to grade on (`CUDA_VISIBLE_DEVICES` ids), e.g. `0,1` (default: every GPU visible).
    #[arg(long, value_delimiter = ',')]
    gpus: Vec<String>,
    /// Seconds one part of one submission may take before it is stopped (verdict `timeout`).
    #[arg(long, default_value_t = 300.0)]
    part_timeout: f64,
    /// Seconds one kernel may run before it is declared stuck.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    #[command(flatten)]
    grading: GradingFlags,
    /// Grade every part in a process of its own (slower; no state is shared between parts).
    #[arg(long)]
    isolate: bool,
    /// Worker processes per GPU: while one times kernels, the others compile,
    /// compute CPU references and run correctness checks (ignored with --isolate).
    /// Default: 3 on a GPU of 12 GiB or more in a host of 16 GiB or more, else 2.
    #[arg(long)]
    workers_per_gpu: Option<usize>,
    /// Also regrade alone a part whose kernel got stuck in a worker (its verdicts
    /// are already those of a fresh process; this costs the kernel time limit again).
    #[arg(long)]
    regrade_hangs: bool,
    /// Limit each correctness check to MULT times the reference kernel's time on
    /// the same input (graded once before the class), at least --timeout-floor and
    /// at most --timeout: an endless kernel then costs about a second, not --timeout.
    /// Default: 50 on a GPU where the course's reference/ is found, else off
    /// (docs/ta-guide.md); `off` keeps --timeout for every check.
    #[arg(long, value_name = "MULT|off")]
    timeout_from_reference: Option<grader::check_limits::FromReference>,
    /// The shortest limit --timeout-from-reference gives a check, in seconds.
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    timeout_floor: f64,
    /// Do not calibrate a GPU model that has no calibration before grading
    /// (its grades then use the nearest calibrated model, and say so).
    #[arg(long)]
    no_calibrate: bool,
}

#[derive(clap::Args)]
struct CalibrateArgs {
    /// Seeds every family is graded with.
    #[arg(long, default_value = "1,2,3", value_delimiter = ',')]
    seeds: Vec<u64>,
    /// Exercises to calibrate.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    exercises: Vec<String>,
    /// The course's folder (with reference/, reference/slow/ and the variants corpus).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Where the calibration goes (default: <root>/calibration/<gpu model>.toml).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Do nothing where this GPU model already has a calibration (what `grader batch` runs first).
    #[arg(long)]
    if_missing: bool,
    /// Also time the `technique` variants (shown for comparison; not used by the rule).
    #[arg(long)]
    with_technique: bool,
    /// Seconds one kernel may run before it is declared stuck.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Print every committed calibration side by side as Markdown (no GPU needed).
    #[arg(long)]
    markdown: bool,
    /// Write those tables into each exercise's CALIBRATION.md (no GPU needed).
    #[arg(long)]
    update_docs: bool,
    /// Place every threshold of the committed calibrations again with today's
    /// rule, from the figures they recorded (no GPU needed).
    #[arg(long)]
    replace: bool,
}

/// The class's scores for an LMS gradebook (docs/platforms.md).
#[derive(clap::Args)]
struct LmsArgs {
    /// Also write the scores as a CSV the LMS's gradebook imports: one row per
    /// student, a column per exercise and the total.
    #[arg(long, value_name = "FILE")]
    lms_csv: Option<PathBuf>,
    /// Which LMS the CSV is for.
    #[arg(long, value_enum, default_value_t = grader::lms::Lms::Canvas, requires = "lms_csv")]
    lms: grader::lms::Lms,
    /// Who each submission folder is in the LMS: a CSV with a `folder`,
    /// `student_repository_name` or `github_username` column and the LMS's
    /// identifier columns (Classroom's grades CSV works as it is).
    #[arg(long, value_name = "FILE", requires = "lms_csv")]
    roster: Option<PathBuf>,
    /// Which maximum the CSV's scores are out of (default: cuda-lab.toml
    /// `[platforms] maximum`, else graded-here).
    #[arg(long, value_enum, requires = "lms_csv")]
    maximum: Option<grader::platforms::Maximum>,
}

impl LmsArgs {
    /// Writes the CSV from the gradebook in `dir`, when asked for.
    fn write(&self, dir: &Path) -> Result<()> {
        if let Some(file) = &self.lms_csv {
            let root = default_root()?;
            let maximum = grader::platforms::config::maximum(&root, self.maximum)?;
            let written = grader::lms::write(dir, file, self.lms, self.roster.as_deref(), maximum)?;
            println!("{}", written.describe(file, self.lms));
        }
        Ok(())
    }
}

#[derive(clap::Args)]
struct AuditArgs {
    /// How to regrade: DIR holds the downloaded repositories (docs/classroom.md).
    #[command(flatten)]
    batch: BatchArgs,
    /// Classroom's grades CSV of the assignment (the assignment page's download).
    #[arg(long)]
    classroom_csv: PathBuf,
    /// Points by which a recorded score may differ from the regrade.
    #[arg(long, default_value_t = grader::audit::DEFAULT_TOLERANCE)]
    tolerance: f64,
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

/// The exercises (and part) a grading command names, or why not: "no
/// exercise called `private`".
fn selected(cli: &Cli) -> Result<Vec<kit::Exercise>> {
    let mut exercises = registry::select(&cli.exercises)?;
    if let Some(part) = &cli.part {
        registry::keep_part(&mut exercises, part)?;
    }
    Ok(exercises)
}

fn real_main() -> Result<ExitCode> {
    let cli = Cli::parse();
    if let Some(command) = cli.command {
        return run_command(command);
    }
    if cli.exercises.is_empty() {
        return run_command(Command::Status { root: cli.root });
    }
    let exercises = selected(&cli)?;
    let root = match cli.root {
        Some(r) => r,
        None => default_root()?,
    };
    let seed = cli.seed.unwrap_or_else(rand::random);
    let sources = match (&cli.sources, cli.reference) {
        (Some(dir), _) => dir.trim_end_matches('/').to_string(),
        (None, true) => "reference".to_string(),
        (None, false) => "exercises".to_string(),
    };
    let mut harness_args = vec!["grader".to_string()];
    harness_args.extend(cli.test_args);
    let audience = match cli.format {
        Format::Human => Audience::OwnRun,
        // The Markdown summary is Classroom's job summary.
        Format::Classroom | Format::Summary => Audience::Classroom,
        // Grades of record made where there may be no GPU, as on Gradescope.
        Format::Gradescope | Format::PrairieLearn | Format::CodeRunner | Format::Autolab | Format::Junit => {
            Audience::Gradescope
        }
    };
    let policy = policy::resolve(&root, cli.grading.perf_without_gpu, audience)?;
    let opts = grade::Options {
        root: root.clone(),
        sources: sources.clone(),
        seed,
        backend: cli.backend,
        timeout: Duration::from_secs_f64(cli.timeout),
        test_args: libtest_mimic::Arguments::from_iter(harness_args),
        sanitize: cli.grading.sanitize,
        policy,
        calibration: cli.grading.calibration.clone(),
        credit: cli.grading.credit,
    };
    if opts.test_args.list {
        // Only the test names: nothing to compile or run.
        let (_, conclusion) = grade::run(&exercises, &opts)?;
        return Ok(conclusion.exit_code());
    }
    let maximum = grader::platforms::config::maximum(&root, cli.maximum)?;
    // CodeRunner reads the whole of stdout as its JSON: everything else goes to stderr.
    let stdout = (cli.format == Format::CodeRunner).then(json_only_stdout).transpose()?;
    let (report, conclusion) = grade::run(&exercises, &opts)?;
    print!("{}", report.summary());
    let json = cli.json.unwrap_or_else(|| {
        let selection = if cli.exercises.iter().any(|e| e == "all") {
            "all".to_string()
        } else {
            exercises.iter().map(|e| e.id).collect::<Vec<_>>().join("-")
        };
        let suffix = if sources == "exercises" { String::new() } else { format!("-{}", sources.replace('/', "-")) };
        grader::batch::intake::outputs_root(&root)
            .join("target")
            .join("grades")
            .join(format!("{selection}{suffix}.json"))
    });
    kit::backend::traced::phase("scored");
    report.write(&json)?;
    println!("  scores written to {}", json.display());
    if !cli.no_report {
        write_html(&report, &root, &grader::html::default_path(&root));
    }
    kit::backend::traced::phase("reports written");
    println!("  seed {seed}: `--seed {seed}` reruns with the same inputs");
    let results = cli.results.unwrap_or_else(|| {
        grader::batch::intake::outputs_root(&root).join("target").join("grades").join(cli.format.default_file())
    });
    let grade = grader::platforms::Grade::of(&report, maximum);
    if let Some(stdout) = stdout {
        use std::io::Write as _;
        std::io::stdout().flush()?;
        restore_stdout(stdout)?;
    }
    write_format(&grade, cli.format, cli.github_output, &results, Printed::Summary)?;
    if grade::nothing_compiled(&report) {
        return Ok(ExitCode::from(grade::EXIT_NO_COMPILER));
    }
    Ok(conclusion.exit_code())
}

fn run_command(command: Command) -> Result<ExitCode> {
    match command {
        Command::List => print!("{}", list()),
        Command::Calibrate(args) => return run_calibrate(args),
        Command::GpuLoad { seconds } => {
            let done = grader::gpu_load::run(seconds, &mut |line| println!("{line}"))?;
            println!(
                "gpu-load: stopped after {:.1} s, {}, {:.0} GB/s on average",
                done.seconds,
                grader::words::count(done.launches as usize, "copy"),
                done.gbps
            );
        }
        Command::New(New::Exercise { name, title, shape, root }) => {
            use grader::author::new_exercise::{create, next_steps, Names};
            let names = Names::parse(&name, title.as_deref())?.shaped(shape);
            let root = match root {
                Some(r) => r,
                None => default_root()?,
            };
            let created = create(&root, &names, &registry::all())?;
            print!("{}", next_steps(&names, &created));
        }
        Command::Batch { batch, lms } => return run_batch(batch, &lms),
        Command::Audit(args) => return run_audit(args),
        Command::ClassReport { out, names, no_leaderboard, root, lms } => {
            let opts = grader::class_report::Options {
                names,
                leaderboard: no_leaderboard.then_some(false),
                root: root.or_else(|| default_root().ok()),
                exe: None,
            };
            gradebook::write_parts_csv(&out)?;
            let path = grader::class_report::write(&out, &opts)?;
            println!("class report: {}", path.display());
            lms.write(&out)?;
        }
        Command::Merge { gradebooks, out, partial, lms } => {
            if !partial {
                gradebook::check_all_shards(&gradebooks)?;
            }
            let merged = gradebook::merge(&gradebooks, &out)?;
            println!(
                "{} from {} in {}",
                grader::words::count(merged.students.len(), "student"),
                grader::words::count(gradebooks.len(), "gradebook"),
                out.join(gradebook::CSV_NAME).display()
            );
            // The whole class's report (similarity needs the shards' staged files: none here).
            grader::class_report::after_batch(&out);
            lms.write(&out)?;
        }
        Command::Report { json, format, github_output, results, html, maximum, root } => {
            let report = read_grades(&json)?;
            let root = root.map_or_else(default_root, Ok)?;
            let maximum = grader::platforms::config::maximum(&root, maximum)?;
            let grade = grader::platforms::Grade::of(&report, maximum);
            // First: Autolab's autoresult must stay the last line printed.
            if let Some(path) = html {
                write_html(&report, &PathBuf::from(&report.source_root), &path);
            }
            let results = results.unwrap_or_else(|| PathBuf::from(format.default_file()));
            write_format(&grade, format, github_output, &results, Printed::Nothing)?;
        }
        Command::Status { root } => {
            let root = root.map_or_else(default_root, Ok)?;
            let results = grader::student::status::last_results(&root.join("target").join("grades"));
            print!("{}", grader::student::status::render(student::exercises(), &results, &root));
        }
        Command::Watch { exercise, root, backend } => {
            let root = root.map_or_else(default_root, Ok)?;
            let first = exercise.map(|e| registry::select(&[e])).transpose()?;
            let first = first.and_then(|v| v.first().and_then(|e| student::exercises().iter().find(|a| a.id == e.id)));
            let backend = backend.to_possible_value().expect("named").get_name().to_string();
            grader::student::watch::run(grader::student::watch::Options {
                root,
                first,
                exe: std::env::current_exe().context("finding the grader's own binary")?,
                grade_args: vec!["--backend".into(), backend],
            })?;
        }
        Command::Hint { exercise, part, root } => {
            let root = root.map_or_else(default_root, Ok)?;
            let ex = registry::select(&[exercise])?;
            let ex = student::exercises().iter().find(|a| a.id == ex[0].id).expect("selected from all");
            print!("{}", grader::student::hint::next_hint(&root, ex, part.as_deref())?);
        }
        Command::Lab { lab: Lab::Coalescing, out, root, timeout } => {
            use grader::lab::coalescing;
            let root = root.map_or_else(default_root, Ok)?;
            let out = out.unwrap_or_else(|| root.join("target").join("grades"));
            let lab = coalescing::run(Duration::from_secs_f64(timeout), &|m| println!("{m}"))?;
            grader::atomic::write(&out.join("lab-coalescing.csv"), lab.csv().as_bytes())?;
            grader::atomic::write_json(&out.join("lab-coalescing.json"), &lab)?;
            let default_json = coalescing::default_json(&root);
            if out.join("lab-coalescing.json") != default_json {
                grader::atomic::write_json(&default_json, &lab)?;
            }
            print!("{}", lab.csv());
            let latest = grader::student::status::latest_report(&root.join("target").join("grades"));
            let report = latest.unwrap_or_else(|| {
                let env = grader::report::Environment { backend: "lab".into(), ..Default::default() };
                GradeReport::new(0, &root, "exercises", env)
            });
            let mut extras = grader::html::Extras::gather(&report, &root);
            extras.lab = Some(lab);
            let path = out.join("report.html");
            grader::html::write(&report, &extras, &path)?;
            println!("lab written to {} and {}", out.join("lab-coalescing.csv").display(), path.display());
        }
        Command::BaselineProfiles { exercises, root, seed } => {
            use grader::html::baseline::BaselineProfiles;
            let root = root.map_or_else(default_root, Ok)?;
            let path = root.join("grader").join("data").join("baseline-profiles.json");
            // With exercises: only theirs, into the file as it is.
            let only = if exercises.is_empty() {
                None
            } else {
                let ids: Vec<&'static str> = registry::select(&exercises)?.iter().map(|e| e.id).collect();
                let old = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
                Some((ids, old))
            };
            let seed = match (seed, &only) {
                (Some(seed), _) => seed,
                (None, Some((_, old))) => serde_json::from_str::<BaselineProfiles>(old)?.seed,
                (None, None) => 1,
            };
            let selection = only.as_ref().map_or_else(|| vec!["all"], |(ids, _)| ids.clone());
            let tmp = tempfile::tempdir()?;
            let json = tmp.path().join("reference.json");
            let status = std::process::Command::new(std::env::current_exe()?)
                .args(&selection)
                .args(["--reference", "--backend", "sim", "--seed", &seed.to_string(), "--json"])
                .arg(&json)
                .arg("--root")
                .arg(&root)
                .status()?;
            anyhow::ensure!(json.exists(), "grading the reference failed ({status})");
            let profiles = BaselineProfiles::from_report(&read_grades(&json)?);
            match only {
                None => {
                    grader::atomic::write_json(&path, &profiles)?;
                    println!(
                        "profiles of {} written to {}",
                        grader::words::count(profiles.tests.len(), "test"),
                        path.display()
                    );
                }
                Some((ids, old)) => {
                    let text = BaselineProfiles::splice(&old, &profiles, &ids)?;
                    grader::atomic::write_if_changed(&path, text.as_bytes())?;
                    println!(
                        "profiles of {} of {} written to {} (the other exercises' entries kept as they were)",
                        grader::words::count(profiles.tests.len(), "test"),
                        ids.join(", "),
                        path.display()
                    );
                }
            }
        }
        Command::ExportTemplate { dir, exercises, root } => {
            let exercises = registry::select(&exercises)?;
            let root = match root {
                Some(r) => r,
                None => default_root()?,
            };
            let done = template::export(&root, &dir, &exercises)?;
            println!(
                "template written to {}: {}, {} KiB",
                dir.display(),
                grader::words::count(done.files, "file"),
                done.bytes / 1024
            );
        }
        Command::CompareDigests { a, b } => {
            let c = grader::digests::compare(&a, &b)?;
            println!(
                "{} outputs bit-identical, {} different, {} on one side only",
                c.identical,
                c.different.len(),
                c.only_one_side
            );
            for d in &c.different {
                println!("  differs: {d}");
            }
            if !c.different.is_empty() {
                return Ok(ExitCode::from(1));
            }
        }
        Command::Differential { backend, out, seed, root } => {
            let root = root.map_or_else(default_root, Ok)?;
            if !grader::differential::command(&root, backend, seed, &out)? {
                return Ok(ExitCode::from(1));
            }
        }
        Command::BatchWorker { seed, backend, timeout, grading } => {
            // The batch passes its resolved policy as the flag, so the course file is not read again.
            let policy = policy::resolve(Path::new("."), grading.perf_without_gpu, Audience::Gradescope)?;
            let settings = batch::worker::Settings {
                seed,
                backend,
                timeout: Duration::from_secs_f64(timeout),
                sanitize: grading.sanitize,
                policy,
                calibration: grading.calibration,
                credit: grading.credit,
            };
            batch::worker::serve(&settings)?;
        }
        Command::MakeClass { dir, students, exercises, root, distinct } => {
            let exercises = registry::select(&exercises)?;
            let root = match root {
                Some(r) => r,
                None => default_root()?,
            };
            let class = batch::make_class::generate(&root, &dir, students, &exercises, distinct)?;
            println!(
                "{} in {} (variants listed in {})",
                grader::words::count(class.len(), "submission"),
                dir.display(),
                dir.join(".class.json").display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_batch(args: BatchArgs, lms: &LmsArgs) -> Result<ExitCode> {
    if !args.no_calibrate && matches!(args.grading.calibration, grader::calibrate::Choice::Auto(_)) {
        calibrate_first(&args)?;
    }
    let out = args.out.clone().unwrap_or_else(|| batch::default_out(&args.dir));
    let opts = batch_options(args, out)?;
    if !opts.dir.is_dir() {
        anyhow::bail!("{} is not a folder of submissions", opts.dir.display());
    }
    let summary = batch::run(&opts)?;
    print!("{summary}");
    lms.write(&opts.out)?;
    Ok(if summary.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

/// What `grader batch` (and the audit's regrade) runs with, results going to `out`.
fn batch_options(args: BatchArgs, out: PathBuf) -> Result<batch::Options> {
    // Resolved here, from the course's own copy: a child's root is a staged submission.
    let course = default_root().unwrap_or_else(|_| PathBuf::from("."));
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
    let course = default_root().unwrap_or_else(|_| PathBuf::from("."));
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

/// `grader calibrate`: exit 2 without a GPU.
fn run_calibrate(args: CalibrateArgs) -> Result<ExitCode> {
    use grader::calibrate::{self, file, markdown, run};
    let root = args.root.clone().map_or_else(default_root, Ok)?;
    let exercises = registry::select(&args.exercises)?;
    if args.replace {
        for (path, mut f) in file::CalibrationFile::all_in(&file::course_dir(&root)) {
            run::replace(&mut f);
            f.write(&path)?;
            println!("{}", run::summary(&f, &path));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.markdown || args.update_docs {
        let files = file::CalibrationFile::all_in(&file::course_dir(&root));
        if args.update_docs {
            for path in markdown::update_docs(&root, &files, &exercises)? {
                println!("updated {}", path.display());
            }
        } else {
            print!("{}", markdown::tables(&files, None));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let gpu = match kit::Gpu::cuda(Duration::from_secs_f64(args.timeout)) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!(
                "grader calibrate needs a CUDA GPU: it times the kernels of every performance check, which the \
                 simulator cannot ({e})"
            );
            return Ok(ExitCode::from(2));
        }
    };
    let info = gpu.info().clone();
    // Only the device's description is needed here: the children time.
    drop(gpu);
    if args.if_missing {
        let chosen = calibrate::choose(&calibrate::Choice::Auto(Vec::new()), &root, &info);
        if chosen.how == calibrate::How::Exact {
            let path = chosen.path.map(|p| p.display().to_string()).unwrap_or_default();
            println!("{} is calibrated ({path})", info.name);
            return Ok(ExitCode::SUCCESS);
        }
        println!("{} has no calibration: calibrating it first", info.name);
    }
    let plan = calibrate::families::plan(&root, &exercises, args.with_technique)?;
    let slug = file::model_slug(&info.name);
    let work = root.join("target").join("calibrate").join(&slug);
    let _ = std::fs::remove_dir_all(&work);
    let mut envs = Vec::new();
    if std::env::var_os(grade::PTX_CACHE_ENV).is_none() {
        envs.push((grade::PTX_CACHE_ENV.to_string(), root.join("target").join("ptx-cache").display().to_string()));
    }
    let mut source = run::GraderRun {
        exe: std::env::current_exe()?,
        root: root.clone(),
        exercises: exercises.clone(),
        timeout: Duration::from_secs_f64(args.timeout),
        envs,
        work: work.clone(),
    };
    println!(
        "calibrating {} ({}): {} ({} x {}), about 5 s each; logs in {}",
        info.name,
        grader::words::count(plan.checks.len(), "check"),
        grader::words::count(plan.jobs.len() * args.seeds.len(), "grading"),
        grader::words::count(plan.jobs.len(), "kernel"),
        grader::words::count(args.seeds.len(), "seed"),
        work.display()
    );
    let start = std::time::Instant::now();
    let collected = run::collect(&plan, &args.seeds, &mut source, &mut |line| println!("  {line}"));
    // The program by name, with no folder of this machine in a committed file.
    let command = std::iter::once("grader".to_string())
        .chain(std::env::args().skip(1).filter(|a| !a.starts_with('/')))
        .collect::<Vec<_>>()
        .join(" ");
    let provenance = run::Provenance { date: run::today(), command, seeds: args.seeds.clone() };
    let mut calibration = run::calibration_file(run::gpu_model(&info), &collected, provenance);
    let out = args.out.clone().unwrap_or_else(|| file::path_in(&file::course_dir(&root), &info.name));
    // Calibrating in pieces (`--exercises`): the checks of this model not measured now keep their entries.
    if let Ok(before) = file::CalibrationFile::read(&out) {
        if file::model_slug(&before.gpu.name) == file::model_slug(&info.name) {
            let kept = run::keep_unmeasured(&mut calibration, before);
            if kept > 0 {
                println!("{kept} check(s) not measured in this run keep their entries from {}", out.display());
            }
        }
    }
    calibration.write(&out)?;
    if let Some(cache) = file::cache_dir() {
        calibration.write(&file::path_in(&cache, &info.name))?;
    }
    print!("{}", run::summary(&calibration, &out));
    println!("calibrated in {:.1} min", start.elapsed().as_secs_f64() / 60.0);
    Ok(ExitCode::SUCCESS)
}

/// Exit status 1 when the audit finds a difference, 2 when it cannot run.
fn run_audit(args: AuditArgs) -> Result<ExitCode> {
    let out = args.batch.out.clone().unwrap_or_else(|| batch::default_out(&args.batch.dir).with_file_name("audit"));
    let batch = batch::Options { shard: None, ..batch_options(args.batch, out)? };
    if !batch.dir.is_dir() {
        anyhow::bail!("{} is not a folder of repositories", batch.dir.display());
    }
    let opts = grader::audit::Options { batch, classroom_csv: args.classroom_csv, tolerance: args.tolerance };
    let audit = grader::audit::run(&opts)?;
    print!("{audit}");
    println!("  written to {}", opts.batch.out.join("audit.json").display());
    Ok(if audit.is_clean() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// A grades JSON, or the `grades` of a batch's per-student JSON.
fn read_grades(path: &std::path::Path) -> Result<GradeReport> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if let Ok(student) = serde_json::from_slice::<StudentReport>(&bytes) {
        return Ok(student.grades);
    }
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not a grades JSON", path.display()))
}

/// What stdout already holds when the results are written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Printed {
    /// A grading run: the tests and the score table.
    Summary,
    /// `grader report`: nothing (CodeRunner reads the whole of stdout as its JSON).
    Nothing,
}

fn write_format(
    grade: &grader::platforms::Grade,
    format: Format,
    github_output: Option<PathBuf>,
    results: &std::path::Path,
    printed: Printed,
) -> Result<()> {
    use grader::platforms::{autolab, coderunner, junit, prairielearn};
    match format {
        Format::Human => {}
        Format::Classroom => {
            println!("{}", serde_json::to_string_pretty(&classroom::results(grade))?);
            if let Some(path) = github_output.or_else(|| std::env::var_os("GITHUB_OUTPUT").map(PathBuf::from)) {
                classroom::append_github_output(&path, grade)?;
            }
        }
        Format::Gradescope => {
            gradescope::write(grade, results)?;
            println!("Gradescope results written to {}", results.display());
        }
        Format::Summary => {
            let md = grader::job_summary::markdown(grade);
            match std::env::var_os("GITHUB_STEP_SUMMARY").map(PathBuf::from) {
                Some(path) => {
                    use std::io::Write as _;
                    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
                    f.write_all(md.as_bytes())?;
                    println!("job summary appended to {}", path.display());
                }
                None => print!("{md}"),
            }
        }
        Format::PrairieLearn => {
            prairielearn::write(grade, results)?;
            println!("PrairieLearn results written to {}", results.display());
        }
        Format::Junit => {
            junit::write(grade, results)?;
            println!("JUnit XML written to {}", results.display());
        }
        Format::CodeRunner => println!("{}", coderunner::json(grade)?),
        // The autoresult must be the output's last line: nothing is printed after it.
        Format::Autolab if printed == Printed::Summary => {
            print!("{}{}", autolab::problems(grade), autolab::lines(grade)?)
        }
        Format::Autolab => print!("{}", autolab::feedback(grade)?),
    }
    Ok(())
}

/// Points file descriptor 1 at stderr until [`restore_stdout`], so that the
/// test harness's lines, the report and any child's output go there; returns
/// the real stdout.
fn json_only_stdout() -> Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsFd, AsRawFd};
    let saved = std::io::stdout().as_fd().try_clone_to_owned().context("keeping stdout")?;
    // SAFETY: dup2 on two open descriptors; Rust's stdout keeps using fd 1.
    if unsafe { libc::dup2(std::io::stderr().as_raw_fd(), 1) } < 0 {
        anyhow::bail!("sending stdout to stderr: {}", std::io::Error::last_os_error());
    }
    Ok(saved)
}

fn restore_stdout(saved: std::os::fd::OwnedFd) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: dup2 on two open descriptors.
    if unsafe { libc::dup2(saved.as_raw_fd(), 1) } < 0 {
        anyhow::bail!("restoring stdout: {}", std::io::Error::last_os_error());
    }
    Ok(())
}

/// Writes the HTML report; a failure to draw never fails the grading.
fn write_html(report: &GradeReport, root: &std::path::Path, path: &std::path::Path) {
    let extras = grader::html::Extras::gather(report, root);
    match grader::html::write(report, &extras, path) {
        Ok(()) => {
            println!("  report with pictures: file://{}", path.canonicalize().unwrap_or(path.to_path_buf()).display())
        }
        Err(e) => println!("  (the HTML report could not be written: {e:#})"),
    }
}

/// The current folder when it holds the exercises (a student's checkout, or the
/// device machine's copy of the repository), else the workspace this was built in.
fn default_root() -> Result<PathBuf> {
    // Says so when it falls back to the checkout this grader was built in.
    grader::class_report::course_root()
        .context("cannot find the exercises: run from the repository's folder, or pass --root")
}

fn list() -> String {
    let mut out = String::new();
    for e in registry::all() {
        out += &format!("{} ({}, {})  {}\n", e.id, e.slug, e.folder_name(), e.title);
        for p in &e.parts {
            out += &format!(
                "    {:<12} {:<28} {:>5} {}, {}\n",
                p.name,
                p.file,
                p.points,
                if p.points == 1.0 { "point" } else { "points" },
                grader::words::count(p.checks.len(), "check")
            );
        }
    }
    out
}

/// Every `cargo run -p grader -- …` command the READMEs show a student parses
/// and names real exercises and parts, as the grader would read it before
/// doing anything (ex10's README once said `ex10 private`, which fails with
/// "no exercise called `private`").
#[cfg(test)]
mod readme_commands {
    use super::*;

    const PREFIX: &str = "cargo run -p grader --";

    /// The commands in `text`: in a code block up to a `#` comment or the end
    /// of the line, inline up to the closing backtick (across a line break).
    fn commands(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (at, _) in text.match_indices(PREFIX) {
            let inline = text[..at].ends_with('`') && !text[..at].ends_with("```");
            let rest = &text[at + PREFIX.len()..];
            let end = if inline { rest.find('`') } else { rest.find(['#', '\n']) }.unwrap_or(rest.len());
            out.push(rest[..end].split_whitespace().collect::<Vec<_>>().join(" "));
        }
        out
    }

    /// Words as a shell splits them (double and single quotes).
    fn words(command: &str) -> Vec<String> {
        let (mut words, mut word, mut quote, mut any) = (Vec::new(), String::new(), None, false);
        for c in command.chars() {
            match (quote, c) {
                (None, '"' | '\'') => (quote, any) = (Some(c), true),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() => {
                    if any {
                        words.push(std::mem::take(&mut word));
                    }
                    any = false;
                }
                (_, c) => (word, any) = (word + &c.to_string(), true),
            }
        }
        if any {
            words.push(word);
        }
        words
    }

    /// Parses `args` as the grader does, and checks what it names.
    fn check(args: &[String]) -> Result<()> {
        let cli = Cli::try_parse_from(std::iter::once("grader".to_string()).chain(args.iter().cloned()))?;
        match &cli.command {
            None if cli.exercises.is_empty() => Ok(()),
            None => selected(&cli).map(|_| ()),
            Some(Command::Hint { exercise, part, .. }) => {
                let mut ex = registry::select(std::slice::from_ref(exercise))?;
                match part {
                    Some(p) => registry::keep_part(&mut ex, p),
                    None => Ok(()),
                }
            }
            Some(Command::Watch { exercise: Some(e), .. }) => registry::select(std::slice::from_ref(e)).map(|_| ()),
            Some(_) => Ok(()),
        }
    }

    fn readmes() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = vec![root.join("README.md")];
        for e in std::fs::read_dir(root.join("exercises")).unwrap().flatten() {
            if e.path().join("README.md").is_file() {
                files.push(e.path().join("README.md"));
            }
        }
        files.sort();
        files
    }

    #[test]
    fn every_readme_command_parses_and_names_real_exercises() {
        let mut checked = 0;
        let mut wrong = Vec::new();
        for readme in readmes() {
            let text = std::fs::read_to_string(&readme).unwrap();
            for command in commands(&text) {
                // The generic forms (`cargo run -p grader -- …`) stand for any command.
                if command.is_empty() || command.contains('…') || command.contains("...") {
                    continue;
                }
                // Placeholders: an optional `[part]` is left out, `<slug>` filled in.
                let concrete = command.replace(" [part]", "").replace("<slug>", "slug");
                if let Err(e) = check(&words(&concrete)) {
                    let e = e.to_string();
                    wrong.push(format!(
                        "{}: `{PREFIX} {command}`: {}",
                        readme.display(),
                        e.lines().next().unwrap_or("")
                    ));
                }
                checked += 1;
            }
        }
        assert!(wrong.is_empty(), "README commands that fail:\n{}", wrong.join("\n"));
        assert!(checked >= 40, "only {checked} commands found: is the prefix still `{PREFIX}`?");
    }

    #[test]
    fn the_checker_rejects_what_the_grader_rejects() {
        let bad = |c: &str| check(&words(c)).is_err();
        assert!(bad("ex10 private"), "no exercise called `private`");
        assert!(bad("ex10 --part nope"));
        assert!(bad("hint ex99"));
        assert!(bad("ex01 --sede 4"));
        assert!(!bad("ex10 -- private"));
        assert!(!bad("ex03 -- \"rect::correct::m=17\""));
        assert!(!bad("hint ex03 tiled"));
        assert_eq!(words("ex03 -- \"rect::correct::m=17\""), ["ex03", "--", "rect::correct::m=17"]);
        assert_eq!(
            commands(
                "`cargo run -p grader -- new exercise\n  ex10-<slug>` writes\n```\ncargo run -p grader -- ex01   # x\n"
            ),
            ["new exercise ex10-<slug>", "ex01"]
        );
    }
}

#[cfg(test)]
mod credit_flag {
    use super::*;

    /// A batch passes its course's choice of credit to every worker and child
    /// (their root is a staged submission, whose cuda-lab.toml is the student's).
    #[test]
    fn the_credit_flag_parses_and_a_batch_passes_it_on() {
        let cli = Cli::try_parse_from(["grader", "ex01", "--credit", "scaled"]).unwrap();
        assert_eq!(cli.grading.credit, Some(grader::credit::Credit::Scaled));
        assert!(Cli::try_parse_from(["grader", "ex01", "--credit", "half"]).is_err());
        let batch = Cli::try_parse_from(["grader", "batch", "class", "--credit", "scaled"]).unwrap();
        let Some(Command::Batch { batch: args, .. }) = batch.command else { panic!("a batch") };
        let opts = batch_options(args, PathBuf::from("out")).unwrap();
        let flags = opts.grading_flags.join(" ");
        assert!(flags.contains("--credit scaled"), "{flags}");
    }
}
