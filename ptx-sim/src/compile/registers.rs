//! Register allocation: every PTX register, constant and special register
//! becomes a slot of the per-warp register file (predicates have their own
//! file). Constants and specials get one shared, pre-filled slot each.

use super::context::KCtx;
use crate::ir::*;

/// `%envreg7` for `prefix` `%envreg` and `count` 32: a numbered register in range.
fn is_numbered(name: &str, prefix: &str, count: u32) -> bool {
    name.strip_prefix(prefix).and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n < count)
}

impl KCtx<'_> {
    pub(super) fn new_slot(&mut self) -> Reg {
        let s = self.nslots * LANES as u32;
        self.nslots += 1;
        s
    }
    pub(super) fn new_pred(&mut self) -> Pred {
        let p = self.npreds as Pred;
        self.npreds += 1;
        p
    }
    pub(super) fn konst(&mut self, bits: u64) -> Reg {
        if let Some(&r) = self.consts.get(&bits) {
            return r;
        }
        let r = self.new_slot();
        self.consts.insert(bits, r);
        r
    }
    pub(super) fn special(&mut self, s: Special) -> Reg {
        if let Some(&r) = self.specials.get(&s) {
            return r;
        }
        let r = self.new_slot();
        self.specials.insert(s, r);
        r
    }

    pub(super) fn special_of(name: &str) -> Option<Special> {
        let dim = |s: &str| match s {
            "x" => Some(0u8),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some((base, d)) = name.split_once('.') {
            let d = dim(d)?;
            return Some(match base {
                "%tid" => Special::Tid(d),
                "%ntid" => Special::Ntid(d),
                // A launch without clusters: every CTA is a cluster of one.
                "%ctaid" | "%clusterid" => Special::Ctaid(d),
                "%nctaid" | "%nclusterid" => Special::Nctaid(d),
                "%cluster_ctaid" => Special::Zero,
                "%cluster_nctaid" => Special::One,
                _ => return None,
            });
        }
        Some(match name {
            "%laneid" => Special::LaneId,
            "%warpid" => Special::WarpId,
            "%nwarpid" => Special::NWarpId,
            "%smid" => Special::SmId,
            "%nsmid" => Special::NSmId,
            "%gridid" => Special::GridId,
            "%lanemask_eq" => Special::LaneMaskEq,
            "%lanemask_lt" => Special::LaneMaskLt,
            "%lanemask_le" => Special::LaneMaskLe,
            "%lanemask_gt" => Special::LaneMaskGt,
            "%lanemask_ge" => Special::LaneMaskGe,
            "%dynamic_smem_size" => Special::DynamicSmemSize,
            "%total_smem_size" => Special::TotalSmemSize,
            "%aggr_smem_size" => Special::AggrSmemSize,
            // `warpSize` (NVRTC writes the predefined identifier).
            "WARP_SZ" => Special::WarpSize,
            "%cluster_ctarank" | "%is_explicit_cluster" | "%current_graph_exec" => Special::Zero,
            "%cluster_nctarank" => Special::One,
            // No shared memory is reserved by the system here.
            n if n.starts_with("%reserved_smem_offset_") => Special::Zero,
            // Driver-defined registers as a GPU shows them; its performance monitors read 0 there too.
            n if is_numbered(n, "%envreg", 32) => Special::EnvReg(n["%envreg".len()..].parse().unwrap_or(0)),
            n if is_numbered(n, "%pm", 8) => Special::Zero,
            n if n.strip_suffix("_64").is_some_and(|b| is_numbered(b, "%pm", 8)) => Special::Zero,
            _ => return None,
        })
    }
}
