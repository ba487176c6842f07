//! `grader lab coalescing`: the notes' offset and stride experiment (seed 000).
//! On a GPU, the effective bandwidth of a read-modify-write over offsets 0-32
//! and strides 1-32 (CUDA events, medians of kit::perf); on the simulator, the
//! sectors per request of the same kernels, which explain the curves.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use kit::{args, Gpu, LaunchConfig};
use ptx_build::{CompileOptions, Compiler, SourceFile};
use serde::{Deserialize, Serialize};

use crate::html::svg::{self, Line, REFERENCE, STUDENT};

const SOURCE: &str = include_str!("../../kernels/coalescing.cu");
const BLOCK: u32 = 256;
/// Floats per launch on a GPU: 64 MiB, larger than any L2 cache, so the curve
/// shows DRAM traffic (the notes' 4 MB fits in an H100's 50 MB L2).
pub const GPU_ELEMENTS: usize = 16 << 20;
/// Threads on the simulator: enough warps for steady averages.
pub const SIM_ELEMENTS: usize = 64 * BLOCK as usize;

/// One point of either curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The offset (0-32) or the stride (1-32).
    pub x: u32,
    /// Effective bandwidth (2 x 4 bytes per thread over the median time), on a GPU.
    pub gbps: Option<f64>,
    pub median_ms: Option<f64>,
    /// Global load sectors per request, on the simulator.
    pub sectors_per_request: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoalescingLab {
    /// The GPU's name, or why there was none.
    pub device: String,
    pub gpu_elements: usize,
    pub sim_elements: usize,
    pub offsets: Vec<Point>,
    pub strides: Vec<Point>,
}

/// Where the lab's figures are kept for the report: `<root>/target/grades/lab-coalescing.json`.
pub fn default_json(root: &Path) -> PathBuf {
    root.join("target").join("grades").join("lab-coalescing.json")
}

impl CoalescingLab {
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        Ok(serde_json::from_slice(&bytes)?)
    }

    /// `kind,x,gbps,median_ms,sectors_per_request` rows.
    pub fn csv(&self) -> String {
        let mut out = String::from("experiment,x,gbps,median_ms,sectors_per_request\n");
        let cell = |v: Option<f64>| v.map(|v| format!("{v:.4}")).unwrap_or_default();
        for (kind, points) in [("offset", &self.offsets), ("stride", &self.strides)] {
            for p in points {
                let _ = writeln!(
                    out,
                    "{kind},{},{},{},{}",
                    p.x,
                    cell(p.gbps),
                    cell(p.median_ms),
                    cell(p.sectors_per_request)
                );
            }
        }
        out
    }
}

/// Runs both experiments: timed on the GPU when there is one, counted on the simulator always.
pub fn run(timeout: Duration, progress: &dyn Fn(&str)) -> Result<CoalescingLab> {
    let compiler = Compiler::from_env().context("the lab compiles its kernel with NVRTC")?;
    let source = SourceFile::from_text("grader/kernels/coalescing.cu", SOURCE);
    let gpu = Gpu::cuda(timeout);
    let arch = gpu.as_ref().map(|g| g.info().compute_capability).unwrap_or(CompileOptions::default().arch);
    let ptx = compiler.compile(&source, &CompileOptions { arch, ..CompileOptions::default() })?.text;
    let offsets: Vec<u32> = (0..=32).collect();
    let strides: Vec<u32> = (1..=32).collect();
    let mut lab = CoalescingLab {
        device: String::new(),
        gpu_elements: GPU_ELEMENTS,
        sim_elements: SIM_ELEMENTS,
        offsets: offsets.iter().map(|&x| Point { x, gbps: None, median_ms: None, sectors_per_request: None }).collect(),
        strides: strides.iter().map(|&x| Point { x, gbps: None, median_ms: None, sectors_per_request: None }).collect(),
    };
    match &gpu {
        Ok(gpu) => {
            lab.device = gpu.info().name.clone();
            progress(&format!("timing on {} ({} floats per launch)", lab.device, GPU_ELEMENTS));
            time_on(gpu, &ptx, &mut lab)?;
        }
        Err(e) => {
            lab.device = e.to_string();
            progress(&format!("{e}: bandwidth needs a GPU; counting sectors on the simulator only"));
        }
    }
    progress(&format!("counting sectors per request on the simulator ({SIM_ELEMENTS} threads per launch)"));
    count_on_simulator(&ptx, &mut lab)?;
    Ok(lab)
}

fn time_on(gpu: &Gpu, ptx: &str, lab: &mut CoalescingLab) -> Result<()> {
    // The notes' experiment kernels are the grader's own, timed unchecked.
    let module = gpu.load_graders(ptx)?;
    let n = GPU_ELEMENTS;
    let a = gpu.zeros::<f32>("a", n * 33)?;
    let cfg = LaunchConfig::linear((n / BLOCK as usize) as u32, BLOCK);
    for (kernel, points) in [("offset_copy", &mut lab.offsets), ("stride_copy", &mut lab.strides)] {
        for p in points.iter_mut() {
            let s = p.x as i32;
            let t = kit::perf::measure_trusted(&module, kernel, cfg, &args![&a, s], || Ok(()))?;
            p.median_ms = Some(t.median_ms());
            p.gbps = Some(t.gb_per_s(2 * n * 4));
        }
    }
    Ok(())
}

fn count_on_simulator(ptx: &str, lab: &mut CoalescingLab) -> Result<()> {
    let sim = Gpu::simulator();
    let module = sim.load(ptx)?;
    let n = SIM_ELEMENTS;
    let a = sim.zeros::<f32>("a", n * 33)?;
    let cfg = LaunchConfig::linear((n / BLOCK as usize) as u32, BLOCK);
    for (kernel, points) in [("offset_copy", &mut lab.offsets), ("stride_copy", &mut lab.strides)] {
        for p in points.iter_mut() {
            sim.backend().take_profiles();
            module.launch(kernel, cfg, &args![&a, p.x as i32])?;
            let prof = sim.backend().take_profiles();
            let (sectors, requests) =
                prof.iter().fold((0, 0), |(s, r), p| (s + p.global_load_sectors, r + p.global_load_requests));
            p.sectors_per_request = (requests > 0).then(|| sectors as f64 / requests as f64);
        }
    }
    Ok(())
}

/// The report's section: the notes' two curves (bandwidth against offset and
/// against stride) and the sectors per request that explain them.
/// The section of the last lab run under `root` (none before the first).
pub fn last_section(root: &Path) -> Option<String> {
    CoalescingLab::read(&default_json(root)).ok().map(|lab| section(&lab))
}

pub fn section(lab: &CoalescingLab) -> String {
    let mut h = format!(
        "<section id=\"lab-coalescing\"><h2>Lab: coalescing <small>{}</small></h2>\n\
         <p>Each thread adds 1 to one float at <code>i + offset</code> or at <code>i * stride</code> (the notes, seed 000). \
         Bandwidth counts 2 x 4 useful bytes per thread; sectors per request come from the simulator.</p>\n",
        svg::esc(&lab.device)
    );
    for (name, points) in [("offset", &lab.offsets), ("stride", &lab.strides)] {
        let gbps: Vec<(f64, f64)> = points.iter().filter_map(|p| Some((p.x as f64, p.gbps?))).collect();
        let sectors: Vec<(f64, f64)> =
            points.iter().filter_map(|p| Some((p.x as f64, p.sectors_per_request?))).collect();
        if !gbps.is_empty() {
            let chart =
                svg::line_chart(&[Line { name: "effective bandwidth", colour: STUDENT, points: gbps }], name, "GB/s");
            h += &svg::figure("lab", &format!("Effective bandwidth vs. {name} ({})", lab.device), &chart);
        }
        if !sectors.is_empty() {
            let chart = svg::line_chart(
                &[Line { name: "global load sectors per request (simulator)", colour: REFERENCE, points: sectors }],
                name,
                "sectors / request",
            );
            h += &svg::figure(
                "lab",
                &format!("Sectors per warp request vs. {name}: 4 is perfectly coalesced, 32 is one sector per thread"),
                &chart,
            );
        }
    }
    if lab.offsets.iter().all(|p| p.gbps.is_none()) {
        h += "<p class=\"dim\">No bandwidth curves: these need a GPU. Run <code>grader lab coalescing</code> on one.</p>\n";
    }
    h + "</section>\n"
}
