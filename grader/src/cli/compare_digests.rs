//! `grader compare-digests A B`: two output-digest files from the same seed on two backends.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    a: PathBuf,
    b: PathBuf,
}

/// Exit status 1 when an output differs.
pub fn run(Args { a, b }: Args) -> Result<ExitCode> {
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
    Ok(if c.different.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
