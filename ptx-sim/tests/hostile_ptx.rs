//! Hostile PTX never panics the simulator (docs/hostile.md). Students control
//! the PTX ptx-sim reads: an inline `asm` block goes into it verbatim. These
//! tests replay the fuzz corpora and the crashes fuzzing found
//! (fuzz/corpus/, fuzz/regressions/), and run property tests that mutate real
//! NVRTC output and fill its inline asm blocks with anything.
//!
//! Case counts: `PROPTEST_CASES` (CI's fuzz smoke step raises it).

mod support;

use proptest::prelude::*;
use support::hostile;

/// The PTX seeds (`.ptx-seed`, so that `*.ptx` build outputs stay ignored): NVRTC's output for the references, the simulator's test
/// kernels and the inline asm seeds (scripts/fuzz/seed-ptx.py).
fn seeds() -> Vec<Vec<u8>> {
    let seeds: Vec<Vec<u8>> = ptx_build::fuzzing::fuzz_files("corpus/ptx_load")
        .into_iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "ptx-seed"))
        .map(|(_, b)| b)
        .collect();
    assert!(seeds.len() >= 20, "the PTX seed corpus is missing ({} files)", seeds.len());
    seeds
}

#[test]
fn the_corpora_and_every_crash_found_so_far_run_without_panic() {
    let mut n = 0;
    for dir in ["corpus/ptx_load", "corpus/ptx_exec", "regressions/ptx"] {
        for (path, bytes) in ptx_build::fuzzing::fuzz_files(dir) {
            let run = std::panic::catch_unwind(|| {
                hostile::load(&bytes);
                hostile::load_and_run(&bytes);
            });
            assert!(run.is_ok(), "{} panics the simulator", path.display());
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} inputs replayed");
}

/// Declarations a hostile asm block can make: each used to take memory or
/// time in proportion to a number in the text (found by fuzzing; the inputs
/// are in fuzz/regressions/ptx). Now each is refused, quickly.
#[test]
fn huge_declarations_are_refused_not_allocated() {
    let kernel = |decl: &str| {
        format!(
            ".version 7.5\n.target sm_75\n.address_size 64\n{decl}\n.visible .entry k(.param .u64 p)\n{{\nret;\n}}\n"
        )
    };
    let body = |decl: &str| {
        format!(
            ".version 7.5\n.target sm_75\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n{decl}\nret;\n}}\n"
        )
    };
    let cases = [
        (body(".reg .pred %p<7555555>;"), "registers"),
        (body(&".reg .b32 %r<16000>;\n".repeat(40)), "registers"),
        (body(".reg .b32 %r<-5>;"), "registers"),
        (body(".local .align 4 .b8 l[1073741824];"), "local memory"),
        (body(".shared .align 4 .b8 s[4294967295];\n.shared .align 4 .b8 t[4294967295];"), ""),
        (kernel(".global .align 4 .b8 g[18446744073709551615][4];"), "module variable"),
        (kernel(".global .align 4 .u32 g[100000000];"), "module variable"),
    ];
    for (ptx, why) in &cases {
        let start = std::time::Instant::now();
        let mut sim = ptx_sim::Simulator::new(ptx_sim::SimConfig::default());
        let loaded = sim.load_module(ptx);
        assert!(start.elapsed().as_secs() < 5, "took {:?}: {ptx}", start.elapsed());
        match loaded {
            Err(e) => assert!(e.to_string().contains(why), "{e} should say {why}"),
            // Shared memory is refused at launch, where the limit is known.
            Ok(m) => {
                let buf = sim.alloc(64).unwrap();
                let e = sim.launch(m, "k", (1, 1, 1), (32, 1, 1), 0, &[ptx_sim::ParamValue::U64(buf)]).unwrap_err();
                assert!(matches!(e, ptx_sim::SimError::SharedMemoryTooLarge { .. }), "{e}");
            }
        }
    }
}

/// Pieces of PTX a mutation splices in: directives, instructions, operands
/// and the odd tokens a hand-written asm block may hold.
const TOKENS: &[&str] = &[
    ".reg .b32 %r<9999999>;",
    ".reg .pred %p<3>;",
    ".shared .align 4 .b8 s[4294967295];",
    ".local .b8 l[65536];",
    ".global .u32 g[1073741824];",
    ".const .f32 c[2] = {1.0, 2.0};",
    "bra $L__BB0_1;",
    "$L__BB0_1:",
    "ret;",
    "exit;",
    "trap;",
    "bar.sync 0;",
    "bar.sync 4294967295;",
    "@%p1 bra $L__BB0_1;",
    "mov.u32 %r1, %tid.x;",
    "ld.global.u32 %r1, [%rd1+-4];",
    "st.shared.u32 [%r1], %r1;",
    "st.global.u64 [%rd1+4096], %rd1;",
    "atom.global.add.u32 %r1, [%rd1], 1;",
    "shfl.sync.bfly.b32 %r1, %r1, 16, 31, -1;",
    "vote.sync.ballot.b32 %r1, %p1, -1;",
    "div.s32 %r1, %r1, 0;",
    "rem.s32 %r1, -2147483648, -1;",
    "shl.b32 %r1, %r1, 4294967295;",
    "cvt.rzi.s32.f32 %r1, %f1;",
    "{",
    "}",
    "(",
    ")",
    ";",
    ",",
    "[",
    "]",
    "%",
    "%r",
    "%r4294967296",
    "0x",
    "0xffffffffffffffffffff",
    "-0",
    "0f7FC00000",
    "0d",
    "1e999",
    ".entry",
    ".visible .entry k(",
    ".param .u64 p",
    ".func f()",
    "call f, ();",
    ".loc 1 999999999 0",
    ".file 1 \"x.cu\"",
    "//",
    "/*",
    "*/",
    "\"",
    "\n",
    "\t",
    " ",
    "\u{0}",
    "\u{feff}",
    "é",
    "\\",
];

fn splice(mut ptx: Vec<u8>, edits: &[(usize, usize, u8)]) -> Vec<u8> {
    for &(at, token, op) in edits {
        let at = at % (ptx.len() + 1);
        let tok = TOKENS[token % TOKENS.len()].as_bytes();
        match op % 4 {
            0 | 1 => drop(ptx.splice(at..at, tok.iter().copied())),
            2 => drop(ptx.drain(at..(at + tok.len()).min(ptx.len()))),
            _ => {
                // Repeat a line: loops, labels and declarations twice.
                let start = ptx[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                let end = ptx[at..].iter().position(|&b| b == b'\n').map_or(ptx.len(), |i| at + i + 1);
                let line = ptx[start..end].to_vec();
                ptx.splice(start..start, line);
            }
        }
    }
    ptx
}

/// Replaces the body of the `n`-th inline asm block (NVRTC marks each with
/// `// begin inline asm` / `// end inline asm`) with `body`.
fn replace_asm(ptx: &str, n: usize, body: &str) -> Option<String> {
    let begins: Vec<usize> = ptx.match_indices("// begin inline asm\n").map(|(i, m)| i + m.len()).collect();
    let start = *begins.get(n % begins.len().max(1))?;
    let end = start + ptx[start..].find("\t// end inline asm")?;
    Some(format!("{}{body}\n{}", &ptx[..start], &ptx[end..]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48)
    ))]

    #[test]
    fn mutated_nvrtc_ptx_never_panics(seed in any::<prop::sample::Index>(),
                                      edits in prop::collection::vec((any::<usize>(), any::<usize>(), any::<u8>()), 1..6),
                                      shape in any::<[u8; 3]>()) {
        let seeds = seeds();
        let mut ptx = splice(seed.get(&seeds).clone(), &edits);
        ptx.extend_from_slice(&shape);
        hostile::load_and_run(&ptx);
    }

    #[test]
    fn inline_asm_of_any_content_never_panics(n in 0usize..16,
                                              body in prop::collection::vec((any::<prop::sample::Index>(), "\\PC{0,12}"), 0..8)) {
        let seeds = seeds();
        let with_asm: Vec<String> = seeds.iter().map(|s| String::from_utf8_lossy(s).into_owned())
            .filter(|s| s.contains("// begin inline asm")).collect();
        prop_assert!(!with_asm.is_empty());
        let text: String = body.iter().map(|(i, free)| format!("{} {free}", i.get(TOKENS))).collect();
        let ptx = replace_asm(&with_asm[n % with_asm.len()], n, &text).unwrap();
        hostile::load_and_run(ptx.as_bytes());
    }
}
