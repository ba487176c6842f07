//! Counters already read, kept per part and kernel, so that a batch starts the
//! profiler once per submission and not once per part, and profiles a kernel
//! that another submission already handed in (the same PTX) not at all.
//!
//! Only the grader's operator turns this on ([`ENV`]: a batch points it into
//! its output folder): a folder a student could write into (their own
//! checkout's `target/`) would let them hand in counters of their choosing.
//!
//! A kept entry is the GPU's figures for every measurement of one part, known
//! by the part (`ex07::coalesced`) and the digest of the PTX measured. The
//! folder it lies in is the run's own ([`Cache::for_run`]): the GPU model, the
//! seed (which makes the measurements' shapes and inputs) and the metrics read,
//! so another GPU or seed never finds another's figures. The batch starts a
//! fresh folder when the grader or the course's settings change.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{GpuCounters, Key};

/// The folder counters are kept in (set by a batch for its workers).
pub const ENV: &str = "CUDA_LAB_COUNTERS_CACHE";

/// The part a measurement's check belongs to: `ex07::coalesced` of
/// `ex07::coalesced::structure::coalesced-reads-and-writes`.
pub fn part_of(check: &str) -> String {
    check.split("::").take(2).collect::<Vec<_>>().join("::")
}

/// The digest a kept entry is known by.
pub fn digest(ptx: &str) -> String {
    format!("{:x}", Sha256::digest(ptx.as_bytes()))
}

/// A part the profiler's run compiled and measured: its figures (maybe none)
/// can be kept. The child writes one per part ([`mark_profiled`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profiled {
    pub part: String,
    pub ptx: String,
}

/// Where the child writes its [`Profiled`] parts, beside its launch log.
pub fn parts_log(launch_log: &Path) -> PathBuf {
    launch_log.with_extension("parts.jsonl")
}

/// In the child run: `part` (PTX `ptx`) was measured, whatever its measurements counted.
pub fn mark_profiled(part: &str, ptx: &str) {
    let Some(log) = std::env::var_os(super::COLLECT_ENV) else { return };
    append(&parts_log(Path::new(&log)), &Profiled { part: part.to_string(), ptx: digest(ptx) });
}

/// The parts the child marked (none if it wrote nothing).
pub fn read_profiled(launch_log: &Path) -> Vec<Profiled> {
    read_lines(&parts_log(launch_log))
}

/// Where the child writes, before a measurement's launches on the GPU, whose
/// they are: a child stopped for making no progress was stuck in the last
/// one where it started more measurements than it finished (the launch log
/// has a line per measurement finished).
pub fn started_log(launch_log: &Path) -> PathBuf {
    launch_log.with_extension("started.jsonl")
}

/// In the child run: the measurement of `part` (PTX `ptx`) starts its launches.
pub(crate) fn mark_started(launch_log: &Path, part: &str, ptx: &str) {
    append(&started_log(launch_log), &Profiled { part: part.to_string(), ptx: digest(ptx) });
}

/// The part whose measurement the child started and did not finish, if any.
pub fn unfinished(launch_log: &Path) -> Option<Profiled> {
    let started: Vec<Profiled> = read_lines(&started_log(launch_log));
    let finished = std::fs::read_to_string(launch_log).unwrap_or_default().lines().count();
    started.last().filter(|_| started.len() > finished).cloned()
}

fn append(log: &Path, entry: &impl Serialize) {
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
        let _ = writeln!(f, "{}", serde_json::to_string(entry).unwrap_or_default());
    }
}

fn read_lines<T: serde::de::DeserializeOwned>(log: &Path) -> Vec<T> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// A folder of kept counters.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// The folder [`ENV`] names, if it is set.
    pub fn from_env() -> Option<Cache> {
        std::env::var_os(ENV).filter(|d| !d.is_empty()).map(|d| Cache { dir: PathBuf::from(d) })
    }

    pub fn at(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of one run's figures: `salt` names what they depend on
    /// beyond the PTX (the GPU, the seed, the metrics).
    pub fn for_run(&self, salt: &str) -> Cache {
        Cache { dir: self.dir.join(&digest(salt)[..24]) }
    }

    fn entry(&self, part: &str, ptx_digest: &str) -> PathBuf {
        self.dir.join(format!("{}-{}.json", part.replace("::", "-"), &ptx_digest[..ptx_digest.len().min(32)]))
    }

    /// Where a part whose measurement never finished under the profiler is kept as such.
    fn stuck_entry(&self, part: &str, ptx_digest: &str) -> PathBuf {
        self.entry(part, ptx_digest).with_extension("stuck")
    }

    /// Whether `part`'s figures for the PTX of this [`digest`] are kept, or
    /// that its measurement got stuck (either way it is not profiled again).
    pub fn has(&self, part: &str, ptx_digest: &str) -> bool {
        self.entry(part, ptx_digest).is_file() || self.stuck_entry(part, ptx_digest).is_file()
    }

    /// Why `part`'s measurement of this PTX never finished on the GPU, if it did not.
    pub fn stuck(&self, part: &str, ptx_digest: &str) -> Option<String> {
        std::fs::read_to_string(self.stuck_entry(part, ptx_digest)).ok()
    }

    /// Keeps that `part`'s measurement of this PTX got stuck on the GPU, and why.
    pub fn put_stuck(&self, part: &str, ptx_digest: &str, why: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let path = self.stuck_entry(part, ptx_digest);
        let tmp = path.with_extension(format!("stuck.{}", std::process::id()));
        std::fs::write(&tmp, why)?;
        std::fs::rename(&tmp, &path)
    }

    /// `part`'s kept figures for the PTX of this [`digest`] (an empty map
    /// where its measurements counted nothing), or `None` where none are kept.
    pub fn get(&self, part: &str, ptx_digest: &str) -> Option<HashMap<Key, GpuCounters>> {
        let bytes = std::fs::read(self.entry(part, ptx_digest)).ok()?;
        let kept: Vec<(Key, GpuCounters)> = serde_json::from_slice(&bytes).ok()?;
        Some(kept.into_iter().collect())
    }

    /// Keeps the figures of `figures` that belong to `part` (an entry is
    /// written whole or not at all, so a reader never sees half of one).
    pub fn put(&self, part: &str, ptx_digest: &str, figures: &HashMap<Key, GpuCounters>) -> std::io::Result<()> {
        let mut mine: Vec<(&Key, &GpuCounters)> = figures.iter().filter(|(k, _)| part_of(&k.check) == part).collect();
        mine.sort_by(|a, b| (&a.0.check, a.0.ordinal, &a.0.kernel).cmp(&(&b.0.check, b.0.ordinal, &b.0.kernel)));
        std::fs::create_dir_all(&self.dir)?;
        let path = self.entry(part, ptx_digest);
        let tmp = path.with_extension(format!("json.{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec(&mine).map_err(std::io::Error::other)?)?;
        std::fs::rename(&tmp, &path)
    }

    /// Holds `name`'s lock until the returned file is dropped: the workers
    /// grading one submission's parts take turns, so that the first profiles
    /// the submission and the others find their figures kept.
    pub fn lock(&self, name: &str) -> std::io::Result<File> {
        std::fs::create_dir_all(&self.dir)?;
        let file = crate::gpu_lock::open(self.dir.join(format!("{}.lock", &digest(name)[..24])))?;
        crate::gpu_lock::flock(&file, libc::LOCK_EX);
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(check: &str) -> Key {
        Key { check: check.into(), kernel: "k".into(), ordinal: 0 }
    }

    #[test]
    fn a_part_keeps_its_own_figures_by_ptx_and_another_run_does_not_find_them() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path()).for_run("H200|seed 1");
        let mut figures = HashMap::new();
        figures.insert(
            key("ex07::coalesced::structure::a"),
            GpuCounters { global_load_sectors: 128, ..Default::default() },
        );
        figures
            .insert(key("ex07::naive::structure::b"), GpuCounters { global_load_sectors: 4096, ..Default::default() });
        let (one, two) = (digest("ptx one"), digest("ptx two"));
        assert!(cache.get("ex07::coalesced", &one).is_none() && !cache.has("ex07::coalesced", &one));
        cache.put("ex07::coalesced", &one, &figures).unwrap();
        assert!(cache.has("ex07::coalesced", &one));
        let kept = cache.get("ex07::coalesced", &one).unwrap();
        assert_eq!(kept.len(), 1, "only the part's own measurements: {kept:?}");
        assert_eq!(kept[&key("ex07::coalesced::structure::a")].global_load_sectors, 128);
        assert!(cache.get("ex07::coalesced", &two).is_none(), "another kernel is profiled anew");
        let other_seed = Cache::at(dir.path()).for_run("H200|seed 2");
        assert!(other_seed.get("ex07::coalesced", &one).is_none(), "another seed measures other inputs");
        // A part whose measurements counted nothing is kept as such.
        cache.put("ex09::picture", &digest("p"), &figures).unwrap();
        assert_eq!(cache.get("ex09::picture", &digest("p")).map(|f| f.len()), Some(0));
    }

    #[test]
    fn a_stuck_part_is_kept_as_stuck_and_not_profiled_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let ptx = digest("endless");
        assert!(!cache.has("ex03::rect", &ptx) && cache.stuck("ex03::rect", &ptx).is_none());
        cache.put_stuck("ex03::rect", &ptx, "never finished").unwrap();
        assert!(cache.has("ex03::rect", &ptx), "the child passes a stuck part over");
        assert_eq!(cache.stuck("ex03::rect", &ptx).as_deref(), Some("never finished"));
        assert!(cache.get("ex03::rect", &ptx).is_none(), "a stuck part has no figures");
        assert!(cache.stuck("ex03::rect", &digest("another kernel")).is_none());
    }

    #[test]
    fn the_unfinished_measurement_is_the_last_started_beyond_those_finished() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("launches.jsonl");
        assert_eq!(unfinished(&log), None, "nothing started");
        mark_started(&log, "ex01::global", "a");
        std::fs::write(&log, "{}\n").unwrap();
        assert_eq!(unfinished(&log), None, "stuck between measurements: none to blame");
        mark_started(&log, "ex03::rect", "b");
        assert_eq!(unfinished(&log), Some(Profiled { part: "ex03::rect".into(), ptx: digest("b") }));
    }

    #[test]
    fn the_part_of_a_check_is_its_exercise_and_part() {
        assert_eq!(part_of("ex07::coalesced::structure::coalesced-reads-and-writes"), "ex07::coalesced");
    }
}
