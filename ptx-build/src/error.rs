//! The one error type. Every message is written for the student who reads it:
//! it says what went wrong and what to do about it.

use std::path::PathBuf;

use crate::diagnostics::Diagnostic;

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A compiler or a source file that is not where we looked.
    #[error("{what} was not found. Searched: {}. {hint}", list_paths(.searched))]
    NotFound { what: String, searched: Vec<PathBuf>, hint: String },

    /// The compiler rejected the source. Display: every diagnostic, one per line.
    #[error("{}", compile_message(.file, .diagnostics))]
    Compile {
        /// The display path of the source.
        file: String,
        /// At least one has severity `Error`, in the order the compiler gave them.
        diagnostics: Vec<Diagnostic>,
        /// The compiler's log, capped (see `MAX_LOG_BYTES`).
        log: String,
    },

    /// The source asks for something exercise files may not do (an `#include`
    /// of a file from disk, ...). Checked before any compiler sees the source.
    #[error("{file}:{line}: error: {reason}")]
    Refused { file: String, line: u32, reason: String },

    /// Reading or writing a file failed for a reason other than "not there".
    #[error("{context}: {error}")]
    Io { context: String, error: std::io::Error },

    #[error(
        "`{file}` is not UTF-8 text: byte 0x{byte:02X} at byte offset {offset} (line {line}, column {column}) \
         is not valid UTF-8. Save the file with UTF-8 encoding (or remove the non-ASCII character)."
    )]
    NotUtf8 { file: String, offset: usize, line: u32, column: u32, byte: u8 },

    #[error("`{file}` is {} but a source file may be at most {}: is this the right file?", human_size(*.size), human_size(*.limit))]
    TooLarge { file: String, size: u64, limit: u64 },

    #[error("`{file}` is {} ({}): name the `.cu` file itself", if *.is_dir { "a folder, not a file" } else { "not a regular file" }, .path.display())]
    NotAFile { file: String, path: PathBuf, is_dir: bool },

    #[error("{0}")]
    Other(String),
}

impl BuildError {
    /// The first diagnostic of severity `Error`, for a one-line summary.
    pub fn first_error(&self) -> Option<&Diagnostic> {
        match self {
            BuildError::Compile { diagnostics, .. } => {
                diagnostics.iter().find(|d| d.severity == crate::Severity::Error).or(diagnostics.first())
            }
            _ => None,
        }
    }
}

fn list_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "(nowhere)".into();
    }
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

fn compile_message(file: &str, diagnostics: &[Diagnostic]) -> String {
    if diagnostics.is_empty() {
        return format!("{file}: error: compilation failed (the compiler gave no message)");
    }
    diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
}

fn human_size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else if b >= KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_lists_where_it_looked() {
        let e = BuildError::NotFound {
            what: "NVRTC (the CUDA runtime compiler)".into(),
            searched: vec!["/a/lib64".into(), "/b".into()],
            hint: "Install it.".into(),
        };
        assert_eq!(
            e.to_string(),
            "NVRTC (the CUDA runtime compiler) was not found. Searched: /a/lib64, /b. Install it."
        );
    }

    #[test]
    fn sizes_are_human() {
        assert_eq!(human_size(1 << 20), "1.0 MiB");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(12), "12 bytes");
    }
}
