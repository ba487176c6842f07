//! ex02: dot product c = sum a_i b_i (seed 000, "dotProduct"), each block
//! reducing its products in shared memory with a tree (seed 001, "Parallel
//! Reduction") and writing one partial sum; the host adds the partial sums.

pub mod measured;

use std::sync::Arc;

use anyhow::{bail, Result};
use kit::timed::Fresh;
use kit::{args, Arg, Check, Ctx, DeviceBuffer, Exercise, LaunchConfig, Module, Part};
use rand::Rng;

pub const THREADS: u32 = 256;
/// The grid is capped, so large inputs need a grid-stride loop.
pub const MAX_BLOCKS: u32 = 1024;
/// Lengths compared against the f64 reference within a rounding bound: one
/// element, less than a block, one past a block, a million-odd, and more than
/// 2^24 (up to 65 products per thread).
pub const SIZES: [usize; 5] = [1, 255, 257, 1_000_003, 16_777_259];
/// Lengths with inputs whose float sums are exact (see [`small_integers`]), compared
/// exactly: one element past 256 full blocks, and more elements than the
/// capped grid has threads.
pub const EXACT_SIZES: [usize; 2] = [65_537, 4_194_311];
/// `dot` must read a and b at this share of the copy bandwidth or more.
/// Provisional (GPU.md: 2.6 TB/s vs copy 2.9-3.0 TB/s on an H100, about 0.87);
/// see CALIBRATION.md in this folder.
pub const MIN_COPY_SHARE: f64 = 0.6;

/// Unit roundoff of f32 (round to nearest): 2^-24.
const U32: f64 = 1.0 / (1u64 << 24) as f64;

pub fn exercise() -> Exercise {
    let mut part = Part::new("dot", "kernels/dot.cu", &["dot"], 10.0);
    for n in SIZES {
        part = part.check(
            Check::correctness(format!("n={n}"), move |ctx| within_rounding_bound(ctx, n))
                .heavy_if(n > kit::SIM_MAX_ELEMENTS),
        );
    }
    for n in EXACT_SIZES {
        part = part.check(
            Check::correctness(format!("exact-n={n}"), move |ctx| exact_sum(ctx, n))
                .heavy_if(n > kit::SIM_MAX_ELEMENTS),
        );
    }
    part = part
        .check(Check::structure("parallel-block-reduction", measured::parallel_block_reduction))
        // No stand-in: see `measured`.
        .check(Check::performance("share-of-copy-bandwidth", bandwidth_share));
    Exercise {
        id: "ex02",
        slug: "dot",
        title: "Dot product with a shared-memory reduction per block",
        dir: "exercises/ex02-dot",
        parts: vec![part],
    }
}

pub fn blocks(n: usize) -> u32 {
    (n.div_ceil(THREADS as usize)).clamp(1, MAX_BLOCKS as usize) as u32
}

pub fn launch_config(n: usize) -> LaunchConfig {
    LaunchConfig::linear(blocks(n), THREADS)
}

/// Products each thread adds in its grid-stride loop (at most).
pub fn terms_per_thread(n: usize) -> usize {
    n.div_ceil(blocks(n) as usize * THREADS as usize)
}

/// Roundings on the way from one product a_i*b_i to the block's partial sum, for
/// any kernel that sums each thread's products and then combines the block's 256
/// sums in any order: 1 for the product, one per addition of the thread's loop,
/// at most 255 to combine the block (a tree needs only 8), and 1 spare (the
/// host's f64 sum of the partials adds far less than one f32 rounding).
pub fn roundings(n: usize) -> usize {
    1 + terms_per_thread(n) + (THREADS as usize - 1) + 1
}

/// Higham's gamma_k = k u / (1 - k u): a float sum in which every term goes
/// through at most k roundings is within gamma_k * sum |x_i| of the exact sum,
/// whatever the order. Spreading the sum over the grid keeps k small (about
/// n / 2^18 + 257), where one thread adding everything would have k = n.
pub fn gamma(k: usize) -> f64 {
    let ku = k as f64 * U32;
    ku / (1.0 - ku)
}

/// The CPU reference in f64, and sum |a_i b_i| (what the error bound scales with).
pub fn cpu_dot(a: &[f32], b: &[f32]) -> (f64, f64) {
    a.iter().zip(b).fold((0.0, 0.0), |(s, abs), (&x, &y)| {
        let p = x as f64 * y as f64;
        (s + p, abs + p.abs())
    })
}

/// Uniform in [0, 1): all products are >= 0, so |sum| = sum |a_i b_i| (condition
/// number 1) and the bound is a relative error of gamma_k.
pub fn uniform(rng: &mut impl Rng, n: usize) -> Vec<f32> {
    kit::inputs::uniform_f32(rng, n, 0.0, 1.0)
}

/// The ends of the README's range [0, 1) planted in a and b of every
/// rounding-bound check: 0 and the largest float below 1, paired with every
/// kind of partner (planted at the same places in a and b: 0 * 0, and the
/// largest times itself).
pub const EDGES: [f32; 2] = [0.0, 0.999_999_94];

/// The inputs of a rounding-bound check: a and b [`uniform`], [`EDGES`] planted.
pub fn correctness_inputs(rng: &mut impl Rng, n: usize) -> (Vec<f32>, Vec<f32>) {
    let (mut a, mut b) = (uniform(rng, n), uniform(rng, n));
    kit::inputs::plant(&mut a, &EDGES);
    kit::inputs::plant(&mut b, &EDGES);
    (a, b)
}

/// Pairs of small integers whose product is 1, 2 or 3 (one factor is 1, the
/// other 1, 2 or 3, on either side). Every sum of such products over fewer than
/// 2^24 / 3 elements is an integer below 2^24, which a float holds exactly: the
/// kernel's result is then exact whatever the order of the additions and however
/// the work is split, and a single element skipped or counted twice changes it
/// by at least 1.
pub fn small_integers(rng: &mut impl Rng, n: usize) -> (Vec<f32>, Vec<f32>) {
    (0..n)
        .map(|_| {
            let p = rng.random_range(1..=3) as f32;
            if rng.random::<bool>() {
                (p, 1.0)
            } else {
                (1.0, p)
            }
        })
        .unzip()
}

/// Runs `dot` on a and b; returns the host's f64 sum of the partial sums after
/// checking that every block wrote a finite one.
fn run_dot(ctx: &Ctx, a: &[f32], b: &[f32]) -> Result<f64> {
    let module = ctx.kernel_module("dot")?;
    let gpu = module.gpu();
    let n = a.len();
    let (da, db) = (gpu.upload("a", a)?, gpu.upload("b", b)?);
    let partial = gpu.poisoned::<f32>("partial", blocks(n) as usize)?;
    module.launch("dot", launch_config(n), &args![&da, &db, n as i32, &partial])?;
    sum_of_partials(&partial.read()?)
}

/// The host's f64 sum of the partial sums, after checking that every block
/// wrote a finite one.
fn sum_of_partials(partial: &[f32]) -> Result<f64> {
    let unwritten: Vec<usize> = (0..partial.len()).filter(|&i| kit::check::is_poison(&partial[i])).collect();
    if let Some(&first) = unwritten.first() {
        bail!(
            "`partial`: {} of {} block(s) never wrote their partial sum, the first is block {first}. Thread 0 of \
             every block must write partial[blockIdx.x], even a block whose threads had no element (it writes 0)",
            unwritten.len(),
            partial.len()
        );
    }
    if let Some(i) = partial.iter().position(|p| !p.is_finite()) {
        bail!("`partial[{i}]` is {}: was a shared slot read before it was written?", partial[i]);
    }
    Ok(partial.iter().map(|&p| p as f64).sum())
}

fn within_rounding_bound(ctx: &Ctx, n: usize) -> Result<String> {
    // The same for every student of a batch: drawn and summed once per seed.
    let inputs = ctx.shared("a+b+dot", || {
        let (a, b) = correctness_inputs(&mut ctx.rng(), n);
        let (expected, abs_sum) = cpu_dot(&a, &b);
        (a, b, expected, abs_sum)
    });
    let (a, b, expected, abs_sum) = (&inputs.0, &inputs.1, inputs.2, inputs.3);
    let got = run_dot(ctx, a, b)?;
    let k = roundings(n);
    let bound = gamma(k) * abs_sum;
    let err = (got - expected).abs();
    if err > bound {
        bail!(
            "dot = {got}, expected {expected} (computed in f64): the error {err:.3e} is more than rounding can \
             explain ({bound:.3e} = gamma_{k} * sum|a_i b_i|, for {k} roundings per product: {} in a thread's loop, up \
             to 255 to combine the block's sums). Is an element skipped or counted twice, or a shared slot read \
             before it is written?",
            terms_per_thread(n)
        );
    }
    Ok(format!("relative error {:.1e} (bound {:.1e})", err / expected.abs(), bound / abs_sum))
}

fn exact_sum(ctx: &Ctx, n: usize) -> Result<String> {
    let inputs = ctx.shared("a+b+dot", || {
        let (a, b) = small_integers(&mut ctx.rng(), n);
        let (expected, _) = cpu_dot(&a, &b);
        (a, b, expected)
    });
    let (a, b, expected) = (&inputs.0, &inputs.1, inputs.2);
    let got = run_dot(ctx, a, b)?;
    if got != expected {
        bail!(
            "dot = {got}, expected exactly {expected}: the products are the integers 1, 2 and 3, so every partial \
             sum is exact in float and no rounding can explain the difference ({:+}). Some element is skipped or \
             counted twice: check the grid-stride loop's start, step and bound (i < n)",
            got - expected
        );
    }
    Ok(String::new())
}

/// Elements of a and b each for the timing: together 8x the L2 cache (at least
/// 64 MiB), so the data comes from DRAM; about 150 us per launch on an H100.
pub fn perf_len(gpu: &kit::Gpu) -> usize {
    (kit::exercise::bandwidth_elements(gpu) / 2).min(i32::MAX as usize)
}

/// Values of the timed a and b: full-precision floats in [2^-PERF_BINADES, 1),
/// their exponents uniform over the PERF_BINADES binades below 1
/// (`kit::timed::Values::Wide`), all positive as in the correctness inputs
/// (so sum |a_i b_i| is the result and the bound is a relative error of
/// gamma_k). No structure to exploit (the old k/16 let a kernel read them as
/// bytes and multiply with `__dp4a`), and a kernel that reads them in fixed
/// point loses the small ones: always downwards, far past the bound.
pub const PERF_BINADES: u32 = 24;

/// The timed check's inputs, output and expected sum. Every launch gets fresh
/// a and b from the run's secret key (kit::timed::Fresh), and the grader's own
/// kernel computes each launch's dot product (and sum |a_i b_i|) in double
/// from the same inputs.
pub struct TimedDot {
    pub n: usize,
    pub a: Fresh<f32>,
    pub b: Fresh<f32>,
    /// The student's output.
    pub partial: DeviceBuffer<f32>,
    /// The grader's dot product and sum |a_i b_i|.
    sums: DeviceBuffer<f64>,
    dot_check: Arc<Module>,
}

impl TimedDot {
    pub fn new(ctx: &Ctx, n: usize) -> Result<Self> {
        let gpu = ctx.gpu()?;
        let dot_check = ctx.yardstick("dot_check", include_str!("../yardsticks/dot_check.cu"))?;
        let values = |name| Fresh::wide(ctx, name, n, PERF_BINADES, false);
        Ok(Self {
            n,
            a: values("a")?,
            b: values("b")?,
            partial: gpu.poisoned::<f32>("partial", blocks(n) as usize)?,
            sums: gpu.zeros::<f64>("dot (the grader's)", 2)?,
            dot_check,
        })
    }

    /// Launch `launch`'s a and b, and `partial` poisoned as the README promises.
    pub fn prepare(&self, launch: usize) -> Result<()> {
        self.a.fill(launch)?;
        self.b.fill(launch)?;
        self.partial.poison()
    }

    /// The kernel's arguments (the same buffers every launch).
    pub fn args(&self) -> [Arg; 4] {
        [self.a.arg(), self.b.arg(), (self.n as i32).into(), self.partial.arg()]
    }

    /// What launch `launch` wrote: its a and b untouched, every block's
    /// partial sum written, and their sum within the rounding bound of the
    /// grader's dot product of the same a and b.
    pub fn check(&self, launch: usize) -> Result<()> {
        self.a.intact(launch)?;
        self.b.intact(launch)?;
        self.sums.write(&[0.0, 0.0])?;
        let args = [self.a.arg(), self.b.arg(), (self.n as i32).into(), self.sums.arg()];
        self.dot_check.launch("dot_check", launch_config(self.n), &args)?;
        let [expected, abs_sum] = self.sums.read()?[..] else { unreachable!("two sums") };
        let got = sum_of_partials(&self.partial.read()?)?;
        let bound = gamma(roundings(self.n)) * abs_sum;
        if (got - expected).abs() > bound {
            bail!(
                "the sum of `partial` is {got} (n = {}), expected {expected} (the grader's dot product of the same \
                 a and b, in double; allowed error {bound:.3e})",
                self.n
            );
        }
        Ok(())
    }
}

fn bandwidth_share(ctx: &Ctx) -> Result<String> {
    let module = ctx.kernel_module("dot")?;
    // Measured first (once per run), before this check's buffers take memory.
    let copy = ctx.copy_bandwidth_gbps()?;
    let n = perf_len(module.gpu());
    let timed = TimedDot::new(ctx, n)?;
    let t = kit::timed::student(
        module.gpu(),
        |launch| timed.prepare(launch),
        |_| module.launch_async("dot", launch_config(n), &timed.args()),
        |launch| timed.check(launch),
    )?;
    // Bytes of a and b read; the partial sums are negligible.
    kit::perf::require_share("dot", t.gb_per_s(2 * n * 4), "the copy bandwidth", copy, MIN_COPY_SHARE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    #[test]
    fn cpu_reference_is_the_dot_product() {
        assert_eq!(cpu_dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), (32.0, 32.0));
        assert_eq!(cpu_dot(&[1.0, -2.0], &[3.0, 1.0]), (1.0, 5.0));
        assert_eq!(cpu_dot(&[0.5], &[0.25]), (0.125, 0.125));
    }

    #[test]
    fn grid_is_capped_so_large_inputs_need_a_grid_stride_loop() {
        assert_eq!(blocks(1), 1);
        assert_eq!(blocks(256), 1);
        assert_eq!(blocks(257), 2);
        assert_eq!(blocks(16_777_259), MAX_BLOCKS);
        assert_eq!(terms_per_thread(257), 1);
        assert_eq!(terms_per_thread(1_000_003), 4);
        assert_eq!(terms_per_thread(16_777_259), 65);
        assert!(SIZES[4] >= 1 << 24);
        assert!(EXACT_SIZES[1] > (MAX_BLOCKS * THREADS) as usize);
        assert!(SIZES.iter().chain(&EXACT_SIZES).all(|n| n % THREADS as usize != 0));
    }

    #[test]
    fn rounding_bound_grows_with_the_work_per_thread() {
        assert_eq!(roundings(1), 258);
        assert_eq!(roundings(16_777_259), 322);
        // gamma_k is k u to first order: 1.5e-5 relative for small n, 1.9e-5 at 2^24.
        assert!((gamma(322) / (322.0 * U32) - 1.0).abs() < 1e-4);
        assert!(gamma(roundings(257)) < 1.6e-5);
        // At n = 257 (a sum near 64) the bound is about 1e-3: an element left
        // out is caught unless its product is that small.
        assert!(gamma(roundings(257)) * 64.0 < 1.1e-3);
    }

    #[test]
    fn tree_and_serial_f32_sums_stay_within_the_bound() {
        // A thread's loop then a tree over 256 threads, as the reference does
        // (in f32, without FMA: one more rounding per product than the GPU has),
        // and the block's 256 sums added one after the other by one thread.
        let n = 270_000; // a few threads add 2 products, the others 1
        let mut rng = rng_for(9, "bound");
        let (a, b) = (uniform(&mut rng, n), uniform(&mut rng, n));
        let threads = blocks(n) as usize * THREADS as usize;
        let mut sums: Vec<f32> = (0..threads).map(|t| (t..n).step_by(threads).map(|i| a[i] * b[i]).sum()).collect();
        let serial: f64 = sums.chunks(THREADS as usize).map(|blk| blk.iter().sum::<f32>() as f64).sum();
        let mut block_sums = Vec::new();
        for block in sums.chunks_mut(THREADS as usize) {
            let mut s = THREADS as usize / 2;
            while s > 0 {
                for t in 0..s {
                    block[t] += block[t + s];
                }
                s /= 2;
            }
            block_sums.push(block[0] as f64);
        }
        let got: f64 = block_sums.iter().sum();
        let (expected, abs_sum) = cpu_dot(&a, &b);
        let bound = gamma(roundings(n)) * abs_sum;
        assert!((got - expected).abs() <= bound);
        assert!((serial - expected).abs() <= bound);
    }

    /// A context on the simulator (seed 1) for `file`, its text passed through `edit`.
    fn on_sim(file: &str, edit: impl FnOnce(String) -> String, check: impl FnOnce(&Ctx)) {
        kit::trial::on_sim("ex02::dot::perf::share-of-copy-bandwidth", file, edit, check)
    }

    /// The f64 dot product of launch `launch`'s a and b, from the host's copy
    /// of the generator, and sum |a_i b_i|.
    fn host_dot(timed: &TimedDot, launch: usize) -> (f64, f64) {
        let (a, b) = (timed.a.host_values(launch, 0, timed.n), timed.b.host_values(launch, 0, timed.n));
        assert!(a.iter().chain(&b).all(|&v| v > 0.0 && v < 1.0));
        assert!(a.iter().filter(|&&v| (v * 16.0).fract() != 0.0).count() > timed.n / 2, "not multiples of 1/16");
        cpu_dot(&a, &b)
    }

    /// Positive full-precision floats over `binades` binades below 1, as the timed inputs.
    fn wide(rng: &mut impl Rng, n: usize, binades: i32) -> Vec<f32> {
        (0..n).map(|_| rng.random_range(1.0f32..2.0) * (-(rng.random_range(1..=binades) as f32)).exp2()).collect()
    }

    /// The timed inputs' bound holds for float sums in the reference's order
    /// and one after the other, and fails the sums of a kernel that reads the
    /// values in fixed point (as bytes: k/16, the old timed inputs' grid,
    /// rounded or truncated; or on a 2^-12 grid): on inputs spread over 24
    /// binades the values it loses are all small, so the error is one-sided.
    #[test]
    fn the_timed_bound_fails_fixed_point_kernels() {
        let n = 300_007;
        let mut rng = rng_for(4, "wide");
        let (a, b) = (wide(&mut rng, n, PERF_BINADES as i32), wide(&mut rng, n, PERF_BINADES as i32));
        let (expected, abs_sum) = cpu_dot(&a, &b);
        let bound = gamma(roundings(n)) * abs_sum;
        let threads = blocks(n) as usize * THREADS as usize;
        let f32_sum = |q: &dyn Fn(f32) -> f32, fused: bool| -> f64 {
            let sums: Vec<f32> = (0..threads)
                .map(|t| {
                    (t..n).step_by(threads).fold(0.0f32, |acc, i| {
                        if fused {
                            q(a[i]).mul_add(q(b[i]), acc)
                        } else {
                            acc + q(a[i]) * q(b[i])
                        }
                    })
                })
                .collect();
            sums.chunks(THREADS as usize).map(|blk| blk.iter().rev().sum::<f32>() as f64).sum()
        };
        for fused in [false, true] {
            let got = f32_sum(&|v| v, fused);
            assert!((got - expected).abs() <= bound, "a right float sum: {got} vs {expected} ({bound:e})");
        }
        let quantized: [(&str, &dyn Fn(f32) -> f32); 3] = [
            ("k/16, rounded", &|v| (v * 16.0).round() / 16.0),
            ("k/16, truncated", &|v| (v * 16.0).trunc() / 16.0),
            ("k/4096, rounded", &|v| (v * 4096.0).round() / 4096.0),
        ];
        for (what, q) in quantized {
            let got = f32_sum(q, true);
            assert!((got - expected).abs() > 3.0 * bound, "{what}: {got} vs {expected} within {bound:e}");
        }
    }

    /// The timing needs a GPU; its launches and their checks run here, on a
    /// shorter input (more elements than the grid has threads): the references'
    /// partial sums add up to the grader's dot product on every launch
    /// (within the bound: the inputs are full-precision floats), another
    /// launch's partial sums fail, and a write into a or b is caught.
    #[test]
    fn timed_launches_are_checked_in_full() {
        let n = 300_007;
        for file in ["reference/ex02-dot/kernels/dot.cu", "reference/slow/ex02-dot/kernels/dot.cu"] {
            on_sim(
                file,
                |text| text,
                |ctx| {
                    let module = ctx.kernel_module("dot").unwrap();
                    let timed = TimedDot::new(ctx, n).unwrap();
                    let mut outputs = Vec::new();
                    for launch in [0, 1, 6] {
                        timed.prepare(launch).unwrap();
                        module.launch("dot", launch_config(n), &timed.args()).unwrap();
                        timed.check(launch).unwrap_or_else(|e| panic!("{file}, launch {launch}: {e:#}"));
                        let partial = timed.partial.read().unwrap();
                        let (expected, abs_sum) = host_dot(&timed, launch);
                        let got = sum_of_partials(&partial).unwrap();
                        assert!((got - expected).abs() <= gamma(roundings(n)) * abs_sum, "{file}, launch {launch}");
                        outputs.push(partial);
                    }
                    // Launch 0's a and b with launch 1's partial sums.
                    timed.prepare(0).unwrap();
                    timed.partial.write(&outputs[1]).unwrap();
                    let e = format!("{:#}", timed.check(0).unwrap_err());
                    assert!(e.contains("(the grader's dot product of the same"), "{e}");
                    // One block that wrote nothing.
                    timed.prepare(3).unwrap();
                    module.launch("dot", launch_config(n), &timed.args()).unwrap();
                    timed.partial.write_at(7, &[f32::from_bits(u32::MAX)]).unwrap();
                    let e = format!("{:#}", timed.check(3).unwrap_err());
                    assert!(e.contains("never wrote") && e.contains("block 7"), "{e}");
                    // A product written into b.
                    timed.prepare(2).unwrap();
                    module.launch("dot", launch_config(n), &timed.args()).unwrap();
                    timed.b.overwrite_one(2, 12_345).unwrap();
                    let e = timed.check(2).unwrap_err();
                    let modified = e.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
                    assert_eq!((modified.buffer.as_str(), modified.index), ("b", 12_345));
                },
            );
        }
    }

    /// The cheat corpus's kernel that sums one period of the old repeated
    /// block and multiplies, with its timed size set to the test's: within
    /// the bound on the old windows of a repeated block of 65 536 values,
    /// wrong on its first launch of fresh inputs.
    #[test]
    fn a_sum_of_one_period_is_wrong_on_fresh_inputs() {
        let n = 300_007;
        let file = "grader/tests/cheats/ex02-dot-one-period/exercises/ex02-dot/kernels/dot.cu";
        let at_test_size = |text: String| {
            assert!(text.contains("#define LARGE 20000000"));
            text.replace("#define LARGE 20000000", "#define LARGE 262144")
        };
        on_sim(file, at_test_size, |ctx| {
            let module = ctx.kernel_module("dot").unwrap();
            let gpu = module.gpu();
            // The old timing: a block of 65 536 values repeated, launch l reading from 64 (256 bytes) times l on.
            let mut rng = rng_for(1, "windows");
            let (block_a, block_b) = (uniform(&mut rng, 1 << 16), uniform(&mut rng, 1 << 16));
            let repeated = |block: &[f32]| block.iter().copied().cycle().take(n + 64 * 8).collect::<Vec<f32>>();
            let (a, b) = (repeated(&block_a), repeated(&block_b));
            let (da, db) = (gpu.upload("a", &a).unwrap(), gpu.upload("b", &b).unwrap());
            let window = |buf: &DeviceBuffer<f32>, l: usize| Arg::Ptr(buf.ptr() + 256 * l as u64);
            let partial = gpu.poisoned::<f32>("partial", blocks(n) as usize).unwrap();
            for launch in [0, 1, 5, 5] {
                partial.poison().unwrap();
                let args = [window(&da, launch), window(&db, launch), (n as i32).into(), partial.arg()];
                module.launch("dot", launch_config(n), &args).unwrap();
                let at = 64 * launch..64 * launch + n;
                let (expected, abs_sum) = cpu_dot(&a[at.clone()], &b[at]);
                let got = sum_of_partials(&partial.read().unwrap()).unwrap();
                assert!((got - expected).abs() <= gamma(roundings(n)) * abs_sum, "window {launch}: {got} {expected}");
            }
            let timed = TimedDot::new(ctx, n).unwrap();
            timed.prepare(0).unwrap();
            module.launch("dot", launch_config(n), &timed.args()).unwrap();
            let e = format!("{:#}", timed.check(0).unwrap_err());
            assert!(e.contains("the sum of `partial` is"), "{e}");
        });
    }

    #[test]
    fn small_integer_inputs_make_any_float_order_exact() {
        // The guarantee for every size tested: any partial sum is an integer below 2^24.
        assert!(3 * EXACT_SIZES.iter().max().unwrap() < 1 << 24);
        let n = EXACT_SIZES[0];
        let (a, b) = small_integers(&mut rng_for(5, "exact"), n);
        let products: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        assert!(a.iter().chain(&b).all(|&x| [1.0, 2.0, 3.0].contains(&x)));
        assert!([1.0, 2.0, 3.0].iter().all(|p| products.contains(p)));
        let (expected, _) = cpu_dot(&a, &b);
        // One thread adding everything, forwards or backwards, in f32: exact.
        assert_eq!(products.iter().sum::<f32>() as f64, expected);
        assert_eq!(products.iter().rev().sum::<f32>() as f64, expected);
        // A single element missing changes the result.
        assert_ne!(products[..n - 1].iter().sum::<f32>() as f64, expected);
    }
}
