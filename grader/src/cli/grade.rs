//! `grader ex01 …` (no command): grade the exercises named, write the grades
//! JSON, the HTML report and, with `--format`, a course platform's results.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use grader::grade::{self, BackendChoice};
use grader::policy::{self, Audience};
use grader::registry;

use super::format::{write_format, Format, Printed};
use super::grading_flags::GradingFlags;
use super::stdout::{json_only_stdout, restore_stdout};

#[derive(clap::Args)]
pub struct Args {
    /// Exercises to grade: `ex01`, `ex01-pi`, `pi`, or `all`.
    pub exercises: Vec<String>,

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
    pub root: Option<PathBuf>,

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
    pub grading: GradingFlags,

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

/// The exercises (and part) a grading command names, or why not: "no
/// exercise called `private`".
pub fn selected(cli: &Args) -> Result<Vec<kit::Exercise>> {
    let mut exercises = registry::select(&cli.exercises)?;
    if let Some(part) = &cli.part {
        registry::keep_part(&mut exercises, part)?;
    }
    Ok(exercises)
}

pub fn run(cli: Args) -> Result<ExitCode> {
    let exercises = selected(&cli)?;
    let root = match cli.root {
        Some(r) => r,
        None => super::default_root()?,
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
        super::write_html(&report, &root, &grader::html::default_path(&root));
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
