//! Round-to-nearest `fma` over a warp's lanes with the CPU's own FMA
//! instruction where it has one. A build for baseline x86-64 turns each
//! lane's `mul_add` into a library call (a tenth of a tiled matrix product's
//! time); both give the exactly rounded `a * b + c`, so the bits are the same.

use super::alu::{b32, b64, f32of, f64of};
use super::ops::map3;
use crate::ir::Reg;

/// `d = a * b + c` in f32 for lanes `m`.
pub(super) fn fma32(r: &mut [u64], m: u32, d: Reg, a: Reg, b: Reg, c: Reg) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: this CPU has FMA (just checked).
        return unsafe { with_fma::fma32(r, m, d, a, b, c) };
    }
    fma32_lanes(r, m, d, a, b, c)
}

/// `d = a * b + c` in f64 for lanes `m`.
pub(super) fn fma64(r: &mut [u64], m: u32, d: Reg, a: Reg, b: Reg, c: Reg) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: this CPU has FMA (just checked).
        return unsafe { with_fma::fma64(r, m, d, a, b, c) };
    }
    fma64_lanes(r, m, d, a, b, c)
}

#[inline(always)]
fn fma32_lanes(r: &mut [u64], m: u32, d: Reg, a: Reg, b: Reg, c: Reg) {
    map3(r, m, d, a, b, c, |x, y, z| b32(f32of(x).mul_add(f32of(y), f32of(z))))
}

#[inline(always)]
fn fma64_lanes(r: &mut [u64], m: u32, d: Reg, a: Reg, b: Reg, c: Reg) {
    map3(r, m, d, a, b, c, |x, y, z| b64(f64of(x).mul_add(f64of(y), f64of(z))))
}

#[cfg(target_arch = "x86_64")]
mod with_fma {
    use crate::ir::Reg;

    #[target_feature(enable = "fma")]
    pub(super) unsafe fn fma32(r: &mut [u64], m: u32, d: Reg, a: Reg, b: Reg, c: Reg) {
        super::fma32_lanes(r, m, d, a, b, c)
    }

    #[target_feature(enable = "fma")]
    pub(super) unsafe fn fma64(r: &mut [u64], m: u32, d: Reg, a: Reg, b: Reg, c: Reg) {
        super::fma64_lanes(r, m, d, a, b, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CPU's instruction and the library call agree bit for bit, on
    /// values where a separate multiply and add would round differently.
    #[test]
    fn the_fma_instruction_gives_the_library_calls_bits() {
        let mut rng = crate::test_rng::Rng(7);
        let mut r = vec![0u64; 4 * 32];
        for _ in 0..2000 {
            for v in r.iter_mut().take(96) {
                *v = rng.below(1 << 32) << 32 | rng.below(1 << 32);
            }
            let mut f32s = r.clone();
            fma32(&mut f32s, 0xffff_fff7, 96, 0, 32, 64);
            let mut f64s = r.clone();
            fma64(&mut f64s, u32::MAX, 96, 0, 32, 64);
            for l in 0..32 {
                let (x, y, z) = (r[l], r[32 + l], r[64 + l]);
                let want32 = if l == 3 { 0 } else { b32(f32of(x).mul_add(f32of(y), f32of(z))) };
                assert_eq!(f32s[96 + l], want32, "f32 lane {l}");
                assert_eq!(f64s[96 + l], b64(f64of(x).mul_add(f64of(y), f64of(z))), "f64 lane {l}");
            }
        }
        // 1 + 2^-23 squared less 1: the fused result keeps the 2^-46 a separate add loses.
        let x = 1.0f32 + f32::EPSILON;
        let mut r = vec![0u64; 4 * 32];
        r[0] = x.to_bits() as u64;
        r[32] = x.to_bits() as u64;
        r[64] = (-1.0f32).to_bits() as u64;
        fma32(&mut r, 1, 96, 0, 32, 64);
        assert_eq!(f32of(r[96]), 2.0 * f32::EPSILON + f32::EPSILON * f32::EPSILON);
    }
}
