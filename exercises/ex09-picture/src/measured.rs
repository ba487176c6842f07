//! ex09's memory lesson judged by what the kernel does to memory
//! (kit::measure): it scales a small seeded image on a private simulator, and
//! the checks read the 32-byte sectors per warp-level global request.
//!
//! A warp of a 16 x 16 block is two rows of 16 threads. With the column taken
//! from `threadIdx.x` it reads two runs of 16 consecutive floats: 4 sectors
//! per request. With the column taken from `threadIdx.y` (and the row from
//! `threadIdx.x`), the same warp reads 2 floats in each of 16 rows: 16 sectors,
//! most of every sector wasted. Both are correct; only the first is coalesced.
//! The figures are the same on every backend and at every shape drawn.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, BlockSample, Measurement};
use kit::{args, Ctx};
use rand::Rng;

use crate::{cpu, launch_config, BLOCK, KERNEL};

/// The measured images as (n, m), one drawn from the seed per check, so that
/// no kernel can single it out: whole blocks (so that the ideal figures are
/// exact), not square (so that a pitch taken from the wrong side shows), none
/// a correctness size, and over 264 blocks of 16 x 16 (more than two waves of
/// an H200's 132 SMs): a kernel that maps its threads well only where its
/// block is alone on an SM (`%warpid`), as it is in a grid of one wave, shows
/// its other mapping in the later waves' blocks, as in the timed launches.
pub const MEASURE_SHAPES: [(usize, usize); 4] = [(304, 256), (288, 272), (256, 320), (352, 224)];
/// Blocks the simulator runs of a measured image (kit::measure::BlockSample),
/// drawn by the run's secret: of the first wave, and of the later ones.
pub const SAMPLED_BLOCKS: (usize, usize) = (6, 12);
/// Blocks the simulator runs of the timed image ([`timed_shape`]: 8192 x
/// 6400 on an H100, 204 800 blocks), drawn by the run's secret: block 0 (of the
/// first wave, BlockSample::at_timed_size) and three of the later ones. A kernel can tell the measured
/// images (about 300 blocks) from the timed one by its grid or its sizes
/// alone; at the timed size it takes its timed path.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;
/// Sectors per global request a coalesced mapping stays at or under (4 with
/// the column from `threadIdx.x`; 16 with the column from `threadIdx.y`).
/// See CALIBRATION.md.
pub const MAX_SECTORS_PER_REQUEST: f64 = 8.0;

/// The measured shape of this check, drawn from the seed.
pub fn shape(ctx: &Ctx) -> (usize, usize) {
    MEASURE_SHAPES[ctx.rng_for("measured shape").random_range(0..MEASURE_SHAPES.len())]
}

/// Runs the kernel once on the check's measured shape and seeded image, the
/// blocks it runs on the simulator drawn by the run's secret.
pub fn measure(ctx: &Ctx) -> Result<Measurement> {
    ctx.kernel_ptx(KERNEL)?; // explains a missing or misspelled kernel
    let (n, m) = shape(ctx);
    measure_ptx(&ctx.build.ptx, n, m, &mut ctx.rng(), &mut ctx.secret_rng("measured blocks"))
}

/// Runs `PictureKernel` of `ptx` once on an `n` x `m` image (drawn by
/// `inputs`; the blocks that run on the simulator by `blocks`), the sampled
/// blocks' pixels checked.
pub fn measure_ptx(ptx: &str, n: usize, m: usize, inputs: &mut impl Rng, blocks: &mut impl Rng) -> Result<Measurement> {
    let image = cpu::image(inputs, n * m);
    let cfg = launch_config(n, m);
    let (first, later) = SAMPLED_BLOCKS;
    let sample = BlockSample::first_and_later(blocks, cfg.grid.0 as u64 * cfg.grid.1 as u64, first, later);
    let mut sampled = vec![false; n * m];
    for (row, col) in sample.elements(cfg.grid.0, BLOCK as usize, m, n) {
        sampled[row * n + col] = true;
    }
    let expected = cpu::scaled(&image);
    kit::measure::measure_ptx_sampled(ptx, KERNEL, &sample, |module| {
        let gpu = module.gpu();
        let input = gpu.upload("d_Pin", &image)?;
        let out = gpu.poisoned::<f32>("d_Pout", n * m)?;
        module.launch(KERNEL, cfg, &args![&input, &out, n as i32, m as i32])?;
        // Only the sampled blocks' pixels are checked: the others are taken as right.
        let got: Vec<f32> =
            out.read()?.into_iter().enumerate().map(|(i, p)| if sampled[i] { p } else { expected[i] as f32 }).collect();
        kit::measure::require_right_result(cpu::compare(&image, &expected, &got, n, m))
    })
}

/// The timed image on an H100 (kit::exercise::TIMED_L2_BYTES), as (n, m):
/// [`crate::PERF_WIDTH`] columns, [`crate::perf_rows`] rows.
pub fn timed_shape() -> (usize, usize) {
    (crate::PERF_WIDTH, crate::rows_of(kit::exercise::timed_bandwidth_elements()))
}

/// The kernel run once on the simulator on the timed image
/// ([`timed_shape`]), [`TIMED_SAMPLED_BLOCKS`] of its blocks: the image
/// generated where they read it (kit::Gpu::upload_generated), and what they
/// wrote checked, wherever they wrote it.
pub fn measure_at_timed_size(ctx: &Ctx) -> Result<Measurement> {
    let (n, m) = timed_shape();
    let cfg = launch_config(n, m);
    let (first, later) = TIMED_SAMPLED_BLOCKS;
    let blocks = cfg.grid.0 as u64 * cfg.grid.1 as u64;
    let sample = BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), blocks, (first, later));
    let pixels = kit::inputs::UniformF32s::new(&ctx.rng_for("timed-size image"), 0.0, 256.0);
    let pixel = |i: usize| {
        let mut p = [0.0f32];
        pixels.fill(i, &mut p);
        p[0]
    };
    kit::measure::measure_ptx_sampled(&ctx.build.ptx, KERNEL, &sample, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into `d_Pin`.
        let (input, out) = gpu.unwatched(|| {
            let p = pixels.clone();
            let input = gpu.upload_generated("d_Pin", n * m, move |first, out: &mut [f32]| p.fill(first, out));
            let out = gpu.poisoned_generated::<f32>("d_Pout", n * m);
            (input, out)
        });
        let (input, out) = (input?, out?);
        module.launch(KERNEL, cfg, &args![&input, &out, n as i32, m as i32])?;
        let readme = || sample.elements(cfg.grid.0, BLOCK as usize, m, n).into_iter().map(|(r, c)| r * n + c).collect();
        let written = kit::measure::sampled_writes(&out, readme)?;
        let right = kit::check::exact_at("d_Pout", n * m, &written, |i| (cpu::FACTOR * pixel(i) as f64) as f32);
        kit::measure::require_right_result_at_timed_size(right, &format!("{n}x{m}"), sample.blocks().len())
    })
}

/// [`coalesced`] of the check's measured image, then of the timed one.
fn coalesced_here_and_timed(ctx: &Ctx) -> Result<String> {
    let measured = measure(ctx)?;
    let line = coalesced(&measured)?;
    let (w, h) = shape(ctx);
    let (n, m) = timed_shape();
    let grid = launch_config(n, m).grid;
    let note = kit::measure::judge_at_timed_size(
        (&format!("{n}x{m}"), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, grid.0 as u64 * grid.1 as u64),
        &format!("at {w}x{h} (the measured image) {line}"),
        || measure_at_timed_size(ctx),
        coalesced,
    )?;
    Ok(line + &note)
}

fn figures(m: &Measurement) -> String {
    format!(
        "global sectors per request: loads {:.1}, stores {:.1} (ideal 4)",
        m.load_sectors_per_request(),
        m.store_sectors_per_request()
    )
}

/// Loads and stores coalesced: consecutive threads of a warp on consecutive pixels of a row.
pub fn coalesced(m: &Measurement) -> Result<String> {
    for (kind, what, sectors) in [
        (AccessKind::GlobalLoad, "loads", m.load_sectors_per_request()),
        (AccessKind::GlobalStore, "stores", m.store_sectors_per_request()),
    ] {
        if sectors > MAX_SECTORS_PER_REQUEST {
            bail!(
                "{KERNEL}: {what}: {sectors:.1} sectors per request (ideal 4, at most {MAX_SECTORS_PER_REQUEST}){}: \
                 a warp's 32 threads touch {} different rows of the image. The result is right, but most of every \
                 32-byte sector the GPU fetches is wasted. A warp is 32 consecutive threadIdx.x values first: take \
                 the column from x (Col = blockIdx.x * blockDim.x + threadIdx.x) and the row from y, so that \
                 neighbouring threads read neighbouring pixels of one row",
                worst_at(m.worst_global(kind)),
                sectors.round()
            );
        }
    }
    Ok(figures(m))
}

/// The structure check `coalesced`.
pub fn coalesced_check(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(coalesced_here_and_timed(ctx))
}

/// Stand-in for `perf::share-of-linear`: a kernel the simulator cannot run is
/// not graded rather than passed.
pub fn coalesced_stand_in(ctx: &Ctx) -> Result<String> {
    coalesced_here_and_timed(ctx)
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    /// The yardstick is only timed on a GPU; here it must compile, scale every
    /// pixel, and be the ideal the 2D mapping is held to: 4 sectors per request.
    #[test]
    fn the_yardstick_scales_and_is_coalesced() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let source =
            ptx_build::SourceFile::from_text("<grader>/scale_linear.cu", include_str!("../yardsticks/scale_linear.cu"));
        let ptx = compiler.compile(&source, &ptx_build::CompileOptions::default()).unwrap().text;
        let pixels = 128 * 96 + 7;
        let image = crate::cpu::image(&mut kit::inputs::rng_for(0, "yardstick"), pixels);
        let m = kit::measure::measure_ptx(&ptx, "scale_linear", |module| {
            let gpu = module.gpu();
            let input = gpu.upload("d_Pin", &image)?;
            let out = gpu.poisoned::<f32>("d_Pout", pixels)?;
            let cfg = kit::LaunchConfig::linear(pixels.div_ceil(256) as u32, 256);
            module.launch("scale_linear", cfg, &kit::args![&input, &out, pixels as i32])?;
            kit::check::close("d_Pout", &crate::cpu::scaled(&image), &out.read()?, 0.0, 0.0)
        })
        .unwrap();
        assert!(m.load_sectors_per_request() <= 4.1 && m.store_sectors_per_request() <= 4.1, "{}", super::figures(&m));
    }

    const MINE: &str = "exercises/ex09-picture/calibration";

    /// Every shape a seed can draw gives each kernel the same verdict.
    #[test]
    fn every_measured_shape_gives_the_same_verdicts() {
        let Some(compiler) = kit::trial::compiler() else { return };
        for (file, coalesced) in [
            ("reference/ex09-picture/kernels/picture.cu".to_string(), true),
            (format!("{MINE}/picture_flat_index.cu"), true),
            (format!("{MINE}/picture_grid_stride.cu"), true),
            ("reference/slow/ex09-picture/kernels/picture.cu".to_string(), false),
            (format!("{MINE}/picture_linear_block.cu"), false),
            (ALONE.to_string(), false),
        ] {
            let ptx = kit::trial::ptx_of(&compiler, &file, &Default::default());
            for (n, m) in super::MEASURE_SHAPES {
                let (mut inputs, mut blocks) = (kit::inputs::rng_for(7, "shapes"), kit::inputs::rng_for(7, "blocks"));
                let measured = super::measure_ptx(&ptx, n, m, &mut inputs, &mut blocks).unwrap();
                eprintln!("{file} at {n} x {m}: {}", super::figures(&measured));
                assert_eq!(super::coalesced(&measured).is_ok(), coalesced, "{file} at {n} x {m}");
            }
        }
    }

    /// Mapped well only where its block is alone on its SM: a grid of one wave
    /// (the measured images until 2026-12-05) shows the good mapping only.
    const ALONE: &str =
        "grader/tests/cheats/ex09-picture-coalesced-only-when-alone-on-an-sm/exercises/ex09-picture/kernels/picture.cu";

    #[test]
    fn a_grid_of_one_wave_hides_a_mapping_that_changes_where_blocks_share_an_sm() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let ptx = kit::trial::ptx_of(&compiler, ALONE, &Default::default());
        let measured = super::measure_ptx(&ptx, 112, 80, &mut rand::rng(), &mut rand::rng()).unwrap();
        assert!(super::coalesced(&measured).is_ok(), "{}", super::figures(&measured));
        for (n, m) in super::MEASURE_SHAPES {
            let (gx, gy, _) = crate::launch_config(n, m).grid;
            assert!(gx * gy > 2 * 132, "{n} x {m}: {} blocks", gx * gy);
        }
    }

    #[test]
    fn no_measured_shape_is_square_a_tested_size_or_the_one_measured_before() {
        for (n, m) in super::MEASURE_SHAPES {
            assert!(n % 16 == 0 && m % 16 == 0 && n != m && (n, m) != (128, 96), "{n}x{m}");
            assert!(!crate::SIZES.contains(&(n, m)), "{n}x{m}");
        }
    }

    #[test]
    fn coalescing_is_measured_not_spelled() {
        let ex = crate::exercise();
        for file in [
            "reference/ex09-picture/kernels/picture.cu".to_string(),
            format!("{MINE}/picture_flat_index.cu"),
            format!("{MINE}/picture_grid_stride.cu"),
        ] {
            passes(&ex, "picture", "coalesced", Run::Check, &file);
            passes(&ex, "picture", "share-of-linear", Run::StandIn, &file);
        }
        for file in
            ["reference/slow/ex09-picture/kernels/picture.cu".to_string(), format!("{MINE}/picture_linear_block.cu")]
        {
            if let Some(msg) = fails(&ex, "picture", "coalesced", Run::Check, &file) {
                assert!(msg.contains("loads: 16.0 sectors per request (ideal 4"), "{file}: {msg}");
                assert!(msg.contains("picture.cu:") || msg.contains("linear_block.cu:"), "names the line: {msg}");
            }
            fails(&ex, "picture", "share-of-linear", Run::StandIn, &file);
        }
        // Coalesced only on grids of at most 65536 blocks: every measured image, not the timed one.
        let small =
            "grader/tests/cheats/ex09-picture-coalesced-only-on-small-grids/exercises/ex09-picture/kernels/picture.cu";
        for what in [Run::Check, Run::StandIn] {
            let check = if what == Run::Check { "coalesced" } else { "share-of-linear" };
            if let Some(msg) = fails(&ex, "picture", check, what, small) {
                assert!(msg.starts_with("at 8192x6400 (the timed size: 4 of its 204800 blocks"), "{msg}");
                assert!(msg.contains("(the measured image) global sectors per request: loads 4.0"), "{msg}");
                assert!(msg.contains("loads: 16.0 sectors per request"), "{msg}");
            }
        }
    }
}
