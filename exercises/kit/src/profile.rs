//! What a simulated run shows that a GPU hides: how many 32-byte sectors each
//! global memory request touches (coalescing), shared-memory bank conflicts,
//! branch divergence and atomics. Only the simulator backend fills these in.

use serde::{Deserialize, Serialize};

/// Memory behaviour of one kernel, summed over its launches in one check.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryProfile {
    pub kernel: String,
    pub launches: u64,
    pub global_load_requests: u64,
    pub global_load_sectors: u64,
    pub global_store_requests: u64,
    pub global_store_sectors: u64,
    pub shared_requests: u64,
    /// Passes the shared-memory unit needs; equal to requests without bank conflicts.
    pub shared_wavefronts: u64,
    pub branches: u64,
    pub divergent_branches: u64,
    pub global_atomics: u64,
    pub shared_atomics: u64,
    /// Threads per block and dynamic shared bytes of the largest launch: with the
    /// kernel's registers and static shared memory they set the occupancy.
    #[serde(default)]
    pub block_threads: u32,
    #[serde(default)]
    pub dynamic_shared_bytes: u32,
    /// One warp's addresses for the global access with the most sectors per
    /// request: the picture of coalescing a report draws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warp_sample: Option<WarpSample>,
    /// Warp-level `__constant__` loads, and the constant cache's passes for them
    /// (one per distinct address: equal to the loads when all are broadcasts).
    #[serde(default)]
    pub const_requests: u64,
    #[serde(default)]
    pub const_passes: u64,
    /// Warp-level local-memory loads and stores, and the bytes they moved: a
    /// per-thread array the compiler could not keep in registers (one copy per
    /// thread, in device memory), or spilled registers.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub local_requests: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub local_bytes: u64,
    /// What the GPU's own counters read for the same launches, where they were
    /// read (the kit's counters module): the figures the check graded, beside the
    /// simulator's above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuCounters>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The addresses one warp gave one global load or store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WarpSample {
    /// `ld.global.f32`, say.
    pub instruction: String,
    /// `kernel.cu:12` when the PTX has line info.
    pub source: Option<String>,
    pub store: bool,
    /// Bytes per lane.
    pub bytes: u32,
    /// One entry per lane; `None` for an inactive lane.
    pub addresses: Vec<Option<u64>>,
    /// This instruction's average over the whole launch.
    pub sectors_per_request: f64,
}

impl MemoryProfile {
    /// The figures of a simulated run's statistics, for `launches` launches of
    /// `kernel`; what the simulator cannot know (the block, the GPU) left default.
    pub fn of_stats(kernel: &str, launches: u64, s: &ptx_sim::Stats) -> Self {
        Self {
            kernel: kernel.to_string(),
            launches,
            global_load_requests: s.global_load_requests,
            global_load_sectors: s.global_load_sectors,
            global_store_requests: s.global_store_requests,
            global_store_sectors: s.global_store_sectors,
            shared_requests: s.shared_load_requests + s.shared_store_requests,
            shared_wavefronts: s.shared_load_wavefronts + s.shared_store_wavefronts,
            branches: s.branches,
            divergent_branches: s.divergent_branches,
            global_atomics: s.global_atomics,
            shared_atomics: s.shared_atomics,
            const_requests: s.const_load_requests,
            const_passes: s.const_load_passes,
            local_requests: s.local_load_requests + s.local_store_requests,
            local_bytes: s.local_load_bytes + s.local_store_bytes,
            ..Default::default()
        }
    }

    pub fn add(&mut self, o: &MemoryProfile) {
        self.launches += o.launches;
        self.global_load_requests += o.global_load_requests;
        self.global_load_sectors += o.global_load_sectors;
        self.global_store_requests += o.global_store_requests;
        self.global_store_sectors += o.global_store_sectors;
        self.shared_requests += o.shared_requests;
        self.shared_wavefronts += o.shared_wavefronts;
        self.branches += o.branches;
        self.divergent_branches += o.divergent_branches;
        self.global_atomics += o.global_atomics;
        self.shared_atomics += o.shared_atomics;
        self.const_requests += o.const_requests;
        self.const_passes += o.const_passes;
        self.local_requests += o.local_requests;
        self.local_bytes += o.local_bytes;
        self.block_threads = self.block_threads.max(o.block_threads);
        self.dynamic_shared_bytes = self.dynamic_shared_bytes.max(o.dynamic_shared_bytes);
        let worse = |a: &WarpSample, b: &WarpSample| b.sectors_per_request > a.sectors_per_request;
        match (&self.warp_sample, &o.warp_sample) {
            (None, Some(b)) => self.warp_sample = Some(b.clone()),
            (Some(a), Some(b)) if worse(a, b) => self.warp_sample = Some(b.clone()),
            _ => {}
        }
    }

    /// One line for the report, in the terms of the coalescing slides: a warp
    /// reading 32 consecutive 4-byte words touches 4 sectors of 32 bytes.
    pub fn summary(&self) -> String {
        let per = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let mut global = Vec::new();
        if self.global_load_requests > 0 {
            global.push(format!("loads {:.1}", per(self.global_load_sectors, self.global_load_requests)));
        }
        if self.global_store_requests > 0 {
            global.push(format!("stores {:.1}", per(self.global_store_sectors, self.global_store_requests)));
        }
        let mut parts = vec![format!("{}: global memory sectors per request: {}", self.kernel, global.join(", "))];
        if global.is_empty() {
            parts = vec![format!("{}: no global loads or stores", self.kernel)];
        } else {
            parts[0] += " (4 when a warp reads 32 consecutive 4-byte words)";
        }
        if self.shared_requests > 0 {
            parts.push(format!(
                "shared {:.2} passes/request ({} bank-conflict passes)",
                per(self.shared_wavefronts, self.shared_requests),
                self.shared_wavefronts - self.shared_requests.min(self.shared_wavefronts)
            ));
        }
        if self.branches > 0 {
            parts.push(format!(
                "{:.0}% of warp branches divergent",
                100.0 * per(self.divergent_branches, self.branches)
            ));
        }
        if self.const_requests > 0 {
            parts.push(format!(
                "constant {:.1} passes/load (1 when every load is a broadcast)",
                per(self.const_passes, self.const_requests)
            ));
        }
        if self.local_requests > 0 {
            parts.push(self.local_summary());
        }
        if self.global_atomics + self.shared_atomics > 0 {
            parts.push(format!("atomics: {} global, {} shared", self.global_atomics, self.shared_atomics));
        }
        parts.join("; ")
    }

    /// The local-memory figures in words (empty when the kernel used none).
    pub fn local_summary(&self) -> String {
        if self.local_requests == 0 {
            return String::new();
        }
        format!(
            "local memory: {} loads/stores, {} bytes (a per-thread array or spilled registers, in device memory)",
            self.local_requests, self.local_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_speaks_in_sectors_per_request() {
        let mut p = MemoryProfile {
            kernel: "t".into(),
            launches: 1,
            global_load_requests: 2,
            global_load_sectors: 8,
            global_store_requests: 1,
            global_store_sectors: 32,
            shared_requests: 4,
            shared_wavefronts: 6,
            branches: 10,
            divergent_branches: 5,
            const_requests: 2,
            const_passes: 16,
            local_requests: 3,
            local_bytes: 384,
            ..Default::default()
        };
        p.add(&p.clone());
        let s = p.summary();
        assert!(s.contains("sectors per request: loads 4.0, stores 32.0"), "{s}");
        assert!(s.contains("1.50 passes/request (4 bank-conflict passes)"), "{s}");
        assert!(s.contains("50% of warp branches divergent"), "{s}");
        assert!(s.contains("constant 8.0 passes/load"), "{s}");
        assert!(s.contains("local memory: 6 loads/stores, 768 bytes"), "{s}");
        let none = MemoryProfile { kernel: "t".into(), ..Default::default() };
        assert!(!none.summary().contains("local"));
        assert_eq!(p.launches, 2);
    }
}

/// What the GPU counted for one kernel over the launches of one measurement.
/// Warp-level requests and 32-byte sectors, as Nsight Compute names them
/// (the grader's `counters::METRICS`; read by the counters module).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuCounters {
    pub launches: u64,
    pub global_load_requests: u64,
    pub global_load_sectors: u64,
    pub global_store_requests: u64,
    pub global_store_sectors: u64,
    pub shared_load_requests: u64,
    pub shared_store_requests: u64,
    pub shared_load_wavefronts: u64,
    pub shared_store_wavefronts: u64,
    pub local_load_requests: u64,
    pub local_store_requests: u64,
    pub branches: u64,
    pub divergent_branches: u64,
    pub global_atomic_requests: u64,
    pub shared_atomic_requests: u64,
}
