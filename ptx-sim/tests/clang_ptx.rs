//! PTX from clang's CUDA mode (LLVM's NVPTX back end) runs as NVRTC's does.
//!
//! The fixtures in `tests/fixtures/*.clang.ptx.txt` were written by clang 22.1.8
//! (the `ziglang` 0.17.1 wheel, CUDA wrapper headers from `clang-tidy` 22.1.8,
//! CUDA 12.9 headers from NVIDIA's wheels):
//! `clang -x cuda --cuda-device-only --cuda-gpu-arch=sm_90 -S -O3 -gline-tables-only`
//! of `reference/ex02-dot/kernels/dot.cu`, `reference/ex01-pi/kernels/pi_shared.cu`
//! and `grader/differential/switch.cu`, paths made relative. They keep what
//! differs from NVRTC's PTX in form: pointer parameters declared
//! `.param .u64 .ptr .align 1` (the alignment of the data, not of the
//! parameter), `__shared__` arrays declared inside the kernel, `.b32` loads
//! feeding `.f32` arithmetic, a `switch` as a `brx.idx` jump table, and `.loc`
//! lines that point into clang's headers with the student's line only in an
//! `@[ file:line:col ]` comment.

use ptx_sim::{ParamValue, SimConfig, SimError, Simulator};

fn fixture(name: &str) -> String {
    let p = format!("{}/tests/fixtures/{name}.clang.ptx.txt", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn upload(sim: &mut Simulator, bytes: &[u8]) -> u64 {
    let p = sim.alloc(bytes.len()).unwrap();
    sim.write(p, bytes).unwrap();
    p
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn read<const N: usize>(sim: &Simulator, p: u64, n: usize) -> Vec<[u8; N]> {
    let mut b = vec![0u8; n * N];
    sim.read(p, &mut b).unwrap();
    b.chunks(N).map(|c| c.try_into().unwrap()).collect()
}

#[test]
fn every_fixture_is_fully_supported() {
    for name in ["dot", "pi_shared", "switch"] {
        let found = ptx_sim::unsupported_instructions(&fixture(name)).unwrap();
        assert!(found.is_empty(), "{name}: {found:?}");
    }
}

#[test]
fn pointer_parameters_are_laid_out_by_their_own_size() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&fixture("dot")).unwrap();
    let params = sim.kernel_params(m, "dot").unwrap();
    let offsets: Vec<u32> = params.iter().map(|p| p.offset).collect();
    // `.ptr .align 1` must not pack the pointer after the int at offset 20
    assert_eq!(offsets, [0, 8, 16, 24], "{params:?}");
}

#[test]
fn clangs_dot_product_computes_the_partial_sums() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&fixture("dot")).unwrap();
    let n = 3000usize;
    let a: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 5) as f32 * 0.5).collect();
    let (pa, pb) = (upload(&mut sim, &f32s(&a)), upload(&mut sim, &f32s(&b)));
    let blocks = 4usize;
    let out = sim.alloc(blocks * 4).unwrap();
    let args = [ParamValue::U64(pa), ParamValue::U64(pb), ParamValue::I32(n as i32), ParamValue::U64(out)];
    let rep = sim.launch(m, "dot", (blocks as u32, 1, 1), (256, 1, 1), 0, &args).unwrap();
    assert!(rep.races.is_empty(), "{:?}", rep.races);
    let got: Vec<f32> = read::<4>(&sim, out, blocks).into_iter().map(f32::from_le_bytes).collect();
    // small integers and halves: every order of summation is exact
    for (blk, g) in got.iter().enumerate() {
        let want: f32 = (0..256).flat_map(|t| (blk * 256 + t..n).step_by(blocks * 256)).map(|i| a[i] * b[i]).sum();
        assert_eq!(*g, want, "block {blk}");
    }
    // the global loads are measured as NVRTC's are: 4 sectors per full warp's request
    let spr = rep.stats.global_load_sectors_per_request();
    assert!((3.9..=4.0).contains(&spr), "{spr}");
}

#[test]
fn an_atomic_inlined_from_clangs_headers_is_reported_at_the_students_line() {
    let ptx = fixture("pi_shared");
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&ptx).unwrap();
    let n = 512usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 10) as f32 / 10.0).collect();
    let (px, py) = (upload(&mut sim, &f32s(&x)), upload(&mut sim, &f32s(&x)));
    let hits = sim.alloc(4).unwrap();
    let args = [ParamValue::U64(px), ParamValue::U64(py), ParamValue::I32(n as i32), ParamValue::U64(hits)];
    let rep = sim.launch(m, "pi_shared", (2, 1, 1), (128, 1, 1), 0, &args).unwrap();
    let want = x.iter().filter(|v| *v * *v * 2.0 <= 1.0).count() as u32;
    assert_eq!(u32::from_le_bytes(read::<4>(&sim, hits, 1)[0]), want);
    // the shared atomicAdd's row names pi_shared.cu:17, not __clang_cuda_device_functions.h
    let row = rep.stats.per_instruction.iter().find(|r| r.instruction.starts_with("atom.shared")).unwrap();
    assert_eq!(row.source.as_deref(), Some("reference/ex01-pi/kernels/pi_shared.cu:17"), "{row:?}");
    // a fault in the global atomicAdd names line 21
    let args = [ParamValue::U64(px), ParamValue::U64(py), ParamValue::I32(n as i32), ParamValue::U64(8)];
    match sim.launch(m, "pi_shared", (2, 1, 1), (128, 1, 1), 0, &args) {
        Err(SimError::IllegalAddress { location, .. }) => {
            assert_eq!(location.as_deref(), Some("reference/ex01-pi/kernels/pi_shared.cu:21"))
        }
        r => panic!("expected an illegal address, got {r:?}"),
    }
}

#[test]
fn a_switch_compiled_to_a_jump_table_takes_every_case() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&fixture("switch")).unwrap();
    let n = 1000usize;
    let vi: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 2001 - 1000).collect();
    let vf: Vec<f32> = (0..n).map(|i| i as f32 / 1000.0 - 0.5).collect();
    let pi = upload(&mut sim, &vi.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
    let pf = upload(&mut sim, &f32s(&vf));
    let pd = sim.alloc(n * 8).unwrap();
    let (oi, of, od) = (sim.alloc(n * 4).unwrap(), sim.alloc(n * 4).unwrap(), sim.alloc(n * 8).unwrap());
    let p = ParamValue::U64;
    let args = [p(pi), p(pf), p(pd), p(oi), p(of), p(od), ParamValue::I32(n as i32)];
    sim.launch(m, "k", (4, 1, 1), (256, 1, 1), 0, &args).unwrap();
    let gi: Vec<i32> = read::<4>(&sim, oi, n).into_iter().map(i32::from_le_bytes).collect();
    let gf: Vec<f32> = read::<4>(&sim, of, n).into_iter().map(f32::from_le_bytes).collect();
    for i in 0..n {
        let (v, f) = (vi[i], vf[i]);
        let (r, f) = match (v + 1000) % 9 {
            0 => (v * 3, f),
            1 => (v - 7, f * 2.0),
            2 => (v ^ 0x55, f),
            3 | 4 => (v << 2, -f),
            5 => (v / 3, f),
            7 => (!v, f * f),
            _ => (0, f),
        };
        assert_eq!((gi[i], gf[i].to_bits()), (r, f.to_bits()), "element {i} (case {})", (v + 1000) % 9);
    }
}
