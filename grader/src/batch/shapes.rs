//! The shapes secret of a batch's output folder (kit::SHAPES_SECRET_ENV):
//! drawn once from the operating system's entropy and kept in the folder, so
//! that every part of a class is measured alike, in a resumed run too, and so
//! is the reference whose figures the class report draws beside them (like
//! with like: the sampled blocks of a measurement at the timed size are drawn
//! from it). Only the TA's folder holds it; no submission sees it.

use std::path::Path;

use anyhow::{Context, Result};

const FILE_NAME: &str = "shapes-secret";

/// The secret kept in `out`, drawn and kept there first if it has none.
pub fn for_batch(out: &Path) -> Result<u64> {
    if let Some(secret) = kept(out) {
        return Ok(secret);
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let secret: u64 = rand::random();
    let path = out.join(FILE_NAME);
    // Two shards starting at once in one folder: the first one's stands.
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(mut f) => {
            std::io::Write::write_all(&mut f, format!("{secret:x}\n").as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            Ok(secret)
        }
        Err(_) => kept(out).with_context(|| format!("reading {}", path.display())),
    }
}

/// The secret a batch kept in `out`, if any.
pub fn kept(out: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(out.join(FILE_NAME)).ok()?;
    u64::from_str_radix(text.trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_keeps_its_secret_and_another_draws_its_own() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        assert_eq!(kept(a.path()), None);
        let first = for_batch(a.path()).unwrap();
        assert_eq!((for_batch(a.path()).unwrap(), kept(a.path())), (first, Some(first)));
        assert_ne!(for_batch(b.path()).unwrap(), first, "drawn afresh for another folder");
    }
}
