//! Which calibration grades on this GPU: this model's own (the course's file,
//! else this machine's cache), else the nearest calibrated model, else the
//! constants compiled into the exercises; and it is always said which.
//!
//! "Nearest" (docs/grading-accuracy.md): the same compute capability first,
//! then the same major version, then the closest one; among those, the
//! closest peak memory bandwidth (by ratio; unknown sorts last); then by name.

use std::path::{Path, PathBuf};

use kit::backend::DeviceInfo;

use super::file::{self, CalibrationFile};
use crate::report::CalibrationUsed;

/// What `--calibration` asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    /// This GPU's model, else the nearest, from these folders (the course's
    /// `calibration/` under the root when empty) and this machine's cache.
    Auto(Vec<PathBuf>),
    /// The compiled constants: how `grader calibrate` grades the variants.
    Off,
    /// This file, whatever the GPU.
    File(PathBuf),
}

impl std::str::FromStr for Choice {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "auto" => Choice::Auto(Vec::new()),
            "off" => Choice::Off,
            path if Path::new(path).is_dir() => Choice::Auto(vec![PathBuf::from(path)]),
            path => Choice::File(PathBuf::from(path)),
        })
    }
}

/// How a calibration matches the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    Exact,
    Nearest,
    Given,
    None,
    Off,
}

impl How {
    pub fn name(self) -> &'static str {
        match self {
            How::Exact => "exact",
            How::Nearest => "nearest",
            How::Given => "given",
            How::None => "none",
            How::Off => "off",
        }
    }
}

/// The calibration a run grades with.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub file: Option<CalibrationFile>,
    pub path: Option<PathBuf>,
    pub how: How,
}

/// The folders searched for `choice` with root `root`, the course's first.
pub fn folders(choice: &Choice, root: &Path) -> Vec<PathBuf> {
    let mut dirs = match choice {
        Choice::Auto(dirs) if !dirs.is_empty() => dirs.clone(),
        _ => vec![file::course_dir(root)],
    };
    dirs.extend(file::cache_dir());
    dirs
}

/// The calibration for `gpu`.
pub fn choose(choice: &Choice, root: &Path, gpu: &DeviceInfo) -> Chosen {
    match choice {
        Choice::Off => Chosen { file: None, path: None, how: How::Off },
        Choice::File(path) => match CalibrationFile::read(path) {
            Ok(f) => Chosen { file: Some(f), path: Some(path.clone()), how: How::Given },
            Err(e) => {
                eprintln!("warning: --calibration: {e:#}; the compiled thresholds grade");
                Chosen { file: None, path: None, how: How::None }
            }
        },
        Choice::Auto(_) => {
            let candidates: Vec<(PathBuf, CalibrationFile)> =
                folders(choice, root).iter().flat_map(|d| CalibrationFile::all_in(d)).collect();
            match pick(gpu, &candidates) {
                Some((i, how)) => {
                    let (path, f) = candidates[i].clone();
                    Chosen { file: Some(f), path: Some(path), how }
                }
                None => Chosen { file: None, path: None, how: How::None },
            }
        }
    }
}

/// `path` as a reader of the report on another machine can place it.
fn shown(path: &Path, root: &Path) -> String {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let under = |base: &Path| {
        let (p, b) = (path.canonicalize().ok()?, base.canonicalize().ok()?);
        p.strip_prefix(b).ok().map(Path::to_path_buf)
    };
    match (under(root), home.as_deref().and_then(under)) {
        (Some(rel), _) => rel.display().to_string(),
        (None, Some(rel)) => format!("~/{}", rel.display()),
        (None, None) => path.display().to_string(),
    }
}

/// The index in `candidates` of `gpu`'s calibration and how it matches: the
/// first of its own model, else the nearest ([`nearness`]).
pub fn pick(gpu: &DeviceInfo, candidates: &[(PathBuf, CalibrationFile)]) -> Option<(usize, How)> {
    let slug = file::model_slug(&gpu.name);
    if let Some(i) = candidates.iter().position(|(_, f)| file::model_slug(&f.gpu.name) == slug) {
        return Some((i, How::Exact));
    }
    (0..candidates.len())
        .min_by(|&a, &b| {
            let (fa, fb) = (&candidates[a].1, &candidates[b].1);
            nearness(gpu, fa)
                .partial_cmp(&nearness(gpu, fb))
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| fa.gpu.name.cmp(&fb.gpu.name))
        })
        .map(|i| (i, How::Nearest))
}

/// How far a calibrated model is from `gpu`: (architecture distance, bandwidth distance).
pub fn nearness(gpu: &DeviceInfo, f: &CalibrationFile) -> (u32, f64) {
    let (major, minor) = gpu.compute_capability;
    let (m, n) = parse_cc(&f.gpu.compute_capability).unwrap_or((0, 0));
    let arch = major.abs_diff(m) * 100 + minor.abs_diff(n);
    let bandwidth = match (gpu.peak_memory_gbps, f.gpu.peak_memory_gbps) {
        (Some(a), Some(b)) if a > 0 && b > 0 => (a as f64 / b as f64).ln().abs(),
        _ => f64::INFINITY,
    };
    (arch, bandwidth)
}

fn parse_cc(cc: &str) -> Option<(u32, u32)> {
    let (a, b) = cc.split_once('.')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

impl Chosen {
    /// Why `check` is not graded on this GPU, where the calibration says so.
    pub fn not_graded(&self, check: &str) -> Option<String> {
        let f = self.file.as_ref()?;
        let c = f.checks.get(check).filter(|c| !c.graded)?;
        Some(format!(
            "not graded here: on {} the calibration ({}) found no safe threshold between correct and slow kernels ({})",
            f.gpu.name, f.date, c.why
        ))
    }

    /// Where `check`'s scaled credit runs from on this GPU (crate::credit):
    /// only where the calibration grades it by the clock.
    pub fn scale(&self, check: &str) -> Option<crate::report::CreditScale> {
        self.file.as_ref()?.checks.get(check).and_then(super::file::CheckCalibration::credit_scale)
    }

    /// The thresholds the kit looks up while checks run.
    pub fn thresholds(&self) -> Option<kit::calibration::Thresholds> {
        let f = self.file.as_ref()?;
        Some(kit::calibration::Thresholds {
            source: kit::calibration::Source {
                gpu: f.gpu.name.clone(),
                date: f.date.clone(),
                how: self.how.name().into(),
            },
            checks: f.checks.iter().map(|(k, c)| (k.clone(), c.threshold)).collect(),
        })
    }

    /// Makes this the calibration of the checks that run from now on in this process.
    pub fn install(&self) {
        kit::calibration::install(self.thresholds());
    }

    /// The one line a report prints about it, for a GPU named `gpu`.
    pub fn line(&self, gpu: &str) -> String {
        match (&self.file, self.how) {
            (_, How::Off) => "performance thresholds: the compiled constants (--calibration off)".into(),
            (Some(f), How::Exact) => {
                format!("performance thresholds: calibrated on this GPU model, {} ({})", f.gpu.name, f.date)
            }
            (Some(f), How::Nearest) => format!(
                "performance thresholds: {gpu} has no calibration; using the nearest calibrated model, {} ({}); \
                 `grader calibrate` measures this one",
                f.gpu.name, f.date
            ),
            (Some(f), _) => format!("performance thresholds: the calibration given, {} ({})", f.gpu.name, f.date),
            (None, _) => format!(
                "performance thresholds: no calibration for {gpu} or any other GPU model; the compiled constants grade \
                 (`grader calibrate` measures this one)"
            ),
        }
    }

    /// What the grades JSON records; the file relative to the course's `root`
    /// (one under the cache as `~/…`), never a path only the grading machine has.
    pub fn used(&self, gpu: &str, root: &Path) -> CalibrationUsed {
        CalibrationUsed {
            gpu: self.file.as_ref().map(|f| f.gpu.name.clone()),
            date: self.file.as_ref().map(|f| f.date.clone()),
            measured: self.file.as_ref().map(|f| f.measured.clone()),
            how: self.how.name().into(),
            file: self.path.as_deref().map(|p| shown(p, root)),
            line: self.line(gpu),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::file::{GpuModel, SCHEMA};

    fn device(name: &str, cc: (u32, u32), gbps: Option<u32>) -> DeviceInfo {
        DeviceInfo {
            backend: "cuda".into(),
            name: name.into(),
            compute_capability: cc,
            driver_version: None,
            multiprocessors: 1,
            l2_cache_bytes: 0,
            global_memory_bytes: 0,
            max_threads_per_block: 1024,
            max_shared_bytes_per_block: 49152,
            peak_memory_gbps: gbps,
        }
    }

    fn calibration(name: &str, cc: &str, gbps: Option<u32>) -> (PathBuf, CalibrationFile) {
        let f = CalibrationFile {
            schema: SCHEMA.into(),
            gpu: GpuModel {
                name: name.into(),
                compute_capability: cc.into(),
                multiprocessors: 1,
                peak_memory_gbps: gbps,
                copy_gbps: None,
                driver: None,
            },
            measured: "test".into(),
            date: "2026-11-25".into(),
            command: String::new(),
            grader_version: String::new(),
            seeds: vec![],
            rule: String::new(),
            checks: Default::default(),
            counters: Default::default(),
        };
        (file::path_in(Path::new("/c"), name), f)
    }

    #[test]
    fn the_report_names_the_file_from_the_course_root() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("calibration").join("h100.toml");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "").unwrap();
        assert_eq!(shown(&file, root.path()), "calibration/h100.toml");
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(shown(&file, elsewhere.path()).ends_with("calibration/h100.toml"));
    }

    #[test]
    fn the_own_model_then_the_same_architecture_then_the_closest_bandwidth() {
        let h100 = calibration("NVIDIA H100 80GB HBM3", "9.0", Some(3352));
        let h200 = calibration("NVIDIA H200", "9.0", Some(4800));
        let a100 = calibration("NVIDIA A100-SXM4-80GB", "8.0", Some(2039));
        let all = vec![h100.clone(), h200.clone(), a100.clone()];
        // Exact, whatever the spelling's spaces and case.
        assert_eq!(pick(&device("NVIDIA H200", (9, 0), Some(4800)), &all), Some((1, How::Exact)));
        assert_eq!(pick(&device("nvidia  h100 80gb hbm3", (9, 0), None), &all), Some((0, How::Exact)));
        // An H100 PCIe (2 TB/s): same architecture first, then the closer bandwidth.
        assert_eq!(pick(&device("NVIDIA H100 PCIe", (9, 0), Some(2039)), &all), Some((0, How::Nearest)));
        // A GH200-like part with more bandwidth: the H200.
        assert_eq!(pick(&device("NVIDIA GH200 480GB", (9, 0), Some(4900)), &all), Some((1, How::Nearest)));
        // An A10 (8.6): the 8.0 A100 before any 9.0.
        assert_eq!(pick(&device("NVIDIA A10", (8, 6), Some(600)), &all), Some((2, How::Nearest)));
        assert_eq!(pick(&device("Tesla T4", (7, 5), Some(320)), &all[..0]), None);
    }

    #[test]
    fn every_choice_says_where_its_thresholds_come_from() {
        let (path, mut f) = calibration("NVIDIA H100 80GB HBM3", "9.0", Some(3352));
        f.checks.insert(
            "ex05::stencil::perf::share-of-copy".into(),
            crate::calibrate::file::CheckCalibration {
                kind: "share".into(),
                threshold: 0.3,
                graded: false,
                why: "too narrow".into(),
                compiled_threshold: None,
                slowest_correct: None,
                fastest_slow: None,
                margin_correct: None,
                margin_slow: None,
                reference: None,
                full_credit: None,
                no_credit: None,
                variants: Default::default(),
            },
        );
        let nearest = Chosen { file: Some(f), path: Some(path), how: How::Nearest };
        let line = nearest.line("NVIDIA H100 PCIe");
        assert!(line.contains("NVIDIA H100 PCIe has no calibration") && line.contains("nearest"), "{line}");
        assert!(nearest.not_graded("ex05::stencil::perf::share-of-copy").unwrap().contains("too narrow"));
        assert_eq!(nearest.not_graded("ex01::shared::perf::faster-than-global-atomics"), None);
        let t = nearest.thresholds().unwrap();
        assert_eq!((t.source.how.as_str(), t.checks["ex05::stencil::perf::share-of-copy"]), ("nearest", 0.3));
        let none = Chosen { file: None, path: None, how: How::None };
        assert!(none.line("Tesla T4").contains("compiled constants"));
        assert!(none.thresholds().is_none());
    }

    #[test]
    fn auto_reads_the_course_folder_and_off_reads_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (_, f) = calibration("NVIDIA H100 80GB HBM3", "9.0", Some(3352));
        f.write(&file::path_in(&file::course_dir(dir.path()), &f.gpu.name)).unwrap();
        let gpu = device("NVIDIA H100 80GB HBM3", (9, 0), Some(3352));
        let chosen = choose(&Choice::Auto(vec![]), dir.path(), &gpu);
        assert_eq!((chosen.how, chosen.file.map(|f| f.gpu.name)), (How::Exact, Some(gpu.name.clone())));
        assert_eq!(choose(&Choice::Off, dir.path(), &gpu).how, How::Off);
        assert_eq!("off".parse::<Choice>().unwrap(), Choice::Off);
        let given = choose(&Choice::File(dir.path().join("missing.toml")), dir.path(), &gpu);
        assert_eq!(given.how, How::None, "an unreadable file given falls back to the constants");
    }
}
