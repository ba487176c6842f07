//! Which folders are submissions, what each student is called, and which
//! shard grades whom.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, Context, Result};
use percent_encoding::{percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// One student's folder (one repository of GitHub Classroom's download).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// Lossless and safe as a file name: the folder name's bytes, percent-encoded
    /// where they are not `[A-Za-z0-9._-]` (so `ana-lab1` stays `ana-lab1`).
    pub key: String,
    /// The folder name for people to read (invalid UTF-8 shown as U+FFFD).
    pub name: String,
    pub dir: PathBuf,
}

/// Bytes kept as they are in a key; everything else becomes `%XX`.
const KEY_SAFE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

pub fn key_of(folder_name: &OsStr) -> String {
    percent_encode(folder_name.as_bytes(), KEY_SAFE).to_string()
}

/// The folders directly under `dir`, sorted by key; hidden ones (`.git`, ...)
/// and plain files are skipped. A symbolic link is not a submission either:
/// it could point anywhere on the grading machine.
pub fn discover(dir: &Path) -> Result<Vec<Submission>> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(dir).min_depth(1).max_depth(1).follow_links(false) {
        let entry = entry.with_context(|| format!("reading the submissions folder {}", dir.display()))?;
        let name = entry.file_name();
        if name.as_bytes().starts_with(b".") || !entry.file_type().is_dir() {
            continue;
        }
        found.push(Submission { key: key_of(name), name: name.to_string_lossy().into_owned(), dir: entry.into_path() });
    }
    found.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(found)
}

/// `--shard i/n`: the submissions whose key hashes to `i` modulo `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub fn contains(&self, key: &str) -> bool {
        fnv1a64(key.as_bytes()) % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        let Some((i, n)) = s.split_once('/') else { bail!("a shard is written i/n, e.g. 0/4 (got `{s}`)") };
        let (index, count): (u64, u64) =
            (i.trim().parse().context("the shard index")?, n.trim().parse().context("the shard count")?);
        if count == 0 || index >= count {
            bail!("shard {s}: needs 0 <= i < n (shards of 4 are 0/4, 1/4, 2/4 and 3/4)");
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// 64-bit FNV-1a: a fixed, documented function, so every machine of a sharded
/// batch (and every version of this grader) splits a class the same way.
/// `std`'s hasher is randomly seeded and may change between releases.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn keys_are_lossless_and_safe() {
        assert_eq!(key_of(OsStr::new("hw1-ana_b.2")), "hw1-ana_b.2");
        assert_eq!(key_of(OsStr::new("a b/é")), "a%20b%2F%C3%A9");
        let raw = OsStr::from_bytes(b"bad-\xff\xfe");
        assert_eq!(key_of(raw), "bad-%FF%FE");
        assert_ne!(key_of(raw), key_of(OsStr::new("bad-\u{fffd}\u{fffd}")));
    }

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn shards_partition_the_class() {
        let shards: Vec<Shard> = (0..3).map(|i| format!("{i}/3").parse().unwrap()).collect();
        for key in ["a", "b", "ana", "bob", "%FF"] {
            assert_eq!(shards.iter().filter(|s| s.contains(key)).count(), 1, "{key}");
        }
        assert!("3/3".parse::<Shard>().is_err());
        assert!("1".parse::<Shard>().is_err());
        assert_eq!("1/4".parse::<Shard>().unwrap().to_string(), "1/4");
    }

    #[test]
    fn discovery_skips_hidden_folders_files_and_links() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["b", "a", ".git"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        std::os::unix::fs::symlink("/", dir.path().join("link")).unwrap();
        let found: Vec<String> = discover(dir.path()).unwrap().into_iter().map(|s| s.key).collect();
        assert_eq!(found, ["a", "b"]);
    }
}
