//! Comparisons that explain themselves: which element, what was expected, what
//! came back, how many are wrong, and whether they were never written at all.
//! Each fails with a message a student can act on, and records where the
//! output is wrong for the report's map ([`record_matrix`] for a check with a
//! comparison of its own).
//!
//! ```
//! let expected = [3u32, 1, 4, 1];
//! let got = [3u32, 1, 5, u32::MAX]; // u32::MAX: the poison, never written
//! let e = kit::check::exact("bins", &expected, &got).unwrap_err().to_string();
//! assert!(e.contains("2 of 4 element(s) wrong; first at index 2: expected 4, got 5"), "{e}");
//! ```

use std::fmt::Debug;

use anyhow::{bail, Result};
use bytemuck::Pod;

use crate::gpu::POISON_BYTE;

/// True when every byte of `x` still holds the poison pattern written before
/// the launch: say "never written" rather than print a NaN.
///
/// ```
/// assert!(kit::check::is_poison(&f32::from_bits(0xFFFF_FFFF)));
/// assert!(!kit::check::is_poison(&1.5f32));
/// ```
pub fn is_poison<T: Pod>(x: &T) -> bool {
    bytemuck::bytes_of(x).iter().all(|&b| b == POISON_BYTE)
}

/// Exact comparison, for integer results (and floats where the arithmetic is
/// exact): the first wrong element, expected, got, and how many were never written.
///
/// ```
/// assert!(kit::check::exact("bins", &[1u32, 2], &[1, 2]).is_ok());
/// let e = kit::check::exact("out", &[1i32, 2, 3], &[-1, -1, -1]).unwrap_err().to_string();
/// assert!(e.contains("No element was written"), "{e}");
/// ```
pub fn exact<T: Pod + PartialEq + Debug>(what: &str, expected: &[T], actual: &[T]) -> Result<()> {
    compare(what, expected, actual, |e, a| e == a, |e, a| (format!("{e:?}"), format!("{a:?}")))
}

/// Float results against an f64 reference: |actual - expected| <= rel * |expected| + abs.
/// Choose the bound from the arithmetic (a sum of k floats: about k × 2⁻²⁴
/// relative), and say why in the exercise.
///
/// ```
/// let expected = [1.0f64, 2.0, 1e-3];
/// kit::check::close("out", &expected, &[1.0f32, 2.000001, 1.0001e-3], 1e-5, 1e-6).unwrap();
/// assert!(kit::check::close("out", &expected, &[1.0f32, 2.1, 1e-3], 1e-5, 0.0).is_err());
/// ```
pub fn close(what: &str, expected: &[f64], actual: &[f32], rel: f64, abs: f64) -> Result<()> {
    let ok = |e: &f64, a: &f32| {
        let a = *a as f64;
        a.is_finite() && (a - e).abs() <= rel * e.abs() + abs
    };
    compare(what, expected, actual, |e, a| ok(e, a), |e, a| distinct_digits(*e, *a as f64))
}

/// `expected` and `got` with as many significant digits as it takes for them
/// to read differently (6 at least, 17 at most): a failed comparison never says
/// "expected 0.000000, got 0.0". Fixed notation from 1e-5 to 1e7, else
/// scientific.
fn distinct_digits(expected: f64, got: f64) -> (String, String) {
    let mut shown = (String::new(), String::new());
    for digits in 6..=17 {
        shown = (significant(expected, digits), significant(got, digits));
        if shown.0 != shown.1 {
            break;
        }
    }
    shown
}

/// `x` with `digits` significant digits.
fn significant(x: f64, digits: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if (-5..7).contains(&magnitude) {
        let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.prec$e}", prec = digits - 1)
    }
}

fn compare<E, A: Pod + Debug>(
    what: &str,
    expected: &[E],
    actual: &[A],
    ok: impl Fn(&E, &A) -> bool,
    show: impl Fn(&E, &A) -> (String, String),
) -> Result<()> {
    if expected.len() != actual.len() {
        bail!("`{what}`: expected {} elements, got {}", expected.len(), actual.len());
    }
    let Some(i) = expected.iter().zip(actual).position(|(e, a)| !ok(e, a)) else { return Ok(()) };
    let (mismatches, unwritten) = Mismatches::vector(what, expected, actual, &ok);
    let wrong = mismatches.wrong;
    record(mismatches);
    let (shown, got) = show(&expected[i], &actual[i]);
    let got = if is_poison(&actual[i]) { "nothing (never written)".to_string() } else { got };
    let mut msg = format!(
        "`{what}`: {wrong} of {} element(s) wrong; first at index {i}: expected {shown}, got {got}",
        expected.len(),
    );
    if unwritten == expected.len() {
        msg += ". No element was written: did the kernel run its TODO yet?";
    } else if unwritten > 0 {
        let were = if unwritten == 1 { "was" } else { "were" };
        msg +=
            &format!(". {unwritten} of the wrong elements {were} never written (are some threads or blocks missing?)");
    }
    bail!(msg)
}

pub use crate::record::Mismatches;

pub const MAX_MARKS: usize = 512;
const VECTOR_BINS: usize = 256;
const MATRIX_BINS: usize = 48;

impl Mismatches {
    /// The record of a failed comparison of two vectors, in one pass (a timed
    /// output has 64 Mi elements), and how many of the wrong elements were
    /// never written.
    fn vector<E, A: Pod>(what: &str, expected: &[E], actual: &[A], ok: impl Fn(&E, &A) -> bool) -> (Self, usize) {
        let len = expected.len();
        let mut m = Self::empty(what, "vector", 1, len);
        let mut wrong_unwritten = 0;
        // Element j lies in bin j * bins / len: track where the next bin starts.
        let bins = m.bin_cols;
        let starts = |b: usize| (b * len).div_ceil(bins);
        let (mut bin, mut next) = (0, starts(1));
        for (j, (e, a)) in expected.iter().zip(actual).enumerate() {
            while j >= next {
                bin += 1;
                next = starts(bin + 1);
            }
            let poison = is_poison(a);
            m.unwritten += poison as usize;
            if ok(e, a) {
                if m.right_marks.len() < MAX_MARKS && bytemuck::bytes_of(a).iter().any(|&b| b != 0) {
                    m.right_marks.push(j);
                }
                continue;
            }
            m.wrong += 1;
            wrong_unwritten += poison as usize;
            m.bins[bin] += 1;
            if m.marks.len() < MAX_MARKS {
                m.marks.push(j);
            }
        }
        (m, wrong_unwritten)
    }

    fn empty(what: &str, layout: &str, rows: usize, cols: usize) -> Self {
        let bin_rows = rows.clamp(1, MATRIX_BINS);
        let bin_cols = cols.clamp(1, if rows == 1 { VECTOR_BINS } else { MATRIX_BINS });
        Self {
            what: what.into(),
            layout: layout.into(),
            rows,
            cols,
            wrong: 0,
            unwritten: 0,
            bin_rows,
            bin_cols,
            bins: vec![0; bin_rows * bin_cols],
            marks: Vec::new(),
            right_marks: Vec::new(),
        }
    }

    fn binned(what: &str, layout: &str, rows: usize, cols: usize, wrong: impl Iterator<Item = (usize, usize)>) -> Self {
        let mut m = Self::empty(what, layout, rows, cols);
        let (bin_rows, bin_cols) = (m.bin_rows, m.bin_cols);
        for (r, c) in wrong {
            m.wrong += 1;
            let (br, bc) = (r * bin_rows / rows.max(1), c * bin_cols / cols.max(1));
            m.bins[br.min(bin_rows - 1) * bin_cols + bc.min(bin_cols - 1)] += 1;
            if m.marks.len() < MAX_MARKS {
                m.marks.push(r * cols + c);
            }
        }
        m
    }
}

/// Keeps the first record: a check that compares several outputs fails on the first.
fn record(m: Mismatches) {
    crate::record::with(|r| {
        r.mismatches.get_or_insert(m);
    });
}

/// Records where a `rows` x `cols` matrix is wrong, for checks with their own
/// comparison (matrix products, transposes). Records nothing when `wrong` is empty.
/// The report draws it as a heat map; the check still fails with its own message.
///
/// ```
/// let (rows, cols) = (62, 76);
/// let (expected, got) = (vec![0.0f32; rows * cols], vec![0.0f32; rows * cols]);
/// let wrong = (0..rows * cols).filter(|&i| got[i] != expected[i]).map(|i| (i / cols, i % cols));
/// kit::check::record_matrix("out", rows, cols, wrong);
/// ```
pub fn record_matrix(what: &str, rows: usize, cols: usize, wrong: impl Iterator<Item = (usize, usize)>) {
    let m = Mismatches::binned(what, "matrix", rows, cols, wrong);
    if m.wrong > 0 {
        record(m);
    }
}

/// [`exact`] of some elements of an output of `len` only, given as (index,
/// value): what a launch of a few sampled blocks wrote
/// ([`crate::measure::sampled_writes`]); `expected(i)` is element `i`'s value.
///
/// ```
/// let written = [(4, 8i32), (5, 10), (9, -1)];
/// kit::check::exact_at("out", 12, &written[..2], |i| 2 * i as i32).unwrap();
/// let e = kit::check::exact_at("out", 12, &written, |i| 2 * i as i32).unwrap_err().to_string();
/// assert!(e.contains("1 of the 3 element(s) checked are wrong; the first is out[9]: expected 18, got -1 (never written)"), "{e}");
/// ```
pub fn exact_at<T: Pod + PartialEq + Debug>(
    what: &str,
    len: usize,
    written: &[(usize, T)],
    expected: impl Fn(usize) -> T,
) -> Result<()> {
    let wrong: Vec<(usize, T)> = written.iter().copied().filter(|&(i, v)| v != expected(i)).collect();
    let Some(&(i, got)) = wrong.first() else { return Ok(()) };
    record_matrix(what, 1, len, wrong.iter().map(|&(i, _)| (0, i)));
    let unwritten = if is_poison(&got) { " (never written)" } else { "" };
    bail!(
        "`{what}` ({len} elements): {} of the {} element(s) checked are wrong; the first is {what}[{i}]: expected \
         {:?}, got {got:?}{unwritten}",
        wrong.len(),
        written.len(),
        expected(i)
    )
}

/// One integer result (a count, a found index).
///
/// ```
/// kit::check::scalar("hits", 42u64, 42).unwrap();
/// let e = kit::check::scalar("hits", 42u64, u64::MAX).unwrap_err().to_string();
/// assert!(e.contains("never written"), "{e}");
/// ```
pub fn scalar<T: Pod + PartialEq + Debug>(what: &str, expected: T, actual: T) -> Result<()> {
    if expected == actual {
        return Ok(());
    }
    if is_poison(&actual) {
        bail!("`{what}`: expected {expected:?}, but it was never written");
    }
    bail!("`{what}`: expected {expected:?}, got {actual:?}")
}

/// Relative error of a float sum against its f64 reference (the absolute
/// error where the reference is 0).
///
/// ```
/// assert!((kit::check::relative_error(100.0, 100.5) - 0.005).abs() < 1e-12);
/// ```
pub fn relative_error(expected: f64, actual: f64) -> f64 {
    if expected == 0.0 {
        actual.abs()
    } else {
        ((actual - expected) / expected).abs()
    }
}

/// ||actual - expected||_F / ||expected||_F, the usual measure for a matrix product.
///
/// ```
/// let e = kit::check::frobenius_relative(&[3.0, 4.0], &[3.0, 4.5]);
/// assert!((e - 0.1).abs() < 1e-9);
/// ```
pub fn frobenius_relative(expected: &[f64], actual: &[f32]) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (e, a) in expected.iter().zip(actual) {
        let d = *a as f64 - e;
        num += d * d;
        den += e * e;
    }
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_reports_first_wrong_and_unwritten() {
        let err = exact("out", &[1u32, 2, 3, 4], &[1, 7, u32::MAX, 4]).unwrap_err().to_string();
        assert!(err.contains("2 of 4"), "{err}");
        assert!(err.contains("index 1: expected 2, got 7"), "{err}");
        assert!(err.contains("1 of the wrong elements was never written"), "{err}");
        assert!(exact("out", &[1u32, 2], &[1, 2]).is_ok());
    }

    #[test]
    fn mismatches_are_recorded_once_and_binned() {
        let recorder = std::sync::Arc::new(crate::record::Recorder::default());
        let _recording = recorder.install();
        let take_mismatches = || recorder.take().mismatches;
        let expected: Vec<u32> = (0..1000).map(|i| (i % 100 == 0) as u32).collect();
        let mut got = expected.clone();
        got[500] = 0;
        got[999] = 1;
        assert!(exact("found", &expected, &got).is_err());
        assert!(exact("second", &[1u32], &[2]).is_err(), "a later failure does not replace the first");
        let m = take_mismatches().expect("recorded");
        assert_eq!((m.what.as_str(), m.wrong, m.marks.clone()), ("found", 2, vec![500, 999]));
        assert_eq!(m.bins.iter().sum::<u32>(), 2);
        assert_eq!(m.right_marks.len(), 9, "the other expected matches came back right");
        assert_eq!(take_mismatches(), None);
        record_matrix("P", 100, 200, [(99, 199), (0, 0)].into_iter());
        let m = take_mismatches().unwrap();
        assert_eq!(
            (m.layout.as_str(), m.bin_rows, m.bin_cols, m.bins[m.bins.len() - 1], m.bins[0]),
            ("matrix", 48, 48, 1, 1)
        );
        record_matrix("P", 2, 2, std::iter::empty());
        assert_eq!(take_mismatches(), None, "nothing wrong, nothing recorded");
    }

    #[test]
    fn a_vector_is_binned_in_one_pass_as_positions_are() {
        for len in [1usize, 7, 255, 256, 257, 1000, 65_537] {
            let expected = vec![0u8; len];
            let actual: Vec<u8> = (0..len).map(|j| [0, 1, 0xFF][(j * 7 + j / 3) % 3]).collect();
            let (m, unwritten) = Mismatches::vector("v", &expected, &actual, |e, a| e == a);
            let wrong = (0..len).filter(|&j| actual[j] != 0);
            let by_position = Mismatches::binned("v", "vector", 1, len, wrong.map(|j| (0, j)));
            assert_eq!(
                (&m.bins, &m.marks, m.wrong),
                (&by_position.bins, &by_position.marks, by_position.wrong),
                "{len}"
            );
            assert_eq!(unwritten, actual.iter().filter(|&&a| a == 0xFF).count(), "{len}");
        }
    }

    #[test]
    fn expected_and_got_read_differently() {
        for (e, a) in [(3e-8, 0.0f32), (1.0, 1.0001), (1e-3, 1.0002e-3), (123456.78, 123457.5), (2.0, f32::NAN)] {
            let err = close("c", &[e], &[a], 1e-6, 0.0).unwrap_err().to_string();
            let (_, tail) = err.split_once("expected ").unwrap();
            let (shown, got) = tail.split_once(", got ").unwrap();
            assert_ne!(shown, got, "{err}");
        }
        let err = close("c", &[3e-8], &[0.0], 1e-6, 0.0).unwrap_err().to_string();
        assert!(err.contains("expected 3.00000e-8, got 0"), "{err}");
        let err = close("c", &[1.0], &[1.0001], 1e-6, 0.0).unwrap_err().to_string();
        assert!(err.contains("expected 1.00000, got 1.00010"), "{err}");
    }

    #[test]
    fn all_unwritten_says_so() {
        let nan = f32::from_bits(u32::MAX);
        let err = close("c", &[1.0, 2.0], &[nan, nan], 1e-6, 0.0).unwrap_err().to_string();
        assert!(err.contains("No element was written"), "{err}");
    }

    #[test]
    fn close_uses_relative_tolerance() {
        assert!(close("c", &[1000.0], &[1000.001], 1e-5, 0.0).is_ok());
        assert!(close("c", &[1000.0], &[1000.1], 1e-5, 0.0).is_err());
        assert!(close("c", &[1.0], &[f32::INFINITY], 1.0, 1.0).is_err());
    }

    #[test]
    fn scalar_and_norms() {
        assert!(scalar("hits", 3u32, 3).is_ok());
        assert!(scalar("hits", 3u32, u32::MAX).unwrap_err().to_string().contains("never written"));
        assert_eq!(relative_error(2.0, 2.2), 0.10000000000000009);
        assert!(frobenius_relative(&[3.0, 4.0], &[3.0, 4.0]) == 0.0);
        assert!((frobenius_relative(&[3.0, 4.0], &[3.0, 5.0]) - 0.2).abs() < 1e-12);
    }
}
