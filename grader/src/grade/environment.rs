//! The machine a run grades on: the GPU (or the simulator, or none) and the
//! compiler, found once and said in one line each. Apart because a batch
//! worker keeps them for every part it grades, and because what is found
//! here is what the report's `environment` says.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use anyhow::Result;
use kit::Gpu;
use ptx_build::Compiler;

use super::{BackendChoice, Options};
use crate::report::Environment;

/// Overrides the PTX cache folder (default `<root>/target/ptx-cache`): `grader
/// batch` points every student's run at one cache that it fills ahead of time.
pub const PTX_CACHE_ENV: &str = "CUDA_LAB_PTX_CACHE";

/// A batch worker grades part after part in one process: with this set, the
/// GPU (one CUDA context) and the compiler are opened once and kept.
static KEPT: OnceLock<Mutex<Option<Opened>>> = OnceLock::new();

/// What [`open_environment`] finds: the environment's report, the GPU, the compiler.
pub(super) type Opened = (Environment, Option<Gpu>, Result<Compiler, String>);

/// Keeps the environment of the next [`run`](super::run) for every later one (see `batch::worker`).
pub fn keep_environment() {
    let _ = KEPT.set(Mutex::new(None));
}

pub(super) fn open_environment(opts: &Options) -> Result<Opened> {
    let Some(kept) = KEPT.get() else { return open_environment_now(opts) };
    let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
    if kept.is_none() {
        *kept = Some(open_environment_now(opts)?);
    }
    Ok(kept.clone().expect("opened above"))
}

/// Finds the compiler and the GPU, saying in one line each what is missing.
fn open_environment_now(opts: &Options) -> Result<Opened> {
    let mut env = Environment::default();
    let cache_dir = std::env::var_os(PTX_CACHE_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::batch::intake::outputs_root(&opts.root).join("target").join("ptx-cache"));
    let compiler = Compiler::from_env().map(|c| c.with_cache_dir(cache_dir)).map_err(|e| e.to_string());
    // A missing compiler is said once, by `without_compiler`.
    if let Ok(c) = &compiler {
        env.compiler = Some(c.version().to_string());
        env.compiler_kind = Some(c.kind().name().to_string());
        env.device_headers = Some(c.header_source());
    }
    let gpu = match opts.backend {
        BackendChoice::None => {
            env.note = Some("--backend none: compiled and checked the PTX only; GPU checks ignored".into());
            None
        }
        BackendChoice::Sim => Some(Gpu::simulator()),
        BackendChoice::LuckySim => Some(Gpu::new(Box::new(kit::backend::sim::SimBackend::lucky()), opts.timeout)),
        BackendChoice::Auto | BackendChoice::Cuda => match Gpu::cuda(opts.timeout) {
            Ok(gpu) => Some(gpu),
            Err(e) if opts.backend == BackendChoice::Auto => {
                let note = format!(
                    "{e}. Running the kernels on the PTX simulator instead: the largest inputs are left to a \
                     real GPU, and the line `performance:` below says how timed checks are graded here"
                );
                println!("{note}");
                env.note = Some(note);
                Some(Gpu::simulator())
            }
            Err(e) => anyhow::bail!("--backend cuda: {e}"),
        },
    };
    match &gpu {
        Some(g) => {
            let i = g.info();
            env.backend = i.backend.clone();
            env.gpu = Some(i.name.clone());
            env.compute_capability = Some(format!("{}.{}", i.compute_capability.0, i.compute_capability.1));
            env.driver = i.driver_version.clone();
            match &i.driver_version {
                Some(driver) => println!(
                    "GPU: {} (compute capability {}.{}, driver {driver})",
                    i.name, i.compute_capability.0, i.compute_capability.1
                ),
                None => println!("Kernels run on {}", i.name),
            }
        }
        None => env.backend = "none".into(),
    }
    Ok((env, gpu, compiler))
}

/// The compiler of the grader's own yardsticks. The timed thresholds are ratios
/// to yardsticks compiled by NVRTC (each CALIBRATION.md); clang compiles some of
/// them differently (the interleaved reduction of ex08 runs twice as fast on the
/// H100), which would move the bar under a student who only chose a compiler.
/// So where kernels are timed, NVRTC compiles them whenever it loads here.
pub(super) fn yardstick_compiler(students: Compiler, can_time: bool) -> Compiler {
    if !can_time || students.kind() == ptx_build::CompilerKind::Nvrtc {
        return students;
    }
    match Compiler::nvrtc() {
        Ok(nvrtc) => match students.cache_dir() {
            Some(dir) => nvrtc.with_cache_dir(dir),
            None => nvrtc,
        },
        Err(_) => students,
    }
}
