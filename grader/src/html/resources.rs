//! Registers per thread, shared memory per block, and the occupancy they allow:
//! the notes' third lesson after coalescing and shared memory.
//!
//! Registers come from the driver on a GPU, from ptxas's resource report when
//! ptxas is installed; from the PTX alone only the declared shared memory is
//! known (the PTX's `.reg` are virtual registers, not what the hardware
//! allocates), and the report says so.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelResources {
    pub kernel: String,
    /// Registers per thread; `None` when unknown (no ptxas, no GPU).
    pub registers: Option<u32>,
    /// Static shared memory per block, bytes.
    pub static_shared: u64,
    /// Where the figures come from: "the driver", "ptxas" or "PTX declarations".
    pub source: String,
}

/// Per-SM limits of one compute capability.
#[derive(Debug, Clone, Copy)]
pub struct SmLimits {
    pub name: &'static str,
    pub max_threads: u32,
    pub max_blocks: u32,
    pub registers: u32,
    pub shared: u64,
}

/// The limits of `cc` ("9.0"); an H100's when unknown (the course's calibration GPU).
pub fn limits(cc: Option<&str>) -> SmLimits {
    let k = |name, max_threads, max_blocks, shared_kib: u64| SmLimits {
        name,
        max_threads,
        max_blocks,
        registers: 65536,
        shared: shared_kib * 1024,
    };
    match cc {
        Some("8.0") => k("compute capability 8.0 (A100)", 2048, 32, 164),
        Some("8.6") => k("compute capability 8.6", 1536, 16, 100),
        Some("8.7") => k("compute capability 8.7", 1536, 16, 164),
        Some("8.9") => k("compute capability 8.9", 1536, 24, 100),
        Some("7.5") => k("compute capability 7.5", 1024, 16, 64),
        Some("7.0") => k("compute capability 7.0 (V100)", 2048, 32, 96),
        Some("9.0") => k("compute capability 9.0 (H100)", 2048, 32, 228),
        _ => k("an H100 (compute capability 9.0), assumed", 2048, 32, 228),
    }
}

/// Occupancy: resident warps per SM over the most the SM holds, and what limits it.
pub fn occupancy(l: &SmLimits, block_threads: u32, registers: Option<u32>, shared: u64) -> (f64, &'static str) {
    if block_threads == 0 {
        return (0.0, "unknown block size");
    }
    let warps_per_block = block_threads.div_ceil(32);
    let mut blocks = l.max_blocks;
    let mut why = "blocks per SM";
    let mut limit = |n: u32, what: &'static str| {
        if n < blocks {
            blocks = n;
            why = what;
        }
    };
    limit(l.max_threads / (warps_per_block * 32), "threads per SM");
    if let Some(r) = registers {
        // Registers are allocated per warp in units of 256.
        let per_warp = (r.max(1) * 32).div_ceil(256) * 256;
        limit(l.registers / (per_warp * warps_per_block), "registers");
    }
    if shared > 0 {
        // 1 KiB per block is reserved by the system on compute capability 8.0 and later.
        limit((l.shared / (shared + 1024)) as u32, "shared memory");
    }
    let max_warps = l.max_threads / 32;
    ((blocks * warps_per_block) as f64 / max_warps as f64, why)
}

/// Static shared memory each `.entry` of `ptx` declares (kit::inspect reads
/// the PTX the same way the structure checks do); registers stay unknown.
pub fn from_ptx(ptx: &str) -> Vec<KernelResources> {
    kit::inspect::entries(ptx)
        .into_iter()
        .map(|name| KernelResources {
            static_shared: kit::inspect::kernel(ptx, &name).map_or(0, |k| k.static_shared_bytes() as u64),
            kernel: name,
            registers: None,
            source: "PTX declarations".into(),
        })
        .collect()
}

/// Registers and static shared memory as the driver allocated them (cuFuncGetAttribute).
pub fn from_driver(gpu: &kit::Gpu, ptx: &str) -> Option<Vec<KernelResources>> {
    let module = gpu.load(ptx).ok()?;
    kit::inspect::entries(ptx)
        .into_iter()
        .map(|name| {
            let (regs, shared) = module.kernel_resources(&name).ok()??;
            Some(KernelResources {
                kernel: name,
                registers: Some(regs),
                static_shared: shared as u64,
                source: "the driver".into(),
            })
        })
        .collect()
}

/// Registers and shared memory from ptxas's `-v` report, when ptxas is on the PATH.
pub fn from_ptxas(ptx: &str, cc: Option<&str>, dir: &Path) -> Option<Vec<KernelResources>> {
    let arch = format!("sm_{}", cc.unwrap_or("9.0").replace('.', ""));
    let file = dir.join(format!("resources-{}.ptx", std::process::id()));
    std::fs::write(&file, ptx).ok()?;
    let out = Command::new("ptxas").args(["-v", "--gpu-name", &arch, "-o", "/dev/null"]).arg(&file).output();
    let _ = std::fs::remove_file(&file);
    let out = out.ok().filter(|o| o.status.success())?;
    Some(parse_ptxas(&String::from_utf8_lossy(&out.stderr)))
}

/// `Compiling entry function 'k' for 'sm_90'` ... `Used 12 registers, 1024 bytes smem, ...`
pub fn parse_ptxas(text: &str) -> Vec<KernelResources> {
    let mut out: Vec<KernelResources> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.split("entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or("").to_string();
            out.push(KernelResources { kernel: name, registers: None, static_shared: 0, source: "ptxas".into() });
        } else if let (Some(k), true) = (out.last_mut(), line.contains("Used ")) {
            let words: Vec<&str> =
                line.split(|c: char| c == ',' || c.is_whitespace()).filter(|w| !w.is_empty()).collect();
            for w in words.windows(2) {
                match w[1] {
                    "registers" => k.registers = w[0].parse().ok(),
                    "bytes" => {}
                    _ => {}
                }
            }
            for w in words.windows(3) {
                if w[1] == "bytes" && w[2] == "smem" {
                    k.static_shared = w[0].parse().unwrap_or(0);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_from_ptx_declarations() {
        let ptx = ".version 8.0\n.target sm_75\n.address_size 64\n\
            .visible .entry tiled(\n.param .u64 a\n)\n{\n.shared .align 4 .b8 _ZZ5tiledE2As[1024];\nret;\n}\n\
            .visible .entry plain(\n)\n{\nret;\n}\n";
        let k = from_ptx(ptx);
        assert_eq!(k.len(), 2);
        assert_eq!((k[0].kernel.as_str(), k[0].static_shared), ("tiled", 1024));
        assert_eq!((k[1].kernel.as_str(), k[1].static_shared, k[1].registers), ("plain", 0, None));
    }

    #[test]
    fn ptxas_report_and_occupancy() {
        let text = "ptxas info    : Compiling entry function 'tiled' for 'sm_90'\n\
            ptxas info    : Used 40 registers, 8192 bytes smem, 380 bytes cmem[0]\n";
        let k = parse_ptxas(text);
        assert_eq!((k[0].registers, k[0].static_shared), (Some(40), 8192));
        let h100 = limits(Some("9.0"));
        assert_eq!(occupancy(&h100, 256, Some(32), 0), (1.0, "threads per SM"));
        // 128 registers x 256 threads = 32768 per block: 2 blocks = 16 of 64 warps.
        assert_eq!(occupancy(&h100, 256, Some(128), 0), (0.25, "registers"));
        // 100 KiB per block: 2 blocks of 8 warps.
        assert_eq!(occupancy(&h100, 256, None, 100 * 1024), (0.25, "shared memory"));
    }
}
