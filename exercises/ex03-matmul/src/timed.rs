//! What a timed launch multiplies, and how its whole product is checked
//! without recomputing it.
//!
//! Every launch gets M and N of its own, drawn on the device under the run's
//! secret key ([`kit::timed::Fresh`]): M holds multiples of 2^-12 in
//! (-1, 1), N holds -1, 0 and 1, so that every product is a multiple of
//! 2^-12, every sum of up to 4096 of them is exact in float, and every
//! correct kernel, in whatever order it adds, gives the same bits. M's 12
//! significant bits are more than half precision (11), bfloat16 (8) or tf32
//! (11) keep, so a kernel that multiplies in a narrower format at the timed
//! size gets a wrong product. The naive product takes 26 ms a launch at 4096
//! on an H100, and a timing makes a dozen launches: instead, Freivalds' check
//! (yardsticks/matmul_check.cu) compares C r with A (B r) for a random r, in
//! integers mod 2^64 (A = 4096 M, B = N, C = 4096 P), in O(mk + kn + mn).
//! Only when that fails does the naive kernel compute the expected product,
//! to name the first wrong element.

use std::sync::Arc;

use anyhow::{bail, Result};
use kit::timed::{same_as_expected, Fresh};
use kit::{Ctx, DeviceBuffer, LaunchConfig, Module};

use crate::{launch_config, Kernel, Shape};

/// M's elements are `k * 2^-M_SHIFT` with `k` in `-M_MAX..=M_MAX`: (-1, 1), 12 significant bits.
pub const M_SHIFT: u32 = 12;
pub const M_MAX: i32 = (1 << M_SHIFT) - 1;
/// N's elements are -1, 0 or 1.
pub const N_MAX: i32 = 1;
/// The longest inner dimension the argument holds for: |P| < k, so every
/// sum is a multiple of 2^-12 under 2^12 (exact in float), and an error of
/// C = 4096 P is an integer below 2^25 in magnitude, which a random r hides
/// mod 2^64 with probability at most 2^-39.
pub const MAX_K: usize = 4096;
/// Threads per block of the check's `row_dot` (its THREADS).
const ROW_THREADS: u32 = 256;

const _: () = assert!(crate::PERF_WIDTH <= MAX_K && crate::PERF_RECT.k <= MAX_K);

/// One timed product's buffers, and the grader's kernels that check it.
pub struct TimedProduct {
    s: Shape,
    pub m: Fresh<f32>,
    pub n: Fresh<f32>,
    /// Poisoned before every launch.
    pub p: DeviceBuffer<f32>,
    /// Freivalds' vector: 2n random words, read as n u64 (drawn in `check`,
    /// after the launch, so no kernel ever sees it).
    r: Fresh<i32>,
    br: DeviceBuffer<u64>,
    abr: DeviceBuffer<u64>,
    cr: DeviceBuffer<u64>,
    bad: DeviceBuffer<i32>,
    check: Arc<Module>,
    naive: Arc<Module>,
    /// The grader's naive kernel of the same form (`yardstick_naive` or `yardstick_naive_rect`).
    yardstick: Kernel,
}

impl TimedProduct {
    pub fn new(ctx: &Ctx, s: Shape, yardstick: Kernel) -> Result<Self> {
        anyhow::ensure!(s.k <= MAX_K, "k = {} is beyond the check's {MAX_K}", s.k);
        let gpu = ctx.gpu()?;
        Ok(Self {
            s,
            m: Fresh::dyadic(ctx, "M", s.m * s.k, -M_MAX, M_MAX, M_SHIFT)?,
            n: Fresh::dyadic(ctx, "N", s.k * s.n, -N_MAX, N_MAX, 0)?,
            p: gpu.poisoned("P", s.m * s.n)?,
            r: Fresh::ints(ctx, "r (Freivalds)", 2 * s.n, i32::MIN, i32::MAX)?,
            br: gpu.zeros("B r", s.k)?,
            abr: gpu.zeros("A B r", s.m)?,
            cr: gpu.zeros("C r", s.m)?,
            bad: gpu.zeros("bad", 1)?,
            check: ctx.yardstick("matmul_check", include_str!("../yardsticks/matmul_check.cu"))?,
            naive: ctx.yardstick("matmul_naive", include_str!("../yardsticks/matmul_naive.cu"))?,
            yardstick,
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
        if self.freivalds(launch)? {
            return Ok(());
        }
        let s = self.s;
        let gpu = self.naive.gpu();
        let expected = gpu.poisoned::<f32>("P (the grader's naive product)", s.m * s.n)?;
        let args = self.yardstick.args_of(s, self.m.arg(), self.n.arg(), expected.arg());
        self.naive.launch(self.yardstick.name, launch_config(s), &args)?;
        same_as_expected("P", &expected, &self.p, |i| format!(" (row {}, column {})", i / s.n, i % s.n))?;
        bail!(
            "`P` failed Freivalds' check but equals the grader's naive product in every element: the grader's \
             two checks disagree (a bug in the grader; please report it)"
        )
    }

    /// Whether C r == A (B r) mod 2^64, row by row, with every element of P a
    /// multiple of 2^-12 no larger than k.
    fn freivalds(&self, launch: usize) -> Result<bool> {
        let s = self.s;
        self.r.fill(launch)?;
        self.bad.write(&[0])?;
        let row_dot = |x, rows: usize, cols: usize, scale: f32, limit: f32, v, out: &DeviceBuffer<u64>| {
            let cfg = LaunchConfig::linear(rows as u32, ROW_THREADS);
            let args = [x, (cols as i32).into(), scale.into(), limit.into(), v, out.arg(), self.bad.arg()];
            self.check.launch("row_dot", cfg, &args)
        };
        let a = (1 << M_SHIFT) as f32;
        row_dot(self.n.arg(), s.k, s.n, 1.0, N_MAX as f32, self.r.arg(), &self.br)?;
        row_dot(self.m.arg(), s.m, s.k, a, M_MAX as f32, self.br.arg(), &self.abr)?;
        row_dot(self.p.arg(), s.m, s.n, a, a * s.k as f32, self.r.arg(), &self.cr)?;
        Ok(self.bad.read()?[0] == 0 && self.abr.read()? == self.cr.read()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RECT, TILED, YARDSTICK, YARDSTICK_RECT};
    use kit::{Gpu, PartBuild, RunEnv};

    /// A change to a right product at one element.
    type Change = fn(&mut [f32], usize);

    /// One context on the simulator whose student file is `file` (compiled).
    fn with_student(compiler: &ptx_build::Compiler, file: &str, f: impl FnOnce(&Ctx)) {
        let source = ptx_build::SourceFile::read(&kit::trial::workspace_file(file), file).unwrap();
        let ptx = compiler.compile(&source, &Default::default()).unwrap().text;
        let env = RunEnv::new(1, Some(Gpu::simulator()), Some(compiler.clone()), Default::default());
        let build = PartBuild::new(ptx);
        let ctx = Ctx::new("ex03::part::perf::faster-than-naive", &env, &build);
        ctx.run(f);
    }

    /// The timing needs a GPU; its launches and their checks run here: the
    /// references pass on several launches, and a product that is not the
    /// launch's own, an element off by the inputs' smallest step, one that is
    /// no multiple of it, one never written, two errors that cancel in a
    /// row's plain sum, and a write into M are each caught, the element named.
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
                let right = t.p.read().unwrap();
                assert!(right.iter().all(|v| (v * 4096.0).fract() == 0.0 && v.abs() <= s.k as f32));
                assert!(right.iter().filter(|v| v.abs() >= 1.0).count() > right.len() / 4, "not all tiny");
                assert!(right.iter().any(|v| (v * 2048.0).fract() != 0.0), "M's last bit is used");
                let fails = |launch, change: &dyn Fn(&mut Vec<f32>)| {
                    let mut p = right.clone();
                    change(&mut p);
                    t.p.write(&p).unwrap();
                    format!("{:#}", t.check(launch).unwrap_err())
                };
                let (row, col) = (s.m - 2, 3);
                let at = row * s.n + col;
                let place = format!("`P`[{at}] (row {row}, column {col})");
                let changes: [(&str, Change); 5] = [
                    ("a step off", |p, i| p[i] += 1.0 / 4096.0),
                    // Away from 0: what truncating to an integer would take back.
                    ("no multiple of a step", |p, i| p[i] += p[i].signum() / 16384.0),
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
                // Launch 5's product, right, checked as launch 6's.
                t.prepare(6).unwrap();
                let err = fails(6, &|_| {});
                assert!(err.contains("(the first wrong element of"), "{err}");
                // A kernel that wrote into M.
                run(7);
                t.m.buffer().write_at(s.k + 1, &[0.5]).unwrap();
                let err = t.check(7).unwrap_err();
                let modified = err.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
                assert_eq!((modified.buffer.as_str(), modified.index), ("M", s.k + 1));
                t.check(7).expect("M restored, P right");
            });
        }
    }
}
