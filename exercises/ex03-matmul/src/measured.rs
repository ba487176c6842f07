//! ex03's tiling judged by what it does to global memory (kit::measure): the
//! kernel multiplies small fixed matrices on a private simulator and the check
//! counts global loads per multiply-add, the notes' compute-to-global-memory-
//! access ratio turned over. The naive kernel loads 2 floats per multiply-add;
//! 16 x 16 tiles bring that to 2/16. Tiles declared but not read from (the
//! products still reading M or N from global memory) do not lower it.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, Measurement};
use kit::{Ctx, Module};

use crate::{launch_config, matrices, Buffers, Form, Kernel, Shape, TILE};

/// The measured product of `tiled`: 4 x 4 blocks, 4 phases.
pub const MEASURE_SQUARE: Shape = Shape::square(64);
/// The measured product of `rect`: nothing a multiple of 16, 5 phases, the last 6 deep.
pub const MEASURE_RECT: Shape = Shape::new(50, 70, 45);
/// Global loads per multiply-add a tiled kernel stays at or under: the naive
/// kernel needs 2, 16 x 16 tiles 0.125 (a little more with partial tiles).
/// See CALIBRATION.md ("Measured structure").
pub const MAX_LOADS_PER_MAD: f64 = 0.5;
/// Shared passes per request the stand-in allows (1: no bank conflicts).
pub const MAX_SHARED_PASSES: f64 = 2.0;
/// Multiply-adds per thread between two barriers the stand-in asks for at
/// least: 8 with 16-deep tiles (two barriers per phase); 0.5 with 1-deep ones.
pub const MIN_MADS_PER_BARRIER: f64 = 2.0;

pub fn shape(kernel: Kernel) -> Shape {
    if kernel.form == Form::Rect {
        MEASURE_RECT
    } else {
        MEASURE_SQUARE
    }
}

pub fn measure(ctx: &Ctx, kernel: Kernel) -> Result<Measurement> {
    let s = shape(kernel);
    ctx.measure(kernel.name, |module: &Module| {
        let (m, n) = matrices(&mut kit::inputs::rng_for(0, "measure"), s);
        let bufs = Buffers::new(module.gpu(), s, &m, &n)?;
        module.launch(kernel.name, launch_config(s), &kernel.args(s, &bufs))?;
        let r = crate::cpu::product(s, &m, &n);
        let got = bufs.p.read()?;
        kit::measure::require_right_result(
            crate::cpu::verify(s, &r.expected, &r.abs, &got, |i| (i / s.n, i % s.n)).map(|_| ()),
        )
    })
}

/// Thread-level global loads per multiply-add of the product.
pub fn loads_per_mad(m: &Measurement, s: Shape) -> f64 {
    m.thread_global_loads() as f64 / (s.m * s.k * s.n) as f64
}

/// Multiply-adds per thread between two barriers.
pub fn mads_per_barrier(m: &Measurement, s: Shape) -> f64 {
    let blocks = launch_config(s).grid.0 * launch_config(s).grid.1;
    let barriers_per_block = m.stats.barriers as f64 / blocks as f64;
    if barriers_per_block == 0.0 {
        f64::INFINITY
    } else {
        s.k as f64 / barriers_per_block
    }
}

fn figures(m: &Measurement, s: Shape) -> String {
    format!(
        "{:.3} global loads per multiply-add (naive: 2, {TILE} x {TILE} tiles: {:.3}); {:.2} shared passes per \
         request; {:.1} multiply-adds per thread between barriers",
        loads_per_mad(m, s),
        2.0 / TILE as f64,
        m.shared_passes_per_request(),
        mads_per_barrier(m, s)
    )
}

/// The tiles cut global traffic.
pub fn tiled_traffic(m: &Measurement, s: Shape) -> Result<String> {
    let per = loads_per_mad(m, s);
    if per > MAX_LOADS_PER_MAD {
        bail!(
            "{}: {per:.3} global loads per multiply-add (naive: 2; {TILE} x {TILE} tiles: {:.3}; at most \
             {MAX_LOADS_PER_MAD}){}: the products still read M or N from global memory. Load each phase's tiles \
             once (one element of each per thread), then take every product from the shared tiles: \
             sum += Ms[ty][i] * Ns[i][tx]",
            m.kernel,
            2.0 / TILE as f64,
            worst_at(m.worst_global(kit::measure::AccessKind::GlobalLoad))
        );
    }
    Ok(figures(m, s))
}

/// The structure check `shared-tiles`.
pub fn shared_tiles(ctx: &Ctx, kernel: Kernel) -> Result<String> {
    let result = measure(ctx, kernel).and_then(|m| tiled_traffic(&m, shape(kernel)));
    if let Err(e) = &result {
        // The PTX says it better when there is no shared memory at all.
        crate::structure::shared_tiles(&ctx.kernel_ptx(kernel.name)?).map_err(|p| p.context(format!("{e:#}")))?;
    }
    unless_unmeasurable(result)
}

/// Stand-in for `perf::faster-than-naive`: tiled traffic, conflict-free tiles,
/// and enough work between barriers.
pub fn tiled_and_cheap(ctx: &Ctx, kernel: Kernel) -> Result<String> {
    let s = shape(kernel);
    let m = measure(ctx, kernel)?;
    tiled_traffic(&m, s)?;
    let passes = m.shared_passes_per_request();
    if passes > MAX_SHARED_PASSES {
        bail!(
            "{}: shared memory needs {passes:.2} passes per request (ideal 1){}: the threads of a half-warp read \
             one column of a tile, {TILE} floats apart. Store both tiles as [row][column] and read Ms[ty][i] and \
             Ns[i][tx]: tx walks along a row",
            m.kernel,
            worst_at(m.worst_shared())
        );
    }
    let mads = mads_per_barrier(&m, s);
    if mads < MIN_MADS_PER_BARRIER {
        bail!(
            "{}: {mads:.1} multiply-adds per thread between barriers (16-deep tiles: 8): the phases are so thin \
             that the block waits at a barrier for almost every product. Make each phase {TILE} deep along k",
            m.kernel
        );
    }
    Ok(figures(&m, s))
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    const MINE: &str = "exercises/ex03-matmul/calibration";

    #[test]
    fn tiling_is_measured_as_global_loads_per_multiply_add() {
        let ex = crate::exercise();
        for (part, file) in [
            ("tiled", "reference/ex03-matmul/kernels/matmul_tiled.cu"),
            ("tiled", &format!("{MINE}/matmul_tiled_padded_walk.cu")),
            ("rect", "reference/ex03-matmul/kernels/matmul_rect.cu"),
        ] {
            passes(&ex, part, "shared-tiles", Run::Check, file);
            passes(&ex, part, "faster-than-naive", Run::StandIn, file);
        }
        for (part, file) in [
            ("tiled", "reference/slow/ex03-matmul/kernels/matmul_tiled.cu"),
            ("rect", "reference/slow/ex03-matmul/kernels/matmul_rect.cu"),
        ] {
            passes(&ex, part, "shared-tiles", Run::Check, file);
            fails(&ex, part, "faster-than-naive", Run::StandIn, file);
        }
        for file in ["reference/slow/ex03-matmul/extra/matmul_tiled_half.cu", &format!("{MINE}/matmul_tiled_unused.cu")]
        {
            if let Some(msg) = fails(&ex, "tiled", "shared-tiles", Run::Check, file) {
                assert!(msg.contains("global loads per multiply-add"), "{msg}");
            }
            fails(&ex, "tiled", "faster-than-naive", Run::StandIn, file);
        }
    }
}
