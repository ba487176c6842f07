//! Inputs whose every element says where it came from, the CPU transpose, and a
//! comparison that reports a wrong element as "out(row, col) holds in(row', col')".

use anyhow::{bail, Result};
use kit::check::is_poison;
use rand::Rng;

/// Mantissa bits of an f32: the encoding numbers up to 2^23 elements.
const MANTISSA: u32 = (1 << 23) - 1;
/// Bits of 1.0f: every encoded value lies in [1, 2).
const ONE: u32 = 0x3F80_0000;
/// Largest matrix whose elements the encoding keeps distinct.
pub const MAX_ENCODED: usize = 1 << 23;

/// Element `i` (row-major) of an input holds a float in [1, 2) whose 23
/// mantissa bits are `(i * mul + add) mod 2^23`, with `mul` odd: a seeded
/// bijection. So the elements of a matrix of up to 2^23 are all distinct, none
/// is the poison pattern (a NaN), a transpose moves them bit for bit, and a
/// misplaced value tells which input element it is.
#[derive(Debug, Clone, Copy)]
pub struct Encoding {
    mul: u32,
    add: u32,
}

impl Encoding {
    pub fn random(rng: &mut impl Rng) -> Self {
        Self { mul: rng.random::<u32>() | 1, add: rng.random() }
    }

    pub fn value(&self, i: usize) -> f32 {
        f32::from_bits(ONE | ((i as u32).wrapping_mul(self.mul).wrapping_add(self.add) & MANTISSA))
    }

    /// The index whose value is `v`, when `v` is one of the encoded values.
    pub fn source(&self, v: f32) -> Option<usize> {
        let bits = v.to_bits();
        (bits & !MANTISSA == ONE)
            .then(|| ((bits & MANTISSA).wrapping_sub(self.add).wrapping_mul(inverse(self.mul)) & MANTISSA) as usize)
    }

    /// A `height` x `width` matrix, row after row.
    pub fn matrix(&self, width: usize, height: usize) -> Vec<f32> {
        (0..width * height).map(|i| self.value(i)).collect()
    }
}

/// The inverse of an odd number modulo 2^32 (Newton's iteration doubles the
/// correct low bits each step: 1 -> 2 -> 4 -> ... -> 32 after 5 steps from x = a).
fn inverse(a: u32) -> u32 {
    let mut x = a;
    for _ in 0..5 {
        x = x.wrapping_mul(2u32.wrapping_sub(a.wrapping_mul(x)));
    }
    x
}

/// `in` is `height` rows of `width`; the result is `width` rows of `height`.
pub fn transpose<T: Copy>(input: &[T], width: usize, height: usize) -> Vec<T> {
    assert_eq!(input.len(), width * height);
    (0..width * height).map(|k| input[(k % height) * width + k / height]).collect()
}

/// Bit-exact comparison of the kernel's `out` with the transpose of the encoded
/// `in`. The message names the first wrong element as a position in `out`, what
/// belongs there, and which element of `in` (if any) it holds instead.
pub fn compare(enc: &Encoding, width: usize, height: usize, out: &[f32]) -> Result<()> {
    let n = width * height;
    assert_eq!(out.len(), n);
    let expected = |k: usize| enc.value((k % height) * width + k / height);
    let wrong: Vec<usize> = (0..n).filter(|&k| out[k].to_bits() != expected(k).to_bits()).collect();
    let Some(&k) = wrong.first() else { return Ok(()) };
    kit::check::record_matrix("out", width, height, wrong.iter().map(|&k| (k / height, k % height)));
    let unwritten = wrong.iter().filter(|&&k| is_poison(&out[k])).count();
    let at = |i: usize| format!("in({}, {})", i / width, i % width);
    let got = match enc.source(out[k]) {
        _ if is_poison(&out[k]) => "nothing (never written)".to_string(),
        Some(i) if i < n => format!("the value of {}", at(i)),
        _ => format!("{:?}, which is no element of `in`", out[k]),
    };
    let mut msg = format!(
        "`out` ({width} rows x {height} columns): {} of {n} element(s) wrong; the first is out({}, {}), \
         which should hold {} but holds {got}",
        wrong.len(),
        k / height,
        k % height,
        at((k % height) * width + k / height),
    );
    if unwritten == n {
        msg += ". No element was written: did the kernel run its TODO yet?";
    } else if unwritten > 0 {
        msg += &format!(
            ". {unwritten} of the wrong elements were never written (threads at the right or bottom edge, \
             or rows of the tile, missing?)"
        );
    }
    bail!(msg)
}

/// [`compare`] of some elements of `out` only, given as (index in `out`,
/// value): what a launch of a few sampled blocks wrote. `in`'s encoding
/// repeats past [`MAX_ENCODED`] elements, so there an element from a multiple
/// of 2^23 elements away reads as right.
pub fn compare_elements(enc: &Encoding, width: usize, height: usize, written: &[(usize, f32)]) -> Result<()> {
    let expected = |k: usize| enc.value((k % height) * width + k / height);
    let wrong: Vec<(usize, f32)> =
        written.iter().copied().filter(|&(k, v)| v.to_bits() != expected(k).to_bits()).collect();
    let Some(&(k, v)) = wrong.first() else { return Ok(()) };
    kit::check::record_matrix("out", width, height, wrong.iter().map(|&(k, _)| (k / height, k % height)));
    let at = |i: usize| format!("in({}, {})", i / width, i % width);
    let got = match enc.source(v) {
        _ if is_poison(&v) => "nothing (never written)".to_string(),
        Some(i) if i < width * height => format!("the value of {}", at(i)),
        _ => format!("{v:?}, which is no element of `in`"),
    };
    bail!(
        "`out` ({width} rows x {height} columns): {} of the {} element(s) the sampled blocks wrote are wrong; \
         the first is out({}, {}), which should hold {} but holds {got}",
        wrong.len(),
        written.len(),
        k / height,
        k % height,
        at((k % height) * width + k / height),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;
    use std::collections::HashSet;

    #[test]
    fn transpose_of_a_2x3_by_hand() {
        // in = [1 2 3; 4 5 6] (height 2, width 3); out = [1 4; 2 5; 3 6].
        assert_eq!(transpose(&[1, 2, 3, 4, 5, 6], 3, 2), vec![1, 4, 2, 5, 3, 6]);
        assert_eq!(transpose(&[7], 1, 1), vec![7]);
        assert_eq!(transpose(&[1, 2, 3], 3, 1), vec![1, 2, 3]);
        let m: Vec<u32> = (0..35 * 3).collect();
        assert_eq!(transpose(&transpose(&m, 35, 3), 3, 35), m);
    }

    #[test]
    fn encoded_values_are_distinct_decodable_and_never_poison() {
        let enc = Encoding::random(&mut rng_for(7, "enc"));
        let m = enc.matrix(1000, 1001);
        let bits: HashSet<u32> = m.iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits.len(), m.len());
        for (i, v) in m.iter().enumerate() {
            assert!((1.0..2.0).contains(v) && !is_poison(v));
            assert_eq!(enc.source(*v), Some(i));
        }
        assert_eq!(enc.source(f32::from_bits(u32::MAX)), None);
        assert_eq!(enc.source(0.5), None);
        assert_eq!(enc.source(enc.value(MAX_ENCODED - 1)), Some(MAX_ENCODED - 1));
    }

    #[test]
    fn inverse_mod_2_32() {
        for a in [1u32, 3, 0x9E37_79B9, u32::MAX] {
            assert_eq!(a.wrapping_mul(inverse(a)), 1, "{a}");
        }
    }

    #[test]
    fn compare_names_positions_and_sources() {
        let (w, h) = (3, 2);
        let enc = Encoding::random(&mut rng_for(1, "cmp"));
        let good = transpose(&enc.matrix(w, h), w, h);
        assert!(compare(&enc, w, h, &good).is_ok());

        let poison = vec![f32::from_bits(u32::MAX); w * h];
        let err = compare(&enc, w, h, &poison).unwrap_err().to_string();
        assert!(err.contains("6 of 6") && err.contains("No element was written"), "{err}");

        // A copy instead of a transpose: out(0, 1) holds in(0, 1) where in(1, 0) belongs.
        let err = compare(&enc, w, h, &enc.matrix(w, h)).unwrap_err().to_string();
        assert!(err.contains("out(0, 1), which should hold in(1, 0) but holds the value of in(0, 1)"), "{err}");

        let mut edge = good.clone();
        edge[5] = f32::from_bits(u32::MAX);
        let err = compare(&enc, w, h, &edge).unwrap_err().to_string();
        assert!(err.contains("1 of 6") && err.contains("out(2, 1)") && err.contains("never written"), "{err}");

        let mut junk = good;
        junk[0] = 0.0;
        let err = compare(&enc, w, h, &junk).unwrap_err().to_string();
        assert!(err.contains("holds 0.0, which is no element"), "{err}");
    }
}
