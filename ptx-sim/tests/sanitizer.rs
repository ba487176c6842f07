//! The sanitizer's findings, and the correct kernels it must leave alone:
//! races judged as compute-sanitizer's racecheck does (atomics never race with
//! each other; a plain write races with everything unordered; a write that
//! changes nothing is harmless) and a plain read against another thread's
//! atomic (except the CAS loop's first read), reads of shared memory
//! nobody wrote, and accesses to a buffer's guard zones.

mod common;

use common::*;
use ptx_sim::{ParamValue, RaceKind, SimError};

macro_rules! sim_or_skip {
    () => {
        match sim_with("sanitize.cu") {
            Some(x) => x,
            None => return,
        }
    };
}

#[test]
fn atomic_cas_loop_after_a_plain_read_is_not_a_race() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..256).map(|i| (i * 37 % 101) - 50).collect();
    let pin = upload_i32(&mut sim, &input);
    let pout = sim.alloc(8).unwrap();
    let rep = sim.launch(m, "cas_max", (2, 1, 1), (128, 1, 1), 0, &[ptr(pin), ptr(pout)]).unwrap();
    assert!(rep.races.is_empty(), "{:?}", rep.races);
    assert!(rep.uninitialised_read.is_none(), "{:?}", rep.uninitialised_read);
    let out = download_i32(&sim, pout, 2);
    assert_eq!(out, vec![*input[..128].iter().max().unwrap(), *input[128..].iter().max().unwrap()]);
}

#[test]
fn a_counter_cleared_without_a_barrier_before_atomics_is_a_race() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..64).map(|i| i % 3).collect();
    let pin = upload_i32(&mut sim, &input);
    let pout = sim.alloc(4).unwrap();
    let racy = sim.launch(m, "counter", (1, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout), ParamValue::I32(0)]).unwrap();
    // the result is right (the simulator runs thread 0 first), the race is still found
    assert_eq!(download_i32(&sim, pout, 1)[0], input.iter().filter(|&&x| x > 0).count() as i32);
    assert_eq!(racy.races.len(), 1, "{:?}", racy.races);
    let r = &racy.races[0];
    assert_eq!((r.kind, r.thread_a), (RaceKind::WriteWrite, (0, 0, 0)));
    assert!(r.source_a.as_deref().is_some_and(|s| s.ends_with("sanitize.cu:31")), "{:?}", r.source_a);
    assert!(r.source_b.as_deref().is_some_and(|s| s.ends_with("sanitize.cu:35")), "{:?}", r.source_b);
    let ok = sim.launch(m, "counter", (1, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout), ParamValue::I32(1)]).unwrap();
    assert!(ok.races.is_empty(), "atomics after a barrier, then a read after another: {:?}", ok.races);
}

#[test]
fn a_merge_of_shared_bins_without_a_barrier_after_the_atomics_is_a_race() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..128).map(|i| i * 5 % 11).collect();
    let pin = upload_i32(&mut sim, &input);
    let pbins = sim.alloc(8 * 4).unwrap();
    let args = |b| [ptr(pin), ptr(pbins), ParamValue::I32(b)];
    let racy = sim.launch(m, "private_bins", (2, 1, 1), (64, 1, 1), 0, &args(0)).unwrap();
    assert!(!racy.races.is_empty());
    for r in &racy.races {
        // one side reads plainly, the other is a thread's atomic
        assert!(r.atomic_a != r.atomic_b && r.thread_a != r.thread_b, "{r:?}");
        let read = if r.atomic_a { &r.source_b } else { &r.source_a };
        assert!(read.as_deref().is_some_and(|s| s.contains("sanitize.cu:")), "{r:?}");
    }
    let kinds: Vec<_> = racy.races.iter().map(|r| r.kind).collect();
    assert!(kinds.contains(&RaceKind::WriteRead) && kinds.contains(&RaceKind::ReadWrite), "{kinds:?}");
    let ok = sim.launch(m, "private_bins", (2, 1, 1), (64, 1, 1), 0, &args(1)).unwrap();
    assert!(ok.races.is_empty(), "the merge after a barrier: {:?}", ok.races);
}

#[test]
fn same_value_writes_are_harmless_different_ones_race() {
    let (mut sim, m) = sim_or_skip!();
    let p = sim.alloc(64 * 4).unwrap();
    let same = sim.launch(m, "same_value", (1, 1, 1), (64, 1, 1), 0, &[ptr(p), ParamValue::I32(0)]).unwrap();
    assert!(same.races.is_empty(), "{:?}", same.races);
    let diff = sim.launch(m, "same_value", (1, 1, 1), (64, 1, 1), 0, &[ptr(p), ParamValue::I32(1)]).unwrap();
    assert_eq!(diff.races.len(), 1, "{:?}", diff.races);
    assert_eq!(diff.races[0].kind, RaceKind::WriteWrite);
}

#[test]
fn reading_shared_memory_nobody_wrote_is_reported() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..64).collect();
    let pin = upload_i32(&mut sim, &input);
    let pout = sim.alloc(64 * 4).unwrap();
    let full = sim.launch(m, "half_loaded", (2, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout), ParamValue::I32(64)]);
    assert!(full.unwrap().uninitialised_read.is_none());
    // a later block starts with poisoned memory again, whatever the first one wrote
    let half = sim.launch(m, "half_loaded", (2, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout), ParamValue::I32(32)]);
    match half.unwrap().uninitialised_read {
        Some(SimError::UninitialisedRead {
            offset: 128,
            size: 4,
            thread: (32, 0, 0),
            block: (0, 0, 0),
            ref location,
            ..
        }) => {
            assert!(location.as_deref().is_some_and(|l| l.ends_with("sanitize.cu:58")), "{location:?}")
        }
        e => panic!("expected thread 32's read of tile[32]: {e:?}"),
    }
}

#[test]
fn guard_zones_catch_out_of_bounds_reads_and_writes() {
    let (mut sim, m) = sim_or_skip!();
    let (n, guard) = (100usize, 256usize);
    // one allocation: guard, 100 floats, guard (as the kit lays out its buffers)
    let alloc = |sim: &mut ptx_sim::Simulator, name: &str| {
        let base = sim.alloc(n * 4 + 2 * guard).unwrap();
        sim.protect(base, guard, name, true).unwrap();
        sim.protect(base + (guard + n * 4) as u64, guard, name, false).unwrap();
        // the host may still touch the zones (the kit checks them after a launch)
        sim.fill(base, 0xA5, guard).unwrap();
        base + guard as u64
    };
    let pin = alloc(&mut sim, "in");
    let pout = alloc(&mut sim, "out");
    let args = |guarded: i32| [ptr(pin), ptr(pout), ParamValue::I32(n as i32), ParamValue::I32(guarded)];
    sim.launch(m, "stencil3", (1, 1, 1), (128, 1, 1), 0, &args(1)).unwrap();
    match sim.launch(m, "stencil3", (1, 1, 1), (128, 1, 1), 0, &args(0)).unwrap_err() {
        SimError::OutOfBounds {
            write: false, ref zone, before: true, distance: 4, size: 4, thread: (0, 0, 0), ..
        } => {
            assert_eq!(zone, "in")
        }
        e => panic!("expected thread 0's read of in[-1]: {e}"),
    }
    let fargs = |past: i32| [ptr(pout), ParamValue::I32(n as i32), ParamValue::I32(past)];
    sim.launch(m, "fill", (1, 1, 1), (128, 1, 1), 0, &fargs(0)).unwrap();
    let e = sim.launch(m, "fill", (1, 1, 1), (128, 1, 1), 0, &fargs(1)).unwrap_err();
    match e {
        SimError::OutOfBounds {
            write: true,
            ref zone,
            before: false,
            distance: 0,
            thread: (100, 0, 0),
            ref location,
            ..
        } => {
            assert_eq!(zone, "out");
            assert!(location.as_deref().is_some_and(|l| l.ends_with("sanitize.cu:77")), "{location:?}");
        }
        e => panic!("expected thread 100's write of out[100]: {e}"),
    }
    assert!(e.to_string().contains("0 byte(s) past the end of `out`"), "{e}");
}
