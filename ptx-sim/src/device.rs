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
//! advancing with the cycles each warp's instructions take ([`issue_cycles`]:
//! an H200's latencies, measured by `scripts/gpu-49-clocks.cu`, so that a
//! chain of shared atomics costs what it costs there, while a chain of
//! arithmetic between two reads shows as little as a GPU's compiler, which
//! schedules it outside them, leaves of it: [`floats`]), and, like a GPU's
//! scheduler, never quite the same in two warps: each warp of a block starts
//! a few cycles apart and every read of a clock stalls its warp a seeded
//! cycle or few (a kernel that compared its warps' laps, or counted its own
//! instructions, would otherwise tell the simulator). The simulator runs
//! warps and blocks one after another, but the clocks show them side by side
//! as a GPU runs them: every warp of a block starts at the block's start and
//! counts its own cycles, a barrier's release sets every warp to the latest
//! arrival, blocks of one wave (as many blocks as SMs) start at the same time,
//! the next wave starts when the longest block of the last one ends, and
//! every launch starts after the one before it.
//!
//! `%warpid` is the warp's slot on its SM, as an H200 shows it: a block alone
//! on its SM holds slots 0 to W - 1 for its W warps, each group of four
//! rotated by a seeded step (`1 2 3 0 5 6 7 4`); a block of a later wave
//! shares its SM with the blocks resident there and holds the slots after
//! theirs.
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

/// `%envregN` as a GPU's driver sets it: on an H100 (2026-12-07, driver
/// 580.159.04, `scripts/gpu-49-envreg.cu`) `%envreg0` read 0x38432c8,
/// `%envreg6` 1 and `%envreg10` 0x120 in every thread, block and launch, the
/// others 0 (and so did `%pm0`..`%pm7`). Reading 0 in all of them, the
/// simulator was told apart by any of the three.
pub fn envreg(n: u8) -> u64 {
    match n {
        0 => 0x0384_32c8,
        6 => 1,
        10 => 0x120,
        _ => 0,
    }
}

/// Cycles most warp instructions advance their warp's clock.
pub const CYCLES_PER_INSTRUCTION: u64 = 2;
/// Warp slots of an SM (`%warpid` below this; sm_8x, sm_9x).
const WARP_SLOTS: u64 = 64;
/// Blocks an SM holds at once at most (sm_9x).
const BLOCKS_PER_SM: u64 = 32;
/// Shared memory of an SM that its blocks share (an H100's and an H200's 228 KiB).
const SHARED_PER_SM: u64 = 228 * 1024;
/// At most this many cycles between the starts of a block's warps, and one
/// more than the most a read of a clock stalls its warp.
const WARP_SKEW_CYCLES: u64 = 16;
const READ_STALL_CYCLES: u64 = 4;

/// Cycles `op` takes its warp with `lanes` lanes active: on an H200
/// (2026-12-04, `scripts/gpu-49-clocks.cu`, one block per SM), 16 dependent
/// shared loads took 449 cycles, 16 dependent shared atomics of a whole warp
/// 3306 to 3481, 16 dependent global loads (cached) about 4000, 16 dependent
/// global atomics about 5300, and two reads of `%clock64` in a row 2 or 3.
/// Every memory access is charged as if the next instruction waited for it.
pub(crate) fn issue_cycles(op: &crate::ir::Op, lanes: u32) -> u64 {
    use crate::ir::{Op, Space};
    if lanes == 0 {
        return CYCLES_PER_INSTRUCTION;
    }
    let lanes = lanes as u64;
    match *op {
        Op::Ld { space: Space::Shared, .. } => 28,
        Op::Ld { space: Space::KParam, .. } => CYCLES_PER_INSTRUCTION,
        Op::Ld { space: Space::Const, .. } => 24,
        Op::Ld { .. } => 250,
        Op::St { space: Space::Shared, .. } => 20,
        Op::St { .. } => 24,
        Op::Atom { space: Space::Shared, .. } => 40 + 5 * lanes,
        Op::Atom { .. } => 300 + lanes,
        Op::Bar | Op::BarRed { .. } => 20,
        _ => CYCLES_PER_INSTRUCTION,
    }
}

/// Whether `op` is arithmetic that a GPU's compiler schedules freely around a
/// read of a clock: on an H200 (2026-12-04, `scripts/gpu-49-clocks.cu`), 64
/// dependent multiply-adds between two reads of `%clock64` read 10 or 11
/// cycles (two reads in a row: 2 or 3), because ptxas placed them outside. A
/// memory access, a branch, a barrier or a warp-wide operation stays where it
/// is, and the arithmetic before it with it (it counts from there on).
pub(crate) fn floats(op: &crate::ir::Op) -> bool {
    use crate::ir::{Op, Space};
    matches!(
        op,
        Op::IBin { .. }
            | Op::IUn { .. }
            | Op::ITern { .. }
            | Op::Bfi { .. }
            | Op::FBin { .. }
            | Op::FUn { .. }
            | Op::Fma { .. }
            | Op::Cvt { .. }
            | Op::Half { .. }
            | Op::HalfSetp { .. }
            | Op::HalfCvt { .. }
            | Op::Setp { .. }
            | Op::Set { .. }
            | Op::Selp { .. }
            | Op::PLogic { .. }
            | Op::Testp { .. }
            | Op::Pack { .. }
            | Op::Unpack { .. }
            | Op::Cvta { .. }
            | Op::Carry { .. }
            | Op::Nop
            | Op::Ld { space: Space::KParam, .. }
    )
}

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
            warp_cycles: Vec::new(),
            entered: 0,
            sm: 0,
            seed,
            block: 0,
            resident: 1,
            slot_base: 0,
            slot_turn: 0,
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
    /// Per warp of the current block, the cycles it ran before it last
    /// started running ([`LaunchTime::enter`]), and its start's skew.
    warp_cycles: Vec<u64>,
    /// The launch's cycle count when the running warp started running.
    entered: u64,
    /// `%smid` of the current block.
    pub sm: u32,
    /// The launch's seed (placement, skews, stalls).
    seed: u64,
    /// The current block's linear index.
    block: u64,
    /// Blocks of this launch an SM holds at once ([`LaunchTime::set_residency`]).
    resident: u64,
    /// The current block's first warp slot, and the rotation of its groups of four.
    slot_base: u64,
    slot_turn: u64,
}

impl LaunchTime {
    /// How many blocks of `warps` warps and `shared_bytes` of shared memory
    /// (the GPU's count, with its reservation) an SM holds at once: the
    /// blocks of a later wave share an SM with the ones there (`%warpid`).
    pub fn set_residency(&mut self, warps: usize, shared_bytes: u64) {
        let by_warps = WARP_SLOTS / (warps as u64).next_multiple_of(4).clamp(4, WARP_SLOTS);
        let by_shared = SHARED_PER_SM / shared_bytes.max(1);
        self.resident = by_warps.min(by_shared).clamp(1, BLOCKS_PER_SM);
    }

    /// Block `linear` (x fastest) of `warps` warps starts.
    pub fn start_block(&mut self, linear: u64, warps: usize) {
        let n = self.gpu.multiprocessors.max(1) as u64;
        // A new wave (also past blocks a sample leaves out, SimConfig::blocks).
        if linear / n != self.block / n {
            self.wave_base += self.wave_len;
            self.wave_len = 0;
        }
        self.block = linear;
        let skew = |w: usize| self.hash(w as u64, u64::MAX) % WARP_SKEW_CYCLES;
        self.warp_cycles = (0..warps).map(skew).collect();
        self.sm = ((linear % n * self.sm_stride + self.sm_offset) % n) as u32;
        let group = (warps as u64).next_multiple_of(4).min(WARP_SLOTS);
        self.slot_base = (linear / n % self.resident * group).min(WARP_SLOTS - group);
        self.slot_turn = self.hash(u64::MAX, u64::MAX) % 4;
    }

    /// `%warpid` of warp `w` of the current block.
    pub fn warp_slot(&self, w: usize) -> u64 {
        let w = w as u64;
        self.slot_base + (w & !3) + ((w + self.slot_turn) & 3)
    }

    /// A seeded hash of the launch, the current block, `a` and `b`.
    fn hash(&self, a: u64, b: u64) -> u64 {
        splitmix(self.seed ^ splitmix(self.block ^ splitmix(a ^ splitmix(b))))
    }

    /// A warp starts running at cycle `cycles` of the launch's count.
    pub fn enter(&mut self, cycles: u64) {
        self.entered = cycles;
    }

    /// Warp `w` stops running at cycle `cycles`.
    pub fn leave(&mut self, w: usize, cycles: u64) {
        if let Some(s) = self.warp_cycles.get_mut(w) {
            *s += cycles.saturating_sub(self.entered);
        }
    }

    /// Warp `w` read a clock at cycle `cycles`: it stalls a seeded few cycles,
    /// as a GPU's warps wait on their scheduler.
    pub fn stall_after_read(&mut self, w: usize, cycles: u64) {
        let stall = self.hash(w as u64, self.cycles(w, cycles)) % READ_STALL_CYCLES;
        if let Some(s) = self.warp_cycles.get_mut(w) {
            *s += stall;
        }
    }

    /// A barrier releases: every warp waited for the last to arrive.
    pub fn barrier(&mut self) {
        let latest = self.warp_cycles.iter().copied().max().unwrap_or(0);
        self.warp_cycles.fill(latest);
    }

    /// The current block ends: its longest warp is its length.
    pub fn end_block(&mut self) {
        let longest = self.warp_cycles.iter().copied().max().unwrap_or(0);
        self.wave_len = self.wave_len.max(longest);
    }

    /// Cycles since the launch's first, for warp `w` (running since
    /// [`LaunchTime::enter`]) at cycle `cycles` of the launch's count.
    fn cycles(&self, w: usize, cycles: u64) -> u64 {
        let own = self.warp_cycles.get(w).copied().unwrap_or(0) + cycles.saturating_sub(self.entered);
        self.launch_cycles + self.wave_base + own
    }

    /// `timer`'s value for warp `w` at cycle `at` of the launch's count.
    pub fn read(&self, timer: Timer, w: usize, at: u64) -> u64 {
        let cycles = self.boot_cycles + self.cycles(w, at);
        let ns = || {
            let ns = self.start_ns + cycles_to_ns(self.cycles(w, at), self.gpu.clock_khz);
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
    fn clocks_advance_with_each_warps_cycles_and_blocks_of_a_wave_start_together() {
        let gpu = ShownGpu { multiprocessors: 2, ..DEFAULT_GPU };
        let mut time = DeviceTime::now(&gpu);
        let mut t = time.launch(&gpu);
        t.start_block(0, 2);
        t.enter(0);
        let (c0, g0) = (t.read(Timer::Clock64, 0, 0), t.read(Timer::Global, 0, 0));
        assert!(c0 > 1 << 30, "a device that has been up a while: {c0}");
        assert!(g0 > 1_600_000_000_000_000_000, "nanoseconds of the wall clock: {g0}");
        assert_eq!(t.read(Timer::Clock64, 0, 1000), c0 + 1000);
        t.leave(0, 1000);
        // warp 1 runs beside warp 0: it starts at the block's start, a few cycles apart
        t.enter(1000);
        let c1 = t.read(Timer::Clock64, 1, 1000);
        assert!(c1.abs_diff(c0) < WARP_SKEW_CYCLES, "{c0} {c1}");
        t.leave(1, 1400);
        // after a barrier, both warps are at the later one's time
        t.barrier();
        t.enter(1400);
        let both = t.read(Timer::Clock64, 1, 1400);
        assert_eq!(both, t.read(Timer::Clock64, 0, 1400));
        assert!(both >= c0 + 1000 && both >= c1 + 400);
        t.leave(1, 1500);
        t.end_block();
        // block 1 runs beside block 0
        let mut at = 1500;
        t.start_block(1, 1);
        t.enter(at);
        assert!(t.read(Timer::Clock64, 0, at) < c0 + 2 * WARP_SKEW_CYCLES);
        at += 100;
        t.leave(0, at);
        t.end_block();
        // block 2 is the next wave: after the longest block of the first
        t.start_block(2, 1);
        t.enter(at);
        let c = t.read(Timer::Clock64, 0, at);
        assert!(c >= both + 100, "{c} {both}");
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
        assert!(next.read(Timer::Clock64, 0, 0) > c + 10);
    }

    /// The same laps in every warp, or a clock that moves by the instruction,
    /// told a kernel it ran on the simulator (the cheat corpus's ex11 case).
    #[test]
    fn reads_stall_their_warp_so_that_warps_laps_differ() {
        let gpu = DEFAULT_GPU;
        let mut time = DeviceTime::now(&gpu);
        let mut t = time.launch(&gpu);
        let warps = 16;
        t.start_block(0, warps);
        let mut laps = Vec::new();
        for w in 0..warps {
            let at = w as u64 * 1000;
            t.enter(at);
            let t0 = t.read(Timer::Clock64, w, at);
            t.stall_after_read(w, at);
            let t1 = t.read(Timer::Clock64, w, at + 128);
            assert!(t1 >= t0 + 128, "a clock never goes back");
            laps.push(t1 - t0);
            t.leave(w, at + 128);
        }
        laps.sort();
        laps.dedup();
        assert!(laps.len() > 1, "16 warps, one lap: {laps:?}");
        assert!(laps.iter().all(|&l| l < 128 + READ_STALL_CYCLES));
    }

    /// Slots as an H200 shows them (scripts/gpu-49-clocks.cu, 2026-12-04): a
    /// block alone on its SM holds 0..W, each group of four rotated; a block of
    /// a later wave holds the slots after the resident ones'.
    #[test]
    fn warp_slots_are_an_sms_shared_by_its_resident_blocks() {
        let gpu = ShownGpu { multiprocessors: 4, ..DEFAULT_GPU };
        let mut time = DeviceTime::now(&gpu);
        let mut t = time.launch(&gpu);
        t.set_residency(8, 4096);
        let slots = |t: &LaunchTime| (0..8).map(|w| t.warp_slot(w)).collect::<Vec<_>>();
        for b in 0..4 {
            t.start_block(b, 8);
            let s = slots(&t);
            let mut sorted = s.clone();
            sorted.sort();
            assert_eq!(sorted, (0..8).collect::<Vec<_>>(), "block {b} alone on its SM: {s:?}");
            assert!(s[..4].iter().all(|&x| x < 4), "groups of four: {s:?}");
        }
        t.start_block(4, 8);
        assert!(slots(&t).iter().all(|&x| (8..16).contains(&x)), "the second wave: {:?}", slots(&t));
        t.start_block(9 * 4, 8);
        assert!(slots(&t).iter().all(|&x| (8..16).contains(&x)), "8 resident, the tenth wave: {:?}", slots(&t));
        // shared memory limits residency: 100 KiB a block, two per SM
        t.set_residency(8, 100 * 1024);
        t.start_block(8, 8);
        assert!(slots(&t).iter().all(|&x| x < 8), "the third wave takes the first's slots: {:?}", slots(&t));
    }
}
