//! Seeded inputs. Every check draws from its own ChaCha stream, derived from the
//! run's seed and the check's name, so a printed seed reproduces a failure on any
//! machine and filtering checks does not change the inputs of the others.

use rand::{Rng, SeedableRng};
pub use rand_chacha::ChaCha8Rng;

/// The generator for one check.
pub fn rng_for(seed: u64, check_name: &str) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ fnv1a(check_name.as_bytes()))
}

/// FNV-1a: stable across Rust versions and platforms, unlike `DefaultHasher`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// `n` floats uniform in `[lo, hi)`.
pub fn uniform_f32(rng: &mut impl Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// `n` integers uniform in `[lo, hi)`.
pub fn uniform_i32(rng: &mut impl Rng, n: usize, lo: i32, hi: i32) -> Vec<i32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_inputs_other_name_other_inputs() {
        let a = uniform_f32(&mut rng_for(7, "ex01::x"), 4, 0.0, 1.0);
        let b = uniform_f32(&mut rng_for(7, "ex01::x"), 4, 0.0, 1.0);
        let c = uniform_f32(&mut rng_for(7, "ex01::y"), 4, 0.0, 1.0);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().all(|v| (0.0..1.0).contains(v)));
    }

    #[test]
    fn fnv_is_stable() {
        // Published FNV-1a 64 test vector.
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
    }
}
