//! Seeded DNA strings. Each correctness check runs one family of strings, every
//! string with its own sequence, and compares the kernel's answer at every start
//! position: no constant answer and no lucky guess can pass.

use kit::inputs::ChaCha8Rng;
use rand::Rng;

use crate::cpu::{match_positions, positions};
use crate::{SEQ_LEN, THREADS};

pub const LETTERS: [u8; 4] = *b"ACGT";

pub type Seq = [u8; SEQ_LEN];

/// The seed's string length.
pub const SEED_LETTERS: usize = 16384;
/// Shorter than one block's positions.
pub const SMALL_LETTERS: usize = 100;
/// 263: exactly one block of positions (the halo ends at the last letter);
/// 264: one position in a second block; 519: exactly two blocks.
pub const EDGE_LETTERS: [usize; 3] = [THREADS + SEQ_LEN - 1, THREADS + SEQ_LEN, 2 * THREADS + SEQ_LEN - 1];
/// 274 blocks, the last one partial: a match across every block boundary.
pub const BOUNDARY_LETTERS: usize = 70_001;
/// Several million letters (11 719 blocks, the last one partial).
pub const MILLIONS_LETTERS: usize = 3_000_017;

/// One string to search, with its own sequence.
pub struct Case {
    pub dna: Vec<u8>,
    pub seq: Seq,
    /// What the string was built to contain, for failure messages.
    pub what: String,
}

/// A correctness check: a name and the strings it runs.
pub struct Family {
    pub name: &'static str,
    pub make: fn(&mut ChaCha8Rng) -> Vec<Case>,
    /// Too many letters for the simulator (more than `kit::SIM_MAX_ELEMENTS`).
    pub heavy: bool,
}

/// Every correctness check, the same for the three parts.
pub static FAMILIES: [Family; 10] = [
    Family { name: "n=8", make: one_position, heavy: false },
    Family { name: "n=100", make: smaller_than_a_block, heavy: false },
    Family { name: "n=263,264,519", make: whole_blocks, heavy: false },
    Family { name: "first-position", make: first_position, heavy: false },
    Family { name: "last-position", make: last_position, heavy: false },
    Family { name: "near-misses", make: near_misses, heavy: false },
    Family { name: "repeats-and-overlaps", make: repeats_and_overlaps, heavy: false },
    Family { name: "seed-16384", make: seed_strings, heavy: false },
    Family { name: "block-boundaries", make: block_boundaries, heavy: false },
    Family { name: "n=3000017", make: millions, heavy: true },
];

/// `n` uniform random letters (2 bits of randomness each, 32 letters per draw).
pub fn random_dna(rng: &mut impl Rng, n: usize) -> Vec<u8> {
    let mut dna = Vec::with_capacity(n + 32);
    while dna.len() < n {
        let mut bits: u64 = rng.random();
        for _ in 0..32 {
            dna.push(LETTERS[(bits & 3) as usize]);
            bits >>= 2;
        }
    }
    dna.truncate(n);
    dna
}

/// A string of the timed size, any stretch of it on its own
/// (kit::inputs::Words, 16 letters a word): uniform letters like
/// [`random_dna`]'s, for a measured launch of a few sampled blocks of the
/// timed grid (kit::Gpu::upload_generated).
#[derive(Clone)]
pub struct TimedDna(kit::inputs::Words);

impl TimedDna {
    pub fn new(rng: &kit::inputs::ChaCha8Rng) -> Self {
        TimedDna(kit::inputs::Words::new(rng))
    }

    /// Letters `first..first + out.len()`.
    pub fn fill(&self, first: usize, out: &mut [u8]) {
        let (word, skip) = (first / 16, first % 16);
        let mut words = vec![0u32; (skip + out.len()).div_ceil(16)];
        self.0.fill(word, &mut words);
        let letters = words.iter().flat_map(|&w| (0..16).map(move |k| LETTERS[(w >> (2 * k) & 3) as usize]));
        for (o, l) in out.iter_mut().zip(letters.skip(skip)) {
            *o = l;
        }
    }
}

pub fn random_seq(rng: &mut impl Rng) -> Seq {
    std::array::from_fn(|_| LETTERS[rng.random_range(0..4)])
}

/// One of the three letters that are not `letter`.
fn other_letter(rng: &mut impl Rng, letter: u8) -> u8 {
    let others: Vec<u8> = LETTERS.into_iter().filter(|&l| l != letter).collect();
    others[rng.random_range(0..others.len())]
}

/// `seq` with letter `index` replaced: 7 of 8 letters right.
pub fn near_miss(rng: &mut impl Rng, seq: &Seq, index: usize) -> Seq {
    let mut s = *seq;
    s[index] = other_letter(rng, s[index]);
    s
}

pub fn plant(dna: &mut [u8], seq: &[u8], at: usize) {
    dna[at..at + seq.len()].copy_from_slice(seq);
}

/// Changes letters until `seq` occurs nowhere but at `keep` (planted before).
/// Letters of the kept occurrences are never touched.
pub fn keep_only(rng: &mut impl Rng, dna: &mut [u8], seq: &Seq, keep: &[usize]) {
    let kept = |i: usize| keep.iter().any(|&k| (k..k + SEQ_LEN).contains(&i));
    loop {
        let mut changed = false;
        for p in match_positions(dna, seq).into_iter().filter(|p| !keep.contains(p)) {
            let free: Vec<usize> = (p..p + SEQ_LEN).filter(|&i| !kept(i)).collect();
            if let Some(&i) = free.get(rng.random_range(0..free.len().max(1))) {
                dna[i] = other_letter(rng, dna[i]);
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// `count` start positions at least SEQ_LEN apart (so planted copies do not overwrite each other).
fn spread_positions(rng: &mut impl Rng, n: usize, count: usize) -> Vec<usize> {
    let mut at: Vec<usize> = Vec::with_capacity(count);
    while at.len() < count {
        let p = rng.random_range(0..positions(n));
        if at.iter().all(|&q| q.abs_diff(p) >= SEQ_LEN) {
            at.push(p);
        }
    }
    at.sort_unstable();
    at
}

/// A random sequence and a random string of `n` letters with the sequence
/// planted at `at`; with `only`, nowhere else.
fn planted(rng: &mut ChaCha8Rng, n: usize, at: &[usize], only: bool) -> Case {
    let seq = random_seq(rng);
    let mut dna = random_dna(rng, n);
    for &p in at {
        plant(&mut dna, &seq, p);
    }
    if only {
        keep_only(rng, &mut dna, &seq, at);
    }
    let where_ = match (at.len(), only) {
        (0, true) => "absent".to_string(),
        (0, false) => "no match planted".to_string(),
        (1..=4, true) => format!("matches only at {at:?}"),
        (1..=4, false) => format!("matches planted at {at:?}"),
        (k, _) => format!("{k} matches planted, first at {}", at[0]),
    };
    Case { what: format!("n={n}, {where_}"), dna, seq }
}

/// Eight strings that are the sequence and eight that miss it by one letter
/// (each letter in turn), in a seeded order: in a fixed order the answers
/// would be the same for every seed, and a kernel could hard-code them.
fn one_position(rng: &mut ChaCha8Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    for i in 0..SEQ_LEN {
        let seq = random_seq(rng);
        let hit = Case { dna: seq.to_vec(), seq, what: "n=8, the string is the sequence".into() };
        let miss = Case { dna: near_miss(rng, &seq, i).to_vec(), seq, what: format!("n=8, letter {i} differs") };
        if rng.random::<bool>() {
            cases.extend([hit, miss]);
        } else {
            cases.extend([miss, hit]);
        }
    }
    cases
}

fn smaller_than_a_block(rng: &mut ChaCha8Rng) -> Vec<Case> {
    let n = SMALL_LETTERS;
    let last = positions(n) - 1;
    let mut cases = Vec::new();
    for i in 0..8 {
        let at = match i {
            0 => vec![0],
            1 => vec![last],
            2 => vec![],
            k => spread_positions(rng, n, k % 3 + 1),
        };
        cases.push(planted(rng, n, &at, true));
    }
    // Absent, but near misses at the first, a middle and the last position.
    let mut c = planted(rng, n, &[], true);
    for (j, p) in [0, n / 2, last].into_iter().enumerate() {
        let miss = near_miss(rng, &c.seq, j * 3);
        plant(&mut c.dna, &miss, p);
    }
    keep_only(rng, &mut c.dna, &c.seq, &[]);
    c.what = format!("n={n}, absent, near misses at 0, {} and {last}", n / 2);
    cases.push(c);
    cases
}

/// Strings of one or two whole blocks of positions, and one just over a block:
/// a match at the last position, and matches that reach into the window's
/// halo (positions THREADS-7 .. THREADS-1), one string each.
fn whole_blocks(rng: &mut ChaCha8Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    for n in EDGE_LETTERS {
        let mut at: Vec<usize> = (1..SEQ_LEN).map(|o| THREADS - o).collect();
        at.push(positions(n) - 1);
        if positions(n) > THREADS {
            at.push(THREADS);
        }
        for p in at {
            cases.push(planted_and_one_more(rng, n, p));
        }
    }
    cases
}

/// The sequence at the first position and at one seeded position: a string
/// whose only match were at 0 would have the same answer for every seed, which
/// a kernel could hard-code without reading anything.
fn first_position(rng: &mut ChaCha8Rng) -> Vec<Case> {
    (0..4).map(|_| planted_and_one_more(rng, SEED_LETTERS, 0)).collect()
}

fn last_position(rng: &mut ChaCha8Rng) -> Vec<Case> {
    let last = positions(SEED_LETTERS) - 1;
    (0..4).map(|_| planted_and_one_more(rng, SEED_LETTERS, last)).collect()
}

/// `n` letters with the sequence at `p` and at one seeded position at least a
/// sequence away from it, and nowhere else: the answer depends on the seed.
fn planted_and_one_more(rng: &mut ChaCha8Rng, n: usize, p: usize) -> Case {
    let q = loop {
        let q = rng.random_range(0..positions(n));
        if q.abs_diff(p) >= SEQ_LEN {
            break q;
        }
    };
    let mut at = [p, q];
    at.sort_unstable();
    planted(rng, n, &at, true)
}

/// Spacing of the near misses planted in `near_misses`.
pub const NEAR_MISS_SPACING: usize = 40;

/// Strings full of 7-of-8 near misses (the wrong letter in every place in
/// turn); every second string also holds one real match.
fn near_misses(rng: &mut ChaCha8Rng) -> Vec<Case> {
    let n = SEED_LETTERS;
    let slots = positions(n) / NEAR_MISS_SPACING;
    let mut cases = Vec::new();
    for i in 0..8 {
        let seq = random_seq(rng);
        let mut dna = random_dna(rng, n);
        for j in 0..slots {
            let miss = near_miss(rng, &seq, j % SEQ_LEN);
            plant(&mut dna, &miss, j * NEAR_MISS_SPACING);
        }
        // The real match goes between two near misses.
        let at: Vec<usize> = if i % 2 == 0 {
            vec![rng.random_range(0..slots - 1) * NEAR_MISS_SPACING + NEAR_MISS_SPACING / 2]
        } else {
            vec![]
        };
        for &p in &at {
            plant(&mut dna, &seq, p);
        }
        keep_only(rng, &mut dna, &seq, &at);
        let what = match at.first() {
            Some(p) => format!("n={n}, {slots} near misses, one match at {p}"),
            None => format!("n={n}, {slots} near misses, absent"),
        };
        cases.push(Case { dna, seq, what });
    }
    cases
}

/// Smallest shift after which `seq` repeats itself (8 when it does not overlap itself).
pub fn period(seq: &Seq) -> usize {
    (1..SEQ_LEN).find(|&d| (d..SEQ_LEN).all(|i| seq[i] == seq[i - d])).unwrap_or(SEQ_LEN)
}

/// Runs of 1 to 5 copies of the sequence, each copy shifted by its period: for
/// "AAAAAAAA" a run of A's (overlapping matches one letter apart), for
/// "ACGTACGT" matches four apart, for an aperiodic sequence copies back to back.
fn repeats_and_overlaps(rng: &mut ChaCha8Rng) -> Vec<Case> {
    let n = SEED_LETTERS;
    let mut seqs: Vec<Seq> = vec![*b"AAAAAAAA", *b"ACACACAC", *b"ACGTACGT", *b"TTGTTGTT", *b"GATTACAG"];
    seqs.push(random_seq(rng));
    let mut cases = Vec::new();
    for seq in seqs {
        let d = period(&seq);
        let mut dna = random_dna(rng, n);
        let spacing = 400;
        for (j, start) in (0..positions(n) - 64).step_by(spacing).enumerate() {
            let copies = j % 5 + 1;
            let run: Vec<u8> = (0..SEQ_LEN + d * (copies - 1)).map(|i| seq[i % d]).collect();
            plant(&mut dna, &run, start + rng.random_range(0..spacing - 64));
        }
        let what =
            format!("n={n}, sequence {}, runs of 1 to 5 copies {d} letter(s) apart", String::from_utf8_lossy(&seq));
        cases.push(Case { dna, seq, what });
    }
    cases
}

/// The seed's case: 16384 letters, some strings without the sequence, others
/// with one to three copies.
fn seed_strings(rng: &mut ChaCha8Rng) -> Vec<Case> {
    (0..16)
        .map(|i| {
            let at = spread_positions(rng, SEED_LETTERS, i % 4);
            planted(rng, SEED_LETTERS, &at, i % 4 == 0)
        })
        .collect()
}

/// Start positions whose match crosses a block boundary: for block b the one
/// starting `1 + b % 7` letters before it, so every halo offset occurs.
pub fn across_boundaries(n: usize, every: usize) -> Vec<usize> {
    let blocks = positions(n).div_ceil(THREADS);
    (1..blocks).step_by(every).map(|b| b * THREADS - 1 - b % (SEQ_LEN - 1)).filter(|&p| p < positions(n)).collect()
}

fn block_boundaries(rng: &mut ChaCha8Rng) -> Vec<Case> {
    let n = BOUNDARY_LETTERS;
    let mut at = across_boundaries(n, 1);
    at.push(positions(n) - 1);
    (0..2)
        .map(|_| {
            let mut case = planted(rng, n, &at, false);
            case.what =
                format!("n={n}, a match across each of the {} block boundaries and one at the end", at.len() - 1);
            case
        })
        .collect()
}

fn millions(rng: &mut ChaCha8Rng) -> Vec<Case> {
    let n = MILLIONS_LETTERS;
    let last = positions(n) - 1;
    let mut at = vec![0];
    at.extend(across_boundaries(n, 97));
    at.push(last);
    let mut many = planted(rng, n, &at, false);
    many.what = format!("n={n}, matches at the first and last position and across {} block boundaries", at.len() - 2);
    vec![many, planted(rng, n, &[last], true)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::found;
    use kit::inputs::rng_for;

    fn family(name: &str) -> Vec<Case> {
        let f = FAMILIES.iter().find(|f| f.name == name).unwrap();
        (f.make)(&mut rng_for(4, name))
    }

    fn matches(c: &Case) -> Vec<usize> {
        match_positions(&c.dna, &c.seq)
    }

    /// Windows with exactly 7 of the 8 letters right.
    fn near_miss_count(c: &Case) -> usize {
        c.dna.windows(SEQ_LEN).filter(|w| w.iter().zip(&c.seq).filter(|(a, b)| a != b).count() == 1).count()
    }

    #[test]
    fn strings_are_dna() {
        for f in &FAMILIES {
            for c in (f.make)(&mut rng_for(1, f.name)) {
                assert!(c.dna.len() >= SEQ_LEN, "{}: {}", f.name, c.what);
                assert!(c.dna.iter().chain(&c.seq).all(|b| LETTERS.contains(b)), "{}: {}", f.name, c.what);
            }
        }
    }

    #[test]
    fn every_check_has_matches_and_non_matches_so_no_constant_answer_passes() {
        for f in &FAMILIES {
            let cases = (f.make)(&mut rng_for(2, f.name));
            let all: Vec<u8> = cases.iter().flat_map(|c| found(&c.dna, &c.seq)).collect();
            assert!(all.contains(&1), "{}: no match anywhere: an all-zero kernel would pass", f.name);
            assert!(all.contains(&0), "{}: no non-match: an all-one kernel would pass", f.name);
            assert!(cases.len() >= 2, "{}", f.name);
        }
    }

    #[test]
    fn sequences_change_from_string_to_string() {
        for f in &FAMILIES {
            let cases = (f.make)(&mut rng_for(3, f.name));
            assert!(cases.iter().any(|c| c.seq != cases[0].seq), "{}: one sequence for every string", f.name);
        }
    }

    #[test]
    fn first_and_last_position_are_the_only_matches() {
        let mut inside = std::collections::BTreeSet::new();
        for c in family("first-position") {
            let m = matches(&c);
            assert!(m.len() == 2 && m[0] == 0 && m[1] >= SEQ_LEN, "{}", c.what);
            inside.insert(m[1]);
        }
        for c in family("last-position") {
            assert_eq!(c.dna.len(), 16384);
            let m = matches(&c);
            assert!(m.len() == 2 && m[1] == 16376 && m[0] <= 16376 - SEQ_LEN, "{}", c.what);
            inside.insert(m[0]);
        }
        assert!(inside.len() >= 7, "the middle matches are drawn: {inside:?}");
    }

    #[test]
    fn tiny_strings_match_or_miss_by_one_letter() {
        let cases = family("n=8");
        assert_eq!(cases.len(), 16);
        let mut missed = std::collections::BTreeSet::new();
        for pair in cases.chunks(2) {
            let differing: Vec<usize> =
                pair.iter().map(|c| c.dna.iter().zip(&c.seq).filter(|(a, b)| a != b).count()).collect();
            assert!(differing == [0, 1] || differing == [1, 0], "{differing:?}");
            let miss = &pair[differing.iter().position(|&d| d == 1).unwrap()];
            missed.insert(miss.dna.iter().zip(&miss.seq).position(|(a, b)| a != b).unwrap());
        }
        assert_eq!(missed.len(), SEQ_LEN, "every letter differs once");
        let order: Vec<bool> = cases.iter().map(|c| c.dna[..] == c.seq[..]).collect();
        let other: Vec<bool> = one_position(&mut rng_for(5, "n=8")).iter().map(|c| c.dna[..] == c.seq[..]).collect();
        assert_ne!(order, other, "the order is seeded");
    }

    #[test]
    fn small_strings_have_first_last_and_absent() {
        let cases = family("n=100");
        assert!(cases.iter().all(|c| c.dna.len() == SMALL_LETTERS && c.dna.len() < THREADS));
        assert_eq!(matches(&cases[0]), vec![0]);
        assert_eq!(matches(&cases[1]), vec![92]);
        assert!(matches(&cases[2]).is_empty());
        let c = &cases[8];
        assert!(matches(c).is_empty());
        assert!([0, 50, 92]
            .iter()
            .all(|&p| c.dna[p..p + SEQ_LEN].iter().zip(&c.seq).filter(|(a, b)| a != b).count() == 1));
    }

    #[test]
    fn whole_blocks_reach_into_the_halo() {
        let cases = family("n=263,264,519");
        let found_at: Vec<usize> = cases.iter().flat_map(matches).collect();
        for p in THREADS - 7..THREADS {
            assert!(found_at.contains(&p), "no match at {p}");
        }
        assert!(cases.iter().all(|c| matches(c).len() == 2), "one planted match and one seeded one");
        assert!(cases.iter().any(|c| c.dna.len() == 263 && matches(c).contains(&255)));
        assert!(cases.iter().any(|c| c.dna.len() == 264 && matches(c).contains(&256)));
        assert!(cases.iter().any(|c| c.dna.len() == 519 && matches(c).contains(&511)));
    }

    #[test]
    fn near_misses_are_near_misses() {
        let cases = family("near-misses");
        for (i, c) in cases.iter().enumerate() {
            assert!(near_miss_count(c) >= 350, "{}: {}", c.what, near_miss_count(c));
            assert_eq!(matches(c).len(), usize::from(i % 2 == 0), "{}", c.what);
        }
        // The wrong letter sits in every one of the 8 places.
        let c = &cases[1];
        let places: std::collections::BTreeSet<usize> = c
            .dna
            .windows(SEQ_LEN)
            .filter_map(|w| {
                let wrong: Vec<usize> = (0..SEQ_LEN).filter(|&i| w[i] != c.seq[i]).collect();
                (wrong.len() == 1).then(|| wrong[0])
            })
            .collect();
        assert_eq!(places.len(), SEQ_LEN);
    }

    #[test]
    fn repeats_overlap_and_touch() {
        assert_eq!(period(b"AAAAAAAA"), 1);
        assert_eq!(period(b"ACACACAC"), 2);
        assert_eq!(period(b"TTGTTGTT"), 3);
        assert_eq!(period(b"ACGTACGT"), 4);
        assert_eq!(period(b"GATTACAG"), 7);
        assert_eq!(period(b"ACGTTGCA"), 7);
        assert_eq!(period(b"AAAAAAAC"), 8);
        for c in family("repeats-and-overlaps") {
            let m = matches(&c);
            let d = period(&c.seq);
            let gaps = m.windows(2).filter(|w| w[1] - w[0] == d).count();
            assert!(m.len() >= 80 && gaps >= 40, "{}: {} matches, {gaps} at distance {d}", c.what, m.len());
        }
    }

    #[test]
    fn seed_strings_are_present_and_absent() {
        let cases = family("seed-16384");
        assert!(cases.iter().all(|c| c.dna.len() == 16384));
        assert!(cases.iter().filter(|c| matches(c).is_empty()).count() >= 4);
        assert!(cases.iter().filter(|c| matches(c).len() >= 3).count() >= 4);
    }

    #[test]
    fn matches_cross_every_block_boundary_with_every_halo_offset() {
        let at = across_boundaries(BOUNDARY_LETTERS, 1);
        assert_eq!(at.len(), positions(BOUNDARY_LETTERS).div_ceil(THREADS) - 1);
        let offsets: std::collections::BTreeSet<usize> = at.iter().map(|p| THREADS - p % THREADS).collect();
        assert_eq!(offsets, (1..SEQ_LEN).collect());
        for c in family("block-boundaries") {
            let m = matches(&c);
            assert!(at.iter().all(|p| m.contains(p)), "{}", c.what);
            assert!(m.contains(&(positions(BOUNDARY_LETTERS) - 1)));
        }
    }

    #[test]
    fn millions_of_letters_match_at_both_ends() {
        let cases = family("n=3000017");
        let last = MILLIONS_LETTERS - SEQ_LEN;
        let m = matches(&cases[0]);
        assert!(m.contains(&0) && m.contains(&last) && m.len() > 100);
        assert!(across_boundaries(MILLIONS_LETTERS, 97).iter().all(|p| m.contains(p)));
        assert_eq!(matches(&cases[1]), vec![last]);
    }

    #[test]
    fn sizes_are_not_multiples_of_the_block() {
        for n in [SEED_LETTERS, SMALL_LETTERS, BOUNDARY_LETTERS, MILLIONS_LETTERS] {
            assert_ne!(positions(n) % THREADS, 0, "n={n}");
        }
        assert_eq!(positions(EDGE_LETTERS[0]), THREADS);
        assert_eq!(positions(EDGE_LETTERS[1]), THREADS + 1);
        assert_eq!(positions(EDGE_LETTERS[2]), 2 * THREADS);
    }
}
