//! ex12's memory lessons judged by what the kernels do to memory
//! (kit::measure): each kernel convolves a small image on a private
//! simulator, and the checks read its memory profile. Deterministic for a
//! seed: the same figures on every backend.
//!
//! The measured image is one of [`MEASURE_SHAPES`] (whole blocks of 16 x 16,
//! not square), drawn from the seed, its pixels and mask from the check's
//! generator, so that no kernel can tell the measured launch by its shape; the
//! mask is 7 x 7 (r = 3). Of the 49 taps of an output, 44.7 to 46.8 fall inside
//! the image on average (the rest are ghost cells). The figures below are
//! those of a 64 x 48 image.
//!
//! - `naive`: each warp (two rows of 16 threads) reads two runs of 16
//!   neighbouring pixels per tap, 4 to 6 sectors per request; with the column
//!   taken from `threadIdx.y` it reads one pixel in each of 16 rows, 16 or more.
//! - `constant`: the mask comes from constant memory (constant loads, and
//!   global loads per output no more than the image's 49 taps), and every
//!   warp-level constant load is a broadcast (1 pass: all lanes read one
//!   mask element at a time).
//! - `tiled`: the image is loaded about once per pixel of each block's tile
//!   and halo: (64 + 18) x (48 + 12) = 4920 loads of the 22 x 22 tiles'
//!   pixels inside the image, 1.60 per output, instead of 45.98 untiled.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, BlockSample, Measurement};
use kit::Ctx;
use rand::Rng;

use crate::{convolve_on, cpu, Variant, MAX_MASK_RADIUS, TILE};

/// The measured images, (width, height), one drawn from the seed: whole
/// blocks (the ideal figures are exact), not square, 6 to 24 blocks.
pub const MEASURE_SHAPES: [(usize, usize); 8] =
    [(48, 32), (48, 64), (64, 32), (64, 80), (80, 48), (80, 64), (96, 48), (96, 64)];
/// The measured mask radius: the largest, where the lessons show most.
pub const MEASURE_R: usize = MAX_MASK_RADIUS;
/// `naive::coalesced`: sectors per warp-level global load or store, worst
/// instruction, at or under which the image is read along rows (the reference:
/// 6 at most, a tap's 16 pixels straddling 3 sectors per row; the column from
/// `threadIdx.y`: 16 or more).
pub const MAX_SECTORS_PER_REQUEST: f64 = 8.0;
/// `constant::mask-in-constant`: global loads per output at or under which
/// only the image comes from global memory: (2r + 1)^2 + 1 = 50 (the
/// reference: 45.98, the taps inside the image; a mask read from global
/// memory too: about 92).
/// Bytes of local memory per output: none when every weight is read from `F`;
/// a per-thread copy of the mask indexed at run time moves two floats per tap.
pub const MAX_LOCAL_BYTES_PER_OUTPUT: f64 = 4.0;
/// Where the mask belongs, for a kernel that copied it into a per-thread array.
const MASK_NOT_COPIED: &str = "Read every weight from `F` itself: constant memory gives the whole warp one weight in \
     one broadcast, where a per-thread copy is a load from device memory per tap";
pub const MAX_CONSTANT_LOADS_PER_OUTPUT: f64 = (cpu::side(MEASURE_R) * cpu::side(MEASURE_R) + 1) as f64;
/// Constant-cache passes per warp-level constant load at or under which the
/// mask is read as broadcasts (the reference: 1.00; loops clipped per thread
/// at the border, calibration/constant_clipped_loops.cu: 1.63; each thread
/// starting at its own tap, reference/slow: 15.2).
pub const MAX_CONST_PASSES: f64 = 4.0;
/// `constant::mask-in-constant`: constant-cache passes per output at or under
/// which the taps' weights come as broadcasts: [`MAX_CONST_PASSES`] for each
/// of a warp's 49 taps, shared by its 32 outputs (6.1). The bar is per output,
/// not per load, because what costs is the passes the taps make: a kernel
/// that copies `F` into shared memory once per block (49 different addresses
/// in two loads, then broadcasts from shared memory) makes 0.2 passes per
/// output and keeps the lesson (no global mask loads, one weight per warp
/// and tap); the reference makes about 1.4, clipped loops 2.3, threads
/// starting at their own taps (reference/slow) about 21.
pub const MAX_CONST_PASSES_PER_OUTPUT: f64 =
    MAX_CONST_PASSES * (cpu::side(MEASURE_R) * cpu::side(MEASURE_R)) as f64 / 32.0;
/// `tiled::few-global-loads-per-output`: 32-byte sectors per warp-level global load, at
/// the worst load (the loads that fill the tile), at or under which warps
/// fill the tile along its rows (the reference's flat loop and 2-D loops, and
/// edge threads loading the halo: at most about 5; a tile filled down its
/// columns, consecutive threads on consecutive rows: 16 to 22), with
/// [`MAX_FILL_SECTORS_PER_LANE`].
pub const MAX_FILL_SECTORS_PER_REQUEST: f64 = 8.0;
/// ... and sectors per active lane at that load, the other half of
/// `kit::measure::require_coalesced_fill`'s test (both must be passed to fail):
/// the reference about 0.2; the left and right halos loaded by three threads
/// of each row 0.3 to 0.7 (but 4 per request); a tile filled down its
/// columns 0.5 to 0.65.
pub const MAX_FILL_SECTORS_PER_LANE: f64 = 0.3;
/// `tiled::few-global-loads-per-output`: global loads per output at or under which the
/// image comes from a staged tile (the reference: 1.60; the halo read from
/// global memory through the caches: about 8; untiled: 45.98).
pub const MAX_TILED_LOADS_PER_OUTPUT: f64 = 3.0;
/// Stand-in for `tiled::perf`: active lanes per global load at or above which
/// whole warps fill the tile (the reference: about 28; edge threads loading
/// the halo: 15.8 to 16.8 over the measured shapes; one loader per block: 1).
pub const MIN_LANES_PER_LOAD: f64 = 8.0;

/// A measurement and the image it was made on.
pub struct Measured {
    pub m: Measurement,
    /// Width and height of the measured image.
    pub shape: (usize, usize),
    /// What the blocks that ran compute and stage: the whole image's, or a
    /// few sampled blocks' of the timed image.
    pub region: Region,
}

/// The outputs some blocks of an image compute, their image taps that fall
/// inside the image, and the pixels of the blocks' (16 + 2r)^2 tiles inside
/// it: what the per-output figures are divided by and compared with.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Region {
    pub outputs: usize,
    pub inside_taps: usize,
    pub staged: usize,
}

impl Region {
    /// The blocks `(bx, by)` of an image of `shape`.
    pub fn of_blocks((w, h): (usize, usize), blocks: impl IntoIterator<Item = (usize, usize)>) -> Region {
        let t = TILE as usize;
        // Along one axis of `n` pixels, block `b`: its outputs, their taps inside, its tile's pixels inside.
        let axis = |b: usize, n: usize| {
            let cells = b * t..((b + 1) * t).min(n);
            let taps = cells
                .clone()
                .map(|p| {
                    (0..cpu::side(MEASURE_R)).filter(|&k| (p + k).checked_sub(MEASURE_R).is_some_and(|q| q < n)).count()
                })
                .sum::<usize>();
            (cells.len(), taps, (b * t + t + MEASURE_R).min(n) - (b * t).saturating_sub(MEASURE_R))
        };
        let mut r = Region::default();
        for (bx, by) in blocks {
            let ((ox, tx, sx), (oy, ty, sy)) = (axis(bx, w), axis(by, h));
            r.outputs += ox * oy;
            r.inside_taps += tx * ty;
            r.staged += sx * sy;
        }
        r
    }

    /// Every block of an image of `shape`.
    pub fn whole(shape: (usize, usize)) -> Region {
        let t = TILE as usize;
        let (gx, gy) = (shape.0.div_ceil(t), shape.1.div_ceil(t));
        Region::of_blocks(shape, (0..gy).flat_map(|by| (0..gx).map(move |bx| (bx, by))))
    }

    pub fn inside_taps_per_output(&self) -> f64 {
        self.inside_taps as f64 / self.outputs as f64
    }
}

impl std::ops::Deref for Measured {
    type Target = Measurement;
    fn deref(&self) -> &Measurement {
        &self.m
    }
}

/// Outputs of an image of `shape`.
pub const fn outputs((w, h): (usize, usize)) -> usize {
    w * h
}

/// Image taps per output that fall inside an image of `shape` (45.98 for 64 x 48).
pub fn inside_taps_per_output(shape: (usize, usize)) -> f64 {
    Region::whole(shape).inside_taps_per_output()
}

/// Pixels of the blocks' (16 + 2r)^2 tiles that lie inside an image of
/// `shape`: what a tiled kernel loads, each once (4920 for 64 x 48).
pub fn staged_pixels(shape: (usize, usize)) -> usize {
    Region::whole(shape).staged
}

/// The measured image of this check: one of [`MEASURE_SHAPES`], drawn from the seed.
pub fn measured_shape(ctx: &Ctx) -> (usize, usize) {
    MEASURE_SHAPES[ctx.rng_for("measured shape").random_range(0..MEASURE_SHAPES.len())]
}

/// Runs part `v`'s kernel on this check's measured image.
pub fn measure(ctx: &Ctx, v: Variant) -> Result<Measured> {
    measure_on(ctx, v, measured_shape(ctx))
}

/// [`measure`] on an image of `shape`, its pixels and mask from the check's generator.
pub fn measure_on(ctx: &Ctx, v: Variant, shape: (usize, usize)) -> Result<Measured> {
    let ((w, h), r) = (shape, MEASURE_R);
    let mut rng = ctx.rng();
    let image = cpu::image(&mut rng, w * h);
    let mask = cpu::mask(&mut rng, r);
    let m = ctx.measure(v.kernel(), |module| {
        let got = convolve_on(module, v, &image, &mask, (w, h, r))?;
        let expected = cpu::convolve(&image, &mask, r, w, h);
        kit::measure::require_right_result(cpu::compare(&image, &mask, &expected, &got, (r, w, h)))
    })?;
    Ok(Measured { m, shape, region: Region::whole(shape) })
}

/// Blocks the simulator runs of the timed image ([`timed_shape`]: 8192 x
/// 6400 on an H100, 204 800 blocks), drawn by the run's secret: block 0 (of the
/// first wave, BlockSample::at_timed_size) and three of the later ones. A kernel can tell the measured
/// images (6 to 24 blocks) from the timed one by its grid or its sizes alone;
/// at the timed size it takes its timed path.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;

/// The timed image on an H100 (kit::exercise::TIMED_L2_BYTES), as (width, height).
pub fn timed_shape() -> (usize, usize) {
    (crate::PERF_WIDTH, crate::rows_of(kit::exercise::timed_bandwidth_elements()))
}

/// Part `v`'s kernel run once on the simulator on the timed image
/// ([`timed_shape`], the timed 7 x 7 mask), [`TIMED_SAMPLED_BLOCKS`] of its
/// blocks: the image generated where they read it
/// (kit::Gpu::upload_generated), and what they wrote checked, wherever they
/// wrote it, within the float bound of the correctness checks.
pub fn measure_at_timed_size(ctx: &Ctx, v: Variant) -> Result<Measured> {
    let ((w, h), r) = (timed_shape(), crate::PERF_RADIUS);
    let cfg = crate::launch_config(w, h);
    let (first, later) = TIMED_SAMPLED_BLOCKS;
    let blocks = cfg.grid.0 as u64 * cfg.grid.1 as u64;
    let sample = BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), blocks, (first, later));
    let mut rng = ctx.rng_for("timed-size image");
    let mask = cpu::mask(&mut rng, r);
    let pixels = kit::inputs::UniformF32s::new(&rng, 0.0, 1.0);
    let pixel = |y: usize, x: usize| {
        let mut p = [0.0f32];
        pixels.fill(y * w + x, &mut p);
        p[0]
    };
    let m = kit::measure::measure_ptx_sampled(&ctx.build.ptx, v.kernel(), &sample, |module| {
        let gpu = module.gpu();
        // Not watched: the correctness checks and the timed launches judge writes into `in`.
        let (input, out) = gpu.unwatched(|| {
            let p = pixels.clone();
            let input = gpu.upload_generated("in", w * h, move |first, out: &mut [f32]| p.fill(first, out));
            let out = gpu.poisoned_generated::<f32>("out", w * h);
            (input, out)
        });
        let (input, out, d_mask) = (input?, out?, gpu.upload("mask", &mask)?);
        v.prepare(module, &mask)?;
        v.launch_on(module, input.arg(), d_mask.arg(), out.arg(), (w, h, r))?;
        gpu.finish()?;
        let tiles = || sample.elements(cfg.grid.0, TILE as usize, h, w).into_iter().map(|(y, x)| y * w + x).collect();
        let written = kit::measure::sampled_writes(&out, tiles)?;
        let right = cpu::compare_at(&written, |i| cpu::conv_at(pixel, &mask, r, w, h, i / w, i % w), (r, w, h));
        kit::measure::require_right_result_at_timed_size(right, &format!("{w}x{h}"), sample.blocks().len())
    })?;
    let sampled = sample.blocks().iter().map(|&b| ((b % cfg.grid.0 as u64) as usize, (b / cfg.grid.0 as u64) as usize));
    Ok(Measured { m, shape: (w, h), region: Region::of_blocks((w, h), sampled) })
}

/// `judge` of part `v` on the check's measured image, then on the timed one.
fn here_and_timed(ctx: &Ctx, v: Variant, judge: impl Fn(&Measured) -> Result<String>) -> Result<String> {
    let measured = measure(ctx, v)?;
    let line = judge(&measured)?;
    let (w, h) = timed_shape();
    let grid = crate::launch_config(w, h).grid;
    let note = kit::measure::judge_at_timed_size(
        (&format!("{w}x{h}"), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, grid.0 as u64 * grid.1 as u64),
        &format!("at {}x{} (the measured image) {line}", measured.shape.0, measured.shape.1),
        || measure_at_timed_size(ctx, v),
        &judge,
    )?;
    Ok(line + &note)
}

fn per_output(m: &Measured, count: u64) -> f64 {
    count as f64 / m.region.outputs as f64
}

/// Floats the active lanes loaded from global memory: from the totals, which
/// count a generic `ld` by the space each lane's address falls in (clang turns
/// `cond ? tile[..] : in[..]` into one generic load of a selected pointer, which
/// the per-instruction rows list as generic, not global).
pub fn global_floats(m: &Measurement) -> u64 {
    m.stats.global_load_bytes / 4
}

/// The load instruction (global, or generic as clang may emit) that the most
/// lanes executed: where the extra global loads of a kernel are.
pub fn busiest_load(m: &Measurement) -> Option<&kit::measure::InstrStats> {
    m.rows(|k| matches!(k, AccessKind::GlobalLoad | AccessKind::GenericLoad)).max_by_key(|r| r.thread_accesses)
}

/// ", most at kernels/x.cu:12 (`ld.global.f32`)", or nothing.
fn most_at(m: &Measurement) -> String {
    busiest_load(m).map(|r| format!(", most at {}", kit::measure::at(r))).unwrap_or_default()
}

/// Floats per warp-level global load request: active lanes for `float` loads.
pub fn global_floats_per_request(m: &Measurement) -> f64 {
    if m.stats.global_load_requests == 0 {
        0.0
    } else {
        global_floats(m) as f64 / m.stats.global_load_requests as f64
    }
}

fn figures(m: &Measured) -> String {
    format!(
        "per output, 7 x 7 mask: {:.2} global loads ({:.2} taps inside the \
         image), {:.2} constant loads ({:.2} constant-cache passes per load, {:.2} per output), {:.2} shared loads (warp requests x 32); global sectors \
         per request: loads {:.1} (worst load {:.1}), stores {:.1}; {:.1} active lanes per global load",
        per_output(m, global_floats(m)),
        m.region.inside_taps_per_output(),
        per_output(m, m.thread_const_loads()),
        m.const_passes_per_request(),
        per_output(m, m.stats.const_load_passes),
        per_output(m, m.stats.shared_load_requests * 32),
        m.load_sectors_per_request(),
        worst_global_load(m).map_or(0.0, |r| r.sectors_per_request()),
        m.store_sectors_per_request(),
        global_floats_per_request(m)
    )
}

/// `naive`: the image read along rows, threads of a warp on neighbouring columns.
pub fn coalesced(m: &Measured) -> Result<String> {
    if global_floats(m) == 0 {
        bail!(
            "conv2d_naive reads nothing from global memory ({}): this part is the baseline the others are compared \
             with; read the image and the mask from the `in` and `mask` arguments",
            figures(m)
        );
    }
    for kind in [AccessKind::GlobalLoad, AccessKind::GlobalStore] {
        let what = if kind == AccessKind::GlobalLoad { "loads" } else { "stores" };
        let Some(worst) = m.worst_global(kind) else { continue };
        let sectors = worst.sectors_per_request();
        if sectors > MAX_SECTORS_PER_REQUEST {
            bail!(
                "conv2d_naive: {what}: {sectors:.1} sectors per request at the worst instruction (reading a row: \
                 at most 6; allowed {MAX_SECTORS_PER_REQUEST}){}: a warp's 32 threads touch {} different rows of \
                 the image. The result is right, but most of every 32-byte sector the GPU fetches is wasted. A \
                 warp is 32 consecutive threadIdx.x values first: take the column from x (col = blockIdx.x * \
                 blockDim.x + threadIdx.x) and the row from y, so that neighbouring threads read neighbouring \
                 pixels of one row",
                worst_at(Some(worst)),
                sectors.round().min(32.0)
            );
        }
    }
    Ok(figures(m))
}

/// The structure check `naive::coalesced`.
pub fn coalesced_check(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(here_and_timed(ctx, Variant::Naive, coalesced))
}

/// `constant`: the mask read from constant memory, as broadcasts.
pub fn mask_in_constant(m: &Measured) -> Result<String> {
    m.require_little_local(m.region.outputs as u64, "output", MAX_LOCAL_BYTES_PER_OUTPUT, MASK_NOT_COPIED)?;
    let global = per_output(m, global_floats(m));
    if m.stats.const_load_requests == 0 || global > MAX_CONSTANT_LOADS_PER_OUTPUT {
        bail!(
            "{}: {global:.2} global loads and {:.2} constant loads per output (the image's taps: {:.2}; at most \
             {MAX_CONSTANT_LOADS_PER_OUTPUT} global){}: the mask is not read from constant memory. Read it from \
             `F`, the `__constant__ float` array declared at file scope (not `__device__`, not a copy in global \
             memory): the grader writes the mask there before every launch",
            m.kernel,
            per_output(m, m.thread_const_loads()),
            m.region.inside_taps_per_output(),
            most_at(m)
        );
    }
    let per_output = per_output(m, m.stats.const_load_passes);
    if per_output > MAX_CONST_PASSES_PER_OUTPUT {
        let worst = m.rows(|k| k == AccessKind::ConstLoad).max_by(|a, b| {
            (a.const_passes as f64 / a.executions as f64).total_cmp(&(b.const_passes as f64 / b.executions as f64))
        });
        let at = worst
            .map(|r| format!(" ({:.1} at {})", r.const_passes as f64 / r.executions as f64, kit::measure::at(r)))
            .unwrap_or_default();
        bail!(
            "{}: {per_output:.2} constant-cache passes per output (the taps' weights as broadcasts: about 1.5; at \
             most {MAX_CONST_PASSES_PER_OUTPUT:.1}), {:.2} constant-cache passes per constant load{at}: at each tap the threads of a \
             warp read different mask elements, and constant memory serves a warp one address at a time, so the \
             reads are serialized. Walk the taps in the same order in every thread (F[i * (2r + 1) + j] with i and \
             j the loop counters, not shifted by threadIdx), so that each constant load is one element for the \
             whole warp ({})",
            m.kernel,
            m.const_passes_per_request(),
            figures(m)
        );
    }
    Ok(figures(m))
}

/// The global load with the most sectors per request (generic loads that
/// reached global memory too: clang's spelling).
fn worst_global_load(m: &Measurement) -> Option<&kit::measure::InstrStats> {
    m.rows(|k| matches!(k, AccessKind::GlobalLoad | AccessKind::GenericLoad))
        .filter(|r| r.sectors > 0)
        .max_by(|a, b| a.sectors_per_request().total_cmp(&b.sectors_per_request()))
}

/// The structure check `constant::mask-in-constant`.
pub fn mask_in_constant_check(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(here_and_timed(ctx, Variant::Constant, mask_in_constant))
}

/// Stand-in for `constant::perf::faster-than-global-mask`: what a constant mask
/// saves (the mask's global loads, read instead as broadcasts), measured.
pub fn mask_in_constant_stand_in(ctx: &Ctx) -> Result<String> {
    here_and_timed(ctx, Variant::Constant, mask_in_constant)
}

/// `tiled`: the image staged once per tile, halo included; the mask in constant memory.
pub fn halo_in_shared(m: &Measured) -> Result<String> {
    m.require_little_local(m.region.outputs as u64, "output", MAX_LOCAL_BYTES_PER_OUTPUT, MASK_NOT_COPIED)?;
    let global = per_output(m, global_floats(m));
    let staged = m.region.staged as f64;
    if global > MAX_TILED_LOADS_PER_OUTPUT {
        let why = if m.stats.const_load_requests == 0 {
            "and no constant load: the mask is read from global memory too. Read it from `F`, the `__constant__` \
             array the grader fills, and the image from the tile"
                .to_string()
        } else if m.shared_requests() > 0 {
            format!(
                "{:.1} times what the blocks' tiles with their halos hold inside the image ({staged} pixels): the \
                 sums still read pixels from global memory, most likely the halo (PMPP's variant that leaves the \
                 halo to the caches). Stage the whole (16 + 2r) x (16 + 2r) tile, halo included, in shared memory \
                 and read every tap from it",
                global_floats(m) as f64 / staged
            )
        } else {
            "and no shared memory: the sums read every tap from global memory. Stage the block's (16 + 2r) x \
             (16 + 2r) input tile in shared memory, then compute from it"
                .to_string()
        };
        bail!(
            "{}: {global:.2} global loads per output (a tile with its halo: {:.2}; at most \
             {MAX_TILED_LOADS_PER_OUTPUT}){}, {why}",
            m.kernel,
            staged / m.region.outputs as f64,
            most_at(m)
        );
    }
    if m.stats.const_load_requests == 0 {
        bail!(
            "{}: no constant load: the mask is not read from `F`, the `__constant__` array the grader fills ({})",
            m.kernel,
            figures(m)
        );
    }
    kit::measure::require_coalesced_fill(
        m,
        (MAX_FILL_SECTORS_PER_REQUEST, MAX_FILL_SECTORS_PER_LANE),
        "about 5.6 per request, 0.2 per lane, along the tile's rows",
        "The result is right; fill the tile row by row, consecutive threads on consecutive pixels of a tile row \
         (ty = k / side, tx = k % side for k = threadIdx.y * 16 + threadIdx.x, k + 256, ...), or with the column \
         from threadIdx.x",
    )?;
    Ok(format!(
        "image loaded {:.2} times per pixel of the tiles and halos ({} loads, {staged} tile pixels inside the \
         image); {}",
        global_floats(m) as f64 / staged,
        global_floats(m),
        figures(m)
    ))
}

/// The structure check `tiled::few-global-loads-per-output`.
pub fn halo_in_shared_check(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(here_and_timed(ctx, Variant::Tiled, halo_in_shared))
}

/// Stand-in for `tiled::perf::faster-than-untiled`: the tile staged, by whole warps.
pub fn warp_wide_fill_stand_in(ctx: &Ctx) -> Result<String> {
    here_and_timed(ctx, Variant::Tiled, warp_wide_fill)
}

/// The stand-in's verdict on a measurement: the halo staged, by whole warps.
pub fn warp_wide_fill(m: &Measured) -> Result<String> {
    let line = halo_in_shared(m)?;
    let lanes = global_floats_per_request(m);
    if lanes < MIN_LANES_PER_LOAD {
        bail!(
            "conv2d_tiled: {lanes:.1} active lanes per global load (whole warps: about 28; at least \
             {MIN_LANES_PER_LOAD}){}: a few threads fill the tile while the rest of the block waits at the \
             barrier. Let all 256 threads fill it, consecutive threads on consecutive pixels of a tile row",
            worst_at(m.narrowest_global_load())
        );
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::trial::{fails, passes, Run};

    #[test]
    fn the_ideal_figures() {
        assert!((inside_taps_per_output((64, 48)) - 141_264.0 / 3072.0).abs() < 1e-9);
        assert_eq!(staged_pixels((64, 48)), 82 * 60);
        assert_eq!(MAX_CONSTANT_LOADS_PER_OUTPUT, 50.0);
        for shape in MEASURE_SHAPES {
            assert!((43.0..47.0).contains(&inside_taps_per_output(shape)), "{shape:?}");
            assert!(staged_pixels(shape) as f64 / (outputs(shape) as f64) < MAX_TILED_LOADS_PER_OUTPUT / 1.5);
        }
    }

    #[test]
    fn the_measured_shape_is_drawn_from_the_seed() {
        let build = kit::PartBuild::new(String::new());
        let mut drawn = std::collections::BTreeSet::new();
        for seed in 0..100 {
            let env = kit::RunEnv::new(seed, None, None, Default::default());
            let shape = measured_shape(&Ctx::new("ex12::constant::structure::mask-in-constant", &env, &build));
            drawn.insert(shape);
        }
        assert_eq!(drawn.len(), MEASURE_SHAPES.len(), "every shape is drawn");
        for (w, h) in MEASURE_SHAPES {
            assert!(w != h && w % TILE as usize == 0 && h % TILE as usize == 0);
            assert!((w, h) != (64, 48), "the shape the README used to announce");
        }
    }

    const MINE: &str = "exercises/ex12-convolution/calibration";
    const REF: &str = "reference/ex12-convolution/kernels";
    const SLOW: &str = "reference/slow/ex12-convolution/kernels";

    /// A case of the variants corpus: its file of part `v`.
    fn variant(case: &str, v: Variant) -> String {
        kit::trial::variant_file(case, &format!("ex12-convolution/{}", v.file()))
    }

    /// `verdict(measured)` for `file`, part `v`, on each of `shapes`; empty without NVRTC.
    fn on_shapes(
        file: &str,
        v: Variant,
        shapes: &[(usize, usize)],
        verdict: impl Fn(&Measured) -> Result<String>,
    ) -> Vec<((usize, usize), Result<String>)> {
        let Some(compiler) = kit::trial::compiler() else { return Vec::new() };
        let options = ptx_build::CompileOptions { line_info: true, ..Default::default() };
        let ptx = kit::trial::ptx_of(&compiler, file, &options);
        let env = kit::RunEnv::new(1, None, Some(compiler), options);
        let build = kit::PartBuild::new(ptx);
        let ctx = Ctx::new("ex12::shapes::structure::test", &env, &build);
        shapes.iter().map(|&s| (s, measure_on(&ctx, v, s).and_then(|m| verdict(&m)))).collect()
    }

    fn all_pass(file: &str, v: Variant, verdict: impl Fn(&Measured) -> Result<String>) {
        for (shape, r) in on_shapes(file, v, &MEASURE_SHAPES, verdict) {
            let note = r.unwrap_or_else(|e| panic!("{file} on {shape:?}: {e:#}"));
            eprintln!("pass {file} on {shape:?}: {note}");
        }
    }

    fn all_fail(file: &str, v: Variant, says: &str, verdict: impl Fn(&Measured) -> Result<String>) {
        for (shape, r) in on_shapes(file, v, &MEASURE_SHAPES, verdict) {
            let msg = format!("{:#}", r.err().unwrap_or_else(|| panic!("{file} passes on {shape:?}")));
            assert!(msg.contains(says), "{file} on {shape:?}: {msg}");
            eprintln!("FAIL {file} on {shape:?}: {msg}");
        }
    }

    #[test]
    fn naive_coalescing_is_measured() {
        let ex = crate::exercise();
        for file in [format!("{REF}/conv2d_naive.cu"), format!("{MINE}/naive_restrict_ldg.cu")] {
            passes(&ex, "naive", "coalesced", Run::Check, &file);
        }
        let slow = format!("{SLOW}/conv2d_naive.cu");
        if let Some(msg) = fails(&ex, "naive", "coalesced", Run::Check, &slow) {
            assert!(msg.contains("sectors per request") && msg.contains("conv2d_naive.cu:"), "{msg}");
        }
        for file in [format!("{REF}/conv2d_naive.cu"), variant("ex12-naive-restrict-ldg", Variant::Naive)] {
            all_pass(&file, Variant::Naive, coalesced);
        }
        all_fail(&slow, Variant::Naive, "sectors per request", coalesced);
    }

    #[test]
    fn the_constant_mask_is_measured() {
        let ex = crate::exercise();
        for file in [format!("{REF}/conv2d_constant.cu"), format!("{MINE}/constant_clipped_loops.cu")] {
            passes(&ex, "constant", "mask-in-constant", Run::Check, &file);
            passes(&ex, "constant", "faster-than-global-mask", Run::StandIn, &file);
        }
        if let Some(msg) = fails(&ex, "constant", "mask-in-constant", Run::Check, &format!("{SLOW}/conv2d_constant.cu"))
        {
            assert!(msg.contains("constant-cache passes"), "{msg}");
        }
        fails(&ex, "constant", "faster-than-global-mask", Run::StandIn, &format!("{SLOW}/conv2d_constant.cu"));
        if let Some(msg) =
            fails(&ex, "constant", "mask-in-constant", Run::Check, &format!("{MINE}/constant_device_mask.cu"))
        {
            assert!(msg.contains("not read from constant memory"), "{msg}");
        }
        for file in [
            format!("{REF}/conv2d_constant.cu"),
            variant("ex12-constant-clipped-loops", Variant::Constant),
            variant("ex12-constant-unrolled", Variant::Constant),
            variant("ex12-constant-flat-restrict-ldg", Variant::Constant),
            // F copied into shared memory once per block: the lesson kept (issue 40).
            variant("ex12-constant-mask-copied-to-shared", Variant::Constant),
            variant("ex12-constant-mask-copied-to-shared-2d", Variant::Constant),
        ] {
            all_pass(&file, Variant::Constant, mask_in_constant);
        }
        all_fail(&format!("{SLOW}/conv2d_constant.cu"), Variant::Constant, "constant-cache passes", mask_in_constant);
        let device = variant("ex12-constant-device-mask", Variant::Constant);
        all_fail(&device, Variant::Constant, "not read from constant memory", mask_in_constant);
    }

    /// The cheat case ex12-constant-mask-only-where-measured: passes the
    /// measured check on the image the README used to announce, and fails it
    /// on every image the seed can draw now.
    #[test]
    fn a_kernel_that_uses_constant_memory_only_on_the_announced_image_fails() {
        let file = "grader/tests/cheats/ex12-constant-mask-only-where-measured/exercises/ex12-convolution/kernels/conv2d_constant.cu";
        for (shape, r) in on_shapes(file, Variant::Constant, &[(64, 48)], mask_in_constant) {
            r.unwrap_or_else(|e| panic!("{shape:?}: {e:#}"));
        }
        all_fail(file, Variant::Constant, "not read from constant memory", mask_in_constant);
        let ex = crate::exercise();
        if let Some(msg) = fails(&ex, "constant", "mask-in-constant", Run::Check, file) {
            assert!(msg.contains("not read from constant memory"), "{msg}");
        }
    }

    /// The cheat case ex12-constant-broadcast-only-on-the-simulator: broadcasts only where
    /// `%nsmid` is 1 and `%smid` 0, which the simulator no longer shows: it fails everywhere.
    #[test]
    fn a_kernel_that_broadcasts_only_on_a_one_sm_device_fails() {
        let file = "grader/tests/cheats/ex12-constant-broadcast-only-on-the-simulator/exercises/ex12-convolution/\
                    kernels/conv2d_constant.cu";
        let ex = crate::exercise();
        if let Some(msg) = fails(&ex, "constant", "mask-in-constant", Run::Check, file) {
            assert!(msg.contains("constant-cache passes per output"), "{msg}");
        }
        fails(&ex, "constant", "faster-than-global-mask", Run::StandIn, file);
    }

    #[test]
    fn the_staged_halo_is_measured() {
        let ex = crate::exercise();
        for file in [format!("{REF}/conv2d_tiled.cu"), format!("{MINE}/tiled_2d_loops.cu")] {
            passes(&ex, "tiled", "few-global-loads-per-output", Run::Check, &file);
            passes(&ex, "tiled", "faster-than-untiled", Run::StandIn, &file);
        }
        let slow = format!("{SLOW}/conv2d_tiled.cu");
        passes(&ex, "tiled", "few-global-loads-per-output", Run::Check, &slow);
        if let Some(msg) = fails(&ex, "tiled", "faster-than-untiled", Run::StandIn, &slow) {
            assert!(msg.contains("active lanes per global load"), "{msg}");
        }
        if let Some(msg) =
            fails(&ex, "tiled", "few-global-loads-per-output", Run::Check, &format!("{MINE}/tiled_cached_halo.cu"))
        {
            assert!(msg.contains("the halo"), "{msg}");
        }
        for file in [
            format!("{REF}/conv2d_tiled.cu"),
            variant("ex12-tiled-2d-loops", Variant::Tiled),
            variant("ex12-tiled-flat-pitch", Variant::Tiled),
            variant("ex12-tiled-edge-threads-halo", Variant::Tiled),
        ] {
            all_pass(&file, Variant::Tiled, warp_wide_fill);
        }
        all_pass(&slow, Variant::Tiled, halo_in_shared);
        all_fail(&slow, Variant::Tiled, "active lanes per global load", warp_wide_fill);
        all_fail(&variant("ex12-tiled-cached-halo", Variant::Tiled), Variant::Tiled, "the halo", halo_in_shared);
        // A tile filled down its columns: the fill's load named, with its sectors per request (issue 40).
        for case in ["ex12-tiled-fill-by-columns", "ex12-tiled-fill-2d-rows-from-x"] {
            let says = "sectors per warp request";
            all_fail(&variant(case, Variant::Tiled), Variant::Tiled, says, halo_in_shared);
        }
        // The tile staged only on grids of at most 65536 blocks: every measured image, not the timed one.
        let small =
            "grader/tests/cheats/ex12-tiled-only-on-small-grids/exercises/ex12-convolution/kernels/conv2d_tiled.cu";
        for (check, what) in [("few-global-loads-per-output", Run::Check), ("faster-than-untiled", Run::StandIn)] {
            if let Some(msg) = fails(&ex, "tiled", check, what, small) {
                assert!(msg.starts_with("at 8192x6400 (the timed size: 4 of its 204800 blocks"), "{msg}");
                // 49 taps per output, fewer where a sampled block lies on the image's edge.
                assert!(msg.contains("conv2d_tiled: 4") && msg.contains(" global loads per output (a tile"), "{msg}");
            }
        }
    }
}
