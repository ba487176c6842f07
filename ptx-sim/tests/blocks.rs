//! Races between blocks on global memory (a plain read-modify-write by every
//! block is one; atomics, disjoint outputs, shared inputs and the threadfence
//! reduction are not), and accesses outside a `__shared__` variable (an array
//! one element short is caught; an exact one and a carved extern array pass).

mod common;

use common::*;
use ptx_sim::{ParamValue, RaceKind, SimError};

macro_rules! sim_or_skip {
    () => {
        match sim_with("blocks.cu") {
            Some(x) => x,
            None => return,
        }
    };
}

#[test]
fn a_plain_read_modify_write_by_every_block_is_a_race_an_atomic_is_not() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..256).map(|i| i % 3 - 1).collect();
    let pin = upload_i32(&mut sim, &input);
    let hits = sim.alloc(4).unwrap();
    let args = |atomic| [ptr(pin), ParamValue::I32(256), ptr(hits), ParamValue::I32(atomic)];
    let racy = sim.launch(m, "block_count", (4, 1, 1), (64, 1, 1), 0, &args(0)).unwrap();
    // one block after another: the count comes out right, the race is still found
    assert_eq!(download_u32(&sim, hits, 1)[0], input.iter().filter(|&&x| x > 0).count() as u32);
    assert_eq!(racy.global_races.len(), 2, "{:?}", racy.global_races);
    let r = &racy.global_races[0];
    assert_eq!((r.kind, r.block_a, r.block_b), (RaceKind::WriteRead, (0, 0, 0), (1, 0, 0)), "{r:?}");
    assert!(r.source_a.as_deref().is_some_and(|s| s.ends_with("blocks.cu:20")), "{r:?}");
    assert!(racy.races.is_empty(), "{:?}", racy.races);
    sim.write(hits, &[0; 4]).unwrap();
    let ok = sim.launch(m, "block_count", (4, 1, 1), (64, 1, 1), 0, &args(1)).unwrap();
    assert!(ok.global_races.is_empty(), "{:?}", ok.global_races);
}

#[test]
fn the_threadfence_reduction_passes_and_without_its_fence_races() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..300).map(|i| i * 7 % 23).collect();
    let pin = upload_i32(&mut sim, &input);
    let blocks = 5u32;
    let partial = sim.alloc(blocks as usize * 4).unwrap();
    let args = |fence| [ptr(pin), ParamValue::I32(300), ptr(partial), ParamValue::I32(fence)];
    for _ in 0..2 {
        let rep = sim.launch(m, "fenced_sum", (blocks, 1, 1), (64, 1, 1), 0, &args(1)).unwrap();
        assert!(rep.global_races.is_empty(), "{:?}", rep.global_races);
        let mut t = [0u8; 4];
        sim.read_symbol(m, "total", &mut t).unwrap();
        assert_eq!(i32::from_le_bytes(t), input.iter().sum::<i32>());
    }
    // (a write that leaves the bytes as they were is not recorded: poison the partials first)
    sim.fill(partial, 0xff, blocks as usize * 4).unwrap();
    let rep = sim.launch(m, "fenced_sum", (blocks, 1, 1), (64, 1, 1), 0, &args(0)).unwrap();
    let r = rep.global_races.first().expect("the partials are not ordered without __threadfence()");
    assert_eq!((r.kind, r.block_b), (RaceKind::WriteRead, (4, 0, 0)), "{r:?}");
}

#[test]
fn shared_inputs_and_disjoint_outputs_are_not_races_an_in_place_shift_is() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..256).collect();
    let pin = upload_i32(&mut sim, &input);
    let pout = sim.alloc(256 * 4).unwrap();
    let rep = sim.launch(m, "shift", (4, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout), ParamValue::I32(256)]).unwrap();
    assert!(rep.global_races.is_empty(), "{:?}", rep.global_races);
    // in place: block 0 reads in[64], which block 1 then writes
    let rep = sim.launch(m, "shift", (4, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pin), ParamValue::I32(256)]).unwrap();
    let r = rep.global_races.first().expect("an in-place shift across blocks");
    assert_eq!((r.kind, r.block_a, r.block_b), (RaceKind::ReadWrite, (0, 0, 0), (1, 0, 0)), "{r:?}");
}

#[test]
fn a_shared_array_one_element_short_is_out_of_bounds_an_exact_one_is_not() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..64).collect();
    let pin = upload_i32(&mut sim, &input);
    let pout = sim.alloc(64 * 4).unwrap();
    let rep = sim.launch(m, "tile_exact", (1, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout)]).unwrap();
    assert!(rep.races.is_empty() && rep.uninitialised_read.is_none());
    assert_eq!(download_i32(&sim, pout, 64), (0..64).rev().collect::<Vec<_>>());
    match sim.launch(m, "tile_short", (1, 1, 1), (64, 1, 1), 0, &[ptr(pin), ptr(pout)]) {
        Err(SimError::SharedOutOfBounds {
            write: true,
            var,
            var_bytes: 252,
            before: false,
            distance: 0,
            thread: (63, 0, 0),
            location,
            ..
        }) => {
            assert_eq!(var, "tile");
            assert!(location.is_some_and(|l| l.ends_with("blocks.cu:76")));
        }
        r => panic!("expected an out-of-bounds write of `tile`, got {r:?}"),
    }
}

#[test]
fn a_carved_extern_array_passes_inside_the_launch_size_and_not_past_it() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..64).collect();
    let pin = upload_i32(&mut sim, &input);
    let pout = sim.alloc(64 * 4).unwrap();
    let rep = sim.launch(m, "carved", (2, 1, 1), (64, 1, 1), 2 * 64 * 4, &[ptr(pin), ptr(pout)]).unwrap();
    assert!(rep.races.is_empty() && rep.uninitialised_read.is_none());
    let want: Vec<f32> = (0..64).map(|t| (63 - t) as f32 + 0.5 * t as f32).collect();
    assert_eq!(download_f32(&sim, pout, 64), want);
    match sim.launch(m, "carved", (1, 1, 1), (64, 1, 1), 2 * 64 * 4 - 4, &[ptr(pin), ptr(pout)]) {
        Err(SimError::SharedOutOfBounds { write: true, dynamic: true, var_bytes: 508, thread: (63, 0, 0), .. }) => {}
        r => panic!("expected an out-of-bounds write of the dynamic area, got {r:?}"),
    }
}

#[test]
fn a_plain_read_then_an_atomic_is_a_race_a_cas_loop_and_a_volatile_read_are_not() {
    let (mut sim, m) = sim_or_skip!();
    let input: Vec<i32> = (0..256).map(|i| i % 3 - 1).collect();
    let pin = upload_i32(&mut sim, &input);
    let bin = sim.alloc(4).unwrap();
    let args = |mode| [ptr(pin), ParamValue::I32(256), ptr(bin), ParamValue::I32(mode)];
    let racy = sim.launch(m, "bin_merge", (4, 1, 1), (64, 1, 1), 0, &args(0)).unwrap();
    let r = racy.global_races.first().expect("atomicExch(bin, *bin + count) by every block");
    assert_eq!((r.kind, r.atomic_a, r.atomic_b), (RaceKind::WriteRead, true, false), "{r:?}");
    assert!(r.source_b.as_deref().is_some_and(|s| s.ends_with("blocks.cu:121")), "{r:?}");
    for mode in [1, 2] {
        sim.write(bin, &[0; 4]).unwrap();
        let ok = sim.launch(m, "bin_merge", (4, 1, 1), (64, 1, 1), 0, &args(mode)).unwrap();
        assert!(ok.global_races.is_empty(), "mode {mode}: {:?}", ok.global_races);
        assert_eq!(download_i32(&sim, bin, 1)[0], input.iter().filter(|&&x| x > 0).count() as i32);
    }
}
