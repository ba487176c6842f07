//! Instruction selection for memory accesses: `ld`, `ldu`, `st`, `atom` and
//! `red`, with their state spaces, vector widths and types.

use super::context::{FnScope, KCtx};
use super::mods::Mods;
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast::{self, Operand};

impl KCtx<'_> {
    fn space_of(mods: &mut Mods) -> Space {
        match mods.any(&["global", "shared", "local", "const", "param"]) {
            Some("global") => Space::Global,
            Some("shared") => Space::Shared,
            Some("local") => Space::Local,
            Some("const") => Space::Const,
            Some("param") => Space::KParam,
            _ => Space::Generic,
        }
    }

    pub(super) fn ldst(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let ops = &ins.ops;
        if ops.len() != 2 {
            return self.bad("expects 2 operands");
        }
        // `.shared::cta` etc. are spelled as one word by the lexer
        for (i, m) in mods.list.iter().enumerate() {
            if m == "shared::cta" {
                mods.used[i] = true;
            }
        }
        let mut space = Self::space_of(mods);
        if mods.list.iter().any(|m| m == "shared::cta") {
            space = Space::Shared;
        }
        let vec = match mods.any(&["v2", "v4", "v8"]) {
            Some("v2") => 2,
            Some("v4") => 4,
            Some(_) => return self.unsupported(&ins.text),
            None => 1,
        };
        let t = self.one_type(mods)?;
        if t == Ty::Pred || t.bits() > 64 {
            return self.unsupported(&ins.text);
        }
        let ty = MemTy { size: t.bits() / 8, signed: t.is_signed() };
        let is_ld = ins.opcode != "st";
        let (vop, aop) = if is_ld { (&ops[0], &ops[1]) } else { (&ops[1], &ops[0]) };
        let (addr, space) = self.addr(fs, aop, space)?;
        let mut regs = [NO_REG; 4];
        match vop {
            Operand::Vector(parts) => {
                if parts.len() != vec {
                    return self.bad("vector width mismatch");
                }
                for (k, p) in parts.iter().enumerate() {
                    regs[k] = if is_ld { self.dst(fs, p)? } else { self.src(fs, p, t)? };
                }
            }
            o => {
                if vec != 1 {
                    return self.bad("vector access needs {..}");
                }
                regs[0] = if is_ld { self.dst(fs, o)? } else { self.src(fs, o, t)? };
            }
        }
        if !is_ld && space == Space::KParam {
            return self.unsupported(format!("{} (store to a kernel parameter)", ins.text));
        }
        Ok(if is_ld {
            Op::Ld { space, ty, vec: vec as u8, dst: regs, addr }
        } else {
            Op::St { space, ty, vec: vec as u8, src: regs, addr }
        })
    }

    pub(super) fn atom(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let ops = &ins.ops;
        let is_red = ins.opcode == "red";
        let space = Self::space_of(mods);
        if matches!(space, Space::Local | Space::Const | Space::KParam) {
            return self.unsupported(&ins.text);
        }
        let op = match mods.any(&["add", "min", "max", "inc", "dec", "exch", "cas", "and", "or", "xor"]) {
            Some(o) => match o {
                "add" => AtomOp::Add,
                "min" => AtomOp::Min,
                "max" => AtomOp::Max,
                "inc" => AtomOp::Inc,
                "dec" => AtomOp::Dec,
                "exch" => AtomOp::Exch,
                "cas" => AtomOp::Cas,
                "and" => AtomOp::And,
                "or" => AtomOp::Or,
                _ => AtomOp::Xor,
            },
            None => return self.bad("missing atomic operation"),
        };
        mods.has("noftz");
        // `atomicAdd` on `__half`, `__half2`, `__nv_bfloat16(2)`: `atom.add.noftz.f16x2`
        let half = mods.list.iter().find_map(|m| HFmt::parse(m));
        if let Some(fmt) = half {
            mods.has(match fmt {
                HFmt::F16 => "f16",
                HFmt::F16x2 => "f16x2",
                HFmt::Bf16 => "bf16",
                HFmt::Bf16x2 => "bf16x2",
            });
            if op != AtomOp::Add {
                return self.unsupported(format!("{} (half-precision atomics other than add)", ins.text));
            }
        }
        let (op, t) = match half {
            Some(fmt) => (AtomOp::AddHalf(fmt), if fmt.x2() { Ty::B(32) } else { Ty::B(16) }),
            None => (op, self.one_type(mods)?),
        };
        let half_ok = matches!(op, AtomOp::AddHalf(_));
        if (t.bits() < 32 && !half_ok)
            || (t.is_float() && !matches!(op, AtomOp::Add | AtomOp::Exch | AtomOp::Min | AtomOp::Max))
        {
            return self.unsupported(&ins.text);
        }
        let want = if is_red { 2 } else { 3 } + usize::from(op == AtomOp::Cas);
        if ops.len() != want {
            return self.bad(format!("expects {want} operands"));
        }
        let (d, rest) = if is_red { (NO_REG, &ops[..]) } else { (self.dst(fs, &ops[0])?, &ops[1..]) };
        let (addr, space) = self.addr(fs, &rest[0], space)?;
        let a = self.src(fs, &rest[1], t)?;
        let b = if op == AtomOp::Cas { self.src(fs, &rest[2], t)? } else { NO_REG };
        Ok(Op::Atom { space, op, ty: t, d, addr, a, b })
    }
}
