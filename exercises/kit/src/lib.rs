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
//! | allocate | [`Gpu::upload`] (inputs, watched), [`Gpu::poisoned`] (outputs), [`Gpu::zeros`] (counters, bins), [`Gpu::upload_repeated`] |
//! | fill `__constant__` memory | [`Module::set_constant`] |
//! | launch | [`Module::launch`] with [`LaunchConfig`] and [`args!`]; [`Module::launch_async`] inside a timing |
//! | read back | [`DeviceBuffer::read`], [`DeviceBuffer::read_range`], [`DeviceBuffer::read_elements`] (a sample); reset with [`DeviceBuffer::write`], [`DeviceBuffer::poison`] |
//! | compare | [`check::exact`], [`check::close`], [`check::scalar`], [`check::is_poison`], [`check::record_matrix`], [`require`] |
//! | measure the technique (structure) | [`Ctx::measure`] → [`measure::Measurement`], inside [`measure::unless_unmeasurable`], with [`measure::require_right_result`] |
//! | time the student's kernel | [`timed::student`] on [`timed::Windowed`] inputs, after [`Ctx::copy_bandwidth_gbps`] |
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
//! use kit::timed::Windowed;
//! use kit::{Check, Ctx, Exercise, LaunchConfig, Part};
//!
//! const KERNEL: &str = "histogram_private";
//! /// Calibrated on the H100 and the H200 (CALIBRATION.md): between the slowest
//! /// correct variant and the fastest slow one.
//! const MIN_SHARE_OF_COPY: f64 = 0.5;
//! /// Bytes per launch of the timing (a real exercise takes 8x the L2:
//! /// `kit::exercise::bandwidth_elements`).
//! const N: usize = 1 << 28;
//! const BLOCK: usize = 1 << 20;
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
//!     // A random block, computed once per seed, repeated on the device; launch `n`
//!     // reads a window of it further on, so no two launches see the same bytes.
//!     let block = ctx.shared("block", || kit::inputs::bytes(&mut ctx.rng(), BLOCK));
//!     let data = Windowed::repeated(gpu, "data", &block, N)?;
//!     let bins = gpu.zeros::<u32>("bins", 256)?;
//!     let cfg = LaunchConfig::linear((N as u32).div_ceil(256), 256);
//!     let timing = kit::timed::student(
//!         gpu,
//!         // prepare(n): what the README promises before a launch.
//!         |_| bins.write(&[0; 256]),
//!         // launch(n): the kernel once, on launch n's window.
//!         |n| module.launch_async(KERNEL, cfg, &[data.arg(n), bins.arg(), (N as i32).into()]),
//!         // check(n): every launch's output (256 bins: all of them).
//!         |n| {
//!             let expected = window_histogram(&block, data.at(n, 0), N);
//!             kit::check::exact("bins", &expected, &bins.read()?)
//!         },
//!     )?;
//!     // The grader's own kernel, same bytes, same reset; cached across a batch.
//!     // In the exercise: include_str!("../yardsticks/copy_bytes.cu").
//! #   const COPY_BYTES_CU: &str = "";
//!     let copy = ctx.yardstick("copy_bytes", COPY_BYTES_CU)?;
//!     let out = gpu.poisoned::<u8>("copy.out", N)?;
//!     let args = [data.arg(0), out.arg(), (N as i32).into()];
//!     let ideal = ctx.time_yardstick(&copy, "copy_bytes", cfg, &args, || bins.write(&[0; 256]))?;
//!     // The histogram reads N bytes; the copy reads and writes them: a share of its bandwidth.
//!     kit::perf::require_share(
//!         &format!("{KERNEL} on {N} bytes"),
//!         timing.gb_per_s(N),
//!         "a copy of the same bytes",
//!         ideal.gb_per_s(2 * N),
//!         MIN_SHARE_OF_COPY,
//!     )
//! }
//!
//! /// The bins of `len` bytes of the repeated `block` from element `start` on.
//! fn window_histogram(block: &[u8], start: usize, len: usize) -> Vec<u32> {
//!     let mut bins = vec![0u32; 256];
//!     let (whole, rest) = (len / block.len(), len % block.len());
//!     for (i, &b) in block.iter().enumerate() {
//!         // element i of the block appears `whole` times, plus once if it lies in the remainder
//!         let offset = (i + block.len() - start % block.len()) % block.len();
//!         bins[b as usize] += whole as u32 + (offset < rest) as u32;
//!     }
//!     bins
//! }
//! ```
//!
//! The correctness and structure checks of the same part are in [`Check::correctness`]'s
//! and [`Check::structure`]'s examples; ex09 (`exercises/ex09-picture`) is a whole
//! exercise written this way.

pub mod backend;
pub mod calibration;
pub mod check;
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
pub use exercise::{require, Check, CheckKind, Ctx, Exercise, Part, PartBuild, RunEnv, Skip, SIM_MAX_ELEMENTS};
pub use gpu::{DeviceBuffer, Gpu, Module};
