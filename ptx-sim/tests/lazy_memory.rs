//! Lazily filled global memory (`Simulator::fill_lazily`): a kernel and the
//! host read what the filler gives, whether or not the bytes were touched
//! before, only the chunks touched are filled, and a write keeps the rest of
//! its chunk as generated.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ptx_sim::{Filler, ParamValue, SimConfig, Simulator, LAZY_CHUNK};

/// `out[t] = in[t * stride] + 1`; thread 0 also stores 7 into `in[1]`.
const GATHER: &str = r#"
.version 7.0
.target sm_75
.address_size 64

.visible .entry gather(.param .u64 out, .param .u64 in, .param .u32 stride)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    ld.param.u32 %r1, [stride];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r2, %tid.x;
    mul.lo.u32 %r3, %r2, %r1;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r4, [%rd4];
    add.s32 %r4, %r4, 1;
    mul.wide.u32 %rd5, %r2, 4;
    add.s64 %rd6, %rd1, %rd5;
    st.global.u32 [%rd6], %r4;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    mov.u32 %r5, 7;
    st.global.u32 [%rd2+4], %r5;
DONE:
    ret;
}
"#;

/// Word `i` of the generated input.
fn word(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

fn words(offset: usize, out: &mut [u8]) {
    assert_eq!(offset % 4, 0, "chunks start on words");
    for (j, w) in out.chunks_exact_mut(4).enumerate() {
        w.copy_from_slice(&word(offset / 4 + j).to_le_bytes());
    }
}

#[test]
fn a_lazily_filled_input_reads_as_generated_and_fills_only_what_is_touched() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(GATHER).unwrap_or_else(|e| panic!("{e}"));
    let (n_words, threads, stride) = (16 << 20, 32u32, 1 << 16);
    // a guard before the filled range, written by the host, stays as written
    let base = sim.alloc(64 + n_words * 4).unwrap();
    sim.write(base, &[0xAB; 64]).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let fill: Filler = Arc::new(move |off, out: &mut [u8]| {
        counted.fetch_add(1, Ordering::Relaxed);
        words(off, out)
    });
    let input = base + 64;
    sim.fill_lazily(input, n_words * 4, fill).unwrap();
    assert!(sim.fill_lazily(input, 4, Arc::new(words)).is_err(), "one lazily filled range per allocation");

    // the host reads an untouched range as generated, and keeps nothing of it (reads take `&self`)
    let mut got = vec![0u8; 12];
    sim.read(input + 4000, &mut got).unwrap();
    assert_eq!(got, [word(1000), word(1001), word(1002)].map(u32::to_le_bytes).concat());
    assert_eq!(calls.swap(0, Ordering::Relaxed), 1);
    let mut guard = [0u8; 64];
    sim.read(base, &mut guard).unwrap();
    assert_eq!(guard, [0xAB; 64]);

    let out = sim.alloc(threads as usize * 4).unwrap();
    let args = [ParamValue::U64(out), ParamValue::U64(input), ParamValue::U32(stride as u32)];
    sim.launch(m, "gather", (1, 1, 1), (threads, 1, 1), 0, &args).unwrap();
    let mut res = vec![0u8; threads as usize * 4];
    sim.read(out, &mut res).unwrap();
    for t in 0..threads as usize {
        let v = u32::from_le_bytes(res[t * 4..t * 4 + 4].try_into().unwrap());
        assert_eq!(v, word(t * stride).wrapping_add(1), "thread {t}");
    }
    // 32 words 256 KiB apart: 32 chunks of the range's 64 Ki, the store into chunk 0 among them
    assert_eq!(calls.load(Ordering::Relaxed), threads as usize);
    let touched = sim.touched(input, n_words * 4).unwrap().expect("a lazily filled range");
    let starts: Vec<usize> = (0..threads as usize).map(|t| t * stride * 4).collect();
    assert_eq!(touched.iter().map(|r| r.start).collect::<Vec<_>>(), starts);
    assert!(touched.iter().all(|r| r.len() == LAZY_CHUNK), "{touched:?}");
    assert_eq!(sim.touched(input + 8, 2 * LAZY_CHUNK).unwrap().unwrap(), vec![0..LAZY_CHUNK - 8]);
    assert_eq!(sim.touched(out, 4).unwrap(), None, "not lazily filled");

    // the kernel's store and the host's partial write keep the rest of their chunks as generated
    sim.write(input + 4 * (LAZY_CHUNK as u64) + 8, &9u32.to_le_bytes()).unwrap();
    let mut head = vec![0u8; 12];
    sim.read(input, &mut head).unwrap();
    assert_eq!(head, [word(0), 7, word(2)].map(u32::to_le_bytes).concat());
    let mut mid = vec![0u8; 12];
    sim.read(input + 4 * LAZY_CHUNK as u64 + 4, &mut mid).unwrap();
    let at = LAZY_CHUNK + 1;
    assert_eq!(mid, [word(at), 9, word(at + 2)].map(u32::to_le_bytes).concat());
    assert_eq!(calls.load(Ordering::Relaxed), threads as usize + 1);

    // byte for byte, the kernel's accesses alone: thread 0's word and its store beside it, each
    // other thread's word; not the host's reads or its write
    let by_kernels = sim.touched_by_kernels(input, n_words * 4).unwrap().expect("a lazily filled range");
    let mut words_read: Vec<std::ops::Range<usize>> =
        (1..threads as usize).map(|t| t * stride * 4..t * stride * 4 + 4).collect();
    words_read.insert(0, 0..8);
    assert_eq!(by_kernels, words_read);
    assert_eq!(sim.touched_by_kernels(input + 2, 4).unwrap().unwrap(), vec![0..4]);
    assert_eq!(sim.touched_by_kernels(out, 4).unwrap(), None, "not lazily filled");
}
