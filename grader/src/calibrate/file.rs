//! One GPU model's calibration as a TOML file (schema `cuda-lab.calibration/1`):
//! the device, when and how it was measured, every performance check's
//! figures per variant and seed, and the threshold the rule placed. The
//! course's files are committed under `calibration/` at the root (and go into
//! the Classroom template); a machine's own result is kept in the project's
//! cache folder (`$XDG_CACHE_HOME/cuda-lab/calibration/`, as ptx-build's).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "cuda-lab.calibration/1";
/// The course's folder of calibration files, under the root.
pub const COURSE_DIR: &str = "calibration";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationFile {
    pub schema: String,
    pub gpu: GpuModel,
    /// How the figures were obtained: `grader calibrate`, or what they were carried over from.
    pub measured: String,
    /// The day they were measured (UTC, YYYY-MM-DD).
    pub date: String,
    /// The command that measured them.
    pub command: String,
    #[serde(default)]
    pub grader_version: String,
    #[serde(default)]
    pub seeds: Vec<u64>,
    /// The rule that placed every threshold ([`super::rule::RULE`]).
    pub rule: String,
    /// By full check name (`ex05::stencil::perf::share-of-copy`).
    #[serde(default)]
    pub checks: BTreeMap<String, CheckCalibration>,
    /// Per structure check, the references' and slow variants' figures on
    /// this model's counters beside the simulator's (`calibrate::counters`);
    /// empty where the counters could not be read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, CounterCalibration>,
}

/// The device a calibration was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuModel {
    /// The device name the driver reports: what a calibration is matched by.
    pub name: String,
    /// "9.0".
    pub compute_capability: String,
    pub multiprocessors: u32,
    /// From the memory clock and bus width, where the driver reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_gbps: Option<u32>,
    /// The copy yardstick's measured bandwidth (read + written), where a share check measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
}

/// One performance check on one GPU model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckCalibration {
    /// `speedup` or `share`: a ratio where higher is faster either way.
    pub kind: String,
    /// The least ratio that passes on this GPU.
    pub threshold: f64,
    /// False: the gap between correct and slow kernels is too narrow here; the
    /// check is not graded on this GPU (its measured stand-in grades the lesson).
    pub graded: bool,
    /// Why the threshold is where it is (the rule applied, or what it was carried over from).
    pub why: String,
    /// The constant compiled into the exercise, for comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled_threshold: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_correct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_slow: Option<f64>,
    /// slowest correct / threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_correct: Option<f64>,
    /// threshold / fastest slow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_slow: Option<f64>,
    /// The reference's own figure (the median of its seeds): the bar and the
    /// partial credit are measured against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<f64>,
    /// `scaled` credit: every point at or above this figure...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_credit: Option<f64>,
    /// ...and none at or under this one (the fastest slow kernel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_credit: Option<f64>,
    /// Every variant's figure per seed.
    #[serde(default)]
    pub variants: BTreeMap<String, VariantFigures>,
}

impl CheckCalibration {
    /// Where `scaled` credit runs from for this check: its figures, where the
    /// calibration grades it by the clock and measured it fully.
    pub fn credit_scale(&self) -> Option<crate::report::CreditScale> {
        let scale =
            crate::report::CreditScale { reference: self.reference?, full: self.full_credit?, none: self.no_credit? };
        (self.graded && scale.none < scale.full).then_some(scale)
    }
}

/// One variant's figures of one check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantFigures {
    /// `correct` (the reference included), `slow`, or `technique` (for comparison only).
    pub role: String,
    pub seeds: Vec<u64>,
    /// The check's ratio for each seed, in the order of `seeds`.
    pub figures: Vec<f64>,
}

/// One structure check's figures on one GPU model's counters beside the
/// simulator's (`calibrate::counters` measures them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterCalibration {
    /// The references'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Witnessed>,
    /// The slow variant's of the part (`reference/slow`), where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow: Option<Witnessed>,
}

/// A kernel's figures per warp request from both witnesses, and the check's verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Witnessed {
    pub status: String,
    pub measurements: usize,
    /// On the GPU's counters.
    pub gpu: PerRequest,
    /// On the simulator, for the same launches.
    pub sim: PerRequest,
}

/// One witness's figures per warp request, each the range over the check's
/// measurements (`[least, most]`); none where no request of the kind was made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerRequest {
    /// 32-byte sectors per global load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_sectors: Option<[f64; 2]>,
    /// 32-byte sectors per global store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_sectors: Option<[f64; 2]>,
    /// Shared-memory passes (wavefronts) per shared load or store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_passes: Option<[f64; 2]>,
}

/// A device name as a file name: "NVIDIA H100 80GB HBM3" is `nvidia-h100-80gb-hbm3`.
pub fn model_slug(name: &str) -> String {
    let mut slug = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-').to_string();
    if slug.is_empty() {
        "unnamed-gpu".into()
    } else {
        slug
    }
}

/// `<dir>/<model slug>.toml`.
pub fn path_in(dir: &Path, gpu_name: &str) -> PathBuf {
    dir.join(format!("{}.toml", model_slug(gpu_name)))
}

/// The course's calibrations under `root`.
pub fn course_dir(root: &Path) -> PathBuf {
    root.join(COURSE_DIR)
}

/// This machine's own calibrations (`None` without a cache folder).
pub fn cache_dir() -> Option<PathBuf> {
    ptx_build::cache_root().map(|c| c.join("calibration"))
}

/// The comment every written file starts with.
const HEADER: &str = concat!(
    "# Performance thresholds, and the structure checks' figures on its counters, measured on one GPU model\n",
    "# (docs/grading-accuracy.md, \"Where a threshold sits\"; docs/counters.md).\n",
    "# Written by `grader calibrate`; committed under calibration/ they ship with the course.\n",
);

/// The comment lines a person added under the written header of the file at
/// `path` (notes on what its figures mean), none where there is no file.
pub fn notes_at(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let header: Vec<&str> = HEADER.lines().collect();
    text.lines().take_while(|l| l.starts_with('#')).filter(|l| !header.contains(l)).map(str::to_string).collect()
}

impl CalibrationFile {
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let file: Self =
            toml::from_str(&text).with_context(|| format!("{} is not a calibration file", path.display()))?;
        anyhow::ensure!(file.schema == SCHEMA, "{}: schema `{}`, expected `{SCHEMA}`", path.display(), file.schema);
        Ok(file)
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        self.write_with_notes(path, &[])
    }

    /// [`CalibrationFile::write`], with `notes` (comment lines, from
    /// [`notes_at`]) under the written header: what a person said of the
    /// figures, kept where a run rewrites the file without measuring them
    /// again (`--counters-only`, `--replace`).
    pub fn write_with_notes(&self, path: &Path, notes: &[String]) -> Result<()> {
        let notes: String = notes.iter().map(|n| format!("{n}\n")).collect();
        // Arrays on one line each: a check's figures per seed read as a row.
        let text = format!("{HEADER}{notes}{}", toml::to_string(self)?);
        crate::atomic::write(path, text.as_bytes())
    }

    /// Every readable calibration in `dir` (none where it does not exist);
    /// an unreadable one is reported on stderr and left out.
    pub fn all_in(dir: &Path) -> Vec<(PathBuf, CalibrationFile)> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        paths
            .into_iter()
            .filter_map(|p| match Self::read(&p) {
                Ok(f) => Some((p, f)),
                Err(e) => {
                    eprintln!("warning: calibration left out: {e:#}");
                    None
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_name_becomes_a_file_name() {
        assert_eq!(model_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(model_slug("  Tesla T4 "), "tesla-t4");
        assert_eq!(model_slug("NVIDIA GeForce RTX 4090 Laptop GPU"), "nvidia-geforce-rtx-4090-laptop-gpu");
        assert_eq!(model_slug("///"), "unnamed-gpu");
    }

    #[test]
    fn a_file_survives_toml() {
        let dir = tempfile::tempdir().unwrap();
        let mut checks = BTreeMap::new();
        let variants = BTreeMap::from([(
            "reference".to_string(),
            VariantFigures { role: "correct".into(), seeds: vec![1, 2], figures: vec![0.66, 0.65] },
        )]);
        checks.insert(
            "ex05::stencil::perf::share-of-copy".to_string(),
            CheckCalibration {
                kind: "share".into(),
                threshold: 0.2,
                graded: true,
                why: "w".into(),
                compiled_threshold: Some(0.45),
                slowest_correct: Some(0.65),
                fastest_slow: None,
                margin_correct: Some(3.25),
                margin_slow: None,
                reference: None,
                full_credit: None,
                no_credit: None,
                variants,
            },
        );
        let file = CalibrationFile {
            schema: SCHEMA.into(),
            gpu: GpuModel {
                name: "NVIDIA H100 80GB HBM3".into(),
                compute_capability: "9.0".into(),
                multiprocessors: 132,
                peak_memory_gbps: Some(3352),
                copy_gbps: None,
                driver: Some("13.0".into()),
            },
            measured: "test".into(),
            date: "2026-11-25".into(),
            command: "grader calibrate".into(),
            grader_version: "0.1.0".into(),
            seeds: vec![1, 2],
            rule: super::super::rule::RULE.into(),
            checks,
            counters: Default::default(),
        };
        let path = path_in(dir.path(), &file.gpu.name);
        file.write(&path).unwrap();
        assert_eq!(CalibrationFile::read(&path).unwrap(), file);
        assert_eq!(CalibrationFile::all_in(dir.path()).len(), 1);
        std::fs::write(dir.path().join("broken.toml"), "schema = 3").unwrap();
        assert_eq!(CalibrationFile::all_in(dir.path()).len(), 1, "an unreadable file is left out");
        // A person's notes under the header: gone in a plain write, kept through write_with_notes.
        assert!(notes_at(&path).is_empty());
        let text = std::fs::read_to_string(&path).unwrap().replacen("schema", "# Not remeasured since X.\nschema", 1);
        std::fs::write(&path, text).unwrap();
        let notes = notes_at(&path);
        assert_eq!(notes, ["# Not remeasured since X."]);
        file.write_with_notes(&path, &notes).unwrap();
        assert_eq!((notes_at(&path), CalibrationFile::read(&path).unwrap()), (notes, file.clone()));
        file.write(&path).unwrap();
        assert!(notes_at(&path).is_empty());
    }

    /// The committed files' notes survive a rewrite of their data.
    #[test]
    fn every_committed_files_notes_are_kept_by_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        for (path, f) in CalibrationFile::all_in(&course_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))) {
            let (notes, copy) = (notes_at(&path), dir.path().join(path.file_name().unwrap()));
            f.write_with_notes(&copy, &notes).unwrap();
            assert_eq!(notes_at(&copy), notes);
            assert_eq!(CalibrationFile::read(&copy).unwrap(), f);
        }
    }
}
