//! `grader list`: the exercises, their parts, files and points.

use std::process::ExitCode;

use anyhow::Result;
use grader::registry;

pub fn run() -> Result<ExitCode> {
    print!("{}", list());
    Ok(ExitCode::SUCCESS)
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
