//! The CPU reference (in f64), the error bound a float kernel is held to, and
//! a comparison that says what the usual mistakes look like: pixels never
//! written, wrong pixels only along the border (the ghost cells), a row pitch
//! taken from the height, the mask read with a fixed stride of 7.

use anyhow::{bail, Result};
use kit::check::is_poison;
use rand::Rng;

use crate::MAX_MASK_RADIUS;

/// Mask side for radius `r`: 2r + 1.
pub const fn side(r: usize) -> usize {
    2 * r + 1
}

/// Floats in the `__constant__` array `F`: (2 * MAX_MASK_RADIUS + 1)^2.
pub const MASK_CAPACITY: usize = side(MAX_MASK_RADIUS) * side(MAX_MASK_RADIUS);

/// An image of `pixels` values in [0, 1): every pixel distinct enough that one
/// read from the wrong place shows.
pub fn image(rng: &mut impl Rng, pixels: usize) -> Vec<f32> {
    kit::inputs::uniform_f32(rng, pixels, 0.0, 1.0)
}

/// A (2r + 1)^2 mask of values in [-1, 1): not symmetric, so that a mask read
/// transposed or flipped gives other sums.
pub fn mask(rng: &mut impl Rng, r: usize) -> Vec<f32> {
    kit::inputs::uniform_f32(rng, side(r) * side(r), -1.0, 1.0)
}

/// `mask` followed by zeros up to [`MASK_CAPACITY`]: what the grader writes
/// into `F` (the whole array, so nothing of an earlier launch stays).
pub fn constant_mask(mask: &[f32]) -> Vec<f32> {
    let mut all = mask.to_vec();
    all.resize(MASK_CAPACITY, 0.0);
    all
}

/// Output pixel (row, col) in f64, and the sum of the magnitudes of its terms
/// (for the error bound). `pixel(y, x)` is the input; ghost cells are 0.
pub fn conv_at(
    pixel: impl Fn(usize, usize) -> f32,
    mask: &[f32],
    r: usize,
    width: usize,
    height: usize,
    row: usize,
    col: usize,
) -> (f64, f64) {
    let w = side(r);
    let (mut sum, mut magnitude) = (0.0f64, 0.0f64);
    for i in 0..w {
        let Some(y) = (row + i).checked_sub(r).filter(|&y| y < height) else { continue };
        for j in 0..w {
            let Some(x) = (col + j).checked_sub(r).filter(|&x| x < width) else { continue };
            let term = mask[i * w + j] as f64 * pixel(y, x) as f64;
            sum += term;
            magnitude += term.abs();
        }
    }
    (sum, magnitude)
}

/// The whole convolution: (expected value, sum of |terms|) per output pixel.
pub fn convolve(image: &[f32], mask: &[f32], r: usize, width: usize, height: usize) -> Vec<(f64, f64)> {
    (0..width * height)
        .map(|i| conv_at(|y, x| image[y * width + x], mask, r, width, height, i / width, i % width))
        .collect()
}

/// How far a float kernel's sum of `terms` products may be from the exact one:
/// twice the classical bound of a dot product in floats, γ_k · Σ|mask · pixel|
/// with γ_k = k·u / (1 − k·u) and u = 2^-24 (any order of the additions, with
/// or without fused multiply-adds), plus the smallest normal float.
pub fn tolerance(terms: usize, magnitude: f64) -> f64 {
    let u = f32::EPSILON as f64 / 2.0;
    let k = terms as f64;
    2.0 * (k * u / (1.0 - k * u)) * magnitude + f32::MIN_POSITIVE as f64
}

/// Whether `got` is within the bound of the expected `(value, magnitude)` for a mask of radius `r`.
pub fn close_enough(got: f32, expected: (f64, f64), r: usize) -> bool {
    (got as f64 - expected.0).abs() <= tolerance(side(r) * side(r), expected.1)
}

/// Compares the kernel's `out` with the reference; records where it is wrong
/// for the report's heat map; names the first wrong pixel and the likely bug.
pub fn compare(
    image: &[f32],
    mask: &[f32],
    expected: &[(f64, f64)],
    got: &[f32],
    (r, width, height): (usize, usize, usize),
) -> Result<()> {
    let total = width * height;
    let ok = |i: usize| close_enough(got[i], expected[i], r);
    let at = |i: usize| (i / width, i % width);
    kit::check::record_matrix("out", height, width, (0..total).filter(|&i| !ok(i)).map(at));
    let Some(first) = (0..total).find(|&i| !ok(i)) else { return Ok(()) };
    let wrong = (0..total).filter(|&i| !ok(i)).count();
    let unwritten = (0..total).filter(|&i| is_poison(&got[i])).count();
    let (row, col) = at(first);
    let size = format!("(the image is width = {width} columns by height = {height} rows, mask radius r = {r})");
    if unwritten == total {
        bail!("`out`: no pixel was written {size}: did the kernel run its TODO yet?");
    }
    if is_poison(&got[first]) {
        bail!(
            "`out`: {wrong} of {total} pixels wrong, {unwritten} of them never written, the first at row {row}, \
             column {col} {size}. One thread per output: the column comes from the x indices (blockIdx.x * \
             blockDim.x + threadIdx.x) up to width - 1, the row from the y ones up to height - 1, the guard is \
             `row < height && col < width`, and pixel (row, col) is out[row * width + col]"
        );
    }
    let (value, magnitude) = expected[first];
    let mut msg = format!(
        "`out`: {wrong} of {total} pixels wrong {size}; the first at row {row}, column {col}: expected {value} \
         (within {:.2e}), got {}",
        tolerance(side(r) * side(r), magnitude),
        got[first]
    );
    let near_border = |i: usize| {
        let (y, x) = at(i);
        y < r || x < r || y + r >= height || x + r >= width
    };
    if r > 0 && (0..total).filter(|&i| !ok(i)).all(near_border) {
        msg += &format!(
            ". Every wrong pixel is within r = {r} of the border: the taps that fall outside the image (the ghost \
             cells) must count as 0. Skip them (or store 0 in the tile) when the row is outside 0 .. height - 1 \
             or the column outside 0 .. width - 1; never read in[] there: it is another row's pixel or outside \
             the buffer"
        );
    } else if width != height && matches_pitch(image, mask, r, (width, height), first, got[first], height) {
        msg += &format!(
            ", which is the sum with the rows taken {height} pixels long: a row of the image is width = {width} \
             pixels, so pixel (y, x) is in[y * width + x], not in[y * height + x]"
        );
    } else if r < MAX_MASK_RADIUS && matches_stride(image, mask, r, (width, height), first, got[first]) {
        msg += &format!(
            ", which is the sum with the mask read with a stride of {}: with radius r the mask is (2r + 1) x \
             (2r + 1) = {w} x {w} values, so tap (i, j) is at i * (2r + 1) + j = i * {w} + j",
            side(MAX_MASK_RADIUS),
            w = side(r)
        );
    }
    bail!(msg)
}

/// Whether `got` at pixel `i` is what a kernel computes reading input row `y` at `y * pitch`.
fn matches_pitch(
    image: &[f32],
    mask: &[f32],
    r: usize,
    (width, height): (usize, usize),
    i: usize,
    got: f32,
    pitch: usize,
) -> bool {
    let pixel = |y: usize, x: usize| image.get(y * pitch + x).copied().unwrap_or(0.0);
    close_enough(got, conv_at(pixel, mask, r, width, height, i / width, i % width), r)
}

/// Whether `got` at pixel `i` is what a kernel computes reading tap (i, j) at `i * 7 + j`.
fn matches_stride(image: &[f32], mask: &[f32], r: usize, (width, height): (usize, usize), i: usize, got: f32) -> bool {
    let wide = side(MAX_MASK_RADIUS);
    let mut strided = constant_mask(mask);
    let w = side(r);
    for a in 0..w {
        for b in 0..w {
            strided[a * w + b] = mask.get(a * wide + b).copied().unwrap_or(0.0);
        }
    }
    let pixel = |y: usize, x: usize| image[y * width + x];
    close_enough(got, conv_at(pixel, &strided[..w * w], r, width, height, i / width, i % width), r)
}
