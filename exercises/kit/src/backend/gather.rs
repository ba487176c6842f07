//! The grader's gather kernel: the 32-bit words at a list of indices of a
//! buffer, copied into one small buffer, so that a sample of a timed output
//! of hundreds of MB (checked after every timed launch, `kit::timed`) costs
//! one launch and one read instead of a read per element (256 reads took
//! about 3 ms a launch on the H100, more than many timed kernels).
//!
//! Hand-written PTX, like [`super::compare`]; where it does not load, each
//! word is read alone (`Backend::gather_words`'s default).

/// The kernel's name in [`PTX`].
pub const KERNEL: &str = "cuda_lab_gather";

/// Threads per block.
pub const THREADS: u32 = 256;

/// `cuda_lab_gather(const u32 *src, const u64 *indices, u32 *out, u64 count)`:
/// `out[k] = src[indices[k]]`.
pub const PTX: &str = concat!(
    hand_written_entry!(
        "cuda_lab_gather",
        "\t.reg .pred %p<2>;\n\t.reg .b32 %r<5>;\n\t.reg .b64 %rd<14>;",
        "p_src",
        "p_indices",
        "p_out",
        "p_count"
    ),
    r#"	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	cvta.to.global.u64 %rd3, %rd3;
	setp.ge.u64 %p1, %rd7, %rd4;
	@%p1 bra done;
	shl.b64 %rd8, %rd7, 3;
	add.s64 %rd9, %rd2, %rd8;
	ld.global.u64 %rd10, [%rd9];
	shl.b64 %rd11, %rd10, 2;
	add.s64 %rd12, %rd1, %rd11;
	ld.global.u32 %r4, [%rd12];
	shl.b64 %rd13, %rd7, 2;
	add.s64 %rd13, %rd3, %rd13;
	st.global.u32 [%rd13], %r4;
done:
	ret;
}
"#
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sim::SimBackend;
    use crate::backend::{Arg, Backend, LaunchConfig};

    /// The kernel itself, run on the simulator.
    #[test]
    fn the_gather_kernel_copies_the_words_at_the_indices() {
        let sim = SimBackend::new();
        let module = sim.load_module(PTX).expect("the PTX loads");
        let words: Vec<u32> = (0..1000u32).map(|i| i * 3 + 7).collect();
        let indices: Vec<u64> = vec![999, 0, 500, 500, 17];
        let src = sim.alloc(4000).unwrap();
        let idx = sim.alloc(indices.len() * 8).unwrap();
        let out = sim.alloc(indices.len() * 4).unwrap();
        sim.write(src, bytemuck::cast_slice(&words)).unwrap();
        sim.write(idx, bytemuck::cast_slice(&indices)).unwrap();
        let args = [Arg::Ptr(src), Arg::Ptr(idx), Arg::Ptr(out), Arg::U64(indices.len() as u64)];
        sim.launch(module, KERNEL, &LaunchConfig::linear(1, THREADS), &args).unwrap();
        let mut got = vec![0u32; indices.len()];
        sim.read(out, bytemuck::cast_slice_mut(&mut got)).unwrap();
        assert_eq!(got, indices.iter().map(|&i| words[i as usize]).collect::<Vec<_>>());
    }
}
