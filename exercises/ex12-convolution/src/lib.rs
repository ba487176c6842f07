//! ex12: 2D convolution of a float image with a (2r + 1) x (2r + 1) mask,
//! r <= MAX_MASK_RADIUS = 3, the pixels outside the image ("ghost cells") 0,
//! after Kirk and Hwu's *Programming Massively Parallel Processors*, chapter 7.
//!
//! Three parts, one kernel each, all launched alike (16 x 16 blocks, one
//! output per thread): `naive` reads the image and the mask from global
//! memory; `constant` reads the mask from a `__constant__` array the grader
//! fills (`Module::set_constant`, as `cudaMemcpyToSymbol`); `tiled` stages the
//! block's input tile and its halo in shared memory. The memory lessons are
//! measured on the simulator (src/measured.rs): coalesced image reads for
//! `naive`; mask reads from constant memory, uniform across the warp, for
//! `constant`; global loads per output far under (2r + 1)^2 for `tiled`. The
//! timed checks compare `constant` with the same loop reading the mask from
//! global memory and `tiled` with the untiled constant-mask loop, both the
//! grader's kernels timed in the same run.
//!
//! Written with `grader new exercise ex12-convolution`, then filled in
//! (docs/authoring.md).

pub mod cpu;
pub mod measured;

use anyhow::{bail, Result};
use kit::backend::{Arg, BackendError};
use kit::timed::Fresh;
use kit::{Check, Ctx, DeviceBuffer, Exercise, LaunchConfig, Module, Part};
use std::sync::Arc;

/// Side of the square block and of a block's output tile, `TILE` in the `.cu` files.
pub const TILE: u32 = 16;
/// The largest mask radius, `MAX_MASK_RADIUS` in the `.cu` files: masks up to 7 x 7.
pub const MAX_MASK_RADIUS: usize = 3;
/// The `__constant__` array the grader writes the mask into (parts `constant` and `tiled`).
pub const MASK_SYMBOL: &str = "F";
/// Correctness cases as (width, height, r). One pixel (every tap but the
/// centre a ghost cell); an image smaller than the mask; exactly one block;
/// images wider than tall and taller than wide, no side a multiple of 16
/// (except the one block); r = 0 (a 1 x 1 mask: a scaling); one row and one
/// column; and large ones for a GPU.
pub const CASES: [(usize, usize, usize); 11] = [
    (1, 1, 3),
    (3, 2, 3),
    (16, 16, 1),
    (76, 62, 2),
    (62, 76, 3),
    (45, 29, 0),
    (300, 17, 1),
    (17, 300, 3),
    (33, 1, 2),
    (1000, 999, 3),
    (4099, 2053, 2),
];
/// Width of the timed image (its height fills 8x the L2 cache, in and out).
pub const PERF_WIDTH: usize = 8192;
/// The timed mask: the largest, 7 x 7.
pub const PERF_RADIUS: usize = MAX_MASK_RADIUS;
/// `constant::perf::faster-than-global-mask`: the kernel must be at least this
/// fast relative to the same loop reading the mask from global memory
/// (yardsticks/conv2d_global_mask.cu). A floor: the compiled value, chosen by
/// reasoning; calibrated per model (calibration/*.toml: 0.182 on an H100 and
/// an H200). The mask in global memory is as fast as in constant memory there
/// (0.999x), so the floor catches only a kernel whose warps read 16 different
/// mask elements at once (serialized: 0.108x; the slowest correct kernel
/// 0.308x), and the measured `mask-in-constant` carries the lesson. See
/// CALIBRATION.md.
pub const MIN_CONSTANT_SPEEDUP: f64 = 0.8;
/// `tiled::perf::faster-than-untiled`: the kernel must be at least this fast
/// relative to the untiled constant-mask loop (yardsticks/conv2d_constant_mask.cu).
/// The compiled value, a floor chosen by reasoning; calibrated per model
/// (calibration/*.toml: 0.555 on an H100, 0.554 on an H200): a tile filled by
/// whole warps is 1.23x-1.51x, one filled by a single thread per block 0.25x.
/// See CALIBRATION.md.
pub const MIN_TILED_SPEEDUP: f64 = 0.8;

/// The three parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Naive,
    Constant,
    Tiled,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Naive, Variant::Constant, Variant::Tiled];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Naive => "naive",
            Variant::Constant => "constant",
            Variant::Tiled => "tiled",
        }
    }

    pub fn file(self) -> &'static str {
        match self {
            Variant::Naive => "kernels/conv2d_naive.cu",
            Variant::Constant => "kernels/conv2d_constant.cu",
            Variant::Tiled => "kernels/conv2d_tiled.cu",
        }
    }

    pub fn kernel(self) -> &'static str {
        match self {
            Variant::Naive => "conv2d_naive",
            Variant::Constant => "conv2d_constant",
            Variant::Tiled => "conv2d_tiled",
        }
    }

    fn kernels(self) -> &'static [&'static str] {
        match self {
            Variant::Naive => &["conv2d_naive"],
            Variant::Constant => &["conv2d_constant"],
            Variant::Tiled => &["conv2d_tiled"],
        }
    }

    fn part(self) -> Part {
        let mut part = Part::new(self.name(), self.file(), self.kernels(), 10.0);
        for (w, h, r) in CASES {
            part = part.check(
                Check::correctness(format!("{w}x{h}-r{r}"), move |ctx| correct(ctx, self, w, h, r))
                    .heavy_if(w * h * cpu::side(r) * cpu::side(r) > kit::SIM_MAX_ELEMENTS),
            );
        }
        match self {
            Variant::Naive => part.check(Check::structure("coalesced", measured::coalesced_check)),
            Variant::Constant => {
                part.check(Check::structure("mask-in-constant", measured::mask_in_constant_check)).check(
                    Check::performance("faster-than-global-mask", |ctx| faster_than_yardstick(ctx, Variant::Constant))
                        // What a constant mask saves is the mask's global loads, read as broadcasts: both measured.
                        .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::mask_in_constant_stand_in(ctx))),
                )
            }
            Variant::Tiled => {
                part.check(Check::structure("few-global-loads-per-output", measured::halo_in_shared_check)).check(
                    Check::performance("faster-than-untiled", |ctx| faster_than_yardstick(ctx, Variant::Tiled))
                        // A tile pays when whole warps fill it (one loader per block is far slower): measured.
                        .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::warp_wide_fill_stand_in(ctx))),
                )
            }
        }
    }

    /// Puts the mask where the kernel reads it: nothing for `naive` (an
    /// argument), the `__constant__` array `F` for the others (cudaMemcpyToSymbol).
    pub fn prepare(self, module: &Module, mask: &[f32]) -> Result<()> {
        if self == Variant::Naive {
            return Ok(());
        }
        let file = self.file().trim_start_matches("kernels/");
        module.set_constant(MASK_SYMBOL, &cpu::constant_mask(mask)).map_err(|e| {
            match e.downcast_ref::<BackendError>() {
                Some(BackendError::MissingSymbol(_)) => e.context(format!(
                    "{file} has no `__constant__ float F[(2 * MAX_MASK_RADIUS + 1) * (2 * MAX_MASK_RADIUS + 1)];` at \
                 file scope (keep the stub's declaration, and read the mask from it: a variable nothing reads may \
                 be left out of the compiled module): the grader copies the mask into it before every launch, as \
                 cudaMemcpyToSymbol does"
                )),
                _ => e.context(format!(
                    "writing the {} mask values into `__constant__ float {MASK_SYMBOL}[{}]` (keep the stub's size)",
                    mask.len(),
                    cpu::MASK_CAPACITY
                )),
            }
        })
    }

    /// Starts the kernel: `mask` is the device copy (an argument of `naive` only).
    pub fn launch_on(
        self,
        module: &Module,
        input: Arg,
        mask: Arg,
        out: Arg,
        (w, h, r): (usize, usize, usize),
    ) -> Result<()> {
        let cfg = launch_config(w, h);
        let (r, w, h) = ((r as i32).into(), (w as i32).into(), (h as i32).into());
        match self {
            Variant::Naive => module.launch_async(self.kernel(), cfg, &[input, mask, out, r, w, h]),
            Variant::Constant | Variant::Tiled => module.launch_async(self.kernel(), cfg, &[input, out, r, w, h]),
        }
    }
}

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex12",
        slug: "convolution",
        title: "2D convolution: naive, constant mask, tiled",
        dir: "exercises/ex12-convolution",
        parts: Variant::ALL.iter().map(|v| v.part()).collect(),
    }
}

/// The launch of every part: blocks of 16 x 16 threads, `ceil(width / 16) x
/// ceil(height / 16)` of them, x over the columns; no dynamic shared memory.
pub fn launch_config(width: usize, height: usize) -> LaunchConfig {
    let blocks = |pixels: usize| (pixels as u32).div_ceil(TILE);
    LaunchConfig::grid2d((blocks(width), blocks(height)), (TILE, TILE))
}

/// Runs variant `v` once on `image` (width x height) with `mask` of radius `r`
/// and returns `out`, poisoned before the launch.
pub fn convolve_on(
    module: &Module,
    v: Variant,
    image: &[f32],
    mask: &[f32],
    (w, h, r): (usize, usize, usize),
) -> Result<Vec<f32>> {
    let gpu = module.gpu();
    // Images and mask with their rows: a read out of bounds is named by row and column.
    let d_in = gpu.upload("in", image)?.with_2d_shape(w, h)?;
    let s = (mask.len() as f64).sqrt() as usize;
    let d_mask = gpu.upload("mask", mask)?;
    let d_mask = if s * s == mask.len() { d_mask.with_2d_shape(s, s)? } else { d_mask };
    let d_out = gpu.poisoned::<f32>("out", w * h)?.with_2d_shape(w, h)?;
    v.prepare(module, mask)?;
    v.launch_on(module, d_in.arg(), d_mask.arg(), d_out.arg(), (w, h, r))?;
    gpu.finish().map_err(|e| e.context(format!("running `{}` on a {w} x {h} image with r = {r}", v.kernel())))?;
    d_out.read()
}

fn correct(ctx: &Ctx, v: Variant, w: usize, h: usize, r: usize) -> Result<String> {
    ctx.kernel_ptx(v.kernel())?; // a missing or misspelled kernel, before anything is computed
                                 // The same for every student of a batch: drawn and computed once per seed.
    let inputs = ctx.shared("in+mask+out", || {
        let mut rng = ctx.rng();
        let image = cpu::image(&mut rng, w * h);
        let mask = cpu::mask(&mut rng, r);
        let expected = cpu::convolve(&image, &mask, r, w, h);
        (image, mask, expected)
    });
    // Taken after the inputs: a check run ahead of the GPU (grader/src/ahead.rs) stops here.
    let module = ctx.kernel_module(v.kernel())?;
    let (image, mask, expected) = (&inputs.0, &inputs.1, &inputs.2);
    let got = convolve_on(module, v, image, mask, (w, h, r))
        .map_err(|e| mask_read_past_its_end(module, v, e, image, mask, (w, h, r)))?;
    cpu::compare(image, mask, expected, &got, (r, w, h))?;
    let cfg = launch_config(w, h);
    Ok(format!("{} x {} blocks of 16 x 16, a {s} x {s} mask", cfg.grid.0, cfg.grid.1, s = cpu::side(r)))
}

/// A read past the end of `mask` (part `naive`) that is the mask read with a
/// stride of 7 says so first: the kernel runs again with the mask followed by
/// zeros up to 49 weights (what `F` holds in the other parts), and if every
/// output is then the sum with a stride of 7, the out-of-bounds read's
/// message starts with that diagnosis (the verdict stays the read's). Any
/// other error is left as it is.
fn mask_read_past_its_end(
    module: &Module,
    v: Variant,
    e: anyhow::Error,
    image: &[f32],
    mask: &[f32],
    (w, h, r): (usize, usize, usize),
) -> anyhow::Error {
    let read = e.chain().find_map(|c| match c.downcast_ref::<BackendError>() {
        Some(BackendError::OutOfBoundsRead(text)) if text.contains("the buffer `mask`") => Some(text.clone()),
        _ => None,
    });
    let Some(read) = read.filter(|_| v == Variant::Naive && r < MAX_MASK_RADIUS) else { return e };
    let padded = cpu::constant_mask(mask);
    let proved = convolve_on(module, v, image, &padded, (w, h, r))
        .is_ok_and(|got| cpu::read_with_stride_7(image, mask, &got, (r, w, h)));
    if !proved {
        return e;
    }
    // The read's own hint (a bounds test) is not the fix here: keep where and how far.
    let start = read.find("the buffer `mask`").unwrap_or(0);
    let hint = read[start..].match_indices(". ").find(|(i, _)| read[start + i + 2..].starts_with(char::is_uppercase));
    let read = hint.map_or(read.as_str(), |(end, _)| &read[..start + end]);
    let n = mask.len();
    anyhow::Error::new(BackendError::OutOfBoundsRead(format!(
        "`{}` reads the mask with a stride of {}: with radius r = {r} the mask is {s} x {s} = {n} weights, so tap \
         (i, j) is at mask[i * (2r + 1) + j] = mask[i * {s} + j], not mask[i * 7 + j] (with the {n} weights \
         followed by zeros the kernel computes exactly the sum with a stride of 7), and the stride of 7 reads past \
         the {n} weights of `mask`: {read}",
        v.kernel(),
        cpu::side(MAX_MASK_RADIUS),
        s = cpu::side(r)
    )))
    .context(format!("running `{}` on a {w} x {h} image with r = {r}", v.kernel()))
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

/// The grader's kernel that the `constant` part's timing is compared with.
const EXPECTED_KERNEL: (&str, &str) = ("conv2d_global_mask", include_str!("../yardsticks/conv2d_global_mask.cu"));

/// A timed check's buffers: the image, fresh for every launch (pixels
/// uniform in [0, 1), as in the correctness checks, full-precision floats);
/// the mask; the student's output; and the grader's check of every output
/// pixel against the double convolution within the correctness checks'
/// rounding bound (yardsticks/conv2d_check.cu). The old timed image held
/// k / 16 with a mask of sixteenths, exact in float: a structure a kernel
/// could compute on in small integers.
pub struct TimedImage {
    pub input: Fresh<f32>,
    pub mask: DeviceBuffer<f32>,
    pub out: DeviceBuffer<f32>,
    mask_host: Vec<f32>,
    first: DeviceBuffer<u64>,
    checker: Arc<Module>,
    /// (width, height, r).
    shape: (usize, usize, usize),
}

impl TimedImage {
    pub fn new(ctx: &Ctx, mask: &[f32], (w, h, r): (usize, usize, usize)) -> Result<Self> {
        let gpu = ctx.gpu()?;
        Ok(Self {
            input: Fresh::uniform(ctx, "in", w * h, 0.0, 1.0)?,
            mask: gpu.upload("mask", mask)?,
            out: gpu.poisoned::<f32>("out", w * h)?.with_2d_shape(w, h)?,
            mask_host: mask.to_vec(),
            first: gpu.zeros::<u64>("first wrong pixel", 1)?,
            checker: ctx.yardstick("conv2d_check", include_str!("../yardsticks/conv2d_check.cu"))?,
            shape: (w, h, r),
        })
    }

    /// Before launch `launch`: its image, and the output poisoned.
    pub fn prepare(&self, launch: usize) -> Result<()> {
        self.input.fill(launch)?;
        self.out.poison()
    }

    /// After launch `launch`: the image as it was made, then every pixel of
    /// the output against the double convolution of the same image, within
    /// the rounding bound of any float order ([`cpu::tolerance`]).
    pub fn check(&self, launch: usize) -> Result<()> {
        self.input.intact(launch)?;
        let (w, h, r) = self.shape;
        let taps = cpu::side(r) * cpu::side(r);
        // tolerance(k, m) = gamma2 * m + floor.
        let floor = cpu::tolerance(taps, 0.0);
        let gamma2 = cpu::tolerance(taps, 1.0) - floor;
        self.first.write(&[u64::MAX])?;
        let args = [
            self.input.arg(),
            self.mask.arg(),
            self.out.arg(),
            (r as i32).into(),
            (w as i32).into(),
            (h as i32).into(),
            gamma2.into(),
            floor.into(),
            self.first.arg(),
        ];
        self.checker.launch("conv2d_check", launch_config(w, h), &args)?;
        let first = self.first.read()?[0];
        if first == u64::MAX {
            return Ok(());
        }
        let i = first as usize;
        let (row, col) = (i / w, i % w);
        let pixel = |y: usize, x: usize| self.input.host_values(launch, y * w + x, 1)[0];
        let expected = cpu::conv_at(pixel, &self.mask_host, r, w, h, row, col);
        let got = self.out.read_range(i, 1)?[0];
        let got = if kit::check::is_poison(&got) { "nothing (never written)".to_string() } else { format!("{got:?}") };
        bail!(
            "`out`[{i}] (row {row}, column {col}; {w} x {h}, r = {r}): expected {:?} (in double; a float sum in any \
             order stays within {:.3e} of it), got {got} (the first wrong element of {})",
            expected.0,
            cpu::tolerance(taps, expected.1),
            w * h
        )
    }
}

/// The timed checks: `constant` against the global-mask loop, `tiled` against
/// the untiled constant-mask loop, on the same buffers, in the same run.
fn faster_than_yardstick(ctx: &Ctx, v: Variant) -> Result<String> {
    let module = ctx.kernel_module(v.kernel())?;
    // Where nothing can be timed this says so (not graded) before anything large is allocated.
    let copy_gbps = ctx.copy_bandwidth_gbps()?;
    let gpu = module.gpu();
    let (yardstick, min, baseline_name) = match v {
        Variant::Constant => (EXPECTED_KERNEL, MIN_CONSTANT_SPEEDUP, "the same loop with the mask in global memory"),
        Variant::Tiled => (
            ("conv2d_constant_mask", include_str!("../yardsticks/conv2d_constant_mask.cu")),
            MIN_TILED_SPEEDUP,
            "the untiled loop with the mask in constant memory",
        ),
        Variant::Naive => bail!("part `naive` is not timed"),
    };
    let ys = ctx.yardstick(yardstick.0, yardstick.1)?;
    let (w, h, r) = (PERF_WIDTH, perf_rows(gpu), PERF_RADIUS);
    let mask = ctx.shared("perf-mask", || cpu::mask(&mut ctx.rng_for("perf-mask"), r));
    // Every launch convolves an image of its own, generated on the device from
    // the run's secret key, and its whole output is compared on the device
    // with the grader's kernel's on the same image.
    let timed = TimedImage::new(ctx, &mask, (w, h, r))?;
    v.prepare(module, &mask)?;
    let student = kit::timed::student(
        gpu,
        |launch| timed.prepare(launch),
        |_| v.launch_on(module, timed.input.arg(), timed.mask.arg(), timed.out.arg(), (w, h, r)),
        |launch| timed.check(launch),
    )?;
    let cfg = launch_config(w, h);
    let (ri, wi, hi) = ((r as i32).into(), (w as i32).into(), (h as i32).into());
    timed.input.fill(0)?;
    let args = match v {
        Variant::Constant => vec![timed.input.arg(), timed.mask.arg(), timed.out.arg(), ri, wi, hi],
        _ => {
            ys.set_constant(MASK_SYMBOL, &cpu::constant_mask(&mask))?;
            vec![timed.input.arg(), timed.out.arg(), ri, wi, hi]
        }
    };
    let baseline = ctx.time_yardstick(&ys, yardstick.0, cfg, &args, || timed.out.poison())?;
    let line = kit::perf::require_speedup(
        &format!("{} on a {w} x {h} image, {s} x {s} mask", v.kernel(), s = cpu::side(r)),
        &student,
        &baseline,
        baseline_name,
        min,
    )?;
    Ok(format!("{line} (the kit's float4 copy: {copy_gbps:.0} GB/s)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles `path` (workspace-relative, or `text` under that name) for the simulator.
    fn compile(compiler: &ptx_build::Compiler, path: &str, text: Option<&str>) -> String {
        let text = text.map(str::to_string).unwrap_or_else(|| {
            std::fs::read_to_string(kit::trial::workspace_file(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
        });
        compiler.compile(&ptx_build::SourceFile::from_text(path, text), &Default::default()).unwrap().text
    }

    /// `f` in a simulator context of the constant part's timed check, whose
    /// student module is `file` (none: empty); `None` without NVRTC.
    fn on_sim<R>(file: Option<&str>, f: impl FnOnce(&Ctx) -> R) -> Option<R> {
        let compiler = kit::trial::compiler()?;
        let ptx = file.map(|file| compile(&compiler, file, None)).unwrap_or_default();
        let env = kit::RunEnv::new(1, Some(kit::Gpu::simulator()), Some(compiler), Default::default());
        let build = kit::PartBuild::new(ptx);
        let ctx = Ctx::new("ex12::constant::perf::faster-than-global-mask", &env, &build);
        Some(ctx.run(f))
    }

    /// The timed checks' plumbing, on the simulator with a small image: each
    /// reference and yardstick passes the check of several launches, and its
    /// output is within the rounding bound of the double convolution (on the
    /// host); the output of one launch fails the check of the
    /// next, a wrong kernel fails naming the pixel, and a kernel that writes
    /// into the image fails `input-modified`.
    #[test]
    fn every_timed_launch_is_checked_in_full_against_the_graders_kernel() {
        let (w, h, r) = (40, 24, 3);
        on_sim(None, |ctx| {
            let gpu = ctx.gpu().unwrap();
            let compiler = kit::trial::compiler().unwrap();
            let mask = cpu::mask(&mut kit::inputs::rng_for(7, "timed"), r);
            let timed = TimedImage::new(ctx, &mask, (w, h, r)).unwrap();
            let exact = |launch| -> Vec<(f64, f64)> {
                let image = timed.input.host_values(launch, 0, w * h);
                assert!(image.iter().filter(|&&p| (p * 16.0).fract() != 0.0).count() > w * h - 2, "no k / 16");
                cpu::convolve(&image, &mask, r, w, h)
            };
            let run = |module: &Module, v: Variant, launch| {
                timed.prepare(launch).unwrap();
                v.launch_on(module, timed.input.arg(), timed.mask.arg(), timed.out.arg(), (w, h, r)).unwrap();
                gpu.finish().unwrap();
            };
            for v in Variant::ALL {
                let module = gpu.load(&compile(&compiler, &format!("reference/ex12-convolution/{}", v.file()), None));
                let module = module.unwrap();
                v.prepare(&module, &mask).unwrap();
                for launch in [0, 1, 5] {
                    run(&module, v, launch);
                    timed.check(launch).unwrap_or_else(|e| panic!("{v:?}, launch {launch}: {e:#}"));
                    let out = timed.out.read().unwrap();
                    assert!(out.iter().zip(exact(launch)).all(|(&o, e)| cpu::close_enough(o, e, r)), "{v:?}");
                    timed.input.fill(launch + 1).unwrap();
                    let e = timed.check(launch + 1).unwrap_err().to_string();
                    assert!(e.starts_with("`out`[") && e.contains(": expected") && e.contains("(row "), "{e}");
                }
            }
            // The yardsticks agree, on a launch of their own.
            let [ri, wi, hi]: [kit::backend::Arg; 3] = [(r as i32).into(), (w as i32).into(), (h as i32).into()];
            let constant = gpu
                .load(&compile(&compiler, "<grader>/c.cu", Some(include_str!("../yardsticks/conv2d_constant_mask.cu"))))
                .unwrap();
            constant.set_constant(MASK_SYMBOL, &cpu::constant_mask(&mask)).unwrap();
            timed.prepare(2).unwrap();
            constant
                .launch("conv2d_constant_mask", launch_config(w, h), &[timed.input.arg(), timed.out.arg(), ri, wi, hi])
                .unwrap();
            timed.check(2).unwrap();
            // A kernel wrong only along the border is named at its first wrong pixel.
            let ghost =
                "grader/tests/variants/ex12-tiled-ghost-off-by-one/exercises/ex12-convolution/kernels/conv2d_tiled.cu";
            let module = gpu.load(&compile(&compiler, ghost, None)).unwrap();
            Variant::Tiled.prepare(&module, &mask).unwrap();
            run(&module, Variant::Tiled, 3);
            let e = timed.check(3).unwrap_err().to_string();
            assert!(e.contains(&format!("; {w} x {h}, r = 3): expected")), "{e}");
            // A write into the image.
            run(&module, Variant::Tiled, 4);
            timed.input.overwrite_one(4, 77).unwrap();
            let e = timed.check(4).unwrap_err();
            let modified = e.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
            assert_eq!((modified.buffer.as_str(), modified.index), ("in", 77));
        });
    }

    /// The cheat case ex12-constant-mask-only-where-measured is a correct
    /// kernel: it passes every correctness size the simulator runs and every
    /// timed launch; only its measured check fails (src/measured.rs).
    #[test]
    fn the_kernel_that_uses_constant_memory_only_where_measured_is_correct() {
        let file = "grader/tests/cheats/ex12-constant-mask-only-where-measured/exercises/ex12-convolution/kernels/conv2d_constant.cu";
        on_sim(Some(file), |ctx| {
            for (w, h, r) in CASES.into_iter().filter(|&(w, h, r)| w * h * cpu::side(r).pow(2) <= kit::SIM_MAX_ELEMENTS)
            {
                let name = format!("ex12::constant::correct::{w}x{h}-r{r}");
                let check = Ctx::new(&name, ctx.env, ctx.build);
                correct(&check, Variant::Constant, w, h, r).unwrap_or_else(|e| panic!("{w}x{h}-r{r}: {e:#}"));
            }
            let module = ctx.module().unwrap();
            let mask = cpu::mask(&mut ctx.rng(), 3);
            let timed = TimedImage::new(ctx, &mask, (50, 30, 3)).unwrap();
            Variant::Constant.prepare(module, &mask).unwrap();
            for launch in 0..3 {
                timed.prepare(launch).unwrap();
                Variant::Constant
                    .launch_on(module, timed.input.arg(), timed.mask.arg(), timed.out.arg(), (50, 30, 3))
                    .unwrap();
                timed.check(launch).unwrap();
            }
        });
    }

    #[test]
    fn the_launch_covers_every_pixel_with_whole_blocks() {
        let cfg = launch_config(76, 62);
        assert_eq!((cfg.grid, cfg.block, cfg.shared_bytes), ((5, 4, 1), (16, 16, 1), 0));
        assert_eq!(launch_config(1, 1).grid, (1, 1, 1));
        for (w, h, _) in CASES {
            let cfg = launch_config(w, h);
            let (gx, gy) = (cfg.grid.0 as usize, cfg.grid.1 as usize);
            assert!(gx * 16 >= w && (gx - 1) * 16 < w && gy * 16 >= h && (gy - 1) * 16 < h, "{w}x{h}");
        }
    }

    #[test]
    fn cases_cover_the_edges() {
        assert!(CASES.iter().any(|&(w, h, _)| w > h) && CASES.iter().any(|&(w, h, _)| w < h));
        assert!(
            CASES.iter().filter(|&&(w, h, _)| w == h).all(|&(w, _, _)| w == 1 || w == TILE as usize),
            "square: 1 x 1 and one block only"
        );
        for r in 0..=MAX_MASK_RADIUS {
            assert!(CASES.iter().any(|&(_, _, cr)| cr == r), "radius {r}");
        }
        assert!(CASES.iter().any(|&(w, h, r)| w < cpu::side(r) && h < cpu::side(r)), "an image smaller than the mask");
        assert!(CASES.contains(&(1, 1, MAX_MASK_RADIUS)));
        assert!(CASES.iter().filter(|&&(w, h, _)| w % 16 != 0 && h % 16 != 0).count() >= 8);
        let heavy = |&&(w, h, r): &&(usize, usize, usize)| w * h * cpu::side(r) * cpu::side(r) > kit::SIM_MAX_ELEMENTS;
        assert_eq!(CASES.iter().filter(heavy).count(), 2, "the simulator runs all but the two large ones");
    }

    #[test]
    fn the_timed_image_fits_an_int() {
        assert!(perf_rows(&kit::Gpu::simulator()) * PERF_WIDTH < i32::MAX as usize);
    }

    /// The timed check's bound (the correctness checks' `tolerance`) holds for
    /// float sums of the taps in any order, fused or not, and fails a kernel
    /// that reads pixels and weights as sixteenths (what the old timed image
    /// and mask were, exact there).
    #[test]
    fn the_timed_bound_passes_float_orders_and_fails_sixteenths() {
        let (w, h, r) = (64, 8, PERF_RADIUS);
        let mut rng = kit::inputs::rng_for(1, "timed bound");
        let (image, mask) = (kit::inputs::uniform_f32(&mut rng, w * h, 0.0, 1.0), cpu::mask(&mut rng, r));
        let expected = cpu::convolve(&image, &mask, r, w, h);
        let side = cpu::side(r);
        let float_conv = |q: &dyn Fn(f32) -> f32, reverse: bool, fused: bool| -> Vec<f32> {
            (0..w * h)
                .map(|i| {
                    let (row, col) = (i / w, i % w);
                    let mut taps: Vec<(f32, f32)> = Vec::new();
                    for a in 0..side {
                        for b in 0..side {
                            let (y, x) = ((row + a).checked_sub(r), (col + b).checked_sub(r));
                            if let (Some(y), Some(x)) = (y.filter(|&y| y < h), x.filter(|&x| x < w)) {
                                taps.push((q(mask[a * side + b]), q(image[y * w + x])));
                            }
                        }
                    }
                    if reverse {
                        taps.reverse();
                    }
                    taps.iter().fold(0.0f32, |acc, &(m, p)| if fused { m.mul_add(p, acc) } else { acc + m * p })
                })
                .collect()
        };
        let passes = |out: &[f32]| out.iter().zip(&expected).all(|(&o, &e)| cpu::close_enough(o, e, r));
        for (reverse, fused) in [(false, false), (false, true), (true, false), (true, true)] {
            assert!(passes(&float_conv(&|v| v, reverse, fused)), "a float order (reverse {reverse}, fused {fused})");
        }
        assert!(!passes(&float_conv(&|v| (v * 16.0).round() / 16.0, false, true)), "sixteenths passed");
    }

    #[test]
    fn three_parts_with_every_kind_of_check() {
        let ex = exercise();
        assert_eq!((ex.id, ex.slug, ex.dir), ("ex12", "convolution", "exercises/ex12-convolution"));
        let names = |p: usize| ex.parts[p].checks.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert!(names(0).contains(&"coalesced".to_string()) && names(0).contains(&"62x76-r3".to_string()));
        assert!(names(1).contains(&"mask-in-constant".to_string()));
        assert!(names(1).contains(&"faster-than-global-mask".to_string()));
        assert!(
            names(2).contains(&"few-global-loads-per-output".to_string())
                && names(2).contains(&"faster-than-untiled".to_string())
        );
    }
}
