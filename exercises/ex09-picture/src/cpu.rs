//! The CPU reference (in f64) and a comparison that says what a wrong 2D
//! mapping looks like: pixels never written (a guard or a grid that misses
//! the last columns or rows), and values that come from the pixel at
//! `Row * m + Col` (the row pitch taken from the height instead of the width).

use anyhow::{bail, Result};
use kit::check::is_poison;
use rand::Rng;

/// What every pixel is multiplied by.
pub const FACTOR: f64 = 2.0;

/// An image of `pixels` values in [0, 256), as 8-bit intensities with a
/// fraction: every value distinct enough that a pixel read from the wrong
/// place shows.
pub fn image(rng: &mut impl Rng, pixels: usize) -> Vec<f32> {
    kit::inputs::uniform_f32(rng, pixels, 0.0, 256.0)
}

/// The ends of the README's range [0, 256) planted in every correctness
/// image ([`kit::inputs::plant`]): 0.0 (which a kernel that doubles by adding
/// 1 to the exponent bits turns into 2^-126), the smallest subnormal and the
/// smallest normal float, and the largest float below 256.
pub const EDGES: [f32; 4] = [0.0, f32::from_bits(1), f32::MIN_POSITIVE, 255.999_98];

/// A correctness image: [`image`] with [`EDGES`] planted (the first pixel,
/// the last, and two between).
pub fn correctness_image(rng: &mut impl Rng, pixels: usize) -> Vec<f32> {
    let mut image = image(rng, pixels);
    kit::inputs::plant(&mut image, &EDGES);
    image
}

/// `out = FACTOR * in`, in f64 (a float times 2 is exact, so any correct
/// kernel matches it to the bit).
pub fn scaled(image: &[f32]) -> Vec<f64> {
    image.iter().map(|&p| FACTOR * p as f64).collect()
}

/// Compares the kernel's `d_Pout` (n columns, m rows, row-major) with the
/// reference; records where it is wrong for the report's heat map.
pub fn compare(input: &[f32], expected: &[f64], got: &[f32], n: usize, m: usize) -> Result<()> {
    let ok = |i: usize| got[i] as f64 == expected[i];
    let at = |i: usize| (i / n, i % n);
    let total = n * m;
    kit::check::record_matrix("d_Pout", m, n, (0..total).filter(|&i| !ok(i)).map(at));
    let Some(first) = (0..total).find(|&i| !ok(i)) else { return Ok(()) };
    let wrong = (0..total).filter(|&i| !ok(i)).count();
    let unwritten = (0..total).filter(|&i| is_poison(&got[i])).count();
    let (row, col) = at(first);
    if unwritten == total {
        bail!(
            "`d_Pout`: no pixel was written (the image has {n} columns and {m} rows): did the kernel run its TODO yet?"
        );
    }
    let tail_unwritten = (first..total).all(|i| is_poison(&got[i])) && (0..first).all(|i| !is_poison(&got[i]));
    if tail_unwritten && first % n != 0 && n > m {
        bail!(
            "`d_Pout`: the last {unwritten} of {total} pixels were never written, from row {row}, column {col} on \
             (the image has n = {n} columns and m = {m} rows), and every pixel before them was. The kernel writes \
             too few distinct places: a row of the image is n = {n} pixels long, so pixel (Row, Col) is at \
             Row * n + Col, not Row * m + Col"
        );
    }
    if is_poison(&got[first]) {
        bail!(
            "`d_Pout`: {wrong} of {total} pixels wrong, {unwritten} of them never written, the first at row {row}, \
             column {col} (the image has n = {n} columns and m = {m} rows). Col comes from the x indices \
             (blockIdx.x * blockDim.x + threadIdx.x) and runs up to n - 1, Row from the y indices up to m - 1, and the \
             guard is `Row < m && Col < n`"
        );
    }
    let mut msg = format!(
        "`d_Pout`: {wrong} of {total} pixels wrong; the first at row {row}, column {col} (index {first}): expected {}, \
         got {}",
        expected[first], got[first]
    );
    // The pixel the usual bug reads instead: Row * m + Col.
    let swapped = row * m + col;
    if n != m && swapped < total && got[first] as f64 == FACTOR * input[swapped] as f64 {
        msg += &format!(
            ", which is 2 x the pixel at index Row * m + Col = {swapped}: a row of the image is n = {n} pixels long, \
             so pixel (Row, Col) is at Row * n + Col"
        );
    }
    bail!(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    fn poison() -> f32 {
        f32::from_bits(u32::from_ne_bytes([kit::gpu::POISON_BYTE; 4]))
    }

    #[test]
    fn reference_scales_every_pixel_exactly() {
        let img = image(&mut rng_for(1, "t"), 12);
        let expected = scaled(&img);
        let got: Vec<f32> = img.iter().map(|p| 2.0 * p).collect();
        assert!(compare(&img, &expected, &got, 4, 3).is_ok());
        assert!(img.iter().all(|p| (0.0..256.0).contains(p)));
    }

    #[test]
    fn a_missed_column_is_named_with_the_guard() {
        let (n, m) = (5, 3);
        let img = image(&mut rng_for(2, "t"), n * m);
        let expected = scaled(&img);
        let mut got: Vec<f32> = img.iter().map(|p| 2.0 * p).collect();
        for r in 0..m {
            got[r * n + 4] = poison();
        }
        let err = compare(&img, &expected, &got, n, m).unwrap_err().to_string();
        assert!(err.contains("3 of 15 pixels wrong, 3 of them never written, the first at row 0, column 4"), "{err}");
        assert!(err.contains("Row < m && Col < n"), "{err}");
        let none = vec![poison(); n * m];
        assert!(compare(&img, &expected, &none, n, m).unwrap_err().to_string().contains("no pixel was written"));
    }

    #[test]
    fn a_pitch_from_the_height_is_named_on_a_wide_image() {
        let (n, m) = (7, 4);
        let img = image(&mut rng_for(4, "t"), n * m);
        let expected = scaled(&img);
        // What `d_Pout[Row * m + Col] = 2 * d_Pin[Row * m + Col]` leaves: the tail unwritten.
        let mut got = vec![poison(); n * m];
        for (row, col) in (0..m).flat_map(|r| (0..n).map(move |c| (r, c))) {
            got[row * m + col] = 2.0 * img[row * m + col];
        }
        let err = compare(&img, &expected, &got, n, m).unwrap_err().to_string();
        assert!(err.contains("the last 9 of 28 pixels were never written") && err.contains("Row * n + Col"), "{err}");
    }

    #[test]
    fn the_wrong_row_pitch_is_recognised() {
        let (n, m) = (6, 4);
        let img = image(&mut rng_for(3, "t"), n * m);
        let expected = scaled(&img);
        // What `d_Pout[Row * n + Col] = 2 * d_Pin[Row * m + Col]` writes.
        let got: Vec<f32> = (0..n * m).map(|i| 2.0 * img[(i / n) * m + i % n]).collect();
        let err = compare(&img, &expected, &got, n, m).unwrap_err().to_string();
        assert!(err.contains("Row * m + Col") && err.contains("row 1, column 0"), "{err}");
    }
}
