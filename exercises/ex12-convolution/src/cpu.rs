//! The CPU reference (in f64), the error bound a float kernel is held to, and
//! a comparison that says what the usual mistakes look like: pixels never
//! written, wrong pixels only along the border (the ghost cells), a row pitch
//! taken from the height, the mask read with a fixed stride of 7, the mask
//! flipped or transposed (a textbook convolution's flip, or i and j swapped).

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
    let mut image = kit::inputs::uniform_f32(rng, pixels, 0.0, 1.0);
    kit::inputs::plant(&mut image, &EDGES);
    image
}

/// The ends of the README's pixel range [0, 1), planted in every image (the
/// first pixel, the last, and between): 0 and the largest float below 1.
pub const EDGES: [f32; 2] = [0.0, 0.999_999_94];

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
    kit::cores::map_indexed(width * height, 1 << 14, |i| {
        conv_at(|y, x| image[y * width + x], mask, r, width, height, i / width, i % width)
    })
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

/// [`close_enough`] for some pixels of a `w` x `h` output only, given as
/// (index, value): what a launch of a few sampled blocks wrote;
/// `expected(i)` is pixel `i`'s `(value, magnitude)` ([`conv_at`]).
pub fn compare_at(
    written: &[(usize, f32)],
    expected: impl Fn(usize) -> (f64, f64),
    (r, w, h): (usize, usize, usize),
) -> Result<()> {
    let wrong: Vec<(usize, f32, f64)> = written
        .iter()
        .map(|&(i, got)| (i, got, expected(i)))
        .filter(|&(_, got, e)| !close_enough(got, e, r))
        .map(|(i, got, e)| (i, got, e.0))
        .collect();
    let Some(&(i, got, want)) = wrong.first() else { return Ok(()) };
    kit::check::record_matrix("out", h, w, wrong.iter().map(|&(i, _, _)| (i / w, i % w)));
    let got = if is_poison(&got) { "nothing (never written)".to_string() } else { format!("{got}") };
    bail!(
        "`out` ({w} x {h}): {} of the {} pixel(s) checked are wrong; the first is row {}, column {}: expected \
         {want}, got {got}",
        wrong.len(),
        written.len(),
        i / w,
        i % w
    )
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
    if width != height && matches_pitch(image, mask, r, (width, height), first, got[first], height) {
        msg += &format!(
            ", which is the sum with the rows taken {height} pixels long: a row of the image is width = {width} \
             pixels, so pixel (y, x) is in[y * width + x], not in[y * height + x]"
        );
    } else if r < MAX_MASK_RADIUS && matches_stride(image, mask, r, (width, height), first, got[first]) {
        msg += &stride_7_diagnosis(r);
    } else if let Some(how) = MaskOrder::ALL
        .into_iter()
        .find(|o| r > 0 && matches_mask(image, &o.apply(mask, r), r, (width, height), first, got[first]))
    {
        msg += &how.diagnosis(r);
    } else if r > 0 && (0..total).any(|i| !near_border(i)) && (0..total).filter(|&i| !ok(i)).all(near_border) {
        msg += &format!(
            ". Every wrong pixel is within r = {r} of the border, and the pixels further in are right: the taps \
             that fall outside the image (the ghost cells) must count as 0. Skip them (or store 0 in the tile) \
             when the row is outside 0 .. height - 1 or the column outside 0 .. width - 1; never read in[] there: \
             it is another row's pixel or outside the buffer"
        );
    } else if (0..total).any(|i| !near_border(i) && !ok(i)) {
        msg += &format!(
            ". Pixels far from the border are wrong too, so it is not only the ghost cells: work this pixel's \
             sum by hand. Tap (i, j), for i and j in 0 .. 2r (both ends included), weighs pixel (row - r + i, \
             col - r + j), that is in[(row - r + i) * width + (col - r + j)], with F[i * (2r + 1) + j] = \
             F[i * {w} + j]; the sum starts at 0 for every pixel",
            w = side(r)
        );
    }
    bail!(msg)
}

/// The message of a mask read with a stride of 7 (2 * MAX_MASK_RADIUS + 1)
/// whatever its radius `r`.
pub fn stride_7_diagnosis(r: usize) -> String {
    format!(
        ", which is the sum with the mask read with a stride of {}: with radius r the mask is (2r + 1) x \
         (2r + 1) = {w} x {w} values, so tap (i, j) is at i * (2r + 1) + j = i * {w} + j",
        side(MAX_MASK_RADIUS),
        w = side(r)
    )
}

/// The mask walked in another order than the pixels: the usual ways to get
/// the weights' order wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskOrder {
    /// F[(2r - i) * (2r + 1) + (2r - j)]: a textbook convolution's flip.
    Flipped,
    /// F[j * (2r + 1) + i]: i and j swapped.
    Transposed,
    /// F[(2r - i) * (2r + 1) + j]: the rows of the mask upside down.
    RowsFlipped,
    /// F[i * (2r + 1) + (2r - j)]: each row of the mask reversed.
    ColumnsFlipped,
}

impl MaskOrder {
    pub const ALL: [MaskOrder; 4] =
        [MaskOrder::Flipped, MaskOrder::Transposed, MaskOrder::RowsFlipped, MaskOrder::ColumnsFlipped];

    /// The weights a kernel that reads `mask` this way gives tap (i, j), in the tap order.
    pub fn apply(self, mask: &[f32], r: usize) -> Vec<f32> {
        let (w, last) = (side(r), 2 * r);
        let index = |i: usize, j: usize| match self {
            MaskOrder::Flipped => (last - i) * w + (last - j),
            MaskOrder::Transposed => j * w + i,
            MaskOrder::RowsFlipped => (last - i) * w + j,
            MaskOrder::ColumnsFlipped => i * w + (last - j),
        };
        (0..w * w).map(|k| mask[index(k / w, k % w)]).collect()
    }

    /// What the message says of a sum that matches this order.
    pub fn diagnosis(self, r: usize) -> String {
        let (w, last) = (side(r), 2 * r);
        let (what, index) = match self {
            MaskOrder::Flipped => (
                "the mask flipped (the taps reversed, as a textbook convolution flips its kernel)",
                format!("F[({last} - i) * {w} + ({last} - j)]"),
            ),
            MaskOrder::Transposed => ("the mask transposed (i and j swapped in its index)", format!("F[j * {w} + i]")),
            MaskOrder::RowsFlipped => ("the mask's rows upside down", format!("F[({last} - i) * {w} + j]")),
            MaskOrder::ColumnsFlipped => ("each row of the mask reversed", format!("F[i * {w} + ({last} - j)]")),
        };
        format!(
            ", which is the sum with {what}: the pixel (row - r + i, col - r + j) weighed with {index}. This \
             exercise, as PMPP's chapter 7, weighs it with F[i * (2r + 1) + j] = F[i * {w} + j]: walk the mask in \
             the same order as the pixels, the same i and j for both"
        )
    }
}

/// Whether `got` at pixel `i` is what a kernel computes with the weights `taps` in tap order.
fn matches_mask(image: &[f32], taps: &[f32], r: usize, (width, height): (usize, usize), i: usize, got: f32) -> bool {
    let pixel = |y: usize, x: usize| image[y * width + x];
    close_enough(got, conv_at(pixel, taps, r, width, height, i / width, i % width), r)
}

/// Whether a kernel's whole output `got` is the sum with the mask read with
/// a stride of 7, the weights after the (2r + 1)^2 of the mask being 0 (as
/// in `F`): proves the diagnosis where a reading past `mask` stopped the kernel.
pub fn read_with_stride_7(image: &[f32], mask: &[f32], got: &[f32], (r, width, height): (usize, usize, usize)) -> bool {
    r < MAX_MASK_RADIUS
        && !got.is_empty()
        && (0..got.len()).all(|i| matches_stride(image, mask, r, (width, height), i, got[i]))
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

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    fn poison() -> f32 {
        f32::from_bits(u32::from_ne_bytes([kit::gpu::POISON_BYTE; 4]))
    }

    /// What a float kernel computes: the taps in order, in f32.
    fn float_conv(image: &[f32], mask: &[f32], r: usize, width: usize, height: usize, pitch: usize) -> Vec<f32> {
        let w = side(r);
        (0..width * height)
            .map(|p| {
                let (row, col) = (p / width, p % width);
                let mut sum = 0.0f32;
                for i in 0..w {
                    for j in 0..w {
                        let (y, x) = ((row + i).wrapping_sub(r), (col + j).wrapping_sub(r));
                        if y < height && x < width {
                            sum += mask[i * w + j] * image.get(y * pitch + x).copied().unwrap_or(0.0);
                        }
                    }
                }
                sum
            })
            .collect()
    }

    fn case(seed: u64, w: usize, h: usize, r: usize) -> (Vec<f32>, Vec<f32>, Vec<(f64, f64)>) {
        let mut rng = rng_for(seed, "t");
        let image = image(&mut rng, w * h);
        let mask = mask(&mut rng, r);
        let expected = convolve(&image, &mask, r, w, h);
        (image, mask, expected)
    }

    #[test]
    fn a_float_kernel_is_within_the_bound_and_a_one_ulp_slip_of_a_large_term_is_not_hidden() {
        for (w, h, r) in [(1, 1, 3), (3, 2, 3), (17, 9, 2), (20, 13, 0)] {
            let (image, mask, expected) = case(1, w, h, r);
            let got = float_conv(&image, &mask, r, w, h, w);
            assert!(compare(&image, &mask, &expected, &got, (r, w, h)).is_ok(), "{w}x{h} r{r}");
        }
        // The bound: 2 γ_49 Σ|terms| ≈ 5.8e-6 Σ|terms|; a pixel read from the wrong place is far off.
        assert!((tolerance(49, 1.0) - 2.0 * 49.0 * 2f64.powi(-24) / (1.0 - 49.0 * 2f64.powi(-24))).abs() < 1e-9);
        assert!(tolerance(49, 10.0) < 1e-4);
    }

    #[test]
    fn unwritten_pixels_are_named() {
        let (w, h, r) = (9, 7, 1);
        let (image, mask, expected) = case(2, w, h, r);
        let mut got = float_conv(&image, &mask, r, w, h, w);
        got[2 * w + 8] = poison();
        let err = compare(&image, &mask, &expected, &got, (r, w, h)).unwrap_err().to_string();
        assert!(err.contains("never written, the first at row 2, column 8") && err.contains("row < height"), "{err}");
        let none = vec![poison(); w * h];
        assert!(compare(&image, &mask, &expected, &none, (r, w, h)).unwrap_err().to_string().contains("no pixel"));
    }

    #[test]
    fn ghost_cells_read_as_pixels_are_recognised() {
        let (w, h, r) = (12, 10, 2);
        let (image, mask, expected) = case(3, w, h, r);
        let mut got = float_conv(&image, &mask, r, w, h, w);
        // Taps left of column 0 read the previous row's last pixels (a missing column test).
        for row in 0..h {
            for col in 0..r {
                got[row * w + col] += 0.5;
            }
        }
        let err = compare(&image, &mask, &expected, &got, (r, w, h)).unwrap_err().to_string();
        assert!(err.contains("within r = 2 of the border") && err.contains("ghost cells"), "{err}");
    }

    #[test]
    fn a_flipped_or_transposed_mask_is_recognised_and_other_wrong_sums_get_a_hint() {
        let (w, h, r) = (11, 9, 2);
        let (image, mask, expected) = case(5, w, h, r);
        for order in MaskOrder::ALL {
            let got = float_conv(&image, &order.apply(&mask, r), r, w, h, w);
            let err = compare(&image, &mask, &expected, &got, (r, w, h)).unwrap_err().to_string();
            assert!(err.contains(&order.diagnosis(r)), "{order:?}: {err}");
        }
        let flipped = MaskOrder::Flipped.diagnosis(r);
        assert!(flipped.contains("flipped") && flipped.contains("F[(4 - i) * 5 + (4 - j)]"), "{flipped}");
        // A sum one tap short everywhere: no recognised mistake, but what each tap is.
        let mut short = mask.clone();
        short[12] = 0.0;
        let got = float_conv(&image, &short, r, w, h, w);
        let err = compare(&image, &mask, &expected, &got, (r, w, h)).unwrap_err().to_string();
        assert!(err.contains("far from the border") && err.contains("F[i * 5 + j]"), "{err}");
    }

    #[test]
    fn a_pitch_from_the_height_and_a_stride_of_seven_are_recognised() {
        let (w, h, r) = (6, 9, 1);
        let (image, mask, expected) = case(4, w, h, r);
        let got = float_conv(&image, &mask, r, w, h, h);
        let err = compare(&image, &mask, &expected, &got, (r, w, h)).unwrap_err().to_string();
        assert!(err.contains("in[y * width + x], not in[y * height + x]"), "{err}");
        // F[i * 7 + j] with r = 1: the grader's F holds the 9 values then zeros.
        let all = constant_mask(&mask);
        let strided: Vec<f32> = (0..9).map(|k| all[(k / 3) * 7 + k % 3]).collect();
        let got = float_conv(&image, &strided, r, w, h, w);
        let err = compare(&image, &mask, &expected, &got, (r, w, h)).unwrap_err().to_string();
        assert!(err.contains("stride of 7") && err.contains("i * 3 + j"), "{err}");
        assert!(read_with_stride_7(&image, &mask, &got, (r, w, h)));
        assert!(!read_with_stride_7(&image, &mask, &float_conv(&image, &mask, r, w, h, w), (r, w, h)));
    }
}
