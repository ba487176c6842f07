//! What an exercise is (parts, checks) and what a check gets to work with (`Ctx`).
//!
//! An exercise crate exports one function returning an [`Exercise`]; the grader
//! turns every check into a test and scores the results. Exercise crates never
//! see the grader, so there is no dependency cycle.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{anyhow, bail, Context as _, Result};
use ptx_build::{CompileOptions, Compiler, SourceFile};

use crate::backend::{BackendError, LaunchConfig};
use crate::gpu::{Gpu, Module};
use crate::inputs::{rng_for, ChaCha8Rng};
use crate::inspect::{self, KernelPtx};
use crate::perf::{self, Timing};
use crate::record::{Record, Recorder};

/// One exercise: what an exercise crate's `exercise()` returns, and all the
/// grader knows of it (registered by a line in grader/Cargo.toml, which
/// `grader new exercise` writes). Each part is a `.cu` file with its checks.
///
/// ```no_run
/// use kit::{Check, Exercise, Part};
///
/// pub fn exercise() -> Exercise {
///     let part = Part::new("global", "kernels/histogram_global.cu", &["histogram_global"], 10.0)
///         .check(Check::correctness("n=1000", |_ctx| Ok(String::new())));
///     Exercise {
///         id: "ex10",
///         slug: "histogram",
///         title: "Histogram of a byte stream",
///         dir: "exercises/ex10-histogram",
///         parts: vec![part],
///     }
/// }
/// ```
#[derive(Clone)]
pub struct Exercise {
    /// "ex01": what students and course pages say.
    pub id: &'static str,
    /// "pi": a second name the grader accepts.
    pub slug: &'static str,
    pub title: &'static str,
    /// Folder relative to the workspace root, e.g. "exercises/ex01-pi".
    pub dir: &'static str,
    pub parts: Vec<Part>,
}

impl Exercise {
    /// The full test name of one check: "ex01::shared::correct::n=1000003".
    pub fn test_name(&self, part: &Part, check: &Check) -> String {
        format!("{}::{}::{}::{}", self.id, part.name, check.kind.label(), check.name)
    }

    /// Each part's name with its checks' names (`correct::n=1000003`), in order.
    pub fn check_names(&self) -> Vec<(&'static str, Vec<String>)> {
        let of = |p: &Part| p.checks.iter().map(|c| format!("{}::{}", c.kind.label(), c.name)).collect();
        self.parts.iter().map(|p| (p.name, of(p))).collect()
    }

    /// "ex01-pi": the folder name, also accepted by the grader.
    pub fn folder_name(&self) -> &'static str {
        self.dir.rsplit('/').next().unwrap_or(self.dir)
    }
}

/// One `.cu` file the student writes, graded on its own: its stub is
/// `exercises/<folder>/<file>`, its solution `reference/<folder>/<file>`. Its
/// `points` are shared among its kinds of checks (60 % correctness, 15 %
/// structure, 25 % performance, among the kinds present), and structure and
/// performance count only once every correctness check of the part passes.
///
/// ```no_run
/// use kit::{Check, Part};
/// # fn correct(_: &kit::Ctx, _: usize) -> anyhow::Result<String> { Ok(String::new()) }
/// # fn few_atomics(_: &kit::Ctx) -> anyhow::Result<String> { Ok(String::new()) }
/// let mut part = Part::new("private", "kernels/histogram_private.cu", &["histogram_private"], 10.0);
/// for n in [1, 255, 100_003, 50_000_017] {
///     part = part.check(
///         Check::correctness(format!("n={n}"), move |ctx| correct(ctx, n)).heavy_if(n > kit::SIM_MAX_ELEMENTS),
///     );
/// }
/// let part = part.check(Check::structure("few-global-atomics", few_atomics));
/// ```
#[derive(Clone)]
pub struct Part {
    pub name: &'static str,
    /// Relative to the exercise folder, e.g. "kernels/pi_shared.cu".
    pub file: &'static str,
    /// The `extern "C" __global__` functions the file must define.
    pub kernels: &'static [&'static str],
    pub points: f64,
    pub checks: Vec<Check>,
}

impl Part {
    /// A part called `name` (the `part` in test names and `--part`), graded on
    /// `file` (relative to the exercise folder), which must define `kernels`,
    /// worth `points`. Example: [`Part`].
    pub fn new(name: &'static str, file: &'static str, kernels: &'static [&'static str], points: f64) -> Self {
        Self { name, file, kernels, points, checks: Vec::new() }
    }
    /// Adds a check (they run in this order, correctness first). Example: [`Part`].
    pub fn check(mut self, check: Check) -> Self {
        self.checks.push(check);
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    /// The numbers are right, on seeded inputs of many sizes.
    Correctness,
    /// The PTX shows the technique the exercise teaches.
    Structure,
    /// Faster than a yardstick timed in the same run.
    Performance,
}

impl CheckKind {
    pub fn label(self) -> &'static str {
        match self {
            CheckKind::Correctness => "correct",
            CheckKind::Structure => "structure",
            CheckKind::Performance => "perf",
        }
    }
}

pub type CheckFn = Arc<dyn Fn(&Ctx) -> Result<String> + Send + Sync>;

/// One graded check. Returns a note on success (shown in the report), an error
/// that explains itself on failure, or a [`Skip`] error when it cannot run here.
/// Its test is `exNN::part::kind::name`. Build one with [`Check::correctness`],
/// [`Check::structure`] or [`Check::performance`].
///
/// ```no_run
/// use kit::Check;
/// # fn correct(_: &kit::Ctx, _: usize) -> anyhow::Result<String> { Ok(String::new()) }
/// # fn share_of_copy(_: &kit::Ctx) -> anyhow::Result<String> { Ok(String::new()) }
/// # fn coalesced_stand_in(_: &kit::Ctx) -> anyhow::Result<String> { Ok(String::new()) }
/// let n = 100_003;
/// let c = Check::correctness(format!("n={n}"), move |ctx| correct(ctx, n)).heavy_if(n > kit::SIM_MAX_ELEMENTS);
/// let p = Check::performance("share-of-copy", share_of_copy)
///     .with_stand_in(|ctx| kit::measure::skip_unmeasurable(coalesced_stand_in(ctx)));
/// ```
#[derive(Clone)]
pub struct Check {
    /// Unique within the part, e.g. "n=1000003"; the test is "ex01::shared::correct::n=1000003".
    pub name: String,
    pub kind: CheckKind,
    pub run: CheckFn,
    /// Too big to run on the simulator in reasonable time (skipped there).
    pub heavy: bool,
    /// For a performance check: a judgement of the same lesson from the
    /// simulator's measured memory behaviour (sectors per request, bank
    /// conflicts, global traffic), used where no timing is possible and the
    /// course's policy asks for it. `None`: no sound stand-in exists.
    pub stand_in: Option<CheckFn>,
}

impl Check {
    /// A check that the results are right: seeded inputs (`ctx.rng()`) of one
    /// size or shape, poisoned outputs, a CPU reference, a message that names
    /// the element (`kit::check`). Name it by its case (`n=1000003`, `76x62`).
    ///
    /// ```no_run
    /// use kit::{args, Check, Ctx, LaunchConfig};
    ///
    /// fn correct(ctx: &Ctx, n: usize) -> anyhow::Result<String> {
    ///     let module = ctx.kernel_module("scale")?;
    ///     let gpu = module.gpu();
    ///     let x = ctx.shared("x", || kit::inputs::uniform_f32(&mut ctx.rng(), n, -1.0, 1.0));
    ///     let d_x = gpu.upload("x", &x)?;
    ///     let d_y = gpu.poisoned::<f32>("y", n)?;
    ///     let cfg = LaunchConfig::linear((n as u32).div_ceil(256), 256);
    ///     module.launch("scale", cfg, &args![&d_x, &d_y, n as i32])?;
    ///     let expected: Vec<f64> = x.iter().map(|&v| 2.0 * v as f64).collect();
    ///     kit::check::close("y", &expected, &d_y.read()?, 0.0, 0.0)?;
    ///     Ok(format!("{} blocks", cfg.grid.0))
    /// }
    /// let check = Check::correctness("n=1000", |ctx| correct(ctx, 1000));
    /// ```
    pub fn correctness(name: impl Into<String>, f: impl Fn(&Ctx) -> Result<String> + Send + Sync + 'static) -> Self {
        Self { name: name.into(), kind: CheckKind::Correctness, run: Arc::new(f), heavy: false, stand_in: None }
    }
    /// A check of the technique, measured on the simulator ([`Ctx::measure`]):
    /// what the kernel does to memory, never how its source is spelled. Wrap
    /// it in [`crate::measure::unless_unmeasurable`] and require the measured
    /// run's result to be right ([`crate::measure::require_right_result`]).
    ///
    /// ```no_run
    /// use kit::{args, Check, Ctx, LaunchConfig};
    /// use kit::measure::{require_right_result, unless_unmeasurable};
    ///
    /// fn coalesced(ctx: &Ctx) -> anyhow::Result<String> {
    ///     unless_unmeasurable((|| -> anyhow::Result<String> {
    ///         let m = ctx.measure("scale", |module| {
    ///             let gpu = module.gpu();
    ///             let x: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    ///             let (d_x, d_y) = (gpu.upload("x", &x)?, gpu.poisoned::<f32>("y", 4096)?);
    ///             module.launch("scale", LaunchConfig::linear(16, 256), &args![&d_x, &d_y, 4096i32])?;
    ///             let y = d_y.read()?;
    ///             require_right_result(kit::require(y.iter().zip(&x).all(|(y, x)| *y == 2.0 * x), || {
    ///                 "the measured run's output is wrong".into()
    ///             }))
    ///         })?;
    ///         let sectors = m.load_sectors_per_request();
    ///         kit::require(sectors <= 8.0, || format!("{sectors:.1} sectors per load request; 4 when coalesced"))?;
    ///         Ok(format!("{sectors:.1} sectors per request"))
    ///     })())
    /// }
    /// let check = Check::structure("coalesced", coalesced);
    /// ```
    pub fn structure(name: impl Into<String>, f: impl Fn(&Ctx) -> Result<String> + Send + Sync + 'static) -> Self {
        Self { name: name.into(), kind: CheckKind::Structure, run: Arc::new(f), heavy: false, stand_in: None }
    }
    /// A check of speed: the student's kernel timed with
    /// [`crate::timed::student`] against a yardstick timed in the same run
    /// ([`Ctx::time_yardstick`]), compared with [`crate::perf::require_share`]
    /// or [`crate::perf::require_speedup`]. The crate-level example
    /// ([`crate`]) shows a whole one.
    ///
    /// ```no_run
    /// # fn share_of_copy(_: &kit::Ctx) -> anyhow::Result<String> { Ok(String::new()) }
    /// let check = kit::Check::performance("share-of-copy", share_of_copy);
    /// ```
    pub fn performance(name: impl Into<String>, f: impl Fn(&Ctx) -> Result<String> + Send + Sync + 'static) -> Self {
        Self { name: name.into(), kind: CheckKind::Performance, run: Arc::new(f), heavy: false, stand_in: None }
    }
    /// Marks a check too big for the simulator when `cond` holds: it then runs
    /// on a GPU only. Every part keeps smaller cases that the simulator runs.
    /// Usually `.heavy_if(n > kit::SIM_MAX_ELEMENTS)`; example: [`Check`].
    pub fn heavy_if(mut self, cond: bool) -> Self {
        self.heavy = cond;
        self
    }

    /// Gives a performance check a measured stand-in (see [`Check::stand_in`]),
    /// wrapped in [`crate::measure::skip_unmeasurable`]: a structure check of
    /// the same lesson, used only where nothing can be timed and the course's
    /// policy says so (`--perf-without-gpu simulate`). Example: [`Check`].
    pub fn with_stand_in(mut self, f: impl Fn(&Ctx) -> Result<String> + Send + Sync + 'static) -> Self {
        self.stand_in = Some(Arc::new(f));
        self
    }

    /// Structure checks read only the PTX; the others need a GPU (real or simulated).
    pub fn needs_gpu(&self) -> bool {
        self.kind != CheckKind::Structure
    }
}

/// Inputs with more elements than this are left to a real GPU: the simulator
/// runs some 10^8 thread-instructions a second, a GPU 10^4 times more. Mark
/// larger cases `.heavy_if(n > kit::SIM_MAX_ELEMENTS)` ([`Check::heavy_if`]).
pub const SIM_MAX_ELEMENTS: usize = 2_000_000;

/// Kept here too (it lives in [`crate::skip`]), where exercise code and the grader name it.
pub use crate::skip::Skip;

/// What is shared by every check of one grading run.
pub struct RunEnv {
    pub seed: u64,
    pub gpu: Option<Gpu>,
    compiler: Option<Compiler>,
    options: CompileOptions,
    /// By name and source: two exercises may name their yardsticks alike
    /// (`grader new exercise` writes `copy_rows` into every `rows` exercise).
    yardsticks: Mutex<HashMap<(&'static str, &'static str), Arc<Module>>>,
    copy_gbps: OnceLock<Result<f64, String>>,
    /// The key of every timed input ([`crate::timed::Fresh`]): drawn from the
    /// operating system's entropy for each run, never from `seed`, so no
    /// kernel (nor anyone who read the README or the batch's seed) can know
    /// the inputs it will be timed on.
    secret: u64,
    /// The key of the shapes structure checks measure ([`Ctx::secret_rng`]):
    /// fresh for each run, or the one [`SHAPES_SECRET_ENV`] gives.
    shapes_secret: u64,
    /// Timed inputs made so far in this run: each gets a key of its own.
    fresh_inputs: std::sync::atomic::AtomicU64,
    /// Zeros twice the L2 cache, read after every fill of a timed input.
    settle: OnceLock<Arc<crate::gpu::DeviceBuffer<u32>>>,
}

/// The key of the shapes structure checks measure, as a number in hex: set by
/// a run for its profiler's child and by a batch for its workers, so that the
/// GPU's counters (`crate::counters`) count the very launches the simulator
/// measured. Drawn from the operating system's entropy, never written into a
/// submission's folder: no kernel can know it.
pub const SHAPES_SECRET_ENV: &str = "CUDA_LAB_SHAPES_SECRET";

/// [`SHAPES_SECRET_ENV`]'s key where it is set, else a fresh one.
pub fn shapes_secret() -> u64 {
    std::env::var(SHAPES_SECRET_ENV)
        .ok()
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or_else(rand::random)
}

impl RunEnv {
    /// The same run measuring the shapes of `secret` ([`shapes_secret`]).
    pub fn with_shapes_secret(mut self, secret: u64) -> Self {
        self.shapes_secret = secret;
        self
    }

    /// The same run with every timed input keyed by `secret` instead of the
    /// operating system's entropy: for a test whose check is probabilistic
    /// (ex03's Freivalds vector misses an error with a small probability),
    /// which must give the same outcome on every run. Never for grading.
    pub fn with_secret(mut self, secret: u64) -> Self {
        self.secret = secret;
        self
    }

    pub fn new(seed: u64, gpu: Option<Gpu>, compiler: Option<Compiler>, options: CompileOptions) -> Self {
        Self {
            seed,
            gpu,
            compiler,
            options,
            yardsticks: Mutex::default(),
            copy_gbps: OnceLock::new(),
            secret: rand::random(),
            shapes_secret: shapes_secret(),
            fresh_inputs: Default::default(),
            settle: OnceLock::new(),
        }
    }

    /// The run's scratch buffer for [`crate::timed::Fresh::fill`]'s settling
    /// read: zeros twice the size of `gpu`'s L2 cache, allocated once.
    pub(crate) fn settle_scratch(&self, gpu: &Gpu) -> Result<Arc<crate::gpu::DeviceBuffer<u32>>> {
        if let Some(s) = self.settle.get() {
            return Ok(s.clone());
        }
        let words = (2 * gpu.info().l2_cache_bytes as usize / 4).max(1 << 20).next_multiple_of(4);
        let scratch = Arc::new(gpu.zeros::<u32>("fresh.settle", words)?);
        Ok(self.settle.get_or_init(|| scratch).clone())
    }

    /// A key for one timed input, never the same twice in a run: the run's
    /// secret, the check and the input's name, hashed with a counter.
    pub(crate) fn fresh_key(&self, check: &str, input: &str) -> [u32; 2] {
        use sha2::Digest;
        let count = self.fresh_inputs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut h = sha2::Sha256::new();
        for part in [&self.secret.to_le_bytes()[..], &count.to_le_bytes(), check.as_bytes(), b"/", input.as_bytes()] {
            h.update(part);
        }
        let d = h.finalize();
        [u32::from_le_bytes([d[0], d[1], d[2], d[3]]), u32::from_le_bytes([d[4], d[5], d[6], d[7]])]
    }
}

/// The compiled student file of one part; loaded on the GPU on first use.
pub struct PartBuild {
    pub ptx: String,
    module: OnceLock<Result<Module, BackendError>>,
}

impl PartBuild {
    pub fn new(ptx: String) -> Self {
        Self { ptx, module: OnceLock::new() }
    }
}

/// What a check works with, and where what it records goes ([`crate::record`]).
pub struct Ctx<'r> {
    pub check_name: &'r str,
    pub env: &'r RunEnv,
    pub build: &'r PartBuild,
    recorder: Arc<Recorder>,
    /// Whether the check asked for the GPU ([`Ctx::asked_for_gpu`]).
    asked_for_gpu: std::sync::atomic::AtomicBool,
}

impl<'r> Ctx<'r> {
    /// The context of check `check_name`, with an empty record.
    pub fn new(check_name: &'r str, env: &'r RunEnv, build: &'r PartBuild) -> Self {
        let recorder = Arc::new(Recorder::for_check(check_name));
        Self { check_name, env, build, recorder, asked_for_gpu: Default::default() }
    }

    /// Runs `check` (a check's function, or its stand-in) in this context:
    /// what it records (performance figures, mismatches, measured memory
    /// behaviour, output digests) goes into this context's record.
    pub fn run<R>(&self, check: impl FnOnce(&Self) -> R) -> R {
        let _recording = self.recorder.install();
        let _check = crate::gpu_lock::CheckScope::enter();
        check(self)
    }

    /// [`Ctx::run`] of a check's function, where a panic is the check's
    /// failure (a bug of the check, said as such), not the run's end.
    pub fn run_caught(&self, check: impl FnOnce(&Self) -> Result<String>) -> Result<String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(check))).unwrap_or_else(|p| {
            let text = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
            Err(anyhow!("the check itself panicked: {}", text.unwrap_or_default()))
        })
    }

    /// What the check recorded while it ran in this context (and forgets it).
    pub fn take_record(&self) -> Record {
        self.recorder.take()
    }

    /// Whether the check asked for the run's GPU ([`Ctx::gpu`], also through
    /// its module or a yardstick): a check run ahead without one
    /// (grader/src/ahead.rs) whose outcome may then differ from the run's.
    pub fn asked_for_gpu(&self) -> bool {
        self.asked_for_gpu.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// This check's own seeded generator: the same inputs for the same seed
    /// and check, whatever else runs (filters, other checks, batches).
    ///
    /// ```no_run
    /// # fn demo(ctx: &kit::Ctx) {
    /// let data: Vec<u8> = kit::inputs::bytes(&mut ctx.rng(), 100_003);
    /// # }
    /// ```
    pub fn rng(&self) -> ChaCha8Rng {
        rng_for(self.env.seed, self.check_name)
    }

    /// A generator of this check's seed for one purpose (`what`), independent
    /// of [`Ctx::rng`]'s: e.g. the elements checked after timed launch `n`.
    ///
    /// ```no_run
    /// use rand::Rng;
    /// # fn demo(ctx: &kit::Ctx, launch: usize, n: usize) {
    /// let mut rng = ctx.rng_for(&format!("launch {launch}"));
    /// let sample: Vec<usize> = (0..256).map(|_| rng.random_range(0..n)).collect();
    /// # }
    /// ```
    pub fn rng_for(&self, what: &str) -> ChaCha8Rng {
        rng_for(self.env.seed, &format!("{}/{what}", self.check_name))
    }

    /// [`Ctx::rng_for`] of the check's part (`ex10::coarse`) rather than of
    /// the check: inputs that several checks of a part judge one launch on
    /// ([`crate::measure::measure_ptx_sampled_once`]).
    pub fn part_rng_for(&self, what: &str) -> ChaCha8Rng {
        rng_for(self.env.seed, &format!("{}/{what}", self.part_name()))
    }

    /// [`Ctx::secret_rng`] of the check's part, as [`Ctx::part_rng_for`].
    pub fn part_secret_rng(&self, what: &str) -> ChaCha8Rng {
        rng_for(self.env.shapes_secret, &format!("{}/{what}", self.part_name()))
    }

    /// The check's name up to its part (`ex10::coarse` of `ex10::coarse::structure::interleaved-reads`).
    fn part_name(&self) -> &str {
        self.check_name.match_indices("::").nth(1).map_or(self.check_name, |(i, _)| &self.check_name[..i])
    }

    /// A generator keyed by the run's shapes secret ([`shapes_secret`]), never
    /// by the seed: for what a kernel must not be able to know, such as the
    /// lengths a measured check runs on ([`crate::measure::sizes_across`]).
    /// What it draws differs from run to run (a batch's parts and a run's
    /// profiler child share one), so a check that uses it must give the same
    /// verdict for every draw.
    pub fn secret_rng(&self, what: &str) -> ChaCha8Rng {
        rng_for(self.env.shapes_secret, &format!("{}/{what}", self.check_name))
    }

    /// The run's GPU (or simulator); a [`Skip`] where there is none
    /// (`--backend none`). A check usually takes it from its module
    /// ([`Ctx::kernel_module`], then [`Module::gpu`]).
    pub fn gpu(&self) -> Result<&'r Gpu> {
        self.asked_for_gpu.store(true, std::sync::atomic::Ordering::Relaxed);
        self.env.gpu.as_ref().ok_or_else(|| Skip("no GPU in this run".into()).into())
    }

    /// The student's compiled file, loaded on the GPU.
    pub fn module(&self) -> Result<&'r Module> {
        let gpu = self.gpu()?;
        let loaded = self.build.module.get_or_init(|| {
            // Kept typed, so that the verdict can say `load-failed`.
            gpu.load(&self.build.ptx).map_err(|e| {
                e.downcast::<BackendError>().unwrap_or_else(|e| BackendError::LoadFailed(format!("{e:#}")))
            })
        });
        loaded.as_ref().map_err(|e| match e {
            // The simulator's blind spot, which says so itself: nothing failed to load on a GPU.
            BackendError::NotSimulated(_) => anyhow::Error::new(e.clone()),
            _ => {
                let why = too_much_static_shared(&self.build.ptx, gpu.info().max_shared_bytes_per_block);
                anyhow::Error::new(e.clone()).context(format!("the compiled file could not be loaded on the GPU{why}"))
            }
        })
    }

    /// The student's module after checking that it defines `kernel`; explains a wrong
    /// name or a missing `extern "C"` rather than failing with a driver error
    /// (verdict `missing-kernel`). The module's [`Module::gpu`] is where to
    /// allocate. Without a GPU (`--backend none`) it fails with a [`Skip`].
    ///
    /// ```no_run
    /// # fn demo(ctx: &kit::Ctx) -> anyhow::Result<()> {
    /// let module = ctx.kernel_module("histogram_private")?;
    /// let gpu = module.gpu();
    /// let bins = gpu.zeros::<u32>("bins", 256)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn kernel_module(&self, kernel: &str) -> Result<&'r Module> {
        self.kernel_ptx(kernel)?;
        self.module()
    }

    /// The PTX of one of the student's kernels.
    pub fn kernel_ptx(&self, kernel: &str) -> Result<KernelPtx<'r>> {
        Ok(inspect::kernel(&self.build.ptx, kernel).ok_or_else(|| MissingKernel::explain(&self.build.ptx, kernel))?)
    }

    /// A kernel of the grader's own (a baseline pattern or the copy yardstick),
    /// compiled once per run: the exercise's `yardsticks/*.cu`, timed with
    /// [`Ctx::time_yardstick`] against the student's kernel in the same run.
    ///
    /// ```no_run
    /// # fn demo(ctx: &kit::Ctx) -> anyhow::Result<()> {
    /// // in the exercise crate: include_str!("../yardsticks/copy_bytes.cu")
    /// # const COPY_BYTES: &str = "";
    /// let copy = ctx.yardstick("copy_bytes", COPY_BYTES)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn yardstick(&self, name: &'static str, source: &'static str) -> Result<Arc<Module>> {
        let gpu = self.gpu()?;
        let mut cache = self.env.yardsticks.lock().unwrap();
        if let Some(m) = cache.get(&(name, source)) {
            return Ok(m.clone());
        }
        let compiler = self.env.compiler.as_ref().ok_or_else(|| anyhow!("no CUDA compiler available"))?;
        let ptx = compiler
            .compile(&SourceFile::from_text(format!("<grader>/{name}.cu"), source), &self.env.options)
            .with_context(|| format!("compiling the grader's yardstick `{name}`"))?;
        let module = Arc::new(gpu.load_graders(&ptx.text)?);
        cache.insert((name, source), module.clone());
        Ok(module)
    }

    /// Device-to-device copy bandwidth (bytes read + written per second, in GB/s),
    /// measured once per run on a buffer several times larger than the L2 cache
    /// (and, in a batch worker, re-measured like any yardstick: [`crate::shared`]).
    /// Call it first in a performance check: where nothing can be timed (the
    /// simulator) it fails with a [`Skip`] before anything large is allocated.
    ///
    /// ```no_run
    /// # fn demo(ctx: &kit::Ctx) -> anyhow::Result<String> {
    /// let copy_gbps = ctx.copy_bandwidth_gbps()?; // skips here where nothing can be timed
    /// // ... allocate, time, compare ...
    /// Ok(format!("(the kit's copy: {copy_gbps:.0} GB/s)"))
    /// # }
    /// ```
    pub fn copy_bandwidth_gbps(&self) -> Result<f64> {
        let measured = self.env.copy_gbps.get_or_init(|| {
            let timing = crate::shared::yardstick_timing(self.env.seed, "<grader>/copy".into(), || self.measure_copy());
            let gbps = |t: Timing| Ok::<f64, anyhow::Error>(t.gb_per_s(2 * bandwidth_elements(self.gpu()?) * 4));
            timing.and_then(gbps).map_err(|e| format!("{e:#}"))
        });
        measured.clone().map_err(|e| anyhow!("measuring the copy bandwidth failed: {e}"))
    }

    fn measure_copy(&self) -> Result<Timing> {
        let gpu = self.gpu()?;
        let copy = self.yardstick("copy", include_str!("../kernels/copy.cu"))?;
        let floats = bandwidth_elements(gpu);
        let input = gpu.zeros::<f32>("copy.in", floats)?;
        let output = gpu.zeros::<f32>("copy.out", floats)?;
        let n4 = (floats / 4) as u64;
        let cfg = LaunchConfig::linear(gpu.info().multiprocessors * 8, 256);
        perf::measure_trusted(&copy, "copy_f32", cfg, &crate::args![&input, &output, n4], || Ok(()))
    }

    /// Times one of the grader's yardsticks (`kernel` of `yardstick`, a module
    /// from [`Ctx::yardstick`]) with `reset` before every launch, as the
    /// student's kernel it is compared with gets its `prepare`. Its inputs
    /// come from this check's seeded generator, so they are the same for every
    /// student: a batch worker times it once and reuses the timing (re-timing
    /// it every few uses, [`crate::shared`]) without launching it in between.
    /// What it writes is the grader's own: no check reads it afterwards.
    ///
    /// ```no_run
    /// use kit::LaunchConfig;
    /// # fn demo(ctx: &kit::Ctx, gpu: &kit::Gpu, input: &kit::timed::Fresh<u8>, out: &kit::DeviceBuffer<u8>) -> anyhow::Result<()> {
    /// # const COPY_BYTES: &str = "";
    /// let n = input.len();
    /// let copy = ctx.yardstick("copy_bytes", COPY_BYTES)?;
    /// let cfg = LaunchConfig::linear((n as u32).div_ceil(256), 256);
    /// input.fill(0)?; // any launch's values: the yardstick is the grader's
    /// let args = [input.arg(), out.arg(), (n as i32).into()];
    /// let ideal = ctx.time_yardstick(&copy, "copy_bytes", cfg, &args, || out.poison())?;
    /// let ideal_gbps = ideal.gb_per_s(2 * n);
    /// # Ok(())
    /// # }
    /// ```
    pub fn time_yardstick(
        &self,
        yardstick: &Module,
        kernel: &str,
        cfg: LaunchConfig,
        args: &[crate::backend::Arg],
        mut reset: impl FnMut() -> Result<()>,
    ) -> Result<Timing> {
        self.time_yardstick_keyed(yardstick, kernel, kernel, cfg, args, &mut reset)
    }

    /// [`Ctx::time_yardstick`], cached under `key` within the check.
    fn time_yardstick_keyed(
        &self,
        yardstick: &Module,
        kernel: &str,
        key: &str,
        cfg: LaunchConfig,
        args: &[crate::backend::Arg],
        reset: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Timing> {
        let gpu = self.gpu()?;
        // Nothing is timed on a backend that cannot time: no cache either.
        if !gpu.capabilities().times_kernels {
            return perf::measure_trusted(yardstick, kernel, cfg, args, reset);
        }
        crate::shared::yardstick_timing(self.env.seed, format!("{}/{key}", self.check_name), || {
            perf::measure_trusted(yardstick, kernel, cfg, args, reset)
        })
    }

    /// [`Ctx::time_yardstick`] over several placements of the yardstick's
    /// buffers, `placements[k]` its arguments and `reset(k)` run before each
    /// of its launches, its samples pooled: for a yardstick whose time moves
    /// with where its buffers lie in memory (ex07's naive transpose, whose
    /// strided writes take 1.026-1.082 ms on an H200 as its output moves
    /// between allocations), so that every process, whatever its
    /// allocations, gets about the same figure.
    pub fn time_yardstick_placed(
        &self,
        yardstick: &Module,
        kernel: &str,
        cfg: LaunchConfig,
        placements: &[Vec<crate::backend::Arg>],
        mut reset: impl FnMut(usize) -> Result<()>,
    ) -> Result<Timing> {
        let mut pooled = Timing::default();
        for (k, args) in placements.iter().enumerate() {
            // Each placement is its own yardstick timing (cached and re-timed on its own).
            let key = format!("{kernel}@{k}");
            let one = self.time_yardstick_keyed(yardstick, kernel, &key, cfg, args, &mut || reset(k))?;
            pooled.samples_ms.extend(one.samples_ms);
            pooled.launches += one.launches;
        }
        Ok(pooled)
    }

    /// A value that depends only on the seed and this check (its seeded inputs,
    /// their CPU reference), computed once per process and shared by every
    /// student a batch worker grades. `what` names it within the check.
    ///
    /// ```no_run
    /// # fn demo(ctx: &kit::Ctx, n: usize) {
    /// let inputs = ctx.shared("bytes+bins", || {
    ///     let data = kit::inputs::bytes(&mut ctx.rng(), n);
    ///     let mut bins = [0u32; 256];
    ///     data.iter().for_each(|&b| bins[b as usize] += 1);
    ///     (data, bins)
    /// });
    /// let (data, expected) = (&inputs.0, &inputs.1);
    /// # }
    /// ```
    pub fn shared<T: Send + Sync + 'static>(&self, what: &str, compute: impl FnOnce() -> T) -> std::sync::Arc<T> {
        crate::shared::value(self.env.seed, format!("{}/{what}", self.check_name), compute)
    }
}

/// The usual reason the driver refuses a module that compiled: a kernel declares
/// more static `__shared__` memory than a block may have. Empty when none does.
fn too_much_static_shared(ptx: &str, limit: u32) -> String {
    inspect::entries(ptx)
        .iter()
        .filter_map(|name| Some((name, inspect::kernel(ptx, name)?.static_shared_bytes())))
        .find(|&(_, bytes)| bytes > limit as usize)
        .map(|(name, bytes)| {
            format!(
                " (`{name}` declares {bytes} bytes of static `__shared__` memory; a block may have at most {limit})"
            )
        })
        .unwrap_or_default()
}

/// Elements (4 bytes each) for a bandwidth measurement: 8× the L2 cache, at
/// least 64 MiB, at most an eighth of the device memory.
pub fn bandwidth_elements(gpu: &Gpu) -> usize {
    bandwidth_elements_of(gpu.info().l2_cache_bytes, gpu.info().global_memory_bytes)
}

fn bandwidth_elements_of(l2_cache_bytes: u64, global_memory_bytes: u64) -> usize {
    let bytes = (l2_cache_bytes * 8).max(64 << 20).min(global_memory_bytes / 8);
    (bytes as usize / 4) & !1023
}

/// The L2 cache of the GPU whose timed sizes the simulator's measurements at
/// the timed size take (a few sampled blocks of that launch,
/// kit::measure::BlockSample): an H100's, 50 MiB as its driver reports it.
/// Another GPU times at the sizes of its own L2; the grid is of the same
/// order, far above every measured shape, which is what the measurement needs.
pub const TIMED_L2_BYTES: u64 = 50 << 20;

/// [`bandwidth_elements`] on the GPU of [`TIMED_L2_BYTES`].
pub fn timed_bandwidth_elements() -> usize {
    bandwidth_elements_of(TIMED_L2_BYTES, u64::MAX)
}

/// Rows of a timed image `width` floats wide: an image read and one written
/// together move [`bandwidth_elements`] (8× the L2), so DRAM feeds the kernel.
pub fn image_rows(gpu: &Gpu, width: usize) -> usize {
    image_rows_of(bandwidth_elements(gpu), width)
}

/// [`image_rows`] of a GPU whose [`bandwidth_elements`] are `elements`.
pub fn image_rows_of(elements: usize, width: usize) -> usize {
    (elements / 2 / width).max(1)
}

/// The student's file has no kernel of the name the exercise asks for: it is
/// misspelt, C++-mangled (no `extern "C"`), or there is no `__global__` at all.
#[derive(Debug, Clone, thiserror::Error)]
#[error("no kernel named `{kernel}`: {why}")]
pub struct MissingKernel {
    pub kernel: String,
    /// What the file has instead, and what to change.
    pub why: String,
}

impl MissingKernel {
    fn explain(ptx: &str, kernel: &str) -> Self {
        let found = inspect::entries(ptx);
        let why = if let Some(mangled) = found.iter().find(|e| e.starts_with("_Z") && e.contains(kernel)) {
            format!(
                "the file has `{mangled}`, a C++-mangled name. \
                 Keep the `extern \"C\"` in front of `__global__` so the grader can find it"
            )
        } else if found.is_empty() {
            "the file defines no `__global__` function at all".into()
        } else {
            format!("the file defines {}; keep the name from the stub", found.join(", "))
        };
        Self { kernel: kernel.into(), why }
    }
}

/// Fails unless `cond`, with a message that explains what the check looks for.
///
/// ```
/// let atomics_per_byte = 0.004;
/// kit::require(atomics_per_byte <= 0.01, || {
///     format!("{atomics_per_byte:.3} global atomics per byte: merge a per-block histogram once per bin")
/// })
/// .unwrap();
/// ```
pub fn require(cond: bool, explanation: impl FnOnce() -> String) -> Result<()> {
    if cond {
        Ok(())
    } else {
        bail!(explanation())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_image_and_its_output_outgrow_the_l2() {
        let gpu = Gpu::simulator();
        for width in [1000, 4096, 7919] {
            let rows = image_rows(&gpu, width);
            assert!(2 * rows * width * 4 >= 8 * gpu.info().l2_cache_bytes as usize - 2 * width * 4, "{width}");
        }
    }
}
