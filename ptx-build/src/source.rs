//! One student source file, read with errors a student can act on.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::BuildError;

/// Larger files are refused: exercise kernels are a few KiB, and a huge file is
/// almost always the wrong one.
pub const DEFAULT_MAX_SOURCE_BYTES: u64 = 1 << 20;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// What every message calls the file (e.g. `exercises/ex01-pi/kernels/pi.cu`).
    pub display_path: String,
    pub text: String,
}

impl SourceFile {
    /// Reads a UTF-8 file of at most [`DEFAULT_MAX_SOURCE_BYTES`]; empty is fine.
    pub fn read(path: &Path, display_path: impl Into<String>) -> Result<SourceFile, BuildError> {
        Self::read_with_limit(path, display_path, DEFAULT_MAX_SOURCE_BYTES)
    }

    pub fn read_with_limit(
        path: &Path,
        display_path: impl Into<String>,
        max_bytes: u64,
    ) -> Result<SourceFile, BuildError> {
        let file = display_path.into();
        let io = |error: std::io::Error| BuildError::Io { context: format!("could not read `{file}`"), error };
        let mut f = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(BuildError::NotFound {
                    what: format!("The source file `{file}`"),
                    searched: vec![path.to_path_buf()],
                    hint: "Check that the file exists and is named exactly as the exercise says.".into(),
                })
            }
            Err(e) => return Err(io(e)),
        };
        // Check the opened file, not the path, so nothing can change in between.
        let meta = f.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(BuildError::NotAFile { file, path: path.to_path_buf(), is_dir: meta.is_dir() });
        }
        if meta.len() > max_bytes {
            return Err(BuildError::TooLarge { file, size: meta.len(), limit: max_bytes });
        }
        // `take` guards against a file that grows while we read it.
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        f.by_ref().take(max_bytes + 1).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() as u64 > max_bytes {
            let size = meta.len().max(bytes.len() as u64);
            return Err(BuildError::TooLarge { file, size, limit: max_bytes });
        }
        match String::from_utf8(bytes) {
            Ok(text) => Ok(SourceFile { display_path: file, text }),
            Err(e) => Err(not_utf8(file, e.as_bytes(), e.utf8_error().valid_up_to())),
        }
    }

    pub fn from_text(display_path: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile { display_path: display_path.into(), text: text.into() }
    }

    /// SHA-256 of the text, lowercase hex.
    pub fn sha256_hex(&self) -> String {
        hex(&Sha256::digest(self.text.as_bytes()))
    }
}

fn not_utf8(file: String, bytes: &[u8], offset: usize) -> BuildError {
    // Everything before `offset` is valid UTF-8.
    let before = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    BuildError::NotUtf8 {
        file,
        offset,
        line: before.matches('\n').count() as u32 + 1,
        column: before[line_start..].chars().count() as u32 + 1,
        byte: bytes[offset],
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utf8_and_empty_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.cu");
        std::fs::write(&p, "// héllo\n__global__ void k() {}\n").unwrap();
        let s = SourceFile::read(&p, "kernels/k.cu").unwrap();
        assert_eq!(s.display_path, "kernels/k.cu");
        assert!(s.text.contains("héllo"));
        std::fs::write(&p, "").unwrap();
        assert_eq!(SourceFile::read(&p, "k.cu").unwrap().text, "");
    }

    #[test]
    fn not_utf8_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.cu");
        // Latin-1 "é" on line 2, after "// h" (and the é on line 1 is fine UTF-8).
        std::fs::write(&p, b"// \xc3\xa9\n// h\xe9llo\n").unwrap();
        let e = SourceFile::read(&p, "kernels/k.cu").unwrap_err();
        match &e {
            BuildError::NotUtf8 { offset, line, column, byte, .. } => {
                assert_eq!((*offset, *line, *column, *byte), (10, 2, 5, 0xe9));
            }
            other => panic!("{other:?}"),
        }
        let msg = e.to_string();
        assert!(
            msg.contains("`kernels/k.cu` is not UTF-8") && msg.contains("byte offset 10 (line 2, column 5)"),
            "{msg}"
        );
    }

    #[test]
    fn too_large_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.cu");
        std::fs::write(&p, vec![b' '; 2048]).unwrap();
        let e = SourceFile::read_with_limit(&p, "k.cu", 1024).unwrap_err();
        assert!(matches!(e, BuildError::TooLarge { size: 2048, limit: 1024, .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "`k.cu` is 2.0 KiB but a source file may be at most 1.0 KiB: is this the right file?"
        );
        assert!(SourceFile::read_with_limit(&p, "k.cu", 2048).is_ok());
        std::fs::write(&p, vec![b' '; (DEFAULT_MAX_SOURCE_BYTES + 1) as usize]).unwrap();
        assert!(matches!(SourceFile::read(&p, "k.cu"), Err(BuildError::TooLarge { .. })));
    }

    #[test]
    fn missing_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.cu");
        let e = SourceFile::read(&missing, "kernels/nope.cu").unwrap_err();
        assert!(matches!(e, BuildError::NotFound { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.starts_with("The source file `kernels/nope.cu` was not found. Searched: "), "{msg}");
        assert!(msg.contains(&missing.display().to_string()));
        let e = SourceFile::read(dir.path(), "kernels").unwrap_err();
        assert!(matches!(e, BuildError::NotAFile { is_dir: true, .. }), "{e:?}");
        assert!(e.to_string().starts_with("`kernels` is a folder, not a file ("), "{e}");
    }

    #[test]
    fn sha256_of_the_text() {
        let s = SourceFile::from_text("a.cu", "abc");
        assert_eq!(s.sha256_hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
