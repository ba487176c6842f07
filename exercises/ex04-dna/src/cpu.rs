//! The CPU reference: exact, since the answer is a yes/no per start position.

use crate::SEQ_LEN;

/// Start positions of a string of `n` letters: every `p` with `p + SEQ_LEN <= n`
/// (16377 for the seed's 16384 letters). Zero when the string is shorter than
/// the sequence.
pub fn positions(n: usize) -> usize {
    (n + 1).saturating_sub(SEQ_LEN)
}

/// What the kernels write: `found[p] = 1` when `dna[p..p + SEQ_LEN] == seq`, else 0.
pub fn found(dna: &[u8], seq: &[u8; SEQ_LEN]) -> Vec<u8> {
    dna.windows(SEQ_LEN).map(|w| u8::from(w == seq)).collect()
}

/// The start positions where `seq` occurs (overlapping occurrences included).
pub fn match_positions(dna: &[u8], seq: &[u8; SEQ_LEN]) -> Vec<usize> {
    dna.windows(SEQ_LEN).enumerate().filter(|(_, w)| *w == seq).map(|(p, _)| p).collect()
}

/// The seed's `Contient(sequence, chaine)`: is the sequence anywhere in the string?
pub fn contains(dna: &[u8], seq: &[u8; SEQ_LEN]) -> bool {
    dna.windows(SEQ_LEN).any(|w| w == seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_positions_like_the_seed() {
        assert_eq!(positions(16384), 16377);
        assert_eq!(positions(8), 1);
        assert_eq!(positions(7), 0);
        assert_eq!(positions(0), 0);
    }

    #[test]
    fn finds_a_match_at_the_last_position() {
        let dna = b"CCCCCCCCCCACGTACGA";
        let seq = b"ACGTACGA";
        assert_eq!(dna.len(), 18);
        let f = found(dna, seq);
        assert_eq!(f.len(), 11);
        assert_eq!(f[10], 1);
        assert_eq!(f.iter().map(|&x| x as usize).sum::<usize>(), 1);
        assert_eq!(match_positions(dna, seq), vec![10]);
        assert!(contains(dna, seq));
    }

    #[test]
    fn finds_a_match_at_the_first_position() {
        assert_eq!(match_positions(b"GATTACAGTTTT", b"GATTACAG"), vec![0]);
    }

    #[test]
    fn a_near_miss_is_not_a_match() {
        // 7 of 8 letters right, the wrong one in every place in turn.
        let seq = *b"ACGTTGCA";
        for i in 0..SEQ_LEN {
            let mut dna = seq;
            dna[i] = if seq[i] == b'A' { b'C' } else { b'A' };
            assert_eq!(found(&dna, &seq), vec![0], "letter {i} differs");
            assert!(!contains(&dna, &seq));
        }
        assert_eq!(found(&seq, &seq), vec![1]);
    }

    #[test]
    fn overlapping_and_repeated_matches_all_count() {
        // Ten A's hold "AAAAAAAA" at 0, 1 and 2.
        assert_eq!(match_positions(b"AAAAAAAAAA", b"AAAAAAAA"), vec![0, 1, 2]);
        // Period 2: matches every second letter.
        assert_eq!(match_positions(b"ACACACACACAC", b"ACACACAC"), vec![0, 2, 4]);
        // Back to back, not overlapping.
        assert_eq!(match_positions(b"GATTACAGGATTACAG", b"GATTACAG"), vec![0, 8]);
    }

    #[test]
    fn absent_and_too_short() {
        assert!(!contains(b"ACGTACGTACGT", b"TTTTTTTT"));
        assert_eq!(found(b"ACGTACG", b"ACGTACGT"), Vec::<u8>::new());
    }
}
