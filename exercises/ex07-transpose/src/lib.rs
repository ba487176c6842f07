//! ex07: matrix transpose (seed 000, "Matrix Transpose"): naive; coalesced
//! through a shared-memory tile; without bank conflicts thanks to a
//! TILE_DIM + 1 row pitch. The notes' copy kernel is the yardstick.

pub mod cpu;
pub mod measured;

use anyhow::Result;
use kit::measure::skip_unmeasurable;
use kit::perf::{require_share, require_speedup};
use kit::timed::Windowed;
use kit::{args, Check, Ctx, Exercise, Gpu, LaunchConfig, Part, Skip};

use cpu::Encoding;

/// Side of the square tile one block transposes.
pub const TILE_DIM: u32 = 32;
/// Rows of threads per block: a block is TILE_DIM x BLOCK_ROWS = 32 x 8 threads,
/// so each thread moves TILE_DIM / BLOCK_ROWS = 4 elements, BLOCK_ROWS rows apart.
pub const BLOCK_ROWS: u32 = 8;
/// A TILE_DIM x TILE_DIM tile of floats.
pub const TILE_BYTES: usize = (TILE_DIM * TILE_DIM * 4) as usize;
/// A TILE_DIM x (TILE_DIM + 1) tile of floats: the padded tile of `padded`.
pub const PADDED_TILE_BYTES: usize = (TILE_DIM * (TILE_DIM + 1) * 4) as usize;

/// Correctness cases as (width, height): `in` has `height` rows of `width`
/// floats. One element; one tile; partial tiles on both edges; one thin column
/// and one thin row of tiles; the notes' square multiples of 32; rectangles,
/// with and without whole tiles.
pub const SIZES: [(usize, usize); 8] =
    [(1, 1), (32, 32), (33, 31), (5, 997), (997, 5), (1000, 1001), (1024, 1024), (1536, 800)];

/// Smallest side of the square matrix timed by the performance checks: 256 MiB
/// per matrix, as GPU.md measured. Grown for GPUs with a larger L2 (see `perf_side`).
pub const PERF_MIN_SIDE: usize = 8192;
/// `coalesced` must beat the naive transpose (yardsticks/naive_transpose.cu) by
/// this factor. Provisional, from GPU.md (H100: 3.8x); see CALIBRATION.md.
pub const MIN_COALESCED_SPEEDUP: f64 = 2.0;
/// `padded` must reach this share of the copy kernel's bandwidth
/// (yardsticks/copy_tile.cu). Provisional, from GPU.md (H100: 0.94); see CALIBRATION.md.
pub const MIN_PADDED_SHARE_OF_COPY: f64 = 0.80;
/// `padded` must beat the unpadded shared tile (yardsticks/unpadded_tile_transpose.cu)
/// by this factor: what proves the padding. Provisional, from GPU.md (H100: 1.7x);
/// see CALIBRATION.md.
pub const MIN_PADDED_SPEEDUP: f64 = 1.25;

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex07",
        slug: "transpose",
        title: "Matrix transpose: naive, coalesced through shared memory, without bank conflicts",
        dir: "exercises/ex07-transpose",
        parts: vec![
            part("naive", "kernels/transpose_naive.cu", &["transpose_naive"]),
            part("coalesced", "kernels/transpose_coalesced.cu", &["transpose_coalesced"])
                .check(Check::structure("shared-tile", |ctx| measured::shared_tile(ctx, "transpose_coalesced")))
                .check(
                    Check::performance("faster-than-naive", |ctx| {
                        timed_against(ctx, "transpose_coalesced", &NAIVE, Need::Speedup(MIN_COALESCED_SPEEDUP))
                    })
                    // The naive transpose's cost is its 32-sector stores: coalescing is the lesson.
                    .with_stand_in(|ctx| {
                        skip_unmeasurable(
                            measured::measure(ctx, "transpose_coalesced").and_then(|m| measured::coalesced(&m)),
                        )
                    }),
                ),
            part("padded", "kernels/transpose_padded.cu", &["transpose_padded"])
                .check(Check::structure("shared-tile", |ctx| measured::shared_tile(ctx, "transpose_padded")))
                .check(Check::structure("padded-tile", measured::padded_tile))
                .check(
                    Check::performance("share-of-copy", |ctx| {
                        timed_against(ctx, "transpose_padded", &COPY, Need::Share(MIN_PADDED_SHARE_OF_COPY))
                    })
                    // The copy moves whole sectors with no shared memory: coalesced and conflict-free is as close.
                    .with_stand_in(|ctx| skip_unmeasurable(measured::copy_like(ctx))),
                )
                .check(
                    Check::performance("faster-than-unpadded-tile", |ctx| {
                        timed_against(ctx, "transpose_padded", &UNPADDED, Need::Speedup(MIN_PADDED_SPEEDUP))
                    })
                    // The unpadded tile differs only in its 32-way bank conflicts.
                    .with_stand_in(|ctx| skip_unmeasurable(measured::padded_tile_strict(ctx))),
                ),
        ],
    }
}

/// A part with its correctness checks, one per size.
fn part(name: &'static str, file: &'static str, kernels: &'static [&'static str]) -> Part {
    let kernel = kernels[0];
    SIZES.iter().fold(Part::new(name, file, kernels, 10.0), |part, &(w, h)| {
        part.check(Check::correctness(format!("{w}x{h}"), move |ctx| transposes(ctx, kernel, w, h)))
    })
}

/// The host's launch: 32 x 8 threads per block, one block per 32 x 32 tile of `in`.
pub fn launch_config(width: usize, height: usize) -> LaunchConfig {
    let tiles = |n: usize| (n as u32).div_ceil(TILE_DIM);
    LaunchConfig::grid2d((tiles(width), tiles(height)), (TILE_DIM, BLOCK_ROWS))
}

fn transposes(ctx: &Ctx, kernel: &str, width: usize, height: usize) -> Result<String> {
    // The same for every student of a batch: drawn and built once per seed.
    let inputs = ctx.shared("encoding+in", || {
        let enc = Encoding::random(&mut ctx.rng());
        (enc, enc.matrix(width, height))
    });
    let (enc, matrix) = (&inputs.0, &inputs.1);
    let module = ctx.kernel_module(kernel)?;
    let gpu = module.gpu();
    let input = gpu.upload("in", matrix)?;
    let out = gpu.poisoned::<f32>("out", width * height)?;
    module.launch(kernel, launch_config(width, height), &args![&out, &input, width as i32, height as i32])?;
    cpu::compare(enc, width, height, &out.read()?)?;
    Ok(String::new())
}

/// A kernel of the grader's, timed with the same launch and buffers as the student's.
pub struct Yardstick {
    pub kernel: &'static str,
    pub source: &'static str,
    /// How the messages name it.
    pub what: &'static str,
}

pub const COPY: Yardstick =
    Yardstick { kernel: "copy_tile", source: include_str!("../yardsticks/copy_tile.cu"), what: "the tiled copy" };
pub const NAIVE: Yardstick = Yardstick {
    kernel: "naive_transpose",
    source: include_str!("../yardsticks/naive_transpose.cu"),
    what: "the naive transpose",
};
pub const UNPADDED: Yardstick = Yardstick {
    kernel: "unpadded_tile_transpose",
    source: include_str!("../yardsticks/unpadded_tile_transpose.cu"),
    what: "the unpadded 32 x 32 tile",
};

/// What a performance check asks of the student's kernel against a yardstick.
enum Need {
    /// At least this many times faster.
    Speedup(f64),
    /// At least this share of the yardstick's bandwidth.
    Share(f64),
}

/// Side of the timed square matrix: at least PERF_MIN_SIDE, and each matrix at
/// least 4x the L2 cache so that bandwidth, not the cache, is measured.
pub fn perf_side(l2_bytes: u64) -> usize {
    let mut side = PERF_MIN_SIDE;
    while ((side * side * 4) as u64) < 4 * l2_bytes {
        side += 1024;
    }
    side
}

fn timed_against(ctx: &Ctx, kernel: &str, yardstick: &Yardstick, need: Need) -> Result<String> {
    let module = ctx.kernel_module(kernel)?;
    let gpu = module.gpu();
    require_real_gpu(gpu)?;
    let base = ctx.yardstick(yardstick.kernel, yardstick.source)?;
    let side = perf_side(gpu.info().l2_cache_bytes);
    // Values do not change the time of a copy: a block of distinct values
    // repeated on the device (uploading 256 MiB would cost more than the
    // timing), so that the timed output can be checked, each launch reading a
    // window of it further on (kit::timed).
    let block: Vec<f32> = (0..PERF_BLOCK).map(|i| i as f32).collect();
    let input = Windowed::repeated(gpu, "in", &block, side * side)?;
    let out = gpu.poisoned::<f32>("out", side * side)?;
    let cfg = launch_config(side, side);
    let a = |launch| [out.arg(), input.arg(launch), (side as i32).into(), (side as i32).into()];
    let student = kit::timed::student(
        gpu,
        |_| out.poison(),
        |launch| module.launch_async(kernel, cfg, &a(launch)),
        |launch| spot_check_timed(ctx, launch, &out, side, |i| block[input.at(launch, i) % block.len()]),
    )?;
    let theirs = ctx.time_yardstick(&base, yardstick.kernel, cfg, &a(0), || out.poison())?;
    let what = format!("{kernel} on {side} x {side} floats");
    match need {
        Need::Speedup(min) => require_speedup(&what, &student, &theirs, yardstick.what, min),
        Need::Share(min) => {
            let bytes = 2 * side * side * 4;
            require_share(&what, student.gb_per_s(bytes), yardstick.what, theirs.gb_per_s(bytes), min)
        }
    }
}

/// Values of the block the timed input repeats (a prime, so that rows do not line up with it).
const PERF_BLOCK: usize = 65_521;
/// Elements of the timed output checked (the corners, then seeded positions).
const PERF_SPOTS: usize = 64;

/// A timed launch must transpose too: `out[c][r] == in[r][c]` at the corners
/// and at positions drawn for that launch, read one element at a time (the
/// output is 256 MiB). `input(i)` is element `i` of the launch's input.
fn spot_check_timed(
    ctx: &Ctx,
    launch: usize,
    out: &kit::DeviceBuffer<f32>,
    side: usize,
    input: impl Fn(usize) -> f32,
) -> Result<()> {
    use rand::Rng;
    let mut rng = ctx.rng_for(&format!("launch {launch}"));
    let mut at = vec![(0, 0), (0, side - 1), (side - 1, 0), (side - 1, side - 1)];
    while at.len() < PERF_SPOTS {
        at.push((rng.random_range(0..side), rng.random_range(0..side)));
    }
    let got = out.read_elements(at.iter().map(|&(r, c)| c * side + r))?;
    for (&(r, c), got) in at.iter().zip(got) {
        kit::check::exact(&format!("out[{c}][{r}] ({side} x {side})"), &[input(r * side + c)], &[got])?;
    }
    Ok(())
}

/// Skips before allocating 512 MiB where nothing can be timed (the simulator).
fn require_real_gpu(gpu: &Gpu) -> Result<()> {
    if gpu.capabilities().times_kernels {
        return Ok(());
    }
    Err(Skip(format!("timing needs a real GPU; the {} backend cannot time kernels", gpu.info().backend)).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn grid_covers_every_tile_once() {
        for (w, h) in SIZES {
            let cfg = launch_config(w, h);
            assert_eq!(cfg.block, (32, 8, 1));
            let (gx, gy) = (cfg.grid.0 as usize, cfg.grid.1 as usize);
            assert!(gx * 32 >= w && (gx - 1) * 32 < w, "{w}x{h}");
            assert!(gy * 32 >= h && (gy - 1) * 32 < h, "{w}x{h}");
        }
        assert_eq!(launch_config(33, 31).grid, (2, 1, 1));
        assert_eq!(launch_config(1, 1).grid, (1, 1, 1));
        assert_eq!(launch_config(PERF_MIN_SIDE, PERF_MIN_SIDE).grid, (256, 256, 1));
    }

    /// The reference kernels' index arithmetic, on the CPU: with the bounds
    /// tests, every element is read once and every transposed place written once.
    #[test]
    fn threads_with_bounds_tests_touch_each_element_once() {
        assert_eq!(TILE_DIM % BLOCK_ROWS, 0);
        let (tile, rows) = (TILE_DIM as usize, BLOCK_ROWS as usize);
        for (w, h) in [(1, 1), (33, 31), (5, 97), (64, 40)] {
            let cfg = launch_config(w, h);
            let (mut reads, mut writes) = (HashSet::new(), HashSet::new());
            for (bx, by) in (0..cfg.grid.0).flat_map(|x| (0..cfg.grid.1).map(move |y| (x as usize, y as usize))) {
                for (tx, ty) in (0..tile).flat_map(|x| (0..rows).map(move |y| (x, y))) {
                    for j in (0..tile).step_by(rows) {
                        let (x, y) = (bx * tile + tx, by * tile + ty + j);
                        if x < w && y < h {
                            assert!(reads.insert(y * w + x));
                        }
                        let (x, y) = (by * tile + tx, bx * tile + ty + j);
                        if x < h && y < w {
                            assert!(writes.insert(y * h + x));
                        }
                    }
                }
            }
            assert_eq!((reads.len(), writes.len()), (w * h, w * h), "{w}x{h}");
        }
    }

    #[test]
    fn sizes_cover_partial_tiles_and_fit_the_encoding() {
        assert!(SIZES.iter().any(|&(w, h)| w < 32 && h < 32));
        assert!(SIZES.iter().any(|&(w, h)| w % 32 != 0 && h % 32 != 0 && w > 32 && h > 32));
        assert!(SIZES.iter().any(|&(w, h)| w == h && w % 32 == 0 && w >= 1024));
        assert!(SIZES.iter().any(|&(w, h)| w != h && w % 32 == 0 && h % 32 == 0));
        assert!(SIZES.iter().all(|&(w, h)| w * h <= cpu::MAX_ENCODED));
        let names: HashSet<String> = SIZES.iter().map(|(w, h)| format!("{w}x{h}")).collect();
        assert_eq!(names.len(), SIZES.len());
    }

    #[test]
    fn tile_sizes() {
        assert_eq!(TILE_BYTES, 4096);
        assert_eq!(PADDED_TILE_BYTES, 4224);
    }

    #[test]
    fn perf_matrix_outgrows_the_l2() {
        // H100: 50 MiB of L2; 8192^2 floats = 256 MiB >= 4 x 50 MiB.
        assert_eq!(perf_side(50 << 20), 8192);
        for l2 in [0u64, 6 << 20, 50 << 20, 96 << 20, 128 << 20] {
            let side = perf_side(l2);
            assert!(side % TILE_DIM as usize == 0 && (side * side * 4) as u64 >= 4 * l2);
            assert!(side * side < i32::MAX as usize, "indices fit the kernels' int");
        }
    }

    #[test]
    fn parts_and_check_names() {
        let ex = exercise();
        let names: Vec<&str> = ex.parts.iter().map(|p| p.name).collect();
        assert_eq!(names, ["naive", "coalesced", "padded"]);
        for p in &ex.parts {
            let mut seen = HashSet::new();
            assert!(p.checks.iter().all(|c| seen.insert((c.kind, c.name.clone()))), "{}", p.name);
        }
    }
}
