//! Instruction modifiers (`.rn`, `.wide`, `.u32`, ...): each is consumed as the
//! instruction is understood, and any left over make it unsupported, so a
//! modifier the simulator does not model is never silently ignored.

use super::context::KCtx;
use crate::error::SimError;
use crate::ir::*;

const IGNORED_MODS: &[&str] = &[
    "uni", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "weak", "mmio", "gpu", "sys", "cta",
    "cluster", "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "aligned", "sync",
];

fn ignorable(m: &str) -> bool {
    IGNORED_MODS.contains(&m) || m.starts_with("L1::") || m.starts_with("L2::")
}

/// The modifiers of one instruction, consumed as they are understood; any left
/// over make the instruction unsupported.
pub(super) struct Mods<'a> {
    pub(super) list: &'a [String],
    pub(super) used: Vec<bool>,
}

impl<'a> Mods<'a> {
    pub(super) fn new(list: &'a [String]) -> Self {
        Mods { list, used: vec![false; list.len()] }
    }
    pub(super) fn has(&mut self, m: &str) -> bool {
        let mut found = false;
        for (i, x) in self.list.iter().enumerate() {
            if x == m {
                self.used[i] = true;
                found = true;
            }
        }
        found
    }
    pub(super) fn any(&mut self, ms: &[&'static str]) -> Option<&'static str> {
        ms.iter().copied().find(|&m| self.has(m))
    }
    pub(super) fn types(&mut self) -> Vec<Ty> {
        let mut out = Vec::new();
        for (i, x) in self.list.iter().enumerate() {
            if let Some(t) = Ty::parse(x) {
                self.used[i] = true;
                out.push(t);
            }
        }
        out
    }
    pub(super) fn unused(&self) -> Option<&str> {
        self.list.iter().zip(&self.used).find(|(m, u)| !**u && !ignorable(m)).map(|(m, _)| m.as_str())
    }
    pub(super) fn rnd(&mut self) -> Option<Rnd> {
        Some(match self.any(&["rn", "rz", "rm", "rp", "approx", "full"])? {
            "rn" => Rnd::Rn,
            "rz" => Rnd::Rz,
            "rm" => Rnd::Rm,
            "rp" => Rnd::Rp,
            _ => Rnd::Approx,
        })
    }
}

impl KCtx<'_> {
    pub(super) fn one_type(&self, mods: &mut Mods) -> Result<Ty, SimError> {
        match mods.types().as_slice() {
            [t] => Ok(*t),
            _ => self.bad("expected exactly one type"),
        }
    }
}
