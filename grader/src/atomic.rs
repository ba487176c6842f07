//! Atomic file writes: a reader (or a batch resumed after a kill) sees the old
//! file or the new one, never half of one.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

/// Writes `bytes` to a temporary file in `path`'s folder, then renames it over
/// `path` (a rename within one folder is atomic on POSIX file systems).
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes).with_context(|| format!("writing {}", path.display()))?;
    tmp.as_file().sync_all().with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

/// Like [`write`], but leaves the file alone (and its mtime) when it already
/// holds exactly `bytes`. Derived files (gradebooks) are rebuilt on every run;
/// this keeps a resumed batch from touching what did not change.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    write(path, bytes)?;
    Ok(true)
}

pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<bool> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    write_if_changed(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replace_whole_files_and_leave_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/a.json");
        write(&path, b"first").unwrap();
        write(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let names: Vec<_> =
            std::fs::read_dir(dir.path().join("sub")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["a.json"]);
    }

    #[test]
    fn unchanged_content_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        assert!(write_if_changed(&path, b"x").unwrap());
        assert!(!write_if_changed(&path, b"x").unwrap());
        assert!(write_if_changed(&path, b"y").unwrap());
    }
}
