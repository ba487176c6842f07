//! The race check's side of `crate::discard`: a deferred load's shared read is
//! held per warp until its sink runs, then recorded for the lanes that keep
//! the value (the others threw it away: no read of the program).

use super::Exec;
use crate::ir::*;
use crate::race::Kind;

/// A deferred load's shared read, waiting for its sink.
pub(super) struct Pending {
    pub warp: usize,
    pub load_pc: u32,
    pub sink: Sink,
    pub len: usize,
    pub lanes: u32,
    pub offs: [usize; 32],
}

impl Exec<'_> {
    /// At instruction `pc` of warp `w`, run with lanes `emask` (its guard
    /// applied): records the reads of the loads whose sink it is.
    pub(super) fn settle_deferred(&mut self, w: usize, pc: u32, emask: u32) {
        let Some(rd) = &mut self.race else { return };
        let pb = w * self.npreds;
        let mut i = 0;
        while i < self.deferred.len() {
            let d = &self.deferred[i];
            if d.warp != w || d.sink.pc != pc {
                i += 1;
                continue;
            }
            let d = self.deferred.swap_remove(i);
            let keep = match (d.sink.selp_a, &self.k.code[pc as usize].op) {
                (Some(side), &Op::Selp { p, neg, .. }) => {
                    let pv = self.preds[pb + p as usize];
                    let picks_a = if neg { !pv } else { pv };
                    if side {
                        picks_a
                    } else {
                        !picks_a
                    }
                }
                _ => u32::MAX,
            };
            super::ops::lanes(d.lanes & emask & keep, |l| {
                rd.access(d.offs[l], d.len, (w * 32 + l) as u32, d.load_pc, Kind::Read);
            });
        }
    }
}
