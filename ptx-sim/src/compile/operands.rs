//! Operand decoding: names resolved through the scopes to registers,
//! predicates or addresses; immediates turned into constant slots; memory
//! operands turned into an address in the state space actually accessed.

use super::context::{FnScope, KCtx, Sym};
use crate::error::SimError;
use crate::ir::*;
use crate::memory::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW};
use crate::parse::ast::{self, Operand};

impl KCtx<'_> {
    pub(super) fn lookup(&self, fs: &FnScope, name: &str) -> Option<Sym> {
        for s in fs.scopes.iter().rev() {
            if let Some(x) = s.get(name) {
                return Some(*x);
            }
        }
        if let Some(&o) = self.shared.get(name) {
            return Some(Sym::Shared(o));
        }
        if let Some(g) = self.globals.get(name) {
            return Some(Sym::Global(g.addr));
        }
        if self.m.vars.iter().any(|v| v.name == name && v.space == ast::Space::Shared) {
            return Some(Sym::DynShared);
        }
        None
    }

    /// The address a symbol denotes in its own state space.
    fn sym_addr(&self, s: Sym) -> Option<u64> {
        Some(match s {
            Sym::Local(o) | Sym::Shared(o) | Sym::KParam(o) => o as u64,
            Sym::DynShared => self.dyn_offset as u64,
            Sym::Global(a) => a,
            _ => return None,
        })
    }

    fn imm_bits(&self, op: &Operand, ty: Ty) -> Option<u64> {
        Some(match (op, ty) {
            (Operand::Int(v), Ty::F(32)) => (*v as f32).to_bits() as u64,
            (Operand::Int(v), Ty::F(64)) => (*v as f64).to_bits(),
            (Operand::Int(v), _) => *v as u64,
            (Operand::F32Bits(b), Ty::F(64)) => (f32::from_bits(*b) as f64).to_bits(),
            (Operand::F32Bits(b), _) => *b as u64,
            (Operand::F64Bits(b), Ty::F(32)) => (f64::from_bits(*b) as f32).to_bits() as u64,
            (Operand::F64Bits(b), _) => *b,
            (Operand::Float(f), Ty::F(32)) => (*f as f32).to_bits() as u64,
            (Operand::Float(f), Ty::F(64)) => f.to_bits(),
            _ => return None,
        })
    }

    /// A source operand as a register slot (immediates and addresses become constant slots).
    pub(super) fn src(&mut self, fs: &FnScope, op: &Operand, ty: Ty) -> Result<Reg, SimError> {
        if let Some(b) = self.imm_bits(op, ty) {
            return Ok(self.konst(b));
        }
        match op {
            Operand::Name(n) => {
                if let Some(s) = Self::special_of(n) {
                    return Ok(self.special(s));
                }
                match self.lookup(fs, n) {
                    Some(Sym::Reg { slot, .. }) => Ok(slot),
                    Some(Sym::Pred(_)) => self.bad(format!("predicate `{n}` used as a value")),
                    Some(s) => {
                        let a = self.sym_addr(s).unwrap();
                        Ok(self.konst(a))
                    }
                    None if n.starts_with('%') => self.unsupported(format!("register `{n}`")),
                    None => self.bad(format!("unknown name `{n}`")),
                }
            }
            Operand::SymOffset(n, off) => match self.lookup(fs, n).and_then(|s| self.sym_addr(s)) {
                Some(a) => Ok(self.konst(a.wrapping_add(*off as u64))),
                None => self.bad(format!("unknown variable `{n}`")),
            },
            _ => self.bad(format!("unexpected operand {op:?}")),
        }
    }

    pub(super) fn dst(&mut self, fs: &FnScope, op: &Operand) -> Result<Reg, SimError> {
        match op {
            Operand::Name(n) if n == "_" => Ok(self.new_slot()),
            Operand::Name(n) => match self.lookup(fs, n) {
                Some(Sym::Reg { slot, .. }) => Ok(slot),
                _ => self.bad(format!("`{n}` is not a register")),
            },
            _ => self.bad(format!("bad destination {op:?}")),
        }
    }

    pub(super) fn pred_src(&mut self, fs: &FnScope, op: &Operand) -> Result<(Pred, bool), SimError> {
        match op {
            Operand::Not(x) => {
                let (p, n) = self.pred_src(fs, x)?;
                Ok((p, !n))
            }
            Operand::Int(0) => Ok((self.pred_false, false)),
            Operand::Int(_) => Ok((self.pred_true, false)),
            Operand::Name(n) => match self.lookup(fs, n) {
                Some(Sym::Pred(p)) => Ok((p, false)),
                _ => self.bad(format!("`{n}` is not a predicate")),
            },
            _ => self.bad(format!("bad predicate operand {op:?}")),
        }
    }

    pub(super) fn pred_dst(&mut self, fs: &FnScope, op: &Operand) -> Result<Pred, SimError> {
        match op {
            Operand::Name(n) if n == "_" => Ok(self.new_pred()),
            _ => match self.pred_src(fs, op)? {
                (p, false) => Ok(p),
                _ => self.bad("negated destination"),
            },
        }
    }

    /// A memory operand. Returns the address and the space to access: `ld.param` of a
    /// call-site `.param` slot becomes a local access; symbols in generic accesses
    /// become generic addresses.
    pub(super) fn addr(&mut self, fs: &FnScope, op: &Operand, space: Space) -> Result<(Addr, Space), SimError> {
        let (base, offset) = match op {
            Operand::Addr { base, offset } => (base.clone(), *offset),
            // `atom.add.u32 %r, %rd, ...` without brackets is not valid PTX, but names are harmless
            _ => return self.bad(format!("expected an address, found {op:?}")),
        };
        let Some(base) = base else {
            return Ok((Addr { base: NO_REG, base32: false, offset }, space));
        };
        let sym = match self.lookup(fs, &base) {
            Some(s) => s,
            None => return self.bad(format!("unknown name `{base}` in address")),
        };
        match sym {
            // `ld.param [%rd]` with a register base reads the kernel's parameter buffer
            Sym::Reg { slot, bits } => Ok((Addr { base: slot, base32: bits == 32, offset }, space)),
            Sym::Pred(_) => self.bad("predicate used as an address"),
            s => {
                let a = self.sym_addr(s).unwrap().wrapping_add(offset as u64);
                let abs = |a: u64| Addr { base: NO_REG, base32: false, offset: a as i64 };
                Ok(match (s, space) {
                    (Sym::Local(_), Space::KParam | Space::Local) => (abs(a), Space::Local),
                    (Sym::Local(_), Space::Generic) => (abs(a + LOCAL_WINDOW), Space::Generic),
                    (Sym::Shared(_) | Sym::DynShared, Space::Generic) => (abs(a + SHARED_WINDOW), Space::Generic),
                    (Sym::KParam(_), Space::Generic) => (abs(a + PARAM_WINDOW), Space::Generic),
                    (Sym::Shared(_) | Sym::DynShared, Space::Shared)
                    | (Sym::KParam(_), Space::KParam)
                    | (Sym::Global(_), Space::Global | Space::Const | Space::Generic) => (abs(a), space),
                    _ => return self.bad(format!("`{base}` is not in the {} state space", space.name())),
                })
            }
        }
    }
}
