//! What a timed launch multiplies, and how its whole product is checked
//! without recomputing it.
//!
//! Every launch gets M and N of its own, drawn on the device under the run's
//! secret key ([`kit::timed::Fresh`]): full-precision floats uniform in
//! [-1, 1), as in the correctness inputs, so a right product is not exact but
//! within float's rounding error, and no kernel gains by assuming the values
//! are few (the old timed inputs, multiples of 2^-12 and -1/0/1, let a kernel
//! split them into bytes and multiply them with `__dp4a`). The naive product
//! takes 26 ms a launch at 4096 on an H100, and a timing makes a dozen
//! launches: instead, Freivalds' check (yardsticks/matmul_check.cu) compares
//! P x with M (N x) in double for a random sign vector x, against the
//! rigorous rounding bound of any float summation order ([`freivalds_bound`]),
//! in O(mk + kn + mn). Only when that fails does the grader compute the
//! product in double, element by element, to name the first wrong element.

use std::sync::Arc;

use anyhow::{bail, Result};
use kit::timed::Fresh;
use kit::{Ctx, DeviceBuffer, LaunchConfig, Module};

use crate::{launch_config, Kernel, Shape};

/// M and N are uniform in [-LIMIT, LIMIT), like the correctness inputs.
pub const LIMIT: f32 = 1.0;
/// The longest inner dimension the check is written for (the bound holds for
/// any k with k u < 1; this keeps the timed shapes under it on purpose).
pub const MAX_K: usize = 4096;
/// Threads per block of the check's `row_dot` (its THREADS).
const ROW_THREADS: u32 = 256;

const _: () = assert!(crate::PERF_WIDTH <= MAX_K && crate::PERF_RECT.k <= MAX_K);

/// Higham's gamma_k = k u / (1 - k u) for unit roundoff `u`.
pub fn gamma(k: usize, u: f64) -> f64 {
    let ku = k as f64 * u;
    assert!(ku < 0.5, "gamma_{k} is not defined for u = {u:e}");
    ku / (1.0 - ku)
}

/// Unit roundoff of float and double.
pub const U32: f64 = 1.0 / (1u64 << 24) as f64;
pub const U64: f64 = 1.0 / (1u64 << 53) as f64;

/// The largest |(P x)_i - (M (N x))_i| that a right row can show, as the
/// grader computes them in double: `w` = (|M| (|N| |x|))_i and `p_abs` =
/// (|P| |x|)_i from the same passes. A float k-term dot product in any order
/// (every term rounded at most k times: once multiplied, at most k - 1 times
/// added; a product or sum that underflows cannot occur for inputs of at
/// least 2^-24 in magnitude, or 0) is within gamma_k sum_l |M_il N_lj| of the
/// exact one; summed over a row, weighted by |x_j|, that is gamma_k w. The
/// double passes add their own rounding: N x and |N| |x| within gamma_n of
/// their sums, M (N x) and |M| (..) within gamma_k more, P x within gamma_n
/// |P| |x|.
pub fn freivalds_bound(k: usize, n: usize, w: f64, p_abs: f64) -> f64 {
    let g64 = gamma(n + k + 1, U64);
    (gamma(k, U32) + 2.0 * g64) * w * (1.0 + 2.0 * g64) + 2.0 * gamma(n, U64) * p_abs
}

/// The per-element bound that `element_check` applies: gamma_k of the
/// float product plus the double sum's own rounding (gamma_k in double, twice).
pub fn element_gamma(k: usize) -> f64 {
    gamma(k, U32) + 2.0 * gamma(k + 1, U64)
}

/// One timed product's buffers, and the grader's kernels that check it.
pub struct TimedProduct {
    s: Shape,
    pub m: Fresh<f32>,
    pub n: Fresh<f32>,
    /// Poisoned before every launch.
    pub p: DeviceBuffer<f32>,
    /// Freivalds' vector: n random words, x_j = +-(1 + u_j) from word j (see
    /// matmul_check.cu; drawn in `check`, after the launch, so no kernel
    /// ever sees it). Not +-1 alone: two errors that cancel in a row would
    /// then go unseen half the time; with u_j uniform, an error e in a row
    /// hides only if |e . x| falls under the bound, which has probability at
    /// most bound / max |e_j|.
    x: Fresh<i32>,
    nx: DeviceBuffer<f64>,
    n_abs: DeviceBuffer<f64>,
    mnx: DeviceBuffer<f64>,
    w: DeviceBuffer<f64>,
    px: DeviceBuffer<f64>,
    p_abs: DeviceBuffer<f64>,
    bad: DeviceBuffer<i32>,
    first: DeviceBuffer<u64>,
    check: Arc<Module>,
}

impl TimedProduct {
    /// `_yardstick` is the grader's naive kernel of the same form; the check
    /// no longer needs it (the slow path computes in double).
    pub fn new(ctx: &Ctx, s: Shape, _yardstick: Kernel) -> Result<Self> {
        anyhow::ensure!(s.k <= MAX_K, "k = {} is beyond the check's {MAX_K}", s.k);
        let gpu = ctx.gpu()?;
        Ok(Self {
            s,
            m: Fresh::uniform(ctx, "M", s.m * s.k, -LIMIT, LIMIT)?,
            n: Fresh::uniform(ctx, "N", s.k * s.n, -LIMIT, LIMIT)?,
            p: gpu.poisoned("P", s.m * s.n)?,
            x: Fresh::ints(ctx, "x (Freivalds)", s.n, i32::MIN, i32::MAX)?,
            nx: gpu.zeros("N x", s.k)?,
            n_abs: gpu.zeros("|N| |x|", s.k)?,
            mnx: gpu.zeros("M N x", s.m)?,
            w: gpu.zeros("|M| |N| |x|", s.m)?,
            px: gpu.zeros("P x", s.m)?,
            p_abs: gpu.zeros("|P| |x|", s.m)?,
            bad: gpu.zeros("bad", 1)?,
            first: gpu.zeros("first wrong", 1)?,
            check: ctx.yardstick("matmul_check", include_str!("../yardsticks/matmul_check.cu"))?,
        })
    }

    /// Launch `launch`'s M and N, and P poisoned (as the README promises).
    pub fn prepare(&self, launch: usize) -> Result<()> {
        self.m.fill(launch)?;
        self.n.fill(launch)?;
        self.p.poison()
    }

    /// Starts `kernel` of the student's module on the timed buffers.
    pub fn launch(&self, module: &Module, kernel: Kernel) -> Result<()> {
        let args = kernel.args_of(self.s, self.m.arg(), self.n.arg(), self.p.arg());
        module.launch_async(kernel.name, launch_config(self.s), &args)
    }

    /// The inputs as launch `launch` got them, and all of P right for them.
    pub fn check(&self, launch: usize) -> Result<()> {
        self.m.intact(launch)?;
        self.n.intact(launch)?;
        let Some(row) = self.freivalds(launch)? else { return Ok(()) };
        let s = self.s;
        self.first.write(&[u64::MAX])?;
        let args = [
            self.m.arg(),
            self.n.arg(),
            self.p.arg(),
            (s.m as i32).into(),
            (s.k as i32).into(),
            (s.n as i32).into(),
            element_gamma(s.k).into(),
            self.first.arg(),
        ];
        self.check.launch("element_check", launch_config(s), &args)?;
        let first = self.first.read()?[0];
        if first == u64::MAX {
            bail!(
                "`P` failed Freivalds' check (row {row}) but every element is within the rounding bound of the \
                 grader's double product: the grader's two checks disagree (a bug in the grader; please report it)"
            );
        }
        let i = first as usize;
        let (r, c) = (i / s.n, i % s.n);
        let got = self.p.read_range(i, 1)?[0];
        let row_m = self.m.host_values(launch, r * s.k, s.k);
        let col_n: Vec<f32> = (0..s.k).map(|l| self.n.host_values(launch, l * s.n + c, 1)[0]).collect();
        let (want, abs) = row_m.iter().zip(&col_n).fold((0.0f64, 0.0f64), |(sum, abs), (&a, &b)| {
            let p = a as f64 * b as f64;
            (sum + p, abs + p.abs())
        });
        let got = if kit::check::is_poison(&got) { "nothing (never written)".to_string() } else { format!("{got:?}") };
        bail!(
            "`P`[{i}] (row {r}, column {c}): expected {want:?} (in double; a float sum in any order stays within \
             {:.3e} of it), got {got} (the first wrong element of {})",
            element_gamma(s.k) * abs,
            s.m * s.n
        )
    }

    /// The first row where |P x - M (N x)| exceeds [`freivalds_bound`], or
    /// where P holds a value that is not finite; None when every row is right.
    fn freivalds(&self, launch: usize) -> Result<Option<usize>> {
        let s = self.s;
        self.x.fill(launch)?;
        self.bad.write(&[0])?;
        type Pair<'a> = (&'a DeviceBuffer<f64>, &'a DeviceBuffer<f64>);
        let row_dot = |x, rows: usize, cols: usize, signs: bool, v: Pair, out: Pair| {
            let cfg = LaunchConfig::linear(rows as u32, ROW_THREADS);
            let args = [
                x,
                (cols as i32).into(),
                (signs as i32).into(),
                self.x.arg(),
                v.0.arg(),
                v.1.arg(),
                out.0.arg(),
                out.1.arg(),
                self.bad.arg(),
            ];
            self.check.launch("row_dot", cfg, &args)
        };
        // N x and |N| |x| (the vector pair is unread with signs: any buffers do).
        row_dot(self.n.arg(), s.k, s.n, true, (&self.mnx, &self.w), (&self.nx, &self.n_abs))?;
        row_dot(self.m.arg(), s.m, s.k, false, (&self.nx, &self.n_abs), (&self.mnx, &self.w))?;
        row_dot(self.p.arg(), s.m, s.n, true, (&self.nx, &self.n_abs), (&self.px, &self.p_abs))?;
        if self.bad.read()?[0] != 0 {
            return Ok(Some(0));
        }
        let (mnx, w, px, p_abs) = (self.mnx.read()?, self.w.read()?, self.px.read()?, self.p_abs.read()?);
        // NaN is outside (never <=).
        Ok((0..s.m).find(|&i| {
            let within = (px[i] - mnx[i]).abs() <= freivalds_bound(s.k, s.n, w[i], p_abs[i]);
            !within
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RECT, TILED, YARDSTICK, YARDSTICK_RECT};
    use kit::inputs::rng_for;
    use kit::{Gpu, PartBuild, RunEnv};

    /// A change to a right product at one element.
    type Change = fn(&mut [f32], usize);

    /// What the three passes compute, on the host (in double, as the device
    /// does), and whether every row passes [`freivalds_bound`].
    fn host_freivalds(s: Shape, m: &[f32], n: &[f32], p: &[f32], x: &[f64]) -> bool {
        let mut nx = vec![(0.0f64, 0.0f64); s.k];
        for (l, v) in nx.iter_mut().enumerate() {
            for j in 0..s.n {
                let e = n[l * s.n + j] as f64;
                *v = (v.0 + e * x[j], v.1 + e.abs() * x[j].abs());
            }
        }
        (0..s.m).all(|i| {
            let (mut z, mut w, mut c, mut c_abs) = (0.0, 0.0, 0.0, 0.0);
            for (l, &(y, y_abs)) in nx.iter().enumerate() {
                z += m[i * s.k + l] as f64 * y;
                w += (m[i * s.k + l] as f64).abs() * y_abs;
            }
            for j in 0..s.n {
                c += p[i * s.n + j] as f64 * x[j];
                c_abs += (p[i * s.n + j] as f64).abs() * x[j].abs();
            }
            (c - z).abs() <= freivalds_bound(s.k, s.n, w, c_abs)
        })
    }

    /// P in float, each element's k terms added in the order `order` gives
    /// (a permutation of 0..k), products rounded or fused as `fused` says.
    fn f32_product(s: Shape, m: &[f32], n: &[f32], order: &[usize], fused: bool) -> Vec<f32> {
        let mut p = vec![0.0f32; s.m * s.n];
        for i in 0..s.m {
            for j in 0..s.n {
                let mut acc = 0.0f32;
                for &l in order {
                    let (a, b) = (m[i * s.k + l], n[l * s.n + j]);
                    acc = if fused { a.mul_add(b, acc) } else { acc + a * b };
                }
                p[i * s.n + j] = acc;
            }
        }
        p
    }

    /// The bound holds for float sums in any order (forwards, backwards,
    /// pairwise by tiles of 16, with and without FMA), and fails the products
    /// a quantizing kernel makes on full-precision inputs: N read as integers
    /// (the `__dp4a` byte-split kernel written for the old -1/0/1 inputs),
    /// M and N read as multiples of 1/16 (the same for ex02's old k/16).
    #[test]
    fn the_bound_passes_every_order_and_fails_quantized_products() {
        let s = Shape::new(24, 1024, 40);
        let mut rng = rng_for(3, "bound");
        let m = kit::inputs::uniform_f32(&mut rng, s.m * s.k, -1.0, 1.0);
        let n = kit::inputs::uniform_f32(&mut rng, s.k * s.n, -1.0, 1.0);
        let x: Vec<f64> = (0..s.n)
            .map(|_| {
                let u: f64 = rand::Rng::random(&mut rng);
                if rand::Rng::random::<bool>(&mut rng) {
                    1.0 + u
                } else {
                    -1.0 - u
                }
            })
            .collect();
        let forward: Vec<usize> = (0..s.k).collect();
        let backward: Vec<usize> = (0..s.k).rev().collect();
        // Tile by tile of 16 (what `tiled` does), the tiles' sums taken in turn.
        let tiles: Vec<usize> = (0..16).flat_map(|t| (t..s.k).step_by(16)).collect();
        for (order, fused) in [(&forward, false), (&forward, true), (&backward, false), (&tiles, true)] {
            let p = f32_product(s, &m, &n, order, fused);
            assert!(host_freivalds(s, &m, &n, &p, &x), "a right float product (fused: {fused}) failed the bound");
        }
        // A float sum that is exact in f64 and then rounded once passes too.
        let exact = cpu_product(s, &m, &n);
        assert!(host_freivalds(s, &m, &n, &exact, &x));
        let quantized = |f: fn(f32) -> f32, on_m: bool| {
            let qm: Vec<f32> = m.iter().map(|&v| if on_m { f(v) } else { v }).collect();
            let qn: Vec<f32> = n.iter().map(|&v| f(v)).collect();
            f32_product(s, &qm, &qn, &forward, true)
        };
        let truncated = quantized(|v| v.trunc(), false);
        assert!(!host_freivalds(s, &m, &n, &truncated, &x), "N read as integers passed");
        let sixteenths = quantized(|v| (v * 16.0).round() / 16.0, true);
        assert!(!host_freivalds(s, &m, &n, &sixteenths, &x), "values read as multiples of 1/16 passed");
        // One element off by 1 is more than rounding allows in its row. (The
        // row check sees an element's error against the whole row's bound,
        // about n times an element's: here 0.9 against 0.016.)
        let mut off = exact.clone();
        off[5 * s.n + 7] += 1.0;
        assert!(!host_freivalds(s, &m, &n, &off, &x));
    }

    fn cpu_product(s: Shape, m: &[f32], n: &[f32]) -> Vec<f32> {
        let mut p = vec![0.0f32; s.m * s.n];
        for i in 0..s.m {
            for j in 0..s.n {
                p[i * s.n + j] = (0..s.k).map(|l| m[i * s.k + l] as f64 * n[l * s.n + j] as f64).sum::<f64>() as f32;
            }
        }
        p
    }

    #[test]
    fn gamma_is_k_u_to_first_order() {
        assert!((gamma(4096, U32) / (4096.0 * U32) - 1.0).abs() < 3e-4);
        assert!(element_gamma(4096) < 2.5e-4 && element_gamma(4096) > gamma(4096, U32));
        assert!(freivalds_bound(4096, 4096, 1.0, 1.0) < 2.5e-4);
    }

    /// One context on the simulator whose student file is `file` (compiled).
    /// Its timed inputs and Freivalds' vectors come from a fixed secret: a
    /// fresh one misses the two errors that cancel below with probability
    /// bound / |e| (about 0.3 % at these shapes), which once made the test
    /// fail in CI. The probability is the check's; the test must not be.
    fn with_student(compiler: &ptx_build::Compiler, file: &str, f: impl FnOnce(&Ctx)) {
        let ptx = kit::trial::ptx_of(compiler, file, &Default::default());
        let env =
            RunEnv::new(1, Some(Gpu::simulator()), Some(compiler.clone()), Default::default()).with_secret(0x5eed_0003);
        let build = PartBuild::new(ptx);
        let ctx = Ctx::new("ex03::part::perf::faster-than-naive", &env, &build);
        ctx.run(f);
    }

    /// The timing needs a GPU; its launches and their checks run here: the
    /// references pass on several launches of full-precision inputs, and a
    /// product that is not the launch's own, an element off by a hundredth,
    /// one never written, one far too large, two errors that cancel in a
    /// row's plain sum, a product with N read as integers, and a write into M
    /// are each caught, the element named.
    #[test]
    fn timed_launches_are_checked_in_full() {
        let Some(compiler) = kit::trial::compiler() else { return };
        for (kernel, s, yardstick) in
            [(TILED, Shape::square(48), YARDSTICK), (RECT, Shape::new(37, 45, 29), YARDSTICK_RECT)]
        {
            let file = format!("reference/ex03-matmul/kernels/{}.cu", kernel.name);
            with_student(&compiler, &file, |ctx| {
                let module = ctx.kernel_module(kernel.name).unwrap();
                let t = TimedProduct::new(ctx, s, yardstick).unwrap();
                let run = |launch| {
                    t.prepare(launch).unwrap();
                    t.launch(module, kernel).unwrap();
                    module.gpu().finish().unwrap();
                };
                for launch in [0, 1, 5] {
                    run(launch);
                    t.check(launch).unwrap_or_else(|e| panic!("{}, launch {launch}: {e:#}", kernel.name));
                }
                let (m, n) = (t.m.host_values(5, 0, s.m * s.k), t.n.host_values(5, 0, s.k * s.n));
                assert!(m.iter().chain(&n).all(|v| (-1.0..1.0).contains(v)));
                assert!(m.iter().any(|v| (v * 4096.0).fract() != 0.0), "full precision, not multiples of 2^-12");
                assert!(n.iter().filter(|v| v.fract() != 0.0).count() > n.len() - 2, "N is not -1/0/1");
                let right = t.p.read().unwrap();
                let fails = |launch, change: &dyn Fn(&mut Vec<f32>)| {
                    let mut p = right.clone();
                    change(&mut p);
                    t.p.write(&p).unwrap();
                    format!("{:#}", t.check(launch).unwrap_err())
                };
                let (row, col) = (s.m - 2, 3);
                let at = row * s.n + col;
                let place = format!("`P`[{at}] (row {row}, column {col})");
                let changes: [(&str, Change); 4] = [
                    ("a hundredth off", |p, i| p[i] += 0.01),
                    ("far too large", |p, i| p[i] += (1 << 24) as f32),
                    ("never written", |p, i| p[i] = f32::from_bits(u32::MAX)),
                    ("two that cancel", |p, i| {
                        p[i] += 1.0;
                        p[i + 1] -= 1.0;
                    }),
                ];
                for (what, change) in changes {
                    let err = fails(5, &|p| change(p, at));
                    assert!(err.contains(&place), "{}, {what}: {err}", kernel.name);
                }
                let err = fails(5, &|p| p[at] = f32::from_bits(u32::MAX));
                assert!(err.contains("got nothing (never written)"), "{err}");
                // What a kernel that reads N as integers writes (N truncated: mostly 0).
                let truncated: Vec<f32> = n.iter().map(|v| v.trunc()).collect();
                let err = fails(5, &|p| *p = f32_product(s, &m, &truncated, &(0..s.k).collect::<Vec<_>>(), true));
                assert!(err.contains("(the first wrong element of"), "{err}");
                // Launch 5's product, right, checked as launch 6's.
                t.prepare(6).unwrap();
                let err = fails(6, &|_| {});
                assert!(err.contains("(the first wrong element of"), "{err}");
                // A kernel that wrote into M.
                run(7);
                t.m.overwrite_one(7, s.k + 1).unwrap();
                let err = t.check(7).unwrap_err();
                let modified = err.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
                assert_eq!((modified.buffer.as_str(), modified.index), ("M", s.k + 1));
                t.check(7).expect("M restored, P right");
            });
        }
    }
}
