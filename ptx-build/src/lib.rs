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
//! NVRTC is the default (no toolkit needed: the pip wheel is enough); nvcc is
//! the alternative. Before either sees a source, [`check_source`] refuses any
//! `#include` other than a few in-memory headers, so a student's file cannot
//! read files of the grading machine.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod cache;
mod diagnostics;
mod error;
mod headers;
mod includes;
mod nvcc;
mod nvrtc;
mod process;
mod provision;
mod render;
mod source;

pub use diagnostics::{Diagnostic, Severity, MAX_DIAGNOSTICS, MAX_LOG_BYTES};
pub use error::BuildError;
pub use provision::OFFLINE_ENV;
pub use render::render_diagnostics;
pub use source::{SourceFile, DEFAULT_MAX_SOURCE_BYTES};

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
}

/// Checks `src` against the include policy without compiling it (what
/// [`Compiler::compile`] does first): `Err(BuildError::Refused)` with the line.
pub fn check_source(src: &SourceFile) -> Result<(), BuildError> {
    includes::check(&src.text).map_err(|r| BuildError::Refused {
        file: src.display_path.clone(),
        line: r.line,
        reason: r.reason,
    })
}

/// Names of the headers exercise files may include (all served from memory).
pub fn allowed_headers() -> impl Iterator<Item = &'static str> {
    headers::ALLOWED.iter().map(|h| h.name)
}

/// CUDA's device headers exercise files may include as `<name>` (read from
/// the provisioned CUDA include folder, installed on first use).
pub fn device_headers() -> impl Iterator<Item = &'static str> {
    headers::DEVICE.iter().copied()
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
}

impl Default for CompileOptions {
    /// compute_75 (Turing): old enough for every GPU in use, new enough that
    /// current CUDA releases still accept it. Used when there is no GPU to ask.
    fn default() -> Self {
        CompileOptions { arch: (7, 5), line_info: false, defines: Vec::new(), extra: Vec::new() }
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
}

impl CompilerKind {
    /// "nvrtc" / "nvcc": the values of `CUDA_LAB_COMPILER`.
    pub fn name(self) -> &'static str {
        match self {
            CompilerKind::Nvrtc => "nvrtc",
            CompilerKind::Nvcc => "nvcc",
        }
    }

    /// The kind `CUDA_LAB_COMPILER` asks for (unset or empty: NVRTC).
    pub fn from_env_value(value: Option<&str>) -> Result<CompilerKind, BuildError> {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("nvrtc") => Ok(CompilerKind::Nvrtc),
            Some("nvcc") => Ok(CompilerKind::Nvcc),
            Some(_) => Err(BuildError::Other(format!(
                "CUDA_LAB_COMPILER is `{}`; it must be `nvrtc` (the default) or `nvcc`",
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
        })
    }
}

/// A CUDA compiler that was found and works. Cheap to clone; usable from many
/// threads at once.
#[derive(Clone, Debug)]
pub struct Compiler {
    kind: CompilerKind,
    version: String,
    /// NVRTC's library or nvcc's executable, where known.
    path: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
}

impl Compiler {
    /// NVRTC, unless the environment variable `CUDA_LAB_COMPILER=nvcc`.
    pub fn from_env() -> Result<Compiler, BuildError> {
        let value = std::env::var("CUDA_LAB_COMPILER").ok();
        match CompilerKind::from_env_value(value.as_deref())? {
            CompilerKind::Nvrtc => Compiler::nvrtc(),
            CompilerKind::Nvcc => Compiler::nvcc(),
        }
    }

    /// Finds and loads NVRTC (once per process; see the README for where it looks).
    pub fn nvrtc() -> Result<Compiler, BuildError> {
        let (version, path) = nvrtc::load()?;
        Ok(Compiler { kind: CompilerKind::Nvrtc, version, path, cache_dir: None })
    }

    /// Finds nvcc and asks it for its version.
    pub fn nvcc() -> Result<Compiler, BuildError> {
        let path = nvcc::locate()?;
        let version = nvcc::version(&path)?;
        Ok(Compiler { kind: CompilerKind::Nvcc, version, path: Some(path), cache_dir: None })
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
        check_source(src)?;
        opts.validate()?;
        let key =
            self.cache_dir.as_ref().map(|_| cache::key(self.kind, &self.version, opts, &src.display_path, &src.text));
        if let (Some(dir), Some(key)) = (&self.cache_dir, &key) {
            if let Some(hit) = cache::load(dir, key) {
                return Ok(hit);
            }
        }
        let ptx = match (self.kind, &self.path) {
            (CompilerKind::Nvrtc, _) => nvrtc::compile(src, opts, &self.version)?,
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
    /// The compiler that produced it, e.g. "NVRTC 12.9".
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
        let e = CompilerKind::from_env_value(Some("clang")).unwrap_err();
        assert_eq!(e.to_string(), "CUDA_LAB_COMPILER is `clang`; it must be `nvrtc` (the default) or `nvcc`");
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
        let c = Compiler { kind: CompilerKind::Nvcc, version: "nvcc 0.0".into(), path: None, cache_dir: None };
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
