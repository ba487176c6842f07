//! Execution of one warp instruction for a set of active lanes.

use super::alu::*;
use super::mem::MemAccess;
use super::Exec;
use crate::error::SimError;
use crate::ir::*;
use crate::memory::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW};

const FULL: u32 = u32::MAX;

#[inline(always)]
pub(super) fn lanes(m: u32, mut f: impl FnMut(usize)) {
    if m == FULL {
        for l in 0..32 {
            f(l)
        }
    } else {
        let mut m = m;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            f(l)
        }
    }
}

#[inline(always)]
fn get32(r: &[u64], a: Reg) -> [u64; 32] {
    let a = a as usize;
    r[a..a + 32].try_into().unwrap()
}

/// Each lane's own `membermask` of a warp-synchronous instruction, less the
/// lanes not executing it: lanes of one warp may name different groups (the
/// two halves of a `tiled_partition<16>` vote, match and reduce apart).
fn members(r: &[u64], mreg: Reg, m: u32) -> [u32; 32] {
    get32(r, mreg).map(|v| v as u32 & m)
}

// The lane maps index the register file directly. Each lane reads its sources
// before writing its destination, and lanes touch disjoint indices, so `d` may
// alias `a`/`b`/`c` (as in `add %r1, %r1, %r2`) without copying.

#[inline(always)]
fn check_slots(r: &[u64], slots: &[Reg]) {
    for &s in slots {
        assert!(s as usize + 32 <= r.len(), "register slot out of range");
    }
}

#[inline(always)]
fn map1(r: &mut [u64], m: u32, d: Reg, a: Reg, f: impl Fn(u64) -> u64) {
    check_slots(r, &[d, a]);
    let p = r.as_mut_ptr();
    let (d, a) = (d as usize, a as usize);
    // SAFETY: d + 31 and a + 31 are in bounds (checked above); l < 32.
    lanes(m, |l| unsafe { *p.add(d + l) = f(*p.add(a + l)) });
}

#[inline(always)]
fn map2(r: &mut [u64], m: u32, d: Reg, a: Reg, b: Reg, f: impl Fn(u64, u64) -> u64) {
    check_slots(r, &[d, a, b]);
    let p = r.as_mut_ptr();
    let (d, a, b) = (d as usize, a as usize, b as usize);
    // SAFETY: all slots are in bounds (checked above); l < 32.
    lanes(m, |l| unsafe { *p.add(d + l) = f(*p.add(a + l), *p.add(b + l)) });
}

#[inline(always)]
pub(super) fn map3(r: &mut [u64], m: u32, d: Reg, a: Reg, b: Reg, c: Reg, f: impl Fn(u64, u64, u64) -> u64) {
    check_slots(r, &[d, a, b, c]);
    let p = r.as_mut_ptr();
    let (d, a, b, c) = (d as usize, a as usize, b as usize, c as usize);
    // SAFETY: all slots are in bounds (checked above); l < 32.
    lanes(m, |l| unsafe { *p.add(d + l) = f(*p.add(a + l), *p.add(b + l), *p.add(c + l)) });
}

/// Evaluates `f` per active lane into a lane mask.
#[inline(always)]
fn test2(r: &[u64], m: u32, a: Reg, b: Reg, f: impl Fn(u64, u64) -> bool) -> u32 {
    let (av, bv) = (&r[a as usize..a as usize + 32], &r[b as usize..b as usize + 32]);
    let mut res = 0u32;
    lanes(m, |l| res |= (f(av[l], bv[l]) as u32) << l);
    res
}

/// Writes lanes `m` of predicate `p` from the bits of `v`.
#[inline(always)]
fn set_pred(preds: &mut [u32], p: Pred, m: u32, v: u32) {
    if p != NO_PRED {
        let x = &mut preds[p as usize];
        *x = (*x & !m) | (v & m);
    }
}

#[inline(always)]
fn pbits(preds: &[u32], p: Pred, neg: bool) -> u32 {
    let v = preds[p as usize];
    if neg {
        !v
    } else {
        v
    }
}

fn bool_op(op: BoolOp, a: u32, b: u32) -> u32 {
    match op {
        BoolOp::And => a & b,
        BoolOp::Or => a | b,
        BoolOp::Xor => a ^ b,
    }
}

fn bfe(x: u64, pos: u64, len: u64, w: u8, signed: bool) -> u64 {
    let msb = w as u64 - 1;
    let (pos, len) = (pos & 0xff, len & 0xff);
    // PTX: a zero-length field gives 0 even for signed types
    let sbit = if signed && len > 0 {
        let idx = (pos + len - 1).min(msb);
        (x >> idx) & 1
    } else {
        0
    };
    let avail = if pos > msb { 0 } else { (msb + 1 - pos).min(len) };
    let mut d = if avail == 0 { 0 } else { (x >> pos) & mask(avail as u8) };
    if sbit == 1 {
        d |= !mask(avail as u8);
    }
    d & mask(w)
}

fn bfi(f: u64, b: u64, pos: u64, len: u64, w: u8) -> u64 {
    let msb = w as u64 - 1;
    let (pos, len) = (pos & 0xff, len & 0xff);
    if pos > msb || len == 0 {
        return b & mask(w);
    }
    let n = (msb + 1 - pos).min(len);
    let m = mask(n as u8) << pos;
    ((b & !m) | ((f << pos) & m)) & mask(w)
}

fn prmt(a: u64, b: u64, sel: u64) -> u64 {
    let bytes = ((b & 0xffff_ffff) << 32) | (a & 0xffff_ffff);
    let mut d = 0u64;
    for i in 0..4 {
        let s = (sel >> (4 * i)) & 0xf;
        let mut byte = (bytes >> (8 * (s & 7))) & 0xff;
        if s & 8 != 0 {
            byte = if byte & 0x80 != 0 { 0xff } else { 0 };
        }
        d |= byte << (8 * i);
    }
    d
}

fn lop3(a: u64, b: u64, c: u64, lut: u8) -> u64 {
    let mut r = 0u64;
    for i in 0..8 {
        if lut >> i & 1 == 1 {
            let x = if i & 4 != 0 { a } else { !a };
            let y = if i & 2 != 0 { b } else { !b };
            let z = if i & 1 != 0 { c } else { !c };
            r |= x & y & z;
        }
    }
    r & 0xffff_ffff
}

fn dp4a(a: u64, b: u64, c: u64, sa: bool, sb: bool) -> u64 {
    let mut acc = c as u32;
    for i in 0..4 {
        let x = (a >> (8 * i)) as u8;
        let y = (b >> (8 * i)) as u8;
        let x = if sa { x as i8 as i32 } else { x as i32 };
        let y = if sb { y as i8 as i32 } else { y as i32 };
        acc = acc.wrapping_add((x * y) as u32);
    }
    acc as u64
}

fn bfind(x: u64, w: u8, signed: bool, shift: bool) -> u64 {
    let mut v = x & mask(w);
    if signed && sext(x, w) < 0 {
        v = !v & mask(w);
    }
    if v == 0 {
        return 0xffff_ffff;
    }
    let pos = 63 - v.leading_zeros() as u64;
    if shift {
        w as u64 - 1 - pos
    } else {
        pos
    }
}

impl Exec<'_> {
    pub(super) fn thread_of(&self, w: usize, lane: usize) -> (crate::error::Dim3, u32) {
        let t = (w * 32 + lane) as u32;
        (self.thread_coords(t), t)
    }

    pub(super) fn exec(&mut self, w: usize, pc: usize, m: u32) -> Result<(), SimError> {
        let k = self.k;
        let ins = &k.code[pc];
        let rb = w * self.nslots * LANES;
        let pb = w * self.npreds;
        let r = &mut self.regs[rb..rb + self.nslots * LANES];
        let p = &mut self.preds[pb..pb + self.npreds];
        match ins.op {
            Op::IBin { op, w: wd, d, a, b } => {
                let mk = mask(wd);
                match op {
                    IBin::Add => map2(r, m, d, a, b, |x, y| x.wrapping_add(y) & mk),
                    IBin::Sub => map2(r, m, d, a, b, |x, y| x.wrapping_sub(y) & mk),
                    IBin::MulLo => map2(r, m, d, a, b, |x, y| x.wrapping_mul(y) & mk),
                    IBin::MulHiS => {
                        if wd == 32 {
                            map2(r, m, d, a, b, |x, y| ((sext(x, 32) * sext(y, 32)) >> 32) as u64 & mk)
                        } else {
                            map2(r, m, d, a, b, |x, y| ((sext(x, wd) as i128 * sext(y, wd) as i128) >> wd) as u64 & mk)
                        }
                    }
                    IBin::MulHiU => {
                        if wd == 32 {
                            map2(r, m, d, a, b, |x, y| ((x & mk) * (y & mk)) >> 32)
                        } else {
                            map2(r, m, d, a, b, |x, y| (((x & mk) as u128 * (y & mk) as u128) >> wd) as u64 & mk)
                        }
                    }
                    IBin::MulWideS => {
                        let m2 = mask(wd * 2);
                        map2(r, m, d, a, b, |x, y| (sext(x, wd).wrapping_mul(sext(y, wd))) as u64 & m2)
                    }
                    IBin::MulWideU => {
                        let m2 = mask(wd * 2);
                        map2(r, m, d, a, b, |x, y| (x & mk).wrapping_mul(y & mk) & m2)
                    }
                    IBin::DivS => map2(r, m, d, a, b, |x, y| {
                        let (x, y) = (sext(x, wd), sext(y, wd));
                        if y == 0 {
                            mk
                        } else {
                            x.wrapping_div(y) as u64 & mk
                        }
                    }),
                    // division by zero gives all ones, as on the hardware
                    IBin::DivU => map2(r, m, d, a, b, |x, y| (x & mk).checked_div(y & mk).unwrap_or(mk)),
                    IBin::RemS => map2(r, m, d, a, b, |x, y| {
                        let (xs, ys) = (sext(x, wd), sext(y, wd));
                        if ys == 0 {
                            x & mk
                        } else {
                            xs.wrapping_rem(ys) as u64 & mk
                        }
                    }),
                    IBin::RemU => map2(r, m, d, a, b, |x, y| (x & mk).checked_rem(y & mk).unwrap_or(x & mk)),
                    IBin::MinS => map2(r, m, d, a, b, |x, y| sext(x, wd).min(sext(y, wd)) as u64 & mk),
                    IBin::MaxS => map2(r, m, d, a, b, |x, y| sext(x, wd).max(sext(y, wd)) as u64 & mk),
                    IBin::MinU => map2(r, m, d, a, b, |x, y| (x & mk).min(y & mk)),
                    IBin::MaxU => map2(r, m, d, a, b, |x, y| (x & mk).max(y & mk)),
                    IBin::Pair16(op) => map2(r, m, d, a, b, |x, y| op.apply(x, y)),
                    IBin::And => map2(r, m, d, a, b, |x, y| x & y & mk),
                    IBin::Or => map2(r, m, d, a, b, |x, y| (x | y) & mk),
                    IBin::Xor => map2(r, m, d, a, b, |x, y| (x ^ y) & mk),
                    IBin::Shl => map2(r, m, d, a, b, |x, y| {
                        let s = y as u32;
                        if s >= wd as u32 {
                            0
                        } else {
                            (x << s) & mk
                        }
                    }),
                    IBin::ShrU => map2(r, m, d, a, b, |x, y| {
                        let s = y as u32;
                        if s >= wd as u32 {
                            0
                        } else {
                            (x & mk) >> s
                        }
                    }),
                    IBin::ShrS => map2(r, m, d, a, b, |x, y| {
                        let s = (y as u32).min(wd as u32 - 1);
                        (sext(x, wd) >> s) as u64 & mk
                    }),
                    IBin::AddSat => map2(r, m, d, a, b, |x, y| {
                        (sext(x, 32) + sext(y, 32)).clamp(i32::MIN as i64, i32::MAX as i64) as u64 & mk
                    }),
                    IBin::SubSat => map2(r, m, d, a, b, |x, y| {
                        (sext(x, 32) - sext(y, 32)).clamp(i32::MIN as i64, i32::MAX as i64) as u64 & mk
                    }),
                    IBin::Mul24LoS => map2(r, m, d, a, b, |x, y| (sext(x, 24) * sext(y, 24)) as u64 & mk),
                    IBin::Mul24LoU => map2(r, m, d, a, b, |x, y| ((x & 0xff_ffff) * (y & 0xff_ffff)) & mk),
                    IBin::Mul24HiS => map2(r, m, d, a, b, |x, y| ((sext(x, 24) * sext(y, 24)) >> 16) as u64 & mk),
                    IBin::Mul24HiU => map2(r, m, d, a, b, |x, y| (((x & 0xff_ffff) * (y & 0xff_ffff)) >> 16) & mk),
                }
            }
            Op::IUn { op, w: wd, d, a } => {
                let mk = mask(wd);
                match op {
                    IUn::Mov => map1(r, m, d, a, |x| x),
                    IUn::Not => map1(r, m, d, a, |x| !x & mk),
                    IUn::Neg => map1(r, m, d, a, |x| x.wrapping_neg() & mk),
                    IUn::Abs => map1(r, m, d, a, |x| sext(x, wd).wrapping_abs() as u64 & mk),
                    IUn::Popc => map1(r, m, d, a, |x| (x & mk).count_ones() as u64),
                    IUn::Clz => map1(r, m, d, a, |x| ((x & mk).leading_zeros() - (64 - wd as u32)) as u64),
                    IUn::Brev => map1(r, m, d, a, |x| (x & mk).reverse_bits() >> (64 - wd as u32)),
                    IUn::Cnot => map1(r, m, d, a, |x| (x & mk == 0) as u64),
                    IUn::BfindS => map1(r, m, d, a, |x| bfind(x, wd, true, false)),
                    IUn::BfindU => map1(r, m, d, a, |x| bfind(x, wd, false, false)),
                    IUn::BfindSShift => map1(r, m, d, a, |x| bfind(x, wd, true, true)),
                    IUn::BfindUShift => map1(r, m, d, a, |x| bfind(x, wd, false, true)),
                    IUn::Zext => map1(r, m, d, a, |x| x & mk),
                    IUn::Sext => map1(r, m, d, a, |x| sext(x, wd) as u64),
                }
            }
            Op::ITern { op, w: wd, d, a, b, c } => {
                let mk = mask(wd);
                match op {
                    ITern::MadLo => map3(r, m, d, a, b, c, |x, y, z| x.wrapping_mul(y).wrapping_add(z) & mk),
                    ITern::MadHiS => map3(r, m, d, a, b, c, |x, y, z| {
                        (((sext(x, wd) as i128 * sext(y, wd) as i128) >> wd) as u64).wrapping_add(z) & mk
                    }),
                    ITern::MadHiU => map3(r, m, d, a, b, c, |x, y, z| {
                        ((((x & mk) as u128 * (y & mk) as u128) >> wd) as u64).wrapping_add(z) & mk
                    }),
                    ITern::MadWideS => {
                        let m2 = mask(wd * 2);
                        map3(r, m, d, a, b, c, |x, y, z| {
                            (sext(x, wd).wrapping_mul(sext(y, wd)) as u64).wrapping_add(z) & m2
                        })
                    }
                    ITern::MadWideU => {
                        let m2 = mask(wd * 2);
                        map3(r, m, d, a, b, c, |x, y, z| (x & mk).wrapping_mul(y & mk).wrapping_add(z) & m2)
                    }
                    ITern::Mad24LoS => {
                        map3(r, m, d, a, b, c, |x, y, z| ((sext(x, 24) * sext(y, 24)) as u64).wrapping_add(z) & mk)
                    }
                    ITern::Mad24LoU => {
                        map3(r, m, d, a, b, c, |x, y, z| ((x & 0xff_ffff) * (y & 0xff_ffff)).wrapping_add(z) & mk)
                    }
                    ITern::SadS => map3(r, m, d, a, b, c, |x, y, z| {
                        (z.wrapping_add((sext(x, wd) - sext(y, wd)).unsigned_abs())) & mk
                    }),
                    ITern::SadU => map3(r, m, d, a, b, c, |x, y, z| {
                        let (x, y) = (x & mk, y & mk);
                        z.wrapping_add(x.abs_diff(y)) & mk
                    }),
                    ITern::BfeS => map3(r, m, d, a, b, c, |x, y, z| bfe(x, y, z, wd, true)),
                    ITern::BfeU => map3(r, m, d, a, b, c, |x, y, z| bfe(x, y, z, wd, false)),
                    ITern::SlctS => map3(r, m, d, a, b, c, |x, y, z| if sext(z, 32) >= 0 { x } else { y }),
                    ITern::SlctF => map3(r, m, d, a, b, c, |x, y, z| if f32of(z) >= 0.0 { x } else { y }),
                    ITern::ShfLWrap | ITern::ShfLClamp | ITern::ShfRWrap | ITern::ShfRClamp => {
                        let left = matches!(op, ITern::ShfLWrap | ITern::ShfLClamp);
                        let wrap = matches!(op, ITern::ShfLWrap | ITern::ShfRWrap);
                        map3(r, m, d, a, b, c, |x, y, z| {
                            let n = if wrap { z & 31 } else { (z & 0xffff_ffff).min(32) };
                            let v = ((y & 0xffff_ffff) << 32) | (x & 0xffff_ffff);
                            if left {
                                ((v << n) >> 32) & 0xffff_ffff
                            } else {
                                (v >> n) & 0xffff_ffff
                            }
                        })
                    }
                    ITern::Prmt => map3(r, m, d, a, b, c, prmt),
                    ITern::Lop3(lut) => map3(r, m, d, a, b, c, |x, y, z| lop3(x, y, z, lut)),
                    ITern::Dp4aSS => map3(r, m, d, a, b, c, |x, y, z| dp4a(x, y, z, true, true)),
                    ITern::Dp4aUU => map3(r, m, d, a, b, c, |x, y, z| dp4a(x, y, z, false, false)),
                    ITern::Dp4aSU => map3(r, m, d, a, b, c, |x, y, z| dp4a(x, y, z, true, false)),
                    ITern::Dp4aUS => map3(r, m, d, a, b, c, |x, y, z| dp4a(x, y, z, false, true)),
                }
            }
            Op::Bfi { w: wd, d, a, b, c, e } => {
                let (av, bv, cv, ev) = (get32(r, a), get32(r, b), get32(r, c), get32(r, e));
                let d = d as usize;
                lanes(m, |l| r[d + l] = bfi(av[l], bv[l], cv[l], ev[l], wd));
            }
            Op::FBin { op, f64: is64, rnd, ftz, sat, d, a, b } => {
                if matches!(rnd, Rnd::Rn | Rnd::Approx) && !ftz && !sat {
                    if is64 {
                        match op {
                            FBin::Add => map2(r, m, d, a, b, |x, y| b64(f64of(x) + f64of(y))),
                            FBin::Sub => map2(r, m, d, a, b, |x, y| b64(f64of(x) - f64of(y))),
                            FBin::Mul => map2(r, m, d, a, b, |x, y| b64(f64of(x) * f64of(y))),
                            FBin::Div => map2(r, m, d, a, b, |x, y| b64(f64of(x) / f64of(y))),
                            _ => map2(r, m, d, a, b, |x, y| fbin(op, true, rnd, false, false, x, y)),
                        }
                    } else {
                        match op {
                            FBin::Add => map2(r, m, d, a, b, |x, y| b32(f32of(x) + f32of(y))),
                            FBin::Sub => map2(r, m, d, a, b, |x, y| b32(f32of(x) - f32of(y))),
                            FBin::Mul => map2(r, m, d, a, b, |x, y| b32(f32of(x) * f32of(y))),
                            FBin::Div => map2(r, m, d, a, b, |x, y| b32(f32of(x) / f32of(y))),
                            FBin::Min => map2(r, m, d, a, b, |x, y| b32(fmin32(f32of(x), f32of(y)))),
                            FBin::Max => map2(r, m, d, a, b, |x, y| b32(fmax32(f32of(x), f32of(y)))),
                            FBin::Copysign => {
                                map2(r, m, d, a, b, |x, y| ((y as u32 & 0x7fff_ffff) | (x as u32 & 0x8000_0000)) as u64)
                            }
                        }
                    }
                } else {
                    map2(r, m, d, a, b, |x, y| fbin(op, is64, rnd, ftz, sat, x, y))
                }
            }
            Op::FUn { op, f64: is64, rnd, ftz, sat, d, a } => {
                if matches!(rnd, Rnd::Rn | Rnd::Approx) && !ftz && !sat && !is64 {
                    match op {
                        FUn::Neg => map1(r, m, d, a, |x| (x as u32 ^ 0x8000_0000) as u64),
                        FUn::Abs => map1(r, m, d, a, |x| (x as u32 & 0x7fff_ffff) as u64),
                        FUn::Sqrt => map1(r, m, d, a, |x| b32(f32of(x).sqrt())),
                        FUn::Rcp => map1(r, m, d, a, |x| b32(1.0 / f32of(x))),
                        _ => map1(r, m, d, a, |x| fun(op, false, rnd, false, false, x)),
                    }
                } else {
                    map1(r, m, d, a, |x| fun(op, is64, rnd, ftz, sat, x))
                }
            }
            Op::Fma { f64: is64, rnd, ftz, sat, d, a, b, c } => {
                if matches!(rnd, Rnd::Rn | Rnd::Approx) && !ftz && !sat {
                    if is64 {
                        super::fused::fma64(r, m, d, a, b, c)
                    } else {
                        super::fused::fma32(r, m, d, a, b, c)
                    }
                } else {
                    map3(r, m, d, a, b, c, |x, y, z| fma(is64, rnd, ftz, sat, x, y, z))
                }
            }
            Op::Cvt { d, a, dst, src, rnd, irnd, sat, ftz } => {
                map1(r, m, d, a, |x| cvt(dst, src, rnd, irnd, sat, ftz, x))
            }
            Op::Cvta { d, a, space, to_generic, w: wd } => {
                let base = match space {
                    Space::Shared => SHARED_WINDOW,
                    Space::Local => LOCAL_WINDOW,
                    Space::KParam => PARAM_WINDOW,
                    _ => 0,
                };
                let mk = mask(wd);
                if to_generic {
                    map1(r, m, d, a, |x| x.wrapping_add(base) & mk)
                } else {
                    map1(r, m, d, a, |x| x.wrapping_sub(base) & mk)
                }
            }
            Op::Half { op, fmt, ftz, sat, relu, nan, d, a, b, c } => {
                let fl = super::half::Flags { ftz, sat, relu, nan };
                let (b, c) = (if b == NO_REG { a } else { b }, if c == NO_REG { a } else { c });
                map3(r, m, d, a, b, c, |x, y, z| super::half::half_op(op, fmt, fl, x, y, z));
            }
            Op::HalfSetp { cmp, fmt, ftz, p: pd, q, a, b } => {
                let (av, bv) = (get32(r, a), get32(r, b));
                let (mut lo, mut hi) = (0u32, 0u32);
                lanes(m, |l| {
                    let (x, y) = super::half::half_cmp(cmp, fmt, ftz, av[l], bv[l]);
                    lo |= (x as u32) << l;
                    hi |= (y as u32) << l;
                });
                set_pred(p, pd, m, lo);
                set_pred(p, q, m, if fmt.x2() { hi } else { !lo });
            }
            Op::HalfCvt { fmt, to_f32, d, a, b } => {
                let b = if b == NO_REG { a } else { b };
                map2(r, m, d, a, b, |x, y| super::half::half_cvt(fmt, to_f32, x, y));
            }
            Op::Setp { cmp, ty, ftz, p: pd, q, a, b, comb } => {
                // the common types get their own loops (compare() per lane is slower)
                let res = match (ty, ftz) {
                    (Ty::S(32), _) => test2(r, m, a, b, |x, y| icmp(cmp, true, 32, x, y)),
                    (Ty::U(32) | Ty::B(32), _) => test2(r, m, a, b, |x, y| icmp(cmp, false, 32, x, y)),
                    (Ty::S(64), _) => test2(r, m, a, b, |x, y| icmp(cmp, true, 64, x, y)),
                    (Ty::U(64) | Ty::B(64), _) => test2(r, m, a, b, |x, y| icmp(cmp, false, 64, x, y)),
                    (Ty::F(32), false) => test2(r, m, a, b, |x, y| fcmp(cmp, f32of(x) as f64, f32of(y) as f64)),
                    (Ty::F(64), _) => test2(r, m, a, b, |x, y| fcmp(cmp, f64of(x), f64of(y))),
                    _ => test2(r, m, a, b, |x, y| compare(cmp, ty, ftz, x, y)),
                };
                let (pv, qv) = match comb {
                    None => (res, !res),
                    Some((op, c, neg)) => {
                        let cv = pbits(p, c, neg);
                        (bool_op(op, res, cv), bool_op(op, !res, cv))
                    }
                };
                set_pred(p, pd, m, pv);
                set_pred(p, q, m, qv);
            }
            Op::Set { cmp, ty, dty, ftz, d, a, b, comb } => {
                let (av, bv) = (get32(r, a), get32(r, b));
                let mut res = 0u32;
                lanes(m, |l| res |= (compare(cmp, ty, ftz, av[l], bv[l]) as u32) << l);
                if let Some((op, c, neg)) = comb {
                    res = bool_op(op, res, pbits(p, c, neg));
                }
                let t = if dty.is_float() { 1.0f32.to_bits() as u64 } else { mask(dty.bits()) };
                let d = d as usize;
                lanes(m, |l| r[d + l] = if res >> l & 1 == 1 { t } else { 0 });
            }
            Op::Selp { d, a, b, p: ps, neg } => {
                let pv = pbits(p, ps, neg);
                let (av, bv) = (get32(r, a), get32(r, b));
                let d = d as usize;
                lanes(m, |l| r[d + l] = if pv >> l & 1 == 1 { av[l] } else { bv[l] });
            }
            Op::PLogic { op, d, a, na, b, nb } => {
                let v = bool_op(op, pbits(p, a, na), pbits(p, b, nb));
                set_pred(p, d, m, v);
            }
            Op::Testp { op, f64: is64, p: pd, a } => {
                let av = get32(r, a);
                let mut res = 0u32;
                lanes(m, |l| res |= (testp(op, is64, av[l]) as u32) << l);
                set_pred(p, pd, m, res);
            }
            Op::Pack { d, src, n, bits } => {
                let mk = mask(bits);
                let d = d as usize;
                lanes(m, |l| {
                    let mut v = 0u64;
                    for (i, &s) in src.iter().take(n as usize).enumerate() {
                        v |= (r[s as usize + l] & mk) << (i as u32 * bits as u32);
                    }
                    r[d + l] = v;
                });
            }
            Op::Unpack { dst, n, bits, a } => {
                let mk = mask(bits);
                let av = get32(r, a);
                lanes(m, |l| {
                    for (i, &s) in dst.iter().take(n as usize).enumerate() {
                        r[s as usize + l] = (av[l] >> (i as u32 * bits as u32)) & mk;
                    }
                });
            }
            Op::Clock { d, timer } => {
                // What the compiler would have moved past the read does not show.
                let at = self.cycles - self.floating;
                let t = self.time.read(timer, w, at);
                self.time.stall_after_read(w, at);
                let d = d as usize;
                lanes(m, |l| r[d + l] = t);
            }
            Op::Activemask { d } => {
                let d = d as usize;
                lanes(m, |l| r[d + l] = m as u64);
            }
            Op::Vote { mode, d, dp, a, neg, mask: mreg } => {
                let votes = pbits(p, a, neg) & m;
                let member = members(r, mreg, m);
                match mode {
                    VoteMode::Ballot => {
                        let d = d as usize;
                        lanes(m, |l| r[d + l] = (votes & member[l]) as u64);
                    }
                    _ => {
                        let mut pv = 0u32;
                        lanes(m, |l| {
                            let (mine, all) = (votes & member[l], member[l]);
                            let holds = match mode {
                                VoteMode::All => mine == all,
                                VoteMode::Any => mine != 0,
                                _ => mine == 0 || mine == all,
                            };
                            pv |= (holds as u32) << l;
                        });
                        set_pred(p, dp, m, pv);
                    }
                }
            }
            Op::Shfl { mode, d, dp, a, b, c, .. } => {
                let (av, bv, cv) = (get32(r, a), get32(r, b), get32(r, c));
                let mut pv = 0u32;
                let d = d as usize;
                lanes(m, |l| {
                    let lane = l as i64;
                    let bval = (bv[l] & 0x1f) as i64;
                    let cval = (cv[l] & 0x1f) as i64;
                    let seg = ((cv[l] >> 8) & 0x1f) as i64;
                    let max_lane = (lane & seg) | (cval & !seg);
                    let min_lane = lane & seg;
                    let (j, ok) = match mode {
                        ShflMode::Up => {
                            let j = lane - bval;
                            (j, j >= max_lane)
                        }
                        ShflMode::Down => {
                            let j = lane + bval;
                            (j, j <= max_lane)
                        }
                        ShflMode::Bfly => {
                            let j = lane ^ bval;
                            (j, j <= max_lane)
                        }
                        ShflMode::Idx => {
                            let j = min_lane | (bval & !seg);
                            (j, j <= max_lane)
                        }
                    };
                    let j = if ok { j as usize & 31 } else { l };
                    r[d + l] = av[j] & 0xffff_ffff;
                    pv |= (ok as u32) << l;
                });
                set_pred(p, dp, m, pv);
            }
            Op::Match { any, w: wd, d, dp, a, mask: mreg } => {
                let av = get32(r, a);
                let mk = mask(wd);
                let member = members(r, mreg, m);
                let d = d as usize;
                if any {
                    lanes(m, |l| {
                        let mut same = 0u32;
                        lanes(member[l], |j| same |= ((av[j] & mk == av[l] & mk) as u32) << j);
                        r[d + l] = same as u64;
                    });
                } else {
                    let mut pv = 0u32;
                    lanes(m, |l| {
                        let mut all = true;
                        lanes(member[l], |j| all &= av[j] & mk == av[l] & mk);
                        r[d + l] = if all { member[l] as u64 } else { 0 };
                        pv |= (all as u32) << l;
                    });
                    set_pred(p, dp, m, pv);
                }
            }
            Op::Redux { op, signed, d, a, mask: mreg } => {
                let av = get32(r, a);
                let member = members(r, mreg, m);
                let d = d as usize;
                lanes(m, |l| {
                    let mut acc: Option<u64> = None;
                    lanes(member[l], |j| {
                        let x = av[j] & 0xffff_ffff;
                        acc = Some(match acc {
                            None => x,
                            Some(v) => match op {
                                IBin::Add => v.wrapping_add(x) & 0xffff_ffff,
                                IBin::MinU if signed => (sext(v, 32).min(sext(x, 32)) as u64) & 0xffff_ffff,
                                IBin::MaxU if signed => (sext(v, 32).max(sext(x, 32)) as u64) & 0xffff_ffff,
                                IBin::MinU => v.min(x),
                                IBin::MaxU => v.max(x),
                                IBin::And => v & x,
                                IBin::Or => v | x,
                                _ => v ^ x,
                            },
                        })
                    });
                    r[d + l] = acc.unwrap_or(0);
                });
            }
            Op::WarpSync { .. } => {
                if let Some(rd) = &mut self.race {
                    rd.wsync[w] = rd.wsync[w].wrapping_add(1);
                }
            }
            Op::Ld { space, ty, vec, dst, addr } => return self.ld(w, pc, m, MemAccess { space, ty, vec, addr }, dst),
            Op::St { space, ty, vec, src, addr } => return self.st(w, pc, m, MemAccess { space, ty, vec, addr }, src),
            Op::Atom { space, op, ty, d, addr, a, b } => return self.atom(w, pc, m, space, op, ty, d, addr, a, b),
            Op::Printf { fmt, args, ret } => return self.printf(w, m, fmt, args, ret),
            Op::Carry { op, w: wd, signed, cin, cout, d, a, b, c, cc } => {
                let mk = mask(wd) as u128;
                let (d, a, b, c, cc) = (d as usize, a as usize, b as usize, c as usize, cc as usize);
                lanes(m, |l| {
                    let cf = if cin { r[cc + l] as u128 & 1 } else { 0 };
                    let (x, y) = (r[a + l] as u128 & mk, r[b + l] as u128 & mk);
                    let (v, out) = match op {
                        CarryOp::Add => {
                            let s = x + y + cf;
                            (s, s >> wd & 1)
                        }
                        CarryOp::Sub => {
                            let s = x.wrapping_sub(y).wrapping_sub(cf);
                            (s, (x < y + cf) as u128)
                        }
                        CarryOp::MadLo | CarryOp::MadHi => {
                            let p = if signed {
                                let sx = sext(x as u64, wd) as i128;
                                let sy = sext(y as u64, wd) as i128;
                                (sx * sy) as u128
                            } else {
                                x * y
                            };
                            let p = if op == CarryOp::MadHi { p >> wd } else { p } & mk;
                            let s = p + (r[c + l] as u128 & mk) + cf;
                            (s, s >> wd & 1)
                        }
                    };
                    r[d + l] = (v & mk) as u64;
                    if cout {
                        r[cc + l] = out as u64;
                    }
                });
            }
            Op::Mbar { op, space, addr, d, a } => return self.mbar(w, pc, m, op, space, addr, d, a),
            Op::BulkCopy { dst, dspace, src, sspace, size, mbar, mspace, tmp } => {
                return self.bulk_copy(w, pc, m, dst, dspace, src, sspace, size, mbar, mspace, tmp)
            }
            Op::MbarWait { .. } => unreachable!("handled by the scheduler"),
            Op::AsyncPending { space, addr, len } => self.async_pending(w, m, space, addr, len),
            Op::AsyncCommit => self.async_commit(w, m),
            Op::AsyncWait { n } => self.async_wait(w, m, n),
            Op::Trap => {
                let lane = m.trailing_zeros() as usize;
                let (thread, _) = self.thread_of(w, lane);
                return Err(SimError::Trap {
                    ptx_line: k.ptx_line(pc),
                    location: k.source_of(pc),
                    kernel: k.name.clone(),
                    thread,
                    block: self.block_idx,
                });
            }
            Op::Nop => {}
            Op::Fence { gpu } => {
                if let (true, Some(g)) = (gpu, &mut self.grace) {
                    g.fence();
                }
            }
            Op::Bra { .. }
            | Op::BrxIdx { .. }
            | Op::Exit
            | Op::Bar
            | Op::BarRed { .. }
            | Op::Call { .. }
            | Op::Ret { .. } => {
                unreachable!("handled by the scheduler")
            }
        }
        Ok(())
    }
}
