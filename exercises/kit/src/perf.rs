//! Timing with device events. Performance checks compare two kernels timed in
//! the same run on the same GPU, never an absolute time, because the grader runs
//! on a student's laptop as well as on an H100.

use anyhow::{anyhow, bail, Result};

use crate::backend::{Arg, BackendError, LaunchConfig};
use crate::gpu::{Gpu, Module};
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
/// The grader's own kernel (a yardstick) stops at this many samples once
/// they add up to [`SAMPLE_BUDGET_MS`] and spread by at most
/// [`STEADY_SPREAD`]: ex10's one-atomic-per-byte yardstick takes about 115
/// ms a launch on an H100, and its two samples more were a quarter of a
/// warm `grader ex10` (2026-12-07, docs/gpu-runs.md).
pub const MIN_YARDSTICK_SAMPLES: usize = 3;
/// A round also stops once this many samples spread by at most
/// [`STEADY_SPREAD`]: their median is then within a fraction of a percent
/// of fifteen samples', far inside every bar's 5 % margin (calibrate::rule),
/// and timing was half of a warm `grader all` (issue 48). A kernel whose
/// launches vary (the jitter family) spreads more and is sampled in full.
pub const STEADY_SAMPLES: usize = 7;
pub const STEADY_SPREAD: f64 = 0.02;
/// Samples whose spread (interquartile range over the median) is above this
/// are not one steady figure. For the grader's own kernels that means a
/// disturbed GPU (another process, a clock change): the kernel is timed once
/// more, and a second disturbed round is [`TimingDisturbed`]. A student's
/// kernel can spread on its own (a random spin in one block, slow and fast
/// launches in turn), so its second round is timed beside a [`Witness`], and
/// [`judge`] decides whose spread it is. Beside a process streaming memory
/// on the same H100, ex03's 20-50 ms launches spread by 14-30 %
/// (docs/gpu-runs.md, the noisy neighbour).
pub const MAX_SPREAD: f64 = 0.10;
/// Rounds of samples at most: the first and one more when it was disturbed.
pub const ROUNDS: usize = 2;
/// The most launches of the student's kernel one timing makes (warm-ups,
/// samples, the repeated last one); a second round also times as many of
/// the witness's.
pub const MAX_LAUNCHES: usize = WARMUPS + ROUNDS * SAMPLES + 1;

/// Two rounds of samples were disturbed, the grader's own kernel's too: no
/// verdict is given on them, and the grader reports the check as not graded
/// here (out of the maximum; a batch grades such parts again at its end).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub struct TimingDisturbed {
    pub spread: f64,
    /// The spread of the grader's kernel timed in the same rounds (a student's
    /// timing); `None` for a timing of the grader's own kernel.
    pub witness_spread: Option<f64>,
}

impl std::fmt::Display for TimingDisturbed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let beside = match self.witness_spread {
            Some(w) => format!(", and the grader's own kernel timed beside it spread over {:.0}% too", w * 100.0),
            None => String::new(),
        };
        write!(
            f,
            "not graded here: the timing was disturbed twice (the middle half of the samples spread over {:.0}% of \
             their median, more than {:.0}%{beside}): another process is probably using this GPU. Grade again on a \
             quiet GPU",
            self.spread * 100.0,
            MAX_SPREAD * 100.0
        )
    }
}

/// Samples of one kernel's run time, in milliseconds.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    pub samples_ms: Vec<f64>,
    /// Launches made, warm-ups included (launch `launches - 1` was the last).
    pub launches: usize,
    /// Set where the kernel's samples spread and the grader's kernel timed
    /// beside them did not: the spread is the kernel's own, and it is graded
    /// by its upper quartile ([`Timing::graded_ms`]).
    pub own_spread: Option<OwnSpread>,
}

/// A student's kernel whose samples spread while the grader's kernel timed
/// in the same rounds stayed steady: whatever makes it spread (a random spin,
/// launches slow and fast in turn) is the kernel's, and so is the cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OwnSpread {
    /// The student's samples' spread (see [`Timing::spread`]).
    pub spread: f64,
    /// The witness's, in the same rounds; `None` where none could be timed.
    pub witness_spread: Option<f64>,
}

impl OwnSpread {
    /// What the check's line adds, so the student sees why the figure is slow.
    pub fn note(&self) -> String {
        let beside = match self.witness_spread {
            Some(w) => {
                format!("while the grader's own kernel timed in the same rounds spread over only {:.0}%", w * 100.0)
            }
            None => "and no grader's kernel could be timed beside it".into(),
        };
        format!(
            "; its launches spread over {:.0}% of their median {beside}: the spread is the kernel's own, so it is \
             graded by its slower launches (upper quartile), not its median. Make every launch do the same work",
            self.spread * 100.0
        )
    }
}

impl Timing {
    /// The median sample, in milliseconds.
    pub fn median_ms(&self) -> f64 {
        quantile(&self.samples_ms, 0.5)
    }

    /// The lower quartile of the samples, in milliseconds.
    pub fn lower_quartile_ms(&self) -> f64 {
        quantile(&self.samples_ms, 0.25)
    }

    /// The upper quartile of the samples, in milliseconds.
    pub fn upper_quartile_ms(&self) -> f64 {
        quantile(&self.samples_ms, 0.75)
    }

    /// What every comparison uses: the median, or the upper quartile where the
    /// kernel's spread is its own ([`Timing::own_spread`]).
    pub fn graded_ms(&self) -> f64 {
        if self.own_spread.is_some() {
            self.upper_quartile_ms()
        } else {
            self.median_ms()
        }
    }

    /// The interquartile range of the samples over their median: 0 for
    /// identical samples (see [`MAX_SPREAD`]).
    pub fn spread(&self) -> f64 {
        spread(&self.samples_ms)
    }

    /// Throughput for a kernel that moves `bytes` (read + written) per launch,
    /// at [`Timing::graded_ms`].
    pub fn gb_per_s(&self, bytes: usize) -> f64 {
        bytes as f64 / (self.graded_ms() * 1e-3) / 1e9
    }
}

/// Whether a round's `samples` are enough: all of them, the budget's worth
/// of a long kernel (fewer of the grader's own, steady:
/// [`MIN_YARDSTICK_SAMPLES`]), or a steady few ([`STEADY_SAMPLES`]).
fn round_complete(samples: &[f64], graders: bool) -> bool {
    let budget = samples.iter().sum::<f64>() >= SAMPLE_BUDGET_MS;
    samples.len() == SAMPLES
        || samples.len() >= MIN_SAMPLES && budget
        || graders && samples.len() >= MIN_YARDSTICK_SAMPLES && budget && range(samples) <= STEADY_SPREAD
        || samples.len() >= STEADY_SAMPLES && spread(samples) <= STEADY_SPREAD
}

/// The `q` quantile of `samples` (the mean of the two middle ones for an even
/// median), 0 for none.
fn quantile(samples: &[f64], q: f64) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return 0.0;
    }
    if q == 0.5 {
        return if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 };
    }
    s[((n - 1) as f64 * q).round() as usize]
}

/// The interquartile range of `samples` over their median (0 for fewer than 4).
fn spread(samples: &[f64]) -> f64 {
    if samples.len() < 4 {
        return 0.0;
    }
    (quantile(samples, 0.75) - quantile(samples, 0.25)) / quantile(samples, 0.5)
}

/// The samples' range over their median: [`spread`] of a few, where no
/// quartile is told from the ends.
fn range(samples: &[f64]) -> f64 {
    let (lo, hi) = samples.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    (hi - lo) / quantile(samples, 0.5)
}

/// What a round of a student's samples, with the witness's samples of the same
/// rounds where it was timed, says: the rule that every outcome a kernel can
/// cause is charged to the kernel (docs/hostile.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Judgement {
    /// The samples agree: graded by their median.
    Steady,
    /// The student's samples spread and the witness's did not (or no witness
    /// could be timed): graded by the upper quartile.
    KernelsOwn(OwnSpread),
    /// Both spread: the GPU is noisy; no verdict on these samples.
    Disturbed(TimingDisturbed),
    /// The student's samples spread and nothing was timed beside them yet:
    /// time a round with the witness.
    TimeBeside,
}

/// A student's samples that spread more than this many times the witness's
/// in the same rounds spread on their own, even on a noisy GPU: beside a
/// process streaming memory an honest kernel spreads about as much as the
/// witness (14-30 % for ex03 on an H100), a jittering one by 48-301 %.
pub const OWN_SPREAD_MULTIPLE: f64 = 3.0;

/// The decision, on samples alone: `student`'s of one round and the
/// `witness`'s of the same round (`None`: not timed in that round). With
/// `last` the round is the last one, and a student's spread without a
/// witness is charged to the kernel: a check never leaves the maximum on
/// the student's samples alone.
pub fn judge(student: &[f64], witness: Option<&[f64]>, last: bool) -> Judgement {
    let s = spread(student);
    if s <= MAX_SPREAD {
        return Judgement::Steady;
    }
    match witness.map(spread) {
        // Noise spreads the student's kernel about as much as the witness; far more is the kernel's.
        Some(w) if w > MAX_SPREAD && s <= OWN_SPREAD_MULTIPLE * w => {
            Judgement::Disturbed(TimingDisturbed { spread: s, witness_spread: Some(w) })
        }
        Some(w) => Judgement::KernelsOwn(OwnSpread { spread: s, witness_spread: Some(w) }),
        None if last => Judgement::KernelsOwn(OwnSpread { spread: s, witness_spread: None }),
        None => Judgement::TimeBeside,
    }
}

/// A grader kernel timed right after each of the student's launches in a
/// round ([`crate::timed::student`] makes one from the check's timed inputs'
/// generator): `time(target_ms)` launches it once, sized to last about
/// `target_ms`, and returns its milliseconds. Nothing the student's kernel
/// does can change its time, short of slowing the whole GPU.
pub struct Witness<'a> {
    pub time: &'a mut dyn FnMut(f64) -> Result<f64>,
}

thread_local! {
    /// The note of the last student's timing graded by its upper quartile,
    /// taken by the verdict ([`require_speedup`], [`require_share`]) that
    /// follows it in the same check.
    static OWN_SPREAD: std::cell::Cell<Option<OwnSpread>> = const { std::cell::Cell::new(None) };
}

/// Remembers (or forgets) a student's timing's own spread for the verdict
/// that follows it in this check.
pub(crate) fn note_own_spread(own: Option<OwnSpread>) {
    OWN_SPREAD.with(|c| c.set(own));
}

fn take_own_spread_note() -> String {
    OWN_SPREAD.with(|c| c.take()).map(|o| o.note()).unwrap_or_default()
}

/// Times one of the grader's own kernels (a yardstick, the copy bandwidth, a
/// lab's experiment): `reset` runs before every launch, outside the events,
/// as it does for the student's kernel it is compared with, so that both start
/// from the same state. Refuses a student's module: those are timed only by
/// [`crate::timed::student`], which checks every launch.
pub fn measure_trusted(
    module: &Module,
    kernel: &str,
    cfg: LaunchConfig,
    args: &[Arg],
    mut reset: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    if !module.is_graders() {
        bail!("`{kernel}` is not one of the grader's kernels: a student's kernel is timed by kit::timed::student");
    }
    let mut prepare = |_| reset();
    let mut launch = |_| module.launch_async(kernel, cfg, args);
    measure_launches(module.gpu(), &mut prepare, &mut launch, &mut |_| Ok(()), false, Whose::Graders).map(|(t, _)| t)
}

/// The one timing loop. Every launch, warm-ups included, is one launch timed
/// between two events behind the gate ([`crate::backend::gate`]): `prepare`
/// (not timed) puts what the launch reads and writes into the state it must
/// start from, and after it `check` (not timed) sees what that launch alone
/// wrote. The launch's number is passed to all three, so inputs can differ
/// from launch to launch. With `repeat_last`, the last launch is made once
/// more (same number) and its time returned beside the timing.
pub(crate) fn measure_launches(
    gpu: &Gpu,
    prepare: &mut dyn FnMut(usize) -> Result<()>,
    launch: &mut dyn FnMut(usize) -> Result<()>,
    check: &mut dyn FnMut(usize) -> Result<()>,
    repeat_last: bool,
    whose: Whose<'_>,
) -> Result<(Timing, Option<f64>)> {
    if !gpu.capabilities().times_kernels {
        return Err(
            Skip(format!("timing needs a real GPU; the {} backend cannot time kernels", gpu.info().backend)).into()
        );
    }
    // Nothing else may run on the GPU while it times (other batch workers).
    let sole = crate::gpu_lock::exclusive();
    let students = matches!(whose, Whose::Student(_));
    let start = std::time::Instant::now();
    let timed = launches_alone(gpu, prepare, launch, check, whose).and_then(|timing| {
        let last = timing.launches.saturating_sub(1);
        let again = repeat_last
            .then(|| measure_one(gpu, &mut || prepare(last), &mut || launch(last), &mut || check(last)))
            .transpose()?;
        Ok((timing, again))
    });
    crate::stats::add(crate::stats::Counter::GpuTiming, start.elapsed());
    if students {
        // The yardstick its figure is divided by follows in the same check.
        crate::gpu_lock::keep_for_check(sole);
    }
    timed
}

/// Whose kernel a timing times, which decides what a spread means.
pub(crate) enum Whose<'a> {
    /// The grader's own (a yardstick): a spread is the GPU's.
    Graders,
    /// A student's, with the witness to time beside it where there is one
    /// ([`judge`]).
    Student(Option<Witness<'a>>),
}

fn launches_alone(
    gpu: &Gpu,
    prepare: &mut dyn FnMut(usize) -> Result<()>,
    launch: &mut dyn FnMut(usize) -> Result<()>,
    check: &mut dyn FnMut(usize) -> Result<()>,
    mut whose: Whose<'_>,
) -> Result<Timing> {
    gpu.finish()?;
    let warming = std::time::Instant::now();
    let mut samples_ms: Vec<f64> = Vec::with_capacity(SAMPLES);
    let mut witness_ms: Vec<f64> = Vec::new();
    let (mut warmups, mut launches, mut round, mut own_spread) = (0, 0, 1, None);
    // How long the witness should last: the student's first round's median.
    let mut target_ms = 0.0;
    // Ends by the rounds' rules, within MAX_LAUNCHES - 1 launches.
    for n in 0.. {
        let warm = warmups == WARMUPS || warming.elapsed().as_secs_f64() * 1e3 >= WARMUP_BUDGET_MS;
        if warm && round_complete(&samples_ms, matches!(whose, Whose::Graders)) {
            let last = round == ROUNDS;
            match &whose {
                Whose::Graders => {
                    let spread = spread(&samples_ms);
                    if spread <= MAX_SPREAD {
                        break;
                    }
                    if last {
                        // Not a verdict on the kernel: the grader leaves the check
                        // out of the maximum (not graded here), never fails it.
                        return Err(TimingDisturbed { spread, witness_spread: None }.into());
                    }
                }
                Whose::Student(witness) => {
                    let beside = (round > 1 && witness.is_some()).then_some(&witness_ms[..]);
                    match judge(&samples_ms, beside, last) {
                        Judgement::Steady => break,
                        Judgement::KernelsOwn(own) => {
                            own_spread = Some(own);
                            break;
                        }
                        // Not a verdict on the kernel: the grader leaves the check
                        // out of the maximum (not graded here; a batch grades it
                        // again at its end), never fails it.
                        Judgement::Disturbed(d) => return Err(d.into()),
                        Judgement::TimeBeside => {}
                    }
                }
            }
            // Disturbed: a second round of samples, the first one dropped
            // (a student's timed beside the witness).
            target_ms = quantile(&samples_ms, 0.5);
            round += 1;
            samples_ms.clear();
        }
        let ms = measure_one(gpu, &mut || prepare(n), &mut || launch(n), &mut || check(n))?;
        launches += 1;
        if warm {
            samples_ms.push(ms);
            if let (true, Whose::Student(Some(witness))) = (round > 1, &mut whose) {
                witness_ms.push((witness.time)(target_ms)?);
            }
        } else {
            warmups += 1;
        }
    }
    Ok(Timing { samples_ms, launches, own_spread })
}

/// One launch of the loop: prepared, timed, its guard zones and watched
/// inputs compared, checked. Milliseconds between its events. Nothing may be
/// pending on the GPU when it starts (the loop finishes every launch).
fn measure_one(
    gpu: &Gpu,
    prepare: &mut dyn FnMut() -> Result<()>,
    launch: &mut dyn FnMut() -> Result<()>,
    check: &mut dyn FnMut() -> Result<()>,
) -> Result<f64> {
    prepare()?;
    let ms = time_launch(gpu, launch)?;
    gpu.finish()?;
    check()?;
    Ok(ms)
}

/// Milliseconds of one launch between two events.
pub(crate) fn time_launch(gpu: &Gpu, launch: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    let mut failure = None;
    let ms = gpu.backend().time_ms(
        &mut || {
            launch().map_err(|e| {
                let msg = e.to_string();
                failure = Some(e);
                BackendError::Other(msg)
            })
        },
        gpu.timeout(),
    );
    match (ms, failure) {
        (_, Some(e)) => Err(e),
        (Ok(ms), None) => Ok(ms as f64),
        (Err(e), None) => Err(anyhow!(e)),
    }
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
/// Both timings come from the same run: the student's from
/// [`crate::timed::student`], the baseline's from [`crate::Ctx::time_yardstick`].
///
/// ```no_run
/// # fn demo(student: &kit::perf::Timing, naive: &kit::perf::Timing) -> anyhow::Result<String> {
/// /// Calibrated on the H100 and the H200: CALIBRATION.md.
/// const MIN_SPEEDUP_OVER_GLOBAL: f64 = 3.0;
/// let line = kit::perf::require_speedup(
///     "histogram_private on 256 MiB",
///     student,
///     naive,
///     "one global atomic per byte",
///     MIN_SPEEDUP_OVER_GLOBAL,
/// )?;
/// # Ok(line)
/// # }
/// ```
pub fn require_speedup(
    what: &str,
    faster: &Timing,
    baseline: &Timing,
    baseline_name: &str,
    min_speedup: f64,
) -> Result<String> {
    let speedup = baseline.median_ms() / faster.graded_ms();
    let chosen = chosen_threshold(min_speedup);
    let min_speedup = chosen.value;
    record_figures(PerfFigures {
        kind: "speedup".into(),
        value: speedup,
        threshold: min_speedup,
        student: faster.graded_ms(),
        baseline: baseline.median_ms(),
        unit: "ms".into(),
        baseline_name: baseline_name.into(),
        threshold_from: Some(chosen.source.clone()),
        margin: Some(speedup / min_speedup),
    });
    let line = format!(
        "{what}: {:.3} ms vs {baseline_name} {:.3} ms = {speedup:.2}x (needs >= {min_speedup:.2}x{}){}",
        faster.graded_ms(),
        baseline.median_ms(),
        provenance(speedup, &chosen),
        take_own_spread_note()
    );
    if speedup >= min_speedup {
        Ok(line)
    } else {
        bail!("too slow. {line}")
    }
}

/// Passes when `achieved` is at least `min_share` of `reference` (two
/// throughputs; `min_share` as for [`require_speedup`]): a bandwidth-bound
/// kernel against a copy of the same bytes.
///
/// ```no_run
/// # fn demo(student: &kit::perf::Timing, copy: &kit::perf::Timing, n: usize) -> anyhow::Result<String> {
/// /// Calibrated on the H100 and the H200: CALIBRATION.md.
/// const MIN_SHARE_OF_COPY: f64 = 0.6;
/// let bytes = n; // bytes the kernel must move at least
/// let line = kit::perf::require_share(
///     "histogram_coarse",
///     student.gb_per_s(bytes),
///     "a copy reading the same bytes",
///     copy.gb_per_s(bytes),
///     MIN_SHARE_OF_COPY,
/// )?;
/// # Ok(line)
/// # }
/// ```
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
        "{what}: {achieved_gbps:.0} GB/s = {:.0}% of {reference_name} ({reference_gbps:.0} GB/s); needs >= {:.0}%{}{}",
        share * 100.0,
        min_share * 100.0,
        provenance(share, &chosen),
        take_own_spread_note()
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
    fn a_round_stops_at_fifteen_at_the_budget_or_at_seven_steady_samples() {
        let steady: Vec<f64> = (0..STEADY_SAMPLES).map(|i| 1.0 + 0.001 * i as f64).collect();
        assert!(!round_complete(&steady[..STEADY_SAMPLES - 1], false), "six steady short samples are not enough");
        assert!(round_complete(&steady, false));
        // a kernel whose launches vary by 10 % is sampled in full
        let varied: Vec<f64> = (0..SAMPLES).map(|i| if i % 2 == 0 { 1.0 } else { 1.1 }).collect();
        assert!((STEADY_SAMPLES..SAMPLES).all(|n| !round_complete(&varied[..n], false)));
        assert!(round_complete(&varied, false));
        // a long kernel stops at the budget, steady or not
        let long: Vec<f64> = (0..MIN_SAMPLES).map(|i| if i % 2 == 0 { 30.0 } else { 40.0 }).collect();
        assert!(round_complete(&long, false) && !round_complete(&long[..MIN_SAMPLES - 1], false));
        // the grader's own long kernel stops at three steady samples, not at three that vary
        let yardstick = [115.0, 115.5, 114.8];
        assert!(round_complete(&yardstick, true) && !round_complete(&yardstick, false));
        assert!(!round_complete(&yardstick[..2], true));
        assert!(!round_complete(&long[..MIN_YARDSTICK_SAMPLES], true), "30 and 40 ms in turn are not steady");
    }

    #[test]
    fn median_and_ratios() {
        let recorder = std::sync::Arc::new(crate::record::Recorder::default());
        let _recording = recorder.install();
        let take_figures = || recorder.take().perf;
        let t = Timing { samples_ms: vec![3.0, 1.0, 2.0], launches: 3, ..Default::default() };
        assert_eq!(t.median_ms(), 2.0);
        assert_eq!(Timing { samples_ms: vec![4.0, 1.0, 2.0, 3.0], launches: 4, ..Default::default() }.median_ms(), 2.5);
        assert_eq!(t.gb_per_s(2_000_000), 1.0);
        let slow = Timing { samples_ms: vec![10.0], launches: 1, ..Default::default() };
        assert!(require_speedup("s", &t, &slow, "base", 4.0).is_ok());
        let err = require_speedup("s", &t, &slow, "base", 6.0).unwrap_err().to_string();
        assert!(err.contains("5.00x") && err.contains(">= 6.00x"), "{err}");
        assert!(require_share("k", 50.0, "copy", 100.0, 0.4).is_ok());
        assert!(require_share("k", 30.0, "copy", 100.0, 0.4).is_err());
        assert_eq!(Timing { samples_ms: vec![1.0; 9], launches: 9, ..Default::default() }.spread(), 0.0);
        let noisy =
            Timing { samples_ms: vec![1.0, 1.0, 1.0, 1.3, 1.3, 1.3, 1.0, 1.0, 1.3], launches: 9, ..Default::default() };
        assert!(noisy.spread() > MAX_SPREAD, "{}", noisy.spread());
        let f = take_figures().expect("the last verdict's figures");
        assert_eq!((f.kind.as_str(), f.value, f.threshold), ("share", 0.3, 0.4));
        assert_eq!(take_figures(), None, "taken once");
    }

    /// Samples around `ms`: `pattern` gives each one's factor.
    fn samples(ms: f64, pattern: impl Fn(usize) -> f64) -> Vec<f64> {
        (0..SAMPLES).map(|i| ms * pattern(i)).collect()
    }

    #[test]
    fn a_steady_witness_charges_a_jittering_kernel_its_slow_launches() {
        // Slow and fast launches in turn (a counter in `__device__` memory), or a
        // random spin in one block: the kernel's own spread.
        let alternating = samples(4.0, |i| if i % 2 == 0 { 1.0 } else { 1.6 });
        let spin = samples(4.0, |i| 1.0 + ((i * 7919) % 13) as f64 / 10.0);
        let witness = samples(4.0, |i| 1.0 + (i % 3) as f64 * 0.005);
        for student in [&alternating, &spin] {
            let Judgement::KernelsOwn(own) = judge(student, Some(&witness), false) else {
                panic!("{:?}", judge(student, Some(&witness), false))
            };
            assert!(own.spread > MAX_SPREAD && own.witness_spread.unwrap() <= MAX_SPREAD, "{own:?}");
            let t = Timing { samples_ms: student.clone(), launches: SAMPLES, own_spread: Some(own) };
            assert!(t.graded_ms() > t.median_ms(), "graded by the upper quartile: {t:?}");
            assert_eq!(t.graded_ms(), t.upper_quartile_ms());
            assert!(own.note().contains("the spread is the kernel's own") && own.note().contains("upper quartile"));
        }
        // Graded slow, the same kernel misses a bar its median would clear.
        let t = Timing { samples_ms: alternating, launches: SAMPLES, own_spread: None };
        let own =
            Timing { own_spread: Some(OwnSpread { spread: t.spread(), witness_spread: Some(0.01) }), ..t.clone() };
        let base = Timing { samples_ms: vec![20.0; SAMPLES], ..Default::default() };
        assert!(require_speedup("k", &t, &base, "base", 4.0).is_ok(), "the old rule: the median 4.0 ms");
        note_own_spread(own.own_spread);
        let err = require_speedup("k", &own, &base, "base", 4.0).unwrap_err().to_string();
        assert!(err.starts_with("too slow") && err.contains("6.400 ms") && err.contains("kernel's own"), "{err}");
        assert_eq!(take_own_spread_note(), "", "the note goes with one verdict");
    }

    #[test]
    fn only_a_disturbed_witness_makes_a_timing_not_graded() {
        // A noisy neighbour slows launch pairs, the witness's with the student's.
        let noisy = |i: usize| if (i / 2) % 2 == 1 { 1.5 } else { 1.0 };
        let (student, witness) = (samples(4.0, noisy), samples(4.0, |i| noisy(i + 1)));
        let Judgement::Disturbed(d) = judge(&student, Some(&witness), true) else { panic!() };
        assert!(d.spread > MAX_SPREAD && d.witness_spread.unwrap() > MAX_SPREAD, "{d:?}");
        let msg = d.to_string();
        assert!(msg.starts_with("not graded here: the timing was disturbed twice"), "{msg}");
        assert!(msg.contains("the grader's own kernel timed beside it spread over"), "{msg}");
        // A noisy GPU spreads the witness, but a kernel spreading far more spreads on its own.
        let wide = samples(4.0, |i| [1.0, 2.5, 1.2, 3.9, 1.0, 1.7, 3.1][i % 7]);
        let Judgement::KernelsOwn(own) = judge(&wide, Some(&witness), true) else { panic!() };
        assert!(own.spread > OWN_SPREAD_MULTIPLE * own.witness_spread.unwrap(), "{own:?}");
        // The first round alone decides nothing: a round beside the witness follows.
        assert_eq!(judge(&student, None, false), Judgement::TimeBeside);
        // Never on the student's samples alone: without a witness the spread is charged.
        assert!(matches!(judge(&student, None, true), Judgement::KernelsOwn(OwnSpread { witness_spread: None, .. })));
    }

    #[test]
    fn steady_samples_are_graded_by_their_median_whatever_the_witness() {
        let steady = samples(4.0, |i| 1.0 + (i % 4) as f64 * 0.01);
        let noisy = samples(4.0, |i| if i % 2 == 0 { 1.0 } else { 2.0 });
        for witness in [None, Some(&steady[..]), Some(&noisy[..])] {
            assert_eq!(judge(&steady, witness, true), Judgement::Steady, "{witness:?}");
        }
        let t = Timing { samples_ms: steady, ..Default::default() };
        assert_eq!(t.graded_ms(), t.median_ms());
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
