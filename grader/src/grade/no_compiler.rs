//! The run where nothing can be compiled (no CUDA compiler found, none could
//! be installed): every test is listed as not run and scored 0, without the
//! harness. Apart because it shares nothing with a run that compiles but the
//! report it writes, and it has an exit status of its own.

use kit::Exercise;
use libtest_mimic::Conclusion;
use ptx_build::SourceFile;

use super::Options;
use crate::report::{
    CompileReport, CompileStatus, Environment, ExerciseReport, GradeReport, PartReport, Status, TestReport,
};
use crate::score;

/// Exit status of a run where nothing could be compiled (no CUDA compiler
/// found, none could be installed): documented in the README.
pub const EXIT_NO_COMPILER: u8 = 3;

/// Whether `report` comes from a run that had no compiler at all.
pub fn nothing_compiled(report: &GradeReport) -> bool {
    report.environment.compiler.is_none() && !report.exercises.is_empty()
}

/// No compiler: say why once, list every test as not run (one line each),
/// and score them all 0 without starting the harness (whose ten failures
/// would each repeat the same paragraph).
pub(super) fn without_compiler(
    exercises: &[Exercise],
    opts: &Options,
    env: Environment,
    why: &str,
) -> (GradeReport, Conclusion) {
    println!("\nerror: nothing can be compiled, so no test can run: {why}\n");
    let filter = opts.test_args.filter.as_deref().unwrap_or("");
    let mut report = GradeReport::new(opts.seed, &opts.root, &opts.sources, env);
    let mut not_run = 0;
    for ex in exercises {
        let mut ex_report =
            ExerciseReport { id: ex.id.into(), title: ex.title.into(), score: 0.0, max_score: 0.0, parts: Vec::new() };
        for part in &ex.parts {
            let rel = format!("{}/{}/{}", opts.sources, ex.folder_name(), part.file);
            let sha256 = SourceFile::read(&opts.root.join(&rel), &rel).ok().map(|s| s.sha256_hex());
            let mut tests: Vec<TestReport> = part
                .checks
                .iter()
                .map(|c| TestReport::new(ex.test_name(part, c), c.kind, Status::NotRun))
                .filter(|t| t.name.contains(filter))
                .collect();
            for t in &tests {
                println!("test {} ... not run (no compiler)", t.name);
            }
            not_run += tests.len();
            score::score_part(part.points, &mut tests);
            // Short: the reason was said once at the top.
            let message = Some("not compiled: no CUDA compiler (the run's first error says what to install)".into());
            let compile = CompileReport::with(CompileStatus::Error, message);
            ex_report.parts.push(PartReport { sha256, ..PartReport::new(part.name, rel, compile, tests) });
        }
        report.exercises.push(ex_report);
    }
    report.total_up();
    println!(
        "\n{} not run: install a CUDA compiler as said above, then grade again.\n",
        crate::words::count(not_run, "test")
    );
    let conclusion = Conclusion { num_filtered_out: 0, num_passed: 0, num_failed: 0, num_ignored: 0, num_measured: 0 };
    (report, conclusion)
}
