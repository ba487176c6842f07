//! Hand-written PTX for what the fidelity sweep added (no NVRTC needed):
//! predefined identifiers, `cp.async` with commit and wait groups, `mbarrier`
//! phases across warps, `cp.async.bulk`, carry arithmetic and half-precision
//! atomics.

use ptx_sim::{ParamValue, SimConfig, SimError, Simulator};

/// A module with one kernel `k(out, in)`, 1 KiB of shared `buf` and an mbarrier `bar`.
fn module(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 .ptr .align 1 out, .param .u64 .ptr .align 1 in)\n{{\n\
         .reg .pred %p<8>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<16>;\n\
         .shared .align 16 .b8 buf[1024];\n.shared .align 8 .b64 bar;\n\
         ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [in];\nmov.u32 %r1, %tid.x;\n\
         mov.u32 %r2, bar;\nmov.u32 %r3, buf;\n{body}\nret;\n}}\n"
    )
}

struct Run {
    out: Vec<u32>,
    rep: ptx_sim::LaunchReport,
}

// The error is matched by the tests, as the simulator returns it.
#[allow(clippy::result_large_err)]
fn run(body: &str, threads: u32, input: &[u32]) -> Result<Run, SimError> {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&module(body))?;
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
    let pin = sim.alloc(bytes.len().max(4))?;
    sim.write(pin, &bytes)?;
    let n = 256;
    let pout = sim.alloc(n * 4)?;
    let rep = sim.launch(m, "k", (1, 1, 1), (threads, 1, 1), 0, &[ParamValue::U64(pout), ParamValue::U64(pin)])?;
    let mut b = vec![0u8; n * 4];
    sim.read(pout, &mut b)?;
    Ok(Run { out: b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect(), rep })
}

const STORE_R: &str = "mul.wide.u32 %rd8, %r1, 4;\nadd.s64 %rd9, %rd1, %rd8;\n";

#[test]
fn predefined_identifiers_have_fixed_values() {
    let body = format!(
        "mov.u32 %r4, WARP_SZ;\nmov.u32 %r5, %envreg5;\nmov.u32 %r6, %cluster_nctarank;\nmov.u32 %r7, %laneid;\n\
         mov.u32 %r8, %lanemask_lt;\nmov.u32 %r9, %clusterid.x;\nmov.u32 %r10, %pm3;\nmov.u32 %r11, %nwarpid;\n\
         mov.u64 %rd4, %clock64;\nmov.u64 %rd5, %globaltimer;\nsetp.gt.u64 %p1, %rd5, %rd4;\nselp.u32 %r12, 1, 0, %p1;\n\
         {STORE_R}st.global.v4.u32 [%rd9], {{%r4, %r5, %r6, %r7}};\n"
    );
    let body = body.replace("mul.wide.u32 %rd8, %r1, 4", "mul.wide.u32 %rd8, %r1, 32");
    let body = format!("{body}st.global.v4.u32 [%rd9+16], {{%r8, %r9, %r10, %r12}};\n");
    let r = run(&body, 8, &[]).unwrap();
    for t in 0..8usize {
        let o = &r.out[t * 8..t * 8 + 8];
        assert_eq!(o, [32, 0, 1, t as u32, (1u32 << t) - 1, 0, 0, 1], "thread {t}");
    }
}

/// `%envreg0`, `6` and `10` read what an H100's driver sets (ptx_sim's
/// device model), the other environment registers and `%pm` 0, as there.
#[test]
fn environment_registers_read_as_on_a_gpu() {
    let body = format!(
        "mov.u32 %r4, %envreg0;\nmov.u32 %r5, %envreg6;\nmov.u32 %r6, %envreg10;\nmov.u32 %r7, %envreg31;\n\
         mov.u32 %r8, %pm0;\nmov.u64 %rd4, %pm7_64;\ncvt.u32.u64 %r9, %rd4;\nmov.u32 %r10, %envreg1;\nmov.u32 %r11, %envreg5;\n\
         {STORE_R}st.global.v4.u32 [%rd9], {{%r4, %r5, %r6, %r7}};\nst.global.v4.u32 [%rd9+16], {{%r8, %r9, %r10, %r11}};\n"
    )
    .replace("mul.wide.u32 %rd8, %r1, 4", "mul.wide.u32 %rd8, %r1, 32");
    let r = run(&body, 4, &[]).unwrap();
    for t in 0..4usize {
        assert_eq!(r.out[t * 8..t * 8 + 8], [0x0384_32c8, 1, 0x120, 0, 0, 0, 0, 0], "thread {t}");
    }
}

#[test]
fn cp_async_copies_through_the_memory_paths() {
    let input: Vec<u32> = (0..256).map(|i| 1000 + i).collect();
    let body = format!(
        "mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nshl.b32 %r4, %r1, 2;\nadd.u32 %r4, %r3, %r4;\n\
         cp.async.ca.shared.global [%r4], [%rd4], 4, 4;\n\
         mul.wide.u32 %rd5, %r1, 16;\nadd.s64 %rd6, %rd2, %rd5;\nadd.s64 %rd6, %rd6, 256;\n\
         shl.b32 %r5, %r1, 4;\nadd.u32 %r6, %r3, %r5;\nadd.u32 %r6, %r6, 256;\nsetp.lt.u32 %p1, %r1, 16;\n\
         @%p1 cp.async.cg.shared.global.L2::128B [%r6], [%rd6], 16;\n\
         add.u32 %r7, %r4, 768;\ncp.async.ca.shared.global [%r7], [%rd4], 4, 0;\n\
         cp.async.commit_group;\ncp.async.wait_group 0;\ncp.async.wait_all;\nbar.sync 0;\n\
         add.u32 %r8, %r1, 1;\nand.b32 %r8, %r8, 63;\nshl.b32 %r8, %r8, 2;\nadd.u32 %r8, %r3, %r8;\n\
         ld.shared.u32 %r9, [%r8];\nadd.u32 %r10, %r4, 256;\nld.shared.u32 %r11, [%r10];\nld.shared.u32 %r12, [%r7];\n\
         {STORE_R}st.global.u32 [%rd9], %r9;\nst.global.u32 [%rd9+256], %r11;\nst.global.u32 [%rd9+512], %r12;\n"
    );
    let r = run(&body, 64, &input).unwrap();
    for t in 0..64usize {
        assert_eq!(r.out[t], input[(t + 1) % 64], "4-byte copy, thread {t}");
        assert_eq!(r.out[64 + t], input[64 + t], "16-byte copy, thread {t}");
        assert_eq!(r.out[128 + t], 0, "src-size 0 fills zeros, thread {t}");
    }
    assert!(r.rep.races.is_empty(), "{:?}", r.rep.races);
    assert!(r.rep.uninitialised_read.is_none(), "{:?}", r.rep.uninitialised_read);
    // the copies' global reads count as loads: two warps of 4-byte copies
    // (4 sectors each), one of 16-byte copies by 16 lanes (8 sectors)
    assert_eq!(r.rep.stats.global_load_requests, 3);
    assert_eq!(r.rep.stats.global_load_sectors, 16);
}

/// Thread 0 initialises the mbarrier for `count` arrivals; every thread writes
/// its slot, arrives, spins on `try_wait`, then reads the other warp's slot.
fn mbarrier_exchange(count: u32) -> String {
    format!(
        "setp.ne.u32 %p1, %r1, 0;\n@%p1 bra $L1;\nmbarrier.init.shared.b64 [%r2], {count};\n$L1:\nbar.sync 0;\n\
         shl.b32 %r5, %r1, 2;\nadd.u32 %r6, %r3, %r5;\nst.shared.u32 [%r6], %r1;\n\
         mbarrier.arrive.release.cta.shared::cta.b64 %rd2, [%r2];\n\
         $Lwait:\nmbarrier.try_wait.shared.b64 %p2, [%r2], %rd2;\n@!%p2 bra $Lwait;\n\
         add.u32 %r7, %r1, 32;\nand.b32 %r7, %r7, 63;\nshl.b32 %r7, %r7, 2;\nadd.u32 %r7, %r3, %r7;\n\
         ld.shared.u32 %r8, [%r7];\n{STORE_R}st.global.u32 [%rd9], %r8;\n"
    )
}

#[test]
fn an_mbarrier_phase_lets_warps_wait_for_each_other() {
    let r = run(&mbarrier_exchange(64), 64, &[]).unwrap();
    for t in 0..64u32 {
        assert_eq!(r.out[t as usize], (t + 32) % 64, "thread {t}");
    }
    // the phase orders the writes before the reads, as a barrier would
    assert!(r.rep.races.is_empty(), "{:?}", r.rep.races);
}

#[test]
fn an_mbarrier_that_never_completes_is_a_reported_deadlock() {
    match run(&mbarrier_exchange(65), 64, &[]) {
        Err(SimError::BarrierDivergence { detail, .. }) => assert!(detail.contains("mbarrier"), "{detail}"),
        Err(e) => panic!("expected a deadlock, got {e}"),
        Ok(_) => panic!("expected a deadlock"),
    }
}

#[test]
fn a_bulk_copy_completes_its_transaction_bytes() {
    let input: Vec<u32> = (0..64).map(|i| 7 * i + 3).collect();
    let body = format!(
        "setp.ne.u32 %p1, %r1, 0;\n@%p1 bra $L1;\nmbarrier.init.shared::cta.b64 [%r2], 1;\n\
         mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64 %rd5, [%r2], 256;\n\
         cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd2], 256, [%r2];\n\
         $L1:\nbar.sync 0;\n\
         $Lw:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n@!%p2 bra $Lw;\n\
         shl.b32 %r5, %r1, 2;\nadd.u32 %r6, %r3, %r5;\nld.shared.u32 %r7, [%r6];\n{STORE_R}st.global.u32 [%rd9], %r7;\n"
    );
    let r = run(&body, 64, &input).unwrap();
    assert_eq!(&r.out[..64], &input[..]);
    assert!(r.rep.stats.global_load_requests > 0);
}

#[test]
fn carry_arithmetic_chains_32_bit_halves() {
    let mut input = Vec::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..32 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let a = x;
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        input.extend([a as u32, (a >> 32) as u32, x as u32, (x >> 32) as u32]);
    }
    let body = "mul.wide.u32 %rd3, %r1, 16;\nadd.s64 %rd4, %rd2, %rd3;\n\
         ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd4];\n\
         add.cc.u32 %r8, %r4, %r6;\naddc.u32 %r9, %r5, %r7;\n\
         sub.cc.u32 %r10, %r4, %r6;\nsubc.u32 %r11, %r5, %r7;\n\
         mul.lo.u32 %r12, %r4, %r6;\nmul.hi.u32 %r13, %r4, %r6;\n\
         mad.lo.cc.u32 %r14, %r4, %r7, %r13;\nmadc.hi.u32 %r15, %r4, %r7, 0;\n\
         mul.wide.u32 %rd5, %r1, 32;\nadd.s64 %rd6, %rd1, %rd5;\n\
         st.global.v4.u32 [%rd6], {%r8, %r9, %r10, %r11};\nst.global.v4.u32 [%rd6+16], {%r12, %r14, %r15, 0};\n";
    let r = run(body, 32, &input).unwrap();
    for t in 0..32usize {
        let w = |k: usize| input[4 * t + k] as u64;
        let (a, b) = (w(0) | w(1) << 32, w(2) | w(3) << 32);
        let o = |k: usize| r.out[8 * t + k] as u64;
        assert_eq!(o(0) | o(1) << 32, a.wrapping_add(b), "sum, thread {t}");
        assert_eq!(o(2) | o(3) << 32, a.wrapping_sub(b), "difference, thread {t}");
        let p = (a as u32 as u128) * (b as u128);
        let got = o(4) as u128 | (o(5) as u128) << 32 | (o(6) as u128) << 64;
        assert_eq!(got, p, "96-bit product, thread {t}");
    }
}

#[test]
fn half2_atomic_add_rounds_each_half() {
    // 32 threads add (0.5, 0.25) to (1.0, 2.0): (17.0, 10.0)
    let body = "mov.u32 %r4, 0x34003800;\natom.global.add.noftz.f16x2 %r5, [%rd2], %r4;\n";
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&module(body)).unwrap();
    let p = sim.alloc(4).unwrap();
    sim.write(p, &0x4000_3c00u32.to_le_bytes()).unwrap();
    sim.launch(m, "k", (1, 1, 1), (32, 1, 1), 0, &[ParamValue::U64(p), ParamValue::U64(p)]).unwrap();
    let mut b = [0u8; 4];
    sim.read(p, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 0x4900_4c40);
}

/// Two groups of copies: `buf[tid]`, then `buf[64 + tid]`; `wait` between
/// them and the reads.
fn two_groups(wait: &str, read_at: u32) -> String {
    format!(
        "mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nshl.b32 %r4, %r1, 2;\nadd.u32 %r4, %r3, %r4;\n\
         cp.async.ca.shared.global [%r4], [%rd4], 4;\ncp.async.commit_group;\n\
         cp.async.ca.shared.global [%r4+256], [%rd4], 4;\ncp.async.commit_group;\n{wait}\n\
         ld.shared.u32 %r9, [%r4+{read_at}];\n{STORE_R}st.global.u32 [%rd9], %r9;\n"
    )
}

#[test]
fn reading_a_copys_destination_before_waiting_for_it_is_reported() {
    let input: Vec<u32> = (0..64).collect();
    let uninit = |wait: &str, at: u32| run(&two_groups(wait, at), 32, &input).unwrap().rep.uninitialised_read;
    assert!(uninit("cp.async.wait_group 0;", 0).is_none());
    assert!(uninit("cp.async.wait_all;", 256).is_none());
    // wait_group 1 leaves the most recent group in flight
    assert!(uninit("cp.async.wait_group 1;", 0).is_none());
    match uninit("cp.async.wait_group 1;", 256) {
        Some(SimError::UninitialisedRead { offset: 256, .. }) => {}
        e => panic!("expected an uninitialised read at byte 256, got {e:?}"),
    }
    assert!(uninit("", 0).is_some(), "no wait at all");
}

#[test]
fn code_inlined_through_several_headers_is_reported_at_the_students_line() {
    // NVRTC's form: one `inlined_at` level per `.loc`, the call site's `.loc` before
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
        .loc 1 5 3\nld.param.u64 %rd1, [out];\n\
        .loc 3 40 2, function_name $L__info_string0, inlined_at 1 9 5\n\
        .loc 2 10 5, function_name $L__info_string1, inlined_at 3 40 2\n\
        .loc 2 20 9, function_name $L__info_string2, inlined_at 2 10 5\n\
        ld.global.u32 %r1, [%rd1];\nret;\n}\n\
        .file 1 \"exercises/k.cu\"\n.file 2 \"cuda/include/hdr_inner.h\"\n.file 3 \"cuda/include/hdr_outer.h\"\n";
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(ptx).unwrap();
    match sim.launch(m, "k", (1, 1, 1), (1, 1, 1), 0, &[ParamValue::U64(8)]) {
        Err(SimError::IllegalAddress { location, .. }) => assert_eq!(location.as_deref(), Some("exercises/k.cu:9")),
        r => panic!("expected an illegal address, got {r:?}"),
    }
}

#[test]
fn malformed_async_and_barrier_forms_are_errors_not_panics() {
    let lines = [
        "cp.async.ca.shared.global.L2::cache_hint;",
        "cp.async.ca.shared.global [%r3], [%rd2], 3;",
        "cp.async.ca.shared.global [%r3], [%rd2], 4, 2;",
        "cp.async.wait_group %r1;",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3];",
        "mbarrier.init.shared.b64 [%r2];",
        "mbarrier.arrive.shared.b64 [%r2];",
        "mbarrier.try_wait.shared.b64 %p1;",
        "mbarrier.pending_count.b64 %r4, %rd1;",
        "brx.idx %r1, $nowhere;",
        "addc.u32 %r4, %r1;",
        "madc.hi.f32 %r4, %r1, %r1, %r1;",
        "atom.global.max.noftz.f16x2 %r4, [%rd2], %r1;",
    ];
    for l in lines {
        let err = Simulator::new(SimConfig::default()).load_module(&module(l)).unwrap_err();
        assert!(matches!(err, SimError::Parse { .. } | SimError::Unsupported { .. }), "{l}: {err}");
    }
    // a jump-table index past the table stops the launch
    let body = "$tbl: .branchtargets $a, $b;\nbrx.idx %r1, $tbl;\n$a:\nret;\n$b:\nret;\n";
    assert!(matches!(run(body, 4, &[]), Err(SimError::Trap { .. })));
}
