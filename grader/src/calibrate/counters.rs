//! The structure checks' figures on this GPU's own counters, recorded beside
//! its thresholds (issue 49): `grader calibrate` grades the references and the
//! slow variants once more with the counters read (`CUDA_LAB_COUNTERS=on`, the
//! structure checks only) and keeps, per check, the GPU's and the simulator's
//! figures per request and each one's verdict. A model whose counters part
//! from the simulator's, or whose references fail a bar there, shows it in its
//! file; where counters cannot be read, nothing is recorded and the run says why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use kit::profile::MemoryProfile;

use super::file::{CounterCalibration, PerRequest, Witnessed};
use crate::report::{GradeReport, TestReport};

/// `[least, most]` of the ratios that exist (a zero denominator has none), to two decimals.
fn range(ratios: impl Iterator<Item = (u64, u64)>) -> Option<[f64; 2]> {
    let round = |x: f64| (x * 100.0).round() / 100.0;
    let values: Vec<f64> = ratios.filter(|&(_, d)| d > 0).map(|(n, d)| n as f64 / d as f64).collect();
    let least = values.iter().copied().reduce(f64::min)?;
    let most = values.iter().copied().reduce(f64::max)?;
    Some([round(least), round(most)])
}

/// Every structure check of `report` that has the GPU's counters, with both witnesses' figures.
pub fn of_report(report: &GradeReport) -> BTreeMap<String, Witnessed> {
    witnessed(report.exercises.iter().flat_map(|e| &e.parts).flat_map(|p| &p.tests))
}

/// Every structure check of `tests` that has the GPU's counters, with both witnesses' figures.
pub fn witnessed<'a>(tests: impl Iterator<Item = &'a TestReport>) -> BTreeMap<String, Witnessed> {
    let structure = tests.filter(|t| t.kind == kit::CheckKind::Structure);
    structure
        .filter_map(|t| {
            let m: Vec<&MemoryProfile> = t.measured.iter().filter(|m| m.gpu.is_some()).collect();
            let gpu =
                |f: fn(&kit::profile::GpuCounters) -> (u64, u64)| range(m.iter().filter_map(|m| m.gpu.as_ref()).map(f));
            let sim = |f: fn(&MemoryProfile) -> (u64, u64)| range(m.iter().map(|m| f(m)));
            let w = Witnessed {
                status: t.status.label().to_string(),
                measurements: m.len(),
                gpu: PerRequest {
                    load_sectors: gpu(|g| (g.global_load_sectors, g.global_load_requests)),
                    store_sectors: gpu(|g| (g.global_store_sectors, g.global_store_requests)),
                    shared_passes: gpu(|g| {
                        (
                            g.shared_load_wavefronts + g.shared_store_wavefronts,
                            g.shared_load_requests + g.shared_store_requests,
                        )
                    }),
                },
                sim: PerRequest {
                    load_sectors: sim(|s| (s.global_load_sectors, s.global_load_requests)),
                    store_sectors: sim(|s| (s.global_store_sectors, s.global_store_requests)),
                    shared_passes: sim(|s| (s.shared_wavefronts, s.shared_requests)),
                },
            };
            (!m.is_empty()).then(|| (t.name.clone(), w))
        })
        .collect()
}

/// The references' and the slow variants' figures per check, side by side.
pub fn calibration(
    reference: BTreeMap<String, Witnessed>,
    mut slow: BTreeMap<String, Witnessed>,
) -> BTreeMap<String, CounterCalibration> {
    let mut out: BTreeMap<String, CounterCalibration> = reference
        .into_iter()
        .map(|(check, w)| {
            let slow = slow.remove(&check);
            (check, CounterCalibration { reference: Some(w), slow })
        })
        .collect();
    for (check, w) in slow {
        out.insert(check, CounterCalibration { reference: None, slow: Some(w) });
    }
    out
}

/// Grades `sources` (`reference`, `reference/slow`) of `exercises` in a child
/// with the counters read, the structure checks only; its grades JSON.
fn graded_with_counters(
    exe: &Path,
    root: &Path,
    exercises: &[String],
    sources: &str,
    seed: u64,
    work: &Path,
) -> Result<GradeReport> {
    let json = work.join("counters").join(format!("{}-seed{seed}.json", sources.replace('/', "-")));
    std::fs::create_dir_all(json.parent().unwrap_or(work))?;
    let mut cmd = super::run::grading(exe, exercises, root, sources, seed, &json);
    cmd.args(["--", "::structure::"]).env(kit::counters::ENV, "on");
    super::run::graded(cmd, &json, &json.with_extension("log"))
}

/// What `grader calibrate` records of the counters.
pub struct Recorded {
    pub checks: BTreeMap<String, CounterCalibration>,
    /// The references' grading's word on the counters (`environment.counters`:
    /// "read …", or why not): what the run says where none were recorded.
    pub header: Option<String>,
    /// The logs of the two gradings.
    pub logs: PathBuf,
}

/// The references' and slow variants' counter figures on this GPU, graded with `seed`.
pub fn record(exe: &Path, root: &Path, exercises: &[String], seed: u64, work: &Path) -> Result<Recorded> {
    let reference = graded_with_counters(exe, root, exercises, "reference", seed, work)?;
    let slow = of_report(&graded_with_counters(exe, root, exercises, "reference/slow", seed, work)?);
    Ok(Recorded {
        checks: calibration(of_report(&reference), slow),
        header: reference.environment.counters,
        logs: work.join("counters"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Status;

    fn profile(kernel: &str, gpu: Option<kit::profile::GpuCounters>) -> MemoryProfile {
        MemoryProfile {
            kernel: kernel.into(),
            global_load_requests: 10,
            global_load_sectors: 40,
            shared_requests: 8,
            shared_wavefronts: 8,
            gpu,
            ..Default::default()
        }
    }

    #[test]
    fn both_witnesses_figures_per_request_and_the_verdict_are_kept_per_check() {
        let counted = kit::profile::GpuCounters {
            launches: 1,
            global_load_requests: 10,
            global_load_sectors: 80,
            shared_load_requests: 8,
            shared_load_wavefronts: 12,
            ..Default::default()
        };
        let mut tiled = TestReport::new(
            "ex03::tiled::structure::tiled-global-loads".into(),
            kit::CheckKind::Structure,
            Status::Fail,
        );
        tiled.measured = vec![profile("matmul_tiled", Some(counted.clone())), profile("matmul_tiled", None)];
        let mut unmeasured =
            TestReport::new("ex03::tiled::structure::two-barriers".into(), kit::CheckKind::Structure, Status::Pass);
        unmeasured.measured = vec![profile("matmul_tiled", None)];
        let timed =
            TestReport::new("ex03::tiled::perf::faster-than-naive".into(), kit::CheckKind::Performance, Status::Pass);
        let w = witnessed([tiled, unmeasured, timed].iter());
        assert_eq!(
            w.keys().collect::<Vec<_>>(),
            ["ex03::tiled::structure::tiled-global-loads"],
            "only checks the GPU counted"
        );
        let t = &w["ex03::tiled::structure::tiled-global-loads"];
        assert_eq!((t.status.as_str(), t.measurements), ("fail", 1));
        assert_eq!((t.gpu.load_sectors, t.sim.load_sectors), (Some([8.0, 8.0]), Some([4.0, 4.0])));
        assert_eq!((t.gpu.shared_passes, t.sim.shared_passes), (Some([1.5, 1.5]), Some([1.0, 1.0])));
        assert_eq!((t.gpu.store_sectors, t.sim.store_sectors), (None, None), "no stores: no figure, not 0");

        let slow = BTreeMap::from([("b".to_string(), t.clone()), ("c".to_string(), t.clone())]);
        let both = calibration(BTreeMap::from([("a".to_string(), t.clone()), ("b".to_string(), t.clone())]), slow);
        assert!(both["a"].reference.is_some() && both["a"].slow.is_none());
        assert!(both["b"].reference.is_some() && both["b"].slow.is_some());
        assert!(both["c"].reference.is_none() && both["c"].slow.is_some());
    }

    /// Every committed model's counters pass every reference's structure
    /// check: a model where one fails a compiled bar on its own counters
    /// shows here, before any student is graded there.
    #[test]
    fn every_committed_models_references_pass_on_its_counters() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let files = super::super::file::CalibrationFile::all_in(&super::super::file::course_dir(&root));
        let mut seen = 0;
        for (path, f) in &files {
            for (check, c) in &f.counters {
                let Some(r) = &c.reference else { continue };
                assert_eq!(r.status, "pass", "{}: the reference fails {check} on its counters", path.display());
                assert!(r.gpu.load_sectors.is_some() || r.gpu.shared_passes.is_some(), "{check}: a figure");
                seen += 1;
            }
        }
        assert!(seen >= 30, "the H200's references: {seen}");
    }
}
