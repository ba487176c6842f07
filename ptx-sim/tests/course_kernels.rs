//! Every CUDA file of the course (reference solutions, exercise templates, kit
//! yardsticks) must load: compiled by NVRTC, nothing in it may be unsupported.

mod common;

use std::path::{Path, PathBuf};

fn cu_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            cu_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "cu") {
            out.push(p);
        }
    }
}

#[test]
fn all_course_kernels_load() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for d in ["reference", "exercises"] {
        cu_files(&root.join(d), &mut files);
    }
    files.sort();
    // outside catch_unwind, so that CUDA_LAB_REQUIRE_NVRTC=1 without NVRTC fails
    if common::compile_cu("extern \"C\" __global__ void probe() {}", "probe.cu").is_none() {
        return;
    }
    let mut loaded = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        // student templates with TODOs may not compile; only compiled PTX is checked
        let ptx = match std::panic::catch_unwind(|| common::compile_cu(&src, &f.display().to_string())) {
            Ok(Some(p)) => p,
            Ok(None) => return,
            Err(_) => continue,
        };
        let mut sim = ptx_sim::Simulator::new(ptx_sim::SimConfig::default());
        if let Err(e) = sim.load_module(&ptx) {
            panic!("{}: {e}", f.display());
        }
        loaded += 1;
    }
    eprintln!("loaded {loaded} of {} course kernel files", files.len());
}
