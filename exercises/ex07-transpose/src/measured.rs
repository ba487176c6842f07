//! ex07's techniques judged by what they do to memory (kit::measure): the
//! kernel transposes a small fixed matrix on a private simulator, and the checks
//! read its global sectors per request (coalescing) and shared passes per
//! request (bank conflicts). A swizzled tile is as conflict-free as a padded one;
//! a padded tile indexed with a pitch of 32 is not.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, Measurement};
use kit::{args, Ctx};

use crate::{launch_config, TILE_DIM};

/// The measured input: `in` has MEASURE_HEIGHT rows of MEASURE_WIDTH floats.
/// Whole tiles (so that ideal figures are exact), and not square (so that a
/// stride taken from the wrong side shows).
pub const MEASURE_WIDTH: usize = 96;
pub const MEASURE_HEIGHT: usize = 64;
/// Sectors per global request a coalesced kernel stays at or under. A warp
/// moving 32 consecutive floats touches 4; a column walk touches 32. Calibrated
/// in CALIBRATION.md ("Measured structure").
pub const MAX_SECTORS_PER_REQUEST: f64 = 8.0;
/// Shared-memory passes per request a conflict-free tile stays at or under:
/// 1 without conflicts; the unpadded tile's column reads take 32. See CALIBRATION.md.
pub const MAX_SHARED_PASSES: f64 = 2.0;

/// Runs `kernel` once on the measured input.
pub fn measure(ctx: &Ctx, kernel: &str) -> Result<Measurement> {
    let (w, h) = (MEASURE_WIDTH, MEASURE_HEIGHT);
    ctx.measure(kernel, |module| {
        let gpu = module.gpu();
        let enc = crate::cpu::Encoding::random(&mut kit::inputs::rng_for(0, "measure"));
        let input = gpu.upload("in", &enc.matrix(w, h))?;
        let out = gpu.poisoned::<f32>("out", w * h)?;
        module.launch(kernel, launch_config(w, h), &args![&out, &input, w as i32, h as i32])?;
        kit::measure::require_right_result(crate::cpu::compare(&enc, w, h, &out.read()?))
    })
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
pub fn coalesced(m: &Measurement) -> Result<String> {
    let loads = m.load_sectors_per_request();
    if loads > MAX_SECTORS_PER_REQUEST {
        bail!(
            "{}: loads: {loads:.1} sectors per request (ideal 4){}: consecutive threads read addresses {} bytes \
             apart. Read `in` with threadIdx.x walking along a row: in[(y + j) * width + x] with x from threadIdx.x",
            m.kernel,
            worst_at(m.worst_global(AccessKind::GlobalLoad)),
            MEASURE_WIDTH * 4
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
            MEASURE_HEIGHT * 4
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

/// The structure check `shared-tile`: global memory read and written in rows.
/// When it fails and the PTX shows no shared memory at all, say that first.
pub fn shared_tile(ctx: &Ctx, kernel: &str) -> Result<String> {
    let result = measure(ctx, kernel).and_then(|m| coalesced(&m));
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
    unless_unmeasurable(measure(ctx, "transpose_padded").and_then(|m| conflict_free(&m)))
}

/// Stand-in for `padded::perf::faster-than-unpadded-tile`: [`padded_tile`], but
/// a kernel the simulator cannot run is not graded rather than passed.
pub fn padded_tile_strict(ctx: &Ctx) -> Result<String> {
    conflict_free(&measure(ctx, "transpose_padded")?)
}

/// Stand-in for `padded::perf::share-of-copy`: coalesced and conflict-free, as the copy is.
pub fn copy_like(ctx: &Ctx) -> Result<String> {
    let m = measure(ctx, "transpose_padded")?;
    coalesced(&m)?;
    conflict_free(&m)
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    const REF: &str = "reference/ex07-transpose/kernels";
    const SLOW: &str = "reference/slow/ex07-transpose/kernels";
    const PLANTED: &str = "grader/tests/planted/ex07-transpose/kernels";
    const MINE: &str = "exercises/ex07-transpose/calibration";

    fn ex() -> kit::Exercise {
        crate::exercise()
    }

    #[test]
    fn coalesced_is_measured_not_spelled() {
        let ex = ex();
        for file in [format!("{REF}/transpose_coalesced.cu"), format!("{MINE}/transpose_coalesced_restrict.cu")] {
            passes(&ex, "coalesced", "shared-tile", Run::Check, &file);
            passes(&ex, "coalesced", "faster-than-naive", Run::StandIn, &file);
        }
        for file in [
            format!("{SLOW}/transpose_coalesced.cu"),
            format!("{PLANTED}/transpose_coalesced.cu"),
            format!("{MINE}/transpose_coalesced_unused_tile.cu"),
        ] {
            if let Some(msg) = fails(&ex, "coalesced", "shared-tile", Run::Check, &file) {
                assert!(msg.contains("stores: 32.0 sectors per request (ideal 4)"), "{file}: {msg}");
                assert!(msg.contains("transpose_coalesced.cu:") || msg.contains("unused_tile.cu:"), "{msg}");
            }
            fails(&ex, "coalesced", "faster-than-naive", Run::StandIn, &file);
        }
    }

    #[test]
    fn padding_is_measured_not_spelled() {
        let ex = ex();
        for file in [format!("{REF}/transpose_padded.cu"), format!("{MINE}/transpose_padded_swizzle.cu")] {
            for check in ["shared-tile", "padded-tile"] {
                passes(&ex, "padded", check, Run::Check, &file);
            }
            for perf in ["share-of-copy", "faster-than-unpadded-tile"] {
                passes(&ex, "padded", perf, Run::StandIn, &file);
            }
        }
        for file in [format!("{SLOW}/transpose_padded.cu"), format!("{PLANTED}/transpose_padded.cu")] {
            passes(&ex, "padded", "shared-tile", Run::Check, &file);
            if let Some(msg) = fails(&ex, "padded", "padded-tile", Run::Check, &file) {
                assert!(msg.contains("passes per request (ideal 1)"), "{msg}");
            }
            for perf in ["share-of-copy", "faster-than-unpadded-tile"] {
                fails(&ex, "padded", perf, Run::StandIn, &file);
            }
        }
    }
}
