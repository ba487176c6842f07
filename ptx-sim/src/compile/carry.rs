//! Compiling extended-precision integer arithmetic: `add.cc`, `addc`, `sub.cc`,
//! `subc`, `mad.lo.cc`, `madc.hi`, ... (libdevice's argument reduction for
//! `sinf`/`cosf` of large arguments, 64-bit multiplies on 32-bit halves). The
//! carry flag is one hidden register per thread.

use super::context::{FnScope, KCtx};
use super::mods::Mods;
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast;

impl KCtx<'_> {
    /// The op of an instruction that reads or writes the carry flag; `None` when
    /// `ins` is not one.
    pub(super) fn carry(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Option<Op>, SimError> {
        let name = ins.opcode.as_str();
        let cin = matches!(name, "addc" | "subc" | "madc");
        let is_cc = ins.mods.iter().any(|m| m == "cc");
        let sets_carry = is_cc && matches!(name, "add" | "sub" | "mad");
        if !(cin || sets_carry) {
            return Ok(None);
        }
        let cout = mods.has("cc");
        let mad = name.starts_with("mad");
        let op = match (mad, name.starts_with("sub"), mods.has("hi")) {
            (true, _, true) => CarryOp::MadHi,
            (true, _, false) => {
                mods.has("lo");
                CarryOp::MadLo
            }
            (false, true, _) => CarryOp::Sub,
            (false, false, _) => CarryOp::Add,
        };
        let t = self.one_type(mods)?;
        if !matches!(t.bits(), 32 | 64) || t.is_float() {
            return self.unsupported(&ins.text);
        }
        let ops = &ins.ops;
        let want = if mad { 4 } else { 3 };
        if ops.len() != want {
            return self.bad(format!("expects {want} operands"));
        }
        let d = self.dst(fs, &ops[0])?;
        let a = self.src(fs, &ops[1], t)?;
        let b = self.src(fs, &ops[2], t)?;
        let c = if mad { self.src(fs, &ops[3], t)? } else { NO_REG };
        let cc = match self.carry_slot {
            Some(r) => r,
            None => {
                let r = self.new_slot();
                self.carry_slot = Some(r);
                r
            }
        };
        Ok(Some(Op::Carry { op, w: t.bits(), signed: t.is_signed(), cin, cout, d, a, b, c, cc }))
    }
}
