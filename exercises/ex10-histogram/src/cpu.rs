//! Byte streams, the CPU histogram and a comparison that says what kind of
//! mistake a wrong histogram shows: bytes not counted (a lost update of a
//! plain `++`, a merge before the block finished, a loop that stops early),
//! bytes counted twice or read past the end, or bytes counted in the wrong bin.

use anyhow::{bail, Result};
use rand::Rng;

/// Bins of the histogram: one per byte value.
pub const BINS: usize = 256;

/// How the bytes of an input are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bytes {
    /// Every value 0..=255 equally likely: little contention, every bin used.
    Uniform,
    /// Like English text (letters by their frequency, spaces, punctuation)
    /// with one byte in sixteen uniform: a few bins take most of the bytes, so
    /// threads contend for them, and every bin still shows up in large inputs.
    Text,
    /// One seeded value, at least the one given, over and over: every thread on
    /// one bin, the worst contention. From 0x80 up, a signed `char` turns it
    /// negative.
    Same(u8),
}

impl Bytes {
    pub fn describe(self) -> String {
        match self {
            Bytes::Uniform => "uniform random bytes".into(),
            Bytes::Text => "text-like bytes".into(),
            Bytes::Same(0) => "copies of one byte".into(),
            Bytes::Same(lowest) => format!("copies of one byte (0x{lowest:02x} or above)"),
        }
    }
}

/// English letters in the order of their frequency, most frequent first, and
/// the punctuation of running text.
const TEXT: &[u8] = b"etaoinshrdlcumwfgypbvkjxqz";
const PUNCTUATION: &[u8] = b".,;:'\"!?-()\n";

/// The ends of a byte's range, planted in every uniform and text-like
/// correctness input ([`correctness_bytes`]): the first and the last bin.
pub const EDGES: [u8; 2] = [0x00, 0xFF];

/// A correctness input: [`bytes`], with [`EDGES`] planted where the bytes
/// are not all one value.
pub fn correctness_bytes(rng: &mut impl Rng, n: usize, kind: Bytes) -> Vec<u8> {
    let mut data = bytes(rng, n, kind);
    if !matches!(kind, Bytes::Same(_)) {
        kit::inputs::plant(&mut data, &EDGES);
    }
    data
}

/// `n` bytes drawn as `kind` says. Written before `kit::inputs::bytes` and
/// `bytes_weighted` existed; they draw other streams from the same seed, so
/// moving to them would change every input the GPUs were calibrated and
/// checked with: left for the next calibration.
pub fn bytes(rng: &mut impl Rng, n: usize, kind: Bytes) -> Vec<u8> {
    match kind {
        Bytes::Uniform => (0..n).map(|_| rng.random::<u8>()).collect(),
        Bytes::Same(lowest) => vec![rng.random_range(lowest..=u8::MAX); n],
        Bytes::Text => (0..n).map(|_| text_byte(rng)).collect(),
    }
}

fn text_byte(rng: &mut impl Rng) -> u8 {
    match rng.random_range(0..64u32) {
        0..=3 => rng.random::<u8>(),
        4..=13 => b' ',
        14..=16 => PUNCTUATION[rng.random_range(0..PUNCTUATION.len())],
        17..=19 => TEXT[rng.random_range(0..TEXT.len())].to_ascii_uppercase(),
        // Lower case, the frequent letters more often: the smaller of two draws.
        _ => TEXT[rng.random_range(0..TEXT.len()).min(rng.random_range(0..TEXT.len()))],
    }
}

/// The text-like distribution of [`bytes`] as a table for the timed inputs
/// (kit::timed::Fresh::bytes): every byte value in its share of 4096 entries.
pub fn text_table() -> Vec<u8> {
    let letters = TEXT.len() as f64;
    let mut weights: Vec<(u8, f64)> = (0..=255u8).map(|b| (b, 4.0 / 64.0 / 256.0)).collect();
    weights.push((b' ', 10.0 / 64.0));
    weights.extend(PUNCTUATION.iter().map(|&p| (p, 3.0 / 64.0 / PUNCTUATION.len() as f64)));
    weights.extend(TEXT.iter().map(|&t| (t.to_ascii_uppercase(), 3.0 / 64.0 / letters)));
    // The smaller of two draws: letter k with probability (2(n - k) - 1) / n².
    weights.extend(
        TEXT.iter().enumerate().map(|(k, &t)| (t, 44.0 / 64.0 * (2.0 * (letters - k as f64) - 1.0) / letters.powi(2))),
    );
    kit::timed::byte_table(&weights).expect("weights of text")
}

/// The CPU histogram: how many bytes of each value.
pub fn histogram(data: &[u8]) -> Vec<u32> {
    let mut bins = vec![0u32; BINS];
    for &b in data {
        bins[b as usize] += 1;
    }
    bins
}

/// Compares the kernel's bins with the CPU's, all 256 exactly, and says what
/// the difference looks like. `input` describes the bytes for the message.
pub fn compare(input: &str, n: usize, expected: &[u32], got: &[u32]) -> Result<()> {
    assert_eq!(expected.len(), BINS);
    if got.len() != BINS {
        bail!("`bins`: expected {BINS} bins, got {}", got.len());
    }
    let Some(first) = (0..BINS).find(|&b| expected[b] != got[b]) else { return Ok(()) };
    let wrong = (0..BINS).filter(|&b| expected[b] != got[b]).count();
    let counted: u64 = got.iter().map(|&c| c as u64).sum();
    let n64 = n as u64;
    let head = format!(
        "`bins` after counting {n} {input}: {wrong} of {BINS} bins wrong; the first is bins[{first}] (byte 0x{first:02x}): \
         expected {}, got {}. The bins add up to {counted}",
        expected[first], got[first]
    );
    if counted == 0 {
        bail!(
            "{head}: no byte was counted (the bins are zero before the launch, and stayed so). Did the kernel run \
             its TODO yet? Every byte data[i] adds 1 to bins[data[i]]. If it counts into a block's private bins, \
             the block merged them before its threads had counted: `__syncthreads()` between counting and merging"
        );
    }
    if counted < n64 {
        bail!(
            "{head}, but there are {n} bytes: {} were not counted. Two threads that add to the same bin at once \
             with a plain `bins[b]++` (or `+=`) lose one of the additions: use atomicAdd. With a block's private \
             bins in shared memory, every thread must have counted its bytes before the block merges them \
             (`__syncthreads()` between counting and merging, and between zeroing and counting). With a loop, \
             check that it reaches every byte: i from blockIdx.x * blockDim.x + threadIdx.x, in steps of the whole \
             grid (blockDim.x * gridDim.x), while i < n",
            n64 - counted
        );
    }
    if counted > n64 {
        bail!(
            "{head}, but there are only {n} bytes: {} counts too many. Bytes are counted twice (a loop whose \
             step is smaller than the whole grid, blockDim.x * gridDim.x; a block's private bins merged more \
             than once; shared bins not set to 0 before counting) or bytes past the end are counted (the \
             bounds check `i < n`)",
            counted - n64
        );
    }
    bail!(
        "{head}, the right number of bytes, but in the wrong bins: bins[v] counts the bytes whose value is v. \
         Index the bins with the byte itself, as an unsigned value 0..255 (`unsigned char`, not `char`, which \
         is negative for bytes from 0x80 up)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    #[test]
    fn the_histogram_counts_every_byte_once() {
        let data = [0u8, 255, 3, 3, 255, 3];
        let h = histogram(&data);
        assert_eq!((h[0], h[3], h[255], h.iter().sum::<u32>()), (1, 3, 2, 6));
        assert!(compare("bytes", 6, &h, &h).is_ok());
    }

    #[test]
    fn text_is_skewed_and_still_reaches_every_bin() {
        let data = bytes(&mut rng_for(1, "t"), 1 << 16, Bytes::Text);
        let h = histogram(&data);
        assert!(h.iter().all(|&c| c > 0), "every bin in 64 Ki text-like bytes");
        assert!(h[b' ' as usize] as usize > data.len() / 8, "spaces are frequent");
        assert!(h[b'e' as usize] > 10 * h[b'Z' as usize]);
        // in a block of 256, bins repeat: what one atomic per byte shows as more than one per bin
        let block = histogram(&data[..256]);
        assert!(*block.iter().max().unwrap() >= 16, "{:?}", block.iter().max());
        let u = histogram(&bytes(&mut rng_for(1, "u"), 1 << 16, Bytes::Uniform));
        assert!(u.iter().all(|&c| (150..370).contains(&c)), "{u:?}");
        assert_eq!(histogram(&bytes(&mut rng_for(1, "s"), 9, Bytes::Same(0xff)))[255], 9);
    }

    #[test]
    fn the_timed_table_draws_bytes_as_the_text_like_inputs_do() {
        let table = text_table();
        let from_table = histogram(&table);
        let drawn = histogram(&bytes(&mut rng_for(2, "w"), 1 << 20, Bytes::Text));
        for b in 0..BINS {
            // Shares of 4096 against counts in 2^20: within a few entries.
            let share = drawn[b] as f64 / 256.0;
            assert!(
                (from_table[b] as f64 - share).abs() <= 2.0 + 0.05 * share,
                "byte {b}: {} vs {share:.1}",
                from_table[b]
            );
        }
        assert!(from_table.iter().all(|&c| c > 0), "every byte value can come up");
        assert!(from_table[b' ' as usize] > 600);
    }

    #[test]
    fn the_message_tells_lost_double_and_misplaced_counts_apart() {
        let data = [1u8, 2, 2, 200];
        let e = histogram(&data);
        let msg = |got: &[u32]| compare("bytes", 4, &e, got).unwrap_err().to_string();
        assert!(msg(&[0; 256]).contains("no byte was counted"));
        let mut lost = e.clone();
        lost[2] = 1;
        assert!(msg(&lost).contains("1 were not counted") && msg(&lost).contains("atomicAdd"), "{}", msg(&lost));
        let mut twice = e.clone();
        twice[200] = 2;
        assert!(msg(&twice).contains("1 counts too many") && msg(&twice).contains("i < n"));
        let mut moved = e.clone();
        moved[200] = 0;
        moved[72] = 1; // 200 as a signed char is -56
        let m = msg(&moved);
        assert!(m.contains("bins[72]") && m.contains("wrong bins") && m.contains("unsigned char"), "{m}");
    }
}
