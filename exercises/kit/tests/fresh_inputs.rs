//! Timed inputs (`kit::timed::Fresh`) on the simulator: the device's
//! generator and the host's agree bit for bit, every launch and every run get
//! values of their own, and a kernel that writes into one is caught.

use kit::timed::{byte_table, Fresh};
use kit::{Ctx, Gpu, PartBuild, RunEnv};

fn env() -> Option<RunEnv> {
    let compiler = kit::trial::compiler()?;
    Some(RunEnv::new(1, Some(Gpu::simulator()), Some(compiler), Default::default()))
}

fn with_ctx(env: &RunEnv, f: impl FnOnce(&Ctx)) {
    let build = PartBuild::new(String::new());
    let ctx = Ctx::new("ex00::part::perf::check", env, &build);
    ctx.run(|ctx| f(ctx));
}

#[test]
fn the_device_makes_what_the_host_computes_for_every_kind_and_length() {
    let Some(env) = env() else { return };
    with_ctx(&env, |ctx| {
        let table = byte_table(&[(b'A', 3.0), (b'C', 1.0), (b'G', 1.0), (b'T', 3.0)]).unwrap();
        for len in [1, 4, 1001, 4099] {
            let ints = Fresh::ints(ctx, "ints", len, -100, 100).unwrap();
            let dyadic = Fresh::dyadic(ctx, "dyadic", len, 0, 2047, 11).unwrap();
            let uniform = Fresh::uniform(ctx, "uniform", len, -1.0, 1.0).unwrap();
            let wide = Fresh::wide(ctx, "wide", len, 24, true).unwrap();
            let bytes = Fresh::bytes(ctx, "bytes", len + 13, &table).unwrap();
            for launch in [0, 1, 37] {
                ints.fill(launch).unwrap();
                dyadic.fill(launch).unwrap();
                uniform.fill(launch).unwrap();
                wide.fill(launch).unwrap();
                bytes.fill(launch).unwrap();
                assert_eq!(ints.buffer().read().unwrap(), ints.host_values(launch, 0, len), "len {len}");
                let bits = |v: Vec<f32>| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(dyadic.buffer().read().unwrap()), bits(dyadic.host_values(launch, 0, len)));
                assert_eq!(bits(uniform.buffer().read().unwrap()), bits(uniform.host_values(launch, 0, len)));
                assert_eq!(bits(wide.buffer().read().unwrap()), bits(wide.host_values(launch, 0, len)));
                assert_eq!(bytes.buffer().read().unwrap(), bytes.host_values(launch, 0, len + 13));
                assert!(ints.buffer().read().unwrap().iter().all(|v| (-100..=100).contains(v)));
                ints.intact(launch).unwrap();
                bytes.intact(launch).unwrap();
            }
        }
    });
}

#[test]
fn no_two_launches_and_no_two_runs_share_their_values() {
    let Some(env) = env() else { return };
    let n = 4096;
    let mut runs = Vec::new();
    for env in [env, self::env().unwrap()] {
        with_ctx(&env, |ctx| {
            let x = Fresh::ints(ctx, "x", n, i32::MIN, i32::MAX).unwrap();
            let launches: Vec<Vec<i32>> = (0..3).map(|l| x.host_values(l, 0, n)).collect();
            for (a, b) in [(0, 1), (1, 2), (0, 2)] {
                let same = launches[a].iter().zip(&launches[b]).filter(|(p, q)| p == q).count();
                assert!(same < 4, "launches {a} and {b} share {same} of {n} values");
            }
            // No launch is a shifted view of another.
            for shift in 1..64 {
                let same = launches[0][shift..].iter().zip(&launches[1]).filter(|(p, q)| p == q).count();
                assert!(same < 4, "launch 1 is launch 0 shifted by {shift}");
            }
            // A second input of the same check and name gets other values.
            let y = Fresh::ints(ctx, "x", n, i32::MIN, i32::MAX).unwrap();
            assert_ne!(y.host_values(0, 0, 16), launches[0][..16]);
            runs.push(launches[0].clone());
        });
    }
    assert_ne!(runs[0], runs[1], "two runs with the same seed drew the same timed inputs");
}

#[test]
fn a_kernel_that_writes_into_a_fresh_input_is_caught_and_the_input_restored() {
    let Some(env) = env() else { return };
    with_ctx(&env, |ctx| {
        let x = Fresh::dyadic(ctx, "in", 1000, -16, 16, 4).unwrap();
        x.fill(5).unwrap();
        let was = x.host_values(5, 777, 1)[0];
        x.buffer().write_at(777, &[was + 1.0]).unwrap();
        let err = x.intact(5).unwrap_err();
        let modified = err.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
        assert_eq!((modified.buffer.as_str(), modified.index), ("in", 777));
        assert_eq!(modified.uploaded, was.to_string());
        assert_eq!(modified.found, (was + 1.0).to_string());
        x.intact(5).expect("restored for the next launch");
        x.overwrite_one(5, 3).unwrap();
        let err = x.intact(5).unwrap_err();
        let modified = err.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
        assert_eq!(modified.index, 3);
        assert_ne!(modified.found, modified.uploaded);
        let bytes = Fresh::bytes(ctx, "data", 999, &[7; kit::timed::BYTE_TABLE]).unwrap();
        bytes.fill(0).unwrap();
        bytes.buffer().write_at(998, &[8]).unwrap();
        let err = bytes.intact(0).unwrap_err().to_string();
        assert!(err.contains("`data`") && err.contains("998"), "{err}");
    });
}
