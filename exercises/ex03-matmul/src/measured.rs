//! ex03's tiling judged by what it does to global memory (kit::measure): the
//! kernel multiplies small seeded matrices on a private simulator and the check
//! counts global loads per multiply-add, the notes' compute-to-global-memory-
//! access ratio turned over. The naive kernel loads 2 floats per multiply-add;
//! 16 x 16 tiles bring that to 2/16. Tiles declared but not read from (the
//! products still reading M or N from global memory) do not lower it.

use anyhow::{anyhow, bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, BlockSample, Measurement};
use kit::{Ctx, Module};
use rand::Rng;

use crate::generated::Matrices;
use crate::{launch_config, matrices, Buffers, Form, Kernel, Shape, TILE};

/// The measured products of `tiled`, one drawn from the seed per check (so
/// that no kernel can single it out, and none a correctness size): whole
/// tiles, 17 to 19 blocks a side (289 to 361 blocks, three waves of an H200's
/// 132 SMs) and as many phases. A kernel that tiles only where its block is
/// alone on an SM (`%warpid`) shows its other path in the later waves, whose
/// blocks share an SM with the first's, as in the timed launches.
pub const MEASURE_SQUARES: [usize; 3] = [272, 288, 304];
/// The measured products of `rect`, one drawn from the seed per check:
/// nothing a multiple of 16, 4 to 6 phases, the last one 2 to 13 deep, 306
/// blocks (three waves).
pub const MEASURE_RECTS: [Shape; 4] =
    [Shape::new(267, 75, 277), Shape::new(281, 61, 263), Shape::new(259, 83, 285), Shape::new(273, 66, 270)];
/// Blocks the simulator runs of a measured product (kit::measure::BlockSample),
/// drawn by the run's secret: of the first wave (each alone on its SM), and of
/// the later ones (sharing an SM): 18 of about 300.
pub const SAMPLED_BLOCKS: (usize, usize) = (6, 12);
/// Blocks the simulator runs of the product at the timed size (`tiled`'s
/// 4096 x 4096, 65536 blocks; `rect`'s 2047 x 3001 x 2501, 20096), drawn by the
/// run's secret: block 0 (of the first wave, kit::measure::BlockSample::at_timed_size) and three of the later ones. A kernel
/// can tell the measured products (a few hundred blocks) from the timed one
/// by its grid or its sizes alone; at the timed size it takes its timed path.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;
/// Global loads per multiply-add a tiled kernel stays at or under: the naive
/// kernel needs 2, 16 x 16 tiles 0.125 (a little more with partial tiles).
/// See CALIBRATION.md ("Measured structure").
pub const MAX_LOADS_PER_MAD: f64 = 0.5;
/// Sectors per warp request and per active lane of the loads that fill a
/// tile, one of which a coalesced fill stays at or under
/// (kit::measure::require_coalesced_fill): a warp filling a 16-wide tile along
/// rows reads two rows of 16 floats, 4 sectors (up to 6 where a row of M or N
/// is not 32-byte aligned), 0.125 to 0.19 per lane; a 4-deep tile (16 x 4)
/// along its short rows 8 to 11, 0.25 to 0.34 per lane; a tile one element
/// deep 2, 1 per lane; a 16 x 16 tile filled down its columns 13 to 17 (fewer
/// where the input's edge leaves lanes idle), 0.5 per lane. See CALIBRATION.md.
pub const MAX_FILL_SECTORS: (f64, f64) = (8.0, 0.42);
/// Shared passes per request the stand-in allows (1: no bank conflicts).
pub const MAX_SHARED_PASSES: f64 = 2.0;
/// Multiply-adds per thread between two barriers the stand-in asks for at
/// least: 8 with 16-deep tiles (two barriers per phase); 0.5 with 1-deep ones.
pub const MIN_MADS_PER_BARRIER: f64 = 2.0;

/// The shape this check measures `kernel` on: drawn from the seed.
pub fn shape(ctx: &Ctx, kernel: Kernel) -> Shape {
    let mut rng = ctx.rng_for("measured shape");
    if kernel.form == Form::Rect {
        MEASURE_RECTS[rng.random_range(0..MEASURE_RECTS.len())]
    } else {
        Shape::square(MEASURE_SQUARES[rng.random_range(0..MEASURE_SQUARES.len())])
    }
}

/// One measured product: what the simulator saw of its sampled blocks.
pub struct Product {
    pub m: Measurement,
    pub s: Shape,
    /// The blocks the simulator ran.
    pub sample: BlockSample,
    /// The elements of P the sampled blocks computed (all checked).
    pub computed: usize,
}

impl Product {
    /// The (row, column) of P that the sampled blocks compute where each
    /// takes the tile of the README's mapping (blockIdx.x along the columns).
    fn elements(s: Shape, sample: &BlockSample) -> Vec<(usize, usize)> {
        sample.elements(launch_config(s).grid.0, TILE as usize, s.m, s.n)
    }

    /// The multiply-adds of the elements the sampled blocks computed.
    fn mads(&self) -> f64 {
        (self.computed * self.s.k) as f64
    }

    fn blocks(&self) -> f64 {
        self.sample.blocks().len() as f64
    }
}

/// `kernel` run once on the simulator on the check's shape and seeded inputs,
/// [`SAMPLED_BLOCKS`] of its blocks drawn by the run's secret.
pub fn measure(ctx: &Ctx, kernel: Kernel) -> Result<Product> {
    ctx.kernel_ptx(kernel.name)?; // explains a missing or misspelled kernel
    let s = shape(ctx, kernel);
    measure_ptx(&ctx.build.ptx, kernel, s, &mut ctx.rng(), &mut ctx.secret_rng("measured blocks"))
}

/// The size `kernel` is timed at.
pub fn timed_shape(kernel: Kernel) -> Shape {
    match kernel.form {
        Form::Square => Shape::square(crate::PERF_WIDTH),
        Form::Rect => crate::PERF_RECT,
    }
}

/// `kernel` run once on the simulator at the size it is timed at,
/// [`TIMED_SAMPLED_BLOCKS`] of its blocks drawn by the run's secret.
pub fn measure_at_timed_size(ctx: &Ctx, kernel: Kernel) -> Result<Product> {
    let s = timed_shape(kernel);
    // Every element drawn from the seed, as in the timed launches (zeros where no sampled block
    // reads would be a tell), each where it is read: the sampled blocks' rows and columns.
    let what = format!("ex03/timed-size matrices/{}", kernel.name);
    let inputs = Inputs::Generated(Matrices::new(&kit::inputs::rng_for(ctx.env.seed, &what), s));
    let mut blocks = ctx.secret_rng("timed-size blocks");
    measure_sampled(&ctx.build.ptx, kernel, s, &inputs, TIMED_SAMPLED_BLOCKS, true, &mut blocks)
}

/// `kernel` of `ptx` run once on the simulator on `s` (inputs drawn by
/// `inputs`, the blocks it runs by `blocks`), its sampled blocks' product checked.
pub fn measure_ptx(
    ptx: &str,
    kernel: Kernel,
    s: Shape,
    inputs: &mut impl Rng,
    blocks: &mut impl Rng,
) -> Result<Product> {
    let (m, n) = matrices(inputs, s);
    measure_sampled(ptx, kernel, s, &Inputs::Host(&m, &n), SAMPLED_BLOCKS, false, blocks)
}

/// M and N of a measured product: on the host, or generated where read (the timed size).
enum Inputs<'a> {
    Host(&'a [f32], &'a [f32]),
    Generated(Matrices),
}

impl Inputs<'_> {
    fn buffers(&self, gpu: &kit::Gpu, s: Shape) -> Result<Buffers> {
        match self {
            Inputs::Host(m, n) => Buffers::measured(gpu, s, m, n),
            Inputs::Generated(g) => Buffers::generated(gpu, g),
        }
    }

    fn reference(&self, s: Shape, at: &[(usize, usize)]) -> crate::cpu::Reference {
        match self {
            Inputs::Host(m, n) => crate::cpu::elements(s, m, n, at),
            Inputs::Generated(g) => g.reference(at),
        }
    }
}

/// [`measure_ptx`] of `inputs`, with `(first, later)` blocks of the first wave
/// and of the later ones; `timed`: `s` is the timed size, where a wrong
/// result is wrong when timed.
fn measure_sampled(
    ptx: &str,
    kernel: Kernel,
    s: Shape,
    inputs: &Inputs,
    (first, later): (usize, usize),
    timed: bool,
    blocks: &mut impl Rng,
) -> Result<Product> {
    let grid = launch_config(s).grid;
    let grid_blocks = grid.0 as u64 * grid.1 as u64;
    let sample = match timed {
        true => BlockSample::at_timed_size(blocks, grid_blocks, (first, later)),
        false => BlockSample::first_and_later(blocks, grid_blocks, first, later),
    };
    let computed = std::sync::atomic::AtomicUsize::new(0);
    let measured = kit::measure::measure_ptx_sampled(ptx, kernel.name, &sample, |module: &Module| {
        // Inputs not watched for writes here: the correctness checks and the timed launches judge
        // that, and at the timed size a copy of its 128 MiB cost more than the sampled blocks' run.
        let bufs = module.gpu().unwatched(|| inputs.buffers(module.gpu(), s))?;
        module.launch(kernel.name, launch_config(s), &kernel.args(s, &bufs))?;
        // A kernel may give its blocks their tiles in another order than the README's (swapped, or
        // swizzled for the L2), and is right where every element it wrote is.
        let readme = || Product::elements(s, &sample).into_iter().map(|(i, j)| i * s.n + j).collect();
        let (at, got): (Vec<(usize, usize)>, Vec<f32>) =
            kit::measure::sampled_writes(&bufs.p, readme)?.into_iter().map(|(k, v)| ((k / s.n, k % s.n), v)).unzip();
        let r = inputs.reference(s, &at);
        let right = crate::cpu::verify(s, &r.expected, &r.abs, &got, |i| at[i]).map(|_| ());
        computed.store(at.len(), std::sync::atomic::Ordering::Relaxed);
        if timed {
            kit::measure::require_right_result_at_timed_size(right, &kernel.case_name(s), sample.blocks().len())
        } else {
            kit::measure::require_right_result(right)
        }
    })?;
    Ok(Product { m: measured, s, sample, computed: computed.into_inner() })
}

/// Thread-level global loads per multiply-add of the product's sampled blocks.
pub fn loads_per_mad(p: &Product) -> f64 {
    p.m.thread_global_loads() as f64 / p.mads()
}

/// Multiply-adds per thread between two barriers.
pub fn mads_per_barrier(p: &Product) -> f64 {
    let barriers_per_block = p.m.stats.barriers as f64 / p.blocks();
    if barriers_per_block == 0.0 {
        f64::INFINITY
    } else {
        p.s.k as f64 / barriers_per_block
    }
}

fn figures(p: &Product) -> String {
    let m = &p.m;
    let fill = m.worst_global(kit::measure::AccessKind::GlobalLoad);
    let (per_request, per_lane) =
        fill.map_or((0.0, 0.0), |r| (r.sectors_per_request(), r.sectors as f64 / r.thread_accesses.max(1) as f64));
    format!(
        "{:.3} global loads per multiply-add (naive: 2, {TILE} x {TILE} tiles: {:.3}); the most scattered load \
         {per_request:.1} sectors per request, {per_lane:.2} per lane; {:.2} shared passes per request; {:.1} \
         multiply-adds per thread between barriers",
        loads_per_mad(p),
        2.0 / TILE as f64,
        m.shared_passes_per_request(),
        mads_per_barrier(p)
    )
}

/// The tiles cut global traffic.
pub fn tiled_traffic(p: &Product) -> Result<String> {
    let (m, per) = (&p.m, loads_per_mad(p));
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
    kit::measure::require_coalesced_fill(
        m,
        MAX_FILL_SECTORS,
        "4 to 6 per request and 0.125 to 0.19 per lane for 16-wide rows",
        "Let threadIdx.x walk along a row of M and of N, consecutive tx reading consecutive addresses: \
         Ms[ty][tx] takes M's element (row, t * TILE + tx) and Ns[ty][tx] N's element (t * TILE + ty, col)",
    )?;
    Ok(figures(p))
}

/// The structure check `two-barriers`, judged by what the barriers do: on
/// the measured product, no thread's shared access meets another thread's
/// (one of them a write) without a barrier between, and there is a barrier.
/// The notes' two barriers per phase pass, as do two pairs of tiles that
/// alternate with one. The PTX reading judges where the simulator cannot run
/// the kernel (or its product is wrong), and names the missing barrier.
pub fn barriers(ctx: &Ctx, kernel: Kernel) -> Result<String> {
    ctx.kernel_ptx(kernel.name)?;
    let read = crate::structure::two_barriers(&ctx.build.ptx, kernel.name);
    match measure(ctx, kernel) {
        Ok(p) if p.m.stats.barriers > 0 => {
            let phases = p.s.k.div_ceil(TILE as usize) as f64;
            Ok(format!(
                "{:.1} barriers per phase; on the measured product no shared access meets another thread's \
                 without a barrier between",
                p.m.stats.barriers as f64 / (p.blocks() * phases)
            ))
        }
        Err(e) if race(&e).is_some() => {
            let race = race(&e).unwrap_or_default();
            read.map_err(|r| anyhow!("{r:#} (measured on the simulator: {race})"))?;
            bail!(
                "{}: the barriers do not keep the phases' shared accesses apart ({race}). Each phase needs \
                 `__syncthreads()` after storing its tiles and again after its products (or two pairs of tiles \
                 that alternate, the next phase's stored into the pair this one does not read)",
                kernel.name
            )
        }
        _ => read,
    }
}

/// The race on shared memory the measured launch found, as the simulator tells it.
fn race(e: &anyhow::Error) -> Option<String> {
    e.chain().find_map(|c| match c.downcast_ref::<kit::backend::BackendError>() {
        Some(r @ kit::backend::BackendError::SharedRace(_)) => Some(r.to_string()),
        _ => None,
    })
}

/// [`tiled_traffic`] at the timed size too, where a kernel that tells the
/// measured products from the timed one by its grid or sizes shows its other path.
fn tiled_traffic_at_timed_size(ctx: &Ctx, kernel: Kernel, measured: &Product) -> Result<String> {
    let s = timed_shape(kernel);
    let grid = launch_config(s).grid;
    let (first, later) = TIMED_SAMPLED_BLOCKS;
    kit::measure::judge_at_timed_size(
        (&kernel.case_name(s), first + later, grid.0 as u64 * grid.1 as u64),
        &format!(
            "at {} (the measured product) {:.3} global loads per multiply-add",
            kernel.case_name(measured.s),
            loads_per_mad(measured)
        ),
        || measure_at_timed_size(ctx, kernel),
        tiled_traffic,
    )
}

/// The structure check `tiled-global-loads`.
pub fn tiled_global_loads(ctx: &Ctx, kernel: Kernel) -> Result<String> {
    let result = measure(ctx, kernel).and_then(|p| {
        let line = tiled_traffic(&p)?;
        let note = tiled_traffic_at_timed_size(ctx, kernel, &p)?;
        Ok(line + &note)
    });
    if let Err(e) = &result {
        // The PTX says it better when there is no shared memory at all.
        crate::structure::shared_tiles(&ctx.kernel_ptx(kernel.name)?).map_err(|p| p.context(format!("{e:#}")))?;
    }
    unless_unmeasurable(result)
}

/// Stand-in for `perf::faster-than-naive`: tiled traffic, conflict-free tiles,
/// and enough work between barriers.
pub fn tiled_and_cheap(ctx: &Ctx, kernel: Kernel) -> Result<String> {
    let p = measure(ctx, kernel)?;
    let line = cheap(&p)?;
    let note = tiled_traffic_at_timed_size(ctx, kernel, &p)?;
    Ok(line + &note)
}

/// [`tiled_traffic`], conflict-free tiles, and enough work between barriers.
pub fn cheap(p: &Product) -> Result<String> {
    tiled_traffic(p)?;
    let m = &p.m;
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
    let mads = mads_per_barrier(p);
    if mads < MIN_MADS_PER_BARRIER {
        bail!(
            "{}: {mads:.1} multiply-adds per thread between barriers (16-deep tiles: 8): the phases are so thin \
             that the block waits at a barrier for almost every product. Make each phase {TILE} deep along k",
            m.kernel
        );
    }
    Ok(figures(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RECT, TILED};
    use kit::trial::{fails, passes, Run};

    const MINE: &str = "exercises/ex03-matmul/calibration";
    const CHEAT: &str = "grader/tests/cheats/ex03-tiled-only-where-measured/exercises/ex03-matmul/kernels";
    const ALONE: &str = "grader/tests/cheats/ex03-tiled-tiles-only-when-alone-on-an-sm/exercises/ex03-matmul/kernels";
    const SMALL_GRIDS: &str = "grader/tests/cheats/ex03-tiled-tiles-only-on-small-grids/exercises/ex03-matmul/kernels";
    const VARIANTS: &str = "grader/tests/variants";

    /// Every shape a seed can draw gives each kernel the same verdicts: the
    /// reference and style variants pass; tiles one deep or read down their
    /// columns fail only the stand-in; tiles not read from, and tiles only at
    /// the shape measured before shapes were drawn, and tiles only where the
    /// block is alone on its SM, fail both.
    #[test]
    fn every_measured_shape_gives_the_same_verdicts() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let compile = |file: &str| kit::trial::ptx_of(&compiler, file, &Default::default());
        let v = |case: &str, file: &str| format!("{VARIANTS}/{case}/exercises/ex03-matmul/kernels/{file}");
        let cases = [
            (TILED, "reference/ex03-matmul/kernels/matmul_tiled.cu".to_string(), true, true),
            (TILED, format!("{MINE}/matmul_tiled_padded_walk.cu"), true, true),
            (RECT, "reference/ex03-matmul/kernels/matmul_rect.cu".to_string(), true, true),
            (TILED, "reference/slow/ex03-matmul/kernels/matmul_tiled.cu".to_string(), true, false),
            (RECT, "reference/slow/ex03-matmul/kernels/matmul_rect.cu".to_string(), true, false),
            (TILED, "reference/slow/ex03-matmul/extra/matmul_tiled_half.cu".to_string(), false, false),
            (TILED, format!("{MINE}/matmul_tiled_unused.cu"), false, false),
            (TILED, format!("{CHEAT}/matmul_tiled.cu"), false, false),
            (TILED, format!("{ALONE}/matmul_tiled.cu"), false, false),
            // Tiles 4 deep, filled along their short rows: coalesced as far as the shape allows (the
            // stand-in fails the rect one: under 2 multiply-adds per barrier where k is not a multiple of 4).
            (TILED, v("ex03-tiled-slow-narrow-tile", "matmul_tiled.cu"), true, true),
            (RECT, v("ex03-rect-slow-narrow-tile", "matmul_rect.cu"), true, false),
            // Filled down their columns: uncoalesced.
            (TILED, v("ex03-tiled-column-fill", "matmul_tiled.cu"), false, false),
            (RECT, v("ex03-rect-column-fill", "matmul_rect.cu"), false, false),
            (TILED, v("ex03-tiled-double-buffered", "matmul_tiled.cu"), true, true),
            (RECT, v("ex03-rect-double-buffered", "matmul_rect.cu"), true, true),
        ];
        for (kernel, file, tiled, stand_in) in cases {
            let ptx = compile(&file);
            let shapes = match kernel.form {
                Form::Rect => MEASURE_RECTS.to_vec(),
                Form::Square => MEASURE_SQUARES.map(Shape::square).to_vec(),
            };
            for s in shapes {
                let (mut inputs, mut blocks) = (kit::inputs::rng_for(7, "shapes"), kit::inputs::rng_for(7, "blocks"));
                let p = measure_ptx(&ptx, kernel, s, &mut inputs, &mut blocks).unwrap();
                eprintln!("{file} at {s:?}: {}", figures(&p));
                assert_eq!(tiled_traffic(&p).is_ok(), tiled, "{file} at {s:?}: {}", figures(&p));
                assert_eq!(cheap(&p).is_ok(), stand_in, "{file} at {s:?}: {}", figures(&p));
            }
        }
        // The shape the cheat singles out, measured before shapes were drawn.
        let cheat = compile(&format!("{CHEAT}/matmul_tiled.cu"));
        let p = measure_ptx(&cheat, TILED, Shape::square(64), &mut rand::rng(), &mut rand::rng()).unwrap();
        assert!(cheap(&p).is_ok(), "{}", figures(&p));
        // Tiles only where alone on an SM: one wave, as the measured products were until
        // 2026-12-05, shows the tiled path only.
        let alone = compile(&format!("{ALONE}/matmul_tiled.cu"));
        let p = measure_ptx(&alone, TILED, Shape::square(112), &mut rand::rng(), &mut rand::rng()).unwrap();
        assert!(cheap(&p).is_ok(), "{}", figures(&p));
    }

    /// At the timed size (4 blocks simulated) the references and the slow
    /// kernels tile as at the measured sizes, the half-tiled kernel does not,
    /// and neither does the one that tiles only on small grids.
    #[test]
    fn the_timed_size_gives_the_measured_sizes_verdicts() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let cases = [
            (TILED, "reference/ex03-matmul/kernels/matmul_tiled.cu".to_string(), true),
            (RECT, "reference/ex03-matmul/kernels/matmul_rect.cu".to_string(), true),
            (RECT, "reference/slow/ex03-matmul/kernels/matmul_rect.cu".to_string(), true),
            (TILED, "reference/slow/ex03-matmul/extra/matmul_tiled_half.cu".to_string(), false),
            (TILED, format!("{SMALL_GRIDS}/matmul_tiled.cu"), false),
        ];
        for (kernel, file, tiled) in cases {
            let ptx = kit::trial::ptx_of(&compiler, &file, &Default::default());
            let s = timed_shape(kernel);
            let inputs = Inputs::Generated(Matrices::new(&kit::inputs::rng_for(7, "matrices"), s));
            let mut blocks = kit::inputs::rng_for(7, "blocks");
            let p = measure_sampled(&ptx, kernel, s, &inputs, TIMED_SAMPLED_BLOCKS, true, &mut blocks).unwrap();
            eprintln!("{file} at {s:?}: {}", figures(&p));
            assert_eq!(tiled_traffic(&p).is_ok(), tiled, "{file} at {s:?}: {}", figures(&p));
        }
    }

    /// Every measured product spans more than two waves of the SMs a GPU of
    /// this course shows (an H100's or H200's 132), so that blocks of its
    /// later waves share an SM with the first's (slots 8 and up on an H200
    /// from 264 blocks on, scripts/gpu-49-clocks.cu).
    #[test]
    fn every_measured_product_spans_three_waves() {
        let shapes = MEASURE_SQUARES.map(Shape::square).into_iter().chain(MEASURE_RECTS);
        for s in shapes {
            let (gx, gy, _) = launch_config(s).grid;
            assert!(gx * gy > 2 * 132, "{s:?}: {} blocks", gx * gy);
        }
    }

    #[test]
    fn no_measured_shape_is_a_tested_or_timed_one() {
        for w in MEASURE_SQUARES {
            assert!(w % TILE as usize == 0 && !crate::TILED_WIDTHS.contains(&w) && w != 64);
        }
        for s in MEASURE_RECTS {
            let t = TILE as usize;
            assert!(s.m % t != 0 && s.k % t != 0 && s.n % t != 0 && !crate::RECT_SHAPES.contains(&s), "{s:?}");
            assert!(s != Shape::new(50, 70, 45));
        }
    }

    #[test]
    fn tiling_is_measured_as_global_loads_per_multiply_add() {
        let ex = crate::exercise();
        for (part, file) in [
            ("tiled", "reference/ex03-matmul/kernels/matmul_tiled.cu"),
            ("tiled", &format!("{MINE}/matmul_tiled_padded_walk.cu")),
            ("rect", "reference/ex03-matmul/kernels/matmul_rect.cu"),
        ] {
            passes(&ex, part, "tiled-global-loads", Run::Check, file);
            passes(&ex, part, "faster-than-naive", Run::StandIn, file);
        }
        for (part, file) in [
            ("tiled", "reference/slow/ex03-matmul/kernels/matmul_tiled.cu"),
            ("rect", "reference/slow/ex03-matmul/kernels/matmul_rect.cu"),
        ] {
            passes(&ex, part, "tiled-global-loads", Run::Check, file);
            fails(&ex, part, "faster-than-naive", Run::StandIn, file);
        }
        for file in ["reference/slow/ex03-matmul/extra/matmul_tiled_half.cu", &format!("{MINE}/matmul_tiled_unused.cu")]
        {
            if let Some(msg) = fails(&ex, "tiled", "tiled-global-loads", Run::Check, file) {
                assert!(msg.contains("global loads per multiply-add"), "{msg}");
            }
            fails(&ex, "tiled", "faster-than-naive", Run::StandIn, file);
        }
        // Tiles only on grids of a few hundred blocks: the timed size's measurement shows the naive path.
        let small = format!("{SMALL_GRIDS}/matmul_tiled.cu");
        if let Some(msg) = fails(&ex, "tiled", "tiled-global-loads", Run::Check, &small) {
            assert!(msg.contains("at 4096x4096 (the timed size") && msg.contains("2.000 global loads"), "{msg}");
        }
        fails(&ex, "tiled", "faster-than-naive", Run::StandIn, &small);
        let cheat = format!("{CHEAT}/matmul_tiled.cu");
        if let Some(msg) = fails(&ex, "tiled", "tiled-global-loads", Run::Check, &cheat) {
            assert!(msg.contains("2.000 global loads per multiply-add"), "{msg}");
        }
        fails(&ex, "tiled", "faster-than-naive", Run::StandIn, &cheat);
    }

    fn variant(case: &str, file: &str) -> String {
        format!("{VARIANTS}/{case}/exercises/ex03-matmul/kernels/{file}")
    }

    /// Tiles filled down their columns cut global loads as well as the
    /// notes' kernel, but their loads are uncoalesced: the message names the
    /// load and its sectors per request.
    #[test]
    fn tiles_filled_down_their_columns_fail_with_the_loads_line() {
        let ex = crate::exercise();
        for (part, file) in [("tiled", "matmul_tiled.cu"), ("rect", "matmul_rect.cu")] {
            let case = variant(&format!("ex03-{part}-column-fill"), file);
            if let Some(msg) = fails(&ex, part, "tiled-global-loads", Run::Check, &case) {
                assert!(msg.contains("sectors per warp request") && msg.contains(&format!("{file}:")), "{msg}");
            }
        }
    }

    /// The barriers are judged by what they do: one barrier per phase with two
    /// pairs of tiles, or an extra barrier before the loop, passes; one pair
    /// of tiles with one barrier per phase fails and is told which.
    #[test]
    fn barriers_are_judged_by_what_they_do() {
        let ex = crate::exercise();
        for (part, case, file) in [
            ("tiled", "ex03-tiled-double-buffered", "matmul_tiled.cu"),
            ("rect", "ex03-rect-double-buffered", "matmul_rect.cu"),
            ("tiled", "ex03-tiled-extra-barrier-in-if", "matmul_tiled.cu"),
            ("rect", "ex03-rect-cleared-tiles-barrier-in-if", "matmul_rect.cu"),
        ] {
            passes(&ex, part, "two-barriers", Run::Check, &variant(case, file));
        }
        passes(&ex, "tiled", "two-barriers", Run::Check, "reference/ex03-matmul/kernels/matmul_tiled.cu");
        let one = variant("ex03-tiled-missing-second-barrier", "matmul_tiled.cu");
        if let Some(msg) = fails(&ex, "tiled", "two-barriers", Run::Check, &one) {
            assert!(msg.contains("after the products") && msg.contains("data race"), "{msg}");
        }
    }
}
