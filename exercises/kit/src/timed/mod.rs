//! The one way to time a student's kernel, safe by construction.
//!
//! A kernel can look fast without doing its work on the launches that are
//! timed: it replays a result it kept from an earlier launch (keyed by a few
//! input elements), computes only on its first launch, reads its own output to
//! see whether it was reset, or does less when it recognises the timed size.
//! [`student`] closes each of these doors:
//!
//! - **every launch starts from what the README promises**: `prepare` runs
//!   before each one, outside the timed events (outputs poisoned or zeroed,
//!   counters at zero), so no launch sees what an earlier one wrote;
//! - **every launch's output is checked**, warm-ups included: `check` runs after
//!   each one, and the first wrong launch fails the check with
//!   [`WrongWhenTimed`], which names the launch and what came back;
//! - **no kernel can predict or reuse its inputs**: a [`Fresh`] input is
//!   regenerated on the device before every launch (Philox under a key drawn
//!   from the operating system for each run), so no block repeats, no value is
//!   its index, and no launch sees a shifted view of another's: a result kept
//!   or extrapolated from an earlier launch is never the right one again;
//! - **every launch's whole output is checked**, on the device, against the
//!   grader's own kernel on the same inputs ([`same_as_expected`]);
//! - **inputs stay as generated**: [`Fresh::intact`] compares them with the
//!   generator after every launch (`input-modified`), and the guard zones are
//!   checked after every launch.
//!
//! Yardsticks are the grader's own kernels, timed by
//! [`crate::perf::measure_trusted`] with the same loop and the same reset.

mod fresh;
mod witness;

pub use fresh::{byte_table, Fresh, Values, BYTE_TABLE};

use anyhow::Result;
use bytemuck::Pod;

use crate::gpu::{DeviceBuffer, Gpu, InputModified};
use crate::perf::{self, Timing, Whose};

/// Times the student's kernel: `prepare(n)` puts everything launch `n` reads
/// and writes into the state the README promises (not timed: fresh inputs
/// filled, outputs reset), `launch(n)` starts the kernel once, and `check(n)`
/// checks what launch `n` wrote (not timed). The first failed check ends the
/// timing with a [`WrongWhenTimed`] (or `input-modified`).
///
/// A histogram timed on fresh bytes, every launch's 256 bins checked against
/// the grader's own count of the same bytes:
///
/// ```no_run
/// use kit::timed::Fresh;
/// use kit::LaunchConfig;
/// # fn demo(ctx: &kit::Ctx, graders: &kit::Module) -> anyhow::Result<()> {
/// let module = ctx.kernel_module("histogram_private")?;
/// let gpu = module.gpu();
/// let n = 1 << 28;
/// let data = Fresh::bytes(ctx, "data", n, &kit::timed::byte_table(&[(b'a', 3.0), (b' ', 1.0)])?)?;
/// let bins = gpu.zeros::<u32>("bins", 256)?;
/// let expected = gpu.zeros::<u32>("expected bins", 256)?;
/// let cfg = LaunchConfig::linear((n as u32).div_ceil(256), 256);
/// let args = [data.arg(), bins.arg(), (n as i32).into()];
/// let timing = kit::timed::student(
///     gpu,
///     |launch| {
///         data.fill(launch)?;
///         bins.write(&[0; 256])
///     },
///     |_| module.launch_async("histogram_private", cfg, &args),
///     |launch| {
///         data.intact(launch)?;
///         expected.write(&[0; 256])?;
///         graders.launch("count", cfg, &[data.arg(), expected.arg(), (n as i32).into()])?;
///         kit::timed::same_as_expected("bins", &expected, &bins, |_| String::new())
///     },
/// )?;
/// let student_gbps = timing.gb_per_s(n);
/// # Ok(())
/// # }
/// ```
pub fn student(
    gpu: &Gpu,
    mut prepare: impl FnMut(usize) -> Result<()>,
    mut launch: impl FnMut(usize) -> Result<()>,
    mut check: impl FnMut(usize) -> Result<()>,
) -> Result<Timing> {
    // A write into an input is a verdict of its own, not a wrong result.
    let sizes = timed_sizes();
    let mut checked = |n: usize| {
        check(n).map_err(|e| if e.is::<InputModified>() { e } else { WrongWhenTimed::new(n, e, &sizes).into() })
    };
    // The canary: the last launch's inputs once more, from a reset output. A
    // kernel that computes is as slow as before; one that kept the result
    // (keyed by its inputs, their address, or anything else) is much faster.
    // The grader's kernel timed beside the student's once its samples spread
    // (made by the check's timed inputs, [`Fresh`]): whose spread it is.
    perf::note_own_spread(None);
    let witness = witness::current(gpu);
    let mut sizing = None;
    let mut time_witness = |target_ms: f64| witness.as_ref().map_or(Ok(0.0), |w| w.time(target_ms, &mut sizing));
    let beside = witness.is_some().then_some(perf::Witness { time: &mut time_witness });
    let (timing, again) =
        perf::measure_launches(gpu, &mut prepare, &mut launch, &mut checked, true, Whose::Student(beside))?;
    // Against its usual launch: the median, or for a kernel whose launches
    // spread on their own its fast ones (a fast launch of a jittering kernel
    // is not a replay).
    let usual = if timing.own_spread.is_some() { timing.lower_quartile_ms() } else { timing.median_ms() };
    let (again, median) = (again.unwrap_or(f64::INFINITY), usual);
    if again < REPLAY_RATIO * median {
        return Err(ReplaysResults { again_ms: again, median_ms: median }.into());
    }
    // The verdict that follows says why the figure is the slow one.
    perf::note_own_spread(timing.own_spread);
    Ok(timing)
}

/// Every element of `got` (what the student's launch wrote) against
/// `expected` (what the grader's own kernel computed from the same inputs),
/// compared on the device: a timed output of hundreds of MB is checked in
/// full without reading it back. `place(i)` says where element `i` is
/// (" (row 3, column 7)", or empty). Exact: timed inputs are chosen so that
/// every correct kernel gives the same bits ([`Values::Dyadic`]).
///
/// ```no_run
/// # fn demo(expected: &kit::DeviceBuffer<u32>, bins: &kit::DeviceBuffer<u32>) -> anyhow::Result<()> {
/// kit::timed::same_as_expected("bins", expected, bins, |_| String::new())?;
/// # Ok(())
/// # }
/// ```
pub fn same_as_expected<T: Pod + std::fmt::Debug>(
    what: &str,
    expected: &DeviceBuffer<T>,
    got: &DeviceBuffer<T>,
    place: impl Fn(usize) -> String,
) -> Result<()> {
    let Some(i) = got.first_difference(expected)? else { return Ok(()) };
    let (want, have) = (expected.read_range(i, 1)?[0], got.read_range(i, 1)?[0]);
    let have = if crate::check::is_poison(&have) { "nothing (never written)".to_string() } else { format!("{have:?}") };
    anyhow::bail!("`{what}`[{i}]{}: expected {want:?}, got {have} (the first wrong element of {})", place(i), got.len())
}

/// A launch on inputs seen before that runs faster than this share of the
/// median is a replay: a correct kernel's launches differ by a few percent.
pub const REPLAY_RATIO: f64 = 0.5;

/// The kernel ran far faster on inputs it had already seen: it keeps results
/// between launches (`replays-results`), and its timing proves nothing.
#[derive(Debug, thiserror::Error)]
#[error(
    "replays results: given the inputs of the launch before once more (its output reset as the README promises), \
     the kernel took {again_ms:.3} ms, against a median of {median_ms:.3} ms on inputs it had not seen. It keeps \
     results from one launch to the next (in `__device__` memory, keyed by its inputs or their address) and copies \
     them out instead of computing: every launch must compute its output from its own inputs"
)]
pub struct ReplaysResults {
    pub again_ms: f64,
    pub median_ms: f64,
}

/// A launch during timing wrote a wrong output: its own verdict
/// (`wrong-when-timed`), never `too-slow`.
#[derive(Debug, thiserror::Error)]
#[error(
    "wrong when timed: launch {number} of the timing{size} (every launch starts from a reset output and gets inputs \
     no earlier launch saw) wrote a wrong result: {what}. {why}. A wrong output is wrong at any size: this part's \
     correctness fails with it, as a correctness check's would",
    size = if .size.is_empty() { String::new() } else { format!(", on {}", .size) }
)]
pub struct WrongWhenTimed {
    /// 1 for the first launch.
    pub number: usize,
    /// The timed inputs and their sizes (`` `data`: 268435456 elements ``), empty where unknown.
    pub size: String,
    /// What the check found, with the element, the expected and the returned value.
    pub what: String,
    /// What that suggests about the kernel.
    pub why: &'static str,
}

/// The timed inputs ([`Fresh`]) the running check made, with their lengths:
/// what a [`WrongWhenTimed`] names as the size.
fn timed_sizes() -> String {
    let check = crate::record::check_name();
    TIMED_INPUTS.with(|t| {
        let t = t.borrow();
        let of_check: Vec<String> = t
            .iter()
            .filter(|(c, ..)| check.as_ref().is_none_or(|check| c == check))
            .map(|(_, name, len)| format!("`{name}`: {len} elements"))
            .collect();
        of_check.join(", ")
    })
}

thread_local! {
    /// (check, input, length) of the timed inputs made on this thread by the running check.
    static TIMED_INPUTS: std::cell::RefCell<Vec<(String, String, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Notes a timed input of check `check` (a [`Fresh`] made), forgetting other checks'.
pub(crate) fn note_timed_input(check: &str, name: &str, len: usize) {
    TIMED_INPUTS.with(|t| {
        let mut t = t.borrow_mut();
        t.retain(|(c, ..)| c == check);
        t.push((check.to_string(), name.to_string(), len));
    });
}

impl WrongWhenTimed {
    fn new(launch: usize, e: anyhow::Error, size: &str) -> Self {
        let why = if launch == 0 {
            "It was the first launch at the timed size, and the correctness checks passed at their sizes: does the \
             kernel do something else at this size (fewer blocks than the grid has, a size it special-cases)?"
        } else {
            "The launches before it were right: the kernel keeps something from one launch to the next (a result it \
             replays, a flag or counter in `__device__` memory it never resets, work it skips when the inputs look \
             the same). Every launch must compute its output from its own inputs"
        };
        Self { number: launch + 1, size: size.to_string(), what: format!("{e:#}"), why }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_tells_a_first_launch_from_a_later_one() {
        let first = WrongWhenTimed::new(0, anyhow::anyhow!("out[3]: expected 1, got 2"), "`in`: 4096 elements");
        let first = first.to_string();
        assert!(first.contains("launch 1 ") && first.contains("timed size") && first.contains("out[3]"), "{first}");
        assert!(first.contains("on `in`: 4096 elements") && first.contains("correctness fails"), "{first}");
        let later = WrongWhenTimed::new(4, anyhow::anyhow!("x"), "").to_string();
        assert!(later.contains("launch 5 ") && later.contains("keeps something"), "{later}");
    }
}
