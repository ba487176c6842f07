//! `Module::set_constant`, as `cudaMemcpyToSymbol`: the same on the simulator
//! and on a GPU (whose half runs where there is one, and passes vacuously
//! elsewhere): a mask smaller than its `__constant__` array is written from the
//! first element, and a missing symbol or an array too small is named.

use std::time::Duration;

use kit::backend::BackendError;
use kit::{Gpu, LaunchConfig};

fn typed(e: anyhow::Error) -> BackendError {
    e.chain().find_map(|c| c.downcast_ref::<BackendError>()).cloned().unwrap_or_else(|| panic!("{e:#}"))
}

/// The simulator, and the first GPU where there is one.
fn backends() -> Vec<Gpu> {
    let mut all = vec![Gpu::simulator()];
    match Gpu::cuda(Duration::from_secs(20)) {
        Ok(gpu) => all.push(gpu),
        Err(e) => eprintln!("no GPU, the simulator only: {e}"),
    }
    all
}

/// `read_mask(out)`: thread t copies `mask[t]` (a `__constant__ float mask[49]`,
/// a 7 x 7 convolution mask) to out[t]; `scale` is a constant scalar.
const MASK: &str = "
.version 8.0
.target sm_90
.address_size 64
.const .align 4 .b8 mask[196];
.const .align 4 .f32 scale;
.visible .entry read_mask(.param .u64 p_out)
{
	.reg .b32 %r<2>;
	.reg .f32 %f<4>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [p_out];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd2, %r1, 4;
	mov.u64 %rd3, mask;
	add.s64 %rd4, %rd3, %rd2;
	ld.const.f32 %f1, [%rd4];
	ld.const.f32 %f2, [scale];
	mul.f32 %f3, %f1, %f2;
	add.s64 %rd5, %rd1, %rd2;
	st.global.f32 [%rd5], %f3;
	ret;
}
";

#[test]
fn set_constant_writes_a_mask_smaller_than_its_array() {
    for gpu in backends() {
        a_mask_smaller_than_its_array(&gpu);
    }
}

fn a_mask_smaller_than_its_array(gpu: &Gpu) {
    let backend = gpu.info().backend.clone();
    let m = gpu.load(MASK).unwrap();
    let out = gpu.poisoned::<f32>("out", 49).unwrap();
    let cfg = LaunchConfig::linear(1, 49);
    m.set_constant("scale", &[1.0f32]).unwrap();
    // r = 2: a 5 x 5 mask in the 49-float array; the rest stays zero.
    let five: Vec<f32> = (1..=25).map(|v| v as f32).collect();
    m.set_constant("mask", &five).unwrap();
    m.launch("read_mask", cfg, &kit::args![&out]).unwrap();
    let got = out.read().unwrap();
    assert_eq!(&got[..25], &five[..]);
    assert!(got[25..].iter().all(|&v| v == 0.0), "{backend}: {got:?}");
    // The whole array, then a 3 x 3 mask over it: only its 9 floats change.
    let seven: Vec<f32> = (0..49).map(|v| -(v as f32)).collect();
    m.set_constant("mask", &seven).unwrap();
    m.set_constant("mask", &[9.0f32; 9]).unwrap();
    m.set_constant("scale", &[2.0f32]).unwrap();
    m.launch("read_mask", cfg, &kit::args![&out]).unwrap();
    let got = out.read().unwrap();
    assert!(got[..9].iter().all(|&v| v == 18.0), "{backend}: {got:?}");
    assert_eq!(got[9..], seven[9..].iter().map(|v| v * 2.0).collect::<Vec<_>>()[..], "{backend}");
}

#[test]
fn set_constant_names_a_missing_symbol_and_an_array_too_small() {
    for gpu in backends() {
        a_missing_symbol_and_an_array_too_small(&gpu);
    }
}

fn a_missing_symbol_and_an_array_too_small(gpu: &Gpu) {
    let m = gpu.load(MASK).unwrap();
    let e = m.set_constant("filter", &[1.0f32; 9]).unwrap_err();
    let text = format!("{e:#}");
    assert!(matches!(typed(e), BackendError::MissingSymbol(s) if s == "filter"), "typed: missing-kernel");
    assert!(
        text.contains("`__constant__ filter`") && text.contains("no `__constant__` or `__device__` variable"),
        "{text}"
    );
    let e = m.set_constant("mask", &[1.0f32; 50]).unwrap_err();
    let text = format!("{e:#}");
    assert!(
        text.contains("writing 50 value(s) (200 bytes) into `__constant__ mask`")
            && text.contains("`mask` holds 196 bytes, fewer than the 200 bytes given"),
        "{text}"
    );
    assert!(m.set_constant("scale", &[1.0f64]).is_err(), "8 bytes into a 4-byte scalar");
}
