//! ex11: parallel prefix sum (Kirk & Hwu, *Programming Massively Parallel
//! Processors*, chapter 11): an inclusive scan of `int`s, in three parts.
//!
//! - `kogge-stone`: one block of 1024 threads scans one section of 1024
//!   elements, double-buffered in shared memory (one barrier per step);
//! - `brent-kung`: the work-efficient section scan, 512 threads, two elements
//!   each: a reduction tree and a distribution tree;
//! - `any-n`: a hierarchical scan of any length: the student's
//!   `scan_sections` and `add_sums`, launched by the grader's host code
//!   ([`Hierarchy`]), which scans the section sums recursively.
//!
//! The lessons are measured on the simulator (src/measured.rs): barriers per
//! step and global traffic per element (kogge-stone), additions per element
//! (brent-kung: the textbook's < 2, against Kogge-Stone's ~9), global traffic
//! per element of the whole sequence (any-n). The two later parts are timed
//! against a copy of the same ints, in the same run; without a GPU their
//! stand-ins count active lanes per memory access (a serial scan has one).
//!
//! Written with `grader new exercise ex11-scan`, then filled in
//! (docs/authoring.md).

pub mod cpu;
pub mod measured;

use anyhow::{bail, Result};
use kit::perf::Timing;
use kit::timed::Fresh;
use kit::{args, Arg, Check, Ctx, DeviceBuffer, Exercise, Gpu, LaunchConfig, Module, Part};

use cpu::Scan;

/// Elements of a section, the unit one block scans in every part.
pub const SECTION: usize = 1024;
/// Threads of a kogge-stone block: one per element of the section.
pub const KS_THREADS: u32 = SECTION as u32;
/// Threads of a brent-kung or any-n block: two elements each.
pub const BK_THREADS: u32 = SECTION as u32 / 2;
/// Correctness sizes of the section parts: one element, less than a warp,
/// exactly one section, one past it, two sections and a partial one, many
/// sections, and one too large for the simulator.
pub const SIZES: [usize; 7] = [1, 31, 1024, 1025, 2055, 100_000, 3_000_017];
/// Correctness sizes of any-n: the same small ones (one level: a single
/// section needs no scan of the sums), then two levels (more than SECTION²
/// = 1 048 576 elements: the sums themselves fill more than one section), one
/// the simulator runs and one it leaves to a GPU.
pub const ANY_SIZES: [usize; 8] = [1, 31, 1024, 1025, 2055, 100_000, 1_049_607, 5_000_011];
/// brent-kung's timed check: the section scan must move the ints it reads and
/// writes at this share of the bandwidth of a copy of the same ints, timed in
/// the same run. The compiled value, chosen by reasoning; calibrated per model
/// (calibration/*.toml: 0.326 on an H100, 0.296 on an H200). It catches a
/// serial section scan; Kogge-Stone is faster than Brent-Kung here, so work
/// efficiency is graded by the measured `work-efficient`. See CALIBRATION.md.
pub const MIN_SHARE_BRENT_KUNG: f64 = 0.3;
/// any-n's timed check: the whole sequence of launches, against a copy of the
/// same ints. The scan moves about 4 ints per element to the copy's 2, so an
/// ideal one reaches about 50%. The compiled value, chosen by reasoning;
/// calibrated per model (calibration/*.toml: 0.257 on an H100, 0.241 on an
/// H200). See CALIBRATION.md.
pub const MIN_SHARE_ANY_N: f64 = 0.2;

pub const KOGGE_STONE: &str = "kogge_stone_scan";
pub const BRENT_KUNG: &str = "brent_kung_scan";
pub const SCAN_SECTIONS: &str = "scan_sections";
pub const ADD_SUMS: &str = "add_sums";
const YARDSTICK: &str = "copy_ints";
/// The grader's check of a timed output (yardsticks/scan_check.cu).
const SCAN_CHECK: &str = "scan_check";
/// Threads per block of the copy yardstick.
const COPY_THREADS: u32 = 256;

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex11",
        slug: "scan",
        title: "Parallel prefix sum: Kogge-Stone, Brent-Kung and any n",
        dir: "exercises/ex11-scan",
        parts: vec![kogge_stone(), brent_kung(), any_n()],
    }
}

fn section_part(name: &'static str, file: &'static str, kernels: &'static [&'static str]) -> Part {
    let (kernel, threads) = (kernels[0], if name == "kogge-stone" { KS_THREADS } else { BK_THREADS });
    let mut part = Part::new(name, file, kernels, 10.0);
    for n in SIZES {
        part = part.check(
            Check::correctness(format!("n={n}"), move |ctx| sections_correct(ctx, kernel, threads, n))
                .heavy_if(n > kit::SIM_MAX_ELEMENTS),
        );
    }
    part
}

fn kogge_stone() -> Part {
    section_part("kogge-stone", "kernels/kogge_stone.cu", &[KOGGE_STONE])
        .check(Check::structure("one-barrier-per-step", measured::kogge_stone_barriers))
        .check(Check::structure("one-pass", measured::kogge_stone_traffic))
}

fn brent_kung() -> Part {
    section_part("brent-kung", "kernels/brent_kung.cu", &[BRENT_KUNG])
        .check(Check::structure("work-efficient", measured::brent_kung_work))
        .check(
            Check::performance("share-of-copy", brent_kung_share)
                // A serial scan is what the clock catches: its accesses are one lane's.
                .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::brent_kung_stand_in(ctx))),
        )
}

fn any_n() -> Part {
    let mut part = Part::new("any-n", "kernels/scan_any.cu", &[SCAN_SECTIONS, ADD_SUMS], 10.0);
    for n in ANY_SIZES {
        part = part.check(
            Check::correctness(format!("n={n}"), move |ctx| any_correct(ctx, n)).heavy_if(n > kit::SIM_MAX_ELEMENTS),
        );
    }
    part.check(Check::structure("global-traffic", measured::any_n_traffic)).check(
        Check::performance("share-of-copy", any_n_share)
            // Traffic and parallelism: what the clock sees of the two kernels.
            .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::any_n_stand_in(ctx))),
    )
}

/// Sections of `n` elements (blocks of the grid).
pub fn sections(n: usize) -> usize {
    n.div_ceil(SECTION)
}

/// One block per section.
pub fn section_config(n: usize, threads: u32) -> LaunchConfig {
    LaunchConfig::linear(u32::try_from(sections(n)).expect("the grid fits in gridDim.x"), threads)
}

fn sections_correct(ctx: &Ctx, kernel: &str, threads: u32, n: usize) -> Result<String> {
    ctx.kernel_ptx(kernel)?; // a missing or misspelled kernel, before anything is computed
                             // The same for every student of a batch: drawn and scanned once per seed.
    let inputs = ctx.shared("in+scans", || {
        let input = cpu::values(&mut ctx.rng(), n);
        let expected = cpu::section_scans(&input);
        (input, expected)
    });
    // Taken after the inputs: a check run ahead of the GPU (grader/src/ahead.rs) stops here.
    let module = ctx.kernel_module(kernel)?;
    let gpu = module.gpu();
    let d_in = gpu.upload("X", &inputs.0)?;
    let d_out = gpu.poisoned::<i32>("Y", n)?;
    module.launch(kernel, section_config(n, threads), &args![&d_in, &d_out, n as i32])?;
    cpu::compare("Y", &inputs.0, &inputs.1, &d_out.read()?, Scan::Sections)?;
    Ok(format!("{} section scan(s) exact, the last of {} element(s)", sections(n), n - (sections(n) - 1) * SECTION))
}

/// The grader's host code of any-n: the buffers of every level of the
/// hierarchy and the launches, in order.
pub struct Hierarchy {
    /// Per level: `sums` (one per section of that level's array) and `scanned_sums`.
    levels: Vec<(DeviceBuffer<i32>, DeviceBuffer<i32>)>,
}

impl Hierarchy {
    /// Buffers for a scan of `n` elements: level 0 scans the input, level
    /// k + 1 the section sums of level k, until one section holds them all.
    pub fn new(gpu: &Gpu, n: usize) -> Result<Self> {
        let mut levels = Vec::new();
        let mut len = n;
        loop {
            let s = sections(len);
            let k = levels.len();
            levels.push((
                gpu.poisoned(&format!("sums (level {k})"), s)?,
                gpu.poisoned(&format!("scanned_sums (level {k})"), s)?,
            ));
            if s <= 1 {
                return Ok(Self { levels });
            }
            len = s;
        }
    }

    /// Levels of `scan_sections` launches: 1 up to SECTION elements, 2 up to SECTION², ...
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// Poisons every level's sums, as the output is, before a launch.
    pub fn poison(&self) -> Result<()> {
        self.levels.iter().try_for_each(|(s, t)| s.poison().and_then(|_| t.poison()))
    }

    /// The sums `scan_sections` wrote at level 0: one per section of the input.
    pub fn section_sums(&self) -> &DeviceBuffer<i32> {
        &self.levels[0].0
    }

    /// Launches the whole scan of `n` elements from `input` into `output`, in
    /// order: `launch(kernel, cfg, args)` is `Module::launch` (each checked)
    /// or `Module::launch_async` (queued, as timed).
    pub fn run(
        &self,
        input: Arg,
        output: Arg,
        n: usize,
        launch: &mut impl FnMut(&str, LaunchConfig, &[Arg]) -> Result<()>,
    ) -> Result<()> {
        self.level(0, input, output, n, launch)
    }

    fn level(
        &self,
        k: usize,
        input: Arg,
        output: Arg,
        n: usize,
        launch: &mut impl FnMut(&str, LaunchConfig, &[Arg]) -> Result<()>,
    ) -> Result<()> {
        let cfg = section_config(n, BK_THREADS);
        let (sums, scanned) = &self.levels[k];
        launch(SCAN_SECTIONS, cfg, &[input, output, sums.arg(), (n as i32).into()])?;
        if sections(n) > 1 {
            self.level(k + 1, sums.arg(), scanned.arg(), sections(n), launch)?;
            launch(ADD_SUMS, cfg, &[output, scanned.arg(), (n as i32).into()])?;
        }
        Ok(())
    }
}

/// Runs the grader's launches of any-n once, each launch checked.
pub fn run_any(
    module: &Module,
    hierarchy: &Hierarchy,
    input: &DeviceBuffer<i32>,
    output: &DeviceBuffer<i32>,
) -> Result<()> {
    hierarchy.run(input.arg(), output.arg(), input.len(), &mut |kernel, cfg, a| module.launch(kernel, cfg, a))
}

fn any_correct(ctx: &Ctx, n: usize) -> Result<String> {
    ctx.kernel_ptx(SCAN_SECTIONS)?; // a missing or misspelled kernel, before anything is computed
    ctx.kernel_ptx(ADD_SUMS)?;
    let inputs = ctx.shared("in+scan", || {
        let input = cpu::values(&mut ctx.rng(), n);
        let expected = cpu::inclusive_scan(&input);
        (input, expected)
    });
    // Taken after the inputs: a check run ahead of the GPU (grader/src/ahead.rs) stops here.
    let module = ctx.kernel_module(SCAN_SECTIONS)?;
    let (input, expected) = (&inputs.0, &inputs.1);
    let gpu = module.gpu();
    let d_in = gpu.upload("in", input)?;
    let d_out = gpu.poisoned::<i32>("out", n)?;
    let hierarchy = Hierarchy::new(gpu, n)?;
    run_any(module, &hierarchy, &d_in, &d_out)?;
    let got = d_out.read()?;
    if let Err(e) = cpu::compare("out", input, expected, &got, Scan::Whole) {
        if got.iter().all(kit::check::is_poison) {
            return Err(e);
        }
        // A kernel that handles one element per thread, where a block has two per thread, first.
        if let Some(why) = measured::elements_per_thread(ctx) {
            // The value's own reading (a wrong offset) would point away from the cause.
            let first = cpu::compare_bare("out", input, expected, &got).unwrap_err();
            return Err(first.context(why));
        }
        // Wrong sums are the usual cause of a wrong offset: say so first.
        if sections(n) == 1 {
            return Err(e);
        }
        let totals: Vec<i32> = input.chunks(SECTION).map(|c| c.iter().fold(0i32, |s, &v| s.wrapping_add(v))).collect();
        let sums = hierarchy.section_sums().read()?;
        if let Some(b) = (0..totals.len()).find(|&b| sums[b] != totals[b]) {
            let got =
                if kit::check::is_poison(&sums[b]) { "nothing (never written)".into() } else { sums[b].to_string() };
            return Err(e.context(format!(
                "`sums[{b}]` after scan_sections: expected the total of section {b}, {}, got {got}. scan_sections \
                 must write each section's total (the last element of its inclusive scan, counting the elements past n \
                 as 0) to sums[blockIdx.x]; the next level scans these sums",
                totals[b]
            )));
        }
        return Err(e);
    }
    Ok(format!("{} section(s), {} level(s) of scan_sections, every element exact", sections(n), hierarchy.depth()))
}

/// Elements of the timed scans: input and output together 8x the L2 cache.
pub fn perf_n(gpu: &Gpu) -> usize {
    kit::exercise::bandwidth_elements(gpu) / 2
}

/// The timed input: fresh values in `1..=MAX_VALUE` for every launch, as the
/// correctness checks draw them, generated on the device from the run's secret key.
fn timed_input(ctx: &Ctx, name: &str, n: usize) -> Result<Fresh<i32>> {
    Fresh::ints(ctx, name, n, 1, cpu::MAX_VALUE)
}

/// The grader's check of a timed scan's whole output (yardsticks/scan_check.cu):
/// each element against its neighbour and its input, on the device, so that
/// 50 M ints are checked without scanning them again or reading them back.
pub struct ScanCheck {
    module: std::sync::Arc<Module>,
    first: DeviceBuffer<u64>,
}

impl ScanCheck {
    pub fn new(ctx: &Ctx) -> Result<Self> {
        let module = ctx.yardstick(SCAN_CHECK, include_str!("../yardsticks/scan_check.cu"))?;
        let first = module.gpu().zeros::<u64>("scan_check.first", 1)?;
        Ok(Self { module, first })
    }

    /// Whether `out` (called `what`) is the scan of `input` (each section on its
    /// own, or the whole array), and `sums`, where given, the total of each
    /// section of `input`. Fails naming the first wrong element (or sum), what
    /// it should be and what it is.
    pub fn check(
        &self,
        what: &str,
        input: &Fresh<i32>,
        out: &DeviceBuffer<i32>,
        sums: Option<&DeviceBuffer<i32>>,
        scan: Scan,
    ) -> Result<()> {
        let n = input.len();
        let restart = if scan == Scan::Sections { SECTION } else { n };
        let (sums_arg, sum_count) = sums.map_or((out.arg(), 0), |s| (s.arg(), s.len()));
        self.first.write(&[u64::MAX])?;
        let cfg = LaunchConfig::linear(u32::try_from(n.div_ceil(256)).expect("the grid fits"), 256);
        let args = [
            input.arg(),
            out.arg(),
            (n as u32).into(),
            (restart as u32).into(),
            sums_arg,
            (sum_count as u32).into(),
            self.first.arg(),
        ];
        self.module.launch(SCAN_CHECK, cfg, &args)?;
        let first = self.first.read()?[0];
        if first == u64::MAX {
            return Ok(());
        }
        let show =
            |v: i32| if kit::check::is_poison(&v) { "nothing (never written)".to_string() } else { v.to_string() };
        let at = |buf: &DeviceBuffer<i32>, i: usize| -> Result<i32> { Ok(buf.read_range(i, 1)?[0]) };
        let i = first as usize;
        if i < n {
            // Every element before i is right: the expected value follows from them.
            let (x, name) = (at(input.buffer(), i)?, input.buffer().name());
            let (section, j) = (i / SECTION, i % SECTION);
            let expected = if i % restart == 0 {
                format!("{x} (a scan starts there: {what}[{i}] = {name}[{i}])")
            } else {
                let before = at(out, i - 1)?;
                format!("{} ({what}[{}] = {before} plus {name}[{i}] = {x})", before.wrapping_add(x), i - 1)
            };
            bail!(
                "{what}[{i}] (n = {n}, section {section}, element {j}): expected {expected}, got {}",
                show(at(out, i)?)
            );
        }
        // Every element is right: the totals follow from them.
        let b = i - n;
        let end = ((b + 1) * SECTION).min(n);
        let before = if b > 0 { at(out, b * SECTION - 1)? } else { 0 };
        let total = at(out, end - 1)?.wrapping_sub(before);
        let got = at(sums.expect("a wrong sum was checked"), b)?;
        bail!(
            "`sums[{b}]` after scan_sections (n = {n}): expected the total of section {b}, {total}, got {}. \
             scan_sections must write each section's total (the last element of its inclusive scan, counting the \
             elements past n as 0) to sums[blockIdx.x]",
            show(got)
        )
    }
}

/// Times the copy yardstick on the same input and output as the student's scan.
fn copy_share(ctx: &Ctx, what: &str, student: &Timed, n: usize, min_share: f64) -> Result<String> {
    let (d_in, d_out) = (&student.input, &student.output);
    // Measured once per run, before the caller allocated anything: this is the cached figure.
    let copy_gbps = ctx.copy_bandwidth_gbps()?;
    let copy = ctx.yardstick(YARDSTICK, include_str!("../yardsticks/copy_ints.cu"))?;
    let cfg = LaunchConfig::linear(n.div_ceil(COPY_THREADS as usize) as u32, COPY_THREADS);
    d_in.fill(0)?;
    let ideal =
        ctx.time_yardstick(&copy, YARDSTICK, cfg, &[d_in.arg(), d_out.arg(), (n as i32).into()], || d_out.poison())?;
    let bytes = 2 * n * 4;
    let line = kit::perf::require_share(
        what,
        student.timing.gb_per_s(bytes),
        "a copy of the same ints",
        ideal.gb_per_s(bytes),
        min_share,
    )?;
    Ok(format!("{line} (the kit's float4 copy: {copy_gbps:.0} GB/s)"))
}

/// How a timed check runs its launches: [`kit::timed::student`] on a GPU
/// ([`timed_student`]); the tests run a few launches on the simulator
/// instead, each prepared and checked as on a GPU.
pub type Timer = fn(
    &Gpu,
    &mut dyn FnMut(usize) -> Result<()>,
    &mut dyn FnMut(usize) -> Result<()>,
    &mut dyn FnMut(usize) -> Result<()>,
) -> Result<Timing>;

/// The kit's one way of timing a student's kernel.
pub fn timed_student(
    gpu: &Gpu,
    prepare: &mut dyn FnMut(usize) -> Result<()>,
    launch: &mut dyn FnMut(usize) -> Result<()>,
    check: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<Timing> {
    kit::timed::student(gpu, prepare, launch, check)
}

/// What a timed check leaves for the yardstick: the student's timing and the buffers it ran on.
pub struct Timed {
    pub timing: Timing,
    pub input: Fresh<i32>,
    pub output: DeviceBuffer<i32>,
    /// Levels of scan_sections (any-n), 1 for a section scan.
    pub depth: usize,
}

/// brent-kung's timed launches on `n` elements: fresh inputs every launch,
/// every launch's whole output checked on the device ([`ScanCheck`]).
pub fn brent_kung_timed(ctx: &Ctx, module: &Module, n: usize, time: Timer) -> Result<Timed> {
    let gpu = module.gpu();
    let d_in = timed_input(ctx, "X", n)?;
    let d_out = gpu.poisoned::<i32>("Y", n)?;
    let checker = ScanCheck::new(ctx)?;
    let cfg = section_config(n, BK_THREADS);
    let timing = time(
        gpu,
        &mut |launch| d_in.fill(launch).and_then(|_| d_out.poison()),
        &mut |_| module.launch_async(BRENT_KUNG, cfg, &[d_in.arg(), d_out.arg(), (n as i32).into()]),
        &mut |launch| {
            d_in.intact(launch)?;
            checker.check("Y", &d_in, &d_out, None, Scan::Sections)
        },
    )?;
    Ok(Timed { timing, input: d_in, output: d_out, depth: 1 })
}

/// any-n's timed launches on `n` elements: one timed launch is the whole
/// sequence (every level's scan_sections and add_sums, queued in order);
/// after it the whole output and the first level's section sums are checked.
pub fn any_n_timed(ctx: &Ctx, module: &Module, n: usize, time: Timer) -> Result<Timed> {
    let gpu = module.gpu();
    let d_in = timed_input(ctx, "in", n)?;
    let d_out = gpu.poisoned::<i32>("out", n)?;
    let hierarchy = Hierarchy::new(gpu, n)?;
    let checker = ScanCheck::new(ctx)?;
    // The first level's sums, which the rest of the sequence builds on.
    let sums = hierarchy.section_sums();
    let timing = time(
        gpu,
        &mut |launch| d_in.fill(launch).and_then(|_| d_out.poison()).and_then(|_| hierarchy.poison()),
        &mut |_| hierarchy.run(d_in.arg(), d_out.arg(), n, &mut |kernel, cfg, a| module.launch_async(kernel, cfg, a)),
        &mut |launch| {
            d_in.intact(launch)?;
            // The sums wrap at this size (50 M x 50 > 2^31): scan_check compares them wrapped.
            checker.check("out", &d_in, &d_out, Some(sums), Scan::Whole)
        },
    )?;
    Ok(Timed { timing, input: d_in, output: d_out, depth: hierarchy.depth() })
}

fn brent_kung_share(ctx: &Ctx) -> Result<String> {
    let module = ctx.kernel_module(BRENT_KUNG)?;
    // Measured once per run; where nothing can be timed this says so (not
    // graded) before anything large is allocated.
    ctx.copy_bandwidth_gbps()?;
    let n = perf_n(module.gpu());
    let t = brent_kung_timed(ctx, module, n, timed_student)?;
    copy_share(ctx, &format!("{BRENT_KUNG} on {n} ints"), &t, n, MIN_SHARE_BRENT_KUNG)
}

fn any_n_share(ctx: &Ctx) -> Result<String> {
    let module = ctx.kernel_module(SCAN_SECTIONS)?;
    ctx.kernel_ptx(ADD_SUMS)?;
    ctx.copy_bandwidth_gbps()?;
    let n = perf_n(module.gpu());
    let t = any_n_timed(ctx, module, n, timed_student)?;
    let what = format!("the hierarchical scan of {n} ints ({} levels of scan_sections)", t.depth);
    copy_share(ctx, &what, &t, n, MIN_SHARE_ANY_N)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_block_per_section() {
        assert_eq!(section_config(1, KS_THREADS).grid, (1, 1, 1));
        assert_eq!(section_config(1024, BK_THREADS).grid, (1, 1, 1));
        assert_eq!(section_config(1025, BK_THREADS).grid, (2, 1, 1));
        assert_eq!(section_config(1025, KS_THREADS).block, (1024, 1, 1));
        assert_eq!(section_config(1025, BK_THREADS).block, (512, 1, 1));
        assert!(SIZES.iter().filter(|&&n| n % SECTION != 0).count() >= 5);
        assert!(SIZES.iter().any(|&n| n < 32) && SIZES.contains(&SECTION) && SIZES.contains(&(SECTION + 1)));
    }

    #[test]
    fn sizes_reach_two_levels_on_the_simulator_and_past_it() {
        let gpu = kit::Gpu::simulator();
        let depth = |n| Hierarchy::new(&gpu, n).unwrap().depth();
        assert_eq!((depth(1), depth(SECTION), depth(SECTION + 1)), (1, 1, 2));
        assert_eq!((depth(SECTION * SECTION), depth(SECTION * SECTION + 1)), (2, 3));
        let two_levels: Vec<_> = ANY_SIZES.iter().filter(|&&n| depth(n) == 3).collect();
        assert!(two_levels.iter().any(|&&n| n <= kit::SIM_MAX_ELEMENTS), "the simulator runs one of them");
        assert!(two_levels.iter().any(|&&n| n > kit::SIM_MAX_ELEMENTS));
        let sim = |s: &[usize]| s.iter().filter(|&&n| n <= kit::SIM_MAX_ELEMENTS).count();
        assert!(sim(&SIZES) == SIZES.len() - 1 && sim(&ANY_SIZES) == ANY_SIZES.len() - 1);
    }

    #[test]
    fn the_hierarchy_launches_in_order() {
        let gpu = kit::Gpu::simulator();
        let n = SECTION * SECTION + 5;
        let h = Hierarchy::new(&gpu, n).unwrap();
        let mut launches = Vec::new();
        h.run(Arg::I32(0), Arg::I32(0), n, &mut |k, cfg, a| {
            launches.push((k.to_string(), cfg.grid.0, a[a.len() - 1]));
            Ok(())
        })
        .unwrap();
        let s1 = (SECTION + 1) as u32;
        let expected = [
            (SCAN_SECTIONS, s1, Arg::I32(n as i32)),
            (SCAN_SECTIONS, 2, Arg::I32(s1 as i32)),
            (SCAN_SECTIONS, 1, Arg::I32(2)),
            (ADD_SUMS, 2, Arg::I32(s1 as i32)),
            (ADD_SUMS, s1, Arg::I32(n as i32)),
        ];
        let got: Vec<_> = launches.iter().map(|(k, g, a)| (k.as_str(), *g, *a)).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn the_timed_scan_outgrows_the_l2_and_fits_an_int() {
        let gpu = kit::Gpu::simulator();
        let n = perf_n(&gpu);
        assert!(2 * n * 4 >= 8 * gpu.info().l2_cache_bytes as usize - 8192);
        // scan_check takes n as an unsigned int and names a wrong sum n + b.
        assert!(n + sections(n) < i32::MAX as usize);
    }

    /// The timed checks' launches on the simulator (which cannot time):
    /// prepared and checked as on a GPU, three of them and the last once more
    /// (the replay canary), a failure naming its launch as the kit does.
    fn launches_with_canary(
        _: &Gpu,
        prepare: &mut dyn FnMut(usize) -> Result<()>,
        launch: &mut dyn FnMut(usize) -> Result<()>,
        check: &mut dyn FnMut(usize) -> Result<()>,
    ) -> Result<Timing> {
        for n in [0, 1, 2, 2] {
            prepare(n)?;
            launch(n)?;
            check(n).map_err(|e| e.context(format!("launch {}", n + 1)))?;
        }
        Ok(Timing::default())
    }

    /// `f` with a simulator context whose student module is `file` compiled
    /// (its text `edit`ed first); `None` without NVRTC.
    fn on_sim<R>(file: &str, edit: impl Fn(String) -> String, f: impl FnOnce(&Ctx, &Module) -> R) -> Option<R> {
        let compiler = kit::trial::compiler()?;
        let options = ptx_build::CompileOptions::default();
        let text = std::fs::read_to_string(kit::trial::workspace_file(file)).unwrap();
        let source = ptx_build::SourceFile::from_text(file, edit(text));
        let ptx = compiler.compile(&source, &options).unwrap().text;
        let env = kit::RunEnv::new(1, Some(Gpu::simulator()), Some(compiler), options);
        let build = kit::PartBuild::new(ptx);
        let ctx = Ctx::new("ex11::test::perf::share-of-copy", &env, &build);
        Some(ctx.run(|ctx| f(ctx, ctx.module().unwrap())))
    }

    fn timed_on_sim(
        file: &str,
        timed: fn(&Ctx, &Module, usize, Timer) -> Result<Timed>,
        n: usize,
    ) -> Option<Result<usize>> {
        on_sim(file, |t| t, |ctx, module| timed(ctx, module, n, launches_with_canary).map(|t| t.depth))
    }

    const VARIANTS: &str = "grader/tests/variants";

    #[test]
    fn the_timed_launches_check_every_output() {
        let n = 5 * SECTION + 17;
        if let Some(r) = timed_on_sim("reference/ex11-scan/kernels/brent_kung.cu", brent_kung_timed, n) {
            assert_eq!(r.unwrap(), 1);
        }
        let wrong = format!("{VARIANTS}/ex11-brent-kung-upsweep-off-by-one/exercises/ex11-scan/kernels/brent_kung.cu");
        if let Some(r) = timed_on_sim(&wrong, brent_kung_timed, n) {
            let e = format!("{:#}", r.expect_err("the off-by-one fails"));
            let at = format!("Y[{s}] (n = {n}, section 0, element {s}): expected", s = SECTION - 1);
            assert!(e.starts_with("launch 1: ") && e.contains(&at), "{e}");
        }
        // Two levels: 69 sections, their sums scanned in one more.
        if let Some(r) = timed_on_sim("reference/ex11-scan/kernels/scan_any.cu", any_n_timed, 70_001) {
            assert_eq!(r.unwrap(), 2);
        }
        let wrong = format!("{VARIANTS}/ex11-any-n-add-sums-off-by-one/exercises/ex11-scan/kernels/scan_any.cu");
        if let Some(r) = timed_on_sim(&wrong, any_n_timed, 70_001) {
            let e = format!("{:#}", r.expect_err("the wrong offset fails"));
            assert!(e.contains("out[0] (n = 70001, section 0, element 0): expected"), "{e}");
        }
    }

    /// The check of a timed launch: the reference's output of each launch
    /// passes, the same output against the next launch's inputs fails, as do
    /// a wrong section sum, a section scan where the whole array's was asked
    /// for, and a write into the input.
    #[test]
    fn a_timed_output_is_checked_against_its_own_launchs_inputs() {
        let n = 3 * SECTION + 5;
        on_sim(
            "reference/ex11-scan/kernels/scan_any.cu",
            |t| t,
            |ctx, module| {
                let d_in = timed_input(ctx, "in", n).unwrap();
                let d_out = module.gpu().poisoned::<i32>("out", n).unwrap();
                let hierarchy = Hierarchy::new(module.gpu(), n).unwrap();
                let sums = hierarchy.section_sums();
                let checker = ScanCheck::new(ctx).unwrap();
                let check = |scan| checker.check("out", &d_in, &d_out, Some(sums), scan);
                for launch in [0, 1, 4] {
                    d_in.fill(launch).unwrap();
                    d_out.poison().unwrap();
                    hierarchy.poison().unwrap();
                    run_any(module, &hierarchy, d_in.buffer(), &d_out).unwrap();
                    d_in.intact(launch).unwrap();
                    check(Scan::Whole).unwrap();
                    // The CPU agrees with what passed.
                    assert_eq!(d_out.read().unwrap(), cpu::inclusive_scan(&d_in.host_values(launch, 0, n)));
                    let e = check(Scan::Sections).unwrap_err().to_string();
                    assert!(e.starts_with(&format!("out[{SECTION}] (n = {n}, section 1, element 0): expected")), "{e}");
                    assert!(e.contains("a scan starts there"), "{e}");
                    d_in.fill(launch + 1).unwrap();
                    let e = check(Scan::Whole).unwrap_err().to_string();
                    assert!(e.contains(&format!("(n = {n}, section ")) && e.contains(": expected"), "{e}");
                }
                d_in.fill(4).unwrap();
                run_any(module, &hierarchy, d_in.buffer(), &d_out).unwrap();
                check(Scan::Whole).unwrap();
                let total = sums.read_range(2, 1).unwrap()[0];
                sums.write_at(2, &[total + 1]).unwrap();
                let e = check(Scan::Whole).unwrap_err().to_string();
                assert!(
                    e.contains(&format!(
                        "`sums[2]` after scan_sections (n = {n}): expected the total of section 2, {total}, got {}",
                        total + 1
                    )),
                    "{e}"
                );
                d_in.overwrite_one(4, 7).unwrap();
                let e = d_in.intact(4).unwrap_err();
                let modified = e.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
                assert_eq!((modified.buffer.as_str(), modified.index), ("in", 7));
            },
        );
    }

    /// The cheat case ex11-brent-kung-derives-from-last-window, at a size the
    /// simulator runs: right on every launch of the old timing (windows 64
    /// ints apart over one buffer, the last launch repeated), wrong from the
    /// second launch of fresh inputs on.
    #[test]
    fn a_scan_derived_from_the_last_window_is_wrong_when_timed() {
        let file =
            "grader/tests/cheats/ex11-brent-kung-derives-from-last-window/exercises/ex11-scan/kernels/brent_kung.cu";
        let small = |t: String| {
            assert!(t.contains("#define TIMED_MIN (4 << 20)") && t.contains("#define KEPT_MAX (1 << 26)"));
            t.replace("#define TIMED_MIN (4 << 20)", "#define TIMED_MIN 4096")
                .replace("#define KEPT_MAX (1 << 26)", "#define KEPT_MAX (1 << 16)")
        };
        let n = 5 * SECTION + 300;
        on_sim(file, small, |ctx, module| {
            let gpu = module.gpu();
            let mut rng = kit::inputs::rng_for(3, "old windows");
            // The old scheme: one buffer, launch k reading from element 64 k on (256 bytes further).
            const STEP: usize = 64;
            let data = cpu::values(&mut rng, n + 4 * STEP);
            let old = gpu.upload("X", &data).unwrap();
            let d_out = gpu.poisoned::<i32>("Y", n).unwrap();
            for launch in [0, 1, 2, 3, 3] {
                d_out.poison().unwrap();
                let window_arg = kit::Arg::Ptr(old.ptr() + (launch * STEP * 4) as u64);
                module
                    .launch(BRENT_KUNG, section_config(n, BK_THREADS), &[window_arg, d_out.arg(), (n as i32).into()])
                    .unwrap();
                let window = &data[launch * STEP..launch * STEP + n];
                let expected = cpu::section_scans(window);
                cpu::compare("Y", window, &expected, &d_out.read().unwrap(), Scan::Sections).unwrap();
            }
            // A module of its own, as in a grading: nothing kept at this size yet.
            let fresh = gpu.load(&ctx.build.ptx).unwrap();
            let e = format!("{:#}", brent_kung_timed(ctx, &fresh, n, launches_with_canary).err().expect("caught"));
            assert!(e.starts_with("launch 2: Y[") && e.contains(": expected"), "{e}");
        });
        // As committed (its __device__ memory sized for the timed n), it passes every correctness size here.
        on_sim(
            file,
            |t| t,
            |ctx, _| {
                for n in SIZES.into_iter().filter(|&n| n <= kit::SIM_MAX_ELEMENTS) {
                    // A check of its own per size, as the grader's (their inputs are shared by name).
                    let name = format!("ex11::brent-kung::correct::n={n}");
                    let check = Ctx::new(&name, ctx.env, ctx.build);
                    sections_correct(&check, BRENT_KUNG, BK_THREADS, n).unwrap();
                }
            },
        );
    }

    #[test]
    fn three_parts_with_their_checks() {
        let ex = exercise();
        assert_eq!((ex.id, ex.slug, ex.dir), ("ex11", "scan", "exercises/ex11-scan"));
        let names = |p: usize| ex.parts[p].checks.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        for (p, name) in [
            (0, "one-barrier-per-step"),
            (0, "one-pass"),
            (1, "work-efficient"),
            (1, "share-of-copy"),
            (2, "global-traffic"),
            (2, "share-of-copy"),
            (2, "n=1049607"),
        ] {
            assert!(names(p).iter().any(|n| n == name), "{name}: {:?}", names(p));
        }
        assert_eq!(ex.parts[2].kernels, &[SCAN_SECTIONS, ADD_SUMS]);
    }
}
