//! The CPU reference (exact: integers) and the inputs.

use rand::Rng;

use crate::SIZE;

/// The largest possible output, 256 * 255 * 255: far below the all-ones poison
/// pattern, so an output that was never written can never pass.
pub const MAX_OUTPUT: u32 = SIZE as u32 * 255 * 255;

/// For every block b and thread t: `sum_j in1[b*SIZE + j] * in2[b*SIZE + (j + t) % SIZE]`.
pub fn correlate(in1: &[u8], in2: &[u8]) -> Vec<u32> {
    assert_eq!(in1.len(), in2.len());
    in1.chunks_exact(SIZE).zip(in2.chunks_exact(SIZE)).flat_map(|(a, b)| correlate_block(a, b)).collect()
}

/// One block's outputs: lag `t` of the circular cross-correlation of `a` and `b`.
pub fn correlate_block(a: &[u8], b: &[u8]) -> Vec<u32> {
    // `b` twice in a row, so that lag t reads the window doubled[t .. t + SIZE].
    // A plain `while` loop: this runs ~10^7 products per check, and iterator
    // chains are about 5x slower in the debug builds students run.
    let a: Vec<u32> = a.iter().map(|&x| x as u32).collect();
    let doubled: Vec<u32> = b.iter().chain(b).map(|&x| x as u32).collect();
    let mut out = vec![0u32; SIZE];
    for (t, o) in out.iter_mut().enumerate() {
        let window = &doubled[t..t + SIZE];
        let (mut sum, mut j) = (0, 0);
        while j < SIZE {
            sum += a[j] * window[j];
            j += 1;
        }
        *o = sum;
    }
    out
}

/// `blocks` pairs of random bytes (every value 0..=255, so a kernel that reads
/// them as signed `char` fails).
pub fn random_pairs(rng: &mut impl Rng, blocks: u32) -> (Vec<u8>, Vec<u8>) {
    let n = blocks as usize * SIZE;
    let (mut in1, mut in2) = (vec![0u8; n], vec![0u8; n]);
    rng.fill_bytes(&mut in1);
    rng.fill_bytes(&mut in2);
    (in1, in2)
}

/// The pairs of the timed launch, any stretch of them on its own
/// (kit::inputs::Words, four bytes a word): every byte value, as
/// [`random_pairs`] draws them, for a measured launch of a few sampled blocks
/// of the timed grid (kit::Gpu::upload_generated).
#[derive(Clone)]
pub struct TimedPairs {
    pub in1: kit::inputs::Words,
    pub in2: kit::inputs::Words,
}

impl TimedPairs {
    pub fn new(rng: &kit::inputs::ChaCha8Rng, blocks: u32) -> Self {
        let words = kit::inputs::Words::new(rng);
        // in2's words after in1's: the two vectors never share a word.
        TimedPairs { in2: words.skip((blocks as usize * SIZE).div_ceil(4)), in1: words }
    }

    /// Bytes `first..first + out.len()` of `vector` (`in1` or `in2`).
    pub fn fill(vector: &kit::inputs::Words, first: usize, out: &mut [u8]) {
        let (word, skip) = (first / 4, first % 4);
        let mut words = vec![0u32; (skip + out.len()).div_ceil(4)];
        vector.fill(word, &mut words);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        out.copy_from_slice(&bytes[skip..skip + out.len()]);
    }

    /// Block `b`'s outputs.
    pub fn correlate_block(&self, b: usize) -> Vec<u32> {
        let (mut a, mut c) = ([0u8; SIZE], [0u8; SIZE]);
        Self::fill(&self.in1, b * SIZE, &mut a);
        Self::fill(&self.in2, b * SIZE, &mut c);
        correlate_block(&a, &c)
    }
}

/// Pairs where each block's `in2` is its `in1` rotated right by a random lag:
/// `in2[i] = in1[(i - lag) mod SIZE]`. The correlation then peaks at t = lag
/// (the sum of squares), which is what a correlation is used for: finding by
/// how much one signal is shifted against another.
pub fn rotated_pairs(rng: &mut impl Rng, blocks: u32) -> (Vec<u8>, Vec<u8>, Vec<usize>) {
    let (in1, _) = random_pairs(rng, blocks);
    let lags: Vec<usize> = (0..blocks).map(|_| rng.random_range(1..SIZE)).collect();
    let in2 = in1
        .chunks_exact(SIZE)
        .zip(&lags)
        .flat_map(|(a, &lag)| (0..SIZE).map(move |i| a[(i + SIZE - lag) % SIZE]))
        .collect();
    (in1, in2, lags)
}

/// The first block every byte 255 (every output [`MAX_OUTPUT`]), the others
/// seeded bytes of 192 to 255. Catches sums kept in a type narrower than 32
/// bits, and bytes read as signed `char` (-1); the seeded blocks keep the
/// answer from being the same for every seed (a kernel could hard-code it).
pub fn saturated_pairs(rng: &mut impl Rng, blocks: u32) -> (Vec<u8>, Vec<u8>) {
    let n = blocks as usize * SIZE;
    let mut draw = || -> Vec<u8> { (0..n).map(|i| if i < SIZE { 255 } else { rng.random_range(192..=255) }).collect() };
    (draw(), draw())
}

/// Blocks whose largest output is at the lag that was planted.
pub fn peaks_at_lag(out: &[u32], lags: &[usize]) -> usize {
    out.chunks_exact(SIZE).zip(lags).filter(|(o, lag)| o.iter().all(|&v| v <= o[**lag])).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    fn block(f: impl Fn(usize) -> u8) -> Vec<u8> {
        (0..SIZE).map(f).collect()
    }

    #[test]
    fn hand_computed_lags() {
        // in1 = e0 (a single 1 at index 0): out[t] = in2[t].
        let e0 = block(|i| (i == 0) as u8);
        let ramp = block(|i| i as u8);
        assert_eq!(correlate_block(&e0, &ramp), (0..SIZE as u32).collect::<Vec<_>>());
        // in1 = e1: out[t] = in2[(1 + t) % SIZE].
        let e1 = block(|i| (i == 1) as u8);
        let out = correlate_block(&e1, &ramp);
        assert_eq!((out[0], out[1], out[254], out[255]), (1, 2, 255, 0));
        // in1 = all ones: out[t] = sum of in2 = 0 + 1 + ... + 255, for every t.
        let ones = block(|_| 1);
        assert!(correlate_block(&ones, &ramp).iter().all(|&v| v == 255 * 256 / 2));
        // 2 at index 3 and 5 at index 200, in2 = e7: out[t] = 2*[3+t == 7] + 5*[(200+t)%256 == 7].
        let a = block(|i| match i {
            3 => 2,
            200 => 5,
            _ => 0,
        });
        let out = correlate_block(&a, &block(|i| (i == 7) as u8));
        assert_eq!((out[4], out[63], out[0]), (2, 5, 0));
        assert_eq!(out.iter().sum::<u32>(), 7);
    }

    #[test]
    fn blocks_are_independent() {
        let (in1, in2) = random_pairs(&mut rng_for(1, "pairs"), 3);
        let all = correlate(&in1, &in2);
        assert_eq!(all.len(), 3 * SIZE);
        assert_eq!(all[2 * SIZE..], correlate_block(&in1[2 * SIZE..], &in2[2 * SIZE..])[..]);
    }

    #[test]
    fn saturated_hits_the_maximum_which_is_not_poison() {
        let (a, b) = saturated_pairs(&mut rng_for(2, "saturated"), 2);
        let out = correlate(&a, &b);
        assert!(out[..SIZE].iter().all(|&v| v == MAX_OUTPUT));
        assert!(out[SIZE..].iter().all(|&v| v < MAX_OUTPUT && v > u16::MAX as u32));
        assert_eq!(MAX_OUTPUT, 16_646_400);
        const { assert!(MAX_OUTPUT < u32::MAX && MAX_OUTPUT > u16::MAX as u32, "needs a 32-bit sum") };
    }

    #[test]
    fn random_bytes_use_the_whole_range() {
        let (a, b) = random_pairs(&mut rng_for(2, "range"), 8);
        assert_eq!((a.len(), b.len()), (8 * SIZE, 8 * SIZE));
        assert!(a.iter().any(|&x| x >= 128), "bytes above 127 catch a signed `char`");
        assert_ne!(a, b);
    }

    #[test]
    fn rotated_pairs_peak_at_their_lag() {
        let (in1, in2, lags) = rotated_pairs(&mut rng_for(3, "rotated"), 16);
        for (b, &lag) in lags.iter().enumerate() {
            let (a, r) = (&in1[b * SIZE..][..SIZE], &in2[b * SIZE..][..SIZE]);
            assert_eq!(r[lag], a[0]);
            assert_eq!(r[(lag + 10) % SIZE], a[10]);
        }
        let out = correlate(&in1, &in2);
        assert_eq!(peaks_at_lag(&out, &lags), 16);
        let squares: u32 = in1[..SIZE].iter().map(|&x| x as u32 * x as u32).sum();
        assert_eq!(out[lags[0]], squares);
    }
}
