//! ex01: Monte Carlo pi (seed 000, "piApproximation", twice): count the random
//! points inside the unit circle, first with global atomics, then per block in
//! shared memory with one global update per block.

pub mod measured;

use std::sync::Arc;

use anyhow::{bail, Result};
use kit::timed::Fresh;
use kit::{args, check, Arg, Check, Ctx, DeviceBuffer, Exercise, LaunchConfig, Module, Part, SIM_MAX_ELEMENTS};
use rand::Rng;

pub const THREADS: u32 = 256;
/// The grid is capped, so large inputs need a grid-stride loop.
pub const MAX_BLOCKS: u32 = 1024;
/// Sizes tested for correctness: less than a block, not a multiple of the block,
/// and more points than the capped grid has threads. No single point: its count
/// (0 or 1) could be guessed.
pub const SIZES: [usize; 5] = [100, 255, 65_537, 1_000_003, 4_194_311];
/// Points for the timing: 256 MiB of input, far beyond any L2 cache.
pub const PERF_POINTS: usize = 1 << 25;
/// `shared` must beat the one-atomic-per-hit pattern by this factor.
/// Measured on an H100: see CALIBRATION.md in this folder.
pub const MIN_SPEEDUP: f64 = 2.0;

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex01",
        slug: "pi",
        title: "Monte Carlo pi: global atomics, then per-block counts in shared memory",
        dir: "exercises/ex01-pi",
        parts: vec![
            part("global", "kernels/pi_global.cu", &["pi_global"]),
            part("shared", "kernels/pi_shared.cu", &["pi_shared"]),
        ],
    }
}

fn part(name: &'static str, file: &'static str, kernels: &'static [&'static str]) -> Part {
    let kernel = kernels[0];
    let mut part = Part::new(name, file, kernels, 10.0);
    for n in SIZES {
        part = part.check(
            Check::correctness(format!("n={n}"), move |ctx| count_hits(ctx, kernel, n)).heavy_if(n > SIM_MAX_ELEMENTS),
        );
    }
    if kernel == "pi_global" {
        part.check(Check::structure("global-atomics", measured::global_atomics))
    } else {
        part.check(Check::structure("few-global-atomics-per-block", measured::few_global_atomics_per_block)).check(
            Check::performance("faster-than-global-atomics", shared_speedup)
                // The timing compares contention on one global counter: count it.
                .with_stand_in(|ctx| kit::measure::skip_unmeasurable(measured::few_atomics_per_hit(ctx))),
        )
    }
}

/// Random points in [0,1)^2, none within 1e-5 of the circle (so that a kernel's
/// float rounding, with or without FMA, cannot change the count), and at least
/// one inside (so that an empty kernel never passes).
pub fn points(rng: &mut impl Rng, n: usize) -> (Vec<f32>, Vec<f32>) {
    let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut inside = 0;
    while x.len() < n {
        let (px, py) = (rng.random::<f32>(), rng.random::<f32>());
        let r2 = (px as f64).powi(2) + (py as f64).powi(2);
        let last_must_hit = x.len() + 1 == n && inside == 0;
        if (r2 - 1.0).abs() < 1e-5 || (last_must_hit && r2 > 1.0) {
            continue;
        }
        inside += (r2 <= 1.0) as usize;
        x.push(px);
        y.push(py);
    }
    (x, y)
}

/// Points for a correctness check: like [`points`], but with a seeded number of
/// hits, drawn from 1 to n - 1. Uniform points hit about 78.5 % of the time,
/// so a count of 100 points takes one of a dozen likely values, and a
/// hard-coded or replayed count would often be right by luck; here it is
/// right by luck about once in n.
pub fn points_with_seeded_hits(rng: &mut impl Rng, n: usize) -> (Vec<f32>, Vec<f32>) {
    let want_inside = if n < 2 { n } else { rng.random_range(1..n) };
    let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut inside = 0;
    while x.len() < n {
        let (px, py) = (rng.random::<f32>(), rng.random::<f32>());
        let r2 = (px as f64).powi(2) + (py as f64).powi(2);
        let is_in = r2 <= 1.0;
        let room = if is_in { inside < want_inside } else { x.len() - inside < n - want_inside };
        if (r2 - 1.0).abs() < 1e-5 || !room {
            continue;
        }
        inside += is_in as usize;
        x.push(px);
        y.push(py);
    }
    // The ends of [0, 1)^2, in place of a point on the same side of the
    // circle (the count stays the seeded one): the first point inside
    // becomes the origin, the last outside the largest corner.
    if let Some(i) = (0..n).find(|&i| crate::inside(x[i], y[i])) {
        (x[i], y[i]) = EDGES[0];
    }
    if let Some(i) = (0..n).rev().find(|&i| !crate::inside(x[i], y[i])) {
        (x[i], y[i]) = EDGES[1];
    }
    (x, y)
}

/// The ends of the README's range [0, 1)^2 in every correctness input: the
/// origin (inside) and the largest corner (outside). The axes' far ends lie
/// within 10^-5 of the circle, which the README excludes.
pub const EDGES: [(f32, f32); 2] = [(0.0, 0.0), (0.999_999_94, 0.999_999_94)];

/// The CPU reference, in f64.
pub fn cpu_hits(x: &[f32], y: &[f32]) -> u32 {
    x.iter().zip(y).filter(|(&a, &b)| (a as f64).powi(2) + (b as f64).powi(2) <= 1.0).count() as u32
}

pub fn launch_config(n: usize) -> LaunchConfig {
    LaunchConfig::linear((n as u32).div_ceil(THREADS).clamp(1, MAX_BLOCKS), THREADS)
}

fn count_hits(ctx: &Ctx, kernel: &str, n: usize) -> Result<String> {
    // The same for every student of a batch: drawn and counted once per seed.
    let inputs = ctx.shared("points+hits", || {
        let (x, y) = points_with_seeded_hits(&mut ctx.rng(), n);
        let hits = cpu_hits(&x, &y);
        (x, y, hits)
    });
    let (x, y, expected) = (&inputs.0, &inputs.1, inputs.2);
    let module = ctx.kernel_module(kernel)?;
    let gpu = module.gpu();
    let (dx, dy) = (gpu.upload("x", x)?, gpu.upload("y", y)?);
    let hits = gpu.zeros::<u32>("hits", 1)?;
    module.launch(kernel, launch_config(n), &args![&dx, &dy, n as i32, &hits])?;
    let got = hits.read()?[0];
    if got != expected && right_when_fresh(ctx, kernel, n, &args![&dx, &dy, n as i32], expected)? {
        anyhow::bail!(kept_state(expected, got));
    }
    if got == 0 {
        anyhow::bail!("`hits`: expected {expected}, got 0: no point was counted (is the TODO done?)");
    }
    check::scalar("hits", expected, got)?;
    // A count has few likely values (about 76 of 100 points hit): an answer
    // that does not come from the points (hard-coded, replayed from another
    // run) could be right by luck. The same points with one of them moved
    // across the circle must change the count by exactly one.
    let (j, moved) = moved_point(ctx, n, x, y);
    let write_point = |px: f32, py: f32| -> Result<()> {
        dx.write_at(j, &[px])?;
        dy.write_at(j, &[py])
    };
    write_point(moved.0, moved.1)?;
    hits.write(&[0])?;
    module.launch(kernel, launch_config(n), &args![&dx, &dy, n as i32, &hits])?;
    let again = hits.read()?[0];
    let expected_again = if inside(x[j], y[j]) { expected - 1 } else { expected + 1 };
    if again != expected_again && right_when_fresh(ctx, kernel, n, &args![&dx, &dy, n as i32], expected_again)? {
        anyhow::bail!(kept_state(expected_again, again));
    }
    check::scalar("hits", expected_again, again).map_err(|e| {
        e.context(format!(
            "with point {j} moved from ({}, {}) to ({}, {}), across the circle, the count must change by one: \
             does the kernel read every point?",
            x[j], y[j], moved.0, moved.1
        ))
    })?;
    write_point(x[j], y[j])?;
    Ok(format!("{got} of {n} points inside the circle"))
}

/// Whether a freshly loaded copy of the student's module counts `expected`
/// on its first launch (`points` are the launch's arguments but `hits`): then
/// a wrong count on the shared module comes from state kept between launches.
fn right_when_fresh(ctx: &Ctx, kernel: &str, n: usize, points: &[kit::backend::Arg], expected: u32) -> Result<bool> {
    let gpu = ctx.kernel_module(kernel)?.gpu();
    let Ok(fresh) = gpu.load(&ctx.build.ptx) else { return Ok(false) };
    let hits = gpu.zeros::<u32>("hits", 1)?;
    let args: Vec<kit::backend::Arg> = points.iter().copied().chain(args![&hits]).collect();
    Ok(fresh.launch(kernel, launch_config(n), &args).is_ok() && hits.read()?[0] == expected)
}

fn kept_state(expected: u32, got: u32) -> String {
    format!(
        "`hits`: expected {expected}, got {got}: right on the first launch, wrong on the next. The kernel keeps state \
         between launches (a `__device__` variable, a block counter or ticket that it never resets), and every \
         launch must start from the same state: reset it in the kernel once it is used (the last block), or do \
         without it"
    )
}

fn inside(x: f32, y: f32) -> bool {
    (x as f64).powi(2) + (y as f64).powi(2) <= 1.0
}

/// Which point of the check is moved (seeded), and where to: out of the
/// circle if it was in, in if it was out (both far from the boundary).
fn moved_point(ctx: &Ctx, n: usize, x: &[f32], y: &[f32]) -> (usize, (f32, f32)) {
    let j = kit::inputs::rng_for(ctx.env.seed, &format!("{}/moved", ctx.check_name)).random_range(0..n);
    (j, if inside(x[j], y[j]) { (0.875, 0.875) } else { (0.5, 0.25) })
}

/// Points this close to the circle (|x^2 + y^2 - 1| <= PERF_NEAR, in double)
/// may be counted either way by a right kernel (as pi_count.cu's NEAR).
pub const PERF_NEAR: f64 = 1.0 / (1 << 20) as f64;

/// The timed check's points, output and expected count. Every launch gets
/// fresh points from the run's secret key (kit::timed::Fresh): coordinates
/// uniform in [0, 1) with 24 random bits, as real data has them (no grid a
/// kernel could count on). The grader's own kernel counts each launch's
/// points again in double, and counts apart those within [`PERF_NEAR`] of
/// the circle, which float rounding may put on either side: the student's
/// count must be the grader's within that many.
pub struct TimedPoints {
    pub n: usize,
    pub x: Fresh<f32>,
    pub y: Fresh<f32>,
    /// The student's output.
    pub hits: DeviceBuffer<u32>,
    /// The grader's count of the same points, and of those near the circle.
    expected: DeviceBuffer<u32>,
    near: DeviceBuffer<u32>,
    count: Arc<Module>,
}

impl TimedPoints {
    pub fn new(ctx: &Ctx, n: usize) -> Result<Self> {
        let gpu = ctx.gpu()?;
        let count = ctx.yardstick("pi_count", include_str!("../yardsticks/pi_count.cu"))?;
        let coordinate = |name| Fresh::uniform(ctx, name, n, 0.0, 1.0);
        Ok(Self {
            n,
            x: coordinate("x")?,
            y: coordinate("y")?,
            hits: gpu.zeros::<u32>("hits", 1)?,
            expected: gpu.zeros::<u32>("hits (the grader's count)", 1)?,
            near: gpu.zeros::<u32>("points near the circle (the grader's count)", 1)?,
            count,
        })
    }

    /// Launch `launch`'s points, and `*hits` at zero as the README promises.
    pub fn prepare(&self, launch: usize) -> Result<()> {
        self.x.fill(launch)?;
        self.y.fill(launch)?;
        self.hits.write(&[0])
    }

    /// The kernel's arguments (the same buffers every launch).
    pub fn args(&self) -> [Arg; 4] {
        [self.x.arg(), self.y.arg(), (self.n as i32).into(), self.hits.arg()]
    }

    /// What launch `launch` wrote: its points untouched, and its count the
    /// grader's count of the same points, within the points near the circle.
    pub fn check(&self, launch: usize) -> Result<()> {
        self.x.intact(launch)?;
        self.y.intact(launch)?;
        self.expected.write(&[0])?;
        self.near.write(&[0])?;
        let args = [self.x.arg(), self.y.arg(), (self.n as i32).into(), self.expected.arg(), self.near.arg()];
        self.count.launch("pi_count", launch_config(self.n), &args)?;
        let (expected, near) = (self.expected.read()?[0], self.near.read()?[0]);
        let got = self.hits.read()?[0];
        if got.abs_diff(expected) > near {
            bail!(
                "`hits (n = {})`: expected {expected}, got {got} (the grader's count of the same points, in double; \
                 {near} of them lie within 2^-20 of the circle, where float rounding may count them either way)",
                self.n
            );
        }
        Ok(())
    }
}

fn shared_speedup(ctx: &Ctx) -> Result<String> {
    let module = ctx.kernel_module("pi_shared")?;
    let baseline = ctx.yardstick("pi_global_atomics", include_str!("../yardsticks/pi_global_atomics.cu"))?;
    let gpu = module.gpu();
    let points = TimedPoints::new(ctx, PERF_POINTS)?;
    let cfg = launch_config(PERF_POINTS);
    let shared = kit::timed::student(
        gpu,
        |launch| points.prepare(launch),
        |_| module.launch_async("pi_shared", cfg, &points.args()),
        |launch| points.check(launch),
    )?;
    // The yardstick counts launch 0's points (it writes only its count).
    points.prepare(0)?;
    let global = ctx.time_yardstick(&baseline, "pi_global_atomics", cfg, &points.args(), || points.hits.write(&[0]))?;
    kit::perf::require_speedup("pi_shared", &shared, &global, "one atomicAdd per hit", MIN_SPEEDUP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kit::inputs::rng_for;

    #[test]
    fn cpu_reference_counts_the_quarter_disc() {
        assert_eq!(cpu_hits(&[0.0, 0.6, 0.9, 1.0], &[0.0, 0.7, 0.9, 0.0]), 3);
    }

    #[test]
    fn points_avoid_the_boundary_and_always_hit() {
        for n in [1, 2, 255, 10_000] {
            let (x, y) = points(&mut rng_for(42, &format!("n={n}")), n);
            assert_eq!(x.len(), n);
            assert!(cpu_hits(&x, &y) > 0, "n={n} has no hit: an empty kernel would pass");
            assert!(x.iter().zip(&y).all(|(a, b)| ((*a as f64).powi(2) + (*b as f64).powi(2) - 1.0).abs() >= 1e-5));
        }
        let (x, y) = points(&mut rng_for(1, "big"), 1_000_000);
        let pi = 4.0 * cpu_hits(&x, &y) as f64 / 1e6;
        assert!((pi - std::f64::consts::PI).abs() < 0.01, "{pi}");
    }

    #[test]
    fn checked_points_have_a_seeded_number_of_hits() {
        let counts: std::collections::BTreeSet<u32> = (0..20)
            .map(|seed| {
                let (x, y) = points_with_seeded_hits(&mut rng_for(seed, "n=100"), 100);
                assert_eq!(x.len(), 100);
                assert!(x.iter().zip(&y).all(|(a, b)| ((*a as f64).powi(2) + (*b as f64).powi(2) - 1.0).abs() >= 1e-5));
                cpu_hits(&x, &y)
            })
            .collect();
        assert!(counts.len() >= 15 && counts.iter().all(|&c| (1..100).contains(&c)), "{counts:?}");
    }

    /// A context on the simulator (seed 1) for `file`, its text passed through `edit`.
    fn on_sim_edited(file: &str, edit: impl FnOnce(String) -> String, check: impl FnOnce(&Ctx)) {
        kit::trial::on_sim("ex01::shared::perf::faster-than-global-atomics", file, edit, check)
    }

    fn on_sim(file: &str, check: impl FnOnce(&Ctx)) {
        on_sim_edited(file, |text| text, check)
    }

    /// The timing needs a GPU; its launches and their checks run here, on
    /// fewer points (more than the grid has threads): the references count
    /// what the grader counts on every launch, a count of another launch
    /// fails, and a write into the points is caught.
    #[test]
    fn timed_launches_are_checked_in_full() {
        let n = 300_007;
        for (file, kernel) in [("pi_global.cu", "pi_global"), ("pi_shared.cu", "pi_shared")] {
            on_sim(&format!("reference/ex01-pi/kernels/{file}"), |ctx| {
                let module = ctx.kernel_module(kernel).unwrap();
                let points = TimedPoints::new(ctx, n).unwrap();
                let host_count = |launch| {
                    let (x, y) = (points.x.host_values(launch, 0, n), points.y.host_values(launch, 0, n));
                    assert!(x.iter().chain(&y).all(|&c| (0.0..1.0).contains(&c)));
                    assert!(x.iter().filter(|&&c| (c * 2048.0).fract() != 0.0).count() > n - n / 1000, "no grid");
                    cpu_hits(&x, &y)
                };
                let mut counts = Vec::new();
                for launch in [0, 1, 6] {
                    points.prepare(launch).unwrap();
                    module.launch(kernel, launch_config(n), &points.args()).unwrap();
                    points.check(launch).unwrap_or_else(|e| panic!("{kernel}, launch {launch}: {e:#}"));
                    let got = points.hits.read().unwrap()[0];
                    assert!(got.abs_diff(host_count(launch)) <= 2, "{kernel}, launch {launch}");
                    counts.push(got);
                }
                // Launch 0's points with the count of a launch whose count differs.
                let other = (1..).map(&host_count).find(|&c| c.abs_diff(counts[0]) > 10).unwrap();
                points.prepare(0).unwrap();
                points.hits.write(&[other]).unwrap();
                let e = format!("{:#}", points.check(0).unwrap_err());
                // Expected: the grader's count, which may differ from this kernel's by the
                // few points float rounding may put on either side of the circle.
                let expected = e.split("expected ").nth(1).and_then(|r| r.split(',').next()?.parse::<u32>().ok());
                assert!(
                    expected.is_some_and(|x| x.abs_diff(counts[0]) <= 2) && e.contains(&format!("got {other}")),
                    "{e}"
                );
                // A point moved by the kernel.
                points.prepare(2).unwrap();
                module.launch(kernel, launch_config(n), &points.args()).unwrap();
                points.y.overwrite_one(2, n - 1).unwrap();
                let e = points.check(2).unwrap_err();
                let modified = e.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
                assert_eq!((modified.buffer.as_str(), modified.index), ("y", n - 1));
            });
        }
    }

    /// The cheat corpus's kernel that slides its count along the old
    /// overlapping windows, with its timed size set to the test's: right on
    /// every launch of the old windows (the last one repeated, as the timing
    /// does), right on its first launch of fresh points and wrong on a later
    /// one (fresh points, the same buffers).
    #[test]
    fn a_count_kept_from_the_last_launch_is_wrong_on_the_next() {
        let n = 20_011;
        let file = "grader/tests/cheats/ex01-shared-slides-window/exercises/ex01-pi/kernels/pi_shared.cu";
        let at_test_size = |text: String| {
            assert!(text.contains("#define BIG (1 << 25)"));
            text.replace("#define BIG (1 << 25)", &format!("#define BIG {n}"))
        };
        on_sim_edited(file, at_test_size, |ctx| {
            let module = ctx.kernel_module("pi_shared").unwrap();
            let gpu = module.gpu();
            // The old timing: launch l reads the points from 64 (256 bytes) times l on.
            let (x, y) = points(&mut kit::inputs::rng_for(1, "windows"), n + 64 * 8);
            let (dx, dy) = (gpu.upload("x", &x).unwrap(), gpu.upload("y", &y).unwrap());
            let window = |buf: &DeviceBuffer<f32>, l: usize| Arg::Ptr(buf.ptr() + 256 * l as u64);
            let hits = gpu.zeros::<u32>("hits", 1).unwrap();
            for launch in [0, 1, 2, 3, 3] {
                hits.write(&[0]).unwrap();
                let args = [window(&dx, launch), window(&dy, launch), (n as i32).into(), hits.arg()];
                module.launch("pi_shared", launch_config(n), &args).unwrap();
                let at = 64 * launch..64 * launch + n;
                assert_eq!(hits.read().unwrap()[0], cpu_hits(&x[at.clone()], &y[at]), "window {launch}");
            }
            let points = TimedPoints::new(ctx, n).unwrap();
            let mut first_wrong = None;
            for launch in 0..4 {
                points.prepare(launch).unwrap();
                module.launch("pi_shared", launch_config(n), &points.args()).unwrap();
                if let Err(e) = points.check(launch) {
                    first_wrong.get_or_insert((launch, format!("{e:#}")));
                }
            }
            let (launch, e) = first_wrong.expect("the kept count is caught");
            assert!(launch >= 1 && e.contains(&format!("hits (n = {n})")), "launch {launch}: {e}");
        });
    }

    /// Float's x*x + y*y, rounded or fused, never puts a point further from
    /// the circle's side than PERF_NEAR: the grader's tolerance is derived,
    /// and it is small (about 1.6e-6 of the points).
    #[test]
    fn float_rounding_moves_no_point_past_the_near_band() {
        let mut rng = kit::inputs::rng_for(2, "near");
        let mut near = 0;
        for _ in 0..200_000 {
            // Points right at the circle: x uniform, y = sqrt(1 - x^2) to 24 bits, nudged.
            let x = (rng.random_range(0..1u32 << 24) as f32) / 16_777_216.0;
            let y0 = (1.0 - (x as f64).powi(2)).sqrt();
            let y = ((y0 * 16_777_216.0).round() + rng.random_range(-40.0..40.0f64)).clamp(0.0, 16_777_215.0) as f32
                / 16_777_216.0;
            let exact = (x as f64).powi(2) + (y as f64).powi(2);
            for float in [x * x + y * y, x.mul_add(x, y * y), (x * x + y * y).sqrt()] {
                if (float <= 1.0) != (exact <= 1.0) {
                    assert!((exact - 1.0).abs() <= PERF_NEAR, "({x}, {y}): {exact} counted as {float}");
                }
            }
            near += ((exact - 1.0).abs() <= PERF_NEAR) as u32;
        }
        assert!(near > 1000, "the test reaches the band");
        // The band's share of uniform points: pi/4 of an annulus of width 2^-20 in r^2.
        const { assert!(std::f64::consts::FRAC_PI_4 * 2.0 * PERF_NEAR < 1.6e-6) };
    }

    #[test]
    fn launch_is_capped_so_a_grid_stride_loop_is_needed() {
        assert_eq!(launch_config(SIZES[0]).grid.0, 1);
        assert_eq!(launch_config(257).grid.0, 2);
        assert_eq!(launch_config(SIZES[4]).grid.0, MAX_BLOCKS);
        assert!(SIZES[4] > (MAX_BLOCKS * THREADS) as usize);
        assert!(SIZES.iter().all(|n| n % THREADS as usize != 0));
    }
}
