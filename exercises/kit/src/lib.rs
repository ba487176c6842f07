//! The host-side kit every exercise uses: the GPU seam, seeded inputs, checks
//! that explain themselves, PTX inspection and event timing.

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
