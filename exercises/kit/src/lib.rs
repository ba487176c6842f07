//! The host-side kit every exercise uses: the GPU seam, seeded inputs, checks
//! that explain themselves, memory measured on the simulator and the one safe
//! way of timing a student's kernel. docs/authoring.md says how an exercise is
//! made with it; this is the reference (`cargo doc -p cuda-lab-kit --open`).
//!
//! # Map
//!
//! An exercise crate's `exercise()` returns an [`Exercise`]: [`Part`]s (one
//! `.cu` file each), each with [`Check`]s of three kinds. A check is a function
//! of a [`Ctx`] that returns a note, an error that explains itself, or a
//! [`Skip`].
//!
//! | to | use |
//! | --- | --- |
//! | describe the exercise | [`Exercise`], [`Part::new`], [`Part::check`] |
//! | make checks | [`Check::correctness`], [`Check::structure`], [`Check::performance`], [`Check::heavy_if`] (with [`SIM_MAX_ELEMENTS`]), [`Check::with_stand_in`] |
//! | draw seeded inputs | [`Ctx::rng`], [`Ctx::rng_for`], [`inputs`] ([`inputs::uniform_f32`], [`inputs::uniform_i32`], [`inputs::bytes`], [`inputs::bytes_weighted`]) |
//! | compute once per seed (a batch shares it) | [`Ctx::shared`] |
//! | get the student's kernel | [`Ctx::kernel_module`] (checks the name; a missing kernel is explained) |
//! | allocate | [`Gpu::upload`] (inputs, watched), [`Gpu::poisoned`] (outputs), [`Gpu::zeros`] (counters, bins) |
//! | fill `__constant__` memory | [`Module::set_constant`] |
//! | launch | [`Module::launch`] with [`LaunchConfig`] and [`args!`]; [`Module::launch_async`] inside a timing |
//! | read back | [`DeviceBuffer::read`], [`DeviceBuffer::read_range`], [`DeviceBuffer::read_elements`] (a sample); reset with [`DeviceBuffer::write`], [`DeviceBuffer::poison`] |
//! | compare | [`check::exact`], [`check::close`], [`check::scalar`], [`check::is_poison`], [`check::record_matrix`], [`require`] |
//! | measure the technique (structure) | [`Ctx::measure`] (or [`Ctx::measure_each`]) → [`measure::Measurement`], inside [`measure::unless_unmeasurable`], with [`measure::require_right_result`], on lengths no kernel can know: [`measure::sizes_across`] and [`measure::on_every_size`] |
//! | time the student's kernel | [`timed::student`] on [`timed::Fresh`] inputs (new values every launch), after [`Ctx::copy_bandwidth_gbps`]; check every launch in full with [`timed::same_as_expected`] |
//! | time the yardstick | [`Ctx::yardstick`], [`Ctx::time_yardstick`] |
//! | judge the times | [`perf::require_share`], [`perf::require_speedup`] (threshold constant in the exercise, calibrated per GPU) |
//! | say "cannot run here" | [`Skip`]; [`measure::skip_unmeasurable`] for a stand-in |
//!
//! # One check, end to end
//!
//! A timed check of a histogram kernel `histogram_private(const unsigned char *data,
//! unsigned int *bins, int n)` against a yardstick that copies the same bytes,
//! in the exercise's `yardsticks/copy_bytes.cu`:
//!
//! ```no_run
//! use anyhow::Result;
//! use kit::timed::{byte_table, same_as_expected, Fresh};
//! use kit::{Check, Ctx, Exercise, LaunchConfig, Part};
//!
//! const KERNEL: &str = "histogram_private";
//! /// Calibrated on the H100 and the H200 (CALIBRATION.md): between the slowest
//! /// correct variant and the fastest slow one.
//! const MIN_SHARE_OF_COPY: f64 = 0.5;
//! /// Bytes per launch of the timing (a real exercise takes 8x the L2:
//! /// `kit::exercise::bandwidth_elements`).
//! const N: usize = 1 << 28;
//!
//! pub fn exercise() -> Exercise {
//!     let part = Part::new("private", "kernels/histogram_private.cu", &[KERNEL], 10.0)
//!         .check(Check::performance("share-of-copy", share_of_copy));
//!     Exercise { id: "ex10", slug: "histogram", title: "Histogram", dir: "exercises/ex10-histogram", parts: vec![part] }
//! }
//!
//! fn share_of_copy(ctx: &Ctx) -> Result<String> {
//!     let module = ctx.kernel_module(KERNEL)?;
//!     // Skips (not graded) where nothing can be timed, before anything large is allocated.
//!     ctx.copy_bandwidth_gbps()?;
//!     let gpu = module.gpu();
//!     // New random bytes for every launch, drawn on the device from a key
//!     // secret to the run: no kernel can predict or reuse them.
//!     let data = Fresh::bytes(ctx, "data", N, &byte_table(&[(b'e', 12.0), (b' ', 18.0), (b'x', 1.0)])?)?;
//!     let bins = gpu.zeros::<u32>("bins", 256)?;
//!     let expected = gpu.zeros::<u32>("expected bins", 256)?;
//!     // The grader's own kernels (in the exercise: include_str!("../yardsticks/histogram.cu")):
//!     // a plain count to check every launch with, and the copy to compare the time with.
//! #   const GRADERS_CU: &str = "";
//!     let graders = ctx.yardstick("histogram", GRADERS_CU)?;
//!     let cfg = LaunchConfig::linear((N as u32).div_ceil(256), 256);
//!     let args = |bins: &kit::DeviceBuffer<u32>| [data.arg(), bins.arg(), (N as i32).into()];
//!     let timing = kit::timed::student(
//!         gpu,
//!         // prepare(n): launch n's bytes, and what the README promises before a launch.
//!         |n| {
//!             data.fill(n)?;
//!             bins.write(&[0; 256])
//!         },
//!         // launch(n): the kernel once.
//!         |_| module.launch_async(KERNEL, cfg, &args(&bins)),
//!         // check(n): the bytes as generated, and all 256 bins against the grader's count.
//!         |n| {
//!             data.intact(n)?;
//!             expected.write(&[0; 256])?;
//!             graders.launch("count", cfg, &args(&expected))?;
//!             same_as_expected("bins", &expected, &bins, |_| String::new())
//!         },
//!     )?;
//!     // The grader's copy, same bytes, same reset; its timing is shared across a batch.
//!     let out = gpu.poisoned::<u8>("copy.out", N)?;
//!     let args = [data.arg(), out.arg(), (N as i32).into()];
//!     let ideal = ctx.time_yardstick(&graders, "copy_bytes", cfg, &args, || bins.write(&[0; 256]))?;
//!     // The histogram reads N bytes; the copy reads and writes them: a share of its bandwidth.
//!     kit::perf::require_share(
//!         &format!("{KERNEL} on {N} bytes"),
//!         timing.gb_per_s(N),
//!         "a copy of the same bytes",
//!         ideal.gb_per_s(2 * N),
//!         MIN_SHARE_OF_COPY,
//!     )
//! }
//! ```
//!
//! The correctness and structure checks of the same part are in [`Check::correctness`]'s
//! and [`Check::structure`]'s examples; ex09 (`exercises/ex09-picture`) is a whole
//! exercise written this way.

pub mod backend;
pub mod calibration;
pub mod case_file;
pub mod check;
pub mod cores;
pub mod counters;
pub mod digest;
pub mod exercise;
pub mod gpu;
pub mod gpu_lock;
pub mod inputs;
pub mod inspect;
pub mod measure;
pub mod perf;
pub mod profile;
pub mod record;
pub mod shared;
pub mod skip;
pub mod stats;
pub mod timed;
pub mod trial;

pub use backend::{Arg, LaunchConfig};
pub use exercise::{
    require, shapes_secret, Check, CheckKind, Ctx, Exercise, Part, PartBuild, RunEnv, Skip, SHAPES_SECRET_ENV,
    SIM_MAX_ELEMENTS,
};
pub use gpu::{DeviceBuffer, Gpu, Module};
