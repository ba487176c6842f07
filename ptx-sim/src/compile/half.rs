//! Compiling half-precision instructions (`f16`, `f16x2`, `bf16`, `bf16x2`):
//! what `cuda_fp16.h` / `cuda_bf16.h` emit for `__half` arithmetic. Scalar
//! `cvt` between `f16` and other types stays with the general `cvt`.

use super::context::{FnScope, KCtx};
use super::mods::Mods;
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast;

const CMPS: &[(&str, Cmp)] = &[
    ("eq", Cmp::Eq),
    ("ne", Cmp::Ne),
    ("lt", Cmp::Lt),
    ("le", Cmp::Le),
    ("gt", Cmp::Gt),
    ("ge", Cmp::Ge),
    ("equ", Cmp::Equ),
    ("neu", Cmp::Neu),
    ("ltu", Cmp::Ltu),
    ("leu", Cmp::Leu),
    ("gtu", Cmp::Gtu),
    ("geu", Cmp::Geu),
    ("num", Cmp::Num),
    ("nan", Cmp::Nan),
];

impl KCtx<'_> {
    /// The op of a half-precision instruction; `None` when `ins` is not one.
    pub(super) fn half(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Option<Op>, SimError> {
        let fmts: Vec<HFmt> = ins.mods.iter().filter_map(|m| HFmt::parse(m)).collect();
        let name = ins.opcode.as_str();
        let Some(&fmt) = fmts.first() else { return Ok(None) };
        // scalar f16 conversions are the general cvt's; atomics are `atom`'s
        if (name == "cvt" && !fmts.iter().any(|f| *f != HFmt::F16)) || name == "atom" || name == "red" {
            return Ok(None);
        }
        let ops = &ins.ops;
        let need = |n: usize| -> Result<(), SimError> {
            if ops.len() == n {
                Ok(())
            } else {
                Err(SimError::Parse { line: ins.line, msg: format!("`{}` expects {n} operands", ins.text) })
            }
        };
        let rty = if fmt.x2() { Ty::B(32) } else { Ty::B(16) };
        for f in ["f16", "f16x2", "bf16", "bf16x2"] {
            mods.has(f);
        }
        match mods.rnd() {
            None | Some(Rnd::Rn) => {}
            Some(_) => return self.unsupported(format!("{} (half precision rounds to nearest only)", ins.text)),
        }
        let op = match name {
            "add" | "sub" | "mul" | "min" | "max" | "fma" | "neg" | "abs" => {
                let hop = match name {
                    "add" => HOp::Add,
                    "sub" => HOp::Sub,
                    "mul" => HOp::Mul,
                    "min" => HOp::Min,
                    "max" => HOp::Max,
                    "fma" => HOp::Fma,
                    "neg" => HOp::Neg,
                    _ => HOp::Abs,
                };
                let n = match hop {
                    HOp::Fma => 4,
                    HOp::Neg | HOp::Abs => 2,
                    _ => 3,
                };
                need(n)?;
                if fmts.len() != 1 {
                    return self.bad("expected exactly one type");
                }
                let (ftz, sat, relu, nan) = (mods.has("ftz"), mods.has("sat"), mods.has("relu"), mods.has("NaN"));
                let d = self.dst(fs, &ops[0])?;
                let a = self.src(fs, &ops[1], rty)?;
                let b = if n > 2 { self.src(fs, &ops[2], rty)? } else { NO_REG };
                let c = if n > 3 { self.src(fs, &ops[3], rty)? } else { NO_REG };
                Op::Half { op: hop, fmt, ftz, sat, relu, nan, d, a, b, c }
            }
            "setp" => {
                need(3)?;
                let Some(&(_, cmp)) = CMPS.iter().find(|(c, _)| mods.has(c)) else {
                    return self.bad("missing comparison");
                };
                let ftz = mods.has("ftz");
                let (p, q) = match &ops[0] {
                    ast::Operand::Pair(p, q) => (self.pred_dst(fs, p)?, self.pred_dst(fs, q)?),
                    o => (self.pred_dst(fs, o)?, NO_PRED),
                };
                let a = self.src(fs, &ops[1], rty)?;
                let b = self.src(fs, &ops[2], rty)?;
                Op::HalfSetp { cmp, fmt, ftz, p, q, a, b }
            }
            "cvt" => {
                let f32s = mods.types();
                match (fmts.as_slice(), f32s.as_slice()) {
                    // cvt.rn.{f16x2,bf16x2}.f32 d, a, b
                    ([f], [Ty::F(32)])
                        if f.x2()
                            && ins.mods.iter().position(|m| HFmt::parse(m).is_some())
                                < ins.mods.iter().position(|m| m == "f32") =>
                    {
                        need(3)?;
                        let d = self.dst(fs, &ops[0])?;
                        let a = self.src(fs, &ops[1], Ty::F(32))?;
                        let b = self.src(fs, &ops[2], Ty::F(32))?;
                        Op::HalfCvt { fmt, to_f32: false, d, a, b }
                    }
                    ([HFmt::Bf16], [Ty::F(32)]) => {
                        need(2)?;
                        let to_f32 =
                            ins.mods.iter().position(|m| m == "f32") < ins.mods.iter().position(|m| m == "bf16");
                        let d = self.dst(fs, &ops[0])?;
                        let a = self.src(fs, &ops[1], if to_f32 { Ty::B(16) } else { Ty::F(32) })?;
                        Op::HalfCvt { fmt, to_f32, d, a, b: NO_REG }
                    }
                    _ => return self.unsupported(format!("{} (half-precision conversion)", ins.text)),
                }
            }
            _ => return self.unsupported(format!("{} (half precision)", ins.text)),
        };
        Ok(Some(op))
    }
}
