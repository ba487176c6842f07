//! The CPU reference (sums in i64, wrapped to `int` as the GPU's additions
//! wrap) and a comparison that names the usual scan bugs: an exclusive scan,
//! the offset of the sections before left out (or the section's own total
//! put in), elements never written, a partial last section missed.

use anyhow::{bail, Result};
use kit::check::is_poison;
use rand::Rng;

use crate::SECTION;

/// Inputs are drawn from `1..=MAX_VALUE`: every inclusive scan is strictly
/// increasing within what it sums, so an element shifted by one place (an
/// exclusive scan, an off-by-one stride) always shows, and no sum is 0 or -1
/// (the poison pattern) at the checked sizes: 5 M x 100 < 2^31.
pub const MAX_VALUE: i32 = 100;

/// `n` values in `1..=MAX_VALUE`.
pub fn values(rng: &mut impl Rng, n: usize) -> Vec<i32> {
    kit::inputs::uniform_i32(rng, n, 1, MAX_VALUE + 1)
}

/// The inclusive scan of each section of `SECTION` elements on its own (the
/// kogge-stone and brent-kung parts), summed in i64 and wrapped to `int`.
pub fn section_scans(values: &[i32]) -> Vec<i32> {
    values.chunks(SECTION).flat_map(inclusive_scan).collect()
}

/// The inclusive scan of the whole array (the any-n part), summed in i64 and wrapped to `int`.
pub fn inclusive_scan(values: &[i32]) -> Vec<i32> {
    let mut sum = 0i64;
    values
        .iter()
        .map(|&v| {
            sum += v as i64;
            sum as i32
        })
        .collect()
}

/// What the kernel was asked for, for the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// Each section scanned on its own.
    Sections,
    /// The whole array (any-n).
    Whole,
}

/// Compares the kernel's `out` with the reference; the first wrong element is
/// named with its section and what its value looks like.
pub fn compare(what: &str, input: &[i32], expected: &[i32], got: &[i32], scan: Scan) -> Result<()> {
    let n = expected.len();
    let Some(first) = (0..n).find(|&i| got[i] != expected[i]) else { return Ok(()) };
    let wrong = (0..n).filter(|&i| got[i] != expected[i]).count();
    let unwritten = (0..n).filter(|&i| is_poison(&got[i])).count();
    if unwritten == n {
        bail!("`{what}`: no element was written (n = {n}): did the kernel run its TODO yet?");
    }
    let (section, j) = (first / SECTION, first % SECTION);
    let sections = n.div_ceil(SECTION);
    let mut msg = format!(
        "`{what}`: {wrong} of {n} elements wrong, the first at index {first} (section {section} of {sections}, \
         element {j} of it): expected {}, got ",
        expected[first]
    );
    if is_poison(&got[first]) {
        msg += &format!("nothing (never written; {unwritten} elements were never written)");
        if section == sections - 1 && n % SECTION != 0 {
            msg += &format!(
                ". It is in the last section, which has only {} of its {SECTION} elements: the element exists \
                 (index < n) and must be written too",
                n % SECTION
            );
        }
        bail!(msg)
    }
    msg += &got[first].to_string();
    let exclusive = expected[first].wrapping_sub(input[first]);
    let own_section: i32 = {
        let start = section * SECTION;
        input[start..=first].iter().fold(0i32, |s, &v| s.wrapping_add(v))
    };
    if got[first] == exclusive {
        msg += &format!(
            ", which is the sum of the elements before it without in[{first}] = {} itself: an exclusive scan. The \
             scan is inclusive: out[i] = in[0] + ... + in[i]",
            input[first]
        );
    } else if scan == Scan::Whole && section > 0 && got[first] == own_section {
        msg += ", which is the scan of its own section only: the total of the sections before it was never added. \
                add_sums must add scanned_sums[blockIdx.x - 1] to every element of section blockIdx.x > 0";
    } else if scan == Scan::Whole {
        let section_total: i32 =
            input[section * SECTION..n.min((section + 1) * SECTION)].iter().fold(0i32, |s, &v| s.wrapping_add(v));
        if got[first] == expected[first].wrapping_add(section_total) {
            msg += ", which is too large by exactly the total of its own section: scanned_sums[b] is the sum of \
                    sections 0..b, this one included; section b needs scanned_sums[b - 1] (and section 0 nothing)";
        }
    } else if scan == Scan::Sections && j < first && got[first] == inclusive_upto(input, first) {
        msg += ", which sums the sections before it too: each section's scan starts again from its first element";
    } else if got[first] < expected[first] {
        let missing = expected[first].wrapping_sub(got[first]);
        if let Some(k) = (section * SECTION..first).rev().find(|&k| input[k] == missing) {
            msg += &format!(
                ", which is short by exactly in[{k}] = {missing}: one step of the scan did not add the element \
                 {} places before (an off-by-one stride or condition, or a value read before it was written)",
                first - k
            );
        }
    }
    bail!(msg)
}

fn inclusive_upto(input: &[i32], i: usize) -> i32 {
    input[..=i].iter().fold(0i32, |s, &v| s.wrapping_add(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    const POISON: i32 = -1;

    #[test]
    fn sections_restart_and_the_whole_scan_does_not() {
        let v: Vec<i32> = (1..=2 * SECTION as i32 + 3).collect();
        let s = section_scans(&v);
        assert_eq!((s[0], s[1], s[SECTION - 1]), (1, 3, (SECTION * (SECTION + 1) / 2) as i32));
        assert_eq!(s[SECTION], SECTION as i32 + 1);
        assert_eq!(s.len(), v.len());
        let w = inclusive_scan(&v);
        assert_eq!(w[SECTION], ((SECTION + 1) * (SECTION + 2) / 2) as i32);
        // Sums wrap as an int does.
        assert_eq!(inclusive_scan(&[i32::MAX, 1]), vec![i32::MAX, i32::MIN]);
    }

    #[test]
    fn values_never_make_a_sum_that_looks_like_poison() {
        let v = values(&mut rng_for(1, "t"), 10_000);
        assert!(v.iter().all(|&x| (1..=MAX_VALUE).contains(&x)));
        assert!((5_000_011i64 * MAX_VALUE as i64) < i32::MAX as i64);
    }

    #[test]
    fn an_exclusive_scan_is_named() {
        let v = values(&mut rng_for(2, "t"), 40);
        let e = section_scans(&v);
        let got: Vec<i32> = (0..40).map(|i| e[i] - v[i]).collect();
        let err = compare("Y", &v, &e, &got, Scan::Sections).unwrap_err().to_string();
        assert!(err.contains("index 0") && err.contains("an exclusive scan"), "{err}");
    }

    #[test]
    fn a_missing_offset_and_the_wrong_offset_are_named() {
        let v = values(&mut rng_for(3, "t"), 2 * SECTION + 5);
        let e = inclusive_scan(&v);
        let got = section_scans(&v);
        let err = compare("out", &v, &e, &got, Scan::Whole).unwrap_err().to_string();
        assert!(err.contains(&format!("index {SECTION}")) && err.contains("scanned_sums[blockIdx.x - 1]"), "{err}");
        let totals: Vec<i32> = v.chunks(SECTION).map(|c| c.iter().sum()).collect();
        let too_much: Vec<i32> =
            (0..v.len()).map(|i| if i < SECTION { e[i] } else { e[i] + totals[i / SECTION] }).collect();
        let err = compare("out", &v, &e, &too_much, Scan::Whole).unwrap_err().to_string();
        assert!(err.contains("needs scanned_sums[b - 1]"), "{err}");
    }

    #[test]
    fn an_unwritten_tail_is_named_with_the_partial_section() {
        let v = values(&mut rng_for(4, "t"), SECTION + 7);
        let e = section_scans(&v);
        let mut got = e.clone();
        got[SECTION + 3..].fill(POISON);
        let err = compare("Y", &v, &e, &got, Scan::Sections).unwrap_err().to_string();
        assert!(err.contains("never written") && err.contains("only 7 of its 1024"), "{err}");
        let none = vec![POISON; v.len()];
        assert!(compare("Y", &v, &e, &none, Scan::Sections).unwrap_err().to_string().contains("no element"));
    }

    #[test]
    fn a_skipped_step_is_named() {
        let v = values(&mut rng_for(5, "t"), 64);
        let e = section_scans(&v);
        let mut got = e.clone();
        got[9] -= v[1];
        let err = compare("Y", &v, &e, &got, Scan::Sections).unwrap_err().to_string();
        assert!(err.contains("index 9") && err.contains("short by exactly in["), "{err}");
    }
}
