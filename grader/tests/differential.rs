//! The differential corpus (grader/differential) on the simulator: every case
//! runs (where NVRTC is not required, the ones needing headers that could not
//! be provisioned excepted), and
//! outputs that are cheap to compute on the CPU match it exactly. On a GPU,
//! `grader differential --backend cuda` produces the digests to compare with.

use crate::support;

use std::collections::HashMap;
use std::path::Path;

use grader::differential::{self, Inputs, Outputs, N};
use support::{nvrtc, nvrtc_required};

/// Cases that include a device header (cuda_fp16.h, cooperative_groups.h), which the include policy
/// allows only once the headers are provisioned.
const NEED_HEADERS: &[&str] =
    &["fp16", "fp16_rn", "contraction", "coop_groups", "async_copy", "atomics_all", "coop_groups_scan"];

const THREADS: usize = differential::THREADS as usize;

fn run_on_sim() -> Option<(Inputs, HashMap<String, Outputs>)> {
    let compiler = nvrtc()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let gpu = kit::Gpu::simulator();
    let results = differential::run(&root, &gpu, &compiler, 1).unwrap();
    assert!(results.len() >= 12, "the corpus has {} cases", results.len());
    let mut out = HashMap::new();
    for r in results {
        match r.outputs {
            Ok(o) => {
                out.insert(r.name, o);
            }
            Err(e)
                if !nvrtc_required()
                    && NEED_HEADERS.contains(&r.name.as_str())
                    && format!("{e:#}").contains("is not allowed") =>
            {
                eprintln!("note: {} needs headers that are not provisioned here", r.name)
            }
            Err(e) => panic!("{}: {e:#}", r.name),
        }
    }
    Some((Inputs::new(1), out))
}

#[test]
// Indexes several buffers by element, as the kernels do.
#[allow(clippy::needless_range_loop)]
fn the_corpus_runs_on_the_simulator_and_matches_the_cpu() {
    let Some((inp, out)) = run_on_sim() else { return };
    let x = &inp.i;
    let warp_of = |i: usize| (i / 32) * 32..((i / 32) * 32 + 32).min(N);
    let block_of = |i: usize| (i / THREADS) * THREADS..((i / THREADS) * THREADS + THREADS).min(N);
    let nblocks = N.div_ceil(THREADS);

    // ballot and popc
    let o = &out["ballot_popc"];
    for i in 0..N {
        let pos: Vec<usize> = warp_of(i).filter(|&j| x[j] > 0).collect();
        assert_eq!(o.i[i], pos.len() as i32, "ballot_popc out_i[{i}]");
        assert_eq!(o.f[i], pos.iter().filter(|&&j| j < i).count() as f32, "ballot_popc out_f[{i}]");
    }

    // __syncthreads_count / and / or
    let o = &out["syncthreads_count"];
    for i in 0..N {
        let b = block_of(i);
        assert_eq!(o.i[i], b.clone().filter(|&j| x[j] > 100).count() as i32);
        // threads past n hold 0, which passes `v > -990`
        let all = b.clone().all(|j| x[j] > -990);
        assert_eq!(o.f[i], all as i32 as f32, "syncthreads_and at {i}");
        assert_eq!(o.d[i], b.clone().any(|j| x[j] > 995) as i32 as f64);
    }

    // atomics whose final values do not depend on the order
    let o = &out["atomic_inc"];
    let inc = (0..N).fold(0u32, |v, _| if v >= 37 { 0 } else { v + 1 });
    let dec = (0..N).fold(0u32, |v, _| if v == 0 || v > 11 { 11 } else { v - 1 });
    assert_eq!((o.i[0] as u32, o.i[1] as u32), (inc, dec));
    assert_eq!(o.i[2], *x.iter().max().unwrap());
    assert_eq!(o.i[3], (*x.iter().min().unwrap()).min(0));
    assert_eq!(o.i[4], x.iter().fold(0, |a, v| a | 1 << (v & 31)));
    assert_eq!(o.i[5], x.iter().fold(0, |a, v| a ^ v));
    for b in 0..16 {
        assert_eq!(o.i[16 + b], x.iter().filter(|&&v| ((v + 1000) & 15) as usize == b).count() as i32);
    }

    // the atomicCAS loops
    let o = &out["cas_loop"];
    assert_eq!(o.f[0], inp.f.iter().fold(0f32, |a, &v| a.max(v)));
    for b in 0..nblocks {
        let p = (b * THREADS..((b + 1) * THREADS).min(N)).fold(1u64, |p, j| p * (x[j] + 1001) as u64 % 1_000_003);
        assert_eq!(o.i[b], p as i32, "cas_loop block {b}");
    }

    // double-precision atomicAdd (exact sums)
    let o = &out["atomic_add_f64"];
    assert_eq!(o.d[0], inp.d.iter().sum::<f64>());
    assert_eq!(o.f[0], 0.25 * N as f32);
    for b in 0..nblocks {
        assert_eq!(o.d[1 + b], (b * THREADS..((b + 1) * THREADS).min(N)).map(|j| inp.d[j] * 2.0).sum::<f64>());
    }

    // a local array sorted per thread
    let o = &out["local_array"];
    for i in 0..N {
        let mut a: Vec<i32> = (0..16).map(|k| x[(i + k * 37) % N]).collect();
        a.sort();
        assert_eq!(o.i[i], a[((x[i] + 1000) & 15) as usize]);
        assert_eq!(o.f[i], (a[15] - a[0]) as f32);
    }

    // A product read once by a sum, with no rounding spelled, is fused as ptxas
    // fuses it (one rounding); one used twice is rounded first (as on an H100).
    if let Some(o) = out.get("contraction") {
        for i in 0..N {
            let (x, y, z) = (inp.f[i], inp.f[(i + 7) % N] * 3.0, inp.f[(i + 13) % N]);
            let (dx, dy, dz) = (inp.d[i], inp.d[(i + 7) % N] * (1.0 / 3.0), inp.d[(i + 13) % N]);
            assert_eq!(o.f[i].to_bits(), x.mul_add(y, z).to_bits(), "contraction out_f[{i}]");
            assert_eq!(o.d[i].to_bits(), dx.mul_add(dy, dz).to_bits(), "contraction out_d[{i}]");
        }
    }
    let o = &out["fp32_mul_add"];
    for i in 0..N {
        let m = inp.f[i] * (inp.f[(i + 7) % N] * 3.0);
        let z = inp.f[(i + 13) % N];
        assert_eq!((o.f[i].to_bits(), o.i[i]), ((m + z).to_bits(), m.to_bits() as i32), "fp32_mul_add at {i}");
        assert_eq!(o.d[i], (m - z) as f64, "fp32_mul_add out_d[{i}]");
    }

    // switch
    let o = &out["switch"];
    for i in 0..N {
        let (v, f) = (x[i], inp.f[i]);
        let (r, g) = match (v + 1000) % 9 {
            0 => (v * 3, f),
            1 => (v - 7, f * 2.0),
            2 => (v ^ 0x55, f),
            3 | 4 => (v << 2, -f),
            5 => (v / 3, f),
            7 => (!v, f * f),
            _ => (0, f),
        };
        assert_eq!((o.i[i], o.f[i].to_bits()), (r, g.to_bits()), "switch at {i}");
    }

    // integer division by run-time values (the float parts are IEEE, compared on a GPU)
    let o = &out["division"];
    for i in 0..N {
        let a = x[i];
        let b = match x[(i + 1) % N] {
            0 => 7,
            b => b,
        };
        let (ua, ub) = ((a as u32).wrapping_mul(2_654_435_761), b as u32 | 1);
        let want = (a / b)
            .wrapping_add((a % b).wrapping_mul(1000))
            .wrapping_add((ua / ub) as i32)
            .wrapping_add((ua % ub) as i32);
        assert_eq!(o.i[i], want, "division at {i}");
    }

    // 64-bit indexing
    let o = &out["index64"];
    for i in 0..N {
        let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let j = ((h >> 40) % N as u64) as usize;
        let w = x[i] as i64 * x[j] as i64 * 4097;
        assert_eq!(o.i[i], (w >> 7) as i32 ^ j as i32);
        assert_eq!(o.d[i], w as f64);
    }

    // warp reductions: the shuffle tree of ints and __reduce_*_sync
    let o = &out["warp_reduce"];
    for i in 0..N {
        let w = warp_of(i);
        let lane = i % 32;
        let v = |j: usize| if j < N { x[j] } else { 0 };
        let base = (i / 32) * 32;
        let u = |j: usize| (v(j) + 1000) as u32;
        let all = base..base + 32;
        let s: i32 = if lane == 0 { w.clone().map(v).sum() } else { -1 };
        let radd = all.clone().map(u).fold(0u32, |a, b| a.wrapping_add(b));
        let rmin = all.clone().map(u).min().unwrap();
        let rmax = all.clone().map(v).max().unwrap();
        let rand = all.clone().map(|j| u(j) | 0x400).fold(!0, |a, b| a & b);
        let ror = all.clone().map(u).fold(0, |a, b| a | b);
        let rxor = all.clone().map(u).fold(0, |a, b| a ^ b);
        let m = all.clone().filter(|&j| v(j) & 3 == v(i) & 3).fold(0u32, |a, j| a | 1 << (j - base));
        let up = if lane >= 3 { v(i - 3) } else { v(i) };
        let idx = v(base + (lane * 7) % 32);
        if lane == 0 {
            let want = s
                .wrapping_add(radd as i32)
                .wrapping_add(rmin as i32 * 3)
                .wrapping_add(rmax * 5)
                .wrapping_add((rand ^ ror ^ rxor) as i32)
                .wrapping_add(m as i32)
                .wrapping_add(up)
                .wrapping_add(idx);
            assert_eq!(o.i[i], want, "warp_reduce at {i}");
        }
        assert_eq!(o.d[i], m.count_ones() as f64);
    }

    // printf leaves the kernel's results alone
    let o = &out["printf_ret"];
    assert!((0..N).all(|i| o.i[i] == x[i] * 3));

    feature_corpus(&inp, &out);
}

/// f16 bits of a small non-negative integer (exact below 2048).
fn f16_of(k: u32) -> u16 {
    if k == 0 {
        return 0;
    }
    let e = 31 - k.leading_zeros();
    (((e + 15) << 10) | ((k << (10 - e)) & 0x3ff)) as u16
}

/// The fidelity sweep's cases (see ptx-sim/tests/feature_sweep.rs): what the
/// simulator computes for them, against the CPU. `math_functions` is left to
/// the GPU's digests (libdevice's bits, not the CPU's).
#[allow(clippy::needless_range_loop)]
fn feature_corpus(inp: &Inputs, out: &HashMap<String, Outputs>) {
    let x = &inp.i;
    let v = |j: usize| if j < N { x[j] } else { 0 };

    // cooperative groups and warpSize
    if let Some(o) = out.get("coop_groups") {
        for i in 0..N {
            let (lane, base, t) = (i % 32, i / 32 * 32, i % THREADS);
            let w = base..base + 32;
            let wsum = w.clone().map(v).fold(0i32, i32::wrapping_add);
            let wmax = w.clone().map(v).max().unwrap();
            let down = if lane == 31 { 0 } else { v(i + 1) };
            let want = wsum.wrapping_add(3 * wmax).wrapping_add(5 * down).wrapping_add(7 * v(base));
            assert_eq!(o.i[i], want, "coop_groups out_i[{i}]");
            assert_eq!(o.f[i], (32_000 + (t % 4) * 100 + (t / 32) * 10 + 4) as f32, "coop_groups out_f[{i}]");
            assert_eq!(o.d[i], 288.0);
        }
    }

    // cooperative groups' scans, partitions, a 16-thread tile and tile votes:
    // every lane of a warp takes part (no thread has returned yet), lanes past
    // n with the value 0. (`out_f`, a float reduce, is left to the GPU's digests.)
    if let Some(o) = out.get("coop_groups_scan") {
        for i in 0..N {
            let (lane, base) = (i % 32, i / 32 * 32);
            let warp: Vec<i32> = (base..base + 32).map(v).collect();
            let mine = warp[lane];
            let before = &warp[..lane];
            let inc = before.iter().fold(mine, |s, &w| s.wrapping_add(w));
            let exc = inc.wrapping_sub(mine);
            let label = |w: i32| w & 3;
            let part_size = warp.iter().filter(|&&w| label(w) == label(mine)).count() as i32;
            let part_rank = before.iter().filter(|&&w| label(w) == label(mine)).count() as i32;
            let bin_rank = before.iter().filter(|&&w| (w > 0) == (mine > 0)).count() as i32;
            let r = part_size * 100 + bin_rank + 32 * 10_000 + part_rank;
            let min16 = *warp[lane / 16 * 16..lane / 16 * 16 + 16].iter().min().unwrap();
            let ballot = warp.iter().enumerate().filter(|(_, &w)| w > 0).fold(0u32, |m, (j, _)| m | 1 << j);
            let any = warp.iter().any(|&w| w > 500) as u32 + 2 * warp.iter().all(|&w| w > -2000) as u32;
            // NVRTC sinks `match_any` into the `if (i < n)`: lanes past n have exited by then.
            let same_parity =
                (0..32).filter(|&j| base + j < N && warp[j] & 1 == mine & 1).fold(0u32, |m, j| m | 1 << j);
            let want = inc
                .wrapping_add(exc.wrapping_mul(3))
                .wrapping_add(r)
                .wrapping_add(min16)
                .wrapping_add(any.wrapping_add(ballot) as i32)
                .wrapping_add(same_parity as i32);
            assert_eq!(o.i[i], want, "coop_groups_scan out_i[{i}]");
            assert_eq!(o.d[i], (THREADS + i / THREADS) as f64, "coop_groups_scan out_d[{i}]");
        }
    }

    // async copies into shared memory
    if let Some(o) = out.get("async_copy") {
        for i in 0..N {
            let base = i / THREADS * THREADS;
            let (t, count) = (i - base, THREADS.min(N - base));
            let next = base + (t + 1) % count;
            assert_eq!(o.i[i], x[i] + 2 * x[next], "async_copy out_i[{i}]");
            assert_eq!(o.f[i], inp.f[next], "async_copy out_f[{i}]");
            assert_eq!(o.d[i], inp.d[i] + inp.d[next], "async_copy out_d[{i}]");
        }
    }

    // vector types and cache hints
    let o = &out["vector_cache"];
    for i in 0..N / 4 {
        let q = 4 * i;
        let e = x[q] + x[q + 1];
        assert_eq!(&o.i[q..q + 4], &[x[q + 3] + e, x[q + 2], x[q + 1], x[q]], "vector_cache out_i[{q}..]");
        let f = &inp.f;
        assert_eq!(&o.f[q..q + 4], &[f[q] + f[q + 1], f[q + 1] * 2.0, f[q + 2] - f[q], f[q + 3]], "out_f[{q}..]");
        let active = (i / 32 * 32..i / 32 * 32 + 32).filter(|&j| j < N / 4).count() as f64;
        assert_eq!(&o.d[q..q + 4], &[inp.d[q + 1], inp.d[q], active, 0.5], "vector_cache out_d[{q}..]");
    }

    // bit intrinsics
    let o = &out["bit_intrinsics"];
    for i in 0..N {
        let xx = (x[i] as u32).wrapping_mul(2_654_435_761);
        let y = (x[(i + 1) % N] as u32).wrapping_mul(40503).wrapping_add(7);
        let w = (xx as u64) << 32 | y as u64;
        let ffs = |a: u64| if a == 0 { 0 } else { a.trailing_zeros() as i32 + 1 };
        let pair = (y as u64) << 32 | xx as u64;
        let perm = (0..4).fold(0u32, |r, k| r | (((pair >> (8 * ((0x5140 >> (4 * k)) & 7))) & 0xff) as u32) << (8 * k));
        let s = (i & 63) as u32;
        let (fl, fr) = (((pair << (s & 31)) >> 32) as u32, (pair >> (s & 31)) as u32);
        let (flc, frc) = (((pair << s.min(32)) >> 32) as u32, (pair >> s.min(32)) as u32);
        let mut r = (xx.count_ones() as i32)
            .wrapping_add(3 * y.leading_zeros() as i32)
            .wrapping_add(5 * ffs(xx as u64))
            .wrapping_add(7 * (xx.reverse_bits() & 0xff) as i32)
            .wrapping_add(perm as i32);
        r ^= fl.wrapping_add(fr) as i32;
        r ^= flc.wrapping_sub(frc) as i32;
        let umulhi = ((xx as u64 * y as u64) >> 32) as u32;
        let sad = (x[i] - 17).unsigned_abs().wrapping_add(3);
        let hadd = ((x[i] as i64 + 999) >> 1) as i32;
        let rhadd = ((x[i] as i64 - 5 + 1) >> 1) as i32;
        r = r.wrapping_add(umulhi as i32).wrapping_add(sad as i32).wrapping_add(hadd).wrapping_add(rhadd);
        let mul64hi = ((w as i64 as i128 * 0x1_2345_6789i128) >> 64) as i64;
        let sll = w.count_ones() as i64
            + (w >> (i & 31)).leading_zeros() as i64
            + ffs(w) as i64
            + (w.reverse_bits() >> 40) as i64
            + (mul64hi & 0xffff);
        let umul64hi = ((w as u128 * 0x9e37_79b9_7f4a_7c15u128) >> 64) as u64;
        assert_eq!(o.i[i], r, "bit_intrinsics out_i[{i}]");
        assert_eq!(o.f[i], (sll & 0xffff) as f32, "bit_intrinsics out_f[{i}]");
        assert_eq!(o.d[i], (umul64hi >> 20) as i64 as f64, "bit_intrinsics out_d[{i}]");
    }

    // atomics of every type (order-independent results)
    if let Some(o) = out.get("atomics_all") {
        for slot in 0..16 {
            let vs: Vec<i32> = (0..N).filter(|i| i % 16 == slot).map(|i| x[i]).collect();
            let sum = vs.iter().sum::<i32>();
            let want = [
                sum,
                -sum,
                vs.iter().copied().max().unwrap().max(0),
                vs.iter().copied().min().unwrap().min(0),
                0,
                vs.iter().fold(0, |a, v| a | (v & 0x3ff)),
                vs.iter().fold(0, |a, v| a ^ v),
                vs.len() as i32,
                1_000_000 - (vs.len() as i32 - 1),
                42,
                sum,
                vs.iter().map(|v| v + 1000).max().unwrap(),
            ];
            for (k, w) in want.iter().enumerate() {
                let at = if k == 11 { 176 + slot } else { 16 * k + slot };
                assert_eq!(o.i[at], *w, "atomics_all out_i[{at}]");
            }
            let q = |k: usize| o.d[16 * k + slot].to_bits();
            let big = |v: &i32| (v + 1000) as u64;
            assert_eq!(q(0), vs.iter().map(big).sum::<u64>());
            assert_eq!(q(1) as i64, vs.iter().map(|&v| v as i64 * 100_000).max().unwrap().max(0));
            assert_eq!(q(2) as i64, vs.iter().map(|&v| v as i64 * 100_000).min().unwrap().min(0));
            assert_eq!(q(3), 0);
            assert_eq!(q(4), vs.iter().fold(0, |a, v| a | big(v) << 20));
            assert_eq!(q(5), vs.iter().fold(0, |a, v| a ^ big(v) << 8));
            assert_eq!(q(6), vs.iter().map(big).sum::<u64>());
            let ds: f64 = (0..N).filter(|i| i % 16 == slot).map(|i| inp.d[i]).sum();
            assert_eq!(o.d[112 + slot], ds, "atomics_all out_d[{}]", 112 + slot);
            assert_eq!(o.f[slot], sum as f32, "atomics_all out_f[{slot}]");
            let h = |m: i32| f16_of(vs.iter().map(|v| (v & m) as u32).sum()) as u32;
            assert_eq!(o.f[16 + slot].to_bits(), h(7) | h(3) << 16, "atomics_all half2 at {slot}");
        }
    }

    // warp intrinsics: %laneid through inline asm, a double through a shuffle
    let o = &out["warp_intrinsics"];
    for i in 0..N {
        assert_eq!(o.f[i], (i % 32) as f32, "warp_intrinsics out_f[{i}]");
        let j = i ^ 1;
        assert_eq!(o.d[i], if j < N { inp.d[j] } else { 0.0 }, "warp_intrinsics out_d[{i}]");
    }
}

#[test]
#[ignore = "runs the corpus three times, about 30 s on 2 cores: .ci/run runs the ignored lane"]
fn digests_are_one_line_per_buffer_and_deterministic() {
    let Some(compiler) = nvrtc() else { return };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let gpu = kit::Gpu::simulator();
    let a = differential::digest_lines(&differential::run(&root, &gpu, &compiler, 3).unwrap());
    let b = differential::digest_lines(&differential::run(&root, &gpu, &compiler, 3).unwrap());
    assert_eq!(a, b, "the same seed gives the same bits");
    let lines: Vec<&str> = a.lines().collect();
    assert!(lines.len() >= 33, "{} lines", lines.len());
    assert!(lines.iter().all(|l| l.starts_with("differential::") && l.split('\t').count() == 3));
    let c = differential::digest_lines(&differential::run(&root, &gpu, &compiler, 4).unwrap());
    assert_ne!(a, c, "another seed, other inputs");
}
