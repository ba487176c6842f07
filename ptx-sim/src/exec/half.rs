//! Half precision (`f16`, `bf16` and their `x2` pairs), bit-exact as PTX
//! specifies: every result is the exact value rounded once to nearest-even.
//!
//! Operands widen exactly to f64. A sum or product is then computed in f64
//! together with its rounding error (an exact error-free transformation), and
//! rounded to the narrow format with ties broken by the error's sign, so the
//! result is the correctly rounded exact value, also for `fma`.

use super::alu::{fcmp, fmax64, fmin64};
use crate::ir::{Cmp, HFmt, HOp};

/// The quiet NaN PTX returns for a NaN result.
const CANONICAL_NAN: u16 = 0x7fff;

#[derive(Clone, Copy)]
struct Fmt {
    mant: u32,
    emin: i32,
    bias: i32,
    inf: u16,
    one: u16,
}

const F16: Fmt = Fmt { mant: 10, emin: -14, bias: 15, inf: 0x7c00, one: 0x3c00 };
const BF16: Fmt = Fmt { mant: 7, emin: -126, bias: 127, inf: 0x7f80, one: 0x3f80 };

fn fmt_of(bf: bool) -> Fmt {
    if bf {
        BF16
    } else {
        F16
    }
}

/// The exact value of a half.
pub fn to_f64(h: u16, bf: bool) -> f64 {
    if bf {
        f32::from_bits((h as u32) << 16) as f64
    } else {
        super::alu::f16_to_f32(h) as f64
    }
}

fn is_nan(h: u16, f: Fmt) -> bool {
    h & 0x7fff > f.inf
}

fn is_subnormal(h: u16, f: Fmt) -> bool {
    h & f.inf == 0 && h & 0x7fff != 0
}

/// `x + err` (with `|err|` at most half an f64 ulp of `x`) rounded to nearest-even.
/// Only when `x` lies exactly halfway between two halves can `err` change the
/// result, and then its sign decides.
pub fn round(x: f64, err: f64, bf: bool) -> u16 {
    let f = fmt_of(bf);
    if x.is_nan() {
        return CANONICAL_NAN;
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a.is_infinite() {
        return sign | f.inf;
    }
    if a == 0.0 {
        return sign;
    }
    let err = if sign != 0 { -err } else { err };
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let ulp_e = e.max(f.emin) - f.mant as i32;
    let q = a * 2f64.powi(-ulp_e);
    let mut n = q.floor();
    let frac = q - n;
    if frac > 0.5 || (frac == 0.5 && (err > 0.0 || (err == 0.0 && n % 2.0 == 1.0))) {
        n += 1.0;
    }
    let n = n as u64;
    let bits = if e < f.emin {
        // subnormal; n == 2^mant is the smallest normal, which the same formula encodes
        n
    } else {
        (((e + f.bias) as u64) << f.mant) + n - (1 << f.mant)
    };
    sign | bits.min(f.inf as u64) as u16
}

/// `a + b` with its exact rounding error (Knuth's TwoSum).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    if !s.is_finite() {
        return (s, 0.0);
    }
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

#[derive(Clone, Copy)]
pub struct Flags {
    pub ftz: bool,
    pub sat: bool,
    pub relu: bool,
    pub nan: bool,
}

/// One element of a half-precision operation.
fn elem(op: HOp, bf: bool, fl: Flags, a: u16, b: u16, c: u16) -> u16 {
    let f = fmt_of(bf);
    let flush = |h: u16| if fl.ftz && is_subnormal(h, f) { h & 0x8000 } else { h };
    let (a, b, c) = (flush(a), flush(b), flush(c));
    let (x, y, z) = (to_f64(a, bf), to_f64(b, bf), to_f64(c, bf));
    let r = match op {
        HOp::Neg => a ^ 0x8000,
        HOp::Abs => a & 0x7fff,
        HOp::Add => {
            let (s, e) = two_sum(x, y);
            round(s, e, bf)
        }
        HOp::Sub => {
            let (s, e) = two_sum(x, -y);
            round(s, e, bf)
        }
        // the product of two halves is exact in f64
        HOp::Mul => round(x * y, 0.0, bf),
        HOp::Fma => {
            let (s, e) = two_sum(x * y, z);
            round(s, e, bf)
        }
        HOp::Min | HOp::Max => {
            if fl.nan && (is_nan(a, f) || is_nan(b, f)) {
                CANONICAL_NAN
            } else {
                let m = if op == HOp::Min { fmin64(x, y) } else { fmax64(x, y) };
                round(m, 0.0, bf)
            }
        }
    };
    let r = flush(r);
    if fl.sat {
        if is_nan(r, f) || r & 0x8000 != 0 {
            0
        } else if to_f64(r, bf) > 1.0 {
            f.one
        } else {
            r
        }
    } else if fl.relu && !is_nan(r, f) && r & 0x8000 != 0 {
        0
    } else {
        r
    }
}

/// A half-precision operation on one lane's registers (both halves for `x2`).
pub fn half_op(op: HOp, fmt: HFmt, fl: Flags, a: u64, b: u64, c: u64) -> u64 {
    let bf = fmt.bf16();
    let lo = elem(op, bf, fl, a as u16, b as u16, c as u16) as u64;
    if fmt.x2() {
        lo | (elem(op, bf, fl, (a >> 16) as u16, (b >> 16) as u16, (c >> 16) as u16) as u64) << 16
    } else {
        lo
    }
}

/// `setp` on halves: the low element's result, and the high one's for `x2`.
pub fn half_cmp(cmp: Cmp, fmt: HFmt, ftz: bool, a: u64, b: u64) -> (bool, bool) {
    let bf = fmt.bf16();
    let f = fmt_of(bf);
    let one = |x: u16, y: u16| {
        let flush = |h: u16| if ftz && is_subnormal(h, f) { h & 0x8000 } else { h };
        fcmp(cmp, to_f64(flush(x), bf), to_f64(flush(y), bf))
    };
    (one(a as u16, b as u16), one((a >> 16) as u16, (b >> 16) as u16))
}

/// `cvt.rn.{f16x2,bf16,bf16x2}.f32` (`b` into the low half of a pair, `a` the
/// high) and `cvt.f32.bf16`.
pub fn half_cvt(fmt: HFmt, to_f32: bool, a: u64, b: u64) -> u64 {
    let bf = fmt.bf16();
    if to_f32 {
        return (f32::from_bits((a as u32 & 0xffff) << 16)).to_bits() as u64;
    }
    let narrow = |v: u64| round(f32::from_bits(v as u32) as f64, 0.0, bf) as u64;
    if fmt.x2() {
        narrow(a) << 16 | narrow(b)
    } else {
        narrow(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16(x: f32) -> u16 {
        super::super::alu::f32_to_f16(x)
    }

    #[test]
    fn rounding_matches_the_f32_conversion() {
        // every f16 value, and the midpoints between neighbours, round like cvt.rn.f16.f32
        for h in 0..0x7bffu16 {
            let (x, y) = (to_f64(h, false), to_f64(h + 1, false));
            assert_eq!(round(x, 0.0, false), h);
            let mid = (x + y) / 2.0;
            assert_eq!(round(mid, 0.0, false), f16(mid as f32), "midpoint after {h:#x}");
            assert_eq!(round(mid, 1e-30, false), h + 1);
            assert_eq!(round(-mid, -1e-30, false), (h + 1) | 0x8000, "negative, error away from zero");
            assert_eq!(round(mid, -1e-30, false), h);
        }
        assert_eq!(round(65520.0, 0.0, false), 0x7c00, "the tie above the largest half overflows");
        assert_eq!(round(65519.0, 0.0, false), 0x7bff);
        assert_eq!(round(f64::NAN, 0.0, true), CANONICAL_NAN);
        assert_eq!(round(1.0 + 1.0 / 256.0, 0.0, true), 0x3f80, "bf16 tie to even");
        assert_eq!(round(1.0 + 3.0 / 256.0, 0.0, true), 0x3f82);
    }

    #[test]
    fn arithmetic_is_correctly_rounded() {
        let fl = Flags { ftz: false, sat: false, relu: false, nan: false };
        let op = |o, a: f32, b: f32, c: f32| half_op(o, HFmt::F16, fl, f16(a) as u64, f16(b) as u64, f16(c) as u64);
        assert_eq!(op(HOp::Add, 1.0, 2.0, 0.0), f16(3.0) as u64);
        assert_eq!(op(HOp::Mul, 0.1, 0.1, 0.0), f16((to_f64(f16(0.1), false).powi(2)) as f32) as u64);
        // 2049 is a tie between 2048 and 2050 in f16: fma must use the exact a*b + c
        assert_eq!(op(HOp::Fma, 2048.0, 1.0, 1.0), f16(2048.0) as u64);
        let tiny = to_f64(1, false) as f32; // the smallest subnormal, 2^-24
        assert_eq!(op(HOp::Fma, 2048.0, 1.0, 1.0 + tiny), f16(2048.0) as u64, "1 + 2^-24 is not a half");
        assert_eq!(op(HOp::Fma, 1.0, 1.0 + 1.0 / 1024.0, 2048.0), f16(2050.0) as u64, "above the tie");
        assert_eq!(op(HOp::Neg, 1.5, 0.0, 0.0), f16(-1.5) as u64);
        assert_eq!(op(HOp::Min, f32::NAN, 2.0, 0.0), f16(2.0) as u64);
        assert_eq!(op(HOp::Max, -0.0, 0.0, 0.0), 0);
        let pair = |lo: f32, hi: f32| (f16(lo) as u64) | (f16(hi) as u64) << 16;
        let x2 = half_op(HOp::Add, HFmt::F16x2, fl, pair(1.0, 100.0), pair(0.5, 1000.0), 0);
        assert_eq!(x2, pair(1.5, 1100.0));
        let sat = Flags { sat: true, ..fl };
        assert_eq!(half_op(HOp::Add, HFmt::F16, sat, f16(0.75) as u64, f16(0.5) as u64, 0), 0x3c00);
        assert_eq!(half_op(HOp::Sub, HFmt::F16, sat, f16(0.25) as u64, f16(0.5) as u64, 0), 0);
        assert_eq!(half_cvt(HFmt::F16x2, false, 1f32.to_bits() as u64, 2f32.to_bits() as u64), pair(2.0, 1.0));
        assert_eq!(half_cvt(HFmt::Bf16, true, 0x3fc0, 0), 1.5f32.to_bits() as u64);
        assert_eq!(half_cmp(Cmp::Lt, HFmt::F16x2, false, pair(1.0, 3.0), pair(2.0, 2.0)), (true, false));
    }
}
