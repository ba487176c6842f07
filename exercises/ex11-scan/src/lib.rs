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
//! against a copy of the same ints, in the same run.
//!
//! Written with `grader new exercise ex11-scan`, then filled in
//! (docs/authoring.md).

pub mod cpu;
pub mod measured;

use anyhow::Result;
use kit::perf::Timing;
use kit::timed::Windowed;
use kit::{args, Arg, Check, Ctx, DeviceBuffer, Exercise, Gpu, LaunchConfig, Module, Part};
use rand::Rng;

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
/// Elements checked after every timed launch, besides the first and last of
/// the first two sections and the last element.
const PERF_SPOTS: usize = 256;

pub const KOGGE_STONE: &str = "kogge_stone_scan";
pub const BRENT_KUNG: &str = "brent_kung_scan";
pub const SCAN_SECTIONS: &str = "scan_sections";
pub const ADD_SUMS: &str = "add_sums";
const YARDSTICK: &str = "copy_ints";
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
    // No measured stand-in for the timing: what makes a section scan slow
    // (a serial loop, barriers, latency) is not in its memory profile, and the
    // structure check already judges the work.
    section_part("brent-kung", "kernels/brent_kung.cu", &[BRENT_KUNG])
        .check(Check::structure("work-efficient", measured::brent_kung_work))
        .check(Check::performance("share-of-copy", brent_kung_share))
}

fn any_n() -> Part {
    let mut part = Part::new("any-n", "kernels/scan_any.cu", &[SCAN_SECTIONS, ADD_SUMS], 10.0);
    for n in ANY_SIZES {
        part = part.check(
            Check::correctness(format!("n={n}"), move |ctx| any_correct(ctx, n)).heavy_if(n > kit::SIM_MAX_ELEMENTS),
        );
    }
    // No stand-in either: the traffic check is the measured half of the lesson.
    part.check(Check::structure("global-traffic", measured::any_n_traffic))
        .check(Check::performance("share-of-copy", any_n_share))
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
    let module = ctx.kernel_module(kernel)?;
    // The same for every student of a batch: drawn and scanned once per seed.
    let inputs = ctx.shared("in+scans", || {
        let input = cpu::values(&mut ctx.rng(), n);
        let expected = cpu::section_scans(&input);
        (input, expected)
    });
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
    let module = ctx.kernel_module(SCAN_SECTIONS)?;
    ctx.kernel_ptx(ADD_SUMS)?;
    let inputs = ctx.shared("in+scan", || {
        let input = cpu::values(&mut ctx.rng(), n);
        let expected = cpu::inclusive_scan(&input);
        (input, expected)
    });
    let (input, expected) = (&inputs.0, &inputs.1);
    let gpu = module.gpu();
    let d_in = gpu.upload("in", input)?;
    let d_out = gpu.poisoned::<i32>("out", n)?;
    let hierarchy = Hierarchy::new(gpu, n)?;
    run_any(module, &hierarchy, &d_in, &d_out)?;
    let got = d_out.read()?;
    if let Err(e) = cpu::compare("out", input, expected, &got, Scan::Whole) {
        // Wrong sums are the usual cause of a wrong offset: say so first.
        if sections(n) == 1 || got.iter().all(kit::check::is_poison) {
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

/// The timed input: a random block repeated on the device (drawing 50 M values
/// would take longer than the timing), with its exact prefix sums.
fn perf_block(ctx: &Ctx) -> std::sync::Arc<(Vec<i32>, Vec<i128>)> {
    ctx.shared("perf-block+prefix", || {
        let block = cpu::values(&mut ctx.rng(), 65_521);
        let prefix = kit::timed::prefix_sums(block.iter().map(|&v| v as i128));
        (block, prefix)
    })
}

/// Indices checked after timed launch `launch`: both ends of the first two
/// sections, the last element, and seeded ones.
fn spots(ctx: &Ctx, launch: usize, n: usize) -> Vec<usize> {
    let mut rng = ctx.rng_for(&format!("launch {launch}"));
    [0, SECTION - 1, SECTION, 2 * SECTION - 1, n - 1]
        .into_iter()
        .chain((0..PERF_SPOTS).map(|_| rng.random_range(0..n)))
        .collect()
}

/// Checks the spots of a timed launch's output: `expected(i)` from the window's prefix sums.
fn check_spots(
    what: &str,
    out: &DeviceBuffer<i32>,
    at: &[usize],
    n: usize,
    expected: impl Fn(usize) -> i32,
) -> Result<()> {
    for (&i, got) in at.iter().zip(out.read_elements(at.iter().copied())?) {
        let e = expected(i);
        if got != e {
            let got = if kit::check::is_poison(&got) { "nothing (never written)".into() } else { got.to_string() };
            anyhow::bail!("{what}[{i}] (n = {n}, section {}): expected {e}, got {got}", i / SECTION);
        }
    }
    Ok(())
}

/// Times the copy yardstick on the same input and output as the student's scan.
fn copy_share(ctx: &Ctx, what: &str, student: &Timed, n: usize, min_share: f64) -> Result<String> {
    let (d_in, d_out) = (&student.input, &student.output);
    // Measured once per run, before the caller allocated anything: this is the cached figure.
    let copy_gbps = ctx.copy_bandwidth_gbps()?;
    let copy = ctx.yardstick(YARDSTICK, include_str!("../yardsticks/copy_ints.cu"))?;
    let cfg = LaunchConfig::linear(n.div_ceil(COPY_THREADS as usize) as u32, COPY_THREADS);
    let ideal =
        ctx.time_yardstick(&copy, YARDSTICK, cfg, &[d_in.arg(0), d_out.arg(), (n as i32).into()], || d_out.poison())?;
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
    pub input: Windowed<i32>,
    pub output: DeviceBuffer<i32>,
    /// Levels of scan_sections (any-n), 1 for a section scan.
    pub depth: usize,
}

/// brent-kung's timed launches on `n` elements, every launch's output checked at [`spots`].
pub fn brent_kung_timed(ctx: &Ctx, module: &Module, n: usize, time: Timer) -> Result<Timed> {
    let gpu = module.gpu();
    let block = perf_block(ctx);
    let (values, prefix) = (&block.0, &block.1);
    let d_in = Windowed::repeated(gpu, "X", values, n)?;
    let d_out = gpu.poisoned::<i32>("Y", n)?;
    let cfg = section_config(n, BK_THREADS);
    let timing = time(
        gpu,
        &mut |_| d_out.poison(),
        &mut |launch| module.launch_async(BRENT_KUNG, cfg, &[d_in.arg(launch), d_out.arg(), (n as i32).into()]),
        &mut |launch| {
            let start = d_in.at(launch, 0);
            check_spots("Y", &d_out, &spots(ctx, launch, n), n, |i| {
                let first = i / SECTION * SECTION;
                kit::timed::periodic_window_sum(prefix, start + first, i - first + 1) as i32
            })
        },
    )?;
    Ok(Timed { timing, input: d_in, output: d_out, depth: 1 })
}

/// any-n's timed launches on `n` elements: one timed launch is the whole
/// sequence (every level's scan_sections and add_sums, queued in order).
pub fn any_n_timed(ctx: &Ctx, module: &Module, n: usize, time: Timer) -> Result<Timed> {
    let gpu = module.gpu();
    let block = perf_block(ctx);
    let (values, prefix) = (&block.0, &block.1);
    let d_in = Windowed::repeated(gpu, "in", values, n)?;
    let d_out = gpu.poisoned::<i32>("out", n)?;
    let hierarchy = Hierarchy::new(gpu, n)?;
    let timing = time(
        gpu,
        &mut |_| d_out.poison().and_then(|_| hierarchy.poison()),
        &mut |launch| {
            hierarchy.run(d_in.arg(launch), d_out.arg(), n, &mut |kernel, cfg, a| module.launch_async(kernel, cfg, a))
        },
        &mut |launch| {
            let start = d_in.at(launch, 0);
            // Exact sums, wrapped to an int as the GPU's are (50 M x 50 > 2^31).
            check_spots("out", &d_out, &spots(ctx, launch, n), n, |i| {
                kit::timed::periodic_window_sum(prefix, start, i + 1) as i32
            })
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
        assert!(n + kit::timed::window_room::<i32>() < i32::MAX as usize);
    }

    /// The timed checks' launches on the simulator (which cannot time):
    /// prepared and checked as on a GPU, three of them.
    fn three_launches(
        _: &Gpu,
        prepare: &mut dyn FnMut(usize) -> Result<()>,
        launch: &mut dyn FnMut(usize) -> Result<()>,
        check: &mut dyn FnMut(usize) -> Result<()>,
    ) -> Result<Timing> {
        for n in 0..3 {
            prepare(n)?;
            launch(n)?;
            check(n)?;
        }
        Ok(Timing::default())
    }

    fn timed_on_sim(
        file: &str,
        timed: fn(&Ctx, &Module, usize, Timer) -> Result<Timed>,
        n: usize,
    ) -> Option<Result<Timed>> {
        let compiler = kit::trial::compiler()?;
        let options = ptx_build::CompileOptions::default();
        let source = ptx_build::SourceFile::read(&kit::trial::workspace_file(file), file).unwrap();
        let ptx = compiler.compile(&source, &options).unwrap().text;
        let env = kit::RunEnv::new(1, Some(Gpu::simulator()), Some(compiler), options);
        let build = kit::PartBuild::new(ptx);
        let ctx = Ctx::new("ex11::test::perf::share-of-copy", &env, &build);
        let module = ctx.module().unwrap();
        Some(timed(&ctx, module, n, three_launches))
    }

    #[test]
    fn the_timed_launches_check_every_output() {
        const VARIANTS: &str = "grader/tests/variants";
        let n = 5 * SECTION + 17;
        if let Some(r) = timed_on_sim("reference/ex11-scan/kernels/brent_kung.cu", brent_kung_timed, n) {
            r.unwrap();
        }
        let wrong = format!("{VARIANTS}/ex11-brent-kung-upsweep-off-by-one/exercises/ex11-scan/kernels/brent_kung.cu");
        if let Some(r) = timed_on_sim(&wrong, brent_kung_timed, n) {
            let e = format!("{:#}", r.err().expect("the off-by-one fails"));
            assert!(e.contains(&format!("Y[{}] (n = {n}, section 0): expected", SECTION - 1)), "{e}");
        }
        // Two levels: 69 sections, their sums scanned in one more.
        if let Some(r) = timed_on_sim("reference/ex11-scan/kernels/scan_any.cu", any_n_timed, 70_001) {
            assert_eq!(r.unwrap().depth, 2);
        }
        let wrong = format!("{VARIANTS}/ex11-any-n-add-sums-off-by-one/exercises/ex11-scan/kernels/scan_any.cu");
        if let Some(r) = timed_on_sim(&wrong, any_n_timed, 70_001) {
            let e = format!("{:#}", r.err().expect("the wrong offset fails"));
            assert!(e.contains("out[0] (n = 70001, section 0): expected"), "{e}");
        }
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
