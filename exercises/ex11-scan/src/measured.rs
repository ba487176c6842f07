//! ex11's lessons judged by what the kernels do (kit::measure): each part's
//! kernel scans a small input on a private simulator, and the checks read the
//! barriers per block, the global traffic per element and the additions per
//! element. Each check runs on three lengths drawn by the run's secret across
//! the range the correctness sizes cover on the simulator (whole sections for
//! the section parts, so that the figures per element are the textbook's
//! exactly), its values from the check's generator, and each length must
//! pass: no kernel can tell the measured launches by their shape, nor take
//! the lesson's path only in some band of lengths.
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
use kit::measure::{unless_unmeasurable, worst_at, AccessKind, BlockSample, Measurement};
use kit::{args, Ctx};

use rand::Rng;

use crate::cpu::{self, Scan};
use crate::{run_any, section_config, sections, Hierarchy, BK_THREADS, BRENT_KUNG, KOGGE_STONE, KS_THREADS, SECTION};

/// Whole sections of the section parts' measured inputs: the range their
/// correctness sizes cover on the simulator (up to 100 000 elements). Three
/// lengths are drawn from it by the run's secret, one from each third on a log
/// scale (`kit::measure::sizes_across`), and each must pass: whole sections,
/// so that the figures per element are the textbook's exactly at every one.
pub const MEASURE_SECTIONS: std::ops::RangeInclusive<usize> = 2..=97;
/// Whole sections of any-n's measured inputs (each then gets a partial one of
/// 1 to SECTION - 1 elements, drawn too): from two sections to past the
/// largest one-level correctness size (100 000), three lengths as above. The
/// two-level size (1 049 607) is left to its correctness check: a serial scan
/// there takes more simulated steps than a measurement may
/// (`kit::measure::MEASURE_MAX_STEPS`).
pub const MEASURE_ANY_SECTIONS: std::ops::RangeInclusive<usize> = 2..=128;
/// Lengths each measured check runs on.
pub const MEASURED_LENGTHS: usize = 3;
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
/// Active lanes per warp-level memory access (global, shared, generic, local:
/// loads, stores, atomics) the timed checks' stand-ins ask of a scan kernel.
/// Measured on the simulator: the parallel scans have 24 to 32 (Brent-Kung
/// 29.9, Blelloch 29.5, Kogge-Stone 32.0, warp shuffles 24.3, two elements per
/// thread 28.1; add_sums 30 to 32); a section walked by one thread 2.8, since
/// its 1023 steps are accesses of one lane. See CALIBRATION.md.
pub const MIN_LANES_PER_ACCESS: f64 = 12.0;

/// Elements of a section part's measured inputs: whole sections, three
/// lengths drawn by the run's secret across [`MEASURE_SECTIONS`].
pub fn measured_ns(ctx: &Ctx) -> Vec<usize> {
    let sections = kit::measure::sizes_across(ctx, "sections", MEASURE_SECTIONS, MEASURED_LENGTHS);
    sections.into_iter().map(|s| s * SECTION).collect()
}

/// Elements of any-n's measured inputs: three lengths across
/// [`MEASURE_ANY_SECTIONS`], each with a partial section, drawn by the run's secret.
pub fn measured_any_ns(ctx: &Ctx) -> Vec<usize> {
    let mut rng = ctx.secret_rng("partial section");
    let sections = kit::measure::sizes_across(ctx, "sections", MEASURE_ANY_SECTIONS, MEASURED_LENGTHS);
    sections.into_iter().map(|s| s * SECTION + rng.random_range(1..SECTION)).collect()
}

/// A measurement and the elements it scanned.
pub struct Measured {
    pub m: Measurement,
    pub n: usize,
}

/// `judge` on every length of `ns` (the worst case): the first failure, named with its length.
fn on_every_length(ns: &[usize], judge: impl FnMut(usize) -> Result<String>) -> Result<String> {
    kit::measure::on_every_size(ns, |n| format!("{n} elements"), judge)
}

/// [`measure_sections_on`] and `judge` on each of a section part's measured lengths.
pub fn on_section_lengths(
    ctx: &Ctx,
    kernel: &str,
    threads: u32,
    judge: impl Fn(&Measured) -> Result<String>,
) -> Result<String> {
    on_every_length(&measured_ns(ctx), |n| judge(&measure_sections_on(ctx, kernel, threads, n)?))
}

/// Runs a section part's kernel on `n` elements of the check's own values.
pub fn measure_sections_on(ctx: &Ctx, kernel: &str, threads: u32, n: usize) -> Result<Measured> {
    let input = cpu::values(&mut ctx.rng(), n);
    let m = ctx.measure(kernel, |module| {
        let gpu = module.gpu();
        let d_in = gpu.upload("X", &input)?;
        let d_out = gpu.poisoned::<i32>("Y", n)?;
        module.launch(kernel, section_config(n, threads), &args![&d_in, &d_out, n as i32])?;
        let expected = cpu::section_scans(&input);
        kit::measure::require_right_result(cpu::compare("Y", &input, &expected, &d_out.read()?, Scan::Sections))
    })?;
    Ok(Measured { m, n })
}

/// Runs the whole any-n sequence on `n` elements of the check's own values
/// and returns each kernel's share of it (every launch of it, every level):
/// scan_sections's, then add_sums's.
pub fn measure_any_on(ctx: &Ctx, n: usize) -> Result<(Measured, Measured)> {
    let input = cpu::values(&mut ctx.rng(), n);
    let mut both = ctx.measure_each(&[crate::SCAN_SECTIONS, crate::ADD_SUMS], |module| {
        let gpu = module.gpu();
        let d_in = gpu.upload("in", &input)?;
        let d_out = gpu.poisoned::<i32>("out", n)?;
        let hierarchy = Hierarchy::new(gpu, n)?;
        run_any(module, &hierarchy, &d_in, &d_out)?;
        let expected = cpu::inclusive_scan(&input);
        kit::measure::require_right_result(cpu::compare("out", &input, &expected, &d_out.read()?, Scan::Whole))
    })?;
    let add = both.pop().expect("two kernels");
    let scan = both.pop().expect("two kernels");
    Ok((Measured { m: scan, n }, Measured { m: add, n }))
}

/// [`measure_any_on`] and `judge` on each of any-n's measured lengths.
pub fn on_any_lengths(ctx: &Ctx, judge: impl Fn(&Measured, &Measured) -> Result<String>) -> Result<String> {
    on_every_length(&measured_any_ns(ctx), |n| {
        let (scan, add) = measure_any_on(ctx, n)?;
        judge(&scan, &add)
    })
}

/// Sections the simulator runs of brent-kung's and any-n's timed launches
/// (one block per section, 51 200 at an H100's timed size, [`timed_n`]),
/// drawn by the run's secret: block 0 and three of the later waves'
/// (kit::measure::BlockSample::at_timed_size). A kernel can tell the measured
/// lengths (at most 129 sections) from the timed one by `n` or its grid
/// alone; at the timed size it takes its timed path. kogge-stone is not
/// timed. any-n's two level-0 launches are each sampled on their own
/// ([`measure_any_at_timed_size`]): the scan of the section sums between them
/// is a few sections, which the measured lengths judge.
pub const TIMED_SAMPLED_BLOCKS: (usize, usize) = kit::measure::TIMED_SIZE_SAMPLE;

/// brent-kung's timed length on an H100 (kit::exercise::TIMED_L2_BYTES), as
/// [`crate::perf_n`] gives it there.
pub fn timed_n() -> usize {
    kit::exercise::timed_bandwidth_elements() / 2
}

/// `kernel` (a section scan with `threads` per block) run once on the
/// simulator at the timed size ([`timed_n`]), [`TIMED_SAMPLED_BLOCKS`] of its
/// sections: the input generated where they read it (kit::Gpu::upload_generated),
/// and what they wrote checked, wherever they wrote it, against the scan of
/// its section. Its `n` is the elements of the sampled sections.
pub fn measure_sections_at_timed_size(ctx: &Ctx, kernel: &str, threads: u32) -> Result<Measured> {
    let n = timed_n();
    let cfg = section_config(n, threads);
    let sample =
        BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), cfg.grid.0 as u64, TIMED_SAMPLED_BLOCKS);
    // In 1..=MAX_VALUE like the correctness inputs'.
    let values = kit::inputs::IntsIn::new(&ctx.rng_for("timed-size input"), 1, cpu::MAX_VALUE);
    let m = kit::measure::measure_ptx_sampled(&ctx.build.ptx, kernel, &sample, |module| {
        let (d_in, d_out) = generated_in_and_out(module.gpu(), &values, n, ("X", "Y"))?;
        module.launch(kernel, cfg, &args![&d_in, &d_out, n as i32])?;
        let readme = || sample.linear_elements(SECTION, n);
        let written = kit::measure::sampled_writes(&d_out, readme)?;
        let scans = scans_written_in(&values, n, &written);
        let right = kit::check::exact_at("Y", n, &written, |i| scans[&(i / SECTION)][i % SECTION]);
        kit::measure::require_right_result_at_timed_size(right, &format!("n = {n}"), sample.blocks().len())
    })?;
    Ok(Measured { m, n: sample.blocks().len() * SECTION })
}

/// any-n's level-0 launches run on the simulator at the timed size
/// ([`timed_n`]), [`TIMED_SAMPLED_BLOCKS`] of their sections, each launch on
/// its own: `scan_sections` on the input generated where it is read, the
/// sections the sampled blocks wrote checked, wherever they wrote them,
/// against their scans and `sums` against their totals; `add_sums` on an
/// output and scanned sums generated too (it adds an offset, whatever the
/// values are), what the sampled blocks wrote checked against each element
/// plus its section's offset. Their `n` is the elements of the sampled
/// sections: the traffic per element of the two launches that move the data
/// (the scans of the sums between them move a thousandth of it).
pub fn measure_any_at_timed_size(ctx: &Ctx) -> Result<(Measured, Measured)> {
    let n = timed_n();
    let (cfg, count) = (section_config(n, BK_THREADS), sections(n));
    let sample =
        BlockSample::at_timed_size(&mut ctx.secret_rng("timed-size blocks"), cfg.grid.0 as u64, TIMED_SAMPLED_BLOCKS);
    let size = format!("n = {n}");
    let values = kit::inputs::IntsIn::new(&ctx.rng_for("timed-size input"), 1, cpu::MAX_VALUE);
    let readme = || sample.linear_elements(SECTION, n);
    let scan = kit::measure::measure_ptx_sampled(&ctx.build.ptx, crate::SCAN_SECTIONS, &sample, |module| {
        let (d_in, d_out) = generated_in_and_out(module.gpu(), &values, n, ("in", "out"))?;
        let sums = module.gpu().poisoned::<i32>("sums (level 0)", count)?;
        module.launch(crate::SCAN_SECTIONS, cfg, &args![&d_in, &d_out, &sums, n as i32])?;
        let written = kit::measure::sampled_writes(&d_out, readme)?;
        let scans = scans_written_in(&values, n, &written);
        let right = kit::check::exact_at("out", n, &written, |i| scans[&(i / SECTION)][i % SECTION]).and_then(|()| {
            let mut sections: Vec<usize> = scans.keys().copied().collect();
            sections.sort_unstable();
            let got = sums.read_elements(sections.iter().copied())?;
            let totals: Vec<(usize, i32)> = sections.iter().copied().zip(got).collect();
            kit::check::exact_at("sums", count, &totals, |s| *scans[&s].last().expect("a section"))
        });
        kit::measure::require_right_result_at_timed_size(right, &size, sample.blocks().len())
    })?;
    // Any offsets: add_sums adds scanned_sums[b - 1] to section b, whatever they are.
    let offsets = cpu::values(&mut ctx.rng_for("timed-size offsets"), count);
    let add = kit::measure::measure_ptx_sampled(&ctx.build.ptx, crate::ADD_SUMS, &sample, |module| {
        let gpu = module.gpu();
        let v = values.clone();
        // Not watched: add_sums writes into `out`, which is its output.
        let d_out =
            gpu.unwatched(|| gpu.upload_generated("out", n, move |first, out: &mut [i32]| v.fill(first, out)))?;
        let scanned = gpu.upload("scanned_sums (level 0)", &offsets)?;
        module.launch(crate::ADD_SUMS, cfg, &args![&d_out, &scanned, n as i32])?;
        let written = kit::measure::sampled_writes(&d_out, readme)?;
        let added = |i: usize| {
            let (mut value, offset) = ([0], if i < SECTION { 0 } else { offsets[i / SECTION - 1] });
            values.fill(i, &mut value);
            value[0].wrapping_add(offset)
        };
        let right = kit::check::exact_at("out", n, &written, added);
        kit::measure::require_right_result_at_timed_size(right, &size, sample.blocks().len())
    })?;
    let elements = sample.linear_elements(SECTION, n).len();
    Ok((Measured { m: scan, n: elements }, Measured { m: add, n: elements }))
}

/// [`on_any_lengths`], then `judge` at the timed size too.
pub fn on_any_lengths_and_timed(ctx: &Ctx, judge: impl Fn(&Measured, &Measured) -> Result<String>) -> Result<String> {
    let line = on_any_lengths(ctx, &judge)?;
    let n = timed_n();
    let note = kit::measure::judge_at_timed_size(
        (&format!("n = {n}"), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, sections(n) as u64),
        &format!("on the measured lengths {line}"),
        || measure_any_at_timed_size(ctx),
        |(scan, add)| judge(scan, add),
    )?;
    Ok(line + &note)
}

/// A timed-size input of `n` elements generated where it is read, and an
/// output poisoned where it is touched, named `input` and `output`.
fn generated_in_and_out(
    gpu: &kit::Gpu,
    values: &kit::inputs::IntsIn,
    n: usize,
    (input, output): (&str, &str),
) -> Result<(kit::DeviceBuffer<i32>, kit::DeviceBuffer<i32>)> {
    let v = values.clone();
    // Not watched: the correctness checks and the timed launches judge writes into the input.
    let (d_in, d_out) = gpu.unwatched(|| {
        let d_in = gpu.upload_generated(input, n, move |first, out: &mut [i32]| v.fill(first, out));
        (d_in, gpu.poisoned_generated::<i32>(output, n))
    });
    Ok((d_in?, d_out?))
}

/// The scans of the sections of `values` (`n` elements) that `written`
/// holds elements of, by section: each element's expected value is its section's.
fn scans_written_in(
    values: &kit::inputs::IntsIn,
    n: usize,
    written: &[(usize, i32)],
) -> std::collections::HashMap<usize, Vec<i32>> {
    let mut scans = std::collections::HashMap::new();
    for &(i, _) in written {
        scans.entry(i / SECTION).or_insert_with(|| {
            let mut section = vec![0; SECTION.min(n - i / SECTION * SECTION)];
            values.fill(i / SECTION * SECTION, &mut section);
            cpu::inclusive_scan(&section)
        });
    }
    scans
}

/// [`on_section_lengths`], then `judge` at the timed size too.
pub fn on_section_lengths_and_timed(
    ctx: &Ctx,
    kernel: &str,
    threads: u32,
    judge: impl Fn(&Measured) -> Result<String>,
) -> Result<String> {
    let line = on_section_lengths(ctx, kernel, threads, &judge)?;
    let n = timed_n();
    let note = kit::measure::judge_at_timed_size(
        (&format!("n = {n}"), TIMED_SAMPLED_BLOCKS.0 + TIMED_SAMPLED_BLOCKS.1, sections(n) as u64),
        &format!("on the measured lengths {line}"),
        || measure_sections_at_timed_size(ctx, kernel, threads),
        judge,
    )?;
    Ok(line + &note)
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
pub fn barriers_per_block(Measured { m, n }: &Measured) -> f64 {
    m.stats.barriers as f64 / sections(*n) as f64
}

/// Additions on data (not indices) per element.
pub fn additions_per_element(Measured { m, n }: &Measured) -> f64 {
    m.data_additions() as f64 / *n as f64
}

/// Sections of the run that counts elements per thread (any-n's diagnosis),
/// and the elements past them: one level of add_sums, a partial last section.
const PER_THREAD_SECTIONS: usize = 8;

/// Elements per thread at or under which a kernel of any-n handles one element
/// per thread (a few more stores than threads: the sums).
const ONE_PER_THREAD: f64 = 1.05;

/// any-n's diagnosis of a wrong result: each kernel's stores (thread-level)
/// per thread the launches give, on a small input on the simulator. A kernel
/// written for one element per thread stores about 1 per thread where a
/// section of 1024 elements has 512 threads: it names the kernel, the figures
/// and what to change. `None` when both store about 2 per thread (or the run fails).
pub fn elements_per_thread(ctx: &Ctx) -> Option<String> {
    let n = PER_THREAD_SECTIONS * SECTION + SECTION / 3;
    let input = cpu::values(&mut ctx.rng_for("elements per thread"), n);
    let sums_levels = sections(sections(n));
    for (kernel, extra_threads) in [(crate::SCAN_SECTIONS, sums_levels), (crate::ADD_SUMS, 0)] {
        let m = ctx
            .measure(kernel, |module| {
                let gpu = module.gpu();
                let (d_in, d_out) = (gpu.upload("in", &input)?, gpu.poisoned::<i32>("out", n)?);
                run_any(module, &Hierarchy::new(gpu, n)?, &d_in, &d_out)
            })
            .ok()?;
        // Level 0 launches sections(n) blocks; scan_sections runs once more on the sums.
        let threads = (sections(n) + extra_threads) * BK_THREADS as usize;
        let stores = m.stats.global_store_bytes / 4;
        let per_thread = stores as f64 / threads as f64;
        if per_thread <= ONE_PER_THREAD {
            return Some(format!(
                "{kernel} wrote {stores} ints with the {threads} threads its launches give ({} blocks of {BK_THREADS} \
                 on {n} elements and the scan of the sums): {per_thread:.2} per thread, where a block has a section \
                 of {SECTION} elements, 2 per thread. Block b is section b: each thread handles elements \
                 b * {SECTION} + threadIdx.x and that + {BK_THREADS} (not blockIdx.x * blockDim.x + threadIdx.x, \
                 which covers only the first half of each section and gives section b's offset to the wrong \
                 elements)",
                sections(n) + extra_threads
            ));
        }
    }
    None
}

/// The memory accesses a lane count reads: everything but parameters, constants and branches.
fn is_access(k: AccessKind) -> bool {
    !matches!(k, AccessKind::Branch | AccessKind::ParamLoad | AccessKind::ConstLoad)
}

/// Active lanes per warp-level memory access (see [`MIN_LANES_PER_ACCESS`]).
pub fn lanes_per_access(m: &Measurement) -> f64 {
    let (lanes, requests) = m.rows(is_access).fold((0, 0), |(l, e), r| (l + r.thread_accesses, e + r.executions));
    if requests == 0 {
        32.0
    } else {
        lanes as f64 / requests as f64
    }
}

/// The access executed most often with few lanes: the serial loop's, where there is one.
fn narrowest_access(m: &Measurement) -> Option<&kit::measure::InstrStats> {
    let lanes = |r: &kit::measure::InstrStats| r.thread_accesses as f64 / r.executions as f64;
    m.rows(is_access).filter(|r| lanes(r) < MIN_LANES_PER_ACCESS).max_by_key(|r| r.executions)
}

/// The timed checks' lesson measured: whole warps do the scan's accesses.
pub fn parallel(m: &Measurement) -> Result<String> {
    let lanes = lanes_per_access(m);
    if lanes < MIN_LANES_PER_ACCESS {
        bail!(
            "{}: {lanes:.1} active lanes per warp-level memory access (the parallel scans: 24 to 32; at least \
             {MIN_LANES_PER_ACCESS}){}: one thread (or a few) walks the data while the rest of the block waits. \
             The result is right, and may be work-efficient, but its steps run one after another: a GPU times it at \
             a fraction of a copy. Let every thread take part in each step: Brent-Kung's two trees (512 threads in \
             the first step of each), a Kogge-Stone, or warp shuffles; in add_sums, every thread adds the offset \
             to its own elements",
            m.kernel,
            worst_at(narrowest_access(m))
        );
    }
    Ok(format!("{}: {lanes:.1} active lanes per warp-level memory access", m.kernel))
}

/// Stand-in for brent-kung's `share-of-copy` where nothing can be timed: the
/// scan parallel (whole warps access memory) and one pass over global memory,
/// at every measured length. Work efficiency is not asked here: the clock
/// does not show it either.
pub fn brent_kung_stand_in(ctx: &Ctx) -> Result<String> {
    on_section_lengths_and_timed(ctx, BRENT_KUNG, BK_THREADS, |m| {
        let pass = one_pass(m)?;
        Ok(format!("{}; {pass}", parallel(&m.m)?))
    })
}

/// Stand-in for any-n's `share-of-copy`: both kernels parallel, and the
/// traffic of the whole sequence within `global-traffic`'s bound, at every
/// measured length.
pub fn any_n_stand_in(ctx: &Ctx) -> Result<String> {
    on_any_lengths_and_timed(ctx, |s, a| {
        let traffic = any_traffic(&s.m, &a.m, s.n)?;
        Ok(format!("{}; {}; {traffic}", parallel(&s.m)?, parallel(&a.m)?))
    })
}

/// `one-barrier-per-step` of kogge-stone.
pub fn barriers(measured: &Measured) -> Result<String> {
    let (m, b) = (&measured.m, barriers_per_block(measured));
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
pub fn one_pass(Measured { m, n }: &Measured) -> Result<String> {
    let (loads, stores) = (loads_per_element(m, *n), stores_per_element(m, *n));
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
pub fn work_efficient(measured: &Measured) -> Result<String> {
    let (m, a) = (&measured.m, additions_per_element(measured));
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

/// `global-traffic` of any-n: both kernels, every level, on the same `n` elements.
pub fn any_traffic(sections_m: &Measurement, add_m: &Measurement, n: usize) -> Result<String> {
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
    unless_unmeasurable(on_section_lengths(ctx, KOGGE_STONE, KS_THREADS, barriers))
}

/// The structure check `one-pass` of kogge-stone.
pub fn kogge_stone_traffic(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(on_section_lengths(ctx, KOGGE_STONE, KS_THREADS, one_pass))
}

/// The structure check `work-efficient`: few additions, and the one pass over global memory.
pub fn brent_kung_work(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(on_section_lengths_and_timed(ctx, BRENT_KUNG, BK_THREADS, |m| {
        let work = work_efficient(m)?;
        Ok(format!("{work}; {}", one_pass(m)?))
    }))
}

/// The structure check `global-traffic` of any-n.
pub fn any_n_traffic(ctx: &Ctx) -> Result<String> {
    unless_unmeasurable(on_any_lengths_and_timed(ctx, |s, a| any_traffic(&s.m, &a.m, s.n)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::trial::{fails, passes, Run};

    const REF: &str = "reference/ex11-scan/kernels";
    const SLOW: &str = "reference/slow/ex11-scan/kernels";
    const MINE: &str = "exercises/ex11-scan/calibration";

    /// The cheat corpus's case: add_sums parallel only up to the old measured band.
    const CHEAT_IN_BAND: &str =
        "grader/tests/cheats/ex11-any-n-parallel-only-in-band/exercises/ex11-scan/kernels/scan_any.cu";

    /// A case of the variants corpus: its file of part `file`.
    fn variant(case: &str, file: &str) -> String {
        kit::trial::variant_file(case, &format!("ex11-scan/kernels/{file}"))
    }

    /// The ends of the strata [`measured_ns`] draws from (whole sections).
    fn section_shapes() -> Vec<usize> {
        let strata = kit::measure::strata(MEASURE_SECTIONS, MEASURED_LENGTHS);
        let mut ends: Vec<usize> = strata.iter().map(|s| *s.start()).collect();
        ends.push(*MEASURE_SECTIONS.end());
        ends.into_iter().map(|s| s * SECTION).collect()
    }

    /// The extremes of what [`measured_any_ns`] can draw, and a length inside.
    fn any_shapes() -> Vec<usize> {
        let (lo, hi) = (*MEASURE_ANY_SECTIONS.start(), *MEASURE_ANY_SECTIONS.end());
        let mid = *kit::measure::strata(MEASURE_ANY_SECTIONS, MEASURED_LENGTHS)[1].end();
        vec![lo * SECTION + 1, mid * SECTION + SECTION - 1, hi * SECTION + SECTION - 1]
    }

    /// `verdict(ctx, n)` for `file` on each of `shapes`; `None` without NVRTC.
    fn on_shapes(
        file: &str,
        shapes: &[usize],
        verdict: impl Fn(&Ctx, usize) -> Result<String>,
    ) -> Option<Vec<Result<String>>> {
        let compiler = kit::trial::compiler()?;
        let options = ptx_build::CompileOptions { line_info: true, ..Default::default() };
        let ptx = kit::trial::ptx_of(&compiler, file, &options);
        let env = kit::RunEnv::new(1, None, Some(compiler), options);
        let build = kit::PartBuild::new(ptx);
        let ctx = Ctx::new("ex11::shapes::structure::test", &env, &build);
        Some(shapes.iter().map(|&n| verdict(&ctx, n)).collect())
    }

    fn all_pass(file: &str, shapes: &[usize], verdict: impl Fn(&Ctx, usize) -> Result<String>) {
        for (n, r) in shapes.iter().zip(on_shapes(file, shapes, verdict).unwrap_or_default()) {
            let note = r.unwrap_or_else(|e| panic!("{file} on {n} elements: {e:#}"));
            eprintln!("pass {file} on {n}: {note}");
        }
    }

    fn all_fail(file: &str, shapes: &[usize], says: &str, verdict: impl Fn(&Ctx, usize) -> Result<String>) {
        for (n, r) in shapes.iter().zip(on_shapes(file, shapes, verdict).unwrap_or_default()) {
            let msg = format!("{:#}", r.err().unwrap_or_else(|| panic!("{file} passes on {n} elements")));
            assert!(msg.contains(says), "{file} on {n}: {msg}");
        }
    }

    /// Three lengths per check, one from each stratum of the whole range,
    /// drawn by the run's secret: two runs of one seed measure other lengths.
    #[test]
    fn the_measured_lengths_are_drawn_by_the_secret_across_the_range() {
        let build = kit::PartBuild::new(String::new());
        let (mut sections, mut any) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for _ in 0..200 {
            let env = kit::RunEnv::new(1, None, None, Default::default());
            let ctx = Ctx::new("ex11::brent-kung::structure::work-efficient", &env, &build);
            let (ns, anys) = (measured_ns(&ctx), measured_any_ns(&ctx));
            assert_eq!((ns.len(), anys.len()), (MEASURED_LENGTHS, MEASURED_LENGTHS));
            let strata = kit::measure::strata(MEASURE_SECTIONS, MEASURED_LENGTHS);
            for (n, stratum) in ns.iter().zip(&strata) {
                assert!(n % SECTION == 0 && stratum.contains(&(n / SECTION)), "{n} in {stratum:?}");
            }
            let strata = kit::measure::strata(MEASURE_ANY_SECTIONS, MEASURED_LENGTHS);
            for (a, stratum) in anys.iter().zip(&strata) {
                assert!(a % SECTION != 0 && stratum.contains(&(a / SECTION)), "{a} in {stratum:?}");
            }
            sections.extend(ns);
            any.extend(anys);
        }
        assert!(sections.len() > 60, "{} lengths", sections.len());
        assert!(any.len() > 500, "{} lengths", any.len());
        // Above the band the README used to name (12 to 20 sections) in every run.
        let strata = kit::measure::strata(MEASURE_ANY_SECTIONS, MEASURED_LENGTHS);
        assert!(*strata[2].start() > 21, "{strata:?}");
    }

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
        for file in [
            format!("{REF}/kogge_stone.cu"),
            variant("ex11-kogge-stone-pointer-swap", "kogge_stone.cu"),
            variant("ex11-kogge-stone-warp-shuffle", "kogge_stone.cu"),
        ] {
            all_pass(&file, &section_shapes(), |ctx, n| {
                let m = measure_sections_on(ctx, KOGGE_STONE, KS_THREADS, n)?;
                Ok(format!("{}; {}", barriers(&m)?, one_pass(&m)?))
            });
        }
        let slow = format!("{SLOW}/kogge_stone.cu");
        if let Some(msg) = fails(&ex, "kogge-stone", "one-barrier-per-step", Run::Check, &slow) {
            assert!(msg.contains("20 barriers per block"), "{msg}");
        }
        passes(&ex, "kogge-stone", "one-pass", Run::Check, &slow);
        all_fail(&slow, &section_shapes(), "20 barriers per block", |ctx, n| {
            barriers(&measure_sections_on(ctx, KOGGE_STONE, KS_THREADS, n)?)
        });
    }

    #[test]
    fn brent_kung_work_is_measured_not_spelled() {
        let ex = crate::exercise();
        let work = |ctx: &Ctx, n| {
            let m = measure_sections_on(ctx, BRENT_KUNG, BK_THREADS, n)?;
            Ok(format!("{}; {}", work_efficient(&m)?, one_pass(&m)?))
        };
        for file in [
            format!("{REF}/brent_kung.cu"),
            format!("{SLOW}/brent_kung.cu"),
            format!("{MINE}/brent_kung_blelloch.cu"),
            format!("{MINE}/brent_kung_coarse2.cu"),
        ] {
            passes(&ex, "brent-kung", "work-efficient", Run::Check, &file);
        }
        // The cheat corpus's case does the lesson's work everywhere but at the timed size, where
        // it also keeps every section's scan in __device__ memory: measured there, two stores
        // per element.
        let derives = "grader/tests/cheats/ex11-brent-kung-derives-from-last-window/exercises/ex11-scan/kernels/\
                       brent_kung.cu";
        if let Some(msg) = fails(&ex, "brent-kung", "work-efficient", Run::Check, derives) {
            assert!(
                msg.contains("(the timed size: 4 of its") && msg.contains("2.00 global stores per element"),
                "{msg}"
            );
        }
        for case in ["ex11-brent-kung-blelloch", "ex11-brent-kung-coarse2", "ex11-brent-kung-few-threads-per-level"] {
            all_pass(&variant(case, "brent_kung.cu"), &section_shapes(), work);
        }
        for file in [
            format!("{REF}/brent_kung.cu"),
            format!("{SLOW}/brent_kung.cu"),
            "grader/tests/cheats/ex11-brent-kung-derives-from-last-window/exercises/ex11-scan/kernels/brent_kung.cu"
                .to_string(),
        ] {
            all_pass(&file, &section_shapes(), work);
        }
        let kogge = format!("{MINE}/brent_kung_is_kogge_stone.cu");
        if let Some(msg) = fails(&ex, "brent-kung", "work-efficient", Run::Check, &kogge) {
            assert!(msg.contains("9.00 additions per element"), "{msg}");
        }
        let kogge = variant("ex11-brent-kung-is-kogge-stone", "brent_kung.cu");
        all_fail(&kogge, &section_shapes(), "9.00 additions per element", work);
    }

    /// The timed checks' stand-ins: the parallel scans of every style keep
    /// their points, a scan walked by one thread loses them.
    #[test]
    fn the_stand_ins_measure_parallelism() {
        let ex = crate::exercise();
        for file in [
            format!("{REF}/brent_kung.cu"),
            format!("{MINE}/brent_kung_blelloch.cu"),
            format!("{MINE}/brent_kung_coarse2.cu"),
            format!("{MINE}/brent_kung_is_kogge_stone.cu"),
            variant("ex11-brent-kung-few-threads-per-level", "brent_kung.cu"),
            variant("ex11-brent-kung-int2-pairs", "brent_kung.cu"),
        ] {
            passes(&ex, "brent-kung", "share-of-copy", Run::StandIn, &file);
        }
        for file in [format!("{SLOW}/brent_kung.cu"), variant("ex11-brent-kung-slow-serial-in-global", "brent_kung.cu")]
        {
            if let Some(msg) = fails(&ex, "brent-kung", "share-of-copy", Run::StandIn, &file) {
                assert!(msg.contains("active lanes per warp-level memory access") && msg.contains(".cu:"), "{msg}");
            }
        }
        for file in [
            format!("{REF}/scan_any.cu"),
            format!("{MINE}/scan_any_coarse2.cu"),
            variant("ex11-any-n-warp-shuffle", "scan_any.cu"),
            variant("ex11-any-n-kogge-stone", "scan_any.cu"),
            variant("ex11-any-n-blelloch-shared-offset", "scan_any.cu"),
            variant("ex11-any-n-cub-like-warp-scans", "scan_any.cu"),
        ] {
            passes(&ex, "any-n", "share-of-copy", Run::StandIn, &file);
        }
        for (file, kernel) in [
            (format!("{SLOW}/scan_any.cu"), "scan_sections: "),
            (variant("ex11-any-n-slow-serial-add-sums", "scan_any.cu"), "add_sums: "),
            // Parallel up to the band the README once named, serial above it: measured above it in every run.
            (CHEAT_IN_BAND.to_string(), "add_sums: "),
        ] {
            if let Some(msg) = fails(&ex, "any-n", "share-of-copy", Run::StandIn, &file) {
                assert!(msg.contains(kernel) && msg.contains("active lanes per warp-level memory access"), "{msg}");
            }
        }
        // The traffic is the stand-in's too.
        fails(&ex, "any-n", "share-of-copy", Run::StandIn, &format!("{MINE}/scan_any_in_global_memory.cu"));
    }

    /// any-n's diagnosis of a wrong result: a kernel written for one element
    /// per thread is named with its stores per thread; correct ones are not.
    #[test]
    fn one_element_per_thread_is_measured() {
        let per_thread = |ctx: &Ctx, _| Ok(elements_per_thread(ctx).unwrap_or_default());
        for (file, says) in [
            (format!("{REF}/scan_any.cu"), ""),
            (variant("ex11-any-n-coarse2", "scan_any.cu"), ""),
            (variant("ex11-any-n-warp-shuffle", "scan_any.cu"), ""),
            (variant("ex11-any-n-add-sums-one-per-thread", "scan_any.cu"), "add_sums wrote"),
            (variant("ex11-any-n-one-element-per-thread", "scan_any.cu"), "scan_sections wrote"),
        ] {
            for r in on_shapes(&file, &[0], per_thread).unwrap_or_default() {
                let msg = r.unwrap();
                assert!(if says.is_empty() { msg.is_empty() } else { msg.contains(says) }, "{file}: {msg}");
            }
        }
    }

    #[test]
    fn any_n_traffic_is_measured() {
        let ex = crate::exercise();
        let traffic = |ctx: &Ctx, n| {
            let (s, a) = measure_any_on(ctx, n)?;
            any_traffic(&s.m, &a.m, n)
        };
        for file in [format!("{REF}/scan_any.cu"), format!("{SLOW}/scan_any.cu"), format!("{MINE}/scan_any_coarse2.cu")]
        {
            passes(&ex, "any-n", "global-traffic", Run::Check, &file);
        }
        for file in [
            format!("{REF}/scan_any.cu"),
            format!("{SLOW}/scan_any.cu"),
            variant("ex11-any-n-coarse2", "scan_any.cu"),
            variant("ex11-any-n-warp-shuffle", "scan_any.cu"),
            variant("ex11-any-n-kogge-stone", "scan_any.cu"),
        ] {
            all_pass(&file, &any_shapes(), traffic);
        }
        let global = format!("{MINE}/scan_any_in_global_memory.cu");
        if let Some(msg) = fails(&ex, "any-n", "global-traffic", Run::Check, &global) {
            assert!(msg.contains("most of it in scan_sections"), "{msg}");
        }
        let global = variant("ex11-any-n-in-global-memory", "scan_any.cu");
        all_fail(&global, &any_shapes(), "most of it in scan_sections", traffic);
        // The cheat corpus's case stores its sections again only at the timed size: measured
        // there (each level-0 launch on 4 sampled sections), 5 ints per element in scan_sections.
        let again = "grader/tests/cheats/ex11-any-n-one-pass-only-on-small-inputs/exercises/ex11-scan/kernels/\
                     scan_any.cu";
        if let Some(msg) = fails(&ex, "any-n", "global-traffic", Run::Check, again) {
            assert!(msg.contains("(the timed size: 4 of its") && msg.contains("scan_sections 5.00"), "{msg}");
        }
    }
}
