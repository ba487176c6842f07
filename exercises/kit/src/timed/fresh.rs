//! Timed inputs that no kernel can predict: [`Fresh`].
//!
//! Every launch of a timing gets inputs of full entropy, generated on the
//! device by the grader's own kernel (`kernels/fresh.cu`, Philox4x32-10) from
//! a key drawn from the operating system for each run, the input and the
//! launch's number: no block that repeats, no value that is its index, no
//! launch that sees a shifted view of another's. Generating 256 MB takes a
//! fraction of a millisecond on an H100, outside the timed events.
//!
//! The same generator runs on the host ([`Fresh::host_values`]), so that a
//! test (or a message) knows what any element of any launch was.

use std::sync::Arc;

use anyhow::{bail, ensure, Result};
use bytemuck::Pod;

use crate::backend::{Arg, LaunchConfig};
use crate::exercise::Ctx;
use crate::gpu::{DeviceBuffer, Gpu, InputModified, Module};

/// What the elements of a [`Fresh`] input are drawn from.
#[derive(Debug, Clone)]
pub enum Values {
    /// Integers uniform in `lo..=hi`.
    Ints { lo: i32, hi: i32 },
    /// Floats `k * 2^-shift`, `k` uniform in `lo..=hi`: small dyadic numbers,
    /// whose products and sums of thousands are exact in `float`, so every
    /// correct kernel, in whatever order it adds, gives the same bits, and a
    /// timed output can be compared exactly with the grader's.
    Dyadic { lo: i32, hi: i32, shift: u32 },
    /// Floats uniform in `[lo, hi)`, 24 random bits each.
    Uniform { lo: f32, hi: f32 },
    /// Full-precision floats spread over `binades` binades below 1: the
    /// exponent uniform (`2^-e` for `e` in `1..=binades`), all 23 bits of
    /// the significand random, negative half the time if `signed`: values in
    /// `[2^-binades, 1)` (or `(-1, -2^-binades]` too), as real data spreads
    /// over magnitudes. A kernel that reads them in fixed point (integers,
    /// bytes, multiples of 2^-12) loses the small ones entirely, one that
    /// reads them in a narrower float keeps fewer bits: neither stays within
    /// a float sum's rounding bound.
    Wide { binades: u32, signed: bool },
    /// Bytes drawn through a table of [`BYTE_TABLE`] entries (a byte value as
    /// many times as its share of the distribution: text, DNA letters);
    /// [`byte_table`] makes one.
    Bytes(Vec<u8>),
}

/// An input regenerated before every timed launch, from the run's secret
/// key: call [`Fresh::fill`] in the timing's `prepare(n)` and
/// [`Fresh::intact`] in its `check(n)`. One buffer: the kernel gets the same
/// address every launch and different values.
///
/// ```no_run
/// # fn demo(ctx: &kit::Ctx) -> anyhow::Result<()> {
/// let gpu = ctx.gpu()?;
/// let x = kit::timed::Fresh::dyadic(ctx, "x", 1 << 26, 0, 2047, 11)?; // k / 2048, k in 0..=2047
/// x.fill(0)?; // launch 0's values
/// # Ok(())
/// # }
/// ```
pub struct Fresh<T: Pod> {
    buffer: DeviceBuffer<T>,
    generator: Arc<Module>,
    key: [u32; 2],
    values: Values,
    table: Option<DeviceBuffer<u8>>,
    first: DeviceBuffer<u64>,
    /// Read after every fill where kernels are timed (see [`Fresh::fill`]).
    settle: Option<Arc<DeviceBuffer<u32>>>,
}

/// Entries of a byte table: 12 random bits a byte, so that a distribution
/// can give each of the 256 values 1/4096 (text's stray bytes).
pub const BYTE_TABLE: usize = 4096;

/// The generator's source, compiled once per run as one of the grader's kernels.
const SOURCE: &str = include_str!("../../kernels/fresh.cu");

impl Fresh<i32> {
    /// `len` integers uniform in `lo..=hi` per launch.
    pub fn ints(ctx: &Ctx, name: &str, len: usize, lo: i32, hi: i32) -> Result<Self> {
        ensure!(lo <= hi, "`{name}`: empty range {lo}..={hi}");
        Self::new(ctx, name, len, Values::Ints { lo, hi })
    }
}

impl Fresh<f32> {
    /// `len` floats `k * 2^-shift` with `k` uniform in `lo..=hi` per launch
    /// (see [`Values::Dyadic`]).
    pub fn dyadic(ctx: &Ctx, name: &str, len: usize, lo: i32, hi: i32, shift: u32) -> Result<Self> {
        ensure!(lo <= hi && shift < 64, "`{name}`: empty range {lo}..={hi} or shift {shift}");
        ensure!(lo.unsigned_abs().max(hi.unsigned_abs()) < 1 << 24, "`{name}`: {lo}..={hi} is not exact in float");
        Self::new(ctx, name, len, Values::Dyadic { lo, hi, shift })
    }

    /// `len` full-precision floats over `binades` binades below 1 per launch
    /// (see [`Values::Wide`]).
    pub fn wide(ctx: &Ctx, name: &str, len: usize, binades: u32, signed: bool) -> Result<Self> {
        ensure!((1..=126).contains(&binades), "`{name}`: {binades} binades below 1 is not 1..=126");
        Self::new(ctx, name, len, Values::Wide { binades, signed })
    }

    /// `len` floats uniform in `[lo, hi)` per launch.
    pub fn uniform(ctx: &Ctx, name: &str, len: usize, lo: f32, hi: f32) -> Result<Self> {
        ensure!(lo < hi, "`{name}`: empty range [{lo}, {hi})");
        Self::new(ctx, name, len, Values::Uniform { lo, hi })
    }
}

impl Fresh<u8> {
    /// `len` bytes per launch, each `table[r]` for a random `r` in
    /// 0..[`BYTE_TABLE`] (see [`byte_table`]).
    pub fn bytes(ctx: &Ctx, name: &str, len: usize, table: &[u8]) -> Result<Self> {
        ensure!(table.len() == BYTE_TABLE, "`{name}`: a byte table has {BYTE_TABLE} entries, not {}", table.len());
        Self::new(ctx, name, len, Values::Bytes(table.to_vec()))
    }
}

impl<T: Pod> Fresh<T> {
    fn new(ctx: &Ctx, name: &str, len: usize, values: Values) -> Result<Self> {
        let element = if matches!(values, Values::Bytes(_)) { 1 } else { 4 };
        ensure!(std::mem::size_of::<T>() == element, "`{name}`: {values:?} makes {element}-byte elements");
        let gpu = ctx.gpu()?;
        let generator = ctx.yardstick("<kit>/fresh", SOURCE)?;
        let table = match &values {
            // Not an input of the student's kernel: not watched.
            Values::Bytes(table) => Some(zeros_with(gpu, "fresh.table", &table[..])?),
            _ => None,
        };
        super::note_timed_input(ctx.check_name, name, len);
        let settle = gpu.capabilities().times_kernels.then(|| ctx.env.settle_scratch(gpu)).transpose()?;
        if let Some(scratch) = &settle {
            // The timing that follows times the generator's witness beside the student's kernel.
            super::witness::offer(generator.clone(), scratch.clone())?;
        }
        Ok(Self {
            // Not watched as an uploaded input: `intact` checks it against the generator.
            buffer: gpu.zeros::<T>(name, len)?,
            generator,
            key: ctx.env.fresh_key(ctx.check_name, name),
            values,
            table,
            first: gpu.zeros::<u64>("fresh.first", 1)?,
            settle,
        })
    }

    /// Writes launch `launch`'s values (not timed: call it in `prepare`).
    /// Where kernels are timed it then reads a scratch buffer twice the L2
    /// cache, so that the lines the fill left dirty are written back before
    /// the launch, not during it.
    pub fn fill(&self, launch: usize) -> Result<()> {
        self.run(launch, false)?;
        let Some(scratch) = &self.settle else { return Ok(()) };
        let words = (scratch.len() / 4) as u64;
        let blocks = self.generator.gpu().info().multiprocessors * 8;
        let args = [scratch.arg(), words.into(), self.first.arg()];
        self.generator.launch("fresh_settle", LaunchConfig::linear(blocks, 256), &args)
    }

    /// Fails with [`InputModified`] unless the buffer still holds launch
    /// `launch`'s values: a kernel that wrote into its input (call it in
    /// `check`, before anything reads the output).
    pub fn intact(&self, launch: usize) -> Result<()> {
        self.first.write(&[u64::MAX])?;
        self.run(launch, true)?;
        let first = self.first.read()?[0];
        if first == u64::MAX {
            return Ok(());
        }
        let index = first as usize;
        let show = |bytes: &[u8]| crate::gpu::show(std::any::type_name::<T>(), bytes);
        let found = self.buffer.read_range(index, 1)?;
        let uploaded = self.host_values(launch, index, 1);
        // Put it back, so that later launches are not blamed for it.
        self.fill(launch)?;
        Err(InputModified {
            buffer: self.buffer.name().into(),
            argument: String::new(),
            index,
            uploaded: show(bytemuck::cast_slice(&uploaded)),
            found: show(bytemuck::cast_slice(&found)),
        }
        .into())
    }

    /// The kernel argument: the buffer (the same every launch).
    pub fn arg(&self) -> Arg {
        self.buffer.arg()
    }

    /// The device buffer, for the grader's own kernels that compute the expected output.
    pub fn buffer(&self) -> &DeviceBuffer<T> {
        &self.buffer
    }

    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    /// Elements `start..start + count` of launch `launch`, computed on the
    /// host exactly as the device does.
    pub fn host_values(&self, launch: usize, start: usize, count: usize) -> Vec<T> {
        let mut out = vec![T::zeroed(); count];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
        match &self.values {
            Values::Bytes(table) => {
                for (j, b) in bytes.iter_mut().enumerate() {
                    let i = start + j;
                    // Half-word i % 16 of the two Philox blocks of group i / 16, as fresh.cu takes them.
                    let half = i % 16;
                    let word = philox(2 * (i as u64 / 16) + half as u64 / 8, launch as u32, 0, self.key)[half % 8 / 2];
                    *b = table[((word >> (16 * (half % 2))) & 0xFFF) as usize];
                }
            }
            values => {
                for (j, chunk) in bytes.chunks_exact_mut(4).enumerate() {
                    let i = start + j;
                    let u = philox(i as u64 / 4, launch as u32, 0, self.key)[i % 4];
                    chunk.copy_from_slice(&value_of(values, u).to_le_bytes());
                }
            }
        }
        out
    }

    /// For tests of a check, a kernel that wrote into its input: element
    /// `index` becomes launch `launch`'s value with its lowest bit flipped,
    /// so never the value uploaded (a constant written there sometimes is,
    /// and the test then fails by chance).
    pub fn overwrite_one(&self, launch: usize, index: usize) -> Result<()> {
        let mut value = self.host_values(launch, index, 1);
        bytemuck::cast_slice_mut::<T, u8>(&mut value)[0] ^= 1;
        self.buffer.write_at(index, &value)
    }

    fn run(&self, launch: usize, check: bool) -> Result<()> {
        let n = self.buffer.len() as u64;
        if n == 0 {
            return Ok(());
        }
        let gpu = self.generator.gpu();
        let [k0, k1] = self.key;
        let (kernel, per_thread, mut args) = match &self.values {
            Values::Bytes(_) => {
                // Two Philox blocks make sixteen bytes.
                let table = self.table.as_ref().expect("a byte input has its table");
                let args =
                    vec![self.arg(), n.into(), k0.into(), k1.into(), (launch as u32).into(), 0u32.into(), table.arg()];
                ("fresh_bytes", 16, args)
            }
            values => {
                let (kind, lo, span, scale, lo_f, width_f) = match *values {
                    Values::Ints { lo, hi } => (0i32, lo, span(lo, hi), 1.0, 0.0, 0.0),
                    Values::Dyadic { lo, hi, shift } => (1, lo, span(lo, hi), (-(shift as f32)).exp2(), 0.0, 0.0),
                    Values::Uniform { lo, hi } => (2, 0, 0, 1.0, lo, hi - lo),
                    Values::Wide { binades, signed } => (3, signed as i32, binades, 1.0, 0.0, 0.0),
                    Values::Bytes(_) => unreachable!(),
                };
                let args = vec![
                    self.arg(),
                    n.into(),
                    k0.into(),
                    k1.into(),
                    (launch as u32).into(),
                    0u32.into(),
                    kind.into(),
                    lo.into(),
                    span.into(),
                    scale.into(),
                    lo_f.into(),
                    width_f.into(),
                ];
                ("fresh_words", 4, args)
            }
        };
        args.extend([(check as i32).into(), self.first.arg()]);
        let threads = n.div_ceil(per_thread);
        let blocks = threads.div_ceil(256).min(gpu.info().multiprocessors as u64 * 16).max(1);
        self.generator.launch(kernel, LaunchConfig::linear(blocks as u32, 256), &args)
    }
}

/// `hi - lo + 1` as the kernel takes it (0 for all 2^32 values).
fn span(lo: i32, hi: i32) -> u32 {
    (hi as i64 - lo as i64 + 1) as u32
}

/// One 32-bit element from the random word `u`, as `value_of` in fresh.cu.
fn value_of(values: &Values, u: u32) -> u32 {
    let from_span = |lo: i32, hi: i32| {
        let s = span(lo, hi);
        lo.wrapping_add(if s == 0 { u } else { ((u as u64 * s as u64) >> 32) as u32 } as i32)
    };
    match *values {
        Values::Ints { lo, hi } => from_span(lo, hi) as u32,
        Values::Dyadic { lo, hi, shift } => (from_span(lo, hi) as f32 * (-(shift as f32)).exp2()).to_bits(),
        Values::Uniform { lo, hi } => ((hi - lo).mul_add((u >> 8) as f32 * (1.0 / 16_777_216.0), lo)).to_bits(),
        Values::Wide { binades, signed } => wide_bits(u, binades, signed),
        Values::Bytes(_) => unreachable!("bytes come four to a word"),
    }
}

/// A [`Values::Wide`] element from the random word `u`, as `value_of` in
/// fresh.cu: the low 23 bits are the significand, the next 8 pick the
/// binade, the top bit the sign (where signed).
fn wide_bits(u: u32, binades: u32, signed: bool) -> u32 {
    let e = (((u >> 23) & 0xFF) * binades) >> 8; // 0..binades
    let sign = if signed { u & 0x8000_0000 } else { 0 };
    sign | (126 - e) << 23 | (u & 0x7F_FFFF)
}

/// Philox4x32-10 of the counter (block, launch, stream) under `key`, as in fresh.cu.
fn philox(block: u64, launch: u32, stream: u32, key: [u32; 2]) -> [u32; 4] {
    let mut c = [block as u32, (block >> 32) as u32, launch, stream];
    let [mut k0, mut k1] = key;
    for _ in 0..10 {
        let p0 = 0xD251_1F53u64 * c[0] as u64;
        let p1 = 0xCD9E_8D57u64 * c[2] as u64;
        c = [(p1 >> 32) as u32 ^ c[1] ^ k0, p1 as u32, (p0 >> 32) as u32 ^ c[3] ^ k1, p0 as u32];
        k0 = k0.wrapping_add(0x9E37_79B9);
        k1 = k1.wrapping_add(0xBB67_AE85);
    }
    c
}

/// A buffer holding `data` that is not watched as an input (a table of the grader's).
fn zeros_with<T: Pod>(gpu: &Gpu, name: &str, data: &[T]) -> Result<DeviceBuffer<T>> {
    let buf = gpu.zeros::<T>(name, data.len())?;
    buf.write(data)?;
    Ok(buf)
}

/// A table of [`BYTE_TABLE`] bytes drawn from `weights` (byte value,
/// weight): each value gets its share of the entries, at least one where its
/// weight is not 0.
///
/// ```
/// let dna = kit::timed::byte_table(&[(b'A', 1.0), (b'C', 1.0), (b'G', 1.0), (b'T', 1.0)]).unwrap();
/// assert_eq!(dna.iter().filter(|&&b| b == b'G').count(), 1024);
/// ```
pub fn byte_table(weights: &[(u8, f64)]) -> Result<Vec<u8>> {
    let total: f64 = weights.iter().map(|w| w.1).sum();
    if weights.is_empty() || total <= 0.0 || weights.iter().any(|w| w.1 < 0.0) {
        bail!("a byte table needs weights that are not negative and do not sum to 0");
    }
    let mut table = Vec::with_capacity(BYTE_TABLE);
    let mut acc = 0.0;
    for &(byte, w) in weights.iter().filter(|w| w.1 > 0.0) {
        acc += w;
        let until = ((acc / total * BYTE_TABLE as f64).round() as usize).clamp(table.len() + 1, BYTE_TABLE);
        table.resize(until, byte);
    }
    let last = table.last().copied().unwrap_or(0);
    table.resize(BYTE_TABLE, last);
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Random123 known-answer test for Philox4x32-10 (counter and key all ones).
    #[test]
    fn philox_matches_the_published_known_answer() {
        let ones = philox(u64::MAX, u32::MAX, u32::MAX, [u32::MAX, u32::MAX]);
        assert_eq!(ones, [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]);
        let zeros = philox(0, 0, 0, [0, 0]);
        assert_eq!(zeros, [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
    }

    #[test]
    fn values_stay_in_their_ranges_and_use_them() {
        let ints: Vec<i32> =
            (0..4000).map(|u| value_of(&Values::Ints { lo: -3, hi: 4 }, u * 1_073_807) as i32).collect();
        assert!(ints.iter().all(|v| (-3..=4).contains(v)));
        assert!(ints.contains(&-3) && ints.contains(&4));
        let d = Values::Dyadic { lo: 0, hi: 2047, shift: 11 };
        let f: Vec<f32> = (0..4000).map(|u| f32::from_bits(value_of(&d, u * 1_073_807))).collect();
        assert!(f.iter().all(|&v| (0.0..1.0).contains(&v) && (v * 2048.0).fract() == 0.0));
        let u = Values::Uniform { lo: -1.0, hi: 1.0 };
        assert!((0..4000).all(|x| (-1.0..1.0).contains(&f32::from_bits(value_of(&u, x * 1_073_807)))));
        assert_eq!(f32::from_bits(value_of(&u, u32::MAX)), 1.0 - 2.0 / 16_777_216.0);
        let w = Values::Wide { binades: 24, signed: false };
        let f: Vec<f32> = (0..40_000u32).map(|x| f32::from_bits(value_of(&w, x.wrapping_mul(2_654_435_761)))).collect();
        assert!(f.iter().all(|&v| v >= (-24f32).exp2() && v < 1.0), "[2^-24, 1)");
        assert!(f.iter().any(|&v| v < (-23f32).exp2()) && f.iter().any(|&v| v >= 0.5), "every binade used");
        assert!(f.iter().filter(|&&v| (v * 4096.0).fract() != 0.0).count() > 30_000, "not a fixed-point grid");
        assert!(f.iter().filter(|&&v| v.to_bits() & 1 == 1).count() > 15_000, "the last significand bit is random");
        let s = Values::Wide { binades: 3, signed: true };
        let f: Vec<f32> = (0..4000).map(|x| f32::from_bits(value_of(&s, x * 1_073_807))).collect();
        assert!(f.iter().all(|&v| (0.125..1.0).contains(&v.abs())) && f.iter().any(|&v| v < 0.0));
    }

    #[test]
    fn byte_tables_keep_every_value_with_a_weight() {
        let t = byte_table(&[(b'e', 100.0), (b'z', 0.01), (b' ', 50.0)]).unwrap();
        assert!(t.contains(&b'z'), "a rare byte still appears");
        assert!(t.iter().filter(|&&b| b == b'e').count() > 2600);
        assert!(byte_table(&[]).is_err() && byte_table(&[(1, 0.0)]).is_err());
    }
}
