//! Timing with device events. Performance checks compare two kernels timed in
//! the same run on the same GPU, never an absolute time, because the grader runs
//! on a student's laptop as well as on an H100.

use anyhow::{anyhow, bail, Result};

use crate::backend::BackendError;
use crate::gpu::Gpu;
use crate::skip::Skip;

/// Launches before timing starts (module load, clocks, caches, TLBs): this
/// many, or fewer once they have kept the GPU busy for [`WARMUP_BUDGET_MS`].
pub const WARMUPS: usize = 3;
pub const WARMUP_BUDGET_MS: f64 = 50.0;
/// Timed launches; the median is reported. A kernel long enough that
/// [`MIN_SAMPLES`] of them add up to [`SAMPLE_BUDGET_MS`] stops there: its
/// run-to-run spread is far below 1 %, and the 4096² naive matmul yardstick
/// (26 ms a launch on an H100) would otherwise cost half a second per grading.
pub const SAMPLES: usize = 15;
pub const MIN_SAMPLES: usize = 5;
pub const SAMPLE_BUDGET_MS: f64 = 100.0;
/// A sample of a short kernel is several launches back to back, together at
/// least this long: a lone 0.1 ms launch between two events also times how
/// soon the host thread got to launch it, and on a busy host (a batch, with
/// the simulator's replays on every core) that varied by 30 % (H100, ex01).
pub const SAMPLE_MIN_MS: f64 = 1.0;
/// A kernel whose warm-ups took this long each is timed one launch a sample
/// without asking (well above [`SAMPLE_MIN_MS`], whatever the overheads).
pub const LONG_KERNEL_MS: f64 = 5.0;
/// Launches per sample at most.
pub const MAX_BATCH: usize = 64;

/// Samples of one kernel's run time, in milliseconds.
#[derive(Debug, Clone)]
pub struct Timing {
    pub samples_ms: Vec<f64>,
}

impl Timing {
    pub fn median_ms(&self) -> f64 {
        let mut s = self.samples_ms.clone();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        }
    }

    /// Throughput for a kernel that moves `bytes` (read + written) per launch.
    pub fn gb_per_s(&self, bytes: usize) -> f64 {
        bytes as f64 / (self.median_ms() * 1e-3) / 1e9
    }
}

/// Times `launch` (which starts one kernel) after warm-ups; checks guards after
/// the warm-ups so a fast but broken kernel is not timed. For the grader's own
/// yardsticks: a student's kernel is timed with [`measure_resetting`].
pub fn measure(gpu: &Gpu, launch: impl FnMut() -> Result<()>) -> Result<Timing> {
    measure_with(gpu, launch, None, None).map(|(t, _)| t)
}

/// [`measure`] for a student's kernel, whose output must be checked on the
/// launches that were timed: `reset` (poisoning the output, say) runs before
/// every sample, outside the timed events, so the output left after the call
/// is what the last sample's launches wrote, from a reset output. A kernel that
/// computes only on its first launch (a flag it sets), or only while it is not
/// being timed, leaves the reset output there, and the caller's check of the
/// output fails. Returns the timing and how many launches the last sample made
/// (for an output that accumulates over launches, such as a counter).
///
/// Not caught: a kernel that reads its own output to see whether it was reset
/// and skips work when it was not (every launch of a sample but the first).
/// That needs inputs that change from launch to launch, a copy per launch.
pub fn measure_resetting(
    gpu: &Gpu,
    launch: impl FnMut() -> Result<()>,
    mut reset: impl FnMut() -> Result<()>,
) -> Result<(Timing, usize)> {
    measure_with(gpu, launch, Some(&mut reset), None)
}

/// [`measure_resetting`] for an output small enough to read after every
/// sample: `check` gets the number of launches since the reset and checks
/// what they left, so the output of every sample is verified, not only the
/// last one's.
pub fn measure_checking_each(
    gpu: &Gpu,
    launch: impl FnMut() -> Result<()>,
    mut reset: impl FnMut() -> Result<()>,
    mut check: impl FnMut(usize) -> Result<()>,
) -> Result<Timing> {
    measure_with(gpu, launch, Some(&mut reset), Some(&mut check)).map(|(t, _)| t)
}

/// What a failed check of a timed sample says.
fn timed_output_wrong(e: anyhow::Error, sample: usize, launches: usize) -> anyhow::Error {
    e.context(format!(
        "the output of the timed launches is wrong (sample {sample}: {launches} launch(es) after the output was \
         reset): a kernel must compute its result on every launch, including the timed ones"
    ))
}

fn measure_with(
    gpu: &Gpu,
    mut launch: impl FnMut() -> Result<()>,
    reset: Option<&mut dyn FnMut() -> Result<()>>,
    check: Option<&mut dyn FnMut(usize) -> Result<()>>,
) -> Result<(Timing, usize)> {
    if !gpu.capabilities().times_kernels {
        return Err(
            Skip(format!("timing needs a real GPU; the {} backend cannot time kernels", gpu.info().backend)).into()
        );
    }
    // Nothing else may run on the GPU while it times (other batch workers).
    let _sole = crate::gpu_lock::exclusive();
    let start = std::time::Instant::now();
    let timed = measure_alone(gpu, &mut launch, reset, check);
    crate::stats::add(crate::stats::Counter::GpuTiming, start.elapsed());
    timed
}

fn measure_alone(
    gpu: &Gpu,
    launch: &mut impl FnMut() -> Result<()>,
    mut reset: Option<&mut dyn FnMut() -> Result<()>>,
    mut check: Option<&mut dyn FnMut(usize) -> Result<()>>,
) -> Result<(Timing, usize)> {
    let warming = std::time::Instant::now();
    let mut warmups = 0;
    for _ in 0..WARMUPS {
        warmups += 1;
        launch()?;
        gpu.finish()?;
        if warming.elapsed().as_secs_f64() * 1e3 >= WARMUP_BUDGET_MS {
            break;
        }
    }
    // A warm-up (launch, wait and guard checks) of several samples' length
    // is a kernel timed one launch a sample; for a shorter one, one launch
    // timed alone says how many make a sample.
    let warmup_ms = warming.elapsed().as_secs_f64() * 1e3 / warmups as f64;
    let batch = if warmup_ms >= LONG_KERNEL_MS { 1 } else { launches_per_sample(time_launches(gpu, launch, 1)?) };
    let mut samples_ms: Vec<f64> = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        if samples_ms.len() >= MIN_SAMPLES && samples_ms.iter().sum::<f64>() * batch as f64 >= SAMPLE_BUDGET_MS {
            break;
        }
        if let Some(reset) = reset.as_mut() {
            gpu.finish()?;
            reset()?;
        }
        samples_ms.push(time_launches(gpu, launch, batch)?);
        if let Some(check) = check.as_mut() {
            gpu.finish()?;
            check(batch).map_err(|e| timed_output_wrong(e, samples_ms.len(), batch))?;
        }
    }
    gpu.finish()?;
    Ok((Timing { samples_ms }, batch))
}

/// Milliseconds per launch of `batch` launches back to back between two events.
fn time_launches(gpu: &Gpu, launch: &mut impl FnMut() -> Result<()>, batch: usize) -> Result<f64> {
    let mut failure = None;
    let ms = gpu.backend().time_ms(
        &mut || {
            for _ in 0..batch {
                launch().map_err(|e| {
                    let msg = e.to_string();
                    failure = Some(e);
                    BackendError::Other(msg)
                })?;
            }
            Ok(())
        },
        gpu.timeout(),
    );
    match (ms, failure) {
        (_, Some(e)) => Err(e),
        (Ok(ms), None) => Ok(ms as f64 / batch as f64),
        (Err(e), None) => Err(anyhow!(e)),
    }
}

/// Launches per sample for a kernel that ran `launch_ms` alone.
pub fn launches_per_sample(launch_ms: f64) -> usize {
    if launch_ms.is_nan() || launch_ms <= 0.0 {
        return MAX_BATCH;
    }
    ((SAMPLE_MIN_MS / launch_ms).ceil() as usize).clamp(1, MAX_BATCH)
}

pub use crate::record::PerfFigures;

fn record_figures(f: PerfFigures) {
    crate::record::with(|r| r.perf = Some(f));
}

/// The threshold of the running check ([`crate::record::check_name`]): the active
/// calibration's where there is one, else `compiled` (the exercise's constant).
fn chosen_threshold(compiled: f64) -> crate::calibration::Chosen {
    crate::calibration::threshold(crate::record::check_name().as_deref(), compiled)
}

/// Where the threshold came from and the margin to it, for the check's line.
fn provenance(value: f64, chosen: &crate::calibration::Chosen) -> String {
    format!("; threshold {}, margin {:.2}x", chosen.source.describe(), value / chosen.value)
}

/// Passes when `faster` beats `baseline` by at least `min_speedup` (the
/// compiled threshold; a calibration of this GPU overrides it); the message
/// says by how much either way, so a student sees how far off they are.
pub fn require_speedup(
    what: &str,
    faster: &Timing,
    baseline: &Timing,
    baseline_name: &str,
    min_speedup: f64,
) -> Result<String> {
    let speedup = baseline.median_ms() / faster.median_ms();
    let chosen = chosen_threshold(min_speedup);
    let min_speedup = chosen.value;
    record_figures(PerfFigures {
        kind: "speedup".into(),
        value: speedup,
        threshold: min_speedup,
        student: faster.median_ms(),
        baseline: baseline.median_ms(),
        unit: "ms".into(),
        baseline_name: baseline_name.into(),
        threshold_from: Some(chosen.source.clone()),
        margin: Some(speedup / min_speedup),
    });
    let line = format!(
        "{what}: {:.3} ms vs {baseline_name} {:.3} ms = {speedup:.2}x (needs >= {min_speedup:.2}x{})",
        faster.median_ms(),
        baseline.median_ms(),
        provenance(speedup, &chosen)
    );
    if speedup >= min_speedup {
        Ok(line)
    } else {
        bail!("too slow. {line}")
    }
}

/// Passes when `achieved` is at least `min_share` of `reference` (two
/// throughputs; `min_share` as for [`require_speedup`]).
pub fn require_share(
    what: &str,
    achieved_gbps: f64,
    reference_name: &str,
    reference_gbps: f64,
    min_share: f64,
) -> Result<String> {
    let share = achieved_gbps / reference_gbps;
    let chosen = chosen_threshold(min_share);
    let min_share = chosen.value;
    record_figures(PerfFigures {
        kind: "share".into(),
        value: share,
        threshold: min_share,
        student: achieved_gbps,
        baseline: reference_gbps,
        unit: "GB/s".into(),
        baseline_name: reference_name.into(),
        threshold_from: Some(chosen.source.clone()),
        margin: Some(share / min_share),
    });
    let line = format!(
        "{what}: {achieved_gbps:.0} GB/s = {:.0}% of {reference_name} ({reference_gbps:.0} GB/s); needs >= {:.0}%{}",
        share * 100.0,
        min_share * 100.0,
        provenance(share, &chosen)
    );
    if share >= min_share {
        Ok(line)
    } else {
        bail!("too slow. {line}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_kernels_are_timed_in_batches_of_at_least_a_millisecond() {
        assert_eq!(launches_per_sample(55.0), 1, "the naive matmul yardstick: one launch a sample");
        assert_eq!(launches_per_sample(1.0), 1);
        assert_eq!(launches_per_sample(0.3), 4);
        assert_eq!(launches_per_sample(0.1), 10);
        assert_eq!(launches_per_sample(0.001), MAX_BATCH);
        assert_eq!(launches_per_sample(0.0), MAX_BATCH);
    }

    #[test]
    fn median_and_ratios() {
        let recorder = std::sync::Arc::new(crate::record::Recorder::default());
        let _recording = recorder.install();
        let take_figures = || recorder.take().perf;
        let t = Timing { samples_ms: vec![3.0, 1.0, 2.0] };
        assert_eq!(t.median_ms(), 2.0);
        assert_eq!(Timing { samples_ms: vec![4.0, 1.0, 2.0, 3.0] }.median_ms(), 2.5);
        assert_eq!(t.gb_per_s(2_000_000), 1.0);
        let slow = Timing { samples_ms: vec![10.0] };
        assert!(require_speedup("s", &t, &slow, "base", 4.0).is_ok());
        let err = require_speedup("s", &t, &slow, "base", 6.0).unwrap_err().to_string();
        assert!(err.contains("5.00x") && err.contains(">= 6.00x"), "{err}");
        assert!(require_share("k", 50.0, "copy", 100.0, 0.4).is_ok());
        assert!(require_share("k", 30.0, "copy", 100.0, 0.4).is_err());
        let f = take_figures().expect("the last verdict's figures");
        assert_eq!((f.kind.as_str(), f.value, f.threshold), ("share", 0.3, 0.4));
        assert_eq!(take_figures(), None, "taken once");
    }

    #[test]
    fn the_installed_calibration_sets_the_threshold_and_the_figures_name_it() {
        use crate::calibration::{install, Source, Thresholds};
        let recorder = std::sync::Arc::new(crate::record::Recorder::for_check("ex05::stencil::perf::share-of-copy"));
        let _recording = recorder.install();
        let source = Source { gpu: "NVIDIA H200".into(), date: "2026-12-01".into(), how: "exact".into() };
        let checks = [("ex05::stencil::perf::share-of-copy".to_string(), 0.3)].into();
        install(Some(Thresholds { source: source.clone(), checks }));
        // 0.35 of copy: under the compiled 0.45, over the H200's 0.30.
        let line = require_share("stencil", 35.0, "copy", 100.0, 0.45);
        install(None);
        let line = line.unwrap();
        assert!(line.contains("needs >= 30%") && line.contains("calibrated on NVIDIA H200 (2026-12-01)"), "{line}");
        assert!(line.contains("margin 1.17x"), "{line}");
        let f = recorder.take().perf.unwrap();
        assert_eq!((f.threshold, f.threshold_from.as_ref()), (0.3, Some(&source)));
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["threshold_from"]["gpu"], "NVIDIA H200");
        assert_eq!(json["threshold_from"]["date"], "2026-12-01");
        assert!((json["margin"].as_f64().unwrap() - 0.35 / 0.3).abs() < 1e-9);
        // Without a calibration: the compiled constant, saying so.
        let err = require_share("stencil", 35.0, "copy", 100.0, 0.45).unwrap_err().to_string();
        assert!(err.contains("the compiled constant: no calibration for this GPU"), "{err}");
    }
}
