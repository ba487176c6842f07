//! Compiling the student's files: with a time limit (NVRTC runs inside this
//! process and cannot be interrupted), with the same options everywhere the
//! grader compiles, and with rustc-style diagnostics. Apart because it is the
//! one step that runs before any check and that a stuck compiler can poison.

use std::path::Path;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use kit::PartBuild;
use ptx_build::{BuildError, CompileOptions, Compiler, Ptx, SourceFile};

use crate::report::{CompileReport, CompileStatus};

/// The compiler's messages as rustc shows them: each with the student's line,
/// a caret under the column and, for first-week mistakes, a `help:`.
pub(super) fn print_diagnostics(file: &Path, diagnostics: &[ptx_build::Diagnostic]) {
    if diagnostics.is_empty() {
        return;
    }
    let source = std::fs::read_to_string(file).unwrap_or_default();
    for line in ptx_build::render_diagnostics(diagnostics, &source).lines() {
        println!("      {line}");
    }
}

/// How every student file is compiled for a device of compute capability
/// `arch` (the default where there is none). Always with line info: the
/// simulator names the student's `.cu` line of a race or a bad access, and
/// `-lineinfo` does not change the code a GPU runs, so the GPU and the
/// sanitizer pass run the same PTX. `grader batch` compiles ahead with these.
pub fn compile_options(arch: Option<(u32, u32)>) -> CompileOptions {
    CompileOptions {
        arch: arch.unwrap_or(CompileOptions::default().arch),
        line_info: true,
        ..CompileOptions::default()
    }
}

/// Whether a compile was abandoned in this process: every later compile would
/// queue behind it, so a batch worker that saw one is replaced.
pub fn compile_stuck() -> bool {
    STUCK_COMPILE.get().is_some()
}

pub(super) struct BuiltPart {
    pub(super) rel: String,
    pub(super) sha256: Option<String>,
    pub(super) report: CompileReport,
    /// `Err` holds why the checks cannot run.
    pub(super) build: Result<Arc<PartBuild>, String>,
}

impl BuiltPart {
    /// The same part, its module not yet loaded: for a check that runs on
    /// another simulator than the part's others (`super::side_by_side`).
    pub(super) fn again(&self) -> BuiltPart {
        BuiltPart {
            rel: self.rel.clone(),
            sha256: self.sha256.clone(),
            report: self.report.clone(),
            build: self.build.as_ref().map(|b| Arc::new(PartBuild::new(b.ptx.clone()))).map_err(Clone::clone),
        }
    }

    pub(super) fn line(&self) -> String {
        match (&self.build, self.report.diagnostics.len()) {
            (Ok(_), 0) => format!("ok{}", if self.report.from_cache { " (cached)" } else { "" }),
            (Ok(_), w) => format!("ok, {w} warning(s)"),
            (Err(_), _) if self.report.missing => "no file".into(),
            (Err(_), _) => "FAILED".into(),
        }
    }
}

/// Compiles `rel`, the part's file in the tree `sources` (`exercises`,
/// `reference`, `reference/slow`, ...) under `root`. A tree without the file is
/// no compile error: the part's report says `missing` and where the file was
/// looked for, and its checks' verdict is `missing-file`.
pub(super) fn compile_part(
    root: &Path,
    sources: &str,
    rel: &str,
    compiler: Result<&Compiler, &String>,
    options: &CompileOptions,
) -> BuiltPart {
    // The batch's `compile` bucket (kit::stats).
    kit::stats::timed(kit::stats::Counter::Compile, || {
        let failed = |sha256, diagnostics, message: String| BuiltPart {
            rel: rel.to_string(),
            sha256,
            report: CompileReport {
                status: CompileStatus::Error,
                diagnostics,
                message: Some(message.clone()),
                from_cache: false,
                missing: false,
            },
            build: Err(message),
        };
        let source = match SourceFile::read(&root.join(rel), rel) {
            Ok(s) => s,
            Err(BuildError::NotFound { .. }) => {
                let mut built = failed(None, Vec::new(), no_file_message(sources, rel));
                built.report.missing = true;
                return built;
            }
            Err(e) => return failed(None, Vec::new(), e.to_string()),
        };
        let sha = Some(source.sha256_hex());
        let compiler = match compiler {
            Ok(c) => c,
            Err(e) => return failed(sha, Vec::new(), format!("not compiled: {e}")),
        };
        let stuck = STUCK_COMPILE.get();
        let limit = if stuck.is_some() { CACHE_HIT_WAIT } else { compile_time_limit() };
        let Some(compiled) = compile_within(compiler, &source, options, limit) else {
            let why = match stuck {
                Some(first) => format!(
                    "{rel}: error: not compiled: the compiler is still busy with `{first}`, which took too long \
                     (it compiles one file at a time). Fix that file, or grade this part alone with --part"
                ),
                None => {
                    let _ = STUCK_COMPILE.set(rel.to_string());
                    format!(
                        "{rel}: error: compiling took longer than {} s and was stopped. Look for macros or \
                         templates that expand without end (each level doubling the code)",
                        limit.as_secs_f64()
                    )
                }
            };
            return failed(sha, Vec::new(), why);
        };
        match compiled {
            Ok(ptx) => BuiltPart {
                rel: rel.to_string(),
                sha256: sha,
                report: CompileReport {
                    status: CompileStatus::Ok,
                    diagnostics: ptx.diagnostics.clone(),
                    message: None,
                    from_cache: ptx.from_cache,
                    missing: false,
                },
                build: Ok(Arc::new(PartBuild::new(ptx.text))),
            },
            Err(e) => match (&e, e.first_error()) {
                (BuildError::Compile { diagnostics, .. }, Some(first)) => {
                    failed(sha, diagnostics.clone(), first.to_string())
                }
                _ => failed(sha, Vec::new(), e.to_string()),
            },
        }
    })
}

/// What a part without a file in the graded tree says, for a student's tree and
/// for a tree of variants alike.
pub(super) fn no_file_message(sources: &str, rel: &str) -> String {
    let advice = if sources == "exercises" {
        "the part's file is not there: check that it exists and is named exactly as the exercise says"
    } else {
        "this tree holds no variant of this part: its checks could not run"
    };
    format!("no file for this part in {sources}: `{rel}` does not exist ({advice})")
}

/// Seconds one student file may take to compile (default 60). A few lines of
/// macros can keep NVRTC busy for hours, and NVRTC runs inside this process.
pub const COMPILE_TIMEOUT_ENV: &str = "CUDA_LAB_COMPILE_TIMEOUT";

const DEFAULT_COMPILE_TIMEOUT: Duration = Duration::from_secs(60);

/// The file whose compile was abandoned, if one was. NVRTC compiles one file at
/// a time per process, so every later compile only queues behind it.
static STUCK_COMPILE: OnceLock<String> = OnceLock::new();

/// How long later compiles wait once one is stuck: enough for a cache hit.
const CACHE_HIT_WAIT: Duration = Duration::from_secs(1);

fn compile_time_limit() -> Duration {
    std::env::var(COMPILE_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_COMPILE_TIMEOUT, Duration::from_secs_f64)
}

/// Compiles on a thread of its own and stops waiting after `limit` (`None`).
/// NVRTC cannot be interrupted: a runaway compile is abandoned, busy on one
/// core until the grader exits.
fn compile_within(
    compiler: &Compiler,
    source: &SourceFile,
    options: &CompileOptions,
    limit: Duration,
) -> Option<Result<Ptx, BuildError>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let job = (compiler.clone(), source.clone(), options.clone());
    let spawned = std::thread::Builder::new()
        .name(format!("compile {}", source.display_path))
        // The main thread's room: deep template recursion recurses in the compiler too.
        .stack_size(64 << 20)
        .spawn(move || {
            let (compiler, source, options) = job;
            let _ = tx.send(compiler.compile(&source, &options));
        });
    match spawned.map(|_| rx.recv_timeout(limit)) {
        Ok(Ok(compiled)) => Some(compiled),
        Ok(Err(RecvTimeoutError::Timeout)) => None,
        Ok(Err(RecvTimeoutError::Disconnected)) => {
            Some(Err(BuildError::Other(format!("{}: error: the compiler crashed", source.display_path))))
        }
        Err(_) => Some(compiler.compile(source, options)),
    }
}
