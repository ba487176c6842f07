//! Hostile submission trees for the batch intake, described by bytes so that
//! the cargo-fuzz target (fuzz/fuzz_targets/intake.rs) and the property test
//! (tests/intake_props.rs) share one decoder and one set of invariants.
//!
//! A tree holds files, folders, symbolic links (to a secret outside the
//! submission, to folders, to each other), FIFOs, sparse files at and past
//! the size limit, and names in any encoding (any bytes but `/` and NUL).

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use grader::batch::intake::{Intake, MAX_SOURCE_BYTES};

/// What every secret outside the submission holds; never staged.
pub const SECRET: &[u8] = b"SECRET-OUTSIDE-THE-SUBMISSION";

/// The files the intake looks for (as a course of two exercises would).
pub fn expected() -> Vec<String> {
    vec![
        "exercises/ex01-pi/kernels/a.cu".into(),
        "exercises/ex01-pi/kernels/b.cu".into(),
        "exercises/ex02-dot/kernels/c.cu".into(),
    ]
}

const WORDS: &[&str] = &["exercises", "ex01-pi", "ex02-dot", "kernels", "a.cu", "b.cu", "c.cu", "nested"];

#[derive(Debug)]
pub enum Node {
    File(Vec<u8>),
    /// A sparse file of this many bytes.
    Sized(u64),
    Dir,
    /// A link to this target (absolute or relative).
    Link(PathBuf),
    Fifo,
}

/// Decodes `data` into at most 24 (path, node) pairs; never fails.
pub fn decode(data: &[u8], secret_dir: &Path) -> Vec<(Vec<Vec<u8>>, Node)> {
    let mut r = Reader(data);
    let mut out = Vec::new();
    while out.len() < 24 {
        let Some(op) = r.byte() else { break };
        let depth = 1 + r.byte().unwrap_or(0) as usize % 4;
        let mut path = Vec::new();
        for _ in 0..depth {
            let sel = r.byte().unwrap_or(0);
            if sel < 224 {
                path.push(WORDS[sel as usize % WORDS.len()].as_bytes().to_vec());
            } else {
                let n = 1 + r.byte().unwrap_or(0) as usize % 12;
                let mut name: Vec<u8> = r.take(n).iter().map(|&b| if b == b'/' || b == 0 { b'_' } else { b }).collect();
                if name.is_empty() || name == b"." || name == b".." {
                    name = b"x".to_vec();
                }
                path.push(name);
            }
        }
        let node = match op % 8 {
            0..=2 => {
                let n = r.byte().unwrap_or(0) as usize * 4;
                Node::File(r.take(n).to_vec())
            }
            3 => Node::Sized(MAX_SOURCE_BYTES + (r.byte().unwrap_or(0) % 3) as u64 - 1),
            4 => Node::Dir,
            5 => Node::Link(match r.byte().unwrap_or(0) % 4 {
                0 => secret_dir.join("secret.cu"),
                1 => secret_dir.join("kernels"),
                2 => PathBuf::from("../../../.."),
                _ => PathBuf::from("a.cu"),
            }),
            6 => Node::Fifo,
            _ => Node::File(SECRET.to_vec()),
        };
        out.push((path, node));
    }
    out
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n.min(self.0.len()));
        self.0 = b;
        a
    }
}

/// A secret file and folder outside any submission.
pub fn plant_secrets(dir: &Path) {
    std::fs::write(dir.join("secret.cu"), SECRET).unwrap();
    std::fs::create_dir_all(dir.join("kernels")).unwrap();
    for f in ["a.cu", "b.cu", "c.cu"] {
        std::fs::write(dir.join("kernels").join(f), SECRET).unwrap();
    }
}

/// Creates what it can of `nodes` under `root` (a node whose folder is a file
/// or a link is skipped, as git could not check it out either).
pub fn build(root: &Path, nodes: &[(Vec<Vec<u8>>, Node)]) {
    for (parts, node) in nodes {
        let mut path = root.to_path_buf();
        for p in parts {
            path.push(OsStr::from_bytes(p));
        }
        let parent = path.parent().unwrap();
        if !real_dir_chain(root, parent) && std::fs::create_dir_all(parent).is_err() {
            continue;
        }
        if !real_dir_chain(root, parent) || std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        let _ = match node {
            Node::File(bytes) => std::fs::write(&path, bytes),
            Node::Sized(n) => std::fs::File::create(&path).and_then(|f| f.set_len(*n)),
            Node::Dir => std::fs::create_dir(&path),
            Node::Link(target) => std::os::unix::fs::symlink(target, &path),
            Node::Fifo => {
                let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
                // SAFETY: a valid NUL-terminated path.
                let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
                if rc == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            }
        };
    }
}

/// Every folder from `root` down to `dir` is a real folder (no link).
fn real_dir_chain(root: &Path, dir: &Path) -> bool {
    let Ok(rel) = dir.strip_prefix(root) else { return false };
    let mut p = root.to_path_buf();
    for c in rel.components() {
        p.push(c);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_dir() => {}
            _ => return false,
        }
    }
    true
}

/// The intake's promises, whatever the tree: every expected file is taken,
/// refused or missing (exactly one); nothing but taken files is staged; a
/// staged file is a copy of a regular file of the submission reached without
/// a link, within the size limit, and never a secret from outside.
pub fn check(sub: &Path, staging: &Path, intake: &Intake) {
    let expected = expected();
    let taken: BTreeSet<&String> = intake.taken.iter().collect();
    let refused: BTreeSet<&String> = intake.refused.iter().map(|r| &r.file).collect();
    let missing: BTreeSet<&String> = intake.missing.iter().collect();
    assert_eq!(taken.len() + refused.len() + missing.len(), expected.len(), "{intake:?}");
    for f in &expected {
        let n = [&taken, &refused, &missing].iter().filter(|s| s.contains(f)).count();
        assert_eq!(n, 1, "{f} is in {n} of taken/refused/missing: {intake:?}");
    }
    let flat = std::fs::symlink_metadata(sub.join("exercises")).is_err();
    assert_eq!(intake.layout, if flat { "flat" } else { "repository" });

    let mut staged = BTreeSet::new();
    for entry in walkdir::WalkDir::new(staging).min_depth(1) {
        let entry = entry.unwrap();
        let ft = entry.file_type();
        assert!(!ft.is_symlink(), "a link was staged: {}", entry.path().display());
        if ft.is_file() {
            let rel = entry.path().strip_prefix(staging).unwrap().to_str().unwrap().to_string();
            assert!(taken.contains(&rel), "{rel} was staged but not taken: {intake:?}");
            staged.insert(rel);
        }
    }
    assert_eq!(staged.len(), taken.len(), "taken but not staged: {intake:?}");
    for rel in &staged {
        let bytes = std::fs::read(staging.join(rel)).unwrap();
        assert!(bytes.len() as u64 <= MAX_SOURCE_BYTES);
        let origin = if flat { sub.join(rel.rsplit('/').next().unwrap()) } else { sub.join(rel) };
        assert!(real_dir_chain(sub, origin.parent().unwrap()), "{rel} was reached through a link");
        let meta = std::fs::symlink_metadata(&origin).unwrap();
        assert!(meta.file_type().is_file(), "{rel} is not a regular file in the submission");
        assert_eq!(bytes, std::fs::read(&origin).unwrap(), "{rel} differs from the submission's file");
    }
}
