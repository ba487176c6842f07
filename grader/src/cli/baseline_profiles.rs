//! `grader baseline-profiles` (hidden): rewrite grader/data/baseline-profiles.json,
//! the reference kernels' memory profiles on the simulator.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use grader::registry;

#[derive(clap::Args)]
pub struct Args {
    /// Only these exercises' entries (`ex10`, `ex10-histogram`, ...); none: all.
    exercises: Vec<String>,
    #[arg(long)]
    root: Option<PathBuf>,
    /// Default: 1, or with exercises the seed the file was made with.
    #[arg(long)]
    seed: Option<u64>,
}

pub fn run(Args { exercises, root, seed }: Args) -> Result<ExitCode> {
    use grader::html::baseline::BaselineProfiles;
    let root = super::root_or_default(root)?;
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
    let profiles = BaselineProfiles::from_report(&super::read_grades(&json)?);
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
    Ok(ExitCode::SUCCESS)
}
