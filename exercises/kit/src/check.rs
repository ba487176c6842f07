//! Comparisons that explain themselves: which element, what was expected, what
//! came back, how many are wrong, and whether they were never written at all.

use std::fmt::Debug;

use anyhow::{bail, Result};
use bytemuck::Pod;

use crate::gpu::POISON_BYTE;

/// True when every byte of `x` still holds the poison pattern written before the launch.
pub fn is_poison<T: Pod>(x: &T) -> bool {
    bytemuck::bytes_of(x).iter().all(|&b| b == POISON_BYTE)
}

/// Exact comparison, for integer results.
pub fn exact<T: Pod + PartialEq + Debug>(what: &str, expected: &[T], actual: &[T]) -> Result<()> {
    compare(what, expected, actual, |e, a| e == a, |e| format!("{e:?}"))
}

/// Float results against an f64 reference: |actual - expected| <= rel * |expected| + abs.
pub fn close(what: &str, expected: &[f64], actual: &[f32], rel: f64, abs: f64) -> Result<()> {
    let ok = |e: &f64, a: &f32| {
        let a = *a as f64;
        a.is_finite() && (a - e).abs() <= rel * e.abs() + abs
    };
    compare(what, expected, actual, |e, a| ok(e, a), |e| format!("{e:.6}"))
}

fn compare<E, A: Pod + Debug>(
    what: &str,
    expected: &[E],
    actual: &[A],
    ok: impl Fn(&E, &A) -> bool,
    show: impl Fn(&E) -> String,
) -> Result<()> {
    if expected.len() != actual.len() {
        bail!("`{what}`: expected {} elements, got {}", expected.len(), actual.len());
    }
    let mut first = None;
    let (mut wrong, mut unwritten) = (0usize, 0usize);
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if !ok(e, a) {
            wrong += 1;
            if is_poison(a) {
                unwritten += 1;
            }
            first.get_or_insert(i);
        }
    }
    let Some(i) = first else { return Ok(()) };
    let got = if is_poison(&actual[i]) { "nothing (never written)".to_string() } else { format!("{:?}", actual[i]) };
    let mut msg = format!(
        "`{what}`: {wrong} of {} element(s) wrong; first at index {i}: expected {}, got {got}",
        expected.len(),
        show(&expected[i])
    );
    if unwritten == expected.len() {
        msg += ". No element was written: did the kernel run its TODO yet?";
    } else if unwritten > 0 {
        msg += &format!(". {unwritten} of the wrong elements were never written (are some threads or blocks missing?)");
    }
    bail!(msg)
}

/// One integer result.
pub fn scalar<T: Pod + PartialEq + Debug>(what: &str, expected: T, actual: T) -> Result<()> {
    if expected == actual {
        return Ok(());
    }
    if is_poison(&actual) {
        bail!("`{what}`: expected {expected:?}, but it was never written");
    }
    bail!("`{what}`: expected {expected:?}, got {actual:?}")
}

/// Relative error of a float sum against its f64 reference.
pub fn relative_error(expected: f64, actual: f64) -> f64 {
    if expected == 0.0 {
        actual.abs()
    } else {
        ((actual - expected) / expected).abs()
    }
}

/// ||actual - expected||_F / ||expected||_F, the usual measure for a matrix product.
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
        assert!(err.contains("1 of the wrong elements were never written"), "{err}");
        assert!(exact("out", &[1u32, 2], &[1, 2]).is_ok());
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
