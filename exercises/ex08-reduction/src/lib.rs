//! ex08: sum reduction (seed 001, "Parallel Reduction"): every block sums its
//! 256 elements in shared memory, first with interleaved addressing (the
//! divergent `t % (2*stride)` test), then with sequential addressing
//! (`t < stride`), which keeps whole warps busy or idle.
//!
//! Integers, not floats: every block's sum is then exact whatever the order of
//! the additions, so each partial sum is compared exactly, and the lesson (the
//! cost of divergence) is the same.

pub mod measured;

use std::sync::Arc;

use anyhow::Result;
use kit::timed::Fresh;
use kit::{args, check, Arg, Check, Ctx, DeviceBuffer, Exercise, LaunchConfig, Module, Part};
use rand::Rng;

/// Threads per block; one element per thread, so a block sums 256 elements.
pub const THREADS: u32 = 256;
/// Sizes tested for correctness: one element, less than a block, exactly one
/// block, one past a block, a prime, and a million-odd elements (3907 blocks).
pub const SIZES: [usize; 6] = [1, 255, 256, 257, 4099, 1_000_003];
/// Inputs are drawn from `1..MAX_VALUE`: a block's sum stays below
/// `THREADS * MAX_VALUE = 2^28`, far from overflowing an `int`, and is never 0
/// or -1 (the poison pattern), so a kernel that writes nothing never passes.
pub const MAX_VALUE: i32 = 1 << 20;
/// Elements for the timing: 2^26 ints (256 MiB), several times any L2 cache;
/// the size GPU.md measured the two patterns at.
pub const PERF_N: usize = 1 << 26;
/// `sequential` must beat the grader's interleaved kernel by this factor.
/// Provisional (GPU.md: 2.09x on an H100); see CALIBRATION.md in this folder.
pub const MIN_SPEEDUP: f64 = 1.4;

/// One part: its file and its kernel.
struct Variant {
    part: &'static str,
    file: &'static str,
    kernels: &'static [&'static str],
}

const INTERLEAVED: Variant =
    Variant { part: "interleaved", file: "kernels/reduce_interleaved.cu", kernels: &["reduce_interleaved"] };
/// The timed part's kernel (the interleaved part is not timed).
pub const SEQUENTIAL_KERNEL: &str = "reduce_sequential";
const SEQUENTIAL: Variant =
    Variant { part: "sequential", file: "kernels/reduce_sequential.cu", kernels: &[SEQUENTIAL_KERNEL] };

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex08",
        slug: "reduction",
        title: "Sum reduction: interleaved, then sequential addressing",
        dir: "exercises/ex08-reduction",
        parts: vec![part(&INTERLEAVED), part(&SEQUENTIAL)],
    }
}

fn part(v: &'static Variant) -> Part {
    let kernel = v.kernels[0];
    let mut part = Part::new(v.part, v.file, v.kernels, 10.0);
    for n in SIZES {
        part = part.check(Check::correctness(format!("n={n}"), move |ctx| block_sums_match(ctx, kernel, n)));
    }
    let pattern = if v.part == SEQUENTIAL.part { measured::sequential } else { measured::interleaved };
    part = part.check(Check::structure("shared-tree", move |ctx| measured::shared_tree(ctx, kernel, pattern)));
    // The interleaved part has no timing: it *is* the slow pattern, and what a
    // student could get wrong in it (a serial sum by thread 0, say) costs about
    // as much as the divergence, so no threshold would separate them reliably.
    if v.part == SEQUENTIAL.part {
        // Divergence is what the timing measures: the stand-in counts it.
        part = part.check(Check::performance("faster-than-interleaved", sequential_speedup).with_stand_in(|ctx| {
            kit::measure::skip_unmeasurable(measured::here_and_timed(ctx, SEQUENTIAL.kernels[0], measured::sequential))
        }));
    }
    part
}

/// `n` values in `1..MAX_VALUE`.
pub fn values(rng: &mut impl Rng, n: usize) -> Vec<i32> {
    let mut v = kit::inputs::uniform_i32(rng, n, 1, MAX_VALUE);
    kit::inputs::plant(&mut v, &EDGES);
    v
}

/// The ends of the README's range `1 .. 2^20 - 1`, planted in every input
/// (the first element, the last, and between).
pub const EDGES: [i32; 2] = [1, MAX_VALUE - 1];

/// The CPU reference: the sum of each block's 256 elements (the last block's
/// missing elements count as 0), accumulated in i64.
pub fn block_sums(values: &[i32]) -> Vec<i32> {
    values
        .chunks(THREADS as usize)
        .map(|c| {
            let s: i64 = c.iter().map(|&v| v as i64).sum();
            i32::try_from(s).expect("a block's sum fits an int by the choice of MAX_VALUE")
        })
        .collect()
}

pub fn blocks(n: usize) -> u32 {
    u32::try_from(n.div_ceil(THREADS as usize)).expect("the grid fits in gridDim.x")
}

/// One block per 256 elements, one element per thread.
pub fn launch_config(n: usize) -> LaunchConfig {
    LaunchConfig::linear(blocks(n), THREADS)
}

fn block_sums_match(ctx: &Ctx, kernel: &str, n: usize) -> Result<String> {
    // The same for every student of a batch: drawn and summed once per seed.
    let inputs = ctx.shared("in+block-sums", || {
        let input = values(&mut ctx.rng(), n);
        let expected = block_sums(&input);
        (input, expected)
    });
    let (input, expected) = (&inputs.0, &inputs.1);
    let module = ctx.kernel_module(kernel)?;
    let gpu = module.gpu();
    let d_in = gpu.upload("in", input)?;
    let partial = gpu.poisoned::<i32>("partial", expected.len())?;
    module.launch(kernel, launch_config(n), &args![&d_in, n as i32, &partial])?;
    check::exact("partial", expected, &partial.read()?)?;
    Ok(format!("{} block sum(s) exact", expected.len()))
}

/// The timed check's input, output and expected partial sums. Every launch
/// gets fresh ints from the run's secret key (kit::timed::Fresh), drawn from
/// the correctness checks' range, and the grader's interleaved kernel sums
/// the same input into a buffer of its own, compared in full on the device.
pub struct TimedSums {
    pub n: usize,
    pub input: Fresh<i32>,
    /// The student's output.
    pub partial: DeviceBuffer<i32>,
    /// The grader's partial sums of the same input.
    expected: DeviceBuffer<i32>,
    pattern: Arc<Module>,
}

impl TimedSums {
    pub fn new(ctx: &Ctx, n: usize) -> Result<Self> {
        let gpu = ctx.gpu()?;
        let pattern =
            ctx.yardstick("reduce_interleaved_pattern", include_str!("../yardsticks/reduce_interleaved_pattern.cu"))?;
        Ok(Self {
            n,
            input: Fresh::ints(ctx, "in", n, 1, MAX_VALUE - 1)?,
            partial: gpu.poisoned::<i32>("partial", blocks(n) as usize)?,
            expected: gpu.poisoned::<i32>("partial (the grader's)", blocks(n) as usize)?,
            pattern,
        })
    }

    /// Launch `launch`'s input, and `partial` poisoned as the README promises.
    pub fn prepare(&self, launch: usize) -> Result<()> {
        self.input.fill(launch)?;
        self.partial.poison()
    }

    /// The kernel's arguments (the same buffers every launch).
    pub fn args(&self) -> [Arg; 3] {
        [self.input.arg(), (self.n as i32).into(), self.partial.arg()]
    }

    /// What launch `launch` wrote: its input untouched, and every block's sum
    /// the grader's sum of the same 256 ints.
    pub fn check(&self, launch: usize) -> Result<()> {
        self.input.intact(launch)?;
        self.expected.poison()?;
        let args = [self.input.arg(), (self.n as i32).into(), self.expected.arg()];
        self.pattern.launch("reduce_interleaved_pattern", launch_config(self.n), &args)?;
        kit::timed::same_as_expected(&format!("partial (n = {})", self.n), &self.expected, &self.partial, |_| {
            String::new()
        })
    }
}

fn sequential_speedup(ctx: &Ctx) -> Result<String> {
    let kernel = SEQUENTIAL.kernels[0];
    let module = ctx.kernel_module(kernel)?;
    let sums = TimedSums::new(ctx, PERF_N)?;
    let cfg = launch_config(PERF_N);
    let sequential = kit::timed::student(
        module.gpu(),
        |launch| sums.prepare(launch),
        |_| module.launch_async(kernel, cfg, &sums.args()),
        |launch| sums.check(launch),
    )?;
    // The yardstick reduces launch 0's input into the student's output buffer (poisoned before each launch).
    sums.prepare(0)?;
    let interleaved =
        ctx.time_yardstick(&sums.pattern, "reduce_interleaved_pattern", cfg, &sums.args(), || sums.partial.poison())?;
    kit::perf::require_speedup(kernel, &sequential, &interleaved, "the interleaved pattern", MIN_SPEEDUP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    #[test]
    fn cpu_reference_sums_each_block_and_pads_the_last_with_zeros() {
        assert_eq!(block_sums(&[1, 2, 3]), vec![6]);
        let ones = vec![1; 257];
        assert_eq!(block_sums(&ones), vec![256, 1]);
        let mut v: Vec<i32> = (1..=512).collect();
        v.push(-7);
        // 1 + ... + 256 = 32896; 257 + ... + 512 = 98432.
        assert_eq!(block_sums(&v), vec![32896, 98432, -7]);
    }

    #[test]
    fn no_block_sum_can_overflow_or_look_like_poison() {
        assert!((THREADS as i64) * (MAX_VALUE as i64 - 1) < i32::MAX as i64);
        let big = vec![MAX_VALUE - 1; THREADS as usize];
        assert_eq!(block_sums(&big)[0] as i64, (THREADS as i64) * (MAX_VALUE as i64 - 1));
        for n in SIZES {
            let v = values(&mut rng_for(3, &format!("n={n}")), n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| (1..MAX_VALUE).contains(&x)));
            assert!(block_sums(&v).iter().all(|&s| s > 0), "n={n}: a zero or negative sum could pass by accident");
        }
    }

    #[test]
    fn one_block_per_256_elements() {
        assert_eq!(blocks(1), 1);
        assert_eq!(blocks(255), 1);
        assert_eq!(blocks(256), 1);
        assert_eq!(blocks(257), 2);
        assert_eq!(blocks(1_000_003), 3907);
        assert_eq!(launch_config(PERF_N).grid.0, 1 << 18);
        assert_eq!(launch_config(PERF_N).block.0, THREADS);
        assert!(SIZES.iter().filter(|&&n| n % THREADS as usize != 0).count() >= 5);
    }

    #[test]
    fn a_batch_draws_and_sums_the_inputs_once_per_seed() {
        use kit::{PartBuild, RunEnv};
        let ex = exercise();
        let part = &ex.parts[1];
        let check = part.checks.iter().find(|c| c.name == "n=4099").expect("the check");
        // No GPU: the check stops at loading the kernel, after taking its inputs.
        let env = RunEnv::new(0x5eed08, None, None, Default::default());
        let build = PartBuild::new(String::new());
        let name = ex.test_name(part, check);
        let ctx = Ctx::new(&name, &env, &build);
        assert!((check.run)(&ctx).is_err());
        // The next student of the batch gets them without drawing or summing again.
        let shared = ctx.shared("in+block-sums", || -> (Vec<i32>, Vec<i32>) { panic!("computed again") });
        assert_eq!(shared.0, values(&mut ctx.rng(), 4099));
        assert_eq!(shared.1, block_sums(&shared.0));
    }

    /// A context on the simulator (seed 1) for `file`, its text passed through `edit`.
    fn on_sim(file: &str, edit: impl FnOnce(String) -> String, check: impl FnOnce(&Ctx)) {
        kit::trial::on_sim("ex08::sequential::perf::faster-than-interleaved", file, edit, check)
    }

    /// The timing needs a GPU; its launches and their checks run here, on a
    /// shorter input (a last block not full): the references' partial sums
    /// are the grader's on every launch, another launch's fail, a block that
    /// wrote nothing is named, and a write into the input is caught.
    #[test]
    fn timed_launches_are_checked_in_full() {
        let n = 70_001;
        for (file, kernel) in
            [("reduce_sequential.cu", "reduce_sequential"), ("reduce_interleaved.cu", "reduce_interleaved")]
        {
            on_sim(
                &format!("reference/ex08-reduction/kernels/{file}"),
                |text| text,
                |ctx| {
                    let module = ctx.kernel_module(kernel).unwrap();
                    let sums = TimedSums::new(ctx, n).unwrap();
                    let mut outputs = Vec::new();
                    for launch in [0, 1, 6] {
                        sums.prepare(launch).unwrap();
                        module.launch(kernel, launch_config(n), &sums.args()).unwrap();
                        sums.check(launch).unwrap_or_else(|e| panic!("{kernel}, launch {launch}: {e:#}"));
                        let got = sums.partial.read().unwrap();
                        let values = sums.input.host_values(launch, 0, n);
                        assert!(values.iter().all(|v| (1..MAX_VALUE).contains(v)));
                        assert_eq!(got, block_sums(&values), "{kernel}, launch {launch}");
                        outputs.push(got);
                    }
                    // Launch 0's input with launch 1's partial sums.
                    sums.prepare(0).unwrap();
                    sums.partial.write(&outputs[1]).unwrap();
                    let e = format!("{:#}", sums.check(0).unwrap_err());
                    let first = (0..outputs[0].len()).find(|&b| outputs[0][b] != outputs[1][b]).unwrap();
                    let want = format!(
                        "`partial (n = {n})`[{first}]: expected {}, got {}",
                        outputs[0][first], outputs[1][first]
                    );
                    assert!(e.contains(&want), "{e}");
                    // One block that wrote nothing.
                    sums.prepare(3).unwrap();
                    module.launch(kernel, launch_config(n), &sums.args()).unwrap();
                    sums.partial.write_at(blocks(n) as usize - 1, &[-1]).unwrap();
                    let e = format!("{:#}", sums.check(3).unwrap_err());
                    assert!(
                        e.contains(&format!("[{}]: expected", blocks(n) - 1)) && e.contains("never written"),
                        "{e}"
                    );
                    // A sum written into the input.
                    sums.prepare(2).unwrap();
                    module.launch(kernel, launch_config(n), &sums.args()).unwrap();
                    sums.input.overwrite_one(2, 4_099).unwrap();
                    let e = sums.check(2).unwrap_err();
                    let modified = e.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
                    assert_eq!((modified.buffer.as_str(), modified.index), ("in", 4_099));
                },
            );
        }
    }

    /// The cheat corpus's two kernels written against the old timing (a block
    /// of 65 536 ints repeated, each launch a window 64 ints further on), with
    /// their timed size set to the test's: right on every old window (the last
    /// one repeated, as the timing does), wrong on fresh inputs.
    #[test]
    fn cheats_on_the_old_windows_are_wrong_on_fresh_inputs() {
        const CHEATS: &str = "grader/tests/cheats";
        let n = 256 * 300;
        for (case, wrong_from) in [("ex08-sequential-one-period", 0), ("ex08-sequential-slides-window", 1)] {
            let file = format!("{CHEATS}/{case}/exercises/ex08-reduction/kernels/reduce_sequential.cu");
            let at_test_size = |text: String| {
                assert!(text.contains("#define BIG (1 << 26)"), "{case}");
                text.replace("#define BIG (1 << 26)", &format!("#define BIG {n}"))
            };
            on_sim(&file, at_test_size, |ctx| {
                let module = ctx.kernel_module("reduce_sequential").unwrap();
                let gpu = module.gpu();
                let block = values(&mut rng_for(1, "windows"), 1 << 16);
                let old: Vec<i32> = block.iter().copied().cycle().take(n + 64 * 8).collect();
                let d_old = gpu.upload("in", &old).unwrap();
                let partial = gpu.poisoned::<i32>("partial", blocks(n) as usize).unwrap();
                for launch in [0, 1, 2, 3, 3] {
                    partial.poison().unwrap();
                    let window = Arg::Ptr(d_old.ptr() + 256 * launch as u64);
                    module
                        .launch("reduce_sequential", launch_config(n), &[window, (n as i32).into(), partial.arg()])
                        .unwrap();
                    let expected = block_sums(&old[64 * launch..64 * launch + n]);
                    check::exact("partial", &expected, &partial.read().unwrap())
                        .unwrap_or_else(|e| panic!("{case}, window {launch}: {e:#}"));
                }
                let sums = TimedSums::new(ctx, n).unwrap();
                let mut first_wrong = None;
                for launch in 0..3 {
                    sums.prepare(launch).unwrap();
                    module.launch("reduce_sequential", launch_config(n), &sums.args()).unwrap();
                    if let Err(e) = sums.check(launch) {
                        first_wrong.get_or_insert((launch, format!("{e:#}")));
                    }
                }
                let (launch, e) = first_wrong.unwrap_or_else(|| panic!("{case} is caught"));
                assert!(
                    launch == wrong_from && e.contains(&format!("`partial (n = {n})`[")),
                    "{case}, launch {launch}: {e}"
                );
            });
        }
    }
}
