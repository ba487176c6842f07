//! What a batch does where the TA does not say: how long a correctness check
//! may run, and how many workers share a GPU. Both follow from the machine
//! (is there a GPU, how much memory), so the default command is also the fast
//! one on a grading server and still safe on a small GPU or without one.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::Options;
use crate::check_limits::{FromReference, DEFAULT_MULTIPLE};
use crate::grade::BackendChoice;

/// Workers per GPU where the GPU and the host have room for three: each worker
/// keeps about 0.8 GB of shared inputs and references in host memory and needs
/// up to 1.3 GB of GPU memory for one check (docs/ta-guide.md). On the H100, a
/// realistic class of 40 went from 32.5 to 40.8 submissions a minute with three.
const ROOMY_WORKERS: usize = 3;
const WORKERS: usize = 2;
const ROOMY_GPU_BYTES: u64 = 12 << 30;
const ROOMY_HOST_BYTES: u64 = 16 << 30;

/// `--workers-per-gpu` when not given: three on a GPU of at least 12 GiB in a
/// host of at least 16 GiB, else two (also on the simulator, whose workers
/// share the CPU cores with the sanitizer pass). And whether the GPU's
/// counters will be read (`counting` on a GPU's run: the simulator reads
/// none), for the batch's header. Reading counters keeps the workers: the
/// profiler runs one at a time beside them (crate::counters), and on an H200
/// a realistic class of 80 with counters took 318 s with three workers, where
/// one worker (before a stuck measurement stopped holding the profiler) took
/// about 15 s a student (docs/counters.md).
pub(super) fn workers_per_gpu(backend: BackendChoice, counting: bool) -> (usize, bool) {
    let gpu = match backend {
        BackendChoice::Cuda | BackendChoice::Auto => kit::backend::cuda::smallest_gpu_memory(),
        BackendChoice::Sim | BackendChoice::None | BackendChoice::LuckySim => None,
    };
    (workers_for(gpu, host_memory()), counting && gpu.is_some())
}

/// The choice itself, from the smallest GPU's and the host's memory (none: no GPU).
fn workers_for(gpu: Option<u64>, host: Option<u64>) -> usize {
    match gpu {
        Some(bytes) if bytes >= ROOMY_GPU_BYTES && host.is_some_and(|b| b >= ROOMY_HOST_BYTES) => ROOMY_WORKERS,
        _ => WORKERS,
    }
}

/// The host's memory in bytes (Linux: `MemTotal` of /proc/meminfo).
fn host_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_total(&text)
}

fn parse_mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The checks' limits file, where `--timeout-from-reference` gives limits: by
/// default only where the batch grades on a GPU and the course's reference/ is
/// at hand (on the simulator, grading the reference first costs more than the
/// endless kernels it would cut short); a default that cannot be measured
/// leaves every check at `--timeout` with a note, an explicit MULT stops.
pub(super) fn limits_from_reference(
    opts: &Options,
    out: &Path,
    seed: u64,
    gpu: Option<&str>,
) -> Result<Option<PathBuf>> {
    match opts.timeout_from_reference {
        FromReference::Off => Ok(None),
        FromReference::Multiple(multiple) => super::reference_limits(opts, out, seed, multiple, gpu).map(Some),
        FromReference::Default => {
            let on_gpu = match opts.backend {
                BackendChoice::Cuda => true,
                BackendChoice::Auto => kit::backend::cuda::gpu_count() > 0,
                BackendChoice::Sim | BackendChoice::None | BackendChoice::LuckySim => false,
            };
            if !on_gpu || crate::course::root().is_none() {
                return Ok(None);
            }
            match super::reference_limits(opts, out, seed, DEFAULT_MULTIPLE, gpu) {
                Ok(path) => Ok(Some(path)),
                Err(e) => {
                    eprintln!("note: no time limits from the reference ({e:#}): every check keeps --timeout");
                    Ok(None)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_memory_is_read_from_meminfo() {
        let text = "MemTotal:       24576000 kB\nMemFree:         1000 kB\n";
        assert_eq!(parse_mem_total(text), Some(24_576_000 * 1024));
        assert_eq!(parse_mem_total("MemFree: 3 kB\n"), None);
    }

    #[test]
    fn the_simulator_keeps_two_workers() {
        assert_eq!(workers_per_gpu(BackendChoice::Sim, false), (WORKERS, false));
    }

    #[test]
    fn a_batch_that_reads_counters_keeps_its_workers() {
        let (h200, host) = (Some(141 << 30), Some(128 << 30));
        assert_eq!(workers_for(h200, host), ROOMY_WORKERS);
        assert_eq!(workers_for(Some(8 << 30), host), WORKERS);
        // The simulator reads no counters.
        assert_eq!(workers_per_gpu(BackendChoice::Sim, true), (WORKERS, false));
    }
}
