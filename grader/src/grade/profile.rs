//! The simulator's memory profiles of one check's launches, one per kernel.
//! Apart because the backend keeps them across checks: each trial must drop
//! what earlier work left and gather only its own.

use kit::profile::MemoryProfile;
use kit::RunEnv;

/// Drops profiles left by earlier work (the copy-bandwidth calibration, say).
pub(super) fn discard_profiles(env: &RunEnv) {
    if let Some(gpu) = &env.gpu {
        gpu.backend().take_profiles();
    }
}

/// The simulator's memory profiles of this check's launches, one per kernel.
pub(super) fn collect_profiles(env: &RunEnv) -> Vec<MemoryProfile> {
    let mut per_kernel: Vec<MemoryProfile> = Vec::new();
    for p in env.gpu.as_ref().map(|g| g.backend().take_profiles()).unwrap_or_default() {
        match per_kernel.iter_mut().find(|k| k.kernel == p.kernel) {
            Some(k) => k.add(&p),
            None => per_kernel.push(p),
        }
    }
    per_kernel
}
