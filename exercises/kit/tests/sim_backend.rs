//! The simulator backend as exercise code meets it, through a [`kit::Gpu`]:
//! out-of-bounds reads found as they happen, and PTX it cannot run named.
//! Here rather than in `backend/sim.rs`, so that the backend's module does not
//! use `kit::gpu`, which uses it (a cycle between the two modules' tests).

use kit::backend::BackendError;
use kit::{Gpu, LaunchConfig};

/// `copy(out, in, k)`: thread t copies in[t + k] to out[t] (one block of 4).
const COPY: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry copy(.param .u64 p_out, .param .u64 p_in, .param .u32 p_k)
{
	.reg .b32 %r<5>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [p_out];
	ld.param.u64 %rd2, [p_in];
	ld.param.u32 %r1, [p_k];
	mov.u32 %r2, %tid.x;
	add.s32 %r3, %r2, %r1;
	mul.wide.s32 %rd3, %r3, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.u32 %r4, [%rd4];
	mul.wide.u32 %rd5, %r2, 4;
	add.s64 %rd6, %rd1, %rd5;
	st.global.u32 [%rd6], %r4;
	ret;
}
.visible .entry half_add(.param .u64 p_out)
{
	.reg .b16 %rs<4>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [p_out];
	mov.b16 %rs1, 0x3c00;
	mov.b16 %rs2, 0x4000;
	add.f16 %rs3, %rs1, %rs2;
	st.global.b16 [%rd1], %rs3;
	ret;
}
.visible .entry texture_free(.param .u64 p_out)
{
	.reg .b32 %r<3>;
	mov.u32 %r1, 1;
	vadd.s32.s32.s32.sat %r2, %r1, %r1, %r1;
	ret;
}
";

fn typed(e: anyhow::Error) -> BackendError {
    e.chain().find_map(|c| c.downcast_ref::<BackendError>()).cloned().unwrap_or_else(|| panic!("{e:#}"))
}

#[test]
fn guard_zones_make_out_of_bounds_reads_a_finding() {
    let gpu = Gpu::simulator();
    let m = gpu.load(COPY.split(".visible .entry texture_free").next().unwrap()).unwrap();
    let input = gpu.upload("in", &[1u32, 2, 3, 4]).unwrap();
    let out = gpu.zeros::<u32>("out", 4).unwrap();
    let cfg = LaunchConfig::linear(1, 4);
    m.launch("copy", cfg, &kit::args![&out, &input, 0u32]).unwrap();
    assert_eq!(out.read().unwrap(), vec![1, 2, 3, 4]);
    match typed(m.launch("copy", cfg, &kit::args![&out, &input, 1u32]).unwrap_err()) {
        BackendError::OutOfBoundsRead(msg) => {
            assert!(
                msg.contains("thread (3, 0, 0)") && msg.contains("reads 4 bytes just past the end of the buffer `in`"),
                "{msg}"
            );
            assert!(msg.contains("if (i < n)"), "says what to change: {msg}");
        }
        e => panic!("{e}"),
    }
    match typed(m.launch("copy", cfg, &kit::args![&out, &input, (-2i32) as u32]).unwrap_err()) {
        BackendError::OutOfBoundsRead(msg) => {
            assert!(msg.contains("reads 4 bytes 8 bytes before the start of"), "{msg}")
        }
        e => panic!("{e}"),
    }
    // A buffer with rows: the index is named by row and column, and the hint is the 2-D bounds test.
    let image = gpu.upload("in", &[1u32, 2, 3, 4]).unwrap().with_2d_shape(2, 2).unwrap();
    match typed(m.launch("copy", cfg, &kit::args![&out, &image, 1u32]).unwrap_err()) {
        BackendError::OutOfBoundsRead(msg) => {
            assert!(msg.contains("`in[4]` stands for row 2, column 0 of `in` (2 columns by 2 rows)"), "{msg}");
            assert!(msg.contains("row 1, column 2, right of its last column"), "{msg}");
            assert!(msg.contains("x < width && y >= 0 && y < height") && !msg.contains("i < n"), "{msg}");
        }
        e => panic!("{e}"),
    }
    // A 2-D launch without rows: the 2-D hint, no row and column.
    let grid = LaunchConfig::grid2d((1, 1), (4, 1));
    let tall = LaunchConfig::grid2d((1, 2), (4, 1));
    m.launch("copy", grid, &kit::args![&out, &input, 0u32]).unwrap();
    match typed(m.launch("copy", tall, &kit::args![&out, &input, 1u32]).unwrap_err()) {
        BackendError::OutOfBoundsRead(msg) => {
            assert!(msg.contains("x < width") && !msg.contains("stands for"), "{msg}");
        }
        e => panic!("{e}"),
    }
    assert!(image.with_2d_shape(3, 2).is_err(), "a shape must fit the buffer");
    // the host still reads and writes the zones: the guard check after a launch stays quiet
    gpu.finish().unwrap();
}

#[test]
fn half_precision_runs_and_the_unsimulated_is_named() {
    let gpu = Gpu::simulator();
    let m = gpu.load(COPY);
    match m.map(|_| ()).map_err(typed) {
        Err(BackendError::NotSimulated(what)) => assert!(what.contains("vadd.s32"), "{what}"),
        r => panic!("expected NotSimulated, got {r:?}"),
    }
    let with_lines = COPY
        .replace("vadd.s32", ".loc 1 7 3\n\tvadd.s32")
        .replace(".address_size 64", ".address_size 64\n.file 1 \"kernels/free.cu\"");
    match gpu.load(&with_lines).map(|_| ()).map_err(typed) {
        Err(BackendError::NotSimulated(what)) => assert!(what.contains("(kernels/free.cu:7, PTX line"), "{what}"),
        r => panic!("expected NotSimulated, got {r:?}"),
    }
    let unreadable = COPY.replace("vadd.s32.s32.s32.sat %r2, %r1, %r1, %r1;", "mov.u32 %r2, NO_SUCH_NAME;");
    match gpu.load(&unreadable).map(|_| ()).map_err(typed) {
        Err(BackendError::NotSimulated(what)) => assert!(what.contains("NO_SUCH_NAME"), "{what}"),
        r => panic!("PTX the simulator cannot read is not simulated, not a failure: {r:?}"),
    }
    let ok = COPY.split(".visible .entry texture_free").next().unwrap();
    let m = gpu.load(ok).unwrap();
    let out = gpu.zeros::<u16>("out", 1).unwrap();
    m.launch("half_add", LaunchConfig::linear(1, 1), &kit::args![&out]).unwrap();
    assert_eq!(out.read().unwrap(), vec![0x4200], "1 + 2 = 3 in f16");
}
