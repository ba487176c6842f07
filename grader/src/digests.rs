//! `grader compare-digests A B`: compares two output-digest files (see
//! `kit::digest`) written by grading the same seed on two backends, e.g. a GPU
//! and the simulator. Reads are matched by check, buffer and order within the check.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

type Key = (String, String, usize);

fn load(path: &Path) -> Result<BTreeMap<Key, String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut f = line.split('\t');
        let (Some(check), Some(buffer), Some(sha)) = (f.next(), f.next(), f.next()) else { continue };
        let n = seen.entry((check.into(), buffer.into())).or_default();
        out.insert((check.to_string(), buffer.to_string(), *n), sha.to_string());
        *n += 1;
    }
    Ok(out)
}

/// What two digest files have in common.
#[derive(Debug, Default, PartialEq)]
pub struct Comparison {
    pub identical: usize,
    pub different: Vec<String>,
    pub only_one_side: usize,
}

pub fn compare(a: &Path, b: &Path) -> Result<Comparison> {
    let (a, b) = (load(a)?, load(b)?);
    let mut c = Comparison::default();
    for (key, sha) in &a {
        match b.get(key) {
            Some(other) if other == sha => c.identical += 1,
            Some(_) => c.different.push(format!("{} `{}` (read {})", key.0, key.1, key.2 + 1)),
            None => c.only_one_side += 1,
        }
    }
    c.only_one_side += b.keys().filter(|k| !a.contains_key(k)).count();
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_reads_by_check_buffer_and_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "c1\tout\t11\nc1\tout\t12\nc2\thits\t5\nc3\tx\t9\n").unwrap();
        std::fs::write(&b, "c1\tout\t11\nc1\tout\t99\nc2\thits\t5\n").unwrap();
        let c = compare(&a, &b).unwrap();
        assert_eq!(c.identical, 2);
        assert_eq!(c.different, vec!["c1 `out` (read 2)".to_string()]);
        assert_eq!(c.only_one_side, 1);
    }
}
