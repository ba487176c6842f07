//! The CPU reference (exact: integers) and the inputs.

use kit::check::is_poison;
use rand::Rng;

use crate::{RADIUS, WINDOW};

/// Inputs lie in `[-MAX_ABS, MAX_ABS)`, so the sum of a window (at most
/// 7 * 2^28 < 2^31 in magnitude) never overflows an `int`.
pub const MAX_ABS: i32 = 1 << 28;

/// `out[i] = (in[i] + ... + in[i + 2*RADIUS]) / (2*RADIUS + 1)` for every
/// `i` in `0..n`, where `padded` holds `n + 2*RADIUS` elements. The division is
/// C's (and Rust's) integer division: it truncates toward zero, so -10 / 7 = -1.
pub fn stencil(padded: &[i32]) -> Vec<i32> {
    padded.windows(WINDOW).map(mean).collect()
}

/// One output of [`stencil`].
pub fn stencil_at(padded: &[i32], i: usize) -> i32 {
    mean(&padded[i..i + WINDOW])
}

fn mean(window: &[i32]) -> i32 {
    (window.iter().map(|&x| x as i64).sum::<i64>() / WINDOW as i64) as i32
}

/// The padded input for `n` outputs: `n + 2*RADIUS` seeded values, negative
/// ones included (so `/` must truncate toward zero like C's) and the padding
/// random too (so a kernel that treats the borders as zeros fails).
pub fn padded_input(rng: &mut impl Rng, n: usize) -> Vec<i32> {
    let mut values = kit::inputs::uniform_i32(rng, n + 2 * RADIUS, -MAX_ABS, MAX_ABS);
    kit::inputs::plant(&mut values, &EDGES);
    // Two whole windows of the extremes, a quarter and three quarters in
    // (clear of the planted edges at the ends and the middle): the largest
    // sums of either sign (7 * 2^28 needs 31 bits), where a narrower
    // accumulator or a float average goes wrong.
    let len = values.len();
    if len >= 64 {
        values[len / 4..len / 4 + WINDOW].fill(-MAX_ABS);
        values[3 * len / 4..3 * len / 4 + WINDOW].fill(MAX_ABS - 1);
    }
    avoid_poison_first_output(&mut values);
    values
}

/// The padded input of the stencil at its timed size, any stretch of it on
/// its own (kit::inputs::Words): values in `[-MAX_ABS, MAX_ABS)` like the
/// correctness inputs', for a measured launch of a few sampled blocks that
/// reads a few thousand of its 52 million (kit::Gpu::upload_generated).
#[derive(Clone)]
pub struct TimedInput(kit::inputs::Words);

impl TimedInput {
    pub fn new(rng: &kit::inputs::ChaCha8Rng) -> Self {
        TimedInput(kit::inputs::Words::new(rng))
    }

    /// Values `first..first + out.len()`.
    pub fn fill(&self, first: usize, out: &mut [i32]) {
        let mut words = vec![0u32; out.len()];
        self.0.fill(first, &mut words);
        for (o, w) in out.iter_mut().zip(words) {
            // the top 29 bits, signed: -2^28 ..= 2^28 - 1
            *o = (w as i32) >> (32 - 29);
        }
    }

    /// Output `i` of the stencil of this input.
    pub fn stencil_at(&self, i: usize) -> i32 {
        let mut window = [0i32; WINDOW];
        self.fill(i, &mut window);
        mean(&window)
    }
}

/// The ends of the README's range planted in every input (the first value,
/// the last, and between): the smallest, the largest and 0.
pub const EDGES: [i32; 3] = [-MAX_ABS, 0, MAX_ABS - 1];

/// Makes sure `out[0]` is not the all-ones poison pattern (-1), so that a
/// kernel that writes nothing can never pass, even for n = 1.
fn avoid_poison_first_output(padded: &mut [i32]) {
    if is_poison(&stencil_at(padded, 0)) {
        // Moving one term by 7 toward zero moves the mean by exactly 1.
        padded[0] += if padded[0] > 0 { -(WINDOW as i32) } else { WINDOW as i32 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    #[test]
    fn hand_computed_windows() {
        // n = 2: out[0] = (1+..+7)/7 = 4, out[1] = (2+..+8)/7 = 5.
        assert_eq!(stencil(&[1, 2, 3, 4, 5, 6, 7, 8]), vec![4, 5]);
        // 10/7 = 1 (not 1.43 rounded), and the padding counts like any element.
        assert_eq!(stencil(&[10, 0, 0, 0, 0, 0, 0]), vec![1]);
        // Truncation toward zero: -10/7 = -1, not -2 (floor).
        assert_eq!(stencil(&[-10, 0, 0, 0, 0, 0, 0]), vec![-1]);
        assert_eq!(stencil(&[0, 0, 0, -49, 0, 0, 0, 0]), vec![-7, -7]);
        assert_eq!(stencil_at(&[1, 2, 3, 4, 5, 6, 7, 8], 1), 5);
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        let low = vec![-MAX_ABS; WINDOW];
        let high = vec![MAX_ABS - 1; WINDOW];
        assert_eq!(stencil(&low), vec![-MAX_ABS]);
        assert_eq!(stencil(&high), vec![MAX_ABS - 1]);
        // What a kernel computes in int: the sum itself must fit.
        const { assert!((WINDOW as i64) * (MAX_ABS as i64) <= i32::MAX as i64 + 1) };
    }

    #[test]
    fn inputs_are_padded_signed_and_never_all_poison() {
        for n in [1, 2, 7, 513] {
            let v = padded_input(&mut rng_for(3, &format!("n={n}")), n);
            assert_eq!(v.len(), n + 2 * RADIUS);
            assert!(v.iter().all(|x| (-MAX_ABS..MAX_ABS).contains(x)));
            assert_ne!(stencil(&v)[0], -1);
        }
        let v = padded_input(&mut rng_for(3, "big"), 10_000);
        assert!(v.iter().any(|&x| x < 0) && v.iter().any(|&x| x > 0));
        assert!(v[..RADIUS].iter().chain(&v[v.len() - RADIUS..]).any(|&x| x != 0), "padding must not be zeros");
    }

    #[test]
    fn poison_output_is_nudged_away() {
        // Sum -7 gives mean -1, the poison pattern: the first term moves 7 toward zero.
        let mut v = vec![-7, 0, 0, 0, 0, 0, 0];
        avoid_poison_first_output(&mut v);
        assert_eq!(v[0], 0);
        assert_eq!(stencil(&v), vec![0]);
        let mut w = vec![3, -10, 0, 0, 0, 0, 0];
        avoid_poison_first_output(&mut w);
        assert_eq!(stencil(&w), vec![-2]);
        let mut fine = vec![5, 0, 0, 0, 0, 0, 0];
        avoid_poison_first_output(&mut fine);
        assert_eq!(fine[0], 5);
    }
}
