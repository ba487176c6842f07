//! The CPU reference in f64 and the comparison of a GPU product with it.
//!
//! How close must a float product be? Each element of P is a dot product of
//! k terms. For IEEE float arithmetic with round to nearest, in any summation
//! order and with or without fused multiply-add, the classical bound (Higham,
//! *Accuracy and Stability of Numerical Algorithms*, 2nd ed., eq. 3.5) is
//!
//! ```text
//! |fl(p_ij) - p_ij| <= gamma_k * (|M| |N|)_ij,   gamma_k = k u / (1 - k u),  u = 2^-24
//! ```
//!
//! Tile elements loaded as 0 add exact zeros, so they do not count towards k.
//! The inputs are floats, so the f64 reference multiplies exactly and only adds
//! its own (2^29 times smaller) rounding, which is added to the bound.
//!
//! Three verdicts, in this order:
//! 1. no element may still hold the poison written before the launch;
//! 2. no element may be NaN or infinite (the host puts NaN just past the end of
//!    M and N, so this means the kernel read outside a matrix);
//! 3. every element within its bound above (never fails a correct kernel; finds
//!    a single wrong element among a million, and says where it is);
//! 4. the relative Frobenius error `||P_gpu - P||_F / ||P||_F` at most
//!    [`frobenius_tolerance`]`(k) = k * eps_f32` (see there).

use anyhow::{bail, Result};
use kit::check::{frobenius_relative, is_poison};

use crate::{Shape, TILE};

/// Unit roundoff of f32 (half an ulp of 1.0).
pub const U_F32: f64 = 1.0 / (1u64 << 24) as f64;
/// Unit roundoff of f64.
pub const U_F64: f64 = 1.0 / (1u64 << 53) as f64;

/// gamma_k = k u / (1 - k u): the relative error bound of a k-term float sum of products.
pub fn gamma(k: usize, u: f64) -> f64 {
    let ku = k as f64 * u;
    ku / (1.0 - ku)
}

/// The largest error a correct float kernel can make on an element whose
/// terms have absolute values summing to `abs` (= (|M| |N|)_ij): the f32 bound
/// plus the f64 reference's own rounding (twice: for `expected` and for `abs`).
pub fn element_bound(k: usize, abs: f64) -> f64 {
    (gamma(k, U_F32) + 2.0 * gamma(k, U_F64)) * abs
}

/// Largest relative Frobenius error accepted: k * eps_f32 = 2 k u.
///
/// For inputs uniform in [-1, 1): one term m*n has mean square 1/9, so an
/// element is about sqrt(k)/3 in size. Float rounding errors add up like a
/// random walk; summing k terms one after the other (with or without FMA)
/// gives a relative Frobenius error of about 0.3 sqrt(k) u (0.23 to 0.42 times
/// sqrt(k) u measured for k from 1 to 4096; the unit tests check it). k * eps
/// is about 6 sqrt(k) times that, so a correct kernel never comes near it,
/// whatever its summation order; for k = 1 an element is one rounded product,
/// relative error <= u, half the tolerance. The per-element bound allows more
/// in the worst case (~0.75 k^1.5 u for these inputs); this tolerance catches
/// what it lets through: every element a bit off at once. A kernel that drops
/// or repeats j of the k terms is off by about sqrt(j / k), hundreds of times
/// the tolerance for every k tested.
pub fn frobenius_tolerance(k: usize) -> f64 {
    k as f64 * f32::EPSILON as f64
}

/// P = M N in f64, and |M| |N| (for the per-element bounds); both row-major m x n.
pub struct Reference {
    pub expected: Vec<f64>,
    pub abs: Vec<f64>,
}

/// The whole product. Loop order i-p-j so the inner loop walks rows of N and P;
/// plain indexed loops, because students run the grader in a debug build, where
/// iterator chains cost several times more (at most ~10 M multiply-adds per case).
#[allow(clippy::needless_range_loop)]
pub fn product(s: Shape, m: &[f32], n: &[f32]) -> Reference {
    assert_eq!(m.len(), s.m * s.k, "M must be m x k");
    assert_eq!(n.len(), s.k * s.n, "N must be k x n");
    // Each row is summed in a buffer of its own and then appended: adding into
    // a zeroed whole product first read its fresh pages as the kernel's zero
    // page, and each first write then flushed every core's TLB (4 % of ex03 on
    // the simulator, whose other cases run on the other core).
    let (mut expected, mut abs) = (Vec::with_capacity(s.m * s.n), Vec::with_capacity(s.m * s.n));
    let (mut e_row, mut a_row) = (vec![0.0f64; s.n], vec![0.0f64; s.n]);
    for i in 0..s.m {
        e_row.fill(0.0);
        a_row.fill(0.0);
        for p in 0..s.k {
            let a = m[i * s.k + p] as f64;
            let n_row = &n[p * s.n..(p + 1) * s.n];
            for j in 0..n_row.len() {
                let t = a * n_row[j] as f64;
                e_row[j] += t;
                a_row[j] += t.abs();
            }
        }
        expected.extend_from_slice(&e_row);
        abs.extend_from_slice(&a_row);
    }
    Reference { expected, abs }
}

/// The product's elements at `at` (row, column) only, in that order: a
/// measured launch's sample of blocks is checked on these.
pub fn elements(s: Shape, m: &[f32], n: &[f32], at: &[(usize, usize)]) -> Reference {
    elements_by(s, |i, p| m[i * s.k + p], |p, j| n[p * s.n + j], at)
}

/// [`elements`] of M's element (row, p) `m(row, p)` and N's (p, column) `n(p, column)`.
pub fn elements_by(
    s: Shape,
    m: impl Fn(usize, usize) -> f32,
    n: impl Fn(usize, usize) -> f32,
    at: &[(usize, usize)],
) -> Reference {
    let (mut expected, mut abs) = (Vec::with_capacity(at.len()), Vec::with_capacity(at.len()));
    for &(i, j) in at {
        let (mut e, mut a) = (0.0f64, 0.0f64);
        for p in 0..s.k {
            let t = m(i, p) as f64 * n(p, j) as f64;
            e += t;
            a += t.abs();
        }
        expected.push(e);
        abs.push(a);
    }
    Reference { expected, abs }
}

/// Compares `got` with the reference. `at(i)` is the (row, col) in P of the
/// i-th compared element (all of P in order, or a sample). Returns a short note
/// with the Frobenius error, or an error that says what is wrong and where.
pub fn verify(
    s: Shape,
    expected: &[f64],
    abs: &[f64],
    got: &[f32],
    at: impl Fn(usize) -> (usize, usize),
) -> Result<String> {
    assert!(expected.len() == got.len() && abs.len() == got.len());
    let total = got.len();
    let first = |bad: &dyn Fn(usize) -> bool| {
        (0..total).filter(|&i| bad(i)).fold((0, None), |(c, f), i| (c + 1, f.or(Some(i))))
    };

    let bad = |i: usize| !got[i].is_finite() || (got[i] as f64 - expected[i]).abs() > element_bound(s.k, abs[i]);
    kit::check::record_matrix("P", s.m, s.n, (0..total).filter(|&i| bad(i)).map(&at));
    let (unwritten, i) = first(&|i| is_poison(&got[i]));
    if let Some(i) = i {
        let (r, c) = at(i);
        let why = if unwritten == total {
            "No element was written: did the kernel run its TODO yet?".to_string()
        } else {
            format!("Are some threads or blocks missing? {}", edge_hint(s, unwritten, &|j| is_poison(&got[j]), &at))
        };
        bail!("`P`: {unwritten} of {total} element(s) were never written, the first at (row {r}, col {c}). {why}");
    }

    let (broken, i) = first(&|i| !got[i].is_finite());
    if let Some(i) = i {
        let (r, c) = at(i);
        bail!(
            "`P`: {broken} of {total} element(s) are NaN or infinite, the first at (row {r}, col {c}). \
             The inputs are finite, but the grader puts NaN right after the last element of M and of N: \
             the kernel read past the end of a matrix. A tile element outside M or N must be set to 0.0f, \
             not loaded"
        );
    }

    let off = |i: usize| (got[i] as f64 - expected[i]).abs() > element_bound(s.k, abs[i]);
    let frob = frobenius_relative(expected, got);
    let (wrong, i) = first(&off);
    if let Some(i) = i {
        let (r, c) = at(i);
        bail!(
            "`P`: {wrong} of {total} element(s) are wrong, the first at (row {r}, col {c}): expected {:.6}, \
             got {:.6}; float rounding over k = {} products explains at most {:.1e} there. {}Relative \
             Frobenius error {frob:.1e}",
            expected[i],
            got[i],
            s.k,
            element_bound(s.k, abs[i]),
            edge_hint(s, wrong, &off, &at),
        );
    }

    let tol = frobenius_tolerance(s.k);
    if frob > tol {
        bail!(
            "`P`: relative Frobenius error {frob:.2e} is above {tol:.2e} (k * eps_f32, k = {}): every element is \
             within rounding of the right value but all of them are a little off, more than float arithmetic \
             explains. Accumulate in a float (or double) register, from float inputs",
            s.k
        );
    }
    Ok(format!("relative Frobenius error {frob:.1e} (tolerance {tol:.1e})"))
}

/// "All of them are in the edge tiles" when every bad element lies in the last,
/// partial row or column of tiles: the bounds there are the likely culprit.
/// When P has no full tile, every element is an edge element and that says
/// nothing; if then every element is wrong and k is not a multiple of the
/// tile, the phase count is the likely culprit.
fn edge_hint(s: Shape, count: usize, bad: &dyn Fn(usize) -> bool, at: &dyn Fn(usize) -> (usize, usize)) -> String {
    let t = TILE as usize;
    let (full_rows, full_cols) = (s.m / t * t, s.n / t * t);
    if count == s.m * s.n && s.k % t != 0 {
        let phases = s.k.div_ceil(t);
        return format!(
            "Every element is wrong, and k = {} is not a multiple of {t}: the product takes {phases} phase(s) of \
             {t} x {t} tiles, the last one only {} deep, and a loop of k / {t} = {} phase(s) would drop it (run \
             (k + {t} - 1) / {t} phases, loading 0.0f for tile elements past k). ",
            s.k,
            s.k % t,
            s.k / t
        );
    }
    if (full_rows == s.m && full_cols == s.n) || full_rows == 0 || full_cols == 0 {
        return String::new();
    }
    let mut edge = 0;
    let mut i = 0;
    let mut seen = 0;
    while seen < count {
        if bad(i) {
            seen += 1;
            let (r, c) = at(i);
            edge += (r >= full_rows || c >= full_cols) as usize;
        }
        i += 1;
    }
    if edge == count {
        format!(
            "All of them lie in the last, partial row or column of {t} x {t} tiles (rows >= {full_rows} or \
             columns >= {full_cols}): check the bounds there. "
        )
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    const POISON: f32 = f32::from_bits(u32::MAX);

    fn s(m: usize, k: usize, n: usize) -> Shape {
        Shape { m, k, n }
    }

    fn full(s: Shape, r: &Reference, got: &[f32]) -> Result<String> {
        verify(s, &r.expected, &r.abs, got, |i| (i / s.n, i % s.n))
    }

    /// A float kernel's result on the CPU: terms added one after the other in f32,
    /// with FMA (as nvcc compiles `sum += a * b`) or with a rounded product first.
    #[test]
    fn elements_are_the_products_at_those_places() {
        let sh = s(5, 7, 3);
        let mut rng = kit::inputs::rng_for(3, "elements");
        let (m, n) =
            (kit::inputs::uniform_f32(&mut rng, 35, -1.0, 1.0), kit::inputs::uniform_f32(&mut rng, 21, -1.0, 1.0));
        let (whole, at) = (product(sh, &m, &n), [(4, 2), (0, 0), (2, 1)]);
        let some = elements(sh, &m, &n, &at);
        for (k, &(i, j)) in at.iter().enumerate() {
            assert_eq!((some.expected[k], some.abs[k]), (whole.expected[i * 3 + j], whole.abs[i * 3 + j]));
        }
    }

    fn f32_product(s: Shape, m: &[f32], n: &[f32], fma: bool, terms: usize) -> Vec<f32> {
        let mut p = vec![0.0f32; s.m * s.n];
        for i in 0..s.m {
            for j in 0..s.n {
                p[i * s.n + j] = (0..terms).fold(0.0f32, |acc, q| {
                    let (a, b) = (m[i * s.k + q], n[q * s.n + j]);
                    if fma {
                        a.mul_add(b, acc)
                    } else {
                        acc + a * b
                    }
                });
            }
        }
        p
    }

    fn random(s: Shape, name: &str) -> (Vec<f32>, Vec<f32>) {
        crate::matrices(&mut rng_for(3, name), s)
    }

    #[test]
    fn two_by_three_times_three_by_two() {
        // [1 2 3] [ 7  8]   [ 58  64]
        // [4 5 6] [ 9 10] = [139 154]
        //         [11 12]
        let r = product(s(2, 3, 2), &[1., 2., 3., 4., 5., 6.], &[7., 8., 9., 10., 11., 12.]);
        assert_eq!(r.expected, vec![58.0, 64.0, 139.0, 154.0]);
        assert_eq!(r.abs, r.expected);
    }

    #[test]
    fn signs_cancel_in_the_product_but_not_in_the_bound() {
        // [ 1 -2] [ 5 6]   [ 5+14  6-16]   [ 19 -10]      |.| [19 22]
        // [ 3  4] [-7 8] = [15-28 18+32] = [-13  50]          [43 50]
        let r = product(s(2, 2, 2), &[1., -2., 3., 4.], &[5., 6., -7., 8.]);
        assert_eq!(r.expected, vec![19.0, -10.0, -13.0, 50.0]);
        assert_eq!(r.abs, vec![19.0, 22.0, 43.0, 50.0]);
    }

    #[test]
    fn float_kernels_pass_with_margin() {
        // The k of every tested shape, with small m and n to stay fast in a debug build.
        let shapes =
            [s(1, 1, 1), s(150, 3, 150), s(65, 1, 37), s(60, 16, 7), s(1, 300, 70), s(17, 33, 9), s(40, 64, 30)];
        for sh in shapes.into_iter().chain([s(30, 129, 30), s(16, 384, 16), s(12, 997, 9), s(8, 3001, 8)]) {
            let (m, n) = random(sh, "margin");
            let r = product(sh, &m, &n);
            for fma in [true, false] {
                let got = f32_product(sh, &m, &n, fma, sh.k);
                full(sh, &r, &got).unwrap_or_else(|e| panic!("{sh:?} fma={fma}: {e}"));
                // `frobenius_tolerance` says ~0.3 sqrt(k) u, and about 6 sqrt(k) times below the tolerance.
                let frob = frobenius_relative(&r.expected, &got);
                assert!(frob <= 0.6 * (sh.k as f64).sqrt() * U_F32, "{sh:?} fma={fma}: {frob:e}");
                assert!(frob * 3.0 < frobenius_tolerance(sh.k), "{sh:?}: margin too small ({frob:e})");
            }
        }
    }

    #[test]
    fn dropping_one_term_fails() {
        for sh in [s(40, 17, 40), s(33, 300, 20), s(24, 3001, 24)] {
            let (m, n) = random(sh, "drop");
            let r = product(sh, &m, &n);
            let got = f32_product(sh, &m, &n, true, sh.k - 1);
            let err = full(sh, &r, &got).unwrap_err().to_string();
            assert!(err.contains("are wrong") && err.contains("(row "), "{sh:?}: {err}");
        }
    }

    #[test]
    fn one_wrong_element_among_many_is_found_and_located() {
        let sh = s(100, 50, 70);
        let (m, n) = random(sh, "one");
        let r = product(sh, &m, &n);
        let mut got = f32_product(sh, &m, &n, true, sh.k);
        got[99 * 70 + 69] += 1e-3;
        let err = full(sh, &r, &got).unwrap_err().to_string();
        assert!(err.contains("1 of 7000") && err.contains("(row 99, col 69)"), "{err}");
        assert!(err.contains("last, partial row or column"), "{err}");
    }

    #[test]
    fn unwritten_and_nan_are_named() {
        let sh = s(20, 5, 20);
        let (m, n) = random(sh, "poison");
        let r = product(sh, &m, &n);
        let err = full(sh, &r, &vec![POISON; 400]).unwrap_err().to_string();
        assert!(err.contains("400 of 400") && err.contains("No element was written"), "{err}");

        let mut got = f32_product(sh, &m, &n, true, sh.k);
        for row in 16..20 {
            got[row * 20 + 3] = POISON;
        }
        let err = full(sh, &r, &got).unwrap_err().to_string();
        assert!(err.contains("4 of 400") && err.contains("(row 16, col 3)") && err.contains("partial row"), "{err}");

        let mut got = f32_product(sh, &m, &n, true, sh.k);
        got[7] = f32::NAN;
        let err = full(sh, &r, &got).unwrap_err().to_string();
        assert!(
            err.contains("NaN or infinite") && err.contains("(row 0, col 7)") && err.contains("past the end"),
            "{err}"
        );
    }

    #[test]
    fn diffuse_error_within_each_bound_fails_the_frobenius_tolerance() {
        // Every element off by half of its worst-case rounding bound: each one is
        // explainable alone, all of them together are not.
        let sh = s(64, 400, 64);
        let (m, n) = random(sh, "diffuse");
        let r = product(sh, &m, &n);
        let got: Vec<f32> =
            (0..r.expected.len()).map(|i| (r.expected[i] + 0.5 * element_bound(sh.k, r.abs[i])) as f32).collect();
        let err = full(sh, &r, &got).unwrap_err().to_string();
        assert!(err.contains("Frobenius error") && err.contains("k * eps_f32"), "{err}");
    }

    #[test]
    fn one_by_one_by_one() {
        let sh = s(1, 1, 1);
        let r = product(sh, &[0.3], &[-0.7]);
        assert!(full(sh, &r, &[0.3f32 * -0.7f32]).is_ok());
        assert!(full(sh, &r, &[0.0]).is_err());
    }

    #[test]
    fn bounds() {
        assert!((gamma(1, U_F32) / U_F32 - 1.0).abs() < 1e-6);
        assert!(element_bound(1000, 10.0) > 1000.0 * U_F32 * 10.0);
        assert!(element_bound(1000, 10.0) < 1000.0 * U_F32 * 10.0 * 1.001);
        assert_eq!(frobenius_tolerance(3), 3.0 * 2.0 * U_F32);
    }

    #[test]
    fn a_product_without_its_partial_phase_is_told_the_phase_count() {
        // 17 x 33 x 9: no full tile, every element wrong: the edges say nothing, the phases do
        let sh = s(17, 33, 9);
        let (expected, abs) = (vec![1.0; 17 * 9], vec![1.0; 17 * 9]);
        let got = vec![0.5f32; 17 * 9];
        let e = verify(sh, &expected, &abs, &got, |i| (i / 9, i % 9)).unwrap_err().to_string();
        assert!(e.contains("3 phase(s) of 16 x 16 tiles, the last one only 1 deep"), "{e}");
        assert!(!e.contains("rows >= 0"), "{e}");
    }
}
