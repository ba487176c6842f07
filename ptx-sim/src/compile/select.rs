//! Instruction selection: one PTX instruction (opcode, modifiers, operands)
//! becomes one IR [`Op`]. This file dispatches on the opcode and handles the
//! small cases (control flow, warp collectives, barriers) itself; arithmetic,
//! conversions, memory accesses, calls, and the carry, half-precision and
//! asynchronous families have their own files.

use super::context::{FnScope, KCtx, Sym};
use super::mods::Mods;
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast::{self, Operand};

impl KCtx<'_> {
    /// Compiles one instruction: emits its op, or inlines the function it calls.
    pub(super) fn instr(&mut self, ins: &ast::Instr, fs: &mut FnScope) -> Result<(), SimError> {
        let guard = match &ins.guard {
            None => Guard::NONE,
            Some((p, neg)) => match self.lookup(fs, p) {
                Some(Sym::Pred(p)) => Guard::new(p, *neg),
                _ => return self.bad(format!("guard `{p}` is not a predicate")),
            },
        };
        let mut mods = Mods::new(&ins.mods);
        let ops = &ins.ops;
        let nops = |n: usize| -> Result<(), SimError> {
            if ops.len() == n {
                Ok(())
            } else {
                Err(SimError::Parse {
                    line: ins.line,
                    msg: format!("`{}` expects {n} operands, found {}", ins.text, ops.len()),
                })
            }
        };
        if self.asynch(ins, &mut mods, fs, guard)? {
            return Ok(());
        }
        let op = match self.carry(ins, &mut mods, fs)? {
            Some(op) => Some(op),
            None => self.half(ins, &mut mods, fs)?,
        };
        if let Some(op) = op {
            if let Some(m) = mods.unused() {
                return self.unsupported(format!("{} (modifier .{m})", ins.text));
            }
            self.emit(op, guard);
            return Ok(());
        }
        let op = match ins.opcode.as_str() {
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr" | "mul24"
            | "copysign" => {
                nops(3)?;
                self.binary(ins, &mut mods, fs)?
            }
            "mad" | "fma" | "mad24" | "sad" | "bfe" | "slct" | "shf" | "prmt" | "dp4a" => {
                nops(4)?;
                self.ternary(ins, &mut mods, fs)?
            }
            "lop3" => {
                nops(5)?;
                mods.types();
                let lut = match ops[4] {
                    Operand::Int(v) => v as u8,
                    _ => return self.bad("lop3 needs an immediate lookup table"),
                };
                let d = self.dst(fs, &ops[0])?;
                let (a, b, c) = (
                    self.src(fs, &ops[1], Ty::B(32))?,
                    self.src(fs, &ops[2], Ty::B(32))?,
                    self.src(fs, &ops[3], Ty::B(32))?,
                );
                Op::ITern { op: ITern::Lop3(lut), w: 32, d, a, b, c }
            }
            "bfi" => {
                nops(5)?;
                let t = self.one_type(&mut mods)?;
                let d = self.dst(fs, &ops[0])?;
                let a = self.src(fs, &ops[1], t)?;
                let b = self.src(fs, &ops[2], t)?;
                let c = self.src(fs, &ops[3], Ty::U(32))?;
                let e = self.src(fs, &ops[4], Ty::U(32))?;
                Op::Bfi { w: t.bits(), d, a, b, c, e }
            }
            "neg" | "abs" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" | "sqrt" | "rcp" | "rsqrt" | "ex2"
            | "lg2" | "sin" | "cos" | "tanh" => {
                nops(2)?;
                self.unary(ins, &mut mods, fs)?
            }
            "mov" => {
                nops(2)?;
                self.mov(ins, &mut mods, fs)?
            }
            "cvt" => {
                nops(2)?;
                self.cvt(&mut mods, fs, ops)?
            }
            "cvta" => {
                nops(2)?;
                let to = mods.has("to");
                let space = match mods.any(&["global", "shared", "local", "const", "param"]) {
                    Some("global") => Space::Global,
                    Some("shared") => Space::Shared,
                    Some("local") => Space::Local,
                    Some("const") => Space::Const,
                    Some(_) => Space::KParam,
                    None => return self.bad("cvta needs a state space"),
                };
                let t = self.one_type(&mut mods)?;
                let d = self.dst(fs, &ops[0])?;
                let a = self.src(fs, &ops[1], t)?;
                Op::Cvta { d, a, space, to_generic: !to, w: t.bits() }
            }
            "setp" | "set" => self.setp(ins, &mut mods, fs)?,
            "selp" => {
                nops(4)?;
                let t = self.one_type(&mut mods)?;
                let d = self.dst(fs, &ops[0])?;
                let a = self.src(fs, &ops[1], t)?;
                let b = self.src(fs, &ops[2], t)?;
                let (p, neg) = self.pred_src(fs, &ops[3])?;
                Op::Selp { d, a, b, p, neg }
            }
            "testp" => {
                nops(2)?;
                let op = match mods.any(&["finite", "infinite", "number", "notanumber", "normal", "subnormal"]) {
                    Some("finite") => TestpOp::Finite,
                    Some("infinite") => TestpOp::Infinite,
                    Some("number") => TestpOp::Number,
                    Some("notanumber") => TestpOp::NotANumber,
                    Some("normal") => TestpOp::Normal,
                    Some(_) => TestpOp::Subnormal,
                    None => return self.bad("testp needs a test"),
                };
                let t = self.one_type(&mut mods)?;
                let p = self.pred_dst(fs, &ops[0])?;
                let a = self.src(fs, &ops[1], t)?;
                Op::Testp { op, f64: t.bits() == 64, p, a }
            }
            "ld" | "ldu" | "st" => self.ldst(ins, &mut mods, fs)?,
            "atom" | "red" => self.atom(ins, &mut mods, fs)?,
            "brx" => {
                // `brx.idx[.uni] index, table;` (a `switch` as a jump table)
                nops(2)?;
                mods.has("idx");
                let idx = self.src(fs, &ops[0], Ty::U(32))?;
                let Operand::Name(t) = &ops[1] else { return self.bad("brx.idx needs a .branchtargets label") };
                let Some((table, _)) = self.tables.get(&format!("{}{}", fs.prefix, t)) else {
                    return self.bad(format!("unknown .branchtargets `{t}`"));
                };
                Op::BrxIdx { idx, table: *table }
            }
            "bra" => {
                nops(1)?;
                let Operand::Name(l) = &ops[0] else { return self.bad("bra needs a label") };
                self.fixups.push((self.code.len(), format!("{}{}", fs.prefix, l), ins.line));
                Op::Bra { target: u32::MAX }
            }
            "ret" | "exit" => match (&fs.ret_label, ins.opcode.as_str()) {
                (_, "ret") if fs.ret_func.is_some() => Op::Ret { func: fs.ret_func.unwrap() },
                (Some(l), "ret") => {
                    self.fixups.push((self.code.len(), l.clone(), ins.line));
                    Op::Bra { target: u32::MAX }
                }
                _ => Op::Exit,
            },
            "bar" | "barrier" => self.barrier(ins, &mut mods, fs)?,
            "membar" | "fence" => {
                // a sequential interpreter is always coherent; the race detector
                // still needs to know where a block fenced (global_race)
                let gpu = !mods.has("cta");
                mods.used.iter_mut().for_each(|u| *u = true);
                Op::Fence { gpu }
            }
            "nanosleep" | "brkpt" | "prefetch" | "prefetchu" | "pmevent" => {
                // a sequential interpreter is always coherent: ordering is a no-op
                mods.used.iter_mut().for_each(|u| *u = true);
                Op::Nop
            }
            "trap" => Op::Trap,
            "vote" => {
                nops(if mods.has("sync") { 3 } else { 2 })?;
                let mode = match mods.any(&["all", "any", "uni", "ballot"]) {
                    Some("all") => VoteMode::All,
                    Some("any") => VoteMode::Any,
                    Some("uni") => VoteMode::Uni,
                    Some(_) => VoteMode::Ballot,
                    None => return self.bad("vote needs a mode"),
                };
                mods.types();
                let (d, dp) = if mode == VoteMode::Ballot {
                    (self.dst(fs, &ops[0])?, NO_PRED)
                } else {
                    (NO_REG, self.pred_dst(fs, &ops[0])?)
                };
                let (a, neg) = self.pred_src(fs, &ops[1])?;
                let mask = if ops.len() == 3 { self.src(fs, &ops[2], Ty::B(32))? } else { self.konst(u32::MAX as u64) };
                Op::Vote { mode, d, dp, a, neg, mask }
            }
            "shfl" => {
                let sync = mods.has("sync");
                nops(if sync { 5 } else { 4 })?;
                let mode = match mods.any(&["up", "down", "bfly", "idx"]) {
                    Some("up") => ShflMode::Up,
                    Some("down") => ShflMode::Down,
                    Some("bfly") => ShflMode::Bfly,
                    Some(_) => ShflMode::Idx,
                    None => return self.bad("shfl needs a mode"),
                };
                mods.types();
                let (d, dp) = match &ops[0] {
                    Operand::Pair(d, p) => (self.dst(fs, d)?, self.pred_dst(fs, p)?),
                    o => (self.dst(fs, o)?, NO_PRED),
                };
                let a = self.src(fs, &ops[1], Ty::B(32))?;
                let b = self.src(fs, &ops[2], Ty::B(32))?;
                let c = self.src(fs, &ops[3], Ty::B(32))?;
                let mask = if sync { self.src(fs, &ops[4], Ty::B(32))? } else { self.konst(u32::MAX as u64) };
                Op::Shfl { mode, d, dp, a, b, c, mask }
            }
            "match" => {
                nops(3)?;
                let any = match mods.any(&["any", "all"]) {
                    Some("any") => true,
                    Some(_) => false,
                    None => return self.bad("match needs .any or .all"),
                };
                let t = self.one_type(&mut mods)?;
                let (d, dp) = match &ops[0] {
                    Operand::Pair(d, p) => (self.dst(fs, d)?, self.pred_dst(fs, p)?),
                    o => (self.dst(fs, o)?, NO_PRED),
                };
                let a = self.src(fs, &ops[1], t)?;
                let mask = self.src(fs, &ops[2], Ty::B(32))?;
                Op::Match { any, w: t.bits(), d, dp, a, mask }
            }
            "redux" => {
                nops(3)?;
                let op = match mods.any(&["add", "min", "max", "and", "or", "xor"]) {
                    Some("add") => IBin::Add,
                    Some("min") => IBin::MinU,
                    Some("max") => IBin::MaxU,
                    Some("and") => IBin::And,
                    Some("or") => IBin::Or,
                    Some(_) => IBin::Xor,
                    None => return self.bad("redux needs an operation"),
                };
                let t = self.one_type(&mut mods)?;
                let d = self.dst(fs, &ops[0])?;
                let a = self.src(fs, &ops[1], t)?;
                let mask = self.src(fs, &ops[2], Ty::B(32))?;
                Op::Redux { op, signed: t.is_signed(), d, a, mask }
            }
            "activemask" => {
                nops(1)?;
                mods.types();
                Op::Activemask { d: self.dst(fs, &ops[0])? }
            }
            "call" => return self.call(ins, &mut mods, fs, guard),
            _ => return self.unsupported(&ins.text),
        };
        if let Some(m) = mods.unused() {
            return self.unsupported(format!("{} (modifier .{m})", ins.text));
        }
        self.emit(op, guard);
        Ok(())
    }

    /// `bar.sync 0`, `bar.red.*` and `bar.warp.sync` (named barriers are unsupported).
    pub(super) fn barrier(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let ops = &ins.ops;
        if mods.has("warp") {
            mods.has("sync");
            if ops.len() != 1 {
                return self.bad("bar.warp.sync needs a mask");
            }
            let mask = self.src(fs, &ops[0], Ty::B(32))?;
            return Ok(Op::WarpSync { mask });
        }
        let id_zero = matches!(ops.first(), Some(Operand::Int(0)));
        if mods.has("red") {
            let mode = match mods.any(&["popc", "and", "or"]) {
                Some("popc") => BarRedMode::Popc,
                Some("and") => BarRedMode::And,
                Some("or") => BarRedMode::Or,
                _ => return self.bad("bar.red needs .popc/.and/.or"),
            };
            mods.types();
            if ops.len() != 3 || !matches!(ops[1], Operand::Int(0)) {
                return self.unsupported(&ins.text);
            }
            let (d, dp) = if mode == BarRedMode::Popc {
                (self.dst(fs, &ops[0])?, NO_PRED)
            } else {
                (NO_REG, self.pred_dst(fs, &ops[0])?)
            };
            let (p, neg) = self.pred_src(fs, &ops[2])?;
            return Ok(Op::BarRed { mode, d, dp, p, neg });
        }
        if mods.has("arrive") || !id_zero || ops.len() != 1 {
            // named barriers and thread counts are not modelled
            return self.unsupported(&ins.text);
        }
        mods.has("sync");
        Ok(Op::Bar)
    }
}
