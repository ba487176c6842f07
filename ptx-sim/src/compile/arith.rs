//! Instruction selection for arithmetic and comparisons: integer, float and
//! predicate `add`/`mul`/`mad`/`fma`/`neg`/`sqrt`/... and `setp`/`set`.

use super::context::{FnScope, KCtx};
use super::mods::Mods;
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast::{self, Operand};

impl KCtx<'_> {
    pub(super) fn binary(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let ops = &ins.ops;
        let name = ins.opcode.as_str();
        let pair16 = match mods.any(&["s16x2", "u16x2"]) {
            Some(ty) => Some(self.pair16(ins, mods, ty == "s16x2")?),
            None => None,
        };
        let t = if pair16.is_some() { Ty::B(32) } else { self.one_type(mods)? };
        if t == Ty::Pred {
            let op = match name {
                "and" => BoolOp::And,
                "or" => BoolOp::Or,
                "xor" => BoolOp::Xor,
                _ => return self.unsupported(&ins.text),
            };
            let d = self.pred_dst(fs, &ops[0])?;
            let (a, na) = self.pred_src(fs, &ops[1])?;
            let (b, nb) = self.pred_src(fs, &ops[2])?;
            return Ok(Op::PLogic { op, d, a, na, b, nb });
        }
        let d = self.dst(fs, &ops[0])?;
        if let Some(op) = pair16 {
            let a = self.src(fs, &ops[1], Ty::B(32))?;
            let b = self.src(fs, &ops[2], Ty::B(32))?;
            return Ok(Op::IBin { op: IBin::Pair16(op), w: 32, d, a, b });
        }
        if t.is_float() {
            if t.bits() == 16 {
                return self.unsupported(format!("{} (half precision)", ins.text));
            }
            let op = match name {
                "add" => FBin::Add,
                "sub" => FBin::Sub,
                "mul" => FBin::Mul,
                "div" => FBin::Div,
                "min" => FBin::Min,
                "max" => FBin::Max,
                "copysign" => FBin::Copysign,
                _ => return self.unsupported(&ins.text),
            };
            let rnd = mods.rnd().unwrap_or(Rnd::Rn);
            let ftz = mods.has("ftz");
            let sat = mods.has("sat");
            let a = self.src(fs, &ops[1], t)?;
            let b = self.src(fs, &ops[2], t)?;
            return Ok(Op::FBin { op, f64: t.bits() == 64, rnd, ftz, sat, d, a, b });
        }
        let s = t.is_signed();
        let w = t.bits();
        let lo = mods.has("lo");
        let hi = mods.has("hi");
        let wide = mods.has("wide");
        let sat = mods.has("sat");
        if mods.has("cc") {
            return self.unsupported(&ins.text);
        }
        let op = match name {
            "add" if sat => IBin::AddSat,
            "sub" if sat => IBin::SubSat,
            "add" => IBin::Add,
            "sub" => IBin::Sub,
            "mul" if wide => {
                if s {
                    IBin::MulWideS
                } else {
                    IBin::MulWideU
                }
            }
            "mul" if hi => {
                if s {
                    IBin::MulHiS
                } else {
                    IBin::MulHiU
                }
            }
            "mul" => IBin::MulLo,
            "mul24" if hi => {
                if s {
                    IBin::Mul24HiS
                } else {
                    IBin::Mul24HiU
                }
            }
            "mul24" => {
                if s {
                    IBin::Mul24LoS
                } else {
                    IBin::Mul24LoU
                }
            }
            "div" if s => IBin::DivS,
            "div" => IBin::DivU,
            "rem" if s => IBin::RemS,
            "rem" => IBin::RemU,
            "min" if s => IBin::MinS,
            "min" => IBin::MinU,
            "max" if s => IBin::MaxS,
            "max" => IBin::MaxU,
            "and" => IBin::And,
            "or" => IBin::Or,
            "xor" => IBin::Xor,
            "shl" => IBin::Shl,
            "shr" if s => IBin::ShrS,
            "shr" => IBin::ShrU,
            _ => return self.unsupported(&ins.text),
        };
        let _ = lo;
        if sat && (w != 32 || !s) {
            return self.unsupported(&ins.text);
        }
        let a = self.src(fs, &ops[1], t)?;
        let bt = if matches!(op, IBin::Shl | IBin::ShrS | IBin::ShrU) { Ty::U(32) } else { t };
        let b = self.src(fs, &ops[2], bt)?;
        Ok(Op::IBin { op, w, d, a, b })
    }

    /// `add`/`sub`/`min`/`max` on `.s16x2`/`.u16x2` (`.relu`: `min`/`max` on `.s16x2`).
    fn pair16(&self, ins: &ast::Instr, mods: &mut Mods, signed: bool) -> Result<Pair16, SimError> {
        let op = match ins.opcode.as_str() {
            "add" => Pair16Op::Add,
            "sub" => Pair16Op::Sub,
            "min" => Pair16Op::Min,
            "max" => Pair16Op::Max,
            _ => return self.unsupported(&ins.text),
        };
        let relu = mods.has("relu");
        if relu && !(signed && matches!(op, Pair16Op::Min | Pair16Op::Max)) {
            return self.unsupported(&ins.text);
        }
        Ok(Pair16 { op, signed, relu })
    }

    pub(super) fn ternary(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let ops = &ins.ops;
        let name = ins.opcode.as_str();
        let types = mods.types();
        let Some(&t) = types.first() else { return self.bad("missing type") };
        let d = self.dst(fs, &ops[0])?;
        if name == "fma" || (name == "mad" && t.is_float()) {
            if t.bits() == 16 {
                return self.unsupported(format!("{} (half precision)", ins.text));
            }
            let rnd = mods.rnd().unwrap_or(Rnd::Rn);
            let ftz = mods.has("ftz");
            let sat = mods.has("sat");
            let a = self.src(fs, &ops[1], t)?;
            let b = self.src(fs, &ops[2], t)?;
            let c = self.src(fs, &ops[3], t)?;
            return Ok(Op::Fma { f64: t.bits() == 64, rnd, ftz, sat, d, a, b, c });
        }
        let s = t.is_signed();
        let w = t.bits();
        let (mut at, mut bt, mut ct) = (t, t, t);
        let op = match name {
            "mad" => {
                if mods.has("cc") || mods.has("sat") {
                    return self.unsupported(&ins.text);
                }
                if mods.has("wide") {
                    ct = if s { Ty::S(w * 2) } else { Ty::U(w * 2) };
                    if s {
                        ITern::MadWideS
                    } else {
                        ITern::MadWideU
                    }
                } else if mods.has("hi") {
                    if s {
                        ITern::MadHiS
                    } else {
                        ITern::MadHiU
                    }
                } else {
                    mods.has("lo");
                    ITern::MadLo
                }
            }
            "mad24" => {
                if !mods.has("lo") {
                    return self.unsupported(&ins.text);
                }
                if s {
                    ITern::Mad24LoS
                } else {
                    ITern::Mad24LoU
                }
            }
            "sad" => {
                ct = Ty::U(w);
                if s {
                    ITern::SadS
                } else {
                    ITern::SadU
                }
            }
            "bfe" => {
                bt = Ty::U(32);
                ct = Ty::U(32);
                if s {
                    ITern::BfeS
                } else {
                    ITern::BfeU
                }
            }
            "slct" => {
                let Some(&ct2) = types.get(1) else { return self.bad("slct needs two types") };
                ct = ct2;
                mods.has("ftz");
                if ct2.is_float() {
                    ITern::SlctF
                } else {
                    ITern::SlctS
                }
            }
            "shf" => {
                let l = mods.has("l");
                let r = mods.has("r");
                let wrap = mods.has("wrap");
                let clamp = mods.has("clamp");
                ct = Ty::U(32);
                match (l, r, wrap, clamp) {
                    (true, false, true, false) => ITern::ShfLWrap,
                    (true, false, false, true) => ITern::ShfLClamp,
                    (false, true, true, false) => ITern::ShfRWrap,
                    (false, true, false, true) => ITern::ShfRClamp,
                    _ => return self.bad("shf needs .l/.r and .wrap/.clamp"),
                }
            }
            "prmt" => {
                if mods.list.iter().any(|m| matches!(m.as_str(), "f4e" | "b4e" | "rc8" | "ecl" | "ecr" | "rc16")) {
                    return self.unsupported(&ins.text);
                }
                ITern::Prmt
            }
            "dp4a" => {
                let Some(&t2) = types.get(1) else { return self.bad("dp4a needs two types") };
                at = Ty::B(32);
                bt = Ty::B(32);
                ct = Ty::B(32);
                match (t.is_signed(), t2.is_signed()) {
                    (true, true) => ITern::Dp4aSS,
                    (false, false) => ITern::Dp4aUU,
                    (true, false) => ITern::Dp4aSU,
                    (false, true) => ITern::Dp4aUS,
                }
            }
            _ => return self.unsupported(&ins.text),
        };
        let a = self.src(fs, &ops[1], at)?;
        let b = self.src(fs, &ops[2], bt)?;
        let c = self.src(fs, &ops[3], ct)?;
        Ok(Op::ITern { op, w, d, a, b, c })
    }

    pub(super) fn unary(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let ops = &ins.ops;
        let name = ins.opcode.as_str();
        let t = self.one_type(mods)?;
        if t == Ty::Pred {
            if name != "not" {
                return self.unsupported(&ins.text);
            }
            let d = self.pred_dst(fs, &ops[0])?;
            let (a, na) = self.pred_src(fs, &ops[1])?;
            return Ok(Op::PLogic { op: BoolOp::Xor, d, a, na, b: self.pred_true, nb: false });
        }
        let d = self.dst(fs, &ops[0])?;
        let a = self.src(fs, &ops[1], t)?;
        if t.is_float() {
            if t.bits() == 16 {
                return self.unsupported(format!("{} (half precision)", ins.text));
            }
            let op = match name {
                "neg" => FUn::Neg,
                "abs" => FUn::Abs,
                "sqrt" => FUn::Sqrt,
                "rcp" => FUn::Rcp,
                "rsqrt" => FUn::Rsqrt,
                "ex2" => FUn::Ex2,
                "lg2" => FUn::Lg2,
                "sin" => FUn::Sin,
                "cos" => FUn::Cos,
                "tanh" => FUn::Tanh,
                _ => return self.unsupported(&ins.text),
            };
            let rnd = mods.rnd().unwrap_or(Rnd::Rn);
            let ftz = mods.has("ftz");
            let sat = mods.has("sat");
            return Ok(Op::FUn { op, f64: t.bits() == 64, rnd, ftz, sat, d, a });
        }
        let s = t.is_signed();
        let op = match name {
            "neg" => IUn::Neg,
            "abs" => IUn::Abs,
            "not" => IUn::Not,
            "cnot" => IUn::Cnot,
            "popc" => IUn::Popc,
            "clz" => IUn::Clz,
            "brev" => IUn::Brev,
            "bfind" => match (s, mods.has("shiftamt")) {
                (true, false) => IUn::BfindS,
                (false, false) => IUn::BfindU,
                (true, true) => IUn::BfindSShift,
                (false, true) => IUn::BfindUShift,
            },
            _ => return self.unsupported(&ins.text),
        };
        Ok(Op::IUn { op, w: t.bits(), d, a })
    }

    pub(super) fn setp(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let ops = &ins.ops;
        let cmp = match mods.any(&[
            "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu",
            "num", "nan",
        ]) {
            Some(c) => match c {
                "eq" => Cmp::Eq,
                "ne" => Cmp::Ne,
                "lt" => Cmp::Lt,
                "le" => Cmp::Le,
                "gt" => Cmp::Gt,
                "ge" => Cmp::Ge,
                "lo" => Cmp::Lo,
                "ls" => Cmp::Ls,
                "hi" => Cmp::Hi,
                "hs" => Cmp::Hs,
                "equ" => Cmp::Equ,
                "neu" => Cmp::Neu,
                "ltu" => Cmp::Ltu,
                "leu" => Cmp::Leu,
                "gtu" => Cmp::Gtu,
                "geu" => Cmp::Geu,
                "num" => Cmp::Num,
                _ => Cmp::Nan,
            },
            None => return self.bad("missing comparison"),
        };
        let bop = match mods.any(&["and", "or", "xor"]) {
            Some("and") => Some(BoolOp::And),
            Some("or") => Some(BoolOp::Or),
            Some("xor") => Some(BoolOp::Xor),
            _ => None,
        };
        let ftz = mods.has("ftz");
        let types = mods.types();
        let is_set = ins.opcode == "set";
        let (dty, ty) = match (is_set, types.as_slice()) {
            (false, [t]) => (Ty::Pred, *t),
            (true, [d, s]) => (*d, *s),
            _ => return self.bad("wrong number of types"),
        };
        if ty.is_float() && ty.bits() == 16 {
            return self.unsupported(format!("{} (half precision)", ins.text));
        }
        let nsrc = if bop.is_some() { 4 } else { 3 };
        if ops.len() != nsrc {
            return self.bad(format!("expects {nsrc} operands"));
        }
        let a = self.src(fs, &ops[1], ty)?;
        let b = self.src(fs, &ops[2], ty)?;
        let comb = match bop {
            Some(op) => {
                let (c, neg) = self.pred_src(fs, &ops[3])?;
                Some((op, c, neg))
            }
            None => None,
        };
        if is_set {
            let d = self.dst(fs, &ops[0])?;
            return Ok(Op::Set { cmp, ty, dty, ftz, d, a, b, comb });
        }
        let (p, q) = match &ops[0] {
            Operand::Pair(p, q) => (self.pred_dst(fs, p)?, self.pred_dst(fs, q)?),
            o => (self.pred_dst(fs, o)?, NO_PRED),
        };
        Ok(Op::Setp { cmp, ty, ftz, p, q, a, b, comb })
    }
}
