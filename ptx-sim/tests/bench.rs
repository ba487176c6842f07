//! Throughput benchmark (ignored by default):
//!
//! ```sh
//! cargo test -p ptx-sim --release --test bench -- --ignored --nocapture
//! ```
//!
//! Prints thread-instructions per second for a few typical exercise kernels, with
//! stats and race detection on (the default) and off.

mod common;

use std::time::Instant;

use common::*;
use ptx_sim::{ParamValue, SimConfig};

fn run(label: &str, cfg: SimConfig) -> Option<(u64, f64)> {
    let (mut sim, m) = sim_with_cfg("matmul.cu", cfg.clone())?;
    let n = 256usize;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 17) as f32 * 0.25).collect();
    let pa = upload_f32(&mut sim, &a);
    let pb = upload_f32(&mut sim, &a);
    let pc = sim.alloc(n * n * 4).unwrap();
    let ni = ParamValue::I32(n as i32);
    let mut total = 0u64;
    let t0 = Instant::now();
    for k in ["matmul_tiled", "matmul_naive"] {
        let rep = sim.launch(m, k, (16, 16, 1), (16, 16, 1), 0, &[ptr(pa), ptr(pb), ptr(pc), ni, ni, ni]).unwrap();
        total += rep.thread_instructions;
    }
    let (mut sim2, m2) = sim_with_cfg("reduction.cu", cfg.clone())?;
    let len = 1 << 20;
    let v: Vec<i32> = (0..len).map(|i| (i % 7) as i32).collect();
    let pin = upload_i32(&mut sim2, &v);
    let pout = sim2.alloc(len / 256 * 4).unwrap();
    for k in ["reduce_interleaved", "reduce_sequential"] {
        let rep = sim2
            .launch(
                m2,
                k,
                ((len / 256) as u32, 1, 1),
                (256, 1, 1),
                1024,
                &[ptr(pin), ptr(pout), ParamValue::I32(len as i32)],
            )
            .unwrap();
        total += rep.thread_instructions;
    }
    let (mut sim3, m3) = sim_with_cfg("transpose.cu", cfg)?;
    let w = 1024usize;
    let input: Vec<f32> = (0..w * w).map(|i| i as f32).collect();
    let pin = upload_f32(&mut sim3, &input);
    let pout = sim3.alloc(w * w * 4).unwrap();
    let wi = ParamValue::I32(w as i32);
    for k in ["transpose_naive", "transpose_coalesced", "transpose_padded"] {
        let rep = sim3.launch(m3, k, (32, 32, 1), (32, 8, 1), 0, &[ptr(pin), ptr(pout), wi, wi]).unwrap();
        total += rep.thread_instructions;
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{label}: {total} thread-instructions in {secs:.3} s = {:.1} M thread-instructions/s",
        total as f64 / secs / 1e6
    );
    Some((total, secs))
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn throughput() {
    let full = SimConfig::default();
    let bare = SimConfig { track_stats: false, detect_races: false, ..SimConfig::default() };
    let _ = run("stats+races", full);
    let _ = run("stats only", SimConfig { detect_races: false, ..SimConfig::default() });
    let _ = run("bare", bare);
}
