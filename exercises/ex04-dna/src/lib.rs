//! ex04: is an 8-letter sequence present in a DNA string? (seed 004, "Recherche
//! d'une séquence dans une chaîne d'ADN"). v1 reads everything from global
//! memory; v2 stages each block's window of the string in shared memory; v3 also
//! keeps the sequence in `__constant__` memory, written by the host.
//!
//! The seed's kernel answers one boolean, which a guess passes half the time.
//! Here every thread writes its own answer, `found[p]`, for its start position
//! `p`, and every check compares all positions of many seeded strings, each with
//! its own sequence (the seed's `Contient` is `any(found)`).

pub mod cpu;
pub mod inputs;
pub mod measured;

use std::sync::Arc;

use anyhow::{bail, Result};
use kit::backend::{Arg, BackendError};
use kit::timed::Fresh;
use kit::{check, require, Check, Ctx, DeviceBuffer, Exercise, LaunchConfig, Module, Part, Skip};

use inputs::{Case, Family, Seq, FAMILIES};

/// Letters in the sequence (the seed's LONG_SEQ).
pub const SEQ_LEN: usize = 8;
/// Threads per block: one start position each.
pub const THREADS: usize = 256;
/// Letters a block needs for its THREADS start positions (v2, v3).
pub const WINDOW: usize = THREADS + SEQ_LEN - 1;
/// Name of the `__constant__` array that v3 reads and the host writes.
pub const SEQ_SYMBOL: &str = "seq";
/// Letters of the timed string: 64 MiB in, 64 MiB of flags out, beyond any L2
/// cache, and well above launch overhead (see CALIBRATION.md).
pub const PERF_LETTERS: usize = 1 << 26;
/// `v2` must run at least this fraction of the v1 pattern's speed
/// (1.0 = as fast). Provisional; set from H100 measurements in CALIBRATION.md.
pub const MIN_V2_VS_V1: f64 = 0.6;
/// `v3` must run at least this fraction of the v1 pattern's speed.
/// Provisional; set from H100 measurements in CALIBRATION.md.
pub const MIN_V3_VS_V1: f64 = 0.6;

// An H100 has 50 MB of L2: the timed input plus output (128 MiB) must not fit.
const _: () = assert!(2 * PERF_LETTERS > 100 << 20);
const _: () = assert!(MIN_V2_VS_V1 > 0.0 && MIN_V3_VS_V1 > 0.0);

pub fn exercise() -> Exercise {
    Exercise {
        id: "ex04",
        slug: "dna",
        title: "Find an 8-letter sequence in a DNA string: global, shared window, constant memory",
        dir: "exercises/ex04-dna",
        parts: [Variant::V1, Variant::V2, Variant::V3].into_iter().map(Variant::part).collect(),
    }
}

/// One thread per start position, in blocks of THREADS, no dynamic shared memory.
pub fn launch_config(n: usize) -> LaunchConfig {
    let blocks = cpu::positions(n).div_ceil(THREADS).max(1);
    LaunchConfig::linear(blocks as u32, THREADS as u32)
}

/// The three parts differ in their kernel and in where the sequence comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Variant {
    V1,
    V2,
    V3,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::V1 => "v1",
            Variant::V2 => "v2",
            Variant::V3 => "v3",
        }
    }

    pub fn kernel(self) -> &'static str {
        match self {
            Variant::V1 => "search_v1",
            Variant::V2 => "search_v2",
            Variant::V3 => "search_v3",
        }
    }

    fn kernels(self) -> &'static [&'static str] {
        match self {
            Variant::V1 => &["search_v1"],
            Variant::V2 => &["search_v2"],
            Variant::V3 => &["search_v3"],
        }
    }

    fn file(self) -> &'static str {
        match self {
            Variant::V1 => "kernels/search_v1.cu",
            Variant::V2 => "kernels/search_v2.cu",
            Variant::V3 => "kernels/search_v3.cu",
        }
    }

    fn part(self) -> Part {
        let mut part = Part::new(self.name(), self.file(), self.kernels(), 10.0);
        for family in &FAMILIES {
            part = part.check(
                Check::correctness(family.name, move |ctx| search_family(ctx, self, family)).heavy_if(family.heavy),
            );
        }
        let staged = |part: Part| {
            part.check(Check::structure("shared-window", move |ctx| measured::shared_window(ctx, self)))
                .check(Check::structure("barrier", move |ctx| barrier(ctx, self)))
        };
        let timed = |part: Part, min: f64| {
            part.check(
                Check::performance("share-of-v1", move |ctx| share_of_v1(ctx, self, min))
                    // What makes a staged search slower than v1: a window copied by few threads, a sequence
                    // read from constant memory at different addresses per warp. Both measured.
                    .with_stand_in(move |ctx| kit::measure::skip_unmeasurable(measured::stand_in(ctx, self))),
            )
        };
        match self {
            Variant::V1 => part.check(Check::structure("global-only", measured::global_only)),
            Variant::V2 => timed(staged(part), MIN_V2_VS_V1),
            Variant::V3 => {
                let part = staged(part).check(Check::structure("sequence-in-constant", sequence_in_constant));
                timed(part, MIN_V3_VS_V1)
            }
        }
    }

    /// Puts the sequence where the kernel reads it: nothing to do for v1 and v2
    /// (a parameter), the `__constant__` array for v3 (cudaMemcpyToSymbol).
    fn prepare(self, module: &Module, seq: &Seq) -> Result<()> {
        if self != Variant::V3 {
            return Ok(());
        }
        // Context, not a new error: the verdict (missing-kernel) reads the typed cause.
        module.set_constant(SEQ_SYMBOL, seq).map_err(|e| match e.downcast_ref::<BackendError>() {
            Some(BackendError::MissingSymbol(_)) => e.context(format!(
                "search_v3.cu has no `__constant__ unsigned char seq[{SEQ_LEN}];` at file scope (TODO 1): \
                 the host copies the sequence into it before every launch, as cudaMemcpyToSymbol does"
            )),
            _ => e.context(format!("writing the sequence into `__constant__ {SEQ_SYMBOL}`")),
        })
    }

    /// Starts the kernel on `dna` (n letters); `seq` is the device copy for v1 and v2.
    fn launch_async(
        self,
        module: &Module,
        dna: &DeviceBuffer<u8>,
        seq: &DeviceBuffer<u8>,
        found: &DeviceBuffer<u8>,
    ) -> Result<()> {
        self.launch_on(module, dna.arg(), dna.len(), seq.arg(), found.arg())
    }

    /// [`Variant::launch_async`] with the buffers' addresses: `dna` holds `n` letters.
    fn launch_on(self, module: &Module, dna: Arg, n: usize, seq: Arg, found: Arg) -> Result<()> {
        let cfg = launch_config(n);
        let letters = (n as i32).into();
        match self {
            Variant::V1 | Variant::V2 => module.launch_async(self.kernel(), cfg, &[dna, letters, seq, found]),
            Variant::V3 => module.launch_async(self.kernel(), cfg, &[dna, letters, found]),
        }
    }

    /// Runs the kernel on one string and returns `found`, poisoned before the
    /// launch so that positions no thread wrote show up as such.
    fn search(self, module: &Module, case: &Case) -> Result<Vec<u8>> {
        let gpu = module.gpu();
        let dna = gpu.upload("dna", &case.dna)?;
        let seq = gpu.upload("seq", &case.seq)?;
        let found = gpu.poisoned::<u8>("found", cpu::positions(case.dna.len()))?;
        self.prepare(module, &case.seq)?;
        self.launch_async(module, &dna, &seq, &found)?;
        gpu.finish().map_err(|e| e.context(format!("running `{}` with n = {}", self.kernel(), case.dna.len())))?;
        found.read()
    }
}

/// Every string of one family; all positions of every string must be right.
fn search_family(ctx: &Ctx, v: Variant, family: &Family) -> Result<String> {
    // The same for every student of a batch: drawn and searched once per seed.
    let inputs = ctx.shared("strings+found", || {
        let cases = (family.make)(&mut ctx.rng());
        let expected: Vec<Vec<u8>> = cases.iter().map(|case| cpu::found(&case.dna, &case.seq)).collect();
        let matches: usize = expected.iter().map(|found| found.iter().filter(|&&f| f == 1).count()).sum();
        (cases, expected, matches)
    });
    let (cases, all_expected, matches) = (&inputs.0, &inputs.1, inputs.2);
    let module = ctx.kernel_module(v.kernel())?;
    let (mut wrong, mut first_error) = (0, None);
    for (i, (case, expected)) in cases.iter().zip(all_expected).enumerate() {
        let got = v.search(module, case)?;
        let what = format!(
            "found, string {} of {} ({}, sequence {})",
            i + 1,
            cases.len(),
            case.what,
            String::from_utf8_lossy(&case.seq)
        );
        if let Err(e) = check::exact(&what, expected, &got) {
            wrong += 1;
            first_error.get_or_insert(e);
        }
    }
    if let Some(e) = first_error {
        bail!("{wrong} of {} strings answered wrongly. The first: {e:#}", cases.len());
    }
    Ok(format!("{} strings, {matches} matches, every start position right", cases.len()))
}

/// The structure check `barrier`: a `__syncthreads()` in the PTX, and every
/// thread of the block reaches it (measured on a string whose last block has
/// threads without a start position).
fn barrier(ctx: &Ctx, v: Variant) -> Result<String> {
    let kernel = v.kernel();
    let k = ctx.kernel_ptx(kernel)?;
    require(k.has_barrier(), || {
        format!(
            "{kernel} has no barrier: without __syncthreads() between filling the window and reading \
             it, a thread may compare letters that another warp has not copied yet"
        )
    })?;
    kit::measure::unless_unmeasurable(measured::every_thread_at_barrier(ctx, v).map(|()| String::new()))
}

fn sequence_in_constant(ctx: &Ctx) -> Result<String> {
    let k = ctx.kernel_ptx("search_v3")?;
    match symbol_space(&ctx.build.ptx, SEQ_SYMBOL) {
        Some(".const") => {}
        Some(space) => bail!(
            "`{SEQ_SYMBOL}` is in {} memory, not constant memory: declare it \
             `__constant__ unsigned char {SEQ_SYMBOL}[{SEQ_LEN}];` (not `__device__`), so that the \
             warp's reads of the same letter are one broadcast from the constant cache",
            space.trim_start_matches('.')
        ),
        None => bail!("search_v3.cu declares no `__constant__ unsigned char {SEQ_SYMBOL}[{SEQ_LEN}];` at file scope"),
    }
    require(k.reads_constant(), || {
        format!(
            "search_v3 never reads constant memory (no ld.const in the PTX): compare the window with \
             {SEQ_SYMBOL}[k], the __constant__ array the host fills"
        )
    })?;
    kit::measure::unless_unmeasurable(measured::on_every_length(ctx, Variant::V3, measured::constant))
}

/// The state space (".const", ".global", ...) of a module-scope variable in PTX,
/// e.g. `.const .align 1 .b8 seq[8];` gives ".const". Instructions that use the
/// name (`mov.u64 %rd1, seq;`) are not declarations and are skipped.
pub fn symbol_space<'a>(ptx: &'a str, name: &str) -> Option<&'a str> {
    const SPACES: [&str; 4] = [".const", ".global", ".shared", ".local"];
    ptx.lines().find_map(|line| {
        let tokens: Vec<&str> = line.split(|c: char| c.is_whitespace() || c == ';').filter(|t| !t.is_empty()).collect();
        let declares =
            tokens.iter().any(|t| *t == name || t.strip_prefix(name).is_some_and(|rest| rest.starts_with('[')));
        if !declares || !tokens.first()?.starts_with('.') {
            return None;
        }
        tokens.iter().find(|t| SPACES.contains(t)).copied()
    })
}

/// A fresh string of uniform letters for every timed launch: the letters of
/// the correctness strings ([`inputs::random_dna`]), drawn on the device.
pub fn dna_table() -> Vec<u8> {
    kit::timed::byte_table(&inputs::LETTERS.map(|l| (l, 1.0))).expect("four letters of weight 1")
}

/// The buffers of one timing: launch `n` searches the string
/// [`Fresh::fill`] draws for it (from the run's secret key), and the grader's
/// v1 pattern computes what every start position of it must hold.
struct TimedSearch {
    letters: usize,
    dna: Fresh<u8>,
    seq: DeviceBuffer<u8>,
    found: DeviceBuffer<u8>,
    /// The v1 pattern's answer for the launch being checked.
    expected: DeviceBuffer<u8>,
    pattern: Arc<Module>,
}

impl TimedSearch {
    fn new(ctx: &Ctx, letters: usize, table: &[u8], seq: &Seq) -> Result<Self> {
        let gpu = ctx.gpu()?;
        let positions = cpu::positions(letters);
        Ok(Self {
            letters,
            dna: Fresh::bytes(ctx, "dna", letters, table)?,
            seq: gpu.upload("seq", seq)?,
            found: gpu.poisoned::<u8>("found", positions)?,
            expected: gpu.poisoned::<u8>("found (v1 pattern)", positions)?,
            pattern: ctx.yardstick("search_v1_pattern", include_str!("../yardsticks/search_v1_pattern.cu"))?,
        })
    }

    /// The v1 pattern's arguments, writing into `found`.
    fn pattern_args(&self, found: &DeviceBuffer<u8>) -> [Arg; 4] {
        [self.dna.arg(), (self.letters as i32).into(), self.seq.arg(), found.arg()]
    }

    /// Launch `launch`'s string, and `found` poisoned (not timed).
    fn prepare(&self, launch: usize) -> Result<()> {
        self.dna.fill(launch)?;
        self.found.poison()
    }

    fn launch(&self, v: Variant, module: &Module) -> Result<()> {
        v.launch_on(module, self.dna.arg(), self.letters, self.seq.arg(), self.found.arg())
    }

    /// The string is still launch `launch`'s, and every start position of
    /// `found` holds what the v1 pattern finds in it, compared on the device.
    fn check(&self, launch: usize) -> Result<()> {
        self.dna.intact(launch)?;
        self.expected.poison()?;
        self.pattern.launch("search_v1_pattern", launch_config(self.letters), &self.pattern_args(&self.expected))?;
        let n = self.letters;
        kit::timed::same_as_expected("found", &self.expected, &self.found, |_| format!(" (n = {n})"))
    }
}

/// Times the part's kernel against the grader's v1 pattern, both on fresh
/// random strings, and checks every start position of every timed launch.
fn share_of_v1(ctx: &Ctx, v: Variant, min_ratio: f64) -> Result<String> {
    if let Some(g) = ctx.gpu().ok().filter(|g| !g.capabilities().times_kernels) {
        return Err(Skip(format!("timing needs a real GPU, not the {} backend", g.info().backend)).into());
    }
    // One sequence for the run, a new string for every launch: about one
    // match per 4^8 = 65536 positions, ~1000 per launch.
    let seq_host = inputs::random_seq(&mut ctx.rng());
    let module = ctx.kernel_module(v.kernel())?;
    let gpu = module.gpu();
    let timed = TimedSearch::new(ctx, PERF_LETTERS, &dna_table(), &seq_host)?;
    let cfg = launch_config(PERF_LETTERS);
    timed.dna.fill(0)?;
    let base =
        ctx.time_yardstick(&timed.pattern, "search_v1_pattern", cfg, &timed.pattern_args(&timed.expected), || {
            timed.expected.poison()
        })?;
    v.prepare(module, &seq_host)?;
    let mine = kit::timed::student(gpu, |n| timed.prepare(n), |_| timed.launch(v, module), |n| timed.check(n))?;
    kit::perf::require_speedup(v.kernel(), &mine, &base, "the v1 pattern (global memory only)", min_ratio)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_per_start_position() {
        assert_eq!(launch_config(8).grid.0, 1);
        assert_eq!(launch_config(100).grid.0, 1);
        assert_eq!(launch_config(263).grid.0, 1);
        assert_eq!(launch_config(264).grid.0, 2);
        // The seed: 16377 positions in 64 blocks (the last with 249 threads busy).
        assert_eq!(launch_config(16384).grid.0, 64);
        assert_eq!(launch_config(inputs::MILLIONS_LETTERS).grid.0, 11_719);
        assert_eq!(launch_config(16384).block, (256, 1, 1));
        assert_eq!(launch_config(16384).shared_bytes, 0);
        assert_eq!(WINDOW, 263);
    }

    #[test]
    fn every_part_has_its_checks() {
        let ex = exercise();
        let names = ex.check_names();
        assert_eq!(names.len(), 3);
        for (part, checks) in &names {
            assert_eq!(checks.iter().filter(|c| c.starts_with("correct::")).count(), FAMILIES.len(), "{part}");
            let unique: std::collections::BTreeSet<&String> = checks.iter().collect();
            assert_eq!(unique.len(), checks.len(), "{part}: duplicate check names");
        }
        assert!(names[0].1.contains(&"structure::global-only".to_string()));
        assert!(!names[0].1.iter().any(|c| c.starts_with("perf::")));
        assert!(names[2].1.contains(&"structure::sequence-in-constant".to_string()));
        assert!(names[1].1.contains(&"perf::share-of-v1".to_string()));
    }

    /// Runs `f` in the context of `file`'s timed check on the simulator.
    fn on_sim(file: &str, f: impl FnOnce(&Ctx)) {
        kit::trial::on_sim("ex04::v2::perf::share-of-v1", file, |text| text, f);
    }

    /// Prepares, launches and checks launch `n`, as kit::timed::student does.
    fn timed_launch(t: &TimedSearch, v: Variant, module: &Module, n: usize) -> Result<()> {
        t.prepare(n)?;
        t.launch(v, module)?;
        module.gpu().finish()?;
        t.check(n)
    }

    #[test]
    fn timed_launches_are_checked_in_full_against_the_v1_pattern() {
        // Mostly A and a sequence of eight: a match at about a third of the
        // positions, so that two launches' answers differ in many places.
        let table = kit::timed::byte_table(&[(b'A', 7.0), (b'C', 1.0)]).unwrap();
        let seq = *b"AAAAAAAA";
        for (v, file) in [
            (Variant::V2, "reference/ex04-dna/kernels/search_v2.cu"),
            (Variant::V3, "reference/ex04-dna/kernels/search_v3.cu"),
        ] {
            on_sim(file, |ctx| {
                let letters = 3 * THREADS + 100;
                let t = TimedSearch::new(ctx, letters, &table, &seq).unwrap();
                let module = ctx.kernel_module(v.kernel()).unwrap();
                v.prepare(module, &seq).unwrap();
                for n in 0..3 {
                    timed_launch(&t, v, module, n).unwrap_or_else(|e| panic!("{file}, launch {n}: {e:#}"));
                    let found = t.found.read().unwrap();
                    let ones = found.iter().filter(|&&f| f == 1).count();
                    assert!(ones > letters / 5 && ones < letters / 2, "{ones} matches");
                }
                // Launch 0's answer, checked as launch 1's: its string is not launch 1's.
                t.prepare(0).unwrap();
                t.launch(v, module).unwrap();
                module.gpu().finish().unwrap();
                t.dna.fill(1).unwrap();
                let e = format!("{:#}", t.check(1).unwrap_err());
                assert!(e.contains("`found`[") && e.contains(&format!("(n = {letters}): expected")), "{e}");
                // A kernel that wrote into its string.
                t.prepare(2).unwrap();
                t.launch(v, module).unwrap();
                module.gpu().finish().unwrap();
                t.dna.overwrite_one(2, 700).unwrap();
                let e = t.check(2).unwrap_err();
                let modified = e.downcast_ref::<kit::gpu::InputModified>().expect("input-modified");
                assert_eq!((modified.buffer.as_str(), modified.index), ("dna", 700));
                // Unwritten positions are named as such.
                t.prepare(0).unwrap();
                let e = format!("{:#}", t.check(0).unwrap_err());
                assert!(e.contains("`found`[0]") && e.contains("nothing (never written)"), "{e}");
            });
        }
    }

    /// The cheat case (grader/tests/cheats) acts only at the timed size: on the
    /// simulator it passes every other check of its part, and the stand-in.
    #[test]
    fn the_cheat_passes_every_check_but_the_timing_on_the_simulator() {
        let file = "grader/tests/cheats/ex04-dna-shifts-last-found/exercises/ex04-dna/kernels/search_v2.cu";
        kit::trial::passes_every_check_on_sim(&exercise(), "v2", file);
    }

    #[test]
    fn the_timed_string_has_the_letters_of_the_correctness_strings() {
        let table = dna_table();
        for letter in inputs::LETTERS {
            assert_eq!(table.iter().filter(|&&b| b == letter).count(), table.len() / 4);
        }
    }

    #[test]
    fn finds_the_state_space_of_seq() {
        let ptx = ".version 8.8\n.const .align 1 .b8 seq[8];\n.visible .entry search_v3(\n";
        assert_eq!(symbol_space(ptx, "seq"), Some(".const"));
        assert_eq!(symbol_space(".global .align 1 .b8 seq[8];", "seq"), Some(".global"));
        assert_eq!(symbol_space(".visible .const .align 1 .b8 seq[8] = {65, 67};", "seq"), Some(".const"));
        assert_eq!(symbol_space("\tmov.u64 %rd8, seq;\n.global .align 1 .b8 seq[8];", "seq"), Some(".global"));
        assert_eq!(symbol_space(".const .align 1 .b8 sequence[8];", "seq"), None);
        assert_eq!(symbol_space("ld.const.u8 %rs1, [seq];", "seq"), None);
    }
}
