//! The differential corpus (`grader/differential/*.cu`): small correct kernels
//! using what students reach for, run on seeded inputs on one backend, one
//! digest line per output buffer. Run on a GPU and on the simulator, then
//! `grader compare-digests` shows whether the simulator computes the same bits.
//!
//! Every kernel has the same parameters (see the corpus README), so a case is
//! just a file: no per-case launch code to keep in step with the kernels.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use kit::{args, Gpu};
use ptx_build::{CompileOptions, Compiler, SourceFile};
use sha2::{Digest, Sha256};

use crate::grade::BackendChoice;

/// The corpus folder, under the workspace root.
pub const CORPUS_DIR: &str = "grader/differential";
/// Elements per input and output buffer: not a multiple of the block size, so
/// the last block is partial.
pub const N: usize = 1000;
pub const THREADS: u32 = 256;
/// The kernel every file defines.
pub const KERNEL: &str = "k";

/// The seeded inputs every case gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    pub i: Vec<i32>,
    pub f: Vec<f32>,
    /// Multiples of 1/1024 in [-8, 8]: double sums are exact in any order.
    pub d: Vec<f64>,
}

impl Inputs {
    pub fn new(seed: u64) -> Inputs {
        use rand::Rng;
        let mut rng = kit::inputs::rng_for(seed, "differential");
        Inputs {
            i: kit::inputs::uniform_i32(&mut rng, N, -1000, 1000),
            f: kit::inputs::uniform_f32(&mut rng, N, -1.0, 1.0),
            d: (0..N).map(|_| rng.random_range(-8192i32..=8192) as f64 / 1024.0).collect(),
        }
    }
}

/// What one case produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs {
    pub i: Vec<i32>,
    pub f: Vec<f32>,
    pub d: Vec<f64>,
}

impl Outputs {
    /// `(buffer, little-endian bytes)` in a fixed order, as the device holds them.
    pub fn buffers(&self) -> [(&'static str, Vec<u8>); 3] {
        [
            ("out_i", self.i.iter().flat_map(|x| x.to_le_bytes()).collect()),
            ("out_f", self.f.iter().flat_map(|x| x.to_le_bytes()).collect()),
            ("out_d", self.d.iter().flat_map(|x| x.to_le_bytes()).collect()),
        ]
    }
}

/// One case's result: its outputs, or why it did not run (a compile error, a
/// header not provisioned yet, a backend error).
pub struct CaseResult {
    pub name: String,
    pub outputs: Result<Outputs>,
}

/// The corpus's `.cu` files, sorted by name.
pub fn cases(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join(CORPUS_DIR);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    Ok(files)
}

/// The same PTX on every backend: compute_90 with line info, as the grader
/// compiles for the H100 and for the simulator.
pub fn compile_options() -> CompileOptions {
    CompileOptions { arch: (9, 0), line_info: true, ..CompileOptions::default() }
}

/// Compiles and runs every case on `gpu`.
pub fn run(root: &Path, gpu: &Gpu, compiler: &Compiler, seed: u64) -> Result<Vec<CaseResult>> {
    let inputs = Inputs::new(seed);
    let opts = compile_options();
    let mut out = Vec::new();
    for file in cases(root)? {
        let name = file.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let outputs = run_case(&file, gpu, compiler, &opts, &inputs);
        out.push(CaseResult { name, outputs });
    }
    Ok(out)
}

fn run_case(file: &Path, gpu: &Gpu, compiler: &Compiler, opts: &CompileOptions, inputs: &Inputs) -> Result<Outputs> {
    let rel = format!("{CORPUS_DIR}/{}", file.file_name().unwrap_or_default().to_string_lossy());
    let src = SourceFile::read(file, rel.clone())?;
    let ptx = compiler.compile(&src, opts).with_context(|| format!("compiling {rel}"))?;
    let module = gpu.load(&ptx.text)?;
    let (ii, ff, dd) = (gpu.upload("in_i", &inputs.i)?, gpu.upload("in_f", &inputs.f)?, gpu.upload("in_d", &inputs.d)?);
    let (oi, of, od) = (gpu.zeros::<i32>("out_i", N)?, gpu.zeros::<f32>("out_f", N)?, gpu.zeros::<f64>("out_d", N)?);
    let cfg = kit::LaunchConfig::linear((N as u32).div_ceil(THREADS), THREADS);
    module.launch(KERNEL, cfg, &args![&ii, &ff, &dd, &oi, &of, &od, N as i32])?;
    Ok(Outputs { i: oi.read()?, f: of.read()?, d: od.read()? })
}

/// The digest lines of a run, in `CUDA_LAB_OUTPUT_DIGESTS`'s format
/// (`check<TAB>buffer<TAB>sha256`), so that `grader compare-digests` reads them.
/// A case that did not run gets no line (compare-digests counts it as on one
/// side only when the other backend ran it).
pub fn digest_lines(results: &[CaseResult]) -> String {
    let mut s = String::new();
    for r in results {
        if let Ok(o) = &r.outputs {
            for (buffer, bytes) in o.buffers() {
                s += &format!("differential::{}\t{buffer}\t{:x}\n", r.name, Sha256::digest(bytes));
            }
        }
    }
    s
}

/// `grader differential`: runs the corpus on one backend and writes the digests;
/// false when a case did not run.
pub fn command(root: &Path, backend: BackendChoice, seed: u64, out: &Path) -> Result<bool> {
    let gpu = match backend {
        BackendChoice::Sim => Gpu::simulator(),
        BackendChoice::Cuda | BackendChoice::Auto => Gpu::cuda(Duration::from_secs(10))?,
        BackendChoice::None | BackendChoice::LuckySim => {
            anyhow::bail!("the differential corpus runs on `--backend cuda` or `--backend sim`")
        }
    };
    let compiler = Compiler::from_env()?;
    let results = run(root, &gpu, &compiler, seed)?;
    let mut all_ran = true;
    for r in &results {
        match &r.outputs {
            Ok(_) => println!("  {:<20} ran", r.name),
            Err(e) => {
                all_ran = false;
                println!("  {:<20} NOT RUN: {e:#}", r.name);
            }
        }
    }
    crate::atomic::write(out, digest_lines(&results).as_bytes())
        .with_context(|| format!("writing {}", out.display()))?;
    println!(
        "{} of {} cases ran on {}; digests in {}",
        results.iter().filter(|r| r.outputs.is_ok()).count(),
        results.len(),
        gpu.info().backend,
        out.display()
    );
    Ok(all_ran)
}
