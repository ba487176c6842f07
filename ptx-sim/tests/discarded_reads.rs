//! A shared load whose value a lane throws away is no read for the race check
//! (`ptx_sim`'s `discard` module): compilers if-convert `if (t == 0) total +=
//! cache[0];` into a load by every thread and a `selp` (or a guarded add) that
//! keeps the value for thread 0. A value that is kept, or that leaks anywhere
//! else, still races. Hand-written PTX: the rule must not depend on a compiler.

use ptx_sim::{ParamValue, SimConfig, Simulator};

/// Every thread stores its id to `c[t]`, a barrier, then every thread loads
/// `c[0]`; `keep` decides what becomes of the value (with `%r2` the load and
/// `%r3` what is kept); then every thread stores `%r3 + 1` to `c[t]` (thread
/// 0's store changes the word the others loaded) and to `out[t]`.
fn kernel(keep: &str) -> String {
    format!(
        r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<6>;
    .shared .align 4 .b8 c[256];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u64 %rd2, c;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.shared.u32 [%rd4], %r1;
    bar.sync 0;
    setp.eq.u32 %p1, %r1, 0;
    setp.lt.u32 %p2, %r1, 64;
    mov.u32 %r3, 7;
    ld.shared.u32 %r2, [c];
{keep}
    add.s32 %r9, %r3, 1;
    st.shared.u32 [%rd4], %r9;
    add.s64 %rd5, %rd1, %rd3;
    st.global.u32 [%rd5], %r9;
    ret;
}}
"#
    )
}

/// Shared races found, and `out`.
fn run(keep: &str) -> (usize, Vec<u32>) {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&kernel(keep)).unwrap_or_else(|e| panic!("{e}\n{}", kernel(keep)));
    let out = sim.alloc(64 * 4).unwrap();
    let rep = sim.launch(m, "k", (1, 1, 1), (64, 1, 1), 0, &[ParamValue::U64(out)]).unwrap();
    let mut bytes = vec![0u8; 64 * 4];
    sim.read(out, &mut bytes).unwrap();
    (rep.races.len(), bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect())
}

#[test]
fn a_value_a_selp_keeps_only_for_thread_0_is_read_only_by_thread_0() {
    let (races, out) = run("    selp.b32 %r3, %r2, 7, %p1;");
    assert_eq!(races, 0, "the other threads threw c[0] away");
    assert_eq!((out[0], out[1]), (1, 8));
    // through arithmetic first, as NVRTC writes `total += cache[0]`
    let (races, _) = run("    add.s32 %r4, %r2, 5;\n    selp.b32 %r3, %r4, 7, %p1;");
    assert_eq!(races, 0);
    // the value on the other side: kept where the predicate is false
    let (races, _) = run("    selp.b32 %r3, 7, %r2, %p2;");
    assert_eq!(races, 0, "every thread picks 7");
}

#[test]
fn a_guarded_add_keeps_the_value_only_where_its_guard_holds() {
    let (races, out) = run("    @%p1 add.s32 %r3, %r3, %r2;");
    assert_eq!(races, 0);
    assert_eq!((out[0], out[1]), (8, 8));
}

#[test]
fn a_value_kept_by_other_threads_or_used_elsewhere_still_races() {
    // every thread keeps it
    assert!(run("    selp.b32 %r3, %r2, 7, %p2;").0 > 0);
    // kept by thread 0, but also stored by everyone
    assert!(run("    selp.b32 %r3, %r2, 7, %p1;\n    st.shared.u32 [c+128], %r2;").0 > 0);
    // a predicate computed from the value steers control
    assert!(run("    setp.eq.u32 %p3, %r2, 0;\n    selp.b32 %r3, %r2, 7, %p3;").0 > 0);
    // an unguarded use
    assert!(run("    add.s32 %r3, %r2, 1;").0 > 0);
}
