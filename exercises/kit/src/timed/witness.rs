//! The witness of a student's timing: a grader kernel (`fresh_witness` in
//! `kernels/fresh.cu`) timed right after each of the student's launches once
//! their samples spread, sized to last about as long (kit::perf::judge says
//! what the two spreads mean). A check's timed inputs ([`super::Fresh`])
//! offer it, from the generator they were made with and the run's settling
//! scratch, where kernels are timed; [`current`] finds it for the timing
//! that follows on the same thread and GPU.

use std::cell::RefCell;
use std::sync::Arc;

use anyhow::Result;

use crate::backend::{Backend, LaunchConfig};
use crate::gpu::{DeviceBuffer, Gpu, Module};

/// The witness kernel and what it reads.
#[derive(Clone)]
pub(crate) struct WitnessKernel {
    module: Arc<Module>,
    scratch: Arc<DeviceBuffer<u32>>,
    sink: Arc<DeviceBuffer<u32>>,
}

/// The witness's length is the student's median within these bounds (ms):
/// a launch much shorter than a millisecond spreads by its launch overhead
/// alone, and one much longer only costs time.
const WITNESS_MS: (f64, f64) = (1.0, 50.0);
/// The most passes over the scratch one witness launch makes.
const MAX_REPS: u32 = 4096;

thread_local! {
    static WITNESS: RefCell<Option<WitnessKernel>> = const { RefCell::new(None) };
}

/// Offers `module`'s witness kernel, reading `scratch`, to the timings that
/// follow on this thread (a check's timed inputs do, [`super::Fresh`]).
pub(crate) fn offer(module: Arc<Module>, scratch: Arc<DeviceBuffer<u32>>) -> Result<()> {
    let sink = Arc::new(module.gpu().zeros::<u32>("fresh.witness", 1)?);
    WITNESS.with(|w| *w.borrow_mut() = Some(WitnessKernel { module, scratch, sink }));
    Ok(())
}

/// The witness offered on this thread for `gpu`, if any.
pub(crate) fn current(gpu: &Gpu) -> Option<WitnessKernel> {
    let same = |w: &WitnessKernel| {
        std::ptr::addr_eq(w.module.gpu().backend() as *const dyn Backend, gpu.backend() as *const dyn Backend)
    };
    WITNESS.with(|w| w.borrow().clone()).filter(same)
}

impl WitnessKernel {
    /// Times one launch of the witness, sized (on the first call, into
    /// `sizing`: 16-byte words and passes) to last about `target_ms`.
    pub(crate) fn time(&self, target_ms: f64, sizing: &mut Option<(u64, u32)>) -> Result<f64> {
        let full = (self.scratch.len() / 4) as u64;
        let (n4, reps) = match *sizing {
            Some(s) => s,
            None => {
                let target = target_ms.clamp(WITNESS_MS.0, WITNESS_MS.1);
                // One pass over the whole scratch, twice (the first may pay for a cold start).
                let once = self.launch(full, 1)?.min(self.launch(full, 1)?);
                let s = size_for(target, once, full);
                *sizing = Some(s);
                s
            }
        };
        self.launch(n4, reps)
    }

    fn launch(&self, n4: u64, reps: u32) -> Result<f64> {
        let gpu = self.module.gpu();
        let blocks = gpu.info().multiprocessors * 8;
        let args = [self.scratch.arg(), n4.into(), reps.into(), self.sink.arg()];
        let ms = crate::perf::time_launch(gpu, &mut || {
            self.module.launch_async("fresh_witness", LaunchConfig::linear(blocks, 256), &args)
        })?;
        gpu.finish()?;
        Ok(ms)
    }
}

/// Words and passes for a witness of `target_ms`, where one pass over `full`
/// words took `once_ms`: fewer words for a short target, more passes for a
/// long one.
fn size_for(target_ms: f64, once_ms: f64, full: u64) -> (u64, u32) {
    if once_ms.is_nan() || once_ms <= 0.0 {
        return (full, 1);
    }
    let ratio = target_ms / once_ms;
    if ratio <= 1.0 {
        (((full as f64 * ratio) as u64).clamp(1024.min(full), full), 1)
    } else {
        (full, (ratio.round() as u32).clamp(1, MAX_REPS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_witness_is_sized_to_the_target() {
        assert_eq!(size_for(10.0, 1.0, 1 << 20), (1 << 20, 10));
        assert_eq!(size_for(0.5, 1.0, 1 << 20), (1 << 19, 1));
        assert_eq!(size_for(1e9, 1.0, 1 << 20), (1 << 20, MAX_REPS));
        assert_eq!(size_for(1.0, 0.0, 1 << 20), (1 << 20, 1), "a pass too quick to time");
        assert_eq!(size_for(1e-9, 1.0, 1 << 20), (1024, 1));
    }
}
