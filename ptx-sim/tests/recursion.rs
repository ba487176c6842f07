//! Recursive `__device__` functions run (a call stack per thread, each
//! activation with its own registers and local memory), lanes of one warp at
//! different depths; recursion past the depth limit is a stack overflow.

mod common;

use common::*;
use ptx_sim::{ParamValue, SimError};

#[test]
fn a_pairwise_recursive_sum_gives_every_thread_its_sum() {
    let Some((mut sim, m)) = sim_with("recursion.cu") else { return };
    let n = 1000;
    let input: Vec<i32> = (0..n).map(|i| i * 7 % 101 - 50).collect();
    let pa = upload_i32(&mut sim, &input);
    let (blocks, threads) = (2u32, 64u32);
    let total = (blocks * threads) as usize;
    let out = sim.alloc(total * 4).unwrap();
    sim.launch(m, "sums", (blocks, 1, 1), (threads, 1, 1), 0, &[ptr(pa), ParamValue::I32(n), ptr(out)]).unwrap();
    let got = download_i32(&sim, out, total);
    for (t, &g) in got.iter().enumerate() {
        let want: i32 = input.iter().skip(t).step_by(total).sum();
        assert_eq!(g, want, "thread {t}");
    }
}

#[test]
fn each_activation_keeps_its_own_local_memory() {
    let Some((mut sim, m)) = sim_with("recursion.cu") else { return };
    let out = sim.alloc(32 * 4).unwrap();
    sim.launch(m, "fibs", (1, 1, 1), (32, 1, 1), 0, &[ptr(out), ParamValue::I32(0)]).unwrap();
    let fib = |k: i32| (0..k).fold((0, 1), |(a, b), _| (b, a + b)).0;
    let got = download_i32(&sim, out, 32);
    for (t, &g) in got.iter().enumerate() {
        assert_eq!(g, fib(t as i32 % 12), "thread {t}");
    }
}

#[test]
fn recursion_past_the_limit_is_a_stack_overflow() {
    let Some((mut sim, m)) = sim_with("recursion.cu") else { return };
    let out = sim.alloc(32 * 4).unwrap();
    let err = sim.launch(m, "fibs", (1, 1, 1), (1, 1, 1), 0, &[ptr(out), ParamValue::I32(5000)]).unwrap_err();
    match err {
        SimError::StackOverflow { ref function, ref location, .. } => {
            assert!(function.contains("fib"), "{err}");
            assert!(location.as_deref().is_some_and(|l| l.contains("recursion.cu:")), "{err}");
        }
        e => panic!("{e}"),
    }
}
