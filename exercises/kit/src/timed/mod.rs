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
//! - **no two launches see the same inputs**: a [`Windowed`] input is a longer
//!   buffer of which launch `n` gets the window starting `n` steps further on,
//!   so every element a launch reads differs from the last launch's, and a
//!   result computed earlier is never the right one again. Moving a pointer
//!   costs nothing, where fresh inputs uploaded or generated per launch would
//!   cost as much as the kernel itself for the bandwidth exercises;
//! - **inputs stay as uploaded**: the grader watches a performance check's
//!   inputs as it does a correctness check's, and the guard zones and inputs
//!   are compared after every launch (`input-modified`).
//!
//! Yardsticks are the grader's own kernels, timed by
//! [`crate::perf::measure_trusted`] with the same loop and the same reset.

mod fresh;

pub use fresh::{byte_table, Fresh, Values, BYTE_TABLE};

use anyhow::Result;
use bytemuck::Pod;

use crate::backend::Arg;
use crate::gpu::{DeviceBuffer, Gpu, InputModified};
use crate::perf::{self, Timing};

/// Times the student's kernel: `prepare(n)` puts everything launch `n` reads
/// and writes into the state the README promises (not timed), `launch(n)`
/// starts the kernel once on launch `n`'s inputs (a [`Windowed`] input's
/// [`Windowed::arg`]), and `check(n)` checks what launch `n` wrote (not timed).
/// The first failed check ends the timing with a [`WrongWhenTimed`].
///
/// A histogram timed on a random byte stream, every launch's bins checked in
/// full (256 of them: small), each launch seeing another window of the input:
///
/// ```no_run
/// use kit::timed::Windowed;
/// use kit::LaunchConfig;
/// # fn demo(ctx: &kit::Ctx) -> anyhow::Result<()> {
/// let module = ctx.kernel_module("histogram_private")?;
/// let gpu = module.gpu();
/// let n = 1 << 28;
/// let block = ctx.shared("block", || kit::inputs::bytes(&mut ctx.rng(), 1 << 20));
/// let input = Windowed::repeated(gpu, "data", &block, n)?;
/// let bins = gpu.zeros::<u32>("bins", 256)?;
/// let cfg = LaunchConfig::linear((n as u32).div_ceil(256), 256);
/// # fn window_histogram(_: &[u8], _: usize, _: usize) -> Vec<u32> { vec![0; 256] }
/// let timing = kit::timed::student(
///     gpu,
///     |_| bins.write(&[0; 256]),
///     |launch| module.launch_async("histogram_private", cfg, &[input.arg(launch), bins.arg(), (n as i32).into()]),
///     // The bins of launch `launch`'s window: see the crate-level example's `window_histogram`.
///     |launch| kit::check::exact("bins", &window_histogram(&block, input.at(launch, 0), n), &bins.read()?),
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
    let mut checked =
        |n: usize| check(n).map_err(|e| if e.is::<InputModified>() { e } else { WrongWhenTimed::new(n, e).into() });
    // The canary: the last launch's inputs once more, from a reset output. A
    // kernel that computes is as slow as before; one that kept the result
    // (keyed by its inputs, their address, or anything else) is much faster.
    let (timing, again) = perf::measure_launches(gpu, &mut prepare, &mut launch, &mut checked, true)?;
    let (again, median) = (again.unwrap_or(f64::INFINITY), timing.median_ms());
    if again < REPLAY_RATIO * median {
        return Err(ReplaysResults { again_ms: again, median_ms: median }.into());
    }
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
    "wrong when timed: launch {number} of the timing (every launch starts from a reset output and gets inputs no \
     earlier launch saw) wrote a wrong result: {what}. {why}"
)]
pub struct WrongWhenTimed {
    /// 1 for the first launch.
    pub number: usize,
    /// What the check found, with the element, the expected and the returned value.
    pub what: String,
    /// What that suggests about the kernel.
    pub why: &'static str,
}

impl WrongWhenTimed {
    fn new(launch: usize, e: anyhow::Error) -> Self {
        let why = if launch == 0 {
            "It was the first launch at the timed size, and the correctness checks passed at their sizes: does the \
             kernel do something else at this size (fewer blocks than the grid has, a size it special-cases)?"
        } else {
            "The launches before it were right: the kernel keeps something from one launch to the next (a result it \
             replays, a flag or counter in `__device__` memory it never resets, work it skips when the inputs look \
             the same). Every launch must compute its output from its own inputs"
        };
        Self { number: launch + 1, what: format!("{e:#}"), why }
    }
}

/// Bytes between the windows of two successive launches: 256, so that every
/// window is as aligned as a fresh allocation (vector loads stay legal).
pub const WINDOW_STEP_BYTES: usize = 256;

/// Elements of `T` between two successive launches' windows.
pub const fn window_step<T>() -> usize {
    WINDOW_STEP_BYTES / std::mem::size_of::<T>()
}

/// Elements a windowed input of `len` needs past its first window, so that
/// every launch of a timing has a window of its own.
pub const fn window_room<T>() -> usize {
    window_step::<T>() * perf::MAX_LAUNCHES
}

/// An input that launch `n` sees from element `n * window_step` on: the
/// kernel gets `len` elements, each launch different ones. `source(i)` is what
/// the buffer holds at element `i`, so that checks compute what launch `n`
/// should have produced from [`Windowed::at`]. Example: [`student`].
pub struct Windowed<T: Pod> {
    buffer: DeviceBuffer<T>,
    len: usize,
}

impl<T: Pod> Windowed<T> {
    /// Uploads `data`, which must hold `len + window_room::<T>()` elements:
    /// for inputs whose values matter everywhere (a scan's carries).
    ///
    /// ```no_run
    /// # fn demo(ctx: &kit::Ctx, gpu: &kit::Gpu) -> anyhow::Result<()> {
    /// let n = 1 << 20;
    /// let data = kit::inputs::uniform_i32(&mut ctx.rng(), n + kit::timed::window_room::<i32>(), -100, 100);
    /// let input = kit::timed::Windowed::upload(gpu, "in", &data, n)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn upload(gpu: &Gpu, name: &str, data: &[T], len: usize) -> Result<Self> {
        anyhow::ensure!(data.len() >= len + window_room::<T>(), "`{name}`: too short for the timing's windows");
        Ok(Self { buffer: gpu.upload(name, data)?, len })
    }

    /// `block` repeated over `len` elements and the windows' room (see
    /// [`Gpu::upload_repeated`]): element `i` is `block[i % block.len()]`.
    /// Windows differ as long as the block is longer than a step times the
    /// number of launches, which [`Windowed::repeated`] requires.
    ///
    /// ```no_run
    /// # fn demo(ctx: &kit::Ctx, gpu: &kit::Gpu) -> anyhow::Result<()> {
    /// let block = ctx.shared("block", || kit::inputs::uniform_f32(&mut ctx.rng(), 65_521, -1.0, 1.0));
    /// let input = kit::timed::Windowed::repeated(gpu, "in", &block, 1 << 26)?;
    /// // launch n reads input.arg(n); its element i is block[input.at(n, i) % block.len()]
    /// # Ok(())
    /// # }
    /// ```
    pub fn repeated(gpu: &Gpu, name: &str, block: &[T], len: usize) -> Result<Self> {
        anyhow::ensure!(
            block.len() > window_room::<T>(),
            "`{name}`: a repeated block must be longer than the windows' room, or two windows would be equal"
        );
        Ok(Self { buffer: gpu.upload_repeated(name, block, len + window_room::<T>())?, len })
    }

    /// The kernel argument for launch `n`: the window's first element.
    /// Example: [`student`].
    pub fn arg(&self, n: usize) -> Arg {
        Arg::Ptr(self.buffer.ptr() + (n * WINDOW_STEP_BYTES) as u64)
    }

    /// The buffer element that launch `n` sees as its element `i`: for a
    /// [`Windowed::repeated`] block, launch `n`'s element `i` is
    /// `block[input.at(n, i) % block.len()]`. Example: [`student`].
    pub fn at(&self, n: usize, i: usize) -> usize {
        n * window_step::<T>() + i
    }

    /// Elements each launch sees.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// `sum(values[(start + j) % values.len()] for j in 0..len)` in O(1) from
/// `prefix` = [`prefix_sums`] of `values`: the exact expected result of a
/// reduction over a window of a repeated block.
pub fn periodic_window_sum(prefix: &[i128], start: usize, len: usize) -> i128 {
    let period = prefix.len() - 1;
    let upto = |end: usize| (end / period) as i128 * prefix[period] + prefix[end % period];
    upto(start + len) - upto(start)
}

/// Prefix sums (exact, in `i128`) with a leading 0: `prefix[i]` = the sum of the first `i` values.
pub fn prefix_sums(values: impl IntoIterator<Item = i128>) -> Vec<i128> {
    let mut prefix = vec![0i128];
    for v in values {
        prefix.push(prefix.last().copied().unwrap_or(0) + v);
    }
    prefix
}

/// [`periodic_window_sum`] for real values: sums in `f64` of a block's prefix.
pub fn periodic_window_sum_f64(prefix: &[f64], start: usize, len: usize) -> f64 {
    let period = prefix.len() - 1;
    let upto = |end: usize| (end / period) as f64 * prefix[period] + prefix[end % period];
    upto(start + len) - upto(start)
}

/// [`prefix_sums`] in `f64`.
pub fn prefix_sums_f64(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut prefix = vec![0.0];
    for v in values {
        prefix.push(prefix.last().copied().unwrap_or(0.0) + v);
    }
    prefix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_sums_of_a_repeated_block_match_the_long_way() {
        let block: Vec<i128> = vec![3, -1, 4, 1, -5, 9, 2];
        let prefix = prefix_sums(block.iter().copied());
        for start in [0, 1, 6, 7, 13, 64] {
            for len in [0, 1, 5, 7, 30, 101] {
                let long: i128 = (0..len).map(|j| block[(start + j) % block.len()]).sum();
                assert_eq!(periodic_window_sum(&prefix, start, len), long, "start {start}, len {len}");
            }
        }
        let real = prefix_sums_f64(block.iter().map(|&v| v as f64 / 2.0));
        assert_eq!(
            periodic_window_sum_f64(&real, 13, 30),
            (0..30).map(|j| block[(13 + j) % 7] as f64 / 2.0).sum::<f64>()
        );
    }

    #[test]
    fn every_launch_has_a_window_of_its_own_with_aligned_starts() {
        assert_eq!(window_step::<f32>(), 64);
        assert_eq!(window_step::<u8>(), 256);
        assert_eq!(window_room::<f32>(), 64 * perf::MAX_LAUNCHES);
    }

    #[test]
    fn the_message_tells_a_first_launch_from_a_later_one() {
        let first = WrongWhenTimed::new(0, anyhow::anyhow!("out[3]: expected 1, got 2")).to_string();
        assert!(first.contains("launch 1 ") && first.contains("timed size") && first.contains("out[3]"), "{first}");
        let later = WrongWhenTimed::new(4, anyhow::anyhow!("x")).to_string();
        assert!(later.contains("launch 5 ") && later.contains("keeps something"), "{later}");
    }
}
