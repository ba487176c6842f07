//! What a kernel reads of its device looks like a GPU's (`src/device.rs`), so
//! that no kernel can tell the simulator from the GPU that times it; and a
//! barrier released after some threads of the block exited is reported.
//! Hand-written PTX, no NVRTC needed.

use ptx_sim::{ParamValue, ShownGpu, SimConfig, Simulator, DEFAULT_GPU};

/// Each thread writes 12 words at `out + 48 * (global thread id)`: %nsmid,
/// %smid, %warpid, %nwarpid, %laneid, %gridid (low word), %clock64 before
/// and after a loop of 100 iterations (low, high words each), %globaltimer
/// (low, high), %clock.
const SPECIALS: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r4, %r2, %r3, %r1;
    mul.wide.u32 %rd2, %r4, 48;
    add.s64 %rd3, %rd1, %rd2;
    mov.u32 %r5, %nsmid;
    mov.u32 %r6, %smid;
    mov.u32 %r7, %warpid;
    mov.u32 %r8, %nwarpid;
    mov.u32 %r9, %laneid;
    mov.u64 %rd4, %gridid;
    cvt.u32.u64 %r10, %rd4;
    mov.u64 %rd5, %clock64;
    mov.u32 %r11, 0;
$Lloop:
    add.u32 %r11, %r11, 1;
    setp.lt.u32 %p1, %r11, 100;
    @%p1 bra $Lloop;
    mov.u64 %rd6, %clock64;
    mov.u64 %rd7, %globaltimer;
    mov.u32 %r12, %clock;
    st.global.v4.u32 [%rd3], {%r5, %r6, %r7, %r8};
    st.global.v2.u32 [%rd3+16], {%r9, %r10};
    st.global.u64 [%rd3+24], %rd5;
    st.global.u64 [%rd3+32], %rd6;
    st.global.u64 [%rd3+40], %rd7;
    ret;
}
"#;

struct Thread {
    nsmid: u32,
    smid: u32,
    warpid: u32,
    nwarpid: u32,
    laneid: u32,
    gridid: u32,
    clock_before: u64,
    clock_after: u64,
    globaltimer: u64,
}

fn launch(sim: &mut Simulator, m: ptx_sim::ModuleId, blocks: u32, threads: u32) -> Vec<Thread> {
    let n = (blocks * threads) as usize;
    let out = sim.alloc(n * 48).unwrap();
    sim.launch(m, "k", (blocks, 1, 1), (threads, 1, 1), 0, &[ParamValue::U64(out)]).unwrap();
    let mut b = vec![0u8; n * 48];
    sim.read(out, &mut b).unwrap();
    let w = |t: usize, i: usize| u32::from_le_bytes(b[t * 48 + i * 4..][..4].try_into().unwrap());
    let d = |t: usize, i: usize| w(t, i) as u64 | (w(t, i + 1) as u64) << 32;
    (0..n)
        .map(|t| Thread {
            nsmid: w(t, 0),
            smid: w(t, 1),
            warpid: w(t, 2),
            nwarpid: w(t, 3),
            laneid: w(t, 4),
            gridid: w(t, 5),
            clock_before: d(t, 6),
            clock_after: d(t, 8),
            globaltimer: d(t, 10),
        })
        .collect()
}

#[test]
fn a_kernel_sees_a_gpu_of_many_sms_with_its_blocks_spread_over_them() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(SPECIALS).unwrap();
    let (blocks, threads) = (2 * 132 + 5, 64);
    let t = launch(&mut sim, m, blocks, threads);
    for (i, th) in t.iter().enumerate() {
        let tid = (i % threads as usize) as u32;
        assert_eq!(th.nsmid, DEFAULT_GPU.multiprocessors, "an H100's or H200's SMs, not 1");
        assert!(th.smid < th.nsmid);
        assert_eq!((th.laneid, th.nwarpid), (tid % 32, 64), "thread {i}");
        // its slot on the SM: a group of four slots per block of 2 warps, after
        // those of the blocks of earlier waves resident there (as an H200 shows them)
        let group = (i / threads as usize / 132) as u32 * 4;
        assert!((group..group + 4).contains(&th.warpid), "thread {i}: %warpid {}", th.warpid);
    }
    for b in t.chunks(threads as usize) {
        assert_ne!(b[0].warpid, b[32].warpid, "the warps of a block hold distinct slots");
    }
    // the blocks of a wave are on distinct SMs, and not all on SM 0
    let sm_of = |b: usize| t[b * threads as usize].smid;
    for wave in 0..2 {
        let mut sms: Vec<u32> = (wave * 132..(wave + 1) * 132).map(sm_of).collect();
        sms.sort();
        sms.dedup();
        assert_eq!(sms.len(), 132, "wave {wave}");
    }
    // every thread of a block on the same SM
    assert!(t.chunks(threads as usize).all(|b| b.iter().all(|th| th.smid == b[0].smid)));
}

#[test]
fn clocks_count_cycles_and_nanoseconds_and_advance_with_the_work() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(SPECIALS).unwrap();
    let first = launch(&mut sim, m, 3, 64);
    for th in &first {
        assert!(th.clock_before > 1 << 32, "a device that has been up for a while: {}", th.clock_before);
        // 100 iterations of 3 instructions: hundreds of cycles, not 0 and not 1 a loop
        let spent = th.clock_after - th.clock_before;
        assert!((300..10_000).contains(&spent), "the loop took {spent} cycles");
        assert!(th.globaltimer > 1_600_000_000_000_000_000, "nanoseconds since 1970: {}", th.globaltimer);
        assert_eq!(th.globaltimer % 32, 0, "in the timer's steps");
    }
    // the warps of a block, and the blocks of one wave, run side by side: they start at the same time
    // (a few cycles apart, as a GPU's warps start)
    let close = |a: &Thread, b: &Thread| a.clock_before.abs_diff(b.clock_before) < 64;
    assert!(close(&first[0], &first[32]), "warps 0 and 1");
    assert!(close(&first[0], &first[64]), "blocks 0 and 1");
    let second = launch(&mut sim, m, 3, 64);
    assert_eq!(second[0].gridid, first[0].gridid + 1, "%gridid counts launches");
    assert!(second[0].clock_before > first[0].clock_after, "a later launch starts later");
    assert!(second[0].globaltimer > first[0].globaltimer);
    assert_ne!(first[0].gridid, 0);
}

#[test]
fn the_shown_sm_count_is_the_configurations() {
    let cfg = SimConfig { gpu: ShownGpu { multiprocessors: 78, ..DEFAULT_GPU }, ..SimConfig::default() };
    let mut sim = Simulator::new(cfg);
    let m = sim.load_module(SPECIALS).unwrap();
    let t = launch(&mut sim, m, 100, 32);
    assert!(t.iter().all(|th| th.nsmid == 78 && th.smid < 78));
    let mut sms: Vec<u32> = t.chunks(32).take(78).map(|b| b[0].smid).collect();
    sms.sort();
    sms.dedup();
    assert_eq!(sms.len(), 78);
}

#[test]
fn device_pointers_look_like_cuda_mallocs() {
    let mut sim = Simulator::new(SimConfig::default());
    let a = sim.alloc(1024).unwrap();
    assert!(a >> 40 == 0x7f, "{a:#x}: a 64-bit Linux process's device addresses start 0x7f..");
    assert_eq!(a % 256, 0);
}

/// Threads `%tid.x >= 40` return before the barrier (or, with `after`, after it).
fn returns_around_barrier(after: bool) -> String {
    let (before, later) = if after { ("", "@%p1 ret;\n") } else { ("@%p1 ret;\n", "") };
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         .shared .align 4 .b8 buf[256];\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, buf;\nshl.b32 %r3, %r1, 2;\n\
         add.u32 %r4, %r2, %r3;\nst.shared.u32 [%r4], %r1;\nsetp.ge.u32 %p1, %r1, 40;\n{before}\
         bar.sync 0;\n{later}xor.b32 %r5, %r3, 4;\nadd.u32 %r6, %r2, %r5;\nld.shared.u32 %r7, [%r6];\n\
         mul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r7;\nret;\n}}\n"
    )
}

#[test]
fn a_barrier_some_threads_exited_before_is_reported_with_both_lines() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&returns_around_barrier(false)).unwrap();
    let out = sim.alloc(64 * 4).unwrap();
    let rep = sim.launch(m, "k", (2, 1, 1), (64, 1, 1), 0, &[ParamValue::U64(out)]).unwrap();
    let b = rep.barrier_after_exit.expect("the barrier after 24 threads returned");
    assert_eq!((b.exited, b.threads, b.thread, b.block), (24, 64, (40, 0, 0), (0, 0, 0)), "{b:?}");
    let text = returns_around_barrier(false);
    let line = |needle: &str| text.lines().position(|l| l.starts_with(needle)).unwrap() + 1;
    assert_eq!(b.exit_ptx_line, line("@%p1 ret;"));
    assert_eq!(b.barrier_ptx_line, line("bar.sync 0;"));
    // the numbers are right all the same: the simulator, like a GPU, releases the barrier
    let mut got = vec![0u8; 40 * 4];
    sim.read(out, &mut got).unwrap();
    assert!(got.chunks(4).enumerate().all(|(t, w)| u32::from_le_bytes(w.try_into().unwrap()) == (t as u32 ^ 1)));
    assert!(rep.races.is_empty());
}

#[test]
fn threads_that_leave_after_the_last_barrier_are_no_finding() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&returns_around_barrier(true)).unwrap();
    let out = sim.alloc(64 * 4).unwrap();
    let rep = sim.launch(m, "k", (2, 1, 1), (64, 1, 1), 0, &[ParamValue::U64(out)]).unwrap();
    assert_eq!(rep.barrier_after_exit, None);
    // nor the lanes a partial last warp does not have
    let rep = sim.launch(m, "k", (1, 1, 1), (40, 1, 1), 0, &[ParamValue::U64(out)]).unwrap();
    assert_eq!(rep.barrier_after_exit, None);
}

/// A block with a 4-byte `__shared__` word and `dyn` bytes of dynamic shared
/// memory writes %total_smem_size, %aggr_smem_size and %dynamic_smem_size.
const SHARED_SIZES: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 out)
{
    .shared .align 4 .b8 word[4];
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %total_smem_size;
    mov.u32 %r2, %aggr_smem_size;
    mov.u32 %r3, %dynamic_smem_size;
    st.shared.u32 [word], %r1;
    st.global.v2.u32 [%rd1], {%r1, %r2};
    st.global.u32 [%rd1+8], %r3;
    ret;
}
"#;

#[test]
fn shared_memory_sizes_read_as_a_gpus_allocation_units_with_its_reserved_kib() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(SHARED_SIZES).unwrap();
    let sizes = |sim: &mut Simulator, dyn_bytes: u32| {
        let out = sim.alloc(12).unwrap();
        sim.launch(m, "k", (1, 1, 1), (32, 1, 1), dyn_bytes, &[ParamValue::U64(out)]).unwrap();
        let mut b = [0u8; 12];
        sim.read(out, &mut b).unwrap();
        let w = |i: usize| u32::from_le_bytes(b[i * 4..][..4].try_into().unwrap());
        (w(0), w(1), w(2))
    };
    // 4 bytes declared: one 128-byte unit, as a GPU shows it (a kernel that
    // found 4 here could tell the simulator from the GPU).
    assert_eq!(sizes(&mut sim, 0), (128, 128 + 1024, 0));
    // With 200 dynamic bytes after the word (at 16): 216 bytes, two units.
    assert_eq!(sizes(&mut sim, 200), (256, 256 + 1024, 200));
}

/// Thread t writes two laps of `%clock64` at `out + 16 * t`: one over 64
/// dependent multiply-adds in a row, one over 8 dependent global loads (the
/// chain of arithmetic then feeds the first load's address).
const LAPS: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 16;
    add.s64 %rd3, %rd1, %rd2;
    cvt.rn.f32.u32 %f1, %r1;
    mov.u64 %rd4, %clock64;
    FMAS
    mov.u64 %rd5, %clock64;
    sub.s64 %rd6, %rd5, %rd4;
    cvt.rzi.u32.f32 %r2, %f1;
    and.b32 %r3, %r2, 0;
    mul.wide.u32 %rd7, %r3, 8;
    add.s64 %rd8, %rd3, %rd7;
    mov.u64 %rd9, %clock64;
    LOADS
    mov.u64 %rd10, %clock64;
    sub.s64 %rd11, %rd10, %rd9;
    add.s64 %rd12, %rd11, %rd8;
    sub.s64 %rd12, %rd12, %rd8;
    st.global.u64 [%rd3], %rd6;
    st.global.u64 [%rd3+8], %rd12;
    ret;
}
"#;

#[test]
fn a_lap_of_arithmetic_reads_as_the_gpus_compiler_leaves_it_and_memory_counts() {
    let fmas = "fma.rn.f32 %f1, %f1, 0f3F800001, 0f3F800000;\n    ".repeat(64);
    // each load's address is the word the one before it read: the output, zeroed
    let loads = "ld.global.u64 %rd8, [%rd8];\n    add.s64 %rd8, %rd8, %rd3;\n    ".repeat(8);
    let ptx = LAPS.replace("FMAS", &fmas).replace("LOADS", &loads);
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&ptx).unwrap();
    let threads = 128;
    let out = sim.alloc(threads * 16).unwrap();
    sim.write(out, &vec![0u8; threads * 16]).unwrap();
    sim.launch(m, "k", (1, 1, 1), (threads as u32, 1, 1), 0, &[ParamValue::U64(out)]).unwrap();
    let mut b = vec![0u8; threads * 16];
    sim.read(out, &mut b).unwrap();
    let word = |i: usize| u64::from_le_bytes(b[i * 8..][..8].try_into().unwrap());
    for t in 0..threads {
        let (arithmetic, memory) = (word(2 * t), word(2 * t + 1));
        // An H200 read 10 or 11 cycles over 64 such multiply-adds, not the 128
        // their issue takes: a kernel that found the difference could tell.
        assert!(arithmetic < 16, "thread {t}: 64 multiply-adds read {arithmetic} cycles");
        assert!((8 * 250..8 * 300).contains(&memory), "thread {t}: 8 dependent global loads read {memory} cycles");
    }
}

/// A sample of a launch's blocks (`SimConfig::blocks`, a measurement's of a
/// grid too large to run whole) runs those blocks only, each where the whole
/// launch would place it: a block of a later wave holds the slots after the
/// resident blocks', as in the whole launch, and the blocks left out write
/// nothing.
#[test]
fn a_sample_of_blocks_runs_those_only_each_placed_as_in_the_whole_launch() {
    // none the first of its wave: a wave starts where a block of the next runs
    let sample: Vec<u64> = vec![3, 131, 140, 200, 263, 268];
    let cfg = SimConfig { blocks: Some(sample.clone().into()), ..SimConfig::default() };
    let mut sim = Simulator::new(cfg);
    let m = sim.load_module(SPECIALS).unwrap();
    let (blocks, threads) = (2 * 132 + 5, 64);
    let t = launch(&mut sim, m, blocks, threads);
    for (b, block) in t.chunks(threads as usize).enumerate() {
        if !sample.contains(&(b as u64)) {
            assert!(block.iter().all(|th| th.nsmid == 0 && th.clock_before == 0), "block {b} left out ran");
            continue;
        }
        let group = (b / 132) as u32 * 4;
        for th in block {
            assert_eq!(th.nsmid, DEFAULT_GPU.multiprocessors, "block {b}");
            assert!((group..group + 4).contains(&th.warpid), "block {b}: %warpid {}", th.warpid);
        }
    }
    // the sampled blocks of the second wave start after the first wave's end
    let start = |b: usize| t[b * threads as usize].clock_before;
    assert!(start(140) > t[131 * threads as usize].clock_after, "a later wave starts after the last");
    assert!(start(140).abs_diff(start(200)) < 64, "blocks of one wave start together");
    assert!(start(268) > t[263 * threads as usize].clock_after);
}
