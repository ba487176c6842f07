//! A sample of a launch's blocks for a measurement whose grid is too large to
//! simulate whole: [`BlockSample`].
//!
//! Why a grid that large: a kernel can take the lesson's path only where its
//! block is alone on an SM (`%warpid` under its own warp count), which it is in
//! a grid of one wave and never in the timed launches, many blocks to an SM.
//! A measured launch of several waves shows such a kernel's other path in the
//! blocks of the later waves; simulating a few blocks of every wave, each
//! placed and clocked as in the whole launch, shows it at the cost of a small
//! grid. A GPU runs the whole launch (its counters count all of it).

use std::sync::Arc;

use rand::Rng;

/// The blocks (linear indices, x fastest, sorted) a measured launch runs on
/// the simulator: some of every wave, a wave being as many blocks as the
/// simulated GPU shows SMs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSample(Arc<[u64]>);

impl BlockSample {
    /// `per_wave` blocks of each wave of a grid of `blocks` (all of a wave
    /// with fewer), drawn by `rng`: which ones no kernel can know.
    pub fn per_wave(rng: &mut impl Rng, blocks: u64, per_wave: usize) -> Self {
        let wave = crate::backend::sim::shown_gpu().multiprocessors.max(1) as u64;
        let mut chosen = Vec::new();
        for start in (0..blocks).step_by(wave as usize) {
            let len = wave.min(blocks - start) as usize;
            let picked = rand::seq::index::sample(rng, len, per_wave.min(len));
            chosen.extend(picked.into_iter().map(|i| start + i as u64));
        }
        chosen.sort_unstable();
        Self(chosen.into())
    }

    /// The sampled blocks' linear indices, in order.
    pub fn blocks(&self) -> &[u64] {
        &self.0
    }

    /// What the simulator's configuration takes (`ptx_sim::SimConfig::blocks`).
    pub(crate) fn shared(&self) -> Arc<[u64]> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wave_gives_its_share_and_the_draw_follows_the_seed() {
        let wave = crate::backend::sim::shown_gpu().multiprocessors as u64;
        let blocks = 2 * wave + 25;
        let s = BlockSample::per_wave(&mut crate::inputs::rng_for(1, "sample"), blocks, 6);
        assert_eq!(s.blocks().len(), 18);
        assert!(s.blocks().windows(2).all(|w| w[0] < w[1]) && *s.blocks().last().unwrap() < blocks);
        for w in 0..3 {
            assert_eq!(s.blocks().iter().filter(|&&b| b / wave == w).count(), 6, "wave {w}");
        }
        let again = BlockSample::per_wave(&mut crate::inputs::rng_for(1, "sample"), blocks, 6);
        let other = BlockSample::per_wave(&mut crate::inputs::rng_for(2, "sample"), blocks, 6);
        assert_eq!(s, again);
        assert_ne!(s, other);
        let short = BlockSample::per_wave(&mut crate::inputs::rng_for(1, "sample"), 4, 6);
        assert_eq!(short.blocks(), &[0, 1, 2, 3]);
    }
}
