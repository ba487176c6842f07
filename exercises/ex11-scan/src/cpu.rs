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
    let mut v = kit::inputs::uniform_i32(rng, n, 1, MAX_VALUE + 1);
    kit::inputs::plant(&mut v, &EDGES);
    v
}

/// The ends of the README's range 1..100, planted in every input (the
/// first element, the last, and between).
pub const EDGES: [i32; 2] = [1, MAX_VALUE];

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
    compare_with(what, input, expected, got, Some(scan))
}

/// [`compare`] naming the first wrong element only, where the cause is known
/// already (the value's reading would point elsewhere).
pub fn compare_bare(what: &str, input: &[i32], expected: &[i32], got: &[i32]) -> Result<()> {
    compare_with(what, input, expected, got, None)
}

fn compare_with(what: &str, input: &[i32], expected: &[i32], got: &[i32], scan: Option<Scan>) -> Result<()> {
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
    let Some(scan) = scan else { bail!(msg) };
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
    } else if let Some(why) = missing_pattern(input, expected, got) {
        msg += &why;
    }
    bail!(msg)
}

/// What every wrong element of the output is short by, where the input proves
/// it. Values are 1..100, so the scan of a section is strictly increasing and
/// a shortfall equals the sum of a section's first elements (in[start..=k]) in
/// at most one way; a single value (in[k] = 79) matches many elements, so a
/// distance is named only when one distance explains every wrong element.
/// `None` when no one pattern explains them all: then the message says only
/// what is expected and what was got.
fn missing_pattern(input: &[i32], expected: &[i32], got: &[i32]) -> Option<String> {
    let wrong: Vec<usize> = (0..expected.len()).filter(|&i| got[i] != expected[i]).collect();
    if wrong.iter().any(|&i| is_poison(&got[i])) {
        return None;
    }
    // Per section: the inclusive scan of the section alone (strictly increasing).
    let local = section_scans(input);
    let short = |i: usize| expected[i].wrapping_sub(got[i]);
    let start = |i: usize| i - i % SECTION;
    // The k with local[k] == the shortfall: element i misses in[start..=k].
    let prefix_end = |i: usize| {
        let s = start(i);
        local[s..i].binary_search(&short(i)).ok().map(|k| s + k)
    };
    let ends: Option<Vec<usize>> = wrong.iter().map(|&i| prefix_end(i)).collect();
    let first = wrong[0];
    if let Some(ends) = ends {
        let (s, k) = (start(first), ends[0]);
        let shortfall = if k == s {
            format!("short by exactly in[{s}] = {}", short(first))
        } else {
            format!("short by exactly in[{s}] + ... + in[{k}] = {}", short(first))
        };
        let others_them = |verb: &str| {
            if wrong.len() == 1 {
                (" (the only wrong element)".to_string(), "it")
            } else {
                (format!(" (and so {verb} every one of the {} wrong elements)", wrong.len()), "them")
            }
        };
        let same = |f: &dyn Fn(usize, usize) -> usize| wrong.iter().zip(&ends).all(|(&i, &e)| f(i, e) == f(first, k));
        if same(&|i, e| i - e) {
            // Each holds only the `w` elements ending at it: the step of stride w never reached it.
            let w = first - k;
            let (others, them) = others_them("does");
            let step = if w.is_power_of_two() {
                format!(
                    ", as a scan does before its step of stride {w}: that step (adding the partial sum {w} places \
                     before) did not run for {them}. Check the loop's bounds: Kogge-Stone runs the strides 1, 2, \
                     ..., {half} (`stride < SECTION_SIZE`); Brent-Kung's up-sweep runs them up to {half} = \
                     blockDim.x (`stride <= blockDim.x`), so that the last element of a section gets its first half",
                    half = SECTION / 2
                )
            } else {
                String::new()
            };
            return Some(format!(
                ", which is {shortfall}: it holds the sum of only the {w} elements ending at it{others}{step}"
            ));
        }
        if same(&|i, e| e - start(i)) {
            // Each misses the same first elements of its section.
            let m = k - s + 1;
            let (others, them) = others_them("is");
            let why = if m == 1 {
                "the section's first element never reached them: a condition off by one that leaves out the \
                 thread whose partner is element 0, such as `threadIdx.x > stride` where `>=` is meant"
                    .to_string()
            } else {
                format!(
                    "the partial sum of the section's first {m} elements never reached {them}: a step that should \
                     carry it did not run (a condition or loop bound off by one; in Brent-Kung, the down-sweep \
                     starts at stride SECTION_SIZE / 4 = {} and runs down to 1)",
                    SECTION / 4
                )
            };
            let first_m = if m == 1 {
                "its section's first element".to_string()
            } else {
                format!("the sum of its section's first {m} elements")
            };
            return Some(format!(", which is {shortfall}, {first_m}{others}: {why}"));
        }
    }
    // One element `d` places back, the same `d` for every wrong element.
    let misses = |i: usize, d: usize| d <= i % SECTION && input[i - d] == short(i);
    let distances: Vec<usize> =
        (1..=first % SECTION).filter(|&d| wrong.iter().all(|&i| misses(i, d))).take(2).collect();
    if let [d] = distances[..] {
        return Some(format!(
            ", which is short by exactly in[{}] = {}, the element {d} places before it; every one of the {} wrong \
             elements misses exactly the element {d} places before it, and no other distance explains them all: one \
             step of the scan did not add it (an off-by-one stride or condition, or a value read before it was \
             written)",
            first - d,
            short(first),
            wrong.len()
        ));
    }
    None
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

    /// A Kogge-Stone that never ran its last step: element i >= 512 holds only
    /// the 512 elements ending at it. Named as that step, whatever the values.
    #[test]
    fn a_skipped_last_step_is_named_as_its_stride() {
        for seed in 0..20 {
            let v = values(&mut rng_for(seed, "t"), 2 * SECTION + 700);
            let e = section_scans(&v);
            let got: Vec<i32> =
                (0..v.len()).map(|i| if i % SECTION >= 512 { v[i + 1 - 512..=i].iter().sum() } else { e[i] }).collect();
            let err = compare("Y", &v, &e, &got, Scan::Sections).unwrap_err().to_string();
            assert!(err.contains("index 512") && err.contains("short by exactly in[0] = "), "{err}");
            assert!(err.contains("only the 512 elements ending at it") && err.contains("step of stride 512"), "{err}");
        }
    }

    /// `threadIdx.x > stride`: every element misses the section's first one.
    #[test]
    fn a_missing_first_element_is_named() {
        let v = values(&mut rng_for(6, "t"), SECTION + 40);
        let e = section_scans(&v);
        let got: Vec<i32> =
            (0..v.len()).map(|i| if i % SECTION > 0 { e[i] - v[i - i % SECTION] } else { e[i] }).collect();
        let err = compare("Y", &v, &e, &got, Scan::Sections).unwrap_err().to_string();
        assert!(err.contains("index 1 ") && err.contains("its section's first element"), "{err}");
        assert!(err.contains("`threadIdx.x > stride`") && !err.contains("places before"), "{err}");
    }

    /// Brent-Kung: the up-sweep one level short (only the last element, missing
    /// the first half), the down-sweep one level short (the first 512 missing
    /// from elements 767..1022).
    #[test]
    fn brent_kung_skipped_levels_are_named() {
        let v = values(&mut rng_for(7, "t"), 2 * SECTION);
        let e = section_scans(&v);
        let mut got = e.clone();
        for s in [0, SECTION] {
            got[s + SECTION - 1] -= e[s + 511];
        }
        let err = compare("Y", &v, &e, &got, Scan::Sections).unwrap_err().to_string();
        assert!(err.contains("in[0] + ... + in[511]") && err.contains("step of stride 512"), "{err}");
        assert!(err.contains("every one of the 2 wrong elements") && err.contains("`stride <= blockDim.x`"), "{err}");
        let mut got = e.clone();
        for s in [0, SECTION] {
            got[s + 767..s + SECTION - 1].iter_mut().for_each(|g| *g -= e[s + 511]);
        }
        let err = compare("Y", &v, &e, &got, Scan::Sections).unwrap_err().to_string();
        assert!(err.contains("index 767") && err.contains("section's first 512 elements"), "{err}");
        assert!(err.contains("down-sweep starts at stride SECTION_SIZE / 4 = 256"), "{err}");
    }

    /// A distance is named only where one distance explains every wrong
    /// element: a value that many earlier elements share names none.
    #[test]
    fn a_distance_is_named_only_when_the_input_proves_it() {
        let mut v = values(&mut rng_for(5, "t"), 64);
        // Element 9 misses in[1], and in[3] has the same value: 8 or 6 places back?
        v[3] = v[1];
        let e2 = section_scans(&v);
        let mut got = e2.clone();
        got[9] -= v[1];
        let err = compare("Y", &v, &e2, &got, Scan::Sections).unwrap_err().to_string();
        assert!(err.contains("index 9") && !err.contains("places before"), "{err}");
        // Distinct values: element 9 misses in[1], element 20 in[12]: 8 places back, proven.
        let v: Vec<i32> = (1..=64).collect();
        let e = section_scans(&v);
        let mut got = e.clone();
        got[9] -= v[1];
        got[20] -= v[12];
        let err = compare("Y", &v, &e, &got, Scan::Sections).unwrap_err().to_string();
        assert!(err.contains("short by exactly in[1] = 2, the element 8 places before it"), "{err}");
    }
}
