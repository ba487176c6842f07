//! ex12's memory lesson judged by what the kernel does to memory
//! (kit::measure): it runs on a small fixed input on a private simulator, and
//! the check reads the 32-byte sectors per warp-level global request. A warp
//! reading 32 consecutive floats touches 4; a thread walking its own chunk
//! makes every warp touch 32. Deterministic: the same on every backend.

use anyhow::{bail, Result};
use kit::measure::{worst_at, AccessKind, Measurement};
use kit::{args, Ctx};

use crate::{cpu, launch_config, KERNEL};

/// Elements of the measured input: 16 blocks.
pub const MEASURE_N: usize = 4096;
/// Sectors per request a coalesced kernel stays at or under (ideal 4,
/// a chunk per thread 32). See CALIBRATION.md.
pub const MAX_SECTORS_PER_REQUEST: f64 = 8.0;

pub fn measure(ctx: &Ctx) -> Result<Measurement> {
    ctx.measure(KERNEL, |module| {
        let gpu = module.gpu();
        let values = kit::inputs::uniform_f32(&mut kit::inputs::rng_for(0, "measure"), MEASURE_N, -1.0, 1.0);
        let input = gpu.upload("in", &values)?;
        let out = gpu.poisoned::<f32>("out", MEASURE_N)?;
        module.launch(KERNEL, launch_config(MEASURE_N), &args![&input, &out, MEASURE_N as i32])?;
        kit::measure::require_right_result(kit::check::close("out", &cpu(&values), &out.read()?, 0.0, 0.0))
    })
}

/// Stand-in for `perf::share-of-copy`: loads and stores coalesced, as the copy's are.
pub fn coalesced(ctx: &Ctx) -> Result<String> {
    let m = measure(ctx)?;
    for (kind, what, sectors) in [
        (AccessKind::GlobalLoad, "loads", m.load_sectors_per_request()),
        (AccessKind::GlobalStore, "stores", m.store_sectors_per_request()),
    ] {
        if sectors > MAX_SECTORS_PER_REQUEST {
            bail!(
                "{KERNEL}: {what}: {sectors:.1} sectors per request (ideal 4, at most {MAX_SECTORS_PER_REQUEST}){}: \
                 the 32 threads of a warp touch addresses far apart. Let consecutive threads handle consecutive \
                 elements: i = blockIdx.x * blockDim.x + threadIdx.x",
                worst_at(m.worst_global(kind))
            );
        }
    }
    Ok(format!(
        "global sectors per request: loads {:.1}, stores {:.1} (ideal 4)",
        m.load_sectors_per_request(),
        m.store_sectors_per_request()
    ))
}

#[cfg(test)]
mod tests {
    use kit::trial::{fails, passes, Run};

    /// The yardstick is only timed on a GPU; here it must compile, copy, and
    /// be the ideal the kernel is held to: 4 sectors per request.
    #[test]
    fn the_yardstick_copies_and_is_coalesced() {
        let Some(compiler) = kit::trial::compiler() else { return };
        let source =
            ptx_build::SourceFile::from_text("<grader>/copy_linear.cu", include_str!("../yardsticks/copy_linear.cu"));
        let ptx = compiler.compile(&source, &ptx_build::CompileOptions::default()).unwrap().text;
        let n = super::MEASURE_N + 7;
        let values = kit::inputs::uniform_f32(&mut kit::inputs::rng_for(0, "yardstick"), n, -1.0, 1.0);
        let m = kit::measure::measure_ptx(&ptx, "copy_linear", |module| {
            let gpu = module.gpu();
            let input = gpu.upload("in", &values)?;
            let out = gpu.poisoned::<f32>("out", n)?;
            module.launch("copy_linear", crate::launch_config(n), &kit::args![&input, &out, n as i32])?;
            kit::check::exact("out", &values, &out.read()?)
        })
        .unwrap();
        assert!(m.load_sectors_per_request() <= 4.1 && m.store_sectors_per_request() <= 4.1);
    }

    #[test]
    fn coalescing_is_measured() {
        let ex = crate::exercise();
        for file in [
            "reference/ex12-convolution/kernels/convolution.cu",
            "exercises/ex12-convolution/calibration/convolution_grid_stride.cu",
        ] {
            passes(&ex, "convolution", "share-of-copy", Run::StandIn, file);
        }
        for file in [
            "reference/slow/ex12-convolution/kernels/convolution.cu",
            "exercises/ex12-convolution/calibration/convolution_chunked.cu",
        ] {
            if let Some(msg) = fails(&ex, "convolution", "share-of-copy", Run::StandIn, file) {
                assert!(msg.contains("sectors per request"), "{msg}");
            }
        }
    }
}
