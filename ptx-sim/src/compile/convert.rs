//! Instruction selection for `mov` (including vector pack/unpack and timer
//! reads) and `cvt` (integer width changes become plain masks).

use super::context::{FnScope, KCtx};
use super::mods::Mods;
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast::{self, Operand};

impl KCtx<'_> {
    pub(super) fn mov(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let ops = &ins.ops;
        let t = self.one_type(mods)?;
        if t == Ty::Pred {
            let d = self.pred_dst(fs, &ops[0])?;
            let (a, na) = self.pred_src(fs, &ops[1])?;
            return Ok(Op::PLogic { op: BoolOp::And, d, a, na, b: self.pred_true, nb: false });
        }
        if let Operand::Name(n) = &ops[1] {
            // Timers advance with the block's warp instructions, as a GPU's (`crate::device`).
            if let Some(timer) = crate::device::Timer::of(n) {
                return Ok(Op::Clock { d: self.dst(fs, &ops[0])?, timer });
            }
        }
        match (&ops[0], &ops[1]) {
            (Operand::Vector(parts), src) => {
                let n = parts.len();
                if !(2..=4).contains(&n) || t.bits() as usize % n != 0 {
                    return self.bad("bad vector unpack");
                }
                let mut dst = [NO_REG; 4];
                for (k, p) in parts.iter().enumerate() {
                    dst[k] = self.dst(fs, p)?;
                }
                let a = self.src(fs, src, t)?;
                Ok(Op::Unpack { dst, n: n as u8, bits: t.bits() / n as u8, a })
            }
            (d, Operand::Vector(parts)) => {
                let n = parts.len();
                if !(2..=4).contains(&n) || t.bits() as usize % n != 0 {
                    return self.bad("bad vector pack");
                }
                let pt = Ty::B(t.bits() / n as u8);
                let mut src = [NO_REG; 4];
                for (k, p) in parts.iter().enumerate() {
                    src[k] = self.src(fs, p, pt)?;
                }
                let d = self.dst(fs, d)?;
                Ok(Op::Pack { d, src, n: n as u8, bits: t.bits() / n as u8 })
            }
            (d, a) => {
                let d = self.dst(fs, d)?;
                let a = self.src(fs, a, t)?;
                Ok(Op::IUn { op: IUn::Mov, w: 64, d, a })
            }
        }
    }

    pub(super) fn cvt(&mut self, mods: &mut Mods, fs: &FnScope, ops: &[Operand]) -> Result<Op, SimError> {
        let types = mods.types();
        let [dst, src] = types.as_slice() else { return self.bad("cvt needs two types") };
        let (dst, src) = (*dst, *src);
        let irnd = match mods.any(&["rni", "rzi", "rmi", "rpi"]) {
            Some("rni") => IRnd::Rni,
            Some("rzi") => IRnd::Rzi,
            Some("rmi") => IRnd::Rmi,
            Some("rpi") => IRnd::Rpi,
            _ => IRnd::None,
        };
        let rnd = mods.rnd().unwrap_or(Rnd::Rn);
        let sat = mods.has("sat");
        let ftz = mods.has("ftz");
        if mods.has("relu") || dst == Ty::Pred || src == Ty::Pred {
            return self.unsupported(&self.cur_text);
        }
        let d = self.dst(fs, &ops[0])?;
        let a = self.src(fs, &ops[1], src)?;
        if !dst.is_float() && !src.is_float() && !sat {
            // integer widening/narrowing: a single mask or sign extension
            let (op, w) = if dst.bits() <= src.bits() {
                (IUn::Zext, dst.bits())
            } else if src.is_signed() {
                (IUn::Sext, src.bits())
            } else {
                (IUn::Zext, src.bits())
            };
            let w = if op == IUn::Sext { w } else { w.min(dst.bits()) };
            return Ok(Op::IUn { op, w, d, a });
        }
        Ok(Op::Cvt { d, a, dst, src, rnd, irnd, sat, ftz })
    }
}
