//! Runs one check of an exercise on a `.cu` file, without the grader and
//! without a GPU: for the exercises' own tests of their measured structure
//! checks and stand-ins (reference, `reference/slow`, planted and style variants).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use ptx_build::{CompileOptions, Compiler, SourceFile};

use crate::exercise::{CheckKind, Ctx, Exercise, PartBuild, RunEnv};

/// NVRTC, or `None` where it is missing (then the tests that need it pass
/// vacuously), except under `CUDA_LAB_REQUIRE_NVRTC` (CI), where that panics.
pub fn compiler() -> Option<Compiler> {
    match Compiler::nvrtc() {
        Ok(c) => Some(c),
        Err(e) if std::env::var_os("CUDA_LAB_REQUIRE_NVRTC").is_none() => {
            eprintln!("NVRTC not found, measured-check tests skipped: {e}");
            None
        }
        Err(e) => panic!("CUDA_LAB_REQUIRE_NVRTC is set but NVRTC is missing: {e}"),
    }
}

/// The PTX `compiler` makes of the workspace's file `file` (from the
/// repository's root; a corpus case's edit applied) with `options`.
pub fn ptx_of(compiler: &Compiler, file: &str, options: &CompileOptions) -> String {
    let source = ptx_build::SourceFile::read(&workspace_file(file), file).unwrap();
    compiler.compile(&source, options).unwrap().text
}

/// Runs `f` in the context of check `check` on the simulator (seed 1), the
/// student's file `file` (relative to the workspace root) compiled after
/// `edit` (a test may shrink a timed size): for an exercise's tests of its
/// timed check, whose launches and checks run here while the timing itself
/// needs a GPU. Does nothing without NVRTC (see [`compiler`]).
///
/// ```no_run
/// kit::trial::on_sim("ex10::private::perf::faster-than-global-atomics", "reference/ex10-histogram/kernels/histogram_private.cu", |t| t, |ctx| {
///     let module = ctx.kernel_module("histogram_private").unwrap();
///     // prepare, launch and check as the timed check does, on a small input
/// });
/// ```
pub fn on_sim(check: &str, file: &str, edit: impl FnOnce(String) -> String, f: impl FnOnce(&Ctx)) {
    let Some(compiler) = compiler() else { return };
    let options = CompileOptions::default();
    let text = std::fs::read_to_string(workspace_file(file)).unwrap_or_else(|e| panic!("reading {file}: {e}"));
    let ptx =
        compiler.compile(&SourceFile::from_text(file, edit(text)), &options).unwrap_or_else(|e| panic!("{file}: {e}"));
    let env = RunEnv::new(1, Some(crate::Gpu::simulator()), Some(compiler), options);
    let build = PartBuild::new(ptx.text);
    Ctx::new(check, &env, &build).run(f);
}

/// `file` (relative to the workspace root) compiled as the grader compiles it
/// for the simulator, and a run on the simulator (seed 1): for an exercise's
/// tests that run several of a part's checks on one build. `None` without NVRTC.
pub fn sim_env(file: &str) -> Option<(RunEnv, PartBuild)> {
    let compiler = compiler()?;
    let options = CompileOptions::default();
    let source = SourceFile::read(&workspace_file(file), file).unwrap_or_else(|e| panic!("reading {file}: {e}"));
    let ptx = compiler.compile(&source, &options).unwrap_or_else(|e| panic!("compiling {file}: {e}")).text;
    Some((RunEnv::new(1, Some(crate::Gpu::simulator()), Some(compiler), options), PartBuild::new(ptx)))
}

/// Every check of part `part` the simulator runs (all but the heavy ones; a
/// performance check by its measured stand-in) passes on `file`, each note
/// printed: how a case of the cheat corpus, whose trick acts only at the timed
/// size, is shown to pass everything else. Does nothing without NVRTC.
pub fn passes_every_check_on_sim(ex: &Exercise, part: &str, file: &str) {
    let Some((env, build)) = sim_env(file) else { return };
    let part = ex.parts.iter().find(|p| p.name == part).unwrap_or_else(|| panic!("no part {part}"));
    for check in part.checks.iter().filter(|c| !c.heavy) {
        let name = ex.test_name(part, check);
        let run = check.stand_in.as_ref().filter(|_| check.kind == CheckKind::Performance).unwrap_or(&check.run);
        let note =
            Ctx::new(&name, &env, &build).run(|ctx| run(ctx)).unwrap_or_else(|e| panic!("{file}, {name}: {e:#}"));
        eprintln!("pass {name}: {note}");
    }
}

/// Runs `f` in a context of check `check` on `file` compiled with line info
/// (as [`run`] compiles it), seed `seed` and no GPU: for an exercise's tests
/// that measure a kernel on shapes of their own (kit::measure runs it on a
/// private simulator). Does nothing without NVRTC.
pub fn with_measured_ctx(file: &str, seed: u64, check: &str, f: impl FnOnce(&Ctx)) {
    let Some(compiler) = compiler() else { return };
    let options = CompileOptions { line_info: true, ..CompileOptions::default() };
    let source = SourceFile::read(&workspace_file(file), file).unwrap_or_else(|e| panic!("reading {file}: {e}"));
    let ptx = compiler.compile(&source, &options).unwrap_or_else(|e| panic!("compiling {file}: {e}")).text;
    let env = RunEnv::new(seed, None, Some(compiler), options);
    let build = PartBuild::new(ptx);
    f(&Ctx::new(check, &env, &build));
}

/// A module shaped like NVRTC's output with one kernel, `kernel`, of one
/// pointer parameter: `module_scope` (declarations such as `.extern .shared
/// ...`) before it, `body` its instructions. For the tests of a structure
/// check that reads the PTX.
pub fn nvrtc_like_ptx(kernel: &str, module_scope: &str, body: &str) -> String {
    format!(
        ".version 8.8\n.target sm_75\n.address_size 64\n{module_scope}\n.visible .entry {kernel}(\n\t.param .u64 \
         {kernel}_param_0\n)\n{{\n{body}\n\tret;\n}}\n"
    )
}

/// A path relative to the workspace root. A corpus case's kernel kept as an
/// edit (`rel` + [`crate::case_file::EDIT`]) is written out whole, so a test
/// reads what the corpus grades.
pub fn workspace_file(rel: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join(rel);
    let edit = crate::case_file::kept(&path);
    if !crate::case_file::is_edit(&edit) {
        return path;
    }
    let whole = std::env::temp_dir().join(format!("cuda-lab-case-files-{}", std::process::id())).join(rel);
    // Test threads may ask at once: each writes its own copy, then renames it into place.
    let mine = whole.with_extension(format!("{:?}.part", std::thread::current().id()).replace(['(', ')'], ""));
    crate::case_file::write(&root, &edit, &mine).unwrap_or_else(|e| panic!("{rel}: {e:#}"));
    std::fs::rename(&mine, &whole).unwrap_or_else(|e| panic!("{}: {e}", whole.display()));
    whole
}

/// The file of variants case `case` at `below` (a path below `exercises/`,
/// `ex11-scan/kernels/brent_kung.cu`), relative to the workspace: the case's
/// own copy, or the kernel kept elsewhere that it points at (its `files` in
/// grader/tests/variants/expected.json), so a test reads what the corpus grades.
pub fn variant_file(case: &str, below: &str) -> String {
    let own = format!("grader/tests/variants/{case}/exercises/{below}");
    if crate::case_file::kept(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(&own)).exists() {
        return own;
    }
    let table = std::fs::read_to_string(workspace_file("grader/tests/variants/expected.json")).unwrap_or_default();
    let table: serde_json::Value = serde_json::from_str(&table).unwrap_or_default();
    table["cases"][case]["files"][below].as_str().map_or(own, String::from)
}

/// Which function of a check to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// The check itself.
    Check,
    /// A performance check's measured stand-in.
    StandIn,
}

/// Compiles `file` (relative to the workspace root) as the grader does for the
/// simulator and runs check `check` (its name, of any kind) of part `part`.
/// `None` without NVRTC.
pub fn run(ex: &Exercise, part: &str, check: &str, what: Run, file: &str) -> Option<Result<String>> {
    let compiler = compiler()?;
    let options = CompileOptions { line_info: true, ..CompileOptions::default() };
    let source = SourceFile::read(&workspace_file(file), file).unwrap_or_else(|e| panic!("reading {file}: {e}"));
    let ptx = compiler.compile(&source, &options).unwrap_or_else(|e| panic!("compiling {file}: {e}"));
    let part = ex.parts.iter().find(|p| p.name == part).unwrap_or_else(|| panic!("no part {part}"));
    let check = part
        .checks
        .iter()
        .find(|c| c.name == check && (what == Run::Check || c.kind == CheckKind::Performance))
        .unwrap_or_else(|| panic!("no check {check} in part {}", part.name));
    let env = RunEnv::new(1, None, Some(compiler), options);
    let build = PartBuild::new(ptx.text);
    let name = ex.test_name(part, check);
    let ctx = Ctx::new(&name, &env, &build);
    Some(match what {
        Run::Check => (check.run)(&ctx),
        Run::StandIn => match &check.stand_in {
            Some(f) => f(&ctx),
            None => Err(anyhow!("{name} has no stand-in")),
        },
    })
}

/// [`run`] that must pass; returns the note.
pub fn passes(ex: &Exercise, part: &str, check: &str, what: Run, file: &str) -> Option<String> {
    let note = run(ex, part, check, what, file)?
        .unwrap_or_else(|e| panic!("{part}::{check} ({what:?}) fails on {file}: {e:#}"));
    eprintln!("pass {part}::{check} ({what:?}) {file}: {note}");
    Some(note)
}

/// [`run`] that must fail; returns the message.
pub fn fails(ex: &Exercise, part: &str, check: &str, what: Run, file: &str) -> Option<String> {
    let msg = match run(ex, part, check, what, file)? {
        Ok(note) => panic!("{part}::{check} ({what:?}) passes on {file}: {note}"),
        Err(e) => format!("{e:#}"),
    };
    eprintln!("FAIL {part}::{check} ({what:?}) {file}: {msg}");
    Some(msg)
}
