//! Seeded inputs. Every check draws from its own ChaCha stream, derived from the
//! run's seed and the check's name, so a printed seed reproduces a failure on any
//! machine and filtering checks does not change the inputs of the others.
//! Draw from [`crate::Ctx::rng`] (or [`crate::Ctx::rng_for`]) in a check, and
//! keep what a whole class shares in [`crate::Ctx::shared`].

use rand::{Rng, SeedableRng};
pub use rand_chacha::ChaCha8Rng;

/// The generator for one check (a check gets it from [`crate::Ctx::rng`]).
///
/// ```
/// use rand::Rng;
/// let mut rng = kit::inputs::rng_for(42, "ex10::global::correct::n=1000");
/// let x: u32 = rng.random_range(0..10);
/// assert!(x < 10);
/// ```
pub fn rng_for(seed: u64, check_name: &str) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ fnv1a(check_name.as_bytes()))
}

/// FNV-1a: stable across Rust versions and platforms, unlike `DefaultHasher`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// `n` floats uniform in `[lo, hi)`.
///
/// ```
/// let x = kit::inputs::uniform_f32(&mut kit::inputs::rng_for(1, "x"), 5, -1.0, 1.0);
/// assert!(x.iter().all(|v| (-1.0..1.0).contains(v)));
/// ```
pub fn uniform_f32(rng: &mut impl Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// `n` floats uniform in `[lo, hi)`, each of 2^24 values equally likely, for
/// inputs of tens of millions (a matrix product at its timed size): the
/// generator's words drawn in bulk, several times faster than
/// [`uniform_f32`] (whose values it does not repeat).
///
/// ```
/// let x = kit::inputs::uniform_f32_bulk(&mut kit::inputs::rng_for(1, "x"), 1000, -1.0, 1.0);
/// assert!(x.iter().all(|v| (-1.0..1.0).contains(v)) && x.iter().any(|&v| v < -0.9) && x.iter().any(|&v| v > 0.9));
/// ```
pub fn uniform_f32_bulk(rng: &mut impl Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut words = vec![0u32; n];
    rng.fill(&mut words[..]);
    let step = (hi - lo) / (1u32 << 24) as f32;
    words.into_iter().map(|w| uniform_from_word(w, lo, step)).collect()
}

#[inline]
fn uniform_from_word(w: u32, lo: f32, step: f32) -> f32 {
    lo + (w >> 8) as f32 * step
}

/// A generator's 32-bit words, any stretch of them on its own: ChaCha is a
/// counter-based stream, so word `i` is found by position, and a launch that
/// reads a few blocks' worth of a timed-size input costs those blocks
/// (kit::Gpu::upload_generated), not the input.
///
/// ```
/// use rand::Rng;
/// let rng = kit::inputs::rng_for(1, "x");
/// let mut all = [0u32; 100];
/// rng.clone().fill(&mut all[..]);
/// let mut some = [0u32; 5];
/// kit::inputs::Words::new(&rng).skip(30).fill(10, &mut some);
/// assert_eq!(some, all[40..45]);
/// ```
#[derive(Clone)]
pub struct Words {
    rng: ChaCha8Rng,
    /// The generator's word position of word 0.
    start: u128,
}

impl Words {
    /// The words `rng` would give from where it stands.
    pub fn new(rng: &ChaCha8Rng) -> Self {
        Words { rng: rng.clone(), start: rng.get_word_pos() }
    }

    /// The stream after its first `n` words.
    pub fn skip(&self, n: usize) -> Self {
        Words { start: self.start + n as u128, ..self.clone() }
    }

    /// Words `first..first + out.len()`.
    pub fn fill(&self, first: usize, out: &mut [u32]) {
        let mut rng = self.rng.clone();
        rng.set_word_pos(self.start + first as u128);
        rng.fill(out);
    }
}

/// The floats [`uniform_f32_bulk`] draws from a generator, any stretch of
/// them on its own ([`Words`]): a launch that reads a few rows of a
/// timed-size matrix costs those rows, not the matrix.
///
/// ```
/// let rng = kit::inputs::rng_for(1, "x");
/// let all = kit::inputs::uniform_f32_bulk(&mut rng.clone(), 3000, -1.0, 1.0);
/// let stream = kit::inputs::UniformF32s::new(&rng, -1.0, 1.0);
/// let mut some = [0.0f32; 7];
/// stream.skip(1000).fill(993, &mut some);
/// assert_eq!(some, all[1993..2000]);
/// ```
#[derive(Clone)]
pub struct UniformF32s {
    words: Words,
    lo: f32,
    step: f32,
}

impl UniformF32s {
    /// What `uniform_f32_bulk(&mut rng, …, lo, hi)` would draw from `rng` as it stands.
    pub fn new(rng: &ChaCha8Rng, lo: f32, hi: f32) -> Self {
        UniformF32s { words: Words::new(rng), lo, step: (hi - lo) / (1u32 << 24) as f32 }
    }

    /// The stream after its first `n` values (what a second `uniform_f32_bulk` draws).
    pub fn skip(&self, n: usize) -> Self {
        UniformF32s { words: self.words.skip(n), ..self.clone() }
    }

    /// Values `first..first + out.len()`.
    pub fn fill(&self, first: usize, out: &mut [f32]) {
        let mut words = vec![0u32; out.len()];
        self.words.fill(first, &mut words);
        for (o, w) in out.iter_mut().zip(words) {
            *o = uniform_from_word(w, self.lo, self.step);
        }
    }
}

/// Integers in `lo..=hi`, any stretch of them on its own ([`Words`], one a
/// word, taken modulo the range's size: a bias under 2^-24 for ranges of a
/// few hundred thousand): a timed-size input that a launch of a few sampled
/// blocks reads little of ([`crate::Gpu::upload_generated`]).
///
/// ```
/// let ints = kit::inputs::IntsIn::new(&kit::inputs::rng_for(1, "x"), 1, 100);
/// let (mut all, mut some) = ([0i32; 50], [0i32; 5]);
/// ints.fill(0, &mut all);
/// ints.fill(40, &mut some);
/// assert!(all.iter().all(|v| (1..=100).contains(v)) && some == all[40..45]);
/// ```
#[derive(Clone)]
pub struct IntsIn {
    words: Words,
    lo: i32,
    values: u32,
}

impl IntsIn {
    pub fn new(rng: &ChaCha8Rng, lo: i32, hi: i32) -> Self {
        IntsIn { words: Words::new(rng), lo, values: (hi - lo) as u32 + 1 }
    }

    /// Values `first..first + out.len()`.
    pub fn fill(&self, first: usize, out: &mut [i32]) {
        let mut words = vec![0u32; out.len()];
        self.words.fill(first, &mut words);
        for (o, w) in out.iter_mut().zip(words) {
            *o = self.lo + (w % self.values) as i32;
        }
    }
}

/// `n` integers uniform in `[lo, hi)`: a scan's inputs, small enough that
/// sums stay exact.
///
/// ```
/// let x = kit::inputs::uniform_i32(&mut kit::inputs::rng_for(1, "x"), 5, -100, 100);
/// assert!(x.iter().all(|v| (-100..100).contains(v)));
/// ```
pub fn uniform_i32(rng: &mut impl Rng, n: usize, lo: i32, hi: i32) -> Vec<i32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// `n` bytes, each of the 256 values equally likely: a byte stream to
/// histogram, a text to search.
///
/// ```
/// let data = kit::inputs::bytes(&mut kit::inputs::rng_for(1, "ex10::global::correct::n=1000"), 1000);
/// assert_eq!(data.len(), 1000);
/// ```
pub fn bytes(rng: &mut impl Rng, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    rng.fill(out.as_mut_slice());
    out
}

/// `n` bytes drawn from `weights`: byte `b` with probability `weights[b]` /
/// their sum (missing weights are 0). Skewed inputs make many threads hit the
/// same few values (a histogram's contention); a weight of 1 for every value
/// is [`bytes`]' distribution.
///
/// ```
/// let mut rng = kit::inputs::rng_for(1, "ex10::private::correct::skewed");
/// // Half the bytes are 'a', the rest spread over 'b'..='d'.
/// let mut weights = [0.0; 256];
/// weights[b'a' as usize] = 3.0;
/// for b in b'b'..=b'd' {
///     weights[b as usize] = 1.0;
/// }
/// let text = kit::inputs::bytes_weighted(&mut rng, 1000, &weights);
/// assert!(text.iter().all(|c| (b'a'..=b'd').contains(c)));
/// ```
pub fn bytes_weighted(rng: &mut impl Rng, n: usize, weights: &[f64]) -> Vec<u8> {
    assert!(weights.len() <= 256, "{} weights for 256 byte values", weights.len());
    assert!(weights.iter().all(|w| w.is_finite() && *w >= 0.0), "weights must be finite and not negative");
    let total: f64 = weights.iter().sum();
    assert!(total > 0.0, "at least one weight must be positive");
    // The cumulative weights; a uniform draw in [0, total) finds its byte.
    let mut cumulative = Vec::with_capacity(weights.len());
    let mut sum = 0.0;
    for w in weights {
        sum += w;
        cumulative.push(sum);
    }
    let last = weights.iter().rposition(|&w| w > 0.0).expect("a positive weight");
    (0..n)
        .map(|_| {
            let x = rng.random_range(0.0..total);
            cumulative.partition_point(|&c| c <= x).min(last) as u8
        })
        .collect()
}

/// Writes the ends of an input's range into a random draw, at fixed places:
/// edge `j` of `E` at index `j * (len - 1) / (E - 1)`, so the first edge is
/// element 0 and the last is element `len - 1` (the last index, where an
/// off-by-one guard or a loop that stops early shows). A uniform draw
/// almost never yields 0, the largest value or -0.0; planted, every seed's
/// input holds them. With fewer elements than edges, none.
/// Returns the indices written.
///
/// ```
/// let mut x = vec![0.5f32; 10];
/// assert_eq!(kit::inputs::plant(&mut x, &[0.0, -0.0, 255.99998]), [0, 4, 9]);
/// assert_eq!((x[0], x[4].to_bits(), x[9]), (0.0, 0x8000_0000, 255.99998));
/// ```
pub fn plant<T: Copy>(values: &mut [T], edges: &[T]) -> Vec<usize> {
    let at = planted_at(values.len(), edges.len());
    for (&i, &v) in at.iter().zip(edges) {
        values[i] = v;
    }
    at
}

/// Where [`plant`] puts `edges` edge values among `len` elements.
pub fn planted_at(len: usize, edges: usize) -> Vec<usize> {
    // Fewer elements than edges: none planted, so that a one-element input
    // is not the edge itself (a dot product of 0, which a kernel writing
    // zeros would match).
    if len < edges {
        Vec::new()
    } else if edges == 1 {
        vec![0]
    } else {
        (0..edges).map(|j| j * (len - 1) / (edges - 1)).collect()
    }
}

/// Whether `values` holds every one of `edges`, compared bit for bit (so
/// -0.0 is not 0.0): what the tests of the edge cases assert.
pub fn holds_bits<T: bytemuck::Pod>(values: &[T], edges: &[T]) -> bool {
    // A scan per edge, no set of every value: inputs run to 16 M elements and
    // a few edges (a set of them took 50 s of the test run).
    edges.iter().all(|e| {
        let e = bytemuck::bytes_of(e);
        values.iter().any(|v| bytemuck::bytes_of(v) == e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planted_edges_land_at_the_ends_and_between() {
        let mut x = vec![7i32; 1000];
        assert_eq!(plant(&mut x, &[1, 2, 3, 4]), [0, 333, 666, 999]);
        assert!(holds_bits(&x, &[1, 2, 3, 4]) && !holds_bits(&x, &[5]));
        let mut short = vec![0u8; 2];
        assert!(plant(&mut short, &[9, 8, 7]).is_empty(), "fewer elements than edges: none planted");
        assert_eq!(short, [0, 0]);
        assert!(plant(&mut Vec::<u8>::new(), &[1]).is_empty());
        let mut one = vec![0.5f32; 3];
        plant(&mut one, &[-0.0]);
        assert!(holds_bits(&one, &[-0.0f32]) && !holds_bits(&[0.0f32], &[-0.0f32]));
    }

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
    fn bytes_are_seeded_and_cover_every_value() {
        let a = bytes(&mut rng_for(7, "ex10::x"), 100_000);
        assert_eq!(a, bytes(&mut rng_for(7, "ex10::x"), 100_000));
        assert_ne!(a, bytes(&mut rng_for(7, "ex10::y"), 100_000));
        assert!(bytes(&mut rng_for(7, "ex10::x"), 0).is_empty());
        let mut counts = [0u32; 256];
        for &b in &a {
            counts[b as usize] += 1;
        }
        // 390.6 expected per value; 6 standard deviations (~20) either side.
        assert!(counts.iter().all(|&c| (270..=510).contains(&c)), "{counts:?}");
    }

    #[test]
    fn weighted_bytes_follow_their_weights() {
        let mut weights = [0.0; 256];
        weights[0] = 1.0;
        weights[255] = 3.0;
        let a = bytes_weighted(&mut rng_for(3, "w"), 40_000, &weights);
        let high = a.iter().filter(|&&b| b == 255).count();
        assert!(a.iter().all(|&b| b == 0 || b == 255));
        assert!((29_000..=31_000).contains(&high), "{high}");
        // One value only; trailing zero weights never drawn.
        assert!(bytes_weighted(&mut rng_for(3, "w"), 1000, &[0.0, 2.0, 0.0]).iter().all(|&b| b == 1));
    }

    #[test]
    fn fnv_is_stable() {
        // Published FNV-1a 64 test vector.
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
    }
}
