//! Compiles one CUDA C source file (a student's `.cu`) to PTX at run time.
//!
//! ```no_run
//! use ptx_build::{CompileOptions, Compiler, SourceFile};
//! # fn main() -> Result<(), ptx_build::BuildError> {
//! let compiler = Compiler::from_env()?.with_cache_dir("target/ptx-cache");
//! let src = SourceFile::read("exercises/ex01-pi/kernels/pi_global.cu".as_ref(), "ex01-pi/kernels/pi_global.cu")?;
//! let ptx = compiler.compile(&src, &CompileOptions::default())?;
//! for warning in &ptx.diagnostics {
//!     println!("{warning}");
//! }
//! # Ok(()) }
//! ```
//!
//! NVRTC is the default (no toolkit needed: the pip wheel is enough); clang's
//! CUDA mode is the second compiler, used where NVRTC cannot be had (macOS, an
//! NVRTC install that fails) or asked for (`CUDA_LAB_COMPILER=clang`); nvcc is
//! the third. Device headers (`<cuda_fp16.h>`, ...) come from the machine's
//! CUDA toolkit first (see `toolkit`). Before any compiler sees a source, [`check_source`] refuses any
//! `#include` other than a few in-memory headers, so a student's file cannot
//! read files of the grading machine.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

mod cache;
mod clang;
mod diagnostics;
mod error;
mod headers;
mod includes;
mod jit_rules;
mod nvcc;
mod nvrtc;
mod prelude;
mod process;
mod provision;
mod render;
mod source;
mod toolkit;

pub use diagnostics::{Diagnostic, Severity, MAX_DIAGNOSTICS, MAX_LOG_BYTES};
pub use error::BuildError;
pub use provision::{cache_root, OFFLINE_ENV};
pub use render::render_diagnostics;
pub use source::{SourceFile, DEFAULT_MAX_SOURCE_BYTES};

/// `nvrtc` (the default), `clang` or `nvcc`.
pub const COMPILER_ENV: &str = "CUDA_LAB_COMPILER";

/// Set to `1` to make NVRTC unavailable to this process, as on a Mac: with
/// `CUDA_LAB_COMPILER` unset the grader then compiles with clang. For tests
/// of that path on Linux.
pub const NO_NVRTC_ENV: &str = "CUDA_LAB_NO_NVRTC";

/// The readers of student-controlled text, for the fuzz targets and property
/// tests (fuzz/, tests/hostile_text.rs); not an API.
#[doc(hidden)]
pub mod fuzzing {
    use crate::diagnostics::{self, Diagnostic, LogContext};

    /// Reads a compiler log as [`crate::Compiler::compile`] does.
    pub fn parse_log(log: &str, display_path: &str, aliases: &[&str], source: &str) -> Vec<Diagnostic> {
        let cx = LogContext { aliases, display_path, source };
        diagnostics::ensure_error(diagnostics::parse_log(log, &cx), display_path, log)
    }

    /// The log kept in an error.
    pub fn cap_log(log: &str) -> String {
        diagnostics::cap_log(log)
    }

    /// Every file of the workspace's `fuzz/<dir>` (a corpus, the kept
    /// crashes), sorted, with its bytes; none where the folder is missing.
    pub fn fuzz_files(dir: &str) -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz").join(dir);
        let mut out: Vec<_> = std::fs::read_dir(dir)
            .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect())
            .unwrap_or_default();
        out.sort();
        out.into_iter().map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect()
    }
}

/// Checks `src` against the include policy without compiling it (what
/// [`Compiler::compile`] does first), with the default header families:
/// `Err(BuildError::Refused)` with the line.
pub fn check_source(src: &SourceFile) -> Result<(), BuildError> {
    check_source_with(src, &AllowedHeaders::default())
}

/// As [`check_source`], with the header families `allowed`.
pub fn check_source_with(src: &SourceFile, allowed: &AllowedHeaders) -> Result<(), BuildError> {
    includes::check(&src.text, allowed).map_err(|r| BuildError::Refused {
        file: src.display_path.clone(),
        line: r.line,
        reason: r.reason,
    })
}

/// The constants every compiled file can use without an include (`INFINITY`,
/// `NAN`, `FLT_MAX`, `INT_MAX`, ...): a prelude defines each one the compiler
/// does not (NVRTC has no `<math.h>`), without moving the file's line numbers.
pub fn prelude_names() -> impl Iterator<Item = &'static str> {
    prelude::names()
}

/// Names of the headers exercise files may include (all served from memory).
pub fn allowed_headers() -> impl Iterator<Item = &'static str> {
    headers::ALLOWED.iter().map(|h| h.name)
}

/// CUDA's device headers exercise files may include as `<name>` where a
/// course allows their family (read from the machine's CUDA toolkit, else a
/// CUDA include folder installed on first use).
pub fn device_headers() -> impl Iterator<Item = &'static str> {
    headers::device_names()
}

/// The header families a course may allow: `(name, what it is)`.
pub fn header_families() -> impl Iterator<Item = (&'static str, &'static str)> {
    headers::FAMILIES.iter().map(|f| (f.name, f.about))
}

/// Which families of CUDA's device headers a file may include besides the
/// in-memory C headers every file may (`<stdio.h>`, `<stdint.h>`, ...), and
/// where that was set, for the refusal's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedHeaders {
    families: Vec<&'static headers::Family>,
    /// Where the choice was made, as the student is told it: "cuda-lab.toml, `[headers] allow`".
    setting: String,
}

/// Where the default is said to come from.
pub const DEFAULT_HEADERS_SETTING: &str = "the default of cuda-lab.toml's `[headers] allow`";

impl Default for AllowedHeaders {
    /// [`headers::DEFAULT_FAMILIES`]: `cuda_fp16`, `cuda_bf16`, `cooperative_groups`.
    fn default() -> Self {
        Self::new(headers::DEFAULT_FAMILIES, DEFAULT_HEADERS_SETTING).expect("known families")
    }
}

impl AllowedHeaders {
    /// The families named `names` (each a [`header_families`] name), set by `setting`.
    pub fn new<S: AsRef<str>>(names: &[S], setting: impl Into<String>) -> Result<Self, String> {
        let mut families = Vec::new();
        for n in names {
            let n = n.as_ref();
            let f = headers::family(n).ok_or_else(|| {
                let known = headers::FAMILIES.iter().map(|f| format!("`{}`", f.name)).collect::<Vec<_>>().join(", ");
                format!("`{n}` is no header family the grader knows; it knows {known}")
            })?;
            if !families.contains(&f) {
                families.push(f);
            }
        }
        Ok(AllowedHeaders { families, setting: setting.into() })
    }

    /// The names of the families allowed, in the order given.
    pub fn families(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.families.iter().map(|f| f.name)
    }

    pub fn setting(&self) -> &str {
        &self.setting
    }

    /// Whether `name` (as included) may be included.
    pub fn allows(&self, name: &str) -> bool {
        headers::is_served(name) || self.families.iter().any(|f| f.holds(name))
    }

    /// "<stdio.h>, ..., <cuda_fp16.h>, ..." for messages.
    pub fn list(&self) -> String {
        headers::allowed_list(&self.families)
    }

    /// "cuda_fp16, cuda_bf16, cooperative_groups" (or "none").
    pub fn names(&self) -> String {
        match self.families.len() {
            0 => "none".into(),
            _ => self.families().collect::<Vec<_>>().join(", "),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Compute capability (major, minor); PTX is generated for `compute_XY`.
    pub arch: (u32, u32),
    /// Adds `-lineinfo` (source lines in the PTX, for profilers).
    pub line_info: bool,
    /// `-DNAME=VALUE`; an empty value gives `-DNAME` (defined as 1).
    pub defines: Vec<(String, String)>,
    /// Passed to the compiler as they are, after everything else.
    pub extra: Vec<String>,
    /// The families of CUDA's device headers the file may include (the course's choice).
    pub headers: AllowedHeaders,
}

impl Default for CompileOptions {
    /// compute_75 (Turing): old enough for every GPU in use, new enough that
    /// current CUDA releases still accept it. Used when there is no GPU to ask.
    fn default() -> Self {
        CompileOptions {
            arch: (7, 5),
            line_info: false,
            defines: Vec::new(),
            extra: Vec::new(),
            headers: AllowedHeaders::default(),
        }
    }
}

impl CompileOptions {
    /// "compute_75".
    pub fn arch_name(&self) -> String {
        format!("compute_{}{}", self.arch.0, self.arch.1)
    }

    fn define_args(&self) -> Vec<String> {
        self.defines.iter().map(|(k, v)| if v.is_empty() { format!("-D{k}") } else { format!("-D{k}={v}") }).collect()
    }

    fn validate(&self) -> Result<(), BuildError> {
        for (k, _) in &self.defines {
            let ident = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ident {
                return Err(BuildError::Other(format!("the define `{k}` is not a valid macro name")));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompilerKind {
    Nvrtc,
    Nvcc,
    /// clang's CUDA mode (LLVM), installed with pip like NVRTC.
    Clang,
}

impl CompilerKind {
    /// "nvrtc" / "nvcc" / "clang": the values of `CUDA_LAB_COMPILER`.
    pub fn name(self) -> &'static str {
        match self {
            CompilerKind::Nvrtc => "nvrtc",
            CompilerKind::Nvcc => "nvcc",
            CompilerKind::Clang => "clang",
        }
    }

    /// The kind `CUDA_LAB_COMPILER` asks for (unset or empty: NVRTC).
    pub fn from_env_value(value: Option<&str>) -> Result<CompilerKind, BuildError> {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("nvrtc") => Ok(CompilerKind::Nvrtc),
            Some("nvcc") => Ok(CompilerKind::Nvcc),
            Some("clang") => Ok(CompilerKind::Clang),
            Some(_) => Err(BuildError::Other(format!(
                "CUDA_LAB_COMPILER is `{}`; it must be `nvrtc` (the default), `clang` or `nvcc`",
                value.unwrap_or_default()
            ))),
        }
    }
}

impl std::fmt::Display for CompilerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CompilerKind::Nvrtc => "NVRTC",
            CompilerKind::Nvcc => "nvcc",
            CompilerKind::Clang => "clang",
        })
    }
}

/// A CUDA compiler that was found and works. Cheap to clone; usable from many
/// threads at once.
#[derive(Clone, Debug)]
pub struct Compiler {
    kind: CompilerKind,
    version: String,
    /// NVRTC's library, nvcc's executable or clang's (zig), where known.
    path: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    /// Where device headers come from, decided on first use (once per
    /// compiler: a failed download is not retried per file).
    device_includes: Arc<OnceLock<Result<toolkit::DeviceIncludes, String>>>,
}

impl Compiler {
    fn new(kind: CompilerKind, version: String, path: Option<PathBuf>) -> Compiler {
        Compiler { kind, version, path, cache_dir: None, device_includes: Arc::default() }
    }

    /// What `CUDA_LAB_COMPILER` asks for. Unset: NVRTC, and where NVRTC cannot
    /// be had (macOS, where NVIDIA ships none; an install that failed;
    /// `CUDA_LAB_NO_NVRTC=1`), clang, saying so in one line.
    pub fn from_env() -> Result<Compiler, BuildError> {
        let value = std::env::var(COMPILER_ENV).ok();
        let explicit = value.as_deref().is_some_and(|v| !v.trim().is_empty());
        match CompilerKind::from_env_value(value.as_deref())? {
            CompilerKind::Nvrtc if explicit => Compiler::nvrtc(),
            CompilerKind::Nvrtc if cfg!(target_os = "macos") => Compiler::clang(),
            CompilerKind::Nvrtc => Compiler::nvrtc().or_else(|nvrtc_error| {
                // Where clang could not be installed either (offline, no pip),
                // NVRTC's message says what to install, once.
                let clang = Compiler::clang().map_err(|clang_error| match clang_error {
                    BuildError::NotFound { .. } => nvrtc_error,
                    other => {
                        BuildError::Other(format!("{nvrtc_error} (clang, the other compiler, failed too: {other})"))
                    }
                })?;
                static SAID: OnceLock<()> = OnceLock::new();
                SAID.get_or_init(|| {
                    eprintln!("cuda-lab: NVRTC is not available here; compiling with {} instead", clang.version)
                });
                Ok(clang)
            }),
            CompilerKind::Nvcc => Compiler::nvcc(),
            CompilerKind::Clang => Compiler::clang(),
        }
    }

    /// Finds and loads NVRTC (once per process; see the README for where it looks).
    pub fn nvrtc() -> Result<Compiler, BuildError> {
        let (version, path) = nvrtc::load()?;
        Ok(Compiler::new(CompilerKind::Nvrtc, version, path))
    }

    /// Finds nvcc and asks it for its version.
    pub fn nvcc() -> Result<Compiler, BuildError> {
        let path = nvcc::locate()?;
        let version = nvcc::version(&path)?;
        Ok(Compiler::new(CompilerKind::Nvcc, version, Some(path)))
    }

    /// clang's CUDA mode, installed into the grader's cache on first use
    /// (once per process; about 80 MB to download).
    pub fn clang() -> Result<Compiler, BuildError> {
        let install = clang::load()?;
        Ok(Compiler::new(CompilerKind::Clang, install.version.clone(), Some(install.zig.clone())))
    }

    /// Where this compiler reads CUDA's device headers (`<cuda_fp16.h>`, ...)
    /// from, for people: "toolkit /usr/local/cuda/include", "provisioned cache
    /// ...", or why there are none. Installs nothing.
    pub fn header_source(&self) -> String {
        if let Some(found) = self.device_includes.get() {
            return match found {
                Ok(d) => d.origin.clone(),
                Err(why) => format!("none: {why}"),
            };
        }
        match self.kind {
            CompilerKind::Clang => clang::load().map(clang::header_origin).unwrap_or_else(|e| format!("none: {e}")),
            CompilerKind::Nvcc => "nvcc's own toolkit".into(),
            CompilerKind::Nvrtc => toolkit::describe(self.path.as_deref()),
        }
    }

    /// NVRTC's device include folders, found (or installed) on first use.
    fn device_includes(&self) -> Result<toolkit::DeviceIncludes, String> {
        self.device_includes.get_or_init(|| toolkit::locate(self.path.as_deref())).clone()
    }

    /// Caches successful compiles in `dir` (created when first needed).
    /// Without this, nothing is cached.
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> Compiler {
        self.cache_dir = Some(dir.into());
        self
    }

    pub fn kind(&self) -> CompilerKind {
        self.kind
    }

    /// "NVRTC 12.9" or "nvcc 13.0".
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The NVRTC library or nvcc executable in use, where known.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache_dir.as_deref()
    }

    /// Compiles `src` to PTX. Warnings come back in `Ptx::diagnostics`; a
    /// source that breaks the include policy is refused before any compiler
    /// sees it.
    pub fn compile(&self, src: &SourceFile, opts: &CompileOptions) -> Result<Ptx, BuildError> {
        check_source_with(src, &opts.headers)?;
        // CUB's own headers use what CCCL deprecates (`Traits::CATEGORY`):
        // those warnings are not the student's to read.
        let quiet;
        let opts = if headers::uses_cub(&src.text) {
            let mut defines = opts.defines.clone();
            defines.push(("CCCL_IGNORE_DEPRECATED_API".to_string(), String::new()));
            quiet = CompileOptions { defines, ..opts.clone() };
            &quiet
        } else {
            opts
        };
        opts.validate()?;
        let key = self.cache_dir.as_ref().map(|_| {
            // Headers from another toolkit may compile differently.
            // NVRTC's are decided now (found, or installed), so the key names
            // the headers the compile will read.
            let headers = match (headers::uses_device_headers(&src.text), self.kind) {
                (false, _) => String::new(),
                (true, CompilerKind::Nvrtc) => {
                    self.device_includes().map(|d| d.origin).unwrap_or_else(|why| format!("none: {why}"))
                }
                (true, _) => self.header_source(),
            };
            cache::key(self.kind, &self.version, &headers, opts, &src.display_path, &src.text)
        });
        if let (Some(dir), Some(key)) = (&self.cache_dir, &key) {
            if let Some(hit) = cache::load(dir, key) {
                return Ok(hit);
            }
        }
        let ptx = match (self.kind, &self.path) {
            (CompilerKind::Nvrtc, _) => nvrtc::compile(src, opts, &self.version, &|| self.device_includes())?,
            (CompilerKind::Clang, _) => clang::compile(clang::load()?, src, opts)?,
            (CompilerKind::Nvcc, Some(nvcc)) => nvcc::compile(nvcc, src, opts, &self.version)?,
            (CompilerKind::Nvcc, None) => return Err(BuildError::Other("nvcc: no executable".into())),
        };
        if let (Some(dir), Some(key)) = (&self.cache_dir, &key) {
            cache::store(dir, key, &ptx);
        }
        Ok(ptx)
    }
}

/// The result of a successful compile.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ptx {
    pub text: String,
    /// Warnings and notes (never errors), pointing at the display path.
    pub diagnostics: Vec<Diagnostic>,
    /// Served from the cache directory rather than compiled now.
    #[serde(default)]
    pub from_cache: bool,
    /// The compiler that produced it, e.g. "NVRTC 12.9" or "clang 22.1.8".
    pub compiler: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_kind_from_env_value() {
        assert_eq!(CompilerKind::from_env_value(None).unwrap(), CompilerKind::Nvrtc);
        assert_eq!(CompilerKind::from_env_value(Some("")).unwrap(), CompilerKind::Nvrtc);
        assert_eq!(CompilerKind::from_env_value(Some("NVCC ")).unwrap(), CompilerKind::Nvcc);
        assert_eq!(CompilerKind::from_env_value(Some("Clang")).unwrap(), CompilerKind::Clang);
        let e = CompilerKind::from_env_value(Some("gcc")).unwrap_err();
        assert_eq!(e.to_string(), "CUDA_LAB_COMPILER is `gcc`; it must be `nvrtc` (the default), `clang` or `nvcc`");
    }

    #[test]
    fn default_options() {
        let o = CompileOptions::default();
        assert_eq!(o.arch_name(), "compute_75");
        assert!(!o.line_info && o.defines.is_empty() && o.extra.is_empty());
        assert_eq!(CompileOptions { arch: (12, 0), ..o }.arch_name(), "compute_120");
    }

    #[test]
    fn bad_define_names_are_rejected() {
        let o = CompileOptions { defines: vec![("A B".into(), "1".into())], ..Default::default() };
        assert!(o.validate().is_err());
        let o = CompileOptions { defines: vec![("N_1".into(), "1".into())], ..Default::default() };
        assert!(o.validate().is_ok());
    }

    #[test]
    fn refusal_comes_before_any_compiler() {
        // A Compiler value that could not compile anything: the include check
        // must answer first.
        let c = Compiler::new(CompilerKind::Nvcc, "nvcc 0.0".into(), None);
        let src = SourceFile::from_text("kernels/pi.cu", "// x\n#include \"/etc/passwd\"\n");
        let e = c.compile(&src, &CompileOptions::default()).unwrap_err();
        assert!(matches!(e, BuildError::Refused { line: 2, .. }), "{e:?}");
        assert!(e.to_string().starts_with("kernels/pi.cu:2: error: `#include \"/etc/passwd\"` is not allowed"), "{e}");
    }

    #[test]
    fn types_are_thread_safe() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Compiler>();
        check::<BuildError>();
        check::<Ptx>();
    }
}
