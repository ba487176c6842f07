//! ex12's memory lessons judged by what the kernels do to memory
//! (kit::measure): each kernel convolves a small fixed image on a private
//! simulator, and the checks read its memory profile. Deterministic: the same
//! figures on every backend.
//!
//! The measured image is 64 x 48 pixels (4 x 3 whole blocks of 16 x 16, not
//! square) with a 7 x 7 mask (r = 3). Of the 49 taps of an output, 45.98 fall
//! inside the image on average (the rest are ghost cells).
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
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, Measurement};
use kit::Ctx;

use crate::{convolve_on, cpu, Variant, MAX_MASK_RADIUS, TILE};

/// The measured image: whole blocks (the ideal figures are exact), not square.
pub const MEASURE_W: usize = 64;
pub const MEASURE_H: usize = 48;
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
pub const MAX_CONSTANT_LOADS_PER_OUTPUT: f64 = (cpu::side(MEASURE_R) * cpu::side(MEASURE_R) + 1) as f64;
/// Constant-cache passes per warp-level constant load at or under which the
/// mask is read as broadcasts (the reference: 1.00; loops clipped per thread
/// at the border, calibration/constant_clipped_loops.cu: 1.63; each thread
/// starting at its own tap, reference/slow: 15.2).
pub const MAX_CONST_PASSES: f64 = 4.0;
/// `tiled::halo-in-shared`: global loads per output at or under which the
/// image comes from a staged tile (the reference: 1.60; the halo read from
/// global memory through the caches: about 8; untiled: 45.98).
pub const MAX_TILED_LOADS_PER_OUTPUT: f64 = 3.0;
/// Stand-in for `tiled::perf`: active lanes per global load at or above which
/// whole warps fill the tile (the reference: about 28; one loader per block: 1).
pub const MIN_LANES_PER_LOAD: f64 = 16.0;

/// Outputs of the measured image.
pub const fn outputs() -> usize {
    MEASURE_W * MEASURE_H
}

/// Image taps per output that fall inside the measured image (45.98).
pub fn inside_taps_per_output() -> f64 {
    let clipped = |n: usize| -> usize {
        (0..n)
            .map(|p| {
                (0..cpu::side(MEASURE_R)).filter(|&k| (p + k).checked_sub(MEASURE_R).is_some_and(|q| q < n)).count()
            })
            .sum()
    };
    (clipped(MEASURE_W) * clipped(MEASURE_H)) as f64 / outputs() as f64
}

/// Pixels of the blocks' (16 + 2r)^2 tiles that lie inside the measured image:
/// what a tiled kernel loads, each once (4920).
pub fn staged_pixels() -> usize {
    let t = TILE as usize;
    let tiles = |n: usize| -> usize {
        (0..n.div_ceil(t)).map(|b| (b * t + t + MEASURE_R).min(n) - (b * t).saturating_sub(MEASURE_R)).sum()
    };
    tiles(MEASURE_W) * tiles(MEASURE_H)
}

pub fn measure(ctx: &Ctx, v: Variant) -> Result<Measurement> {
    let (w, h, r) = (MEASURE_W, MEASURE_H, MEASURE_R);
    let mut rng = kit::inputs::rng_for(0, "measure");
    let image = cpu::image(&mut rng, w * h);
    let mask = cpu::mask(&mut rng, r);
    ctx.measure(v.kernel(), |module| {
        let got = convolve_on(module, v, &image, &mask, (w, h, r))?;
        let expected = cpu::convolve(&image, &mask, r, w, h);
        kit::measure::require_right_result(cpu::compare(&image, &mask, &expected, &got, (r, w, h)))
    })
}

fn per_output(count: u64) -> f64 {
    count as f64 / outputs() as f64
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

fn figures(m: &Measurement) -> String {
    format!(
        "per output on a {MEASURE_W} x {MEASURE_H} image, 7 x 7 mask: {:.2} global loads ({:.2} taps inside the \
         image), {:.2} constant loads ({:.2} constant-cache passes per load), {:.2} shared loads (warp requests x 32); global sectors \
         per request: loads {:.1}, stores {:.1}; {:.1} active lanes per global load",
        per_output(global_floats(m)),
        inside_taps_per_output(),
        per_output(m.thread_const_loads()),
        m.const_passes_per_request(),
        per_output(m.stats.shared_load_requests * 32),
        m.load_sectors_per_request(),
        m.store_sectors_per_request(),
        global_floats_per_request(m)
    )
}

/// `naive`: the image read along rows, threads of a warp on neighbouring columns.
pub fn coalesced(m: &Measurement) -> Result<String> {
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
    unless_unmeasurable(measure(ctx, Variant::Naive).and_then(|m| coalesced(&m)))
}

/// `constant`: the mask read from constant memory, as broadcasts.
pub fn mask_in_constant(m: &Measurement) -> Result<String> {
    let global = per_output(global_floats(m));
    if m.stats.const_load_requests == 0 || global > MAX_CONSTANT_LOADS_PER_OUTPUT {
        bail!(
            "{}: {global:.2} global loads and {:.2} constant loads per output (the image's taps: {:.2}; at most \
             {MAX_CONSTANT_LOADS_PER_OUTPUT} global){}: the mask is not read from constant memory. Read it from \
             `F`, the `__constant__ float` array declared at file scope (not `__device__`, not a copy in global \
             memory): the grader writes the mask there before every launch",
            m.kernel,
            per_output(m.thread_const_loads()),
            inside_taps_per_output(),
            most_at(m)
        );
    }
    let passes = m.const_passes_per_request();
    if passes > MAX_CONST_PASSES {
        bail!(
            "{}: {passes:.2} constant-cache passes per constant load (a broadcast: 1; at most {MAX_CONST_PASSES}): \
             the threads of a warp read different mask elements at the same time, and constant memory serves a \
             warp one address at a time, so the reads are serialized. Walk the taps in the same order in every \
             thread (F[i * (2r + 1) + j] with i and j the loop counters, not shifted by threadIdx), so that each \
             constant load is one element for the whole warp ({})",
            m.kernel,
            figures(m)
        );
    }
    Ok(figures(m))
}

/// The structure check `constant::mask-in-constant`.
pub fn mask_in_constant_check(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(measure(ctx, Variant::Constant).and_then(|m| mask_in_constant(&m)))
}

/// Stand-in for `constant::perf::faster-than-global-mask`: what a constant mask
/// saves (the mask's global loads, read instead as broadcasts), measured.
pub fn mask_in_constant_stand_in(ctx: &Ctx) -> Result<String> {
    mask_in_constant(&measure(ctx, Variant::Constant)?)
}

/// `tiled`: the image staged once per tile, halo included; the mask in constant memory.
pub fn halo_in_shared(m: &Measurement) -> Result<String> {
    let global = per_output(global_floats(m));
    let staged = staged_pixels() as f64;
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
            staged / outputs() as f64,
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
    Ok(format!(
        "image loaded {:.2} times per pixel of the tiles and halos ({} loads, {staged} tile pixels inside the \
         image); {}",
        global_floats(m) as f64 / staged,
        global_floats(m),
        figures(m)
    ))
}

/// The structure check `tiled::halo-in-shared`.
pub fn halo_in_shared_check(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(measure(ctx, Variant::Tiled).and_then(|m| halo_in_shared(&m)))
}

/// Stand-in for `tiled::perf::faster-than-untiled`: the tile staged, by whole warps.
pub fn warp_wide_fill_stand_in(ctx: &Ctx) -> Result<String> {
    let m = measure(ctx, Variant::Tiled)?;
    let line = halo_in_shared(&m)?;
    let lanes = global_floats_per_request(&m);
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
        assert!((inside_taps_per_output() - 141_264.0 / 3072.0).abs() < 1e-9);
        assert_eq!(staged_pixels(), 82 * 60);
        assert_eq!(MAX_CONSTANT_LOADS_PER_OUTPUT, 50.0);
    }

    const MINE: &str = "exercises/ex12-convolution/calibration";
    const REF: &str = "reference/ex12-convolution/kernels";
    const SLOW: &str = "reference/slow/ex12-convolution/kernels";

    #[test]
    fn naive_coalescing_is_measured() {
        let ex = crate::exercise();
        for file in [format!("{REF}/conv2d_naive.cu"), format!("{MINE}/naive_restrict_ldg.cu")] {
            passes(&ex, "naive", "coalesced", Run::Check, &file);
        }
        if let Some(msg) = fails(&ex, "naive", "coalesced", Run::Check, &format!("{SLOW}/conv2d_naive.cu")) {
            assert!(msg.contains("sectors per request") && msg.contains("conv2d_naive.cu:"), "{msg}");
        }
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
    }

    #[test]
    fn the_staged_halo_is_measured() {
        let ex = crate::exercise();
        for file in [format!("{REF}/conv2d_tiled.cu"), format!("{MINE}/tiled_2d_loops.cu")] {
            passes(&ex, "tiled", "halo-in-shared", Run::Check, &file);
            passes(&ex, "tiled", "faster-than-untiled", Run::StandIn, &file);
        }
        let slow = format!("{SLOW}/conv2d_tiled.cu");
        passes(&ex, "tiled", "halo-in-shared", Run::Check, &slow);
        if let Some(msg) = fails(&ex, "tiled", "faster-than-untiled", Run::StandIn, &slow) {
            assert!(msg.contains("active lanes per global load"), "{msg}");
        }
        if let Some(msg) = fails(&ex, "tiled", "halo-in-shared", Run::Check, &format!("{MINE}/tiled_cached_halo.cu")) {
            assert!(msg.contains("the halo"), "{msg}");
        }
    }
}
