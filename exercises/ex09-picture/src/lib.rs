//! ex09: the notes' `PictureKernel` (seed 001, "Mapping Threads to
//! Multidimensional Data"): each thread of a 2D grid of 16 x 16 blocks scales
//! one pixel of an n x m image, `d_Pout[Row * n + Col] = 2 * d_Pin[Row * n + Col]`.
//!
//! The checks prove the 2D mapping: sizes that are not multiples of 16 in
//! either dimension (the guard `Row < m && Col < n`), images wider than tall
//! and taller than wide (rows and columns swapped, or the row pitch taken from
//! the wrong side, fail), poisoned outputs. The memory lesson: a mapping that
//! takes the column from `threadIdx.y` is just as correct, but each warp then
//! touches 16 rows instead of 2; the measured check (src/measured.rs) counts
//! sectors per request on the simulator and says so, and the timed check
//! compares the kernel with a 1D scaling kernel timed in the same run.
//!
//! Written with `grader new exercise ex09-picture`, then filled in
//! (docs/authoring.md).

pub mod cpu;
pub mod measured;

use anyhow::Result;
use kit::timed::{same_as_expected, Fresh};
use kit::{args, Arg, Check, Ctx, DeviceBuffer, Exercise, LaunchConfig, Part};

/// Side of the square block, the notes' `dim3 dimBlock(16, 16, 1)`.
pub const BLOCK: u32 = 16;
/// Correctness cases as (n, m): `n` columns (the width, x), `m` rows (the
/// height, y). One pixel; the notes' 76 x 62 image and its transpose; thin
/// images in both directions; sizes that are not multiples of 16 in either
/// dimension; one too large for the simulator.
pub const SIZES: [(usize, usize); 8] =
    [(1, 1), (76, 62), (62, 76), (17, 300), (300, 17), (1000, 999), (1283, 719), (4099, 2053)];
/// The timed check: the kernel must move data at this share of the bandwidth
/// of a 1D kernel that scales the same pixels (yardsticks/scale_linear.cu),
/// timed in the same run. Calibrated on the H100: see CALIBRATION.md.
pub const MIN_SHARE_OF_LINEAR: f64 = 0.78;
/// Width of the timed image (its height fills 8x the L2 cache).
pub const PERF_WIDTH: usize = 8192;
pub const KERNEL: &str = "PictureKernel";
const YARDSTICK: &str = "scale_linear";
/// Threads per block of the 1D yardstick.
const LINEAR_THREADS: u32 = 256;

pub fn exercise() -> Exercise {
    let mut part = Part::new("picture", "kernels/picture.cu", &[KERNEL], 10.0);
    for (n, m) in SIZES {
        part = part.check(
            Check::correctness(format!("{n}x{m}"), move |ctx| correct(ctx, n, m))
                .heavy_if(n * m > kit::SIM_MAX_ELEMENTS),
        );
    }
    part = part.check(Check::structure("coalesced", measured::coalesced_check)).check(
        Check::performance("share-of-linear", share_of_linear)
            // The 1D kernel's advantage is its 4-sector requests: coalescing is the lesson.
            .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::coalesced_stand_in(ctx))),
    );
    Exercise {
        id: "ex09",
        slug: "picture",
        title: "A picture scaled by a 2D grid of 16 x 16 blocks",
        dir: "exercises/ex09-picture",
        parts: vec![part],
    }
}

/// The notes' launch: `dim3 dimGrid(ceil(n/16.0), ceil(m/16.0), 1); dim3 dimBlock(16, 16, 1);`.
pub fn launch_config(n: usize, m: usize) -> LaunchConfig {
    let blocks = |pixels: usize| (pixels as u32).div_ceil(BLOCK);
    LaunchConfig::grid2d((blocks(n), blocks(m)), (BLOCK, BLOCK))
}

fn correct(ctx: &Ctx, n: usize, m: usize) -> Result<String> {
    ctx.kernel_ptx(KERNEL)?; // a missing or misspelled kernel, before anything is computed
                             // The same for every student of a batch: drawn and computed once per seed.
    let inputs = ctx.shared("in+out", || {
        let image = cpu::correctness_image(&mut ctx.rng(), n * m);
        let expected = cpu::scaled(&image);
        (image, expected)
    });
    // Taken after the inputs: a check run ahead of the GPU (grader/src/ahead.rs) stops here.
    let module = ctx.kernel_module(KERNEL)?;
    let gpu = module.gpu();
    // With their rows (n columns, m rows): an index out of bounds is named by row and column.
    let d_in = gpu.upload("d_Pin", &inputs.0)?.with_2d_shape(n, m)?;
    let d_out = gpu.poisoned::<f32>("d_Pout", n * m)?.with_2d_shape(n, m)?;
    let cfg = launch_config(n, m);
    module.launch(KERNEL, cfg, &args![&d_in, &d_out, n as i32, m as i32])?;
    cpu::compare(&inputs.0, &inputs.1, &d_out.read()?, n, m)?;
    Ok(format!("{} x {} blocks of 16 x 16", cfg.grid.0, cfg.grid.1))
}

/// Rows of the timed image: with `PERF_WIDTH` columns, input and output
/// together 8x the L2 cache, so that DRAM, not the cache, is measured.
pub fn perf_rows(gpu: &kit::Gpu) -> usize {
    kit::exercise::image_rows(gpu, PERF_WIDTH)
}

/// [`perf_rows`] of a GPU whose bandwidth size (kit::exercise::bandwidth_elements) is `elements`.
pub fn rows_of(elements: usize) -> usize {
    kit::exercise::image_rows_of(elements, PERF_WIDTH)
}

fn share_of_linear(ctx: &Ctx) -> Result<String> {
    let module = ctx.kernel_module(KERNEL)?;
    // Measured once per run; where nothing can be timed this says so (not
    // graded) before anything large is allocated.
    let copy_gbps = ctx.copy_bandwidth_gbps()?;
    let gpu = module.gpu();
    let linear = ctx.yardstick(YARDSTICK, include_str!("../yardsticks/scale_linear.cu"))?;
    let (n, m) = (PERF_WIDTH, perf_rows(gpu));
    let pixels = n * m;
    let t = TimedPicture::new(ctx, n, m)?;
    let student = kit::timed::student(
        gpu,
        |launch| t.prepare(launch),
        |_| module.launch_async(KERNEL, launch_config(n, m), &t.args()),
        |launch| t.check(launch),
    )?;
    t.d_in.fill(0)?;
    let ideal =
        ctx.time_yardstick(&linear, YARDSTICK, linear_config(pixels), &t.linear_args(&t.d_out), || t.d_out.poison())?;
    let bytes = 2 * pixels * 4;
    let line = kit::perf::require_share(
        &format!("{KERNEL} on a {n} x {m} image"),
        student.gb_per_s(bytes),
        "a 1D kernel scaling the same pixels",
        ideal.gb_per_s(bytes),
        MIN_SHARE_OF_LINEAR,
    )?;
    Ok(format!("{line} (the kit's float4 copy: {copy_gbps:.0} GB/s)"))
}

/// The 1D yardstick's launch: blocks of LINEAR_THREADS, one pixel per thread.
fn linear_config(pixels: usize) -> LaunchConfig {
    LaunchConfig::linear(pixels.div_ceil(LINEAR_THREADS as usize) as u32, LINEAR_THREADS)
}

/// A timed image: `d_Pin` (n columns, m rows) drawn afresh for every launch
/// on the device under the run's secret key (kit::timed::Fresh), in [0, 256)
/// as the README says, and the whole of `d_Pout` compared, on the device,
/// with what the grader's 1D kernel makes of the same pixels (2 x a float is
/// exact: every correct kernel writes the same bits).
pub struct TimedPicture {
    n: usize,
    m: usize,
    pub d_in: Fresh<f32>,
    /// Poisoned before every launch.
    pub d_out: DeviceBuffer<f32>,
    expected: DeviceBuffer<f32>,
    linear: std::sync::Arc<kit::Module>,
}

impl TimedPicture {
    pub fn new(ctx: &Ctx, n: usize, m: usize) -> Result<Self> {
        let gpu = ctx.gpu()?;
        Ok(Self {
            n,
            m,
            d_in: Fresh::uniform(ctx, "d_Pin", n * m, 0.0, 256.0)?,
            d_out: gpu.poisoned("d_Pout", n * m)?,
            expected: gpu.poisoned("d_Pout (the grader's 1D kernel)", n * m)?,
            linear: ctx.yardstick(YARDSTICK, include_str!("../yardsticks/scale_linear.cu"))?,
        })
    }

    /// `(d_Pin, d_Pout, n, m)`: the student's kernel's arguments.
    pub fn args(&self) -> [Arg; 4] {
        [self.d_in.arg(), self.d_out.arg(), (self.n as i32).into(), (self.m as i32).into()]
    }

    /// `(d_Pin, out, pixels)`: the 1D yardstick's, writing into `out`.
    fn linear_args(&self, out: &DeviceBuffer<f32>) -> [Arg; 3] {
        [self.d_in.arg(), out.arg(), ((self.n * self.m) as i32).into()]
    }

    /// Launch `launch`'s image, and `d_Pout` poisoned.
    pub fn prepare(&self, launch: usize) -> Result<()> {
        self.d_in.fill(launch)?;
        self.d_out.poison()
    }

    /// `d_Pin` as launch `launch` got it, and every pixel of `d_Pout` twice it.
    pub fn check(&self, launch: usize) -> Result<()> {
        self.d_in.intact(launch)?;
        self.expected.poison()?;
        let cfg = linear_config(self.n * self.m);
        self.linear.launch(YARDSTICK, cfg, &self.linear_args(&self.expected))?;
        let n = self.n;
        same_as_expected("d_Pout", &self.expected, &self.d_out, |i| format!(" (row {}, column {})", i / n, i % n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notes_launch_covers_every_pixel_with_whole_blocks() {
        // Figure 4.5 of the notes: 76 x 62 pixels, 5 x 4 blocks of 16 x 16.
        let cfg = launch_config(76, 62);
        assert_eq!((cfg.grid, cfg.block), ((5, 4, 1), (16, 16, 1)));
        assert_eq!(launch_config(1, 1).grid, (1, 1, 1));
        assert_eq!(launch_config(16, 17).grid, (1, 2, 1));
        for (n, m) in SIZES {
            let cfg = launch_config(n, m);
            let (gx, gy) = (cfg.grid.0 as usize, cfg.grid.1 as usize);
            assert!(gx * 16 >= n && (gx - 1) * 16 < n && gy * 16 >= m && (gy - 1) * 16 < m, "{n}x{m}");
        }
    }

    #[test]
    fn sizes_catch_a_swapped_mapping() {
        assert!(SIZES.iter().all(|&(n, m)| n == 1 || n != m), "n != m, so swapped rows and columns fail");
        assert!(SIZES.iter().any(|&(n, m)| n > m) && SIZES.iter().any(|&(n, m)| n < m));
        assert!(SIZES.iter().filter(|&&(n, m)| n % 16 != 0 && m % 16 != 0).count() >= 6);
        assert!(SIZES.contains(&(76, 62)), "the notes' example");
        let sim: Vec<_> = SIZES.iter().filter(|&&(n, m)| n * m <= kit::SIM_MAX_ELEMENTS).collect();
        assert!(sim.len() >= 7 && sim.len() < SIZES.len(), "the simulator runs all but the largest");
    }

    #[test]
    fn the_timed_image_fits_an_int() {
        assert!(perf_rows(&kit::Gpu::simulator()) * PERF_WIDTH < i32::MAX as usize);
    }

    /// The timing needs a GPU; its launches and their checks run here: the
    /// reference and the 1D yardstick pass on several launches; another
    /// launch's output, one pixel wrong or never written, and a write into
    /// `d_Pin` are each caught, the pixel named.
    #[test]
    fn timed_launches_are_checked_in_full() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let (n, m) = (83, 37);
        let path = "reference/ex09-picture/kernels/picture.cu";
        let ptx = kit::trial::ptx_of(&compiler, path, &Default::default());
        let env = kit::RunEnv::new(1, Some(kit::Gpu::simulator()), Some(compiler.clone()), Default::default());
        let build = kit::PartBuild::new(ptx);
        let ctx = Ctx::new("ex09::picture::perf::share-of-linear", &env, &build);
        ctx.run(|ctx| {
            let module = ctx.kernel_module(KERNEL).unwrap();
            let t = TimedPicture::new(ctx, n, m).unwrap();
            let linear = ctx.yardstick(YARDSTICK, include_str!("../yardsticks/scale_linear.cu")).unwrap();
            for launch in [0, 1, 9] {
                t.prepare(launch).unwrap();
                module.launch(KERNEL, launch_config(n, m), &t.args()).unwrap();
                t.check(launch).unwrap_or_else(|e| panic!("launch {launch}: {e:#}"));
                t.d_out.poison().unwrap();
                linear.launch(YARDSTICK, linear_config(n * m), &t.linear_args(&t.d_out)).unwrap();
                t.check(launch).unwrap_or_else(|e| panic!("{YARDSTICK}, launch {launch}: {e:#}"));
            }
            let right = t.d_out.read().unwrap();
            let input = t.d_in.buffer().read().unwrap();
            assert!(
                input.iter().all(|v| (0.0..256.0).contains(v)) && right.iter().zip(&input).all(|(o, i)| *o == 2.0 * i)
            );
            let fails = |launch, out: &[f32]| {
                t.d_out.write(out).unwrap();
                format!("{:#}", t.check(launch).unwrap_err())
            };
            let (row, col) = (m - 1, 4);
            let mut one = right.clone();
            one[row * n + col] += 0.5;
            let err = fails(9, &one);
            assert!(err.contains(&format!("`d_Pout`[{}] (row {row}, column {col})", row * n + col)), "{err}");
            one[row * n + col] = f32::from_bits(u32::MAX);
            assert!(fails(9, &one).contains("got nothing (never written)"));
            t.prepare(10).unwrap();
            assert!(fails(10, &right).contains("`d_Pout`[0] (row 0, column 0)"));
            t.prepare(11).unwrap();
            module.launch(KERNEL, launch_config(n, m), &t.args()).unwrap();
            t.d_in.overwrite_one(11, n).unwrap();
            let err = t.check(11).unwrap_err();
            let modified = err.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
            assert_eq!((modified.buffer.as_str(), modified.index), ("d_Pin", n));
            t.check(11).expect("`d_Pin` restored, `d_Pout` right");
        });
    }

    #[test]
    fn one_part_with_every_kind_of_check() {
        let ex = exercise();
        assert_eq!((ex.id, ex.slug, ex.dir), ("ex09", "picture", "exercises/ex09-picture"));
        let names: Vec<_> = ex.parts[0].checks.iter().map(|c| c.name.as_str()).collect();
        for name in ["76x62", "62x76", "coalesced", "share-of-linear"] {
            assert!(names.contains(&name), "{name}: {names:?}");
        }
    }
}
