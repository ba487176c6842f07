//! ex07's techniques judged by what they do to memory (kit::measure): the
//! kernel transposes a small seeded matrix on a private simulator, and the checks
//! read its global sectors per request (coalescing) and shared passes per
//! request (bank conflicts). A swizzled tile is as conflict-free as a padded one;
//! a padded tile indexed with a pitch of 32 is not.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, BlockSample, Measurement};
use kit::{args, Ctx};
use rand::Rng;

use crate::{launch_config, TILE_DIM};

/// The measured inputs as (width, height): `in` has `height` rows of
/// `width` floats; one drawn from the seed per check, so that no kernel can
/// single it out. Whole tiles (so that ideal figures are exact), not square
/// (so that a stride taken from the wrong side shows), none a correctness size.
pub const MEASURE_SHAPES: [(usize, usize); 4] = [(64, 96), (128, 64), (96, 128), (128, 96)];
/// Sectors per global request a coalesced kernel stays at or under. A warp
/// moving 32 consecutive floats touches 4; a column walk touches 32. Calibrated
/// in CALIBRATION.md ("Measured structure").
pub const MAX_SECTORS_PER_REQUEST: f64 = 8.0;
/// Shared-memory passes per request a conflict-free tile stays at or under:
/// 1 without conflicts; the unpadded tile's column reads take 32. See CALIBRATION.md.
pub const MAX_SHARED_PASSES: f64 = 2.0;

/// The measured shape of this check, drawn from the seed.
pub fn shape(ctx: &Ctx) -> (usize, usize) {
    MEASURE_SHAPES[ctx.rng_for("measured shape").random_range(0..MEASURE_SHAPES.len())]
}

/// A measurement and the (width, height) it was made on.
pub struct Measured {
    pub m: Measurement,
    pub width: usize,
    pub height: usize,
}

/// Runs `kernel` once on the check's measured shape and seeded input.
pub fn measure(ctx: &Ctx, kernel: &str) -> Result<Measured> {
    ctx.kernel_ptx(kernel)?; // explains a missing or misspelled kernel
    let (width, height) = shape(ctx);
    let m = measure_ptx(&ctx.build.ptx, kernel, width, height, &mut ctx.rng())?;
    Ok(Measured { m, width, height })
}

/// Runs `kernel` of `ptx` once on a `width` x `height` input, its output checked.
pub fn measure_ptx(ptx: &str, kernel: &str, w: usize, h: usize, rng: &mut impl Rng) -> Result<Measurement> {
    let enc = crate::cpu::Encoding::random(rng);
    kit::measure::measure_ptx(ptx, kernel, |module| {
        let gpu = module.gpu();
        let input = gpu.upload("in", &enc.matrix(w, h))?;
        let out = gpu.poisoned::<f32>("out", w * h)?;
        module.launch(kernel, launch_config(w, h), &args![&out, &input, w as i32, h as i32])?;
        kit::measure::require_right_result(crate::cpu::compare(&enc, w, h, &out.read()?))
    })
}

/// Blocks the simulator runs of the transpose at the timed size
/// ([`crate::PERF_MIN_SIDE`] a side, 65536 blocks), drawn by the run's
/// secret: block 0 (of the first wave, kit::measure::BlockSample::at_timed_size) and three of the later ones. A kernel can
/// tell the measured shapes (a few blocks) from the timed one by its grid or
/// its sizes alone; at the timed size it takes its timed path.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;

/// `kernel` run once on the simulator at the side an H100 and an H200 time it
/// at ([`crate::perf_side`] of their L2: [`crate::PERF_MIN_SIDE`]),
/// [`TIMED_SAMPLED_BLOCKS`] of its blocks; every element of `in` computed
/// where it is read (kit::Gpu::upload_generated), and what the sampled blocks
/// wrote checked, wherever they wrote it.
pub fn measure_at_timed_size(ctx: &Ctx, kernel: &str) -> Result<Measured> {
    let (w, h) = (crate::PERF_MIN_SIDE, crate::PERF_MIN_SIDE);
    let enc = crate::cpu::Encoding::random(&mut ctx.rng_for("timed-size encoding"));
    let cfg = launch_config(w, h);
    let (first, later) = TIMED_SAMPLED_BLOCKS;
    let blocks = cfg.grid.0 as u64 * cfg.grid.1 as u64;
    let sample = BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), blocks, (first, later));
    let m = kit::measure::measure_ptx_sampled(&ctx.build.ptx, kernel, &sample, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into `in`.
        let (input, out) = gpu.unwatched(|| {
            let input = gpu.upload_generated("in", w * h, move |first, out: &mut [f32]| {
                for (k, o) in out.iter_mut().enumerate() {
                    *o = enc.value(first + k);
                }
            });
            let out = gpu.poisoned_generated::<f32>("out", w * h);
            (input, out)
        });
        let (input, out) = (input?, out?);
        module.launch(kernel, cfg, &args![&out, &input, w as i32, h as i32])?;
        // The README's elements of the sampled blocks: the transposes of their tiles of `in`.
        let readme = || {
            let tiles = sample.elements(cfg.grid.0, TILE_DIM as usize, h, w);
            tiles.into_iter().map(|(row, col)| col * h + row).collect()
        };
        let right = crate::cpu::compare_elements(&enc, w, h, &kit::measure::sampled_writes(&out, readme)?);
        kit::measure::require_right_result_at_timed_size(right, &format!("{w}x{h}"), sample.blocks().len())
    })?;
    Ok(Measured { m, width: w, height: h })
}

/// `judge` of the measurement at the timed size too, where a kernel that
/// tells the measured shapes from the timed one by its grid or sizes shows
/// its other path.
fn at_timed_size(
    ctx: &Ctx,
    kernel: &str,
    measured: &Measured,
    judge: impl Fn(&Measured) -> Result<String>,
) -> Result<String> {
    let side = crate::PERF_MIN_SIDE;
    let grid = launch_config(side, side).grid;
    kit::measure::judge_at_timed_size(
        (&format!("{side}x{side}"), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, grid.0 as u64 * grid.1 as u64),
        &format!("at {}x{} (the measured shape) {}", measured.width, measured.height, figures(&measured.m)),
        || measure_at_timed_size(ctx, kernel),
        judge,
    )
}

/// Shapes with partial tiles on both sides, for [`every_thread_at_barrier`]:
/// some threads of the edge blocks have no element to read or write.
pub const EDGE_SHAPES: [(usize, usize); 2] = [(48, 80), (80, 48)];

/// Every thread of a block reaches the `__syncthreads()` between filling the
/// tile and reading it: the kernel runs once on a matrix with partial tiles
/// (drawn from [`EDGE_SHAPES`]), where a kernel whose threads outside the
/// matrix return before the barrier is caught, its `return` and barrier named.
pub fn every_thread_at_barrier(ctx: &Ctx, kernel: &str) -> Result<()> {
    let mut rng = ctx.rng_for("barrier shape");
    let (w, h) = EDGE_SHAPES[rng.random_range(0..EDGE_SHAPES.len())];
    let m = measure_ptx(&ctx.build.ptx, kernel, w, h, &mut rng)?;
    kit::measure::require_every_thread_at_barriers(&m)
}

/// Figures for a report line.
pub fn figures(m: &Measurement) -> String {
    format!(
        "global sectors per request: loads {:.1}, stores {:.1} (ideal 4); shared passes per request {:.2} (ideal 1)",
        m.load_sectors_per_request(),
        m.store_sectors_per_request(),
        m.shared_passes_per_request()
    )
}

/// Loads and stores coalesced: whole warps read and write along rows.
pub fn coalesced(measured: &Measured) -> Result<String> {
    let m = &measured.m;
    let loads = m.load_sectors_per_request();
    if loads > MAX_SECTORS_PER_REQUEST {
        bail!(
            "{}: loads: {loads:.1} sectors per request (ideal 4){}: consecutive threads read addresses {} bytes \
             apart. Read `in` with threadIdx.x walking along a row: in[(y + j) * width + x] with x from threadIdx.x",
            m.kernel,
            worst_at(m.worst_global(AccessKind::GlobalLoad)),
            measured.width * 4
        );
    }
    let stores = m.store_sectors_per_request();
    if stores > MAX_SECTORS_PER_REQUEST {
        bail!(
            "{}: stores: {stores:.1} sectors per request (ideal 4){}: consecutive threads write addresses {} bytes \
             apart (a column of `out`). Write through the shared tile so that threadIdx.x walks along a row of `out`: \
             swap the block indices, not the thread indices, and read the tile transposed",
            m.kernel,
            worst_at(m.worst_global(AccessKind::GlobalStore)),
            measured.height * 4
        );
    }
    Ok(figures(m))
}

/// Shared accesses free of bank conflicts (padding, a swizzle, or anything else that works).
pub fn conflict_free(m: &Measurement) -> Result<String> {
    if m.shared_requests() == 0 {
        bail!(
            "{} does not access shared memory: the transpose happens in a shared tile, read in columns, and \
             that read is what the padding makes conflict-free",
            m.kernel
        );
    }
    let passes = m.shared_passes_per_request();
    if passes > MAX_SHARED_PASSES {
        bail!(
            "{}: shared memory needs {passes:.2} passes per request (ideal 1){}: the {TILE_DIM} elements of a \
             tile column sit in one bank, so a warp reading a column waits its turn {TILE_DIM} times. Give each \
             row {} floats (`__shared__ float tile[{TILE_DIM}][{TILE_DIM} + 1]`) and index it as tile[row][column]: \
             a flat pointer with a row pitch of {TILE_DIM} throws the padding away",
            m.kernel,
            worst_at(m.worst_shared()),
            TILE_DIM + 1
        );
    }
    Ok(figures(m))
}

/// The structure check `coalesced-reads-and-writes`: global memory read and written in rows.
/// When it fails and the PTX shows no shared memory at all, say that first.
pub fn coalesced_reads_and_writes(ctx: &Ctx, kernel: &str) -> Result<String> {
    let result = measure(ctx, kernel).and_then(|m| {
        let line = coalesced(&m)?;
        let note = at_timed_size(ctx, kernel, &m, coalesced)?;
        every_thread_at_barrier(ctx, kernel)?;
        Ok(line + &note)
    });
    if let (Err(e), false) = (&result, ctx.kernel_ptx(kernel)?.uses_shared()) {
        bail!(
            "{kernel} does not use shared memory. Stage the block's {TILE_DIM} x {TILE_DIM} tile in a `__shared__` \
             array: the transposing happens there, so that global memory is read and written in rows ({})",
            e
        );
    }
    unless_unmeasurable(result)
}

/// The structure check `padded-tile`: no bank conflicts in the tile.
pub fn padded_tile(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(padded_tile_strict(ctx))
}

/// Stand-in for `padded::perf::faster-than-unpadded-tile`: [`padded_tile`], but
/// a kernel the simulator cannot run is not graded rather than passed.
pub fn padded_tile_strict(ctx: &Ctx) -> Result<String> {
    let m = measure(ctx, "transpose_padded")?;
    let line = conflict_free(&m.m)?;
    let note = at_timed_size(ctx, "transpose_padded", &m, |t| conflict_free(&t.m))?;
    Ok(line + &note)
}

/// Stand-in for `padded::perf::share-of-copy`: coalesced and conflict-free, as the copy is.
pub fn copy_like(ctx: &Ctx) -> Result<String> {
    let m = measure(ctx, "transpose_padded")?;
    coalesced(&m)?;
    let line = conflict_free(&m.m)?;
    let note = at_timed_size(ctx, "transpose_padded", &m, |t| coalesced(t).and_then(|_| conflict_free(&t.m)))?;
    Ok(line + &note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::trial::{fails, passes, Run};

    const REF: &str = "reference/ex07-transpose/kernels";
    const SLOW: &str = "reference/slow/ex07-transpose/kernels";
    const PLANTED: &str = "grader/tests/planted/ex07-transpose/kernels";
    const MINE: &str = "exercises/ex07-transpose/calibration";
    const CHEAT: &str = "grader/tests/cheats/ex07-coalesced-only-where-measured/exercises/ex07-transpose/kernels";

    /// At the timed size (4 blocks of 65536 simulated, `in` generated where
    /// read) the references and the slow kernels get their measured shapes'
    /// verdicts, and the cheat that tiles only on small grids, which passes
    /// at every measured shape, fails.
    #[test]
    fn the_timed_size_gives_the_measured_shapes_verdicts_but_to_a_small_grid_trick() {
        let small = "grader/tests/cheats/ex07-coalesced-tile-only-on-small-grids/exercises/ex07-transpose/kernels";
        let cases = [
            (format!("{REF}/transpose_coalesced.cu"), "transpose_coalesced", true, true),
            (format!("{REF}/transpose_padded.cu"), "transpose_padded", true, true),
            (format!("{SLOW}/transpose_coalesced.cu"), "transpose_coalesced", false, false),
            (format!("{SLOW}/transpose_padded.cu"), "transpose_padded", true, false),
            (format!("{small}/transpose_coalesced.cu"), "transpose_coalesced", false, false),
        ];
        for (file, kernel, rows, banks) in cases {
            kit::trial::with_measured_ctx(&file, 7, "ex07::coalesced::structure::coalesced-reads-and-writes", |ctx| {
                let t = measure_at_timed_size(ctx, kernel).unwrap();
                eprintln!("{file} at the timed size: {}", figures(&t.m));
                assert_eq!(t.m.blocks(), 4, "{file}");
                assert_eq!(coalesced(&t).is_ok(), rows, "{file}: {}", figures(&t.m));
                if kernel == "transpose_padded" {
                    assert_eq!(conflict_free(&t.m).is_ok(), banks, "{file}: {}", figures(&t.m));
                }
                if file.starts_with(small) {
                    assert!(coalesced(&measure(ctx, kernel).unwrap()).is_ok(), "the trick passes where measured");
                }
            });
        }
    }

    /// Every shape a seed can draw gives each kernel the same verdicts:
    /// (coalesced, conflict-free where `padded` asks). The cheat that is coalesced only at the
    /// shape measured before shapes were drawn fails at every one of them.
    #[test]
    fn every_measured_shape_gives_the_same_verdicts() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let compile = |file: &str| kit::trial::ptx_of(&compiler, file, &Default::default());
        let cases = [
            (format!("{REF}/transpose_coalesced.cu"), "transpose_coalesced", true, false),
            (format!("{MINE}/transpose_coalesced_restrict.cu"), "transpose_coalesced", true, false),
            (format!("{REF}/transpose_padded.cu"), "transpose_padded", true, true),
            (format!("{MINE}/transpose_padded_swizzle.cu"), "transpose_padded", true, true),
            (format!("{SLOW}/transpose_coalesced.cu"), "transpose_coalesced", false, false),
            (format!("{PLANTED}/transpose_coalesced.cu"), "transpose_coalesced", false, false),
            (format!("{MINE}/transpose_coalesced_unused_tile.cu"), "transpose_coalesced", false, false),
            (format!("{SLOW}/transpose_padded.cu"), "transpose_padded", true, false),
            (format!("{PLANTED}/transpose_padded.cu"), "transpose_padded", true, false),
            (format!("{CHEAT}/transpose_coalesced.cu"), "transpose_coalesced", false, false),
        ];
        for (file, kernel, rows, banks) in cases {
            let ptx = compile(&file);
            for (width, height) in MEASURE_SHAPES {
                let m = measure_ptx(&ptx, kernel, width, height, &mut kit::inputs::rng_for(7, "shapes")).unwrap();
                eprintln!("{file} at {width} x {height}: {}", figures(&m));
                let measured = Measured { m, width, height };
                assert_eq!(coalesced(&measured).is_ok(), rows, "{file} at {width} x {height}");
                // Bank conflicts are graded in `padded` only.
                if kernel == "transpose_padded" {
                    assert_eq!(conflict_free(&measured.m).is_ok(), banks, "{file} at {width} x {height}");
                }
            }
        }
        let m = measure_ptx(
            &compile(&format!("{CHEAT}/transpose_coalesced.cu")),
            "transpose_coalesced",
            96,
            64,
            &mut rand::rng(),
        )
        .unwrap();
        assert!(coalesced(&Measured { m, width: 96, height: 64 }).is_ok(), "the cheat's own shape");
    }

    #[test]
    fn no_measured_shape_is_square_a_tested_size_or_the_one_measured_before() {
        for (w, h) in MEASURE_SHAPES {
            let t = TILE_DIM as usize;
            assert!(w % t == 0 && h % t == 0 && w != h && (w, h) != (96, 64), "{w}x{h}");
            assert!(!crate::SIZES.contains(&(w, h)), "{w}x{h}");
        }
    }

    fn ex() -> kit::Exercise {
        crate::exercise()
    }

    #[test]
    fn coalesced_is_measured_not_spelled() {
        let ex = ex();
        for file in [format!("{REF}/transpose_coalesced.cu"), format!("{MINE}/transpose_coalesced_restrict.cu")] {
            passes(&ex, "coalesced", "coalesced-reads-and-writes", Run::Check, &file);
            passes(&ex, "coalesced", "faster-than-naive", Run::StandIn, &file);
        }
        for file in [
            format!("{SLOW}/transpose_coalesced.cu"),
            format!("{PLANTED}/transpose_coalesced.cu"),
            format!("{MINE}/transpose_coalesced_unused_tile.cu"),
        ] {
            if let Some(msg) = fails(&ex, "coalesced", "coalesced-reads-and-writes", Run::Check, &file) {
                assert!(msg.contains("stores: 32.0 sectors per request (ideal 4)"), "{file}: {msg}");
                assert!(msg.contains("transpose_coalesced.cu:") || msg.contains("unused_tile.cu:"), "{msg}");
            }
            fails(&ex, "coalesced", "faster-than-naive", Run::StandIn, &file);
        }
        let cheat = format!("{CHEAT}/transpose_coalesced.cu");
        if let Some(msg) = fails(&ex, "coalesced", "coalesced-reads-and-writes", Run::Check, &cheat) {
            assert!(msg.contains("stores: 32.0 sectors per request (ideal 4)"), "{msg}");
        }
        fails(&ex, "coalesced", "faster-than-naive", Run::StandIn, &cheat);
    }

    /// Threads outside the matrix that return before the barrier (their loads done, so the
    /// numbers are right) fail `coalesced-reads-and-writes`, naming the return and the barrier; a kernel that
    /// tells the simulator by `%nsmid` takes its GPU path there, since the simulator shows 132 SMs.
    #[test]
    fn every_thread_reaches_the_barrier_and_the_simulator_looks_like_a_gpu() {
        let ex = ex();
        let early = "grader/tests/variants/ex07-coalesced-returns-before-barrier/exercises/ex07-transpose/kernels/\
                     transpose_coalesced.cu";
        if let Some(msg) = fails(&ex, "coalesced", "coalesced-reads-and-writes", Run::Check, early) {
            for says in
                ["return at line", "before the __syncthreads() at line", "every thread of the block must reach it"]
            {
                assert!(msg.contains(says), "{says:?} in {msg}");
            }
            assert!(msg.contains("transpose_coalesced.cu:2"), "the source lines: {msg}");
        }
        passes(&ex, "coalesced", "faster-than-naive", Run::StandIn, early);
        let told = "grader/tests/cheats/ex07-coalesced-naive-unless-simulated/exercises/ex07-transpose/kernels/\
                    transpose_coalesced.cu";
        if let Some(msg) = fails(&ex, "coalesced", "coalesced-reads-and-writes", Run::Check, told) {
            assert!(msg.contains("stores: 32.0 sectors per request (ideal 4)"), "{msg}");
        }
        fails(&ex, "coalesced", "faster-than-naive", Run::StandIn, told);
    }

    #[test]
    fn padding_is_measured_not_spelled() {
        let ex = ex();
        for file in [format!("{REF}/transpose_padded.cu"), format!("{MINE}/transpose_padded_swizzle.cu")] {
            for check in ["coalesced-reads-and-writes", "padded-tile"] {
                passes(&ex, "padded", check, Run::Check, &file);
            }
            for perf in ["share-of-copy", "faster-than-unpadded-tile"] {
                passes(&ex, "padded", perf, Run::StandIn, &file);
            }
        }
        for file in [format!("{SLOW}/transpose_padded.cu"), format!("{PLANTED}/transpose_padded.cu")] {
            passes(&ex, "padded", "coalesced-reads-and-writes", Run::Check, &file);
            if let Some(msg) = fails(&ex, "padded", "padded-tile", Run::Check, &file) {
                assert!(msg.contains("passes per request (ideal 1)"), "{msg}");
            }
            for perf in ["share-of-copy", "faster-than-unpadded-tile"] {
                fails(&ex, "padded", perf, Run::StandIn, &file);
            }
        }
    }
}
