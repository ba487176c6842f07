//! What a kernel can read of the device it runs on, and the one finding about
//! barriers that a GPU hides.
//!
//! **The device a kernel sees.** A kernel that can tell the simulator from a
//! GPU can take one path where it is measured and another where it is timed
//! (`%nsmid == 1` only on the simulator, say). So the special registers show a
//! plausible GPU ([`ShownGpu`], by default an H100's or H200's 132 SMs): `%nsmid`
//! is its SM count; `%smid` spreads the blocks of a wave over distinct SMs, in a
//! seeded order that changes from launch to launch; `%gridid` counts launches;
//! `%clock`/`%clock64` count cycles from a large boot offset, and
//! `%globaltimer` nanoseconds of the host's wall clock (in 32 ns steps), both
//! advancing with the warp instructions each warp executes. The simulator
//! runs warps and blocks one after another, but the clocks show them side by
//! side as a GPU runs them: every warp of a block starts at the block's start
//! and counts its own instructions, a barrier's release sets every warp to
//! the latest arrival, blocks of one wave (as many blocks as SMs) start at the
//! same time, the next wave starts when the longest block of the last one
//! ends, and every launch starts after the one before it.
//!
//! **A barrier after an exit** ([`BarrierAfterExit`]): a `bar.sync` that some
//! threads of the block never reach because they exited first. The PTX ISA
//! leaves it undefined and the CUDA guide forbids it; a GPU (like the
//! simulator) releases the barrier anyway once the other threads arrive, so
//! the numbers come out right and nothing shows it.

use crate::error::Dim3;

/// The GPU a kernel sees through its special registers ([`crate::SimConfig::gpu`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShownGpu {
    /// `%nsmid`, and the SMs `%smid` ranges over.
    pub multiprocessors: u32,
    /// The SM clock that `%clock64` counts, in kHz.
    pub clock_khz: u32,
}

/// An H100 SXM's and an H200's: 132 SMs at 1.98 GHz.
pub const DEFAULT_GPU: ShownGpu = ShownGpu { multiprocessors: 132, clock_khz: 1_980_000 };

impl Default for ShownGpu {
    fn default() -> Self {
        DEFAULT_GPU
    }
}

/// Cycles one warp instruction advances a block's clock.
pub const CYCLES_PER_INSTRUCTION: u64 = 2;
/// Cycles between two launches (a launch's overhead, a few microseconds).
const LAUNCH_GAP_NS: u64 = 4_000;
/// Shared memory a GPU gives a block comes in units of this many bytes
/// (`%total_smem_size`, the PTX ISA for sm_8x and sm_9x).
pub(crate) const SHARED_ALLOCATION_UNIT: u64 = 128;
/// Shared memory a GPU reserves per block for the system (`%aggr_smem_size`
/// counts it; the PTX ISA: 1 KiB on sm_8x and sm_9x).
pub(crate) const RESERVED_SHARED_BYTES: u64 = 1024;
/// `%globaltimer` ticks in steps of this many nanoseconds.
const TIMER_STEP_NS: u64 = 32;
/// `%gridid` of a simulator's first launch.
const FIRST_GRID_ID: u64 = 0x10;

/// Which timer a `mov` reads (`Op::Clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Timer {
    /// `%clock`: the low 32 bits of the cycle counter.
    Clock,
    /// `%clock_hi`.
    ClockHi,
    /// `%clock64`.
    Clock64,
    /// `%globaltimer` (nanoseconds).
    Global,
    /// `%globaltimer_lo`.
    GlobalLo,
    /// `%globaltimer_hi`.
    GlobalHi,
}

impl Timer {
    pub fn of(name: &str) -> Option<Timer> {
        Some(match name {
            "%clock" => Timer::Clock,
            "%clock_hi" => Timer::ClockHi,
            "%clock64" => Timer::Clock64,
            "%globaltimer" => Timer::Global,
            "%globaltimer_lo" => Timer::GlobalLo,
            "%globaltimer_hi" => Timer::GlobalHi,
            _ => return None,
        })
    }
}

/// A simulator's device clocks between launches.
#[derive(Debug, Clone)]
pub(crate) struct DeviceTime {
    /// Host wall time (ns since the Unix epoch) when the simulator was made.
    start_ns: u64,
    /// Cycles the device had counted then (its uptime).
    boot_cycles: u64,
    /// Cycles elapsed since, over all launches.
    cycles: u64,
    launches: u64,
}

impl DeviceTime {
    pub fn now(gpu: &ShownGpu) -> Self {
        let start_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1_750_000_000_000_000_000, |d| d.as_nanos() as u64);
        // an uptime of up to a day, in cycles
        let uptime_ns = start_ns % 86_400_000_000_000 + 60_000_000_000;
        let boot_cycles = (uptime_ns as u128 * gpu.clock_khz as u128 / 1_000_000) as u64;
        DeviceTime { start_ns, boot_cycles, cycles: 0, launches: 0 }
    }

    /// The clocks of the next launch.
    pub fn launch(&mut self, gpu: &ShownGpu) -> LaunchTime {
        self.launches += 1;
        self.cycles += ns_to_cycles(LAUNCH_GAP_NS, gpu.clock_khz);
        let n = gpu.multiprocessors.max(1) as u64;
        let seed = splitmix(self.start_ns ^ self.launches.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        LaunchTime {
            gpu: *gpu,
            grid_id: FIRST_GRID_ID + self.launches - 1,
            start_ns: self.start_ns,
            boot_cycles: self.boot_cycles,
            launch_cycles: self.cycles,
            sm_offset: seed % n,
            sm_stride: stride_coprime(n, seed >> 32),
            wave_base: 0,
            wave_len: 0,
            warp_steps: Vec::new(),
            entered: 0,
            sm: 0,
        }
    }

    /// Counts a finished launch's cycles.
    pub fn finish(&mut self, t: &LaunchTime) {
        self.cycles += t.wave_base + t.wave_len;
    }
}

/// One launch's clocks and SM placement (`%smid`, `%clock`, `%globaltimer`, `%gridid`).
#[derive(Debug, Clone)]
pub(crate) struct LaunchTime {
    pub gpu: ShownGpu,
    pub grid_id: u64,
    start_ns: u64,
    boot_cycles: u64,
    launch_cycles: u64,
    sm_offset: u64,
    sm_stride: u64,
    /// Cycles from the launch's start to its current wave's.
    wave_base: u64,
    /// The longest block of the current wave so far, in cycles.
    wave_len: u64,
    /// Per warp of the current block, the instructions it executed before it
    /// last started running ([`LaunchTime::enter`]).
    warp_steps: Vec<u64>,
    /// The launch's step count when the running warp started running.
    entered: u64,
    /// `%smid` of the current block.
    pub sm: u32,
}

impl LaunchTime {
    /// Block `linear` (x fastest) of `warps` warps starts.
    pub fn start_block(&mut self, linear: u64, warps: usize) {
        let n = self.gpu.multiprocessors.max(1) as u64;
        if linear > 0 && linear % n == 0 {
            self.wave_base += self.wave_len;
            self.wave_len = 0;
        }
        self.warp_steps.clear();
        self.warp_steps.resize(warps, 0);
        self.sm = ((linear % n * self.sm_stride + self.sm_offset) % n) as u32;
    }

    /// A warp starts running at step `steps` of the launch.
    pub fn enter(&mut self, steps: u64) {
        self.entered = steps;
    }

    /// Warp `w` stops running at step `steps`.
    pub fn leave(&mut self, w: usize, steps: u64) {
        if let Some(s) = self.warp_steps.get_mut(w) {
            *s += steps.saturating_sub(self.entered);
        }
    }

    /// A barrier releases: every warp waited for the last to arrive.
    pub fn barrier(&mut self) {
        let latest = self.warp_steps.iter().copied().max().unwrap_or(0);
        self.warp_steps.fill(latest);
    }

    /// The current block ends: its longest warp is its length.
    pub fn end_block(&mut self) {
        let longest = self.warp_steps.iter().copied().max().unwrap_or(0);
        self.wave_len = self.wave_len.max(longest * CYCLES_PER_INSTRUCTION);
    }

    /// Cycles since the launch's first, for warp `w` (running since
    /// [`LaunchTime::enter`]) at step `steps`.
    fn cycles(&self, w: usize, steps: u64) -> u64 {
        let own = self.warp_steps.get(w).copied().unwrap_or(0) + steps.saturating_sub(self.entered);
        self.launch_cycles + self.wave_base + own * CYCLES_PER_INSTRUCTION
    }

    /// `timer`'s value for warp `w` at step `steps`.
    pub fn read(&self, timer: Timer, w: usize, steps: u64) -> u64 {
        let cycles = self.boot_cycles + self.cycles(w, steps);
        let ns = || {
            let ns = self.start_ns + cycles_to_ns(self.cycles(w, steps), self.gpu.clock_khz);
            ns - ns % TIMER_STEP_NS
        };
        match timer {
            Timer::Clock => cycles & 0xffff_ffff,
            Timer::ClockHi => cycles >> 32,
            Timer::Clock64 => cycles,
            Timer::Global => ns(),
            Timer::GlobalLo => ns() & 0xffff_ffff,
            Timer::GlobalHi => ns() >> 32,
        }
    }
}

fn ns_to_cycles(ns: u64, khz: u32) -> u64 {
    (ns as u128 * khz as u128 / 1_000_000) as u64
}

fn cycles_to_ns(cycles: u64, khz: u32) -> u64 {
    (cycles as u128 * 1_000_000 / khz.max(1) as u128) as u64
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stride in 1..n coprime with `n`, from `seed`: block i of a wave goes to
/// SM (i * stride + offset) mod n, a permutation of the SMs.
fn stride_coprime(n: u64, seed: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let mut s = 1 + seed % (n - 1);
    while gcd(s, n) != 1 {
        s = s % (n - 1) + 1;
    }
    s
}

/// Where the threads that left by the `ret`/`exit` at `exit` decided to:
/// compilers turn `if (c) return;` into a branch to the kernel's final `ret`,
/// whose line is the closing brace. So where a branch before the barrier at
/// `barrier` jumps into the straight run of code that ends at `exit`, the
/// latest such branch (the `if` nearest the barrier) is the return's site;
/// else the exit itself.
pub(crate) fn return_site(code: &[crate::ir::Instr], exit: u32, barrier: u32) -> u32 {
    use crate::ir::Op;
    let transfers = |op: &Op| matches!(op, Op::Bra { .. } | Op::BrxIdx { .. } | Op::Exit | Op::Ret { .. });
    // the first instruction of the run that falls through to `exit`
    let mut start = exit as usize;
    while start > 0 && !transfers(&code[start - 1].op) {
        start -= 1;
    }
    let run = start as u32..=exit;
    (0..barrier.min(code.len() as u32))
        .rev()
        .find(|&b| matches!(code[b as usize].op, Op::Bra { target } if run.contains(&target)))
        .unwrap_or(exit)
}

/// A `bar.sync` (`__syncthreads()`) released while some threads of its block
/// had exited before reaching it ([`crate::LaunchReport::barrier_after_exit`]):
/// the first of a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierAfterExit {
    pub kernel: String,
    /// The barrier.
    pub barrier_ptx_line: usize,
    pub barrier_source: Option<String>,
    /// The `ret`/`exit` the first exited thread of the block left by.
    pub exit_ptx_line: usize,
    pub exit_source: Option<String>,
    /// That thread, and its block.
    pub thread: Dim3,
    pub block: Dim3,
    /// Threads of the block that had exited when the barrier released.
    pub exited: u32,
    /// Threads of the block.
    pub threads: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one block of `warps` warps, each for `steps[w]` instructions, from launch step `at`.
    fn block(t: &mut LaunchTime, linear: u64, steps: &[u64], at: &mut u64) {
        t.start_block(linear, steps.len());
        for (w, &n) in steps.iter().enumerate() {
            t.enter(*at);
            *at += n;
            t.leave(w, *at);
        }
        t.end_block();
    }

    #[test]
    fn a_wave_spreads_its_blocks_over_distinct_sms_and_launches_differ() {
        let gpu = DEFAULT_GPU;
        let mut time = DeviceTime::now(&gpu);
        let mut orders = Vec::new();
        let mut at = 0;
        for _ in 0..3 {
            let mut t = time.launch(&gpu);
            let mut sms: Vec<u32> = (0..132)
                .map(|b| {
                    block(&mut t, b, &[5], &mut at);
                    t.sm
                })
                .collect();
            orders.push(sms.clone());
            sms.sort();
            assert_eq!(sms, (0..132).collect::<Vec<_>>());
            time.finish(&t);
        }
        assert!(orders[0] != orders[1] || orders[1] != orders[2], "the order changes between launches");
    }

    #[test]
    fn clocks_advance_with_each_warps_work_and_blocks_of_a_wave_start_together() {
        let gpu = ShownGpu { multiprocessors: 2, ..DEFAULT_GPU };
        let mut time = DeviceTime::now(&gpu);
        let mut t = time.launch(&gpu);
        t.start_block(0, 2);
        t.enter(0);
        let (c0, g0) = (t.read(Timer::Clock64, 0, 0), t.read(Timer::Global, 0, 0));
        assert!(c0 > 1 << 30, "a device that has been up a while: {c0}");
        assert!(g0 > 1_600_000_000_000_000_000, "nanoseconds of the wall clock: {g0}");
        assert_eq!(t.read(Timer::Clock64, 0, 1000), c0 + 1000 * CYCLES_PER_INSTRUCTION);
        t.leave(0, 1000);
        // warp 1 runs beside warp 0: it starts at the block's start
        t.enter(1000);
        assert_eq!(t.read(Timer::Clock64, 1, 1000), c0);
        t.leave(1, 1400);
        // after a barrier, both warps are at the later one's time
        t.barrier();
        t.enter(1400);
        assert_eq!(t.read(Timer::Clock64, 1, 1400), c0 + 1000 * CYCLES_PER_INSTRUCTION);
        t.leave(1, 1500);
        t.end_block();
        // block 1 runs beside block 0
        let mut at = 1500;
        t.start_block(1, 1);
        t.enter(at);
        assert_eq!(t.read(Timer::Clock64, 0, at), c0);
        at += 100;
        t.leave(0, at);
        t.end_block();
        // block 2 is the next wave: after the longest block of the first
        t.start_block(2, 1);
        t.enter(at);
        let c = c0 + 1100 * CYCLES_PER_INSTRUCTION;
        assert_eq!(t.read(Timer::Clock64, 0, at), c);
        assert_eq!(t.read(Timer::Clock, 0, at), c & 0xffff_ffff);
        assert_eq!(t.read(Timer::ClockHi, 0, at), c >> 32);
        let g = t.read(Timer::Global, 0, at);
        assert!(g > g0 && g % TIMER_STEP_NS == 0);
        t.leave(0, at + 10);
        t.end_block();
        time.finish(&t);
        // the next launch starts after this one, with the next grid id
        let mut next = time.launch(&gpu);
        assert_eq!(next.grid_id, t.grid_id + 1);
        next.start_block(0, 1);
        next.enter(0);
        assert!(next.read(Timer::Clock64, 0, 0) > c + 10 * CYCLES_PER_INSTRUCTION);
    }
}
