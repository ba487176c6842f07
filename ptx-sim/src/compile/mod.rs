//! AST → IR, once per module at load time: module variables placed in global
//! memory, then each `.entry` compiled to a [`Kernel`] with its registers as
//! slots, its symbols as addresses, its labels as instruction indices and its
//! `.func` calls inlined.
//!
//! `globals` places module variables; `context` holds the per-kernel state
//! ([`context::KCtx`]) that the other files extend: `layout` (shared, local and
//! parameter memory), `registers` (slot allocation), `operands` (operand
//! decoding), `mods` (modifiers), `entry` (the body and its labels), with
//! `carry`, `half` and `asynch` for those instruction families. Instruction
//! selection is still in this file.

use std::collections::HashMap;

use crate::error::SimError;
use crate::ir::Kernel;
use crate::memory::GlobalMem;
use crate::parse::ast::{Function, Module};

mod asynch;
mod carry;
mod context;
mod entry;
mod globals;
mod half;
mod layout;
mod mods;
mod operands;
mod registers;

use context::KCtx;
pub use globals::GlobalSym;

#[derive(Debug)]
pub struct CompiledModule {
    pub kernels: HashMap<String, Kernel>,
    pub symbols: HashMap<String, GlobalSym>,
}

/// Loads a parsed module: places its variables in `mem` and compiles every entry.
pub fn compile_module(m: &Module, mem: &mut GlobalMem) -> Result<CompiledModule, SimError> {
    compile_collecting(m, mem, None)
}

/// Every instruction of `m` the simulator cannot run (each `SimError::Unsupported`),
/// instead of stopping at the first: for sweeps over a corpus of compiled kernels.
pub fn unsupported_in(m: &Module) -> Result<Vec<SimError>, SimError> {
    let mut found = Vec::new();
    compile_collecting(m, &mut GlobalMem::default(), Some(&mut found))?;
    Ok(found)
}

fn compile_collecting(
    m: &Module,
    mem: &mut GlobalMem,
    mut collect: Option<&mut Vec<SimError>>,
) -> Result<CompiledModule, SimError> {
    let symbols = globals::place_module_vars(m, mem)?;
    let funcs: HashMap<&str, &Function> = m.funcs.iter().map(|f| (f.name.as_str(), f)).collect();
    let mut kernels = HashMap::new();
    for f in &m.funcs {
        if f.is_entry && f.body.is_some() {
            let mut cx = KCtx::new(m, &funcs, &symbols);
            cx.collect = collect.is_some();
            let k = cx.compile_entry(f);
            let k = match (k, collect.as_deref_mut()) {
                (Ok((k, found)), Some(all)) => {
                    all.extend(found);
                    k
                }
                (Ok((k, _)), None) => k,
                (Err(e), _) => return Err(e),
            };
            kernels.insert(f.name.clone(), k);
        }
    }
    Ok(CompiledModule { kernels, symbols })
}

use crate::ir::*;
use crate::parse::ast::{self, Operand};
use context::{FnScope, Sym};
use mods::Mods;

impl KCtx<'_> {
    fn instr(&mut self, ins: &ast::Instr, fs: &mut FnScope) -> Result<(), SimError> {
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

    fn binary(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let t = self.one_type(mods)?;
        let ops = &ins.ops;
        let name = ins.opcode.as_str();
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

    fn ternary(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
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

    fn unary(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
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

    fn mov(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
        let ops = &ins.ops;
        let t = self.one_type(mods)?;
        if t == Ty::Pred {
            let d = self.pred_dst(fs, &ops[0])?;
            let (a, na) = self.pred_src(fs, &ops[1])?;
            return Ok(Op::PLogic { op: BoolOp::And, d, a, na, b: self.pred_true, nb: false });
        }
        if let Operand::Name(n) = &ops[1] {
            // Timers count the launch's warp instructions: deterministic and increasing.
            let shift = match n.as_str() {
                "%clock" | "%clock64" | "%globaltimer" | "%globaltimer_lo" => Some(0),
                "%clock_hi" | "%globaltimer_hi" => Some(32),
                _ => None,
            };
            if let Some(shift) = shift {
                return Ok(Op::Clock { d: self.dst(fs, &ops[0])?, shift });
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

    fn cvt(&mut self, mods: &mut Mods, fs: &FnScope, ops: &[Operand]) -> Result<Op, SimError> {
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

    fn setp(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
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

    fn ldst(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
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

    fn atom(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
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

    fn barrier(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope) -> Result<Op, SimError> {
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

    fn call(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &mut FnScope, guard: Guard) -> Result<(), SimError> {
        let _ = mods;
        if guard != Guard::NONE {
            return self.unsupported(format!("{} (predicated call)", ins.text));
        }
        let mut rets: &[Operand] = &[];
        let mut args: &[Operand] = &[];
        let mut func = None;
        for o in &ins.ops {
            match (o, func.is_some()) {
                (Operand::List(l), false) => rets = l,
                (Operand::List(l), true) => args = l,
                (Operand::Name(n), false) => func = Some(n.clone()),
                _ => return self.unsupported(format!("{} (indirect call)", ins.text)),
            }
        }
        let Some(func) = func else { return self.bad("call without a target") };
        let slot_of = |this: &Self, o: &Operand| -> Result<u32, SimError> {
            match o {
                Operand::Name(n) => match this.lookup(fs, n) {
                    Some(Sym::Local(off)) => Ok(off),
                    _ => this.bad(format!("call argument `{n}` is not a .param variable")),
                },
                _ => this.bad("call arguments must be .param variables"),
            }
        };
        if func == "vprintf" {
            if args.len() != 2 {
                return self.bad("vprintf takes two arguments");
            }
            let fmt = slot_of(self, &args[0])?;
            let a = slot_of(self, &args[1])?;
            let ret = match rets.first() {
                Some(r) => slot_of(self, r)?,
                None => u32::MAX,
            };
            self.emit(Op::Printf { fmt, args: a, ret }, guard);
            return Ok(());
        }
        if func == "__assertfail" || func == "__assert_fail" {
            self.emit(Op::Trap, guard);
            return Ok(());
        }
        let Some(f) = self.funcs.get(func.as_str()).copied() else {
            return self.unsupported(format!("call to unknown function `{func}`"));
        };
        let Some(body) = &f.body else {
            return self.unsupported(format!("call to external function `{func}`"));
        };
        if fs.depth >= 16 {
            return self.unsupported(format!("call to `{func}` (recursion)"));
        }
        if f.params.len() != args.len() || f.rets.len() != rets.len() {
            return self.bad(format!("call to `{func}` with the wrong number of arguments"));
        }
        // Inline: the callee's parameters alias the caller's call-site .param slots.
        let mut top = HashMap::new();
        for (p, a) in f.params.iter().zip(args) {
            top.insert(p.name.clone(), Sym::Local(slot_of(self, a)?));
        }
        for (p, a) in f.rets.iter().zip(rets) {
            top.insert(p.name.clone(), Sym::Local(slot_of(self, a)?));
        }
        self.instances += 1;
        let prefix = format!("{}#", self.instances);
        let ret_label = format!("{prefix}$ret");
        let mut callee = FnScope { scopes: vec![top], prefix, ret_label: Some(ret_label.clone()), depth: fs.depth + 1 };
        let saved = (self.cur_line, self.cur_text.clone(), self.loc);
        self.compile_body(body, &mut callee)?;
        self.labels.insert(ret_label, self.code.len() as u32);
        (self.cur_line, self.cur_text, self.loc) = saved;
        Ok(())
    }
}
