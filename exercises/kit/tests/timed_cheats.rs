//! The one way to time a student's kernel (`kit::timed::student`) against
//! each family of timing tricks, without a GPU: the simulator behind a
//! wall-clock stopwatch stands in for a GPU that times. Each trick is a small
//! kernel of its family (grader/tests/cheats holds the same families as
//! students would write them for the exercises, graded on a GPU), and each
//! must fail with the verdict that names it; the honest kernels, the
//! README-promise one included, must be timed.

use std::time::Duration;

use kit::backend::sim::SimBackend;
use kit::backend::{Arg, BResult, Backend, Capabilities, DevPtr, DeviceInfo, LaunchConfig, ModuleId};
use kit::timed::{Fresh, ReplaysResults, WrongWhenTimed};
use kit::{Ctx, Gpu, Module, PartBuild, RunEnv};

/// The simulator as a GPU that times: a launch "takes" one millisecond per
/// thousand warp branches it executed (the simulator's profile). The wall
/// clock would do, but it varies fourfold between launches on a shared
/// host; branches are exact, and a kernel that skips its loop skips them.
struct Stopwatch(SimBackend, Neighbour);

/// Another process on the "GPU": every other pair of launches takes twice as
/// long (a student's launch and the witness timed right after it, alike).
#[derive(Default)]
struct Neighbour(Option<std::sync::atomic::AtomicU32>);

impl Backend for Stopwatch {
    fn info(&self) -> &DeviceInfo {
        self.0.info()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities { times_kernels: true, ..self.0.capabilities() }
    }
    fn load_module(&self, ptx: &str) -> BResult<ModuleId> {
        self.0.load_module(ptx)
    }
    fn has_kernel(&self, module: ModuleId, name: &str) -> BResult<bool> {
        self.0.has_kernel(module, name)
    }
    fn alloc(&self, bytes: usize) -> BResult<DevPtr> {
        self.0.alloc(bytes)
    }
    fn free(&self, ptr: DevPtr) {
        self.0.free(ptr)
    }
    fn write(&self, dst: DevPtr, src: &[u8]) -> BResult<()> {
        self.0.write(dst, src)
    }
    fn read(&self, src: DevPtr, dst: &mut [u8]) -> BResult<()> {
        self.0.read(src, dst)
    }
    fn fill(&self, dst: DevPtr, byte: u8, len: usize) -> BResult<()> {
        self.0.fill(dst, byte, len)
    }
    fn write_symbol(&self, module: ModuleId, name: &str, bytes: &[u8]) -> BResult<()> {
        self.0.write_symbol(module, name, bytes)
    }
    fn launch(&self, module: ModuleId, kernel: &str, cfg: &LaunchConfig, args: &[Arg]) -> BResult<()> {
        self.0.launch(module, kernel, cfg, args)
    }
    fn synchronize(&self, timeout: Duration) -> BResult<()> {
        self.0.synchronize(timeout)
    }
    fn time_ms(&self, work: &mut dyn FnMut() -> BResult<()>, timeout: Duration) -> BResult<f32> {
        self.0.take_profiles();
        work()?;
        self.synchronize(timeout)?;
        let ms = self.0.take_profiles().iter().map(|p| p.branches).sum::<u64>() as f32 / 1e3;
        let slowed =
            self.1 .0.as_ref().is_some_and(|n| (n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) / 2) % 2 == 1);
        Ok(if slowed { 2.0 * ms } else { ms })
    }
    fn take_profiles(&self) -> Vec<kit::profile::MemoryProfile> {
        Vec::new()
    }
}

/// Elements per launch: a few blocks, quick on the simulator.
const N: usize = 2048;
/// Rounds of the hash per element: the work a replay skips.
const ROUNDS: u32 = 48;

/// What every kernel here computes, on the CPU.
fn hash(x: u32) -> u32 {
    (0..ROUNDS).fold(x, |h, r| (h ^ r).wrapping_mul(2_654_435_761).rotate_left(5))
}

/// The kernels: `work(in, out, n)` writes `out[i] = hash(in[i])`, each its way.
const KERNELS: &str = r#"
__device__ unsigned hash(unsigned x) {
    #pragma unroll 1
    for (unsigned r = 0; r < ROUNDS; r++) { x = (x ^ r) * 2654435761u; x = (x << 5) | (x >> 27); }
    return x;
}

extern "C" __global__ void honest(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = hash(in[i]);
}

// Computes on its first launch only, then returns at once.
__device__ unsigned calls;
extern "C" __global__ void work_once(const unsigned *in, unsigned *out, int n) {
    if (atomicAdd(&calls, 0) > 0) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = hash(in[i]);
    if (i == n - 1) atomicExch(&calls, 1);
}

// Keeps every result, keyed by the input's first elements, and copies it
// out when the same input comes back.
__device__ unsigned kept[4096];
__device__ unsigned long long key;
extern "C" __global__ void replay(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long k = ((unsigned long long)in[0] << 32) ^ in[1];
    if (atomicAdd(&key, 0ull) == k) { out[i] = kept[i]; return; }
    out[i] = kept[i] = hash(in[i]);
    if (i == n - 1) atomicExch(&key, k);
}

// Overlapping inputs: launch k's input was launch k - 1's moved on by 64
// elements (the old windows), so it shifts its last output and computes only
// the 64 new elements. Each launch now gets inputs of its own.
__device__ unsigned kept_even[4096], kept_odd[4096];
__device__ int launches;
extern "C" __global__ void slide(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = atomicAdd(&launches, 0);
    const unsigned *last = k % 2 ? kept_even : kept_odd;
    unsigned *next = k % 2 ? kept_odd : kept_even;
    unsigned v = k > 0 && i < n - 64 ? last[i + 64] : hash(in[i]);
    out[i] = next[i] = v;
    if (i == n - 1) atomicAdd(&launches, 1);
}

// Structure in the input: one period computed, the rest copied (the old
// inputs repeated a block).
extern "C" __global__ void one_period(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = i < 256 ? hash(in[i]) : hash(in[i % 256]);
}

// Writes into its input once it has read it.
extern "C" __global__ void input_writer(unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { out[i] = hash(in[i]); in[i] = 0; }
}

// Does half the work at the timed size (above any correctness size).
extern "C" __global__ void half_when_large(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= 2048 && i % 2 == 1) return;
    if (i < n) out[i] = hash(in[i]);
}

// Right on every launch, slow on every other one (a counter in `__device__`
// memory): its samples spread on their own, so that the old rule left the
// check out of the maximum as "disturbed".
__device__ unsigned turns, turns_sink;
extern "C" __global__ void alternating(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned turn = atomicAdd(&turns, 0) / (unsigned)n;
    if (i < n) {
        unsigned h = hash(in[i]), extra = h;
        if (turn % 2 == 1)
            for (int k = 0; k < 2; ++k) extra = hash(extra ^ 1u) ^ hash(extra);
        out[i] = h;
        if (extra == 0x9E3779B9u) turns_sink = extra; // keeps the extra work

        atomicAdd(&turns, 1);
    }
}

// Adds into its output, relying on the README's promise that it starts at zero.
extern "C" __global__ void accumulate(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&out[i], hash(in[i]));
}
"#;

fn module(gpu: &Gpu) -> Option<Module> {
    let compiler = match ptx_build::Compiler::nvrtc() {
        Ok(c) => c,
        Err(_) if std::env::var_os("CUDA_LAB_REQUIRE_NVRTC").is_some() => panic!("NVRTC is required here"),
        Err(_) => return None,
    };
    let source = KERNELS.replace("ROUNDS", &ROUNDS.to_string());
    let ptx = compiler
        .compile(&ptx_build::SourceFile::from_text("cheats.cu", source), &Default::default())
        .expect("the cheats compile");
    Some(gpu.load(&ptx.text).expect("the cheats load"))
}

/// Times `kernel` as a performance check does: outputs zeroed before every
/// launch (the README's promise), fresh inputs per launch, every launch's
/// output checked in full against the CPU.
fn time(kernel: &str) -> Option<anyhow::Result<kit::perf::Timing>> {
    time_beside(kernel, Neighbour::default())
}

fn time_beside(kernel: &str, neighbour: Neighbour) -> Option<anyhow::Result<kit::perf::Timing>> {
    let gpu = Gpu::new(Box::new(Stopwatch(SimBackend::new(), neighbour)), Duration::from_secs(60));
    let module = module(&gpu)?;
    let env = RunEnv::new(1, Some(gpu.clone()), ptx_build::Compiler::nvrtc().ok(), Default::default());
    let build = PartBuild::new(String::new());
    let ctx = Ctx::new("kit::timed_cheats::perf::time", &env, &build);
    let input = ctx.run(|ctx| Fresh::ints(ctx, "in", N, i32::MIN, i32::MAX)).unwrap();
    let out = gpu.zeros::<u32>("out", N).unwrap();
    let cfg = LaunchConfig::linear(N.div_ceil(256) as u32, 256);
    Some(kit::timed::student(
        &gpu,
        |launch| {
            input.fill(launch)?;
            out.write(&vec![0; N])
        },
        |_| module.launch_async(kernel, cfg, &[input.arg(), out.arg(), (N as i32).into()]),
        |launch| {
            input.intact(launch)?;
            let got = out.read()?;
            let want: Vec<u32> = input.host_values(launch, 0, N).into_iter().map(|v| hash(v as u32)).collect();
            match (0..N).find(|&i| got[i] != want[i]) {
                None => Ok(()),
                Some(i) => anyhow::bail!("out[{i}]: expected {}, got {}", want[i], got[i]),
            }
        },
    ))
}

fn failure_of(kernel: &str) -> Option<anyhow::Error> {
    Some(time(kernel)?.expect_err(&format!("`{kernel}` must fail its timing")))
}

#[test]
fn honest_kernels_are_timed_including_one_that_relies_on_a_reset_output() {
    for kernel in ["honest", "accumulate"] {
        let Some(timed) = time(kernel) else { return };
        let timing = timed.unwrap_or_else(|e| panic!("`{kernel}`: {e:#}"));
        assert!(timing.samples_ms.len() >= kit::perf::MIN_SAMPLES, "{kernel}: {timing:?}");
    }
}

#[test]
fn a_kernel_that_works_only_once_is_wrong_on_its_second_launch() {
    let Some(e) = failure_of("work_once") else { return };
    let wrong = e.downcast_ref::<WrongWhenTimed>().unwrap_or_else(|| panic!("{e:#}"));
    assert_eq!(wrong.number, 2, "{e:#}");
    assert!(e.to_string().contains("keeps something from one launch to the next"), "{e:#}");
}

#[test]
fn a_kernel_that_replays_kept_results_is_caught_by_the_repeated_launch() {
    let Some(e) = failure_of("replay") else { return };
    let replays = e.downcast_ref::<ReplaysResults>().unwrap_or_else(|| panic!("{e:#}"));
    assert!(replays.again_ms < replays.median_ms / 2.0, "{replays:?}");
}

#[test]
fn kernels_that_lean_on_overlapping_or_periodic_inputs_are_wrong_when_timed() {
    for (kernel, launch) in [("slide", 2), ("one_period", 1)] {
        let Some(e) = failure_of(kernel) else { return };
        let wrong = e.downcast_ref::<WrongWhenTimed>().unwrap_or_else(|| panic!("{kernel}: {e:#}"));
        assert_eq!(wrong.number, launch, "{kernel}: {e:#}");
    }
}

#[test]
fn a_kernel_that_writes_into_its_input_is_input_modified() {
    let Some(e) = failure_of("input_writer") else { return };
    let modified = e.downcast_ref::<kit::gpu::InputModified>().unwrap_or_else(|| panic!("{e:#}"));
    assert_eq!(modified.buffer, "in");
}

#[test]
fn a_kernel_that_does_less_at_the_timed_size_is_wrong_on_its_first_launch() {
    let Some(e) = failure_of("half_when_large") else { return };
    let wrong = e.downcast_ref::<WrongWhenTimed>().unwrap_or_else(|| panic!("{e:#}"));
    assert_eq!(wrong.number, 1, "{e:#}");
    assert!(e.to_string().contains("timed size"), "{e:#}");
}

#[test]
fn a_timing_disturbed_twice_gives_no_verdict() {
    let Some(timed) = time_beside("honest", Neighbour(Some(Default::default()))) else { return };
    let e = timed.expect_err("samples that spread this much are no timing");
    let disturbed = e.downcast_ref::<kit::perf::TimingDisturbed>().unwrap_or_else(|| panic!("{e:#}"));
    assert!(disturbed.spread > kit::perf::MAX_SPREAD, "{disturbed:?}");
    assert!(e.to_string().starts_with("not graded here: the timing was disturbed twice"), "{e}");
    assert!(disturbed.witness_spread.is_some_and(|w| w > kit::perf::MAX_SPREAD), "the witness spread too: {e}");
}

#[test]
fn a_kernel_whose_own_launches_spread_is_graded_by_its_slow_ones_beside_a_steady_witness() {
    let Some(timed) = time("alternating") else { return };
    let timing = timed.unwrap_or_else(|e| panic!("a kernel's own spread is graded, never left out: {e:#}"));
    let own = timing.own_spread.unwrap_or_else(|| panic!("{timing:?}"));
    assert!(own.spread > kit::perf::MAX_SPREAD, "{own:?}");
    assert!(own.witness_spread.is_some_and(|w| w <= kit::perf::MAX_SPREAD), "timed beside a steady witness: {own:?}");
    assert!(timing.graded_ms() > 1.3 * timing.median_ms(), "graded by its slow launches: {timing:?}");
    // The honest kernel beside the same witness: its median.
    let honest = time("honest").unwrap().unwrap();
    assert_eq!((honest.own_spread, honest.graded_ms()), (None, honest.median_ms()));
}
