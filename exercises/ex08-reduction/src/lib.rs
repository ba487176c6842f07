//! ex08: sum reduction (seed 001, "Parallel Reduction"): every block sums its
//! 256 elements in shared memory, first with interleaved addressing (the
//! divergent `t % (2*stride)` test), then with sequential addressing
//! (`t < stride`), which keeps whole warps busy or idle.
//!
//! Integers, not floats: every block's sum is then exact whatever the order of
//! the additions, so each partial sum is compared exactly, and the lesson (the
//! cost of divergence) is the same.

pub mod measured;

use anyhow::Result;
use kit::timed::Windowed;
use kit::{args, check, Check, Ctx, Exercise, LaunchConfig, Part};
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
const SEQUENTIAL: Variant =
    Variant { part: "sequential", file: "kernels/reduce_sequential.cu", kernels: &["reduce_sequential"] };

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
            kit::measure::skip_unmeasurable(
                measured::measure(ctx, SEQUENTIAL.kernels[0]).and_then(|m| measured::sequential(&m)),
            )
        }));
    }
    part
}

/// `n` values in `1..MAX_VALUE`.
pub fn values(rng: &mut impl Rng, n: usize) -> Vec<i32> {
    kit::inputs::uniform_i32(rng, n, 1, MAX_VALUE)
}

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

/// Timing input: the values do not change the time, so a random block of 64 Ki
/// values is repeated (on the device) rather than drawing 2^26 of them.
fn perf_block(rng: &mut impl Rng) -> Vec<i32> {
    values(rng, 1 << 16)
}

fn sequential_speedup(ctx: &Ctx) -> Result<String> {
    let kernel = SEQUENTIAL.kernels[0];
    let module = ctx.kernel_module(kernel)?;
    let baseline =
        ctx.yardstick("reduce_interleaved_pattern", include_str!("../yardsticks/reduce_interleaved_pattern.cu"))?;
    let gpu = module.gpu();
    // Drawn once per process, repeated into a fresh buffer for every student;
    // each launch reduces a window of it further on (kit::timed).
    let block_and_prefix = ctx.shared("perf-block+prefix", || {
        let block = perf_block(&mut ctx.rng());
        let prefix = kit::timed::prefix_sums(block.iter().map(|&v| v as i128));
        (block, prefix)
    });
    let (block, prefix) = (&block_and_prefix.0, &block_and_prefix.1);
    let d_in = Windowed::repeated(gpu, "in", block, PERF_N)?;
    let partial = gpu.poisoned::<i32>("partial", blocks(PERF_N) as usize)?;
    let cfg = launch_config(PERF_N);
    let a = |launch| [d_in.arg(launch), (PERF_N as i32).into(), partial.arg()];
    // Every block's partial sum of every launch, exact: the sums of a window
    // of a repeated block come from the block's prefix sums.
    let sequential = kit::timed::student(
        gpu,
        |_| partial.poison(),
        |launch| module.launch_async(kernel, cfg, &a(launch)),
        |launch| {
            let start = d_in.at(launch, 0);
            let per_block = THREADS as usize;
            let expected: Vec<i32> = (0..blocks(PERF_N) as usize)
                .map(|j| {
                    let len = per_block.min(PERF_N - j * per_block);
                    kit::timed::periodic_window_sum(prefix, start + j * per_block, len) as i32
                })
                .collect();
            partial.read_with(|got| check::exact(&format!("partial (n = {PERF_N})"), &expected, got))
        },
    )?;
    let interleaved = ctx.time_yardstick(&baseline, "reduce_interleaved_pattern", cfg, &a(0), || partial.poison())?;
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

    #[test]
    fn the_perf_block_is_in_range() {
        let block = perf_block(&mut rng_for(1, "perf"));
        assert_eq!(block.len(), 1 << 16);
        assert!(block.iter().all(|&x| (1..MAX_VALUE).contains(&x)));
    }
}
