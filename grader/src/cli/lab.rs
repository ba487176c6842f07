//! `grader lab`: experiments from the notes, drawn in the report.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use grader::report::GradeReport;

#[derive(clap::Args)]
pub struct Args {
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
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Lab {
    /// Bandwidth and sectors per request over offsets 0-32 and strides 1-32 (notes, seed 000).
    Coalescing,
}

pub fn run(Args { lab: Lab::Coalescing, out, root, timeout }: Args) -> Result<ExitCode> {
    use grader::lab::coalescing;
    let root = super::root_or_default(root)?;
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
    extras.sections.push(coalescing::section(&lab));
    let path = out.join("report.html");
    grader::html::write(&report, &extras, &path)?;
    println!("lab written to {} and {}", out.join("lab-coalescing.csv").display(), path.display());
    Ok(ExitCode::SUCCESS)
}
