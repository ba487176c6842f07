//! ex07: matrix transpose (seed 000, "Matrix Transpose"): naive; coalesced
//! through a shared-memory tile; without bank conflicts thanks to a
//! TILE_DIM + 1 row pitch. The notes' copy kernel is the yardstick.

pub mod cpu;
pub mod measured;

use anyhow::Result;
use kit::measure::skip_unmeasurable;
use kit::perf::{require_share, require_speedup, Timing};
use kit::timed::{same_as_expected, Fresh};
use kit::{args, Arg, Check, Ctx, DeviceBuffer, Exercise, Gpu, LaunchConfig, Part, Skip};

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
                .check(Check::structure("coalesced-reads-and-writes", |ctx| {
                    measured::coalesced_reads_and_writes(ctx, "transpose_coalesced")
                }))
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
                .check(Check::structure("coalesced-reads-and-writes", |ctx| {
                    measured::coalesced_reads_and_writes(ctx, "transpose_padded")
                }))
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
    // With their rows: an index out of bounds is named by row and column.
    let input = gpu.upload("in", matrix)?.with_2d_shape(width, height)?;
    let out = gpu.poisoned::<f32>("out", width * height)?.with_2d_shape(height, width)?;
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
    let t = TimedTranspose::new(ctx, side, side)?;
    let cfg = launch_config(side, side);
    let student = kit::timed::student(
        gpu,
        |launch| t.prepare(launch),
        |_| module.launch_async(kernel, cfg, &t.args()),
        |launch| t.check(launch),
    )?;
    t.input.fill(0)?;
    let theirs = time_placed(ctx, &base, yardstick.kernel, cfg, &t)?;
    let what = format!("{kernel} on {side} x {side} floats");
    match need {
        Need::Speedup(min) => require_speedup(&what, &student, &theirs, yardstick.what, min),
        Need::Share(min) => {
            let bytes = 2 * side * side * 4;
            require_share(&what, student.gb_per_s(bytes), yardstick.what, theirs.gb_per_s(bytes), min)
        }
    }
}

/// Outputs a yardstick is timed into, its samples pooled: the naive
/// transpose's strided writes take longer or shorter with where its output
/// lies (on an H200, 2026-12-02, 1.026-1.082 ms over 8 allocations and 12
/// offsets in one process, the coalesced reference 0.329-0.333 ms:
/// scripts/gpu-46-transpose.cu), which spread the reference's
/// faster-than-naive over 3.13-3.31 across a class of 80 whose workers each
/// had their own allocations.
const YARDSTICK_OUTPUTS: usize = 4;

/// `yardstick` timed into [`YARDSTICK_OUTPUTS`] outputs: the student's and
/// the check's own and two more, allocated here.
fn time_placed(ctx: &Ctx, base: &kit::Module, kernel: &str, cfg: LaunchConfig, t: &TimedTranspose) -> Result<Timing> {
    let gpu = ctx.gpu()?;
    let more = (2..YARDSTICK_OUTPUTS)
        .map(|k| gpu.poisoned::<f32>(&format!("out (the yardstick's, placement {k})"), t.width * t.height))
        .collect::<Result<Vec<_>>>()?;
    let outs: Vec<&DeviceBuffer<f32>> = [&t.out, &t.expected].into_iter().chain(&more).collect();
    let placements: Vec<Vec<Arg>> = outs.iter().map(|out| t.args_into(out).to_vec()).collect();
    ctx.time_yardstick_placed(base, kernel, cfg, &placements, |k| outs[k].poison())
}

/// A timed transpose: `in` (`height` rows of `width`) drawn afresh for every
/// launch on the device under the run's secret key (kit::timed::Fresh), and
/// the whole of `out` compared, on the device, with what the grader's naive
/// transpose makes of the same `in`. Values do not change the time of a
/// transpose, and any value moves bit for bit.
pub struct TimedTranspose {
    width: usize,
    height: usize,
    pub input: Fresh<f32>,
    /// Poisoned before every launch.
    pub out: DeviceBuffer<f32>,
    expected: DeviceBuffer<f32>,
    naive: std::sync::Arc<kit::Module>,
}

impl TimedTranspose {
    pub fn new(ctx: &Ctx, width: usize, height: usize) -> Result<Self> {
        let gpu = ctx.gpu()?;
        Ok(Self {
            width,
            height,
            input: Fresh::uniform(ctx, "in", width * height, -1.0, 1.0)?,
            out: gpu.poisoned("out", width * height)?,
            expected: gpu.poisoned("out (the grader's naive transpose)", width * height)?,
            naive: ctx.yardstick(NAIVE.kernel, NAIVE.source)?,
        })
    }

    /// `(out, in, width, height)`, for the student's kernel and the yardsticks alike.
    pub fn args(&self) -> [Arg; 4] {
        self.args_into(&self.out)
    }

    fn args_into(&self, out: &DeviceBuffer<f32>) -> [Arg; 4] {
        [out.arg(), self.input.arg(), (self.width as i32).into(), (self.height as i32).into()]
    }

    /// Launch `launch`'s `in`, and `out` poisoned.
    pub fn prepare(&self, launch: usize) -> Result<()> {
        self.input.fill(launch)?;
        self.out.poison()
    }

    /// `in` as launch `launch` got it, and every element of `out` its transpose.
    pub fn check(&self, launch: usize) -> Result<()> {
        self.input.intact(launch)?;
        self.expected.poison()?;
        self.naive.launch(NAIVE.kernel, launch_config(self.width, self.height), &self.args_into(&self.expected))?;
        // `out` has `width` rows of `height`: out[c][r] = in[r][c].
        let h = self.height;
        same_as_expected("out", &self.expected, &self.out, |i| {
            format!(" (row {}, column {} of `out`: in[{}][{}])", i / h, i % h, i % h, i / h)
        })
    }
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

    /// The timing needs a GPU; its launches and their checks run here: the
    /// references and the grader's naive transpose pass on several launches;
    /// another launch's output, an output written from the index alone (what
    /// a kernel could do when the timed input was the numbers 0..65520
    /// repeated), one element wrong or never written, and a write into `in`
    /// are each caught, the element named.
    #[test]
    fn timed_launches_are_checked_in_full() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let (w, h) = (96, 40);
        let naive = (NAIVE.source.to_string(), NAIVE.kernel);
        let reference = |name: &'static str| {
            let path = kit::trial::workspace_file(&format!("reference/ex07-transpose/kernels/{name}.cu"));
            (std::fs::read_to_string(path).unwrap(), name)
        };
        for (source, kernel) in
            [naive, reference("transpose_naive"), reference("transpose_coalesced"), reference("transpose_padded")]
        {
            let source = ptx_build::SourceFile::from_text(format!("{kernel}.cu"), source);
            let ptx = compiler.compile(&source, &Default::default()).unwrap().text;
            let env = kit::RunEnv::new(1, Some(Gpu::simulator()), Some(compiler.clone()), Default::default());
            let build = kit::PartBuild::new(ptx);
            let ctx = Ctx::new("ex07::part::perf::check", &env, &build);
            ctx.run(|ctx| {
                let module = ctx.kernel_module(kernel).unwrap();
                let t = TimedTranspose::new(ctx, w, h).unwrap();
                let run = |launch| {
                    t.prepare(launch).unwrap();
                    module.launch(kernel, launch_config(w, h), &t.args()).unwrap();
                };
                for launch in [0, 1, 6] {
                    run(launch);
                    t.check(launch).unwrap_or_else(|e| panic!("{kernel}, launch {launch}: {e:#}"));
                }
                let right = t.out.read().unwrap();
                let fails = |launch, out: &[f32]| {
                    t.out.write(out).unwrap();
                    format!("{:#}", t.check(launch).unwrap_err())
                };
                // out[c][r] = in[r][c]: element (c, r) of `out`.
                let (r, c) = (h - 3, 5);
                let mut one = right.clone();
                one[c * h + r] = 0.25;
                let err = fails(6, &one);
                assert!(err.contains(&format!("(row {c}, column {r} of `out`: in[{r}][{c}])")), "{kernel}: {err}");
                one[c * h + r] = f32::from_bits(u32::MAX);
                assert!(fails(6, &one).contains("got nothing (never written)"), "{kernel}");
                let from_index: Vec<f32> = (0..w * h).map(|i| ((i % h) * w + i / h) as f32).collect();
                assert!(fails(6, &from_index).contains("`out`[0]"), "{kernel}");
                t.prepare(7).unwrap();
                assert!(fails(7, &right).contains("the first wrong element of"), "{kernel}");
                run(8);
                t.input.overwrite_one(8, w + 1).unwrap();
                let err = t.check(8).unwrap_err();
                let modified = err.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
                assert_eq!((modified.buffer.as_str(), modified.index), ("in", w + 1));
                t.check(8).expect("`in` restored, `out` right");
            });
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
