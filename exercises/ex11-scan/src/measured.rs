//! ex11's lessons judged by what the kernels do (kit::measure): each part's
//! kernel scans a small fixed input on a private simulator, and the checks
//! read the barriers per block, the global traffic per element and the
//! additions per element. Deterministic: the same figures on every backend.
//!
//! - kogge-stone: log2(1024) = 10 steps. A double buffer needs one barrier per
//!   step (10 per block); the race-free single buffer of PMPP Fig. 11.3 needs
//!   two (20); a single buffer with one barrier races (the sanitizer's verdict,
//!   on the correctness checks). Every element is loaded once and stored once.
//! - brent-kung: a Brent-Kung section scan does 2(n - 1) - log2(n) additions,
//!   2036 for 1024 elements: < 2 per element; Kogge-Stone's n log2(n) - (n - 1)
//!   is 9217: 9 per element. A Blelloch scan made inclusive by adding each
//!   element back does 3n - 2: under the bound of 3.5 too.
//! - any-n: the whole sequence of launches reads and writes each element
//!   about 4 times (scan_sections: load and store; add_sums: load and store);
//!   a scan that works in global memory instead of shared, or that re-reads the
//!   sections before it, does many times more.

use anyhow::{bail, Result};
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, Measurement};
use kit::{args, Ctx};

use crate::cpu::{self, Scan};
use crate::{run_any, section_config, sections, Hierarchy, BK_THREADS, BRENT_KUNG, KOGGE_STONE, KS_THREADS, SECTION};

/// Elements of the section parts' measured input: 4 whole sections, so that
/// the figures per element are the textbook's exactly.
pub const MEASURE_N: usize = 4 * SECTION;
/// Elements of any-n's measured input: 16 sections and a partial one (two
/// levels of scan_sections).
pub const MEASURE_ANY_N: usize = 16 * SECTION + 300;
/// Barriers per block a Kogge-Stone of 1024 elements stays at or under: its 10
/// steps, one barrier each, and two more (after the load, before the store).
/// The single buffer needs 20. See CALIBRATION.md.
pub const MAX_KS_BARRIERS_PER_BLOCK: f64 = 12.0;
/// Global loads (and, separately, stores) per element, in ints, a section scan
/// stays at or under: 1 each, with a margin for a kernel that reads a few
/// values twice; one that keeps its steps in global memory does 10 or more.
pub const MAX_SECTION_TRAFFIC: f64 = 1.25;
/// Additions per element a work-efficient section scan stays at or under:
/// Brent-Kung 1.99, Blelloch made inclusive 3.0, Kogge-Stone 9.0.
pub const MAX_ADDITIONS_PER_ELEMENT: f64 = 3.5;
/// Global traffic (ints loaded and stored by the threads) per element of the
/// whole any-n sequence: the reference's 4.4 (scan_sections 2, add_sums 2,
/// and each thread's load of its section's offset 0.5 but in section 0); a scan in global
/// memory does about 30. See CALIBRATION.md.
pub const MAX_ANY_TRAFFIC: f64 = 6.0;

fn measured_values(n: usize) -> Vec<i32> {
    cpu::values(&mut kit::inputs::rng_for(0, "measure"), n)
}

/// Runs a section part's kernel on [`MEASURE_N`] elements.
pub fn measure_sections(ctx: &Ctx, kernel: &str, threads: u32) -> Result<Measurement> {
    let n = MEASURE_N;
    ctx.measure(kernel, |module| {
        let gpu = module.gpu();
        let input = measured_values(n);
        let d_in = gpu.upload("X", &input)?;
        let d_out = gpu.poisoned::<i32>("Y", n)?;
        module.launch(kernel, section_config(n, threads), &args![&d_in, &d_out, n as i32])?;
        let expected = cpu::section_scans(&input);
        kit::measure::require_right_result(cpu::compare("Y", &input, &expected, &d_out.read()?, Scan::Sections))
    })
}

/// Runs the whole any-n sequence on [`MEASURE_ANY_N`] elements and returns
/// `kernel`'s share of it (every launch of it, every level).
pub fn measure_any(ctx: &Ctx, kernel: &str) -> Result<Measurement> {
    let n = MEASURE_ANY_N;
    ctx.measure(kernel, |module| {
        let gpu = module.gpu();
        let input = measured_values(n);
        let d_in = gpu.upload("in", &input)?;
        let d_out = gpu.poisoned::<i32>("out", n)?;
        let hierarchy = Hierarchy::new(gpu, n)?;
        run_any(module, &hierarchy, &d_in, &d_out)?;
        let expected = cpu::inclusive_scan(&input);
        kit::measure::require_right_result(cpu::compare("out", &input, &expected, &d_out.read()?, Scan::Whole))
    })
}

/// Ints the threads loaded per element.
pub fn loads_per_element(m: &Measurement, n: usize) -> f64 {
    m.stats.global_load_bytes as f64 / 4.0 / n as f64
}

/// Ints the threads stored per element.
pub fn stores_per_element(m: &Measurement, n: usize) -> f64 {
    m.stats.global_store_bytes as f64 / 4.0 / n as f64
}

/// Barriers per block (every block of the measured input is a whole section).
pub fn barriers_per_block(m: &Measurement) -> f64 {
    m.stats.barriers as f64 / sections(MEASURE_N) as f64
}

/// Additions on data (not indices) per element.
pub fn additions_per_element(m: &Measurement) -> f64 {
    m.data_additions() as f64 / MEASURE_N as f64
}

/// `one-barrier-per-step` of kogge-stone.
pub fn barriers(m: &Measurement) -> Result<String> {
    let b = barriers_per_block(m);
    if b > MAX_KS_BARRIERS_PER_BLOCK {
        bail!(
            "{}: {b:.0} barriers per block of {SECTION} threads (the double-buffered Kogge-Stone has one per step, \
             log2({SECTION}) = 10; at most {MAX_KS_BARRIERS_PER_BLOCK}). The result is right, but with one shared \
             array a step must wait twice: once before it reads (the step before has written) and once before it \
             writes (every thread has read what it overwrites). Read one array and write the other, swapping them \
             after each step: then one __syncthreads() per step is enough, since the array a step writes was last \
             read two steps ago. (A Brent-Kung scan has about 20 barriers too: its trees take 2 log2 n steps; this \
             part asks for Kogge-Stone's log2 n.)",
            m.kernel
        );
    }
    Ok(format!("{b:.0} barriers per block of {SECTION} threads (ideal 10: one per step)"))
}

/// The section parts' global traffic: one load and one store per element.
pub fn one_pass(m: &Measurement) -> Result<String> {
    let (loads, stores) = (loads_per_element(m, MEASURE_N), stores_per_element(m, MEASURE_N));
    for (what, per, kind) in [("loads", loads, AccessKind::GlobalLoad), ("stores", stores, AccessKind::GlobalStore)] {
        if per > MAX_SECTION_TRAFFIC {
            let worst = m.rows(|k| k == kind).max_by_key(|r| r.thread_accesses);
            bail!(
                "{}: {per:.2} global {what} per element (ideal 1, at most {MAX_SECTION_TRAFFIC}){}: the section \
                 should be read from global memory once into shared memory (or registers), scanned there, and \
                 written once. Global memory is the slow path: keep the steps of the scan in `__shared__` arrays",
                m.kernel,
                worst_at(worst)
            );
        }
    }
    Ok(format!("global traffic per element: {loads:.2} loads, {stores:.2} stores (ideal 1 and 1)"))
}

/// `work-efficient` of brent-kung.
pub fn work_efficient(m: &Measurement) -> Result<String> {
    let a = additions_per_element(m);
    if a > MAX_ADDITIONS_PER_ELEMENT {
        bail!(
            "{}: {a:.2} additions per element (Brent-Kung: 2(n - 1) - log2 n = 2036 for a section of {SECTION}, \
             1.99 per element; at most {MAX_ADDITIONS_PER_ELEMENT}). The result is right, but this is not \
             work-efficient: Kogge-Stone, where every element adds at every one of the log2 n steps, does \
             n log2 n - (n - 1) = 9217 additions, 9 per element. Build a reduction tree (strides 1, 2, ..., 512: \
             n - 1 additions) and then a distribution tree (strides 256, ..., 1: n - 1 - log2 n more)",
            m.kernel
        );
    }
    Ok(format!("{a:.2} additions per element (Brent-Kung: 1.99; Kogge-Stone: 9.0)"))
}

/// `global-traffic` of any-n: both kernels, every level.
pub fn any_traffic(sections_m: &Measurement, add_m: &Measurement) -> Result<String> {
    let n = MEASURE_ANY_N;
    let per = |m: &Measurement| loads_per_element(m, n) + stores_per_element(m, n);
    let (scan, add) = (per(sections_m), per(add_m));
    let total = scan + add;
    let figures = format!(
        "global traffic per element: {total:.2} ints (scan_sections {scan:.2}: {:.2} loaded, {:.2} stored; \
         add_sums {add:.2}); the reference: 4.4",
        loads_per_element(sections_m, n),
        stores_per_element(sections_m, n)
    );
    if total > MAX_ANY_TRAFFIC {
        let (m, what) = if scan >= add { (sections_m, "scan_sections") } else { (add_m, "add_sums") };
        let worst =
            m.rows(|k| matches!(k, AccessKind::GlobalLoad | AccessKind::GlobalStore)).max_by_key(|r| r.thread_accesses);
        bail!(
            "{figures}; at most {MAX_ANY_TRAFFIC}, most of it in {what}{}. A hierarchical scan reads and writes \
             each element about twice per kernel: scan_sections loads its section once into shared memory, scans \
             it there and stores it once; add_sums loads, adds one offset (read once per thread or per block) and \
             stores. Scanning in global memory, or summing the sections before this one again in every block, \
             moves the data many more times",
            worst_at(worst)
        );
    }
    Ok(figures)
}

/// The structure check `one-barrier-per-step`.
pub fn kogge_stone_barriers(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(measure_sections(ctx, KOGGE_STONE, KS_THREADS).and_then(|m| barriers(&m)))
}

/// The structure check `one-pass` of kogge-stone.
pub fn kogge_stone_traffic(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(measure_sections(ctx, KOGGE_STONE, KS_THREADS).and_then(|m| one_pass(&m)))
}

/// The structure check `work-efficient`: few additions, and the one pass over global memory.
pub fn brent_kung_work(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(measure_sections(ctx, BRENT_KUNG, BK_THREADS).and_then(|m| {
        let work = work_efficient(&m)?;
        Ok(format!("{work}; {}", one_pass(&m)?))
    }))
}

/// The structure check `global-traffic` of any-n.
pub fn any_n_traffic(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(
        measure_any(ctx, crate::SCAN_SECTIONS)
            .and_then(|s| Ok((s, measure_any(ctx, crate::ADD_SUMS)?)))
            .and_then(|(s, a)| any_traffic(&s, &a)),
    )
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    const REF: &str = "reference/ex11-scan/kernels";
    const SLOW: &str = "reference/slow/ex11-scan/kernels";
    const MINE: &str = "exercises/ex11-scan/calibration";

    #[test]
    fn kogge_stone_barriers_and_traffic_are_measured() {
        let ex = crate::exercise();
        for file in [
            format!("{REF}/kogge_stone.cu"),
            format!("{MINE}/kogge_stone_pointer_swap.cu"),
            format!("{MINE}/kogge_stone_warp_shuffle.cu"),
        ] {
            passes(&ex, "kogge-stone", "one-barrier-per-step", Run::Check, &file);
            passes(&ex, "kogge-stone", "one-pass", Run::Check, &file);
        }
        let slow = format!("{SLOW}/kogge_stone.cu");
        if let Some(msg) = fails(&ex, "kogge-stone", "one-barrier-per-step", Run::Check, &slow) {
            assert!(msg.contains("20 barriers per block"), "{msg}");
        }
        passes(&ex, "kogge-stone", "one-pass", Run::Check, &slow);
    }

    #[test]
    fn brent_kung_work_is_measured_not_spelled() {
        let ex = crate::exercise();
        for file in [
            format!("{REF}/brent_kung.cu"),
            format!("{SLOW}/brent_kung.cu"),
            format!("{MINE}/brent_kung_blelloch.cu"),
            format!("{MINE}/brent_kung_coarse2.cu"),
        ] {
            passes(&ex, "brent-kung", "work-efficient", Run::Check, &file);
        }
        if let Some(msg) =
            fails(&ex, "brent-kung", "work-efficient", Run::Check, &format!("{MINE}/brent_kung_is_kogge_stone.cu"))
        {
            assert!(msg.contains("9.00 additions per element"), "{msg}");
        }
    }

    #[test]
    fn any_n_traffic_is_measured() {
        let ex = crate::exercise();
        for file in [format!("{REF}/scan_any.cu"), format!("{SLOW}/scan_any.cu"), format!("{MINE}/scan_any_coarse2.cu")]
        {
            passes(&ex, "any-n", "global-traffic", Run::Check, &file);
        }
        if let Some(msg) =
            fails(&ex, "any-n", "global-traffic", Run::Check, &format!("{MINE}/scan_any_in_global_memory.cu"))
        {
            assert!(msg.contains("most of it in scan_sections"), "{msg}");
        }
    }
}
