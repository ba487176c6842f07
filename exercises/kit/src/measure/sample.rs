//! A sample of a launch's blocks for a measurement whose grid is too large to
//! simulate whole: [`BlockSample`].
//!
//! Why a grid that large: a kernel can take the lesson's path only where its
//! block is alone on an SM (`%warpid` under its own warp count), which it is in
//! a grid of one wave and never in the timed launches, many blocks to an SM.
//! A measured launch of several waves shows such a kernel's other path in the
//! blocks of the later waves; simulating a few blocks of the first wave and a
//! few of the later ones, each placed and clocked as in the whole launch,
//! shows it at the cost of a small grid. A GPU runs the whole launch (its
//! counters count all of it).

use std::ops::Range;
use std::sync::Arc;

use anyhow::Result;
use bytemuck::Pod;
use rand::Rng;

use crate::gpu::DeviceBuffer;

/// The `(first, later)` of [`BlockSample::at_timed_size`] for a measurement
/// at the timed size: block 0 and three of the later waves'. Enough to see
/// a block's pattern (the first wave's and the later waves'), few enough
/// for the simulator at a grid of many thousand blocks.
pub const TIMED_SIZE_SAMPLE: (usize, usize) = (1, 3);

/// The blocks (linear indices, x fastest, sorted) a measured launch runs on
/// the simulator: some of its first wave (as many blocks as the simulated GPU
/// shows SMs, each alone on its SM) and some of the later ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSample {
    blocks: Arc<[u64]>,
    /// The blocks of the whole launch.
    of: u64,
}

impl BlockSample {
    /// `first` blocks of the first wave and `later` of the waves after it
    /// (all of either where it has fewer) of a grid of `blocks`, drawn by
    /// `rng`: which ones no kernel can know. As many blocks on a GPU of few
    /// SMs (many waves) as on one of many.
    pub fn first_and_later(rng: &mut impl Rng, blocks: u64, first: usize, later: usize) -> Self {
        let wave = crate::backend::sim::shown_gpu().multiprocessors.max(1) as u64;
        let first_wave = wave.min(blocks) as usize;
        let rest = (blocks - first_wave as u64) as usize;
        let mut chosen: Vec<u64> =
            rand::seq::index::sample(rng, first_wave, first.min(first_wave)).into_iter().map(|i| i as u64).collect();
        let picked = rand::seq::index::sample(rng, rest, later.min(rest));
        chosen.extend(picked.into_iter().map(|i| first_wave as u64 + i as u64));
        chosen.sort_unstable();
        Self { blocks: chosen.into(), of: blocks }
    }

    /// [`first_and_later`](Self::first_and_later) for a measurement at the
    /// timed size (most take [`TIMED_SIZE_SAMPLE`]): block 0 is always one
    /// of the first wave's. Work a kernel does once per launch usually falls
    /// to block 0 (a flag it sets, a value it records for the other blocks);
    /// sampled in one run of 132 it would give one verdict in that run (a
    /// race, say) and another in the rest.
    pub fn at_timed_size(rng: &mut impl Rng, blocks: u64, (first, later): (usize, usize)) -> Self {
        let drawn = Self::first_and_later(rng, blocks, first, later);
        if drawn.blocks.contains(&0) || first == 0 {
            return drawn;
        }
        // The first of the drawn first-wave blocks (the smallest index) gives its place to block 0.
        let mut chosen = drawn.blocks.to_vec();
        chosen[0] = 0;
        Self { blocks: chosen.into(), of: blocks }
    }

    /// The sampled blocks' linear indices, in order.
    pub fn blocks(&self) -> &[u64] {
        &self.blocks
    }

    /// The sample's share of the launch's blocks: what the GPU's counters of
    /// the whole launch (where they are read) are scaled by before they stand
    /// beside the sample's figures, so that a figure per lane, per element or
    /// per block (the GPU's sectors over the simulator's lanes) means what it
    /// means on the simulator.
    pub fn share(&self) -> f64 {
        self.blocks.len() as f64 / self.of.max(1) as f64
    }

    /// The (row, column) of a `rows` x `cols` output that the sampled blocks
    /// of a 2D grid `grid_x` blocks wide compute, where each block computes a
    /// `tile` x `tile` square of it (x along the columns), block by block.
    pub fn elements(&self, grid_x: u32, tile: usize, rows: usize, cols: usize) -> Vec<(usize, usize)> {
        let mut at = Vec::new();
        for &b in self.blocks() {
            let (r0, c0) = ((b / grid_x as u64) as usize * tile, (b % grid_x as u64) as usize * tile);
            at.extend((r0..(r0 + tile).min(rows)).flat_map(|r| (c0..(c0 + tile).min(cols)).map(move |c| (r, c))));
        }
        at
    }

    /// The elements of a 1D output of `len` that the sampled blocks of a
    /// linear grid compute, where each block computes `per_block` consecutive
    /// ones, block by block.
    pub fn linear_elements(&self, per_block: usize, len: usize) -> Vec<usize> {
        let block = |b: u64| (b as usize * per_block).min(len)..((b as usize + 1) * per_block).min(len);
        self.blocks().iter().flat_map(|&b| block(b)).collect()
    }

    /// What the simulator's configuration takes (`ptx_sim::SimConfig::blocks`).
    pub(crate) fn shared(&self) -> Arc<[u64]> {
        self.blocks.clone()
    }
}

/// What the sampled blocks of a measured launch wrote into `out` (made by
/// [`crate::Gpu::poisoned_generated`]), as (index, value): on the simulator,
/// whatever they wrote, wherever they wrote it (a kernel may give its blocks
/// other elements than the README's mapping does). Where they wrote nothing,
/// or a GPU ran the whole launch (the counters' run), the elements `readme`
/// gives the sampled blocks: poison there reads as never written.
pub fn sampled_writes<T: Pod>(out: &DeviceBuffer<T>, readme: impl FnOnce() -> Vec<usize>) -> Result<Vec<(usize, T)>> {
    match out.written_where_touched()? {
        Some(written) if !written.is_empty() => Ok(written),
        _ => {
            let at = readme();
            let got = out.read_elements(at.iter().copied())?;
            Ok(at.into_iter().zip(got).collect())
        }
    }
}

/// The elements of `input` (made by [`crate::Gpu::upload_generated`]) that
/// the sampled blocks of a measured launch read, as ranges in order: on the
/// simulator, whatever they read (a reduction's sampled sums must add up to
/// those elements'); where a GPU ran the whole launch, all of them.
pub fn sampled_reads<T: Pod>(input: &DeviceBuffer<T>) -> Result<Vec<Range<usize>>> {
    // One range: every element, not the list of its indices.
    #[allow(clippy::single_range_in_vec_init)]
    Ok(input.read_by_kernels()?.unwrap_or_else(|| vec![0..input.len()]))
}

/// The stretches of `at` (ranges of element indices, as [`sampled_reads`]
/// gives them) in pieces of at most 65 536 elements, as (first, length): a
/// reference computed by position over what the sampled blocks read, in
/// buffers of a fixed size.
pub fn in_pieces(at: &[Range<usize>]) -> impl Iterator<Item = (usize, usize)> + '_ {
    const PIECE: usize = 1 << 16;
    at.iter().flat_map(|r| r.clone().step_by(PIECE).map(move |start| (start, PIECE.min(r.end - start))))
}

/// The elements in both `a` and `b` (ranges in order, as [`sampled_reads`]
/// gives them): what a launch read of two inputs it combines element by element.
pub fn in_both(a: &[Range<usize>], b: &[Range<usize>]) -> Vec<Range<usize>> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        let (lo, hi) = (a[i].start.max(b[j].start), a[i].end.min(b[j].end));
        if lo < hi {
            out.push(lo..hi);
        }
        if a[i].end < b[j].end {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_of_the_first_wave_give_their_share_and_the_draw_follows_the_seed() {
        let wave = crate::backend::sim::shown_gpu().multiprocessors as u64;
        let blocks = 2 * wave + 25;
        let draw = |seed| BlockSample::first_and_later(&mut crate::inputs::rng_for(seed, "sample"), blocks, 6, 12);
        let s = draw(1);
        assert_eq!(s.blocks().len(), 18);
        assert!(s.blocks().windows(2).all(|w| w[0] < w[1]) && *s.blocks().last().unwrap() < blocks);
        assert_eq!(s.blocks().iter().filter(|&&b| b < wave).count(), 6);
        assert_eq!((draw(1), draw(1) != draw(2)), (s, true));
        let timed = |seed| BlockSample::at_timed_size(&mut crate::inputs::rng_for(seed, "sample"), blocks, (1, 3));
        assert!((1..40).all(|seed| timed(seed).blocks()[0] == 0 && timed(seed).blocks()[1] >= wave));
        assert_eq!(timed(1).blocks().len(), 4);
        let short = BlockSample::first_and_later(&mut crate::inputs::rng_for(1, "sample"), 4, 6, 12);
        assert_eq!(short.blocks(), &[0, 1, 2, 3]);
        // blocks 1 and 3 of a grid two wide, 2 x 2 tiles of a 3 x 3 output: the edge cut off
        let two = BlockSample { blocks: vec![1, 3].into(), of: 4 };
        assert_eq!(two.share(), 0.5);
        let at = two.elements(2, 2, 3, 3);
        assert_eq!(at, [(0, 2), (1, 2), (2, 2)]);
        // blocks 1 and 3 of 4 consecutive elements each, of 14: the last block cut off
        assert_eq!(two.linear_elements(4, 14), [4, 5, 6, 7, 12, 13]);
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // lists of ranges, some of one
    fn the_elements_read_of_both_inputs_are_where_their_ranges_overlap() {
        assert_eq!(in_both(&[0..4, 8..12, 20..30], &[2..10, 11..25]), [2..4, 8..10, 11..12, 20..25]);
        assert_eq!(in_both(&[0..4], &[]), []);
        assert_eq!(in_both(&[0..4, 6..8], &[4..6]), []);
        let pieces: Vec<_> = in_pieces(&[3..5, 10..(10 + (1 << 16) + 1)]).collect();
        assert_eq!(pieces, [(3, 2), (10, 1 << 16), (10 + (1 << 16), 1)]);
    }
}
