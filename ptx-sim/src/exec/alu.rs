//! Per-lane arithmetic with PTX semantics: integer wrap-around and widths,
//! IEEE float rounding (including the directed modes), `.ftz`, `.sat`, and `cvt`.

use crate::ir::{Cmp, FBin, FUn, IRnd, Rnd, TestpOp, Ty};

pub const CANON_NAN32: u32 = 0x7fff_ffff;

#[inline(always)]
pub fn f32of(x: u64) -> f32 {
    f32::from_bits(x as u32)
}
#[inline(always)]
pub fn f64of(x: u64) -> f64 {
    f64::from_bits(x)
}
/// f32 result bits; NaN results are the GPU's canonical NaN.
#[inline(always)]
pub fn b32(f: f32) -> u64 {
    if f.is_nan() {
        CANON_NAN32 as u64
    } else {
        f.to_bits() as u64
    }
}
#[inline(always)]
pub fn b64(f: f64) -> u64 {
    f.to_bits()
}

#[inline(always)]
pub fn mask(w: u8) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}
#[inline(always)]
pub fn sext(x: u64, w: u8) -> i64 {
    let sh = 64 - w as u32;
    ((x << sh) as i64) >> sh
}

/// The two float widths PTX computes in. The rules that hold for both
/// (stepping one unit in the last place, directed rounding, `.ftz`, `.sat`,
/// the functions computed as the CPU does) are written once, over this trait.
trait Float: Copy + PartialOrd + std::ops::Neg<Output = Self> + std::ops::Div<Output = Self> {
    const ZERO: Self;
    const ONE: Self;
    const MAX: Self;
    const MIN: Self;
    const INFINITY: Self;
    const NEG_INFINITY: Self;
    /// The smallest positive subnormal.
    const TINY: Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_subnormal(self) -> bool;
    fn copysign(self, sign: Self) -> Self;
    fn clamp(self, lo: Self, hi: Self) -> Self;
    /// The neighbour one unit in the last place away from zero (`true`) or towards it.
    fn step(self, away_from_zero: bool) -> Self;
    fn sqrt(self) -> Self;
    fn exp2(self) -> Self;
    fn log2(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tanh(self) -> Self;
}

macro_rules! float {
    ($t:ty) => {
        impl Float for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const MAX: Self = <$t>::MAX;
            const MIN: Self = <$t>::MIN;
            const INFINITY: Self = <$t>::INFINITY;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            const TINY: Self = <$t>::from_bits(1);
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn is_subnormal(self) -> bool {
                <$t>::is_subnormal(self)
            }
            fn copysign(self, sign: Self) -> Self {
                <$t>::copysign(self, sign)
            }
            fn clamp(self, lo: Self, hi: Self) -> Self {
                <$t>::clamp(self, lo, hi)
            }
            fn step(self, away_from_zero: bool) -> Self {
                let b = self.to_bits();
                <$t>::from_bits(if away_from_zero { b + 1 } else { b - 1 })
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn exp2(self) -> Self {
                <$t>::exp2(self)
            }
            fn log2(self) -> Self {
                <$t>::log2(self)
            }
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
        }
    };
}
float!(f32);
float!(f64);

/// `.ftz`: a subnormal becomes zero of its sign.
#[inline]
fn flush<F: Float>(f: F) -> F {
    if f.is_subnormal() {
        F::ZERO.copysign(f)
    } else {
        f
    }
}
#[inline]
pub fn ftz32(f: f32) -> f32 {
    flush(f)
}
#[inline]
pub fn ftz64(f: f64) -> f64 {
    flush(f)
}

fn next_up<F: Float>(f: F) -> F {
    if f.is_nan() || f == F::INFINITY {
        return f;
    }
    if f == F::ZERO {
        return F::TINY;
    }
    f.step(f > F::ZERO)
}
fn next_down<F: Float>(f: F) -> F {
    -next_up(-f)
}

/// Adjusts a round-to-nearest result `r` to a directed mode, given the sign of
/// `exact - r` (`err`: -1, 0, 1).
fn direct<F: Float>(r: F, err: i32, rnd: Rnd) -> F {
    if err == 0 || r.is_nan() {
        return r;
    }
    match rnd {
        Rnd::Rz => {
            if r.is_infinite() {
                return F::MAX.copysign(r);
            }
            if (r > F::ZERO && err < 0) || (r < F::ZERO && err > 0) {
                if err < 0 {
                    next_down(r)
                } else {
                    next_up(r)
                }
            } else {
                r
            }
        }
        Rnd::Rm if err < 0 => {
            if r == F::INFINITY {
                F::MAX
            } else {
                next_down(r)
            }
        }
        Rnd::Rp if err > 0 => {
            if r == F::NEG_INFINITY {
                F::MIN
            } else {
                next_up(r)
            }
        }
        _ => r,
    }
}

/// `.sat`: clamped to [0, 1], NaN to 0.
fn saturate<F: Float>(f: F) -> F {
    if f.is_nan() {
        F::ZERO
    } else {
        f.clamp(F::ZERO, F::ONE)
    }
}

/// A result's `.ftz` and `.sat`, in that order.
fn finish<F: Float>(r: F, ftz: bool, sat: bool) -> F {
    let r = if ftz { flush(r) } else { r };
    if sat {
        saturate(r)
    } else {
        r
    }
}

/// The unary functions computed as the CPU computes them, in either width.
fn plain_unary<F: Float>(op: FUn, a: F) -> F {
    match op {
        FUn::Rsqrt => F::ONE / a.sqrt(),
        FUn::Ex2 => a.exp2(),
        FUn::Lg2 => a.log2(),
        FUn::Sin => a.sin(),
        FUn::Cos => a.cos(),
        FUn::Tanh => a.tanh(),
        FUn::Mov | FUn::Neg | FUn::Abs | FUn::Sqrt | FUn::Rcp => unreachable!("{op:?} has its own rule"),
    }
}

fn sgn(x: f64) -> i32 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// Exact error sign of an f64 sum `a + b` rounded to `s` (TwoSum).
fn two_sum_err(a: f64, b: f64, s: f64) -> f64 {
    let bb = s - a;
    (a - (s - bb)) + (b - bb)
}

fn directed_ok(rnd: Rnd) -> bool {
    matches!(rnd, Rnd::Rz | Rnd::Rm | Rnd::Rp)
}

/// PTX `min`/`max`: a NaN operand yields the other; -0 orders below +0.
pub(crate) fn fmin64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_negative() { a } else { b };
    }
    a.min(b)
}
pub(crate) fn fmax64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_positive() { a } else { b };
    }
    a.max(b)
}
#[inline]
pub fn fmin32(a: f32, b: f32) -> f32 {
    fmin64(a as f64, b as f64) as f32
}
#[inline]
pub fn fmax32(a: f32, b: f32) -> f32 {
    fmax64(a as f64, b as f64) as f32
}

/// Binary float ops in any rounding mode, with ftz/sat (the slow general path).
pub fn fbin(op: FBin, is64: bool, rnd: Rnd, ftz: bool, sat: bool, x: u64, y: u64) -> u64 {
    if is64 {
        let (mut a, mut b) = (f64of(x), f64of(y));
        if ftz {
            a = ftz64(a);
            b = ftz64(b);
        }
        let r = match op {
            FBin::Add | FBin::Sub => {
                let b = if op == FBin::Sub { -b } else { b };
                let s = a + b;
                if directed_ok(rnd) && s.is_finite() {
                    direct(s, sgn(two_sum_err(a, b, s)), rnd)
                } else {
                    s
                }
            }
            FBin::Mul => {
                let p = a * b;
                if directed_ok(rnd) && p.is_finite() {
                    direct(p, sgn(a.mul_add(b, -p)), rnd)
                } else {
                    p
                }
            }
            FBin::Div => {
                let q = a / b;
                if directed_ok(rnd) && q.is_finite() && q != 0.0 {
                    let rem = (-q).mul_add(b, a);
                    direct(q, sgn(rem) * sgn(b), rnd)
                } else {
                    q
                }
            }
            FBin::Min => fmin64(a, b),
            FBin::Max => fmax64(a, b),
            FBin::Copysign => b.copysign(a),
        };
        return b64(finish(r, ftz, sat));
    }
    let (mut a, mut b) = (f32of(x), f32of(y));
    if ftz {
        a = ftz32(a);
        b = ftz32(b);
    }
    let r = match op {
        FBin::Add | FBin::Sub => {
            let b = if op == FBin::Sub { -b } else { b };
            let s = a + b;
            if directed_ok(rnd) && s.is_finite() {
                // TwoSum in f32 gives the exact rounding error
                let bb = s - a;
                let err = (a - (s - bb)) + (b - bb);
                direct(s, sgn(err as f64), rnd)
            } else {
                s
            }
        }
        FBin::Mul => {
            let p = a as f64 * b as f64; // exact
            let r = p as f32;
            if directed_ok(rnd) {
                direct(r, sgn(p - r as f64), rnd)
            } else {
                a * b
            }
        }
        FBin::Div => {
            let q = a / b;
            if directed_ok(rnd) && q.is_finite() && q != 0.0 {
                let rem = (a as f64) - (q as f64) * (b as f64);
                direct(q, sgn(rem) * sgn(b as f64), rnd)
            } else {
                q
            }
        }
        FBin::Min => fmin32(a, b),
        FBin::Max => fmax32(a, b),
        FBin::Copysign => b.copysign(a),
    };
    b32(finish(r, ftz, sat))
}

pub fn fma(is64: bool, rnd: Rnd, ftz: bool, sat: bool, x: u64, y: u64, z: u64) -> u64 {
    if is64 {
        let (mut a, mut b, mut c) = (f64of(x), f64of(y), f64of(z));
        if ftz {
            (a, b, c) = (ftz64(a), ftz64(b), ftz64(c));
        }
        // directed f64 fma is computed as round-to-nearest (documented gap)
        let mut r = a.mul_add(b, c);
        if sat {
            r = saturate(r);
        }
        return b64(r);
    }
    let (mut a, mut b, mut c) = (f32of(x), f32of(y), f32of(z));
    if ftz {
        (a, b, c) = (ftz32(a), ftz32(b), ftz32(c));
    }
    let mut r = a.mul_add(b, c);
    if directed_ok(rnd) && r.is_finite() {
        let p = a as f64 * b as f64; // exact
        let s = p + c as f64;
        let e1 = two_sum_err(p, c as f64, s);
        let d = s - r as f64;
        let e = if d != 0.0 { sgn(d) } else { sgn(e1) };
        r = direct(r, e, rnd);
    }
    b32(finish(r, ftz, sat))
}

pub fn fun(op: FUn, is64: bool, rnd: Rnd, ftz: bool, sat: bool, x: u64) -> u64 {
    if is64 {
        let mut a = f64of(x);
        if ftz {
            a = ftz64(a);
        }
        let r = match op {
            FUn::Mov => a,
            FUn::Neg => -a,
            FUn::Abs => a.abs(),
            FUn::Sqrt => {
                let r = a.sqrt();
                if directed_ok(rnd) && r.is_finite() && r > 0.0 {
                    direct(r, sgn((-r).mul_add(r, a)), rnd)
                } else {
                    r
                }
            }
            FUn::Rcp => {
                let q = 1.0 / a;
                if directed_ok(rnd) && q.is_finite() && q != 0.0 {
                    direct(q, sgn((-q).mul_add(a, 1.0)) * sgn(a), rnd)
                } else {
                    q
                }
            }
            FUn::Rsqrt | FUn::Ex2 | FUn::Lg2 | FUn::Sin | FUn::Cos | FUn::Tanh => plain_unary(op, a),
        };
        return b64(finish(r, ftz, sat));
    }
    let mut a = f32of(x);
    if ftz {
        a = ftz32(a);
    }
    let r = match op {
        FUn::Mov => a,
        FUn::Neg => return (x as u32 ^ 0x8000_0000) as u64,
        FUn::Abs => return (x as u32 & 0x7fff_ffff) as u64,
        FUn::Sqrt => {
            let r = a.sqrt();
            if directed_ok(rnd) && r.is_finite() && r > 0.0 {
                direct(r, sgn(a as f64 - r as f64 * r as f64), rnd)
            } else {
                r
            }
        }
        FUn::Rcp => {
            let q = 1.0 / a;
            if directed_ok(rnd) && q.is_finite() && q != 0.0 {
                direct(q, sgn(1.0 - q as f64 * a as f64) * sgn(a as f64), rnd)
            } else {
                q
            }
        }
        FUn::Rsqrt | FUn::Ex2 | FUn::Lg2 | FUn::Sin | FUn::Cos | FUn::Tanh => plain_unary(op, a),
    };
    b32(finish(r, ftz, sat))
}

/// Integer comparison of `w`-bit values.
#[inline(always)]
pub fn icmp(cmp: Cmp, signed: bool, w: u8, a: u64, b: u64) -> bool {
    if signed && !matches!(cmp, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs) {
        let (a, b) = (sext(a, w), sext(b, w));
        match cmp {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            _ => false,
        }
    } else {
        let m = mask(w);
        let (a, b) = (a & m, b & m);
        match cmp {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt | Cmp::Lo => a < b,
            Cmp::Le | Cmp::Ls => a <= b,
            Cmp::Gt | Cmp::Hi => a > b,
            Cmp::Ge | Cmp::Hs => a >= b,
            _ => false,
        }
    }
}

/// Float comparison (both operands widened to f64, which preserves order).
#[inline(always)]
pub fn fcmp(cmp: Cmp, a: f64, b: f64) -> bool {
    let un = a.is_nan() || b.is_nan();
    match cmp {
        Cmp::Eq => !un && a == b,
        Cmp::Ne => !un && a != b,
        Cmp::Lt => !un && a < b,
        Cmp::Le => !un && a <= b,
        Cmp::Gt => !un && a > b,
        Cmp::Ge => !un && a >= b,
        Cmp::Equ => un || a == b,
        Cmp::Neu => un || a != b,
        Cmp::Ltu => un || a < b,
        Cmp::Leu => un || a <= b,
        Cmp::Gtu => un || a > b,
        Cmp::Geu => un || a >= b,
        Cmp::Num => !un,
        Cmp::Nan => un,
        _ => false,
    }
}

pub fn compare(cmp: Cmp, ty: Ty, ftz: bool, a: u64, b: u64) -> bool {
    match ty {
        Ty::F(32) => {
            let (mut x, mut y) = (f32of(a), f32of(b));
            if ftz {
                x = ftz32(x);
                y = ftz32(y);
            }
            fcmp(cmp, x as f64, y as f64)
        }
        Ty::F(_) => fcmp(cmp, f64of(a), f64of(b)),
        t => icmp(cmp, t.is_signed(), t.bits(), a, b),
    }
}

pub fn testp(op: TestpOp, is64: bool, x: u64) -> bool {
    let v = if is64 { f64of(x) } else { f32of(x) as f64 };
    let sub = if is64 { v.is_subnormal() } else { f32of(x).is_subnormal() };
    match op {
        TestpOp::Finite => v.is_finite(),
        TestpOp::Infinite => v.is_infinite(),
        TestpOp::Number => !v.is_nan(),
        TestpOp::NotANumber => v.is_nan(),
        TestpOp::Normal => v.is_normal() && !sub,
        TestpOp::Subnormal => sub,
    }
}

// ---- half precision (storage conversions only) ----

pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // subnormal: value = m * 2^-24
            let v = m as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (31, 0) => sign | 0x7f80_0000,
        (31, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

pub fn f32_to_f16(f: f32) -> u16 {
    let x = f.to_bits();
    let sign = ((x >> 16) & 0x8000) as u16;
    if f.is_nan() {
        return 0x7fff;
    }
    let a = f.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < f32::from_bits(0x3880_0000) {
        // subnormal half (< 2^-14): round m = a * 2^24 to nearest even
        let m = (a * 16_777_216.0).round_ties_even() as u16;
        return sign | m;
    }
    let exp = ((x >> 23) & 0xff) as i32 - 127 + 15;
    let man = x & 0x7f_ffff;
    let mut h = ((exp as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && (h & 1) == 1) {
        h += 1;
    }
    sign | h as u16
}

/// The full `cvt` (the integer-only, non-saturating forms are compiled to masks).
pub fn cvt(dst: Ty, src: Ty, rnd: Rnd, irnd: IRnd, sat: bool, ftz: bool, x: u64) -> u64 {
    match (dst.is_float(), src.is_float()) {
        (false, false) => {
            let v: i128 = if src.is_signed() { sext(x, src.bits()) as i128 } else { (x & mask(src.bits())) as i128 };
            let v = if sat { clamp_int(v, dst) } else { v };
            (v as u64) & mask(dst.bits())
        }
        (true, false) => {
            let v: i128 = if src.is_signed() { sext(x, src.bits()) as i128 } else { (x & mask(src.bits())) as i128 };
            int_to_float(v, dst, rnd, sat)
        }
        (false, true) => {
            let f = read_float(src, ftz, x);
            let f = match irnd {
                IRnd::Rni | IRnd::None => f.round_ties_even(),
                IRnd::Rzi => f.trunc(),
                IRnd::Rmi => f.floor(),
                IRnd::Rpi => f.ceil(),
            };
            // float → int saturates; NaN → 0 (Rust's `as` does exactly this)
            let v: u64 = match dst {
                Ty::S(8) => f as i8 as u64,
                Ty::S(16) => f as i16 as u64,
                Ty::S(32) => f as i32 as u64,
                Ty::S(_) => f as i64 as u64,
                Ty::U(8) | Ty::B(8) => f as u8 as u64,
                Ty::U(16) | Ty::B(16) => f as u16 as u64,
                Ty::U(32) | Ty::B(32) => f as u32 as u64,
                _ => f as u64,
            };
            v & mask(dst.bits())
        }
        (true, true) => {
            let f = read_float(src, ftz, x);
            let f = match irnd {
                IRnd::None => f,
                IRnd::Rni => f.round_ties_even(),
                IRnd::Rzi => f.trunc(),
                IRnd::Rmi => f.floor(),
                IRnd::Rpi => f.ceil(),
            };
            let f = if sat { saturate(f) } else { f };
            match dst.bits() {
                16 => f32_to_f16(f as f32) as u64,
                32 => {
                    let mut r = f as f32;
                    if src.bits() == 64 && directed_ok(rnd) && r.is_finite() {
                        r = direct(r, sgn(f - r as f64), rnd);
                    }
                    if ftz {
                        r = ftz32(r);
                    }
                    b32(r)
                }
                _ => b64(f),
            }
        }
    }
}

fn read_float(src: Ty, ftz: bool, x: u64) -> f64 {
    match src.bits() {
        16 => f16_to_f32(x as u16) as f64,
        32 => {
            let f = f32of(x);
            (if ftz { ftz32(f) } else { f }) as f64
        }
        _ => f64of(x),
    }
}

fn clamp_int(v: i128, t: Ty) -> i128 {
    let b = t.bits() as u32;
    if t.is_signed() {
        let lo = -(1i128 << (b - 1));
        let hi = (1i128 << (b - 1)) - 1;
        v.clamp(lo, hi)
    } else {
        v.clamp(0, (1i128 << b) - 1)
    }
}

fn int_to_float(v: i128, dst: Ty, rnd: Rnd, sat: bool) -> u64 {
    match dst.bits() {
        16 => f32_to_f16(v as f32) as u64,
        32 => {
            let mut r = v as f32;
            if directed_ok(rnd) {
                let back = r as i128;
                r = direct(r, (v.cmp(&back)) as i32, rnd);
            }
            if sat {
                r = saturate(r);
            }
            b32(r)
        }
        _ => {
            let mut r = v as f64;
            if directed_ok(rnd) {
                let back = r as i128;
                r = direct(r, (v.cmp(&back)) as i32, rnd);
            }
            if sat {
                r = saturate(r);
            }
            b64(r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding() {
        let one = 1.0f32.to_bits() as u64;
        let tiny = 1e-10f32.to_bits() as u64;
        let up = fbin(FBin::Add, false, Rnd::Rp, false, false, one, tiny);
        assert_eq!(f32of(up), next_up(1.0f32));
        let rz = fbin(FBin::Add, false, Rnd::Rz, false, false, one, tiny);
        assert_eq!(f32of(rz), 1.0);
        let neg = (-1e-10f32).to_bits() as u64;
        let rz = fbin(FBin::Add, false, Rnd::Rz, false, false, one, neg);
        assert_eq!(f32of(rz), next_down(1.0f32));
        let rm = fbin(FBin::Mul, false, Rnd::Rm, false, false, 3.0f32.to_bits() as u64, 0.1f32.to_bits() as u64);
        assert!(f32of(rm) <= 0.3f32.max(3.0 * 0.1));
        let third = fbin(FBin::Div, false, Rnd::Rp, false, false, one, 3.0f32.to_bits() as u64);
        let third_rm = fbin(FBin::Div, false, Rnd::Rm, false, false, one, 3.0f32.to_bits() as u64);
        assert_eq!(f32of(third), next_up(f32of(third_rm)));
    }

    #[test]
    fn conversions() {
        assert_eq!(
            cvt(Ty::S(32), Ty::F(32), Rnd::Rn, IRnd::Rzi, false, false, (-2.7f32).to_bits() as u64) as u32,
            -2i32 as u32
        );
        assert_eq!(cvt(Ty::U(32), Ty::F(32), Rnd::Rn, IRnd::Rzi, false, false, (-2.7f32).to_bits() as u64), 0);
        assert_eq!(cvt(Ty::S(32), Ty::F(32), Rnd::Rn, IRnd::Rni, false, false, 2.5f32.to_bits() as u64), 2);
        assert_eq!(cvt(Ty::S(32), Ty::F(32), Rnd::Rn, IRnd::Rzi, false, false, f32::NAN.to_bits() as u64), 0);
        assert_eq!(
            cvt(Ty::S(32), Ty::F(32), Rnd::Rn, IRnd::Rzi, false, false, 1e20f32.to_bits() as u64),
            i32::MAX as u64
        );
        assert_eq!(cvt(Ty::U(8), Ty::S(32), Rnd::Rn, IRnd::None, true, false, (-5i32) as u32 as u64), 0);
        assert_eq!(cvt(Ty::U(8), Ty::S(32), Rnd::Rn, IRnd::None, true, false, 300), 255);
        let big = (1u64 << 24) + 1;
        assert_eq!(f32of(cvt(Ty::F(32), Ty::U(32), Rnd::Rp, IRnd::None, false, false, big)), 16777218.0);
        assert_eq!(f32of(cvt(Ty::F(32), Ty::U(32), Rnd::Rz, IRnd::None, false, false, big)), 16777216.0);
        for h in [0x3c00u16, 0xc000, 0x0001, 0x7bff, 0x7c00, 0x3555] {
            assert_eq!(f32_to_f16(f16_to_f32(h)), h);
        }
    }

    #[test]
    fn min_max_nan() {
        assert_eq!(fmin32(f32::NAN, 1.0), 1.0);
        assert!(fmin32(-0.0, 0.0).is_sign_negative());
        assert!(fmax32(-0.0, 0.0).is_sign_positive());
    }
}
