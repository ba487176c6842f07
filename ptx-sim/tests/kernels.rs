//! End-to-end tests: CUDA C compiled by NVRTC, run in the simulator, compared
//! with CPU references (bit-exact where the rounding is fixed).

// Index loops read most clearly when comparing against CPU references.
#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use ptx_sim::{AccessKind, ParamValue, SimConfig, SimError};

macro_rules! sim_or_skip {
    ($file:expr) => {
        match sim_with($file) {
            Some(x) => x,
            None => return,
        }
    };
    ($file:expr, $cfg:expr) => {
        match sim_with_cfg($file, $cfg) {
            Some(x) => x,
            None => return,
        }
    };
}

fn rand_f32(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut r = Rng(seed);
    (0..n).map(|_| lo + (hi - lo) * r.f32()).collect()
}

#[test]
fn vec_add() {
    let (mut sim, m) = sim_or_skip!("vecadd.cu");
    let n = 1000;
    let a = rand_f32(n, 1, -10.0, 10.0);
    let b = rand_f32(n, 2, -10.0, 10.0);
    let (pa, pb) = (upload_f32(&mut sim, &a), upload_f32(&mut sim, &b));
    let pc = sim.alloc(n * 4).unwrap();
    let rep = sim
        .launch(m, "vec_add", (4, 1, 1), (256, 1, 1), 0, &[ptr(pa), ptr(pb), ptr(pc), ParamValue::I32(n as i32)])
        .unwrap();
    let c = download_f32(&sim, pc, n);
    for i in 0..n {
        assert_eq!(c[i].to_bits(), (a[i] + b[i]).to_bits(), "element {i}");
    }
    // 1000 elements: 32 warps (the last partially active) x 2 loads, 4 sectors each when full
    assert_eq!(rep.stats.global_load_requests, 64);
    assert_eq!(rep.stats.global_store_requests, 32);
    assert!(rep.stats.global_load_sectors_per_request() <= 4.0);
    assert!(rep.thread_instructions > 1000 * 5);
    assert!(rep.races.is_empty());
    let mut total = rep.stats.clone();
    total.merge(&rep.stats);
    assert_eq!(total.global_load_requests, 128);
    assert_eq!(total.per_instruction.len(), rep.stats.per_instruction.len());
    assert_eq!(total.per_instruction[0].executions, 2 * rep.stats.per_instruction[0].executions);
}

#[test]
fn saxpy_grid_stride() {
    let (mut sim, m) = sim_or_skip!("vecadd.cu");
    let n = 5000;
    let x = rand_f32(n, 3, -1.0, 1.0);
    let y = rand_f32(n, 4, -1.0, 1.0);
    let (px, py) = (upload_f32(&mut sim, &x), upload_f32(&mut sim, &y));
    let alpha = 1.7f32;
    sim.launch(
        m,
        "saxpy_grid_stride",
        (3, 1, 1),
        (128, 1, 1),
        0,
        &[ParamValue::F32(alpha), ptr(px), ptr(py), ParamValue::I32(n as i32)],
    )
    .unwrap();
    let out = download_f32(&sim, py, n);
    for i in 0..n {
        // NVRTC contracts `alpha * x + y` into fma.rn.f32
        assert_eq!(out[i].to_bits(), alpha.mul_add(x[i], y[i]).to_bits(), "element {i}");
    }
}

fn byte_perm(x: u32, y: u32, s: u32) -> u32 {
    let bytes = ((y as u64) << 32) | x as u64;
    (0..4).fold(0u32, |acc, i| acc | ((((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xff) as u32) << (8 * i)))
}

#[test]
fn integer_ops() {
    let (mut sim, m) = sim_or_skip!("vecadd.cu");
    let n = 300;
    let mut r = Rng(99);
    let mut a: Vec<i32> = (0..n).map(|_| r.next_u32() as i32).collect();
    let mut b: Vec<i32> = (0..n).map(|_| r.range(-70000, 70000)).collect();
    a[0] = 0;
    b[1] = 0;
    a[2] = -1;
    b[3] = -1;
    a[4] = 17;
    b[4] = 5;
    let (pa, pb) = (upload_i32(&mut sim, &a), upload_i32(&mut sim, &b));
    let po = sim.alloc(n * 16 * 4).unwrap();
    sim.launch(m, "int_ops", (3, 1, 1), (128, 1, 1), 0, &[ptr(pa), ptr(pb), ptr(po), ParamValue::I32(n as i32)])
        .unwrap();
    let out = download_i32(&sim, po, n * 16);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let d = if y == 0 { 1 } else { y };
        let ffs = if x == 0 { 0 } else { x.trailing_zeros() as i32 + 1 };
        let umulhi = (((x as u32 as u64) * (y as u32 as u64)) >> 32) as u32;
        let sad = ((x as i64 - y as i64).unsigned_abs() as u32).wrapping_add(3);
        let usad = (x as u32).abs_diff(y as u32).wrapping_add(1);
        let want = [
            x.wrapping_div(d),
            x.wrapping_rem(d),
            ((x as u32) / ((y as u32) | 1)) as i32,
            x >> (y & 31),
            ((x as u32) >> (y & 31)) as i32,
            (x.count_ones() + (y as u32).leading_zeros()) as i32,
            (x as u32).reverse_bits() as i32,
            x.min(y) - x.max(y),
            ((x as i64 * y as i64) >> 32) as i32,
            ((x as i64 * y as i64) >> 7) as i32,
            x.wrapping_abs() ^ !y,
            (x & 0xff00) | ((y >> 3) & 0x1f),
            (x as i16 as i32) + (y as i8 as i32),
            byte_perm(x as u32, y as u32, 0x5140) as i32,
            (ffs as u32).wrapping_add(umulhi) as i32,
            sad.wrapping_add(usad) as i32,
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(out[i * 16 + j], *w, "element {i}, op {j}: x={x} y={y}");
        }
    }
}

/// Rounds an exactly representable f64 to f32 in a directed mode.
fn round_dir(v: f64, mode: char) -> f32 {
    let r = v as f32;
    let up = |f: f32| if f >= 0.0 { f32::from_bits(f.to_bits() + 1) } else { f32::from_bits(f.to_bits() - 1) };
    let down = |f: f32| -up(-f);
    match mode {
        'z' if (r as f64).abs() > v.abs() => {
            if r > 0.0 {
                down(r)
            } else {
                up(r)
            }
        }
        'm' if (r as f64) > v => down(r),
        'p' if (r as f64) < v => up(r),
        _ => r,
    }
}

#[test]
fn float_ops() {
    let (mut sim, m) = sim_or_skip!("vecadd.cu");
    let n = 400;
    let a = rand_f32(n, 7, -20.0, 20.0);
    let b = rand_f32(n, 8, -20.0, 20.0);
    let (pa, pb) = (upload_f32(&mut sim, &a), upload_f32(&mut sim, &b));
    let po = sim.alloc(n * 12 * 4).unwrap();
    sim.launch(m, "float_ops", (4, 1, 1), (128, 1, 1), 0, &[ptr(pa), ptr(pb), ptr(po), ParamValue::I32(n as i32)])
        .unwrap();
    let out = download_f32(&sim, po, n * 12);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let want = [
            x / y,
            x.abs().sqrt(),
            x.mul_add(y, 1.5),
            x.min(y) + x.max(y),
            (x as i32) as f32 + (y.abs() as u32) as f32,
            x.floor() + y.ceil() + x.trunc() + y.round_ties_even(),
            round_dir(x as f64 + y as f64, 'z'),
            round_dir(x as f64 * y as f64, 'm'),
            (x as f64).mul_add(y as f64, 1.0) as f32,
            x.copysign(y),
            if x < y { x } else { -y },
            f32::from_bits(x.to_bits() ^ 1),
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(out[i * 12 + j].to_bits(), w.to_bits(), "element {i}, op {j}: x={x} y={y}");
        }
    }
}

#[test]
fn wide_and_byte_ops() {
    let (mut sim, m) = sim_or_skip!("vecadd.cu");
    let n = 200;
    let mut r = Rng(5);
    let a: Vec<i64> =
        (0..n).map(|_| ((r.next_u32() as u64) << 32 | r.next_u32() as u64) as i64 >> (r.next_u32() % 40)).collect();
    let c: Vec<u8> = (0..n).map(|i| b"ACGTN"[i % 5]).collect();
    let pa = sim.alloc(n * 8).unwrap();
    sim.write(pa, &a.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>()).unwrap();
    let pc = sim.alloc(n).unwrap();
    sim.write(pc, &c).unwrap();
    let po = sim.alloc(n * 6 * 8).unwrap();
    sim.launch(m, "wide_ops", (2, 1, 1), (128, 1, 1), 0, &[ptr(pa), ptr(pc), ptr(po), ParamValue::I32(n as i32)])
        .unwrap();
    let mut raw = vec![0u8; n * 6 * 8];
    sim.read(po, &mut raw).unwrap();
    let out: Vec<i64> = raw.chunks(8).map(|b| i64::from_le_bytes(b.try_into().unwrap())).collect();
    for i in 0..n {
        let x = a[i];
        let ch = c[i];
        let want = [
            x.wrapping_mul(3).wrapping_sub(x >> 5),
            ((x as u64) / 7) as i64,
            x % 1000,
            (ch == b'A') as i64 + (ch == b'C') as i64 * 2 + (ch == b'G') as i64 * 3 + (ch == b'T') as i64 * 4,
            (x as f64) as i64,
            ((x & 0xffff) as f64).sqrt().to_bits() as i64,
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(out[i * 6 + j], *w, "element {i}, op {j}: x={x}");
        }
    }
}

fn pi_inputs(n: usize) -> (Vec<f32>, Vec<f32>, u32) {
    let x = rand_f32(n, 11, 0.0, 1.0);
    let y = rand_f32(n, 12, 0.0, 1.0);
    // the kernel computes x*x + y*y as fma(x, x, y*y)
    let hits = (0..n).filter(|&i| x[i].mul_add(x[i], y[i] * y[i]) <= 1.0).count() as u32;
    (x, y, hits)
}

#[test]
fn atomics_global_vs_shared_counter() {
    let (mut sim, m) = sim_or_skip!("atomics.cu");
    let n = 20_000;
    let (x, y, hits) = pi_inputs(n);
    let (px, py) = (upload_f32(&mut sim, &x), upload_f32(&mut sim, &y));
    let ph = sim.alloc(4).unwrap();
    let args = [ptr(px), ptr(py), ParamValue::I32(n as i32), ptr(ph)];
    let g = sim.launch(m, "count_global", (8, 1, 1), (256, 1, 1), 0, &args).unwrap();
    assert_eq!(download_u32(&sim, ph, 1)[0], hits);
    assert_eq!(g.stats.global_atomics, hits as u64);

    sim.fill(ph, 0, 4).unwrap();
    let s = sim.launch(m, "count_shared", (8, 1, 1), (256, 1, 1), 0, &args).unwrap();
    assert_eq!(download_u32(&sim, ph, 1)[0], hits);
    assert_eq!(s.stats.global_atomics, 8, "one global atomic per block");
    assert!(s.stats.shared_atomics > 0 && s.stats.shared_atomics <= 8 * 256);
    assert_eq!(s.stats.barriers, 16);
    assert!(s.races.is_empty(), "{:?}", s.races);
}

#[test]
fn atomic_operations() {
    let (mut sim, m) = sim_or_skip!("atomics.cu");
    let ints = upload_i32(&mut sim, &[i32::MIN, i32::MAX, -1, 0, 0, 1000, -1, 0]);
    let uints = upload_i32(&mut sim, &[0, 0, 0, 0]);
    let f = upload_f32(&mut sim, &[0.0]);
    let d = sim.alloc(16).unwrap();
    let threads = 100u32;
    sim.launch(m, "atomic_mix", (1, 1, 1), (threads, 1, 1), 0, &[ptr(ints), ptr(uints), ptr(f), ptr(d)]).unwrap();
    let iv = download_i32(&sim, ints, 8);
    let uv = download_u32(&sim, uints, 4);
    let t = threads as i32;
    assert_eq!(iv[0], t - 1);
    assert_eq!(iv[1], -(t - 1));
    let and = (0..t).fold(-1i32, |acc, i| acc & !(1 << (i % 31)));
    let or = (0..t).fold(0i32, |acc, i| acc | (1 << (i % 31)));
    let xor = (0..t).fold(0i32, |acc, i| acc ^ i);
    assert_eq!((iv[2], iv[3], iv[4]), (and, or, xor));
    assert_eq!(iv[5], 1000 - 2 * t);
    // CAS chain: thread 0 swaps -1 -> 0, then thread 1 sees 0 ... in lane order
    assert_eq!(iv[6], t - 1);
    let mut inc = 0u32;
    let mut dec = 0u32;
    for _ in 0..threads {
        inc = if inc >= 9 { 0 } else { inc + 1 };
        dec = if dec == 0 || dec > 9 { 9 } else { dec - 1 };
    }
    assert_eq!((uv[0], uv[1], uv[2]), (inc, dec, 7));
    assert_eq!(download_f32(&sim, f, 1)[0], 50.0);
    let mut raw = [0u8; 16];
    sim.read(d, &mut raw).unwrap();
    assert_eq!(f64::from_le_bytes(raw[..8].try_into().unwrap()), 25.0);
    assert_eq!(u64::from_le_bytes(raw[8..].try_into().unwrap()), 300);
}

#[test]
fn dot_product_with_shared_tree() {
    let (mut sim, m) = sim_or_skip!("dot.cu");
    let n = 10_000;
    let (blocks, threads) = (8usize, 256usize);
    let a = rand_f32(n, 21, -1.0, 1.0);
    let b = rand_f32(n, 22, -1.0, 1.0);
    let (pa, pb) = (upload_f32(&mut sim, &a), upload_f32(&mut sim, &b));
    let pp = sim.alloc(blocks * 4).unwrap();
    let rep = sim
        .launch(
            m,
            "dot",
            (blocks as u32, 1, 1),
            (threads as u32, 1, 1),
            0,
            &[ptr(pa), ptr(pb), ptr(pp), ParamValue::I32(n as i32)],
        )
        .unwrap();
    let got = download_f32(&sim, pp, blocks);
    for blk in 0..blocks {
        let mut cache: Vec<f32> = (0..threads)
            .map(|t| {
                let mut s = 0.0f32;
                let mut i = blk * threads + t;
                while i < n {
                    s = a[i].mul_add(b[i], s);
                    i += blocks * threads;
                }
                s
            })
            .collect();
        let mut s = threads / 2;
        while s > 0 {
            for t in 0..s {
                cache[t] += cache[t + s];
            }
            s /= 2;
        }
        assert_eq!(got[blk].to_bits(), cache[0].to_bits(), "block {blk}");
    }
    assert!(rep.races.is_empty(), "{:?}", rep.races);
    assert_eq!(rep.stats.barriers as usize, blocks * 9);
}

fn matmul_ref(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for p in 0..k {
                acc = a[i * k + p].mul_add(b[p * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
    c
}

#[test]
fn matmul_tiled_naive_and_racy() {
    let (mut sim, md) = sim_or_skip!("matmul.cu");
    let (m, n, k) = (45usize, 38usize, 50usize);
    let a = rand_f32(m * k, 31, -1.0, 1.0);
    let b = rand_f32(k * n, 32, -1.0, 1.0);
    let want = matmul_ref(&a, &b, m, n, k);
    let (pa, pb) = (upload_f32(&mut sim, &a), upload_f32(&mut sim, &b));
    let pc = sim.alloc(m * n * 4).unwrap();
    let args =
        [ptr(pa), ptr(pb), ptr(pc), ParamValue::I32(m as i32), ParamValue::I32(n as i32), ParamValue::I32(k as i32)];
    let grid = (n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1);
    for name in ["matmul_tiled", "matmul_naive", "matmul_tiled_racy"] {
        sim.fill(pc, 0xff, m * n * 4).unwrap();
        let rep = sim.launch(md, name, grid, (16, 16, 1), 0, &args).unwrap();
        let got = download_f32(&sim, pc, m * n);
        if name != "matmul_tiled_racy" {
            for i in 0..m * n {
                assert_eq!(got[i].to_bits(), want[i].to_bits(), "{name}: element {i}");
            }
        }
        match name {
            "matmul_tiled" => {
                assert!(rep.races.is_empty(), "{:?}", rep.races);
                assert!(rep.stats.shared_load_requests > 0);
            }
            "matmul_naive" => assert_eq!(rep.stats.shared_load_requests, 0),
            _ => {
                assert!(!rep.races.is_empty(), "the missing barrier must be reported");
                let r = &rep.races[0];
                assert!(r.source_a.as_deref().is_some_and(|s| s.contains("matmul.cu")), "{r:?}");
                assert_ne!(r.thread_a, r.thread_b);
            }
        }
    }
}

#[test]
fn transpose_coalescing_and_bank_conflicts() {
    let (mut sim, m) = sim_or_skip!("transpose.cu");
    let (w, h) = (96usize, 64usize);
    let input: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
    let pin = upload_f32(&mut sim, &input);
    let pout = sim.alloc(w * h * 4).unwrap();
    let args = [ptr(pin), ptr(pout), ParamValue::I32(w as i32), ParamValue::I32(h as i32)];
    let mut reports = Vec::new();
    for name in ["transpose_naive", "transpose_coalesced", "transpose_padded"] {
        sim.fill(pout, 0, w * h * 4).unwrap();
        let rep = sim.launch(m, name, ((w / 32) as u32, (h / 32) as u32, 1), (32, 8, 1), 0, &args).unwrap();
        let out = download_f32(&sim, pout, w * h);
        for y in 0..h {
            for x in 0..w {
                assert_eq!(out[x * h + y], input[y * w + x], "{name} at ({x},{y})");
            }
        }
        assert!(rep.races.is_empty(), "{name}: {:?}", rep.races);
        reports.push(rep);
    }
    let (naive, coal, pad) = (&reports[0].stats, &reports[1].stats, &reports[2].stats);
    // naive writes: every lane in its own row → 32 sectors per request
    assert_eq!(naive.global_store_sectors_per_request(), 32.0);
    assert_eq!(coal.global_store_sectors_per_request(), 4.0);
    assert_eq!(naive.global_load_sectors_per_request(), 4.0);
    assert!(naive.global_store_sectors >= 8 * coal.global_store_sectors);
    // the column read of the unpadded tile: 32-way bank conflicts; padded: none
    let shared_loads = |s: &ptx_sim::Stats| {
        s.per_instruction.iter().filter(|r| r.kind == AccessKind::SharedLoad).cloned().collect::<Vec<_>>()
    };
    assert!(shared_loads(coal).iter().any(|r| r.max_ways == 32), "{}", coal.report());
    assert!(coal.shared_bank_conflicts > 0);
    assert!(shared_loads(pad).iter().all(|r| r.max_ways == 1), "{}", pad.report());
    assert_eq!(pad.shared_bank_conflicts, 0);
    // per-instruction rows carry source lines (compiled with -lineinfo)
    assert!(naive.per_instruction.iter().all(|r| r.source.as_deref().is_some_and(|s| s.contains("transpose.cu:"))));
}

#[test]
fn reduction_divergence_interleaved_vs_sequential() {
    let (mut sim, m) = sim_or_skip!("reduction.cu");
    let n = 4096usize;
    let threads = 256usize;
    let blocks = n / threads;
    let mut r = Rng(41);
    let input: Vec<i32> = (0..n).map(|_| r.range(-1000, 1000)).collect();
    let pin = upload_i32(&mut sim, &input);
    let pout = sim.alloc(blocks * 4).unwrap();
    let args = [ptr(pin), ptr(pout), ParamValue::I32(n as i32)];
    let mut div = Vec::new();
    for name in ["reduce_interleaved", "reduce_sequential"] {
        let rep =
            sim.launch(m, name, (blocks as u32, 1, 1), (threads as u32, 1, 1), (threads * 4) as u32, &args).unwrap();
        let out = download_i32(&sim, pout, blocks);
        for b in 0..blocks {
            let want: i32 = input[b * threads..(b + 1) * threads].iter().sum();
            assert_eq!(out[b], want, "{name} block {b}");
        }
        assert!(rep.races.is_empty(), "{name}: {:?}", rep.races);
        div.push(rep.stats.divergent_branches);
    }
    assert!(div[0] > 2 * div[1], "interleaved {} vs sequential {}", div[0], div[1]);
}

#[test]
fn warp_shuffle_reduce_and_ballot() {
    let (mut sim, m) = sim_or_skip!("reduction.cu");
    let n = 100usize;
    let v = rand_f32(n, 51, 0.0, 1.0);
    let pin = upload_f32(&mut sim, &v);
    let warps = 4usize;
    let pout = sim.alloc(warps * 4).unwrap();
    let pb = sim.alloc(warps * 4).unwrap();
    sim.launch(m, "warp_reduce", (2, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout), ptr(pb), ParamValue::I32(n as i32)])
        .unwrap();
    let out = download_f32(&sim, pout, warps);
    let ballots = download_u32(&sim, pb, warps);
    for wi in 0..warps {
        let mut vals: Vec<f32> = (0..32).map(|l| v.get(wi * 32 + l).copied().unwrap_or(0.0)).collect();
        let ballot = (0..32).fold(0u32, |acc, l| acc | ((vals[l] > 0.5) as u32) << l);
        for off in [16, 8, 4, 2, 1] {
            let old = vals.clone();
            for l in 0..32 {
                vals[l] = old[l] + if l + off < 32 { old[l + off] } else { old[l] };
            }
        }
        assert_eq!(out[wi].to_bits(), vals[0].to_bits(), "warp {wi}");
        assert_eq!(ballots[wi], ballot, "warp {wi}");
    }
}

#[test]
fn warp_shuffles_votes_activemask() {
    let (mut sim, m) = sim_or_skip!("reduction.cu");
    let n = 64usize;
    let mut r = Rng(61);
    let v: Vec<i32> = (0..n).map(|_| r.range(-5, 120)).collect();
    let pin = upload_i32(&mut sim, &v);
    let pout = sim.alloc(n * 8 * 4).unwrap();
    sim.launch(m, "warp_misc", (1, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout)]).unwrap();
    let out = download_i32(&sim, pout, n * 8);
    for i in 0..n {
        let (w0, lane) = (i / 32 * 32, i % 32);
        let wv = &v[w0..w0 + 32];
        let odd_mask = (0..32).fold(0u32, |acc, l| acc | ((wv[l] & 1 != 0) as u32) << l);
        let want = [
            wv[3],
            if lane == 0 { wv[0] } else { wv[lane - 1] },
            wv[lane ^ 5],
            wv.iter().all(|&x| x > 0) as i32,
            wv.iter().any(|&x| x > 100) as i32,
            -1,
            wv[(lane & !15) | 7],
            if v[i] & 1 != 0 { odd_mask as i32 } else { 0 },
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(out[i * 8 + j], *w, "thread {i}, op {j}");
        }
    }
}

#[test]
fn syncthreads_count_and_or() {
    let (mut sim, m) = sim_or_skip!("reduction.cu");
    let v: Vec<i32> = (0..64).map(|i| if i % 3 == 0 { 5 } else { -5 }).collect();
    let pin = upload_i32(&mut sim, &v);
    let pout = sim.alloc(64 * 4).unwrap();
    sim.launch(m, "sync_count", (1, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout)]).unwrap();
    let count = v.iter().filter(|&&x| x > 0).count() as i32;
    assert!(download_i32(&sim, pout, 64).iter().all(|&x| x == count * 100 + 10));
}

#[test]
fn stencil_with_constant_memory() {
    let (mut sim, m) = sim_or_skip!("misc.cu");
    let coef = [0.1f32, 0.2, 0.4, 0.2, 0.1];
    sim.write_symbol(m, "coef", &coef.iter().flat_map(|c| c.to_le_bytes()).collect::<Vec<_>>()).unwrap();
    assert!(matches!(sim.write_symbol(m, "nope", &[0]), Err(SimError::MissingSymbol(_))));
    let n = 1000usize;
    let input = rand_f32(n, 71, -1.0, 1.0);
    let pin = upload_f32(&mut sim, &input);
    let pout = sim.alloc(n * 4).unwrap();
    let rep = sim
        .launch(
            m,
            "stencil_const",
            (n.div_ceil(256) as u32, 1, 1),
            (256, 1, 1),
            0,
            &[ptr(pin), ptr(pout), ParamValue::I32(n as i32)],
        )
        .unwrap();
    let out = download_f32(&sim, pout, n);
    for g in 0..n {
        let mut r = 0f32;
        for (k, c) in coef.iter().enumerate() {
            let idx = g as isize + k as isize - 2;
            let x = if idx >= 0 && (idx as usize) < n { input[idx as usize] } else { 0.0 };
            r = c.mul_add(x, r);
        }
        assert_eq!(out[g].to_bits(), r.to_bits(), "element {g}");
    }
    assert!(rep.stats.const_load_requests > 0);
    assert!(rep.races.is_empty(), "{:?}", rep.races);
    let mut cnt = [0u8; 4];
    sim.read_symbol(m, "device_counter", &mut cnt).unwrap();
    assert_eq!(i32::from_le_bytes(cnt), 1);
}

#[test]
fn dynamic_shared_memory() {
    let (mut sim, m) = sim_or_skip!("misc.cu");
    let n = 300usize;
    let a = rand_f32(n, 81, -2.0, 2.0);
    let b = rand_f32(n, 82, -2.0, 2.0);
    let (pa, pb) = (upload_f32(&mut sim, &a), upload_f32(&mut sim, &b));
    let pout = sim.alloc(n * 4).unwrap();
    let threads = 128usize;
    let args = [ptr(pa), ptr(pb), ptr(pout), ParamValue::I32(n as i32)];
    sim.launch(m, "dyn_shared_two", (3, 1, 1), (threads as u32, 1, 1), (2 * threads * 4) as u32, &args).unwrap();
    let out = download_f32(&sim, pout, n);
    for i in 0..n {
        let blk = i / threads;
        let j = blk * threads + threads - 1 - i % threads;
        let (x, y) = if j < n { (a[j], b[j]) } else { (0.0, 0.0) };
        assert_eq!(out[i], x * y, "element {i}");
    }
    // too little dynamic shared memory: the second half of the buffer is out of bounds
    let err =
        sim.launch(m, "dyn_shared_two", (3, 1, 1), (threads as u32, 1, 1), (threads * 4) as u32, &args).unwrap_err();
    assert!(
        matches!(err, SimError::SharedOutOfBounds { write: true, dynamic: true, distance: 0, ref var, .. } if var == "buf"),
        "{err}"
    );
    let err = sim.launch(m, "dyn_shared_two", (1, 1, 1), (32, 1, 1), 64 * 1024, &args).unwrap_err();
    assert!(matches!(err, SimError::SharedMemoryTooLarge { .. }), "{err}");
}

#[test]
fn out_of_bounds_write_names_the_line() {
    let (mut sim, m) = sim_or_skip!("misc.cu");
    let ptx = kernel_ptx("misc.cu").unwrap();
    let n = 256;
    let p = sim.alloc(n * 4).unwrap();
    let err = sim.launch(m, "oob_write", (1, 1, 1), (32, 1, 1), 0, &[ptr(p), ParamValue::I32(n as i32)]).unwrap_err();
    match err {
        SimError::IllegalAddress { addr, ptx_line, ref kernel, thread, block, ref location, .. } => {
            assert_eq!(addr, p + n as u64 * 4);
            assert_eq!(kernel, "oob_write");
            assert_eq!(thread, (0, 0, 0));
            assert_eq!(block, (0, 0, 0));
            let line = ptx.lines().nth(ptx_line - 1).unwrap();
            assert!(line.contains("st.global"), "PTX line {ptx_line}: {line}");
            assert!(location.as_deref().is_some_and(|l| l.contains("misc.cu:")), "{location:?}");
        }
        e => panic!("expected IllegalAddress, got {e}"),
    }
}

#[test]
fn endless_loop_hits_the_step_limit() {
    let cfg = SimConfig { max_steps_per_launch: 200_000, ..Default::default() };
    let (mut sim, m) = sim_or_skip!("misc.cu", cfg);
    let flag = sim.alloc(4).unwrap();
    let err = sim.launch(m, "forever", (2, 1, 1), (64, 1, 1), 0, &[ptr(flag)]).unwrap_err();
    assert!(matches!(err, SimError::StepLimit { steps: 200_000, .. }), "{err}");
    // with the flag set, it returns at once
    sim.write(flag, &1i32.to_le_bytes()).unwrap();
    sim.launch(m, "forever", (2, 1, 1), (64, 1, 1), 0, &[ptr(flag)]).unwrap();
}

#[test]
fn syncthreads_in_divergent_code_is_reported() {
    let (mut sim, m) = sim_or_skip!("misc.cu");
    let p = sim.alloc(64 * 4).unwrap();
    let err = sim.launch(m, "bad_barrier", (1, 1, 1), (32, 1, 1), 0, &[ptr(p)]).unwrap_err();
    assert!(matches!(err, SimError::BarrierDivergence { .. }), "{err}");
    // threads that returned early do not block a barrier
    let rep = sim.launch(m, "early_exit_barrier", (1, 1, 1), (64, 1, 1), 0, &[ptr(p), ParamValue::I32(40)]).unwrap();
    let out = download_i32(&sim, p, 40);
    assert!(out.iter().enumerate().all(|(t, &x)| x == 39 - t as i32), "{out:?}");
    assert!(rep.races.is_empty());
}

#[test]
fn printf_is_captured() {
    let (mut sim, m) = sim_or_skip!("misc.cu");
    let rep = sim.launch(m, "hello", (1, 1, 1), (32, 1, 1), 0, &[ParamValue::I32(3)]).unwrap();
    assert_eq!(
        rep.printf.text,
        "thread 0 of 3: 0.000000 ok A 7 -5 ff\nthread 1 of 3: 0.500000 ok B 7 -5 ff\nthread 2 of 3: 1.000000 ok C 7 -5 ff\n"
    );
    assert_eq!(rep.printf.calls, 3);
}

#[test]
fn printf_past_the_cap_is_counted_not_kept() {
    let (mut sim, m) = sim_or_skip!("misc.cu");
    let n = 16 * 1024;
    let rep = sim.launch(m, "hello", (16, 1, 1), (1024, 1, 1), 0, &[ParamValue::I32(n)]).unwrap();
    assert!(rep.printf.text.len() <= ptx_sim::PRINTF_CAP, "{}", rep.printf.text.len());
    assert!(rep.printf.text.starts_with("thread 0 of 16384: 0.000000 ok A 7 -5 ff\n"));
    let kept = rep.printf.text.matches(" 7 -5 ff\n").count() as u64;
    assert_eq!(rep.printf.calls, n as u64);
    assert_eq!(rep.printf.dropped_calls, n as u64 - kept, "{kept} lines kept");
}

#[test]
fn local_arrays_calls_and_generic_pointers() {
    let (mut sim, m) = sim_or_skip!("misc.cu");
    let n = 96usize;
    let mut r = Rng(91);
    let input: Vec<i32> = (0..n).map(|_| r.range(0, 1000)).collect();
    let pin = upload_i32(&mut sim, &input);
    let pout = sim.alloc(n * 4).unwrap();
    sim.launch(m, "local_array", (3, 1, 1), (32, 1, 1), 0, &[ptr(pin), ptr(pout), ParamValue::I32(n as i32)]).unwrap();
    let out = download_i32(&sim, pout, n);
    for t in 0..n {
        let a: Vec<i32> = (0..32).map(|k| input[(t + k) % n]).collect();
        let idx = (input[t] & 31) as usize;
        assert_eq!(out[t], a[idx] + a[(idx * 7) & 31], "thread {t}");
    }

    let p = sim.alloc(128 * 4).unwrap();
    sim.launch(m, "calls", (1, 1, 1), (64, 1, 1), 0, &[ptr(p)]).unwrap();
    let out = download_i32(&sim, p, 64);
    assert!(out.iter().enumerate().all(|(t, &x)| x == (t * (t + 1) + 1) as i32));

    sim.fill(p, 0, 128 * 4).unwrap();
    let rep = sim.launch(m, "generic_shared", (1, 1, 1), (64, 1, 1), 0, &[ptr(p)]).unwrap();
    let out = download_i32(&sim, p, 128);
    for t in 0..64 {
        assert_eq!(out[t], if t % 2 == 0 { t as i32 } else { 0 }, "global part {t}");
        let s = t ^ 1;
        // the even slots of `s` are never written: poison, and reported
        let expect = if s % 2 == 1 { s as i32 } else { 0xA5A5_A5A5u32 as i32 };
        assert_eq!(out[64 + t], expect, "shared part {t}");
    }
    match rep.uninitialised_read {
        Some(SimError::UninitialisedRead { offset: 0, size: 4, thread: (1, 0, 0), ref location, .. }) => {
            assert!(location.as_deref().is_some_and(|l| l.ends_with("misc.cu:111")), "{location:?}")
        }
        ref e => panic!("expected the read of s[0] by thread 1: {e:?}"),
    }
}

#[test]
fn launch_validation() {
    let (mut sim, m) = sim_or_skip!("vecadd.cu");
    let p = sim.alloc(16).unwrap();
    let args = [ptr(p), ptr(p), ptr(p), ParamValue::I32(4)];
    assert!(matches!(sim.launch(m, "nope", (1, 1, 1), (1, 1, 1), 0, &args), Err(SimError::MissingKernel(_))));
    assert!(matches!(sim.launch(m, "vec_add", (1, 1, 1), (2048, 1, 1), 0, &args), Err(SimError::InvalidLaunch(_))));
    assert!(matches!(sim.launch(m, "vec_add", (0, 1, 1), (32, 1, 1), 0, &args), Err(SimError::InvalidLaunch(_))));
    assert!(matches!(sim.launch(m, "vec_add", (1, 1, 1), (32, 1, 1), 0, &args[..3]), Err(SimError::BadParams(_))));
    let bad = [ptr(p), ptr(p), ParamValue::I32(0), ParamValue::I32(4)];
    assert!(matches!(sim.launch(m, "vec_add", (1, 1, 1), (32, 1, 1), 0, &bad), Err(SimError::BadParams(_))));
    assert!(sim.has_kernel(m, "vec_add"));
    assert!(!sim.has_kernel(m, "vec_ad"));
}

#[test]
fn divergent_loops_reconverge_before_a_shuffle() {
    let (mut sim, m) = sim_or_skip!("control.cu");
    let n = 128usize;
    let mut r = Rng(101);
    let v: Vec<i32> = (0..n).map(|_| r.range(0, 100)).collect();
    let pin = upload_i32(&mut sim, &v);
    let pout = sim.alloc(n * 4).unwrap();
    let rep = sim.launch(m, "divergent_loops", (2, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout)]).unwrap();
    let s: Vec<i32> = v
        .iter()
        .map(|&x| {
            let mut s = 0;
            for k in 0..(x & 7) {
                if k & 1 == 1 {
                    s += k;
                } else {
                    s -= 1;
                }
                if s > 5 {
                    break;
                }
            }
            s
        })
        .collect();
    let out = download_i32(&sim, pout, n);
    for i in 0..n {
        assert_eq!(out[i], s[i] + s[i ^ 1], "thread {i}");
    }
    assert!(rep.stats.divergent_branches > 0);
}

#[test]
fn shuffle_with_absent_lanes_is_reported() {
    let (mut sim, m) = sim_or_skip!("control.cu");
    let p = sim.alloc(32 * 4).unwrap();
    let err = sim.launch(m, "partial_shuffle", (1, 1, 1), (32, 1, 1), 0, &[ptr(p)]).unwrap_err();
    match err {
        SimError::WarpMask { ref detail, .. } => {
            assert!(detail.contains("shfl") && detail.contains("never arrive"), "{detail}")
        }
        e => panic!("{e}"),
    }
}

#[test]
fn races_within_and_across_warps() {
    let (mut sim, m) = sim_or_skip!("control.cu");
    let p = sim.alloc(64 * 4).unwrap();
    let racy = sim.launch(m, "warp_shared", (1, 1, 1), (32, 1, 1), 0, &[ptr(p), ParamValue::I32(0)]).unwrap();
    assert_eq!(racy.races.len(), 1, "{:?}", racy.races);
    let r = &racy.races[0];
    assert_eq!(r.kind, ptx_sim::RaceKind::WriteRead);
    assert_eq!(r.occurrences, 32, "one per conflicting 4-byte word");
    let synced = sim.launch(m, "warp_shared", (1, 1, 1), (32, 1, 1), 0, &[ptr(p), ParamValue::I32(1)]).unwrap();
    assert!(synced.races.is_empty(), "{:?}", synced.races);
    let out = download_i32(&sim, p, 32);
    assert!(out.iter().enumerate().all(|(t, &x)| x == (t ^ 1) as i32));
    let cross = sim.launch(m, "cross_warp", (1, 1, 1), (64, 1, 1), 0, &[ptr(p)]).unwrap();
    assert!(!cross.races.is_empty());
    let off_ok = SimConfig { detect_races: false, ..SimConfig::default() };
    let (mut sim2, m2) = sim_or_skip!("control.cu", off_ok);
    let p2 = sim2.alloc(64 * 4).unwrap();
    assert!(sim2.launch(m2, "cross_warp", (1, 1, 1), (64, 1, 1), 0, &[ptr(p2)]).unwrap().races.is_empty());
}

#[test]
fn byte_arrays_in_shared_memory_are_not_false_races() {
    let (mut sim, m) = sim_or_skip!("control.cu");
    let text: Vec<u8> = (0..256).map(|i| b"ACGT"[(i * 7 + i / 5) % 4]).collect();
    let pin = sim.alloc(256).unwrap();
    sim.write(pin, &text).unwrap();
    let pout = sim.alloc(256 * 4).unwrap();
    let rep = sim.launch(m, "char_shared", (1, 1, 1), (256, 1, 1), 0, &[ptr(pin), ptr(pout)]).unwrap();
    assert!(rep.races.is_empty(), "{:?}", rep.races);
    let out = download_i32(&sim, pout, 256);
    for t in 0..256 {
        let c = (0..4).filter(|k| text[(t + k) % 256] == b'A').count() as i32;
        assert_eq!(out[t], c, "thread {t}");
    }
}

#[test]
fn three_dimensional_grid() {
    let (mut sim, m) = sim_or_skip!("control.cu");
    let (nx, ny, nz) = (13usize, 7usize, 5usize);
    let p = sim.alloc(nx * ny * nz * 4).unwrap();
    let block = (4u32, 3u32, 2u32);
    let grid = (nx.div_ceil(4) as u32, ny.div_ceil(3) as u32, nz.div_ceil(2) as u32);
    let args = [ptr(p), ParamValue::I32(nx as i32), ParamValue::I32(ny as i32), ParamValue::I32(nz as i32)];
    sim.launch(m, "coords3d", grid, block, 0, &args).unwrap();
    let out = download_i32(&sim, p, nx * ny * nz);
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let (tx, ty) = (x % 4, y % 3);
                let want = x + 100 * y + 10000 * z + 1_000_000 * (tx + ty * 4);
                assert_eq!(out[(z * ny + y) * nx + x], want as i32, "({x},{y},{z})");
            }
        }
    }
}

#[test]
fn shared_histogram_of_bytes() {
    let (mut sim, m) = sim_or_skip!("control.cu");
    let n = 10_000usize;
    let mut r = Rng(111);
    let data: Vec<u8> = (0..n).map(|_| (r.next_u32() % 256) as u8).collect();
    let pin = sim.alloc(n).unwrap();
    sim.write(pin, &data).unwrap();
    let ph = sim.alloc(256 * 4).unwrap();
    let rep = sim
        .launch(m, "uint8_histogram", (4, 1, 1), (128, 1, 1), 0, &[ptr(pin), ptr(ph), ParamValue::I32(n as i32)])
        .unwrap();
    let hist = download_u32(&sim, ph, 256);
    let mut want = [0u32; 256];
    for &b in &data {
        want[b as usize] += 1;
    }
    assert_eq!(hist, want.to_vec());
    assert!(rep.races.is_empty(), "{:?}", rep.races);
    assert_eq!(rep.stats.shared_atomics, n as u64);
}

#[test]
fn double_precision() {
    let (mut sim, m) = sim_or_skip!("control.cu");
    let n = 100usize;
    let mut r = Rng(121);
    let x: Vec<f64> = (0..n).map(|_| (r.f32() as f64 - 0.5) * 1e3 + r.f32() as f64 * 1e-6).collect();
    let pin = sim.alloc(n * 8).unwrap();
    sim.write(pin, &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
    let pout = sim.alloc(n * 3 * 8).unwrap();
    sim.launch(m, "double_math", (1, 1, 1), (128, 1, 1), 0, &[ptr(pin), ptr(pout), ParamValue::I32(n as i32)]).unwrap();
    let mut raw = vec![0u8; n * 24];
    sim.read(pout, &mut raw).unwrap();
    let out: Vec<f64> = raw.chunks(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
    for i in 0..n {
        let v = x[i];
        assert_eq!(out[3 * i].to_bits(), (v / 3.0 + v.abs().sqrt()).to_bits(), "{v}");
        assert_eq!(out[3 * i + 1].to_bits(), v.mul_add(v, -1.0).to_bits());
        assert_eq!(out[3 * i + 2].to_bits(), ((v as f32) as f64 - v.floor()).to_bits());
    }
}

#[test]
fn a_cancelled_launch_stops_long_before_the_step_limit() {
    let cancel = ptx_sim::CancelFlag::default();
    let cfg = SimConfig { max_steps_per_launch: u64::MAX, cancel: Some(cancel.clone()), ..Default::default() };
    let (mut sim, m) = sim_or_skip!("misc.cu", cfg);
    let flag = sim.alloc(4).unwrap();
    let flipper = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        cancel.cancel();
    });
    let start = std::time::Instant::now();
    let err = sim.launch(m, "forever", (2, 1, 1), (64, 1, 1), 0, &[ptr(flag)]).unwrap_err();
    flipper.join().unwrap();
    assert!(matches!(err, SimError::Cancelled { ref kernel } if kernel == "forever"), "{err}");
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "took {:?}", start.elapsed());
}

#[test]
fn atomics_per_block_address_and_contention() {
    let (mut sim, m) = sim_or_skip!("atomics.cu");
    // 4 blocks of 256 bytes, each byte one of 8 values: every bin hit 32 times per block
    let n = 1024;
    let bytes: Vec<u8> = (0..n).map(|i| (i % 8) as u8 * 3).collect();
    let pd = sim.alloc(n).unwrap();
    sim.write(pd, &bytes).unwrap();
    let pb = sim.alloc(256 * 4).unwrap();
    let args = [ptr(pd), ParamValue::I32(n as i32), ptr(pb)];
    sim.fill(pb, 0, 1024).unwrap();
    let g = sim.launch(m, "histogram_global", (4, 1, 1), (256, 1, 1), 0, &args).unwrap().stats;
    assert_eq!(download_u32(&sim, pb, 256)[3], 128);
    assert_eq!((g.blocks, g.global_atomics, g.max_block_global_atomics), (4, 1024, 256));
    assert_eq!(g.max_global_atomics_per_block_address, 32, "8 bins per block, 32 bytes each");
    assert_eq!(g.global_atomic_block_addresses, 4 * 8);
    // each warp's 32 lanes hit 8 addresses: 24 lanes wait behind another, 4 on each address
    assert_eq!((g.atomic_requests, g.atomic_same_address_lanes, g.max_lanes_per_atomic_address), (32, 32 * 24, 4));

    sim.fill(pb, 0, 1024).unwrap();
    let p = sim.launch(m, "histogram_private", (4, 1, 1), (256, 1, 1), 0, &args).unwrap().stats;
    assert_eq!(download_u32(&sim, pb, 256)[3], 128);
    assert_eq!(p.max_global_atomics_per_block_address, 1, "merged once per bin per block");
    assert_eq!((p.global_atomics, p.global_atomic_block_addresses, p.max_block_global_atomics), (32, 32, 8));
    assert_eq!((p.shared_atomics, p.max_block_shared_atomics), (1024, 256));
    // the merge's lanes all differ; the shared atomics contend as the global ones did
    assert_eq!(p.max_lanes_per_atomic_address, 4);
}

#[test]
fn data_additions_count_the_work_not_the_index_arithmetic() {
    let (mut sim, m) = sim_or_skip!("scan.cu");
    let n = 512;
    let input: Vec<i32> = (0..n as i32).map(|i| i % 7 - 3).collect();
    let pi = upload_i32(&mut sim, &input);
    let po = sim.alloc(n * 4).unwrap();
    let args = [ptr(pi), ptr(po), ParamValue::I32(n as i32)];
    let mut expected = input.clone();
    for s in 0..n {
        if s % 256 != 0 {
            expected[s] += expected[s - 1];
        }
    }
    let ks = sim.launch(m, "kogge_stone", (2, 1, 1), (256, 1, 1), 0, &args).unwrap().stats;
    assert_eq!(download_i32(&sim, po, n), expected);
    // per section of 256: sum over strides 1..128 of (256 - stride) = 8 * 256 - 255
    assert_eq!(ks.data_additions, 2 * (8 * 256 - 255));
    sim.fill(po, 0, n * 4).unwrap();
    let bk = sim.launch(m, "brent_kung", (2, 1, 1), (128, 1, 1), 0, &args).unwrap().stats;
    assert_eq!(download_i32(&sim, po, n), expected);
    // up-sweep 255, down-sweep 255 - 7 per section: 2(n - 1) - log2 n
    assert_eq!(bk.data_additions, 2 * (2 * 255 - 8));
}
