//! ex08's two trees told apart by what they do (kit::measure): each kernel sums
//! a small fixed input on a private simulator, and the checks count divergent
//! warp branches per block. Interleaved addressing (`t % (2*stride) == 0`)
//! leaves busy and idle threads side by side in every warp for the first five
//! steps, so most of its 8 warps diverge at every step; sequential addressing
//! (`t < stride`) keeps whole warps busy or idle until stride < 32, so only the
//! last warp's few steps diverge. A warp-shuffle finish is sequential too.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, Measurement};
use kit::{args, Ctx};

use crate::{blocks, launch_config, THREADS};

/// Elements of the measured input: 8 full blocks.
pub const MEASURE_N: usize = 8 * THREADS as usize;
/// Divergent branches per block at or above which a tree is interleaved. The
/// slides' interleaved tree diverges in every warp at strides 1..16 (5 x 8) and
/// in a few at strides 32..128: about 48 per block. See CALIBRATION.md.
pub const MIN_INTERLEAVED_DIVERGENCE: f64 = 24.0;
/// Divergent branches per block at or under which a tree is sequential: the
/// slides' sequential tree diverges only in its last warp (strides 16..1), about
/// 6 per block. See CALIBRATION.md.
pub const MAX_SEQUENTIAL_DIVERGENCE: f64 = 16.0;
/// Shared atomics per element a tree stays at or under: one per warp (warp
/// sums combined with atomicAdd); adding every element with one is 1.0.
pub const MAX_SHARED_ATOMICS_PER_ELEMENT: f64 = 1.0 / 32.0;
/// Shared passes per request at or above which a tree is interleaved with a
/// strided index (thread t works on 2*stride*t: no divergence, but bank
/// conflicts); sequential addressing has 1.
pub const MIN_STRIDED_PASSES: f64 = 1.5;

pub fn measure(ctx: &Ctx, kernel: &str) -> Result<Measurement> {
    ctx.measure(kernel, |module| {
        let gpu = module.gpu();
        let values: Vec<i32> = (0..MEASURE_N as i32).map(|i| i % 1000 + 1).collect();
        let input = gpu.upload("in", &values)?;
        let partial = gpu.poisoned::<i32>("partial", blocks(MEASURE_N) as usize)?;
        module.launch(kernel, launch_config(MEASURE_N), &args![&input, MEASURE_N as i32, &partial])?;
        let expected = crate::block_sums(&values);
        kit::measure::require_right_result(kit::check::exact("partial", &expected, &partial.read()?))
    })
}

/// Divergent warp branches per block.
pub fn divergence(m: &Measurement) -> f64 {
    m.stats.divergent_branches as f64 / blocks(MEASURE_N) as f64
}

fn figures(m: &Measurement) -> String {
    format!(
        "{:.1} divergent warp branches per block of {THREADS} ({} of {} warp branches); {:.1} active lanes and \
         {:.2} passes per shared access",
        divergence(m),
        m.stats.divergent_branches,
        m.stats.branches,
        m.shared_lanes_per_request(),
        m.shared_passes_per_request()
    )
}

/// `interleaved`: the tree must be the interleaved one, divergence and all.
pub fn interleaved(m: &Measurement) -> Result<String> {
    let d = divergence(m);
    if d < MIN_INTERLEAVED_DIVERGENCE && m.shared_passes_per_request() < MIN_STRIDED_PASSES {
        bail!(
            "{}: {d:.1} divergent warp branches per block (the interleaved tree has about 48; at least \
             {MIN_INTERLEAVED_DIVERGENCE} expected), and no bank conflicts of a strided index: this is not interleaved addressing. At step `stride`, the \
             working threads are those with t % (2*stride) == 0, adding partialSum[t + stride] into partialSum[t]; \
             working threads t < stride is the sequential tree of the next part. ({})",
            m.kernel,
            figures(m)
        );
    }
    Ok(figures(m))
}

/// `sequential`: whole warps busy or idle; no interleaved divergence.
pub fn sequential(m: &Measurement) -> Result<String> {
    let d = divergence(m);
    if d > MAX_SEQUENTIAL_DIVERGENCE {
        bail!(
            "{}: {d:.1} divergent warp branches per block (the sequential tree has about 6; at most \
             {MAX_SEQUENTIAL_DIVERGENCE}){}: busy and idle threads still alternate inside the warps, as in the \
             interleaved tree. Let the first `stride` threads work (if (t < stride) partialSum[t] += \
             partialSum[t + stride], stride halving from blockDim.x / 2), so that whole warps are busy or idle",
            m.kernel,
            worst_at(m.worst_branch())
        );
    }
    Ok(figures(m))
}

/// The structure check `shared-tree` of either part: a block reduction
/// (shared memory, barriers: the PTX names them better), then the pattern.
pub fn shared_tree(ctx: &Ctx, kernel: &str, pattern: fn(&Measurement) -> Result<String>) -> Result<String> {
    let k = ctx.kernel_ptx(kernel)?;
    if !k.uses_shared() {
        bail!(
            "{kernel} does not use shared memory: the PTX has no access to a `__shared__` array. The block's \
             partial sums live in `__shared__ int partialSum[256]`, where every thread can read the others' values"
        );
    }
    unless_unmeasurable(measure(ctx, kernel).and_then(|m| {
        let figures = pattern(&m)?;
        tree_not_atomics(&m)?;
        Ok(figures)
    }))
}

/// A tree adds pairs of sums, level by level; adding every element into one
/// shared word with atomicAdd has no levels (and little divergence, so the
/// pattern checks alone let it pass). One shared atomic per warp (warp sums
/// combined in a shared word) is still a tree below it.
pub fn tree_not_atomics(m: &Measurement) -> Result<()> {
    let per_element = m.stats.shared_atomics as f64 / MEASURE_N as f64;
    if per_element > MAX_SHARED_ATOMICS_PER_ELEMENT {
        bail!(
            "{}: {per_element:.2} shared atomics per element (a tree: none; at most one per warp, \
             {MAX_SHARED_ATOMICS_PER_ELEMENT:.3}){}: the elements are added one by one into a shared accumulator, \
             not combined in a tree. Keep one partial sum per thread in `__shared__ int partialSum[256]` and halve \
             the number of working threads at each step, with __syncthreads() between steps",
            m.kernel,
            worst_at(m.rows(|k| k == AccessKind::SharedAtomic).max_by_key(|r| r.thread_accesses))
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    const REF: &str = "reference/ex08-reduction/kernels";
    const SLOW: &str = "reference/slow/ex08-reduction/kernels";
    const MINE: &str = "exercises/ex08-reduction/calibration";

    #[test]
    fn interleaved_and_sequential_are_told_apart_by_their_divergence() {
        let ex = crate::exercise();
        for file in [format!("{REF}/reduce_interleaved.cu"), format!("{MINE}/reduce_interleaved_mask.cu")] {
            passes(&ex, "interleaved", "shared-tree", Run::Check, &file);
        }
        if let Some(msg) =
            fails(&ex, "interleaved", "shared-tree", Run::Check, &format!("{MINE}/reduce_interleaved_is_sequential.cu"))
        {
            assert!(msg.contains("not interleaved addressing"), "{msg}");
        }
        for file in [
            format!("{REF}/reduce_sequential.cu"),
            format!("{MINE}/reduce_sequential_shuffle.cu"),
            format!("{MINE}/reduce_sequential_warps.cu"),
        ] {
            passes(&ex, "sequential", "shared-tree", Run::Check, &file);
            passes(&ex, "sequential", "faster-than-interleaved", Run::StandIn, &file);
        }
        let slow = format!("{SLOW}/reduce_sequential.cu");
        if let Some(msg) = fails(&ex, "sequential", "shared-tree", Run::Check, &slow) {
            assert!(msg.contains("reduce_sequential.cu:"), "names the line: {msg}");
        }
        fails(&ex, "sequential", "faster-than-interleaved", Run::StandIn, &slow);
        // no tree at all: one shared accumulator and an atomicAdd per element
        let atomics =
            "grader/tests/variants/ex08-sequential-shared-atomic-accumulator/exercises/ex08-reduction/kernels/\
                       reduce_sequential.cu";
        if let Some(msg) = fails(&ex, "sequential", "shared-tree", Run::Check, atomics) {
            assert!(msg.contains("1.00 shared atomics per element"), "{msg}");
        }
    }
}
