//! The grader's own comparison kernel: after a correctness launch on a GPU,
//! every input is compared with the copy made at upload on the device, so
//! that a kernel that writes into its input is caught without reading
//! hundreds of MB back to the host (`crate::gpu`, `Backend::first_difference`).
//!
//! Hand-written PTX, so that it loads without a compiler, on any driver from
//! CUDA 11 on (PTX ISA 7.0) and any GPU from sm_75 on; where it does not load
//! (an older GPU), the host compares instead (`cuda.rs`). Each thread walks the 32-bit words
//! with a grid stride and, at its first difference, lowers the result (which
//! starts at `u64::MAX`) to that word's index with one `atom.min`: at most one
//! atomic per thread, whatever the kernel wrote.

/// The kernel's name in [`PTX`].
pub const KERNEL: &str = "cuda_lab_first_difference";

/// `cuda_lab_first_difference(const u32 *a, const u32 *b, u64 words, u64 *first)`.
pub const PTX: &str = concat!(
    hand_written_entry!(
        "cuda_lab_first_difference",
        "\t.reg .pred %p<3>;\n\t.reg .b32 %r<7>;\n\t.reg .b64 %rd<13>;",
        "p_a",
        "p_b",
        "p_words",
        "p_first"
    ),
    r#"	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	cvta.to.global.u64 %rd4, %rd4;
	mov.u32 %r4, %nctaid.x;
	mul.wide.u32 %rd8, %r4, %r2;
next_word:
	setp.ge.u64 %p1, %rd7, %rd3;
	@%p1 bra done;
	shl.b64 %rd9, %rd7, 2;
	add.s64 %rd10, %rd1, %rd9;
	add.s64 %rd11, %rd2, %rd9;
	ld.global.u32 %r5, [%rd10];
	ld.global.u32 %r6, [%rd11];
	setp.ne.u32 %p2, %r5, %r6;
	@%p2 bra differs;
	add.s64 %rd7, %rd7, %rd8;
	bra.uni next_word;
differs:
	atom.global.min.u64 %rd12, [%rd4], %rd7;
done:
	ret;
}
"#
);

/// Threads per block, and blocks per multiprocessor at most (the grid strides).
pub const THREADS: u32 = 256;
pub const BLOCKS_PER_SM: u32 = 16;

/// The grid for `words` words on a GPU of `multiprocessors` SMs.
pub fn blocks(words: usize, multiprocessors: u32) -> u32 {
    (words.div_ceil(THREADS as usize)).clamp(1, (multiprocessors.max(1) * BLOCKS_PER_SM) as usize) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::SimBackend;
    use crate::backend::{Arg, Backend, LaunchConfig};

    /// The kernel itself, run on the simulator: the first differing word of
    /// many (and none), whichever thread meets which first.
    #[test]
    fn the_comparison_kernel_finds_the_first_differing_word() {
        let sim = SimBackend::new();
        let module = sim.load_module(PTX).expect("the PTX loads");
        let words = 3000usize;
        let data: Vec<u8> = (0..words * 4).map(|i| (i * 7 % 251) as u8).collect();
        let (a, b, first) = (sim.alloc(words * 4).unwrap(), sim.alloc(words * 4).unwrap(), sim.alloc(8).unwrap());
        sim.write(a, &data).unwrap();
        for changed in [None, Some(vec![2999]), Some(vec![1234, 17, 2500]), Some(vec![0])] {
            let mut other = data.clone();
            for &w in changed.iter().flatten() {
                other[w * 4 + 1] ^= 0x10;
            }
            sim.write(b, &other).unwrap();
            sim.fill(first, 0xFF, 8).unwrap();
            let cfg = LaunchConfig::linear(blocks(words, 1).min(4), THREADS);
            let args = [Arg::Ptr(a), Arg::Ptr(b), Arg::U64(words as u64), Arg::Ptr(first)];
            sim.launch(module, KERNEL, &cfg, &args).unwrap();
            let mut out = [0u8; 8];
            sim.read(first, &mut out).unwrap();
            let found = u64::from_le_bytes(out);
            let expected = changed.as_ref().and_then(|c| c.iter().min().copied());
            assert_eq!((found != u64::MAX).then_some(found as usize), expected, "{changed:?}");
        }
    }

    #[test]
    fn the_grid_is_capped_by_the_multiprocessors() {
        assert_eq!(blocks(1, 132), 1);
        assert_eq!(blocks(256 * 5 + 1, 132), 6);
        assert_eq!(blocks(1 << 30, 132), 132 * BLOCKS_PER_SM);
    }
}
