//! Compiling asynchronous copies and memory barriers: what
//! `cooperative_groups::memcpy_async`, `cuda::memcpy_async`, `cuda::barrier` and
//! `__pipeline_memcpy_async` emit at sm_80 and sm_90 (`cp.async`,
//! `cp.async.bulk`, `mbarrier.*`).
//!
//! The simulator copies eagerly, when the copy is issued: a `cp.async` becomes a
//! global load into scratch registers and a shared store from them, so bounds,
//! guard zones, sectors per request, bank conflicts and the shared-memory race
//! detector see it as the loads and stores it is. Its destination then counts
//! as unwritten until the issuing thread waits for the copy's group
//! (`AsyncPending`, `AsyncCommit`, `AsyncWait`): a read before the wait (by any
//! thread) is reported as the uninitialised read it is on a GPU, where the data
//! may not have arrived. `mbarrier` objects are modelled (phase, pending
//! arrivals, transaction count; see `exec::asynch`), because threads spin on them.

use super::context::{FnScope, KCtx};
use super::mods::Mods;
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast::{self, Operand};

impl KCtx<'_> {
    /// Compiles `cp.*` and `mbarrier.*`; `Ok(false)` when `ins` is neither.
    pub(super) fn asynch(
        &mut self,
        ins: &ast::Instr,
        mods: &mut Mods,
        fs: &FnScope,
        guard: Guard,
    ) -> Result<bool, SimError> {
        match ins.opcode.as_str() {
            "cp" if mods.has("async") => {}
            "mbarrier" => {
                self.mbarrier(ins, mods, fs, guard)?;
                return Ok(true);
            }
            _ => return Ok(false),
        }
        // Cache and ordering hints change no result here.
        for m in ["ca", "cg", "L2::128B", "L2::64B", "L2::256B"] {
            mods.has(m);
        }
        if mods.has("commit_group") || mods.has("wait_group") || mods.has("wait_all") {
            // The data moved when the copies were issued; these only say when the
            // destination may be read (see `exec::asynch`).
            mods.has("read");
            self.finish_mods(ins, mods)?;
            match ins.mods.iter().find(|m| m.starts_with("wait_") || m.starts_with("commit")).map(String::as_str) {
                Some("commit_group") => self.emit(Op::AsyncCommit, guard),
                Some("wait_all") => {
                    self.emit(Op::AsyncCommit, guard);
                    self.emit(Op::AsyncWait { n: 0 }, guard);
                }
                _ => {
                    let n = match ins.ops.first() {
                        Some(Operand::Int(n)) if *n >= 0 => *n as u32,
                        _ => return self.bad("cp.async.wait_group needs a constant group count"),
                    };
                    self.emit(Op::AsyncWait { n }, guard);
                }
            }
            return Ok(true);
        }
        if mods.has("mbarrier") {
            // `cp.async.mbarrier.arrive[.noinc].shared.b64 [mbar]`: an arrive once this
            // thread's earlier copies are done (now). Without `.noinc` the pending
            // count is raised by one first, so the arrive changes nothing.
            mods.has("arrive");
            let noinc = mods.has("noinc");
            let space = mbar_space(mods);
            mods.types();
            self.finish_mods(ins, mods)?;
            if ins.ops.len() != 1 {
                return self.bad("expects 1 operand");
            }
            let (addr, space) = self.addr(fs, &ins.ops[0], space)?;
            // The thread's copies so far complete before the arrive.
            self.emit(Op::AsyncCommit, guard);
            self.emit(Op::AsyncWait { n: 0 }, guard);
            if noinc {
                let a = self.konst(1);
                self.emit(Op::Mbar { op: MbarOp::Arrive, space, addr, d: NO_REG, a }, guard);
            }
            return Ok(true);
        }
        if mods.has("bulk") {
            return self.bulk(ins, mods, fs, guard).map(|_| true);
        }
        self.cp_async(ins, mods, fs, guard)?;
        Ok(true)
    }

    fn finish_mods(&self, ins: &ast::Instr, mods: &Mods) -> Result<(), SimError> {
        match mods.unused() {
            Some(m) => self.unsupported(format!("{} (modifier .{m})", ins.text)),
            None => Ok(()),
        }
    }

    /// `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size}{, policy}`.
    fn cp_async(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope, guard: Guard) -> Result<(), SimError> {
        let shared = mods.has("shared") || mods.has("shared::cta");
        let global = mods.has("global");
        let hint = mods.has("L2::cache_hint");
        self.finish_mods(ins, mods)?;
        if !shared || !global {
            return self.bad("cp.async copies from .global to .shared");
        }
        let ops = &ins.ops;
        let nops = ops.len().saturating_sub(usize::from(hint));
        if !(3..=4).contains(&nops) {
            return self.bad("expects [dst], [src], cp-size and an optional src-size");
        }
        let size = match ops[2] {
            Operand::Int(n @ (4 | 8 | 16)) => n as u8,
            _ => return self.bad("cp-size must be 4, 8 or 16"),
        };
        let (daddr, dspace) = self.addr(fs, &ops[0], Space::Shared)?;
        let (saddr, sspace) = self.addr(fs, &ops[1], Space::Global)?;
        let (ty, vec) = match size {
            4 => (MemTy { size: 4, signed: false }, 1u8),
            8 => (MemTy { size: 8, signed: false }, 1),
            _ => (MemTy { size: 8, signed: false }, 2),
        };
        let tmp = [self.new_slot(), self.new_slot(), NO_REG, NO_REG];
        // The bytes past src-size are zero-filled: src-size 0 reads nothing.
        let mut ld_guard = guard;
        match ops.get(3).filter(|_| nops == 4) {
            None => {}
            Some(Operand::Int(n)) if *n == size as i64 => {}
            Some(Operand::Int(0)) => ld_guard = Guard::new(self.pred_false, false),
            Some(Operand::Int(n)) => {
                return self.unsupported(format!("{} (src-size {n} of a {size}-byte copy)", ins.text));
            }
            Some(src_size) => {
                // A run-time src-size: 0 or the whole copy (what predicated copies use).
                let zero = self.konst(0);
                for &t in &tmp[..2] {
                    self.emit(Op::IUn { op: IUn::Mov, w: 64, d: t, a: zero }, Guard::NONE);
                }
                let n = self.src(fs, src_size, Ty::U(32))?;
                let p = self.new_pred();
                let setp =
                    Op::Setp { cmp: Cmp::Ne, ty: Ty::U(32), ftz: false, p, q: NO_PRED, a: n, b: zero, comb: None };
                self.emit(setp, Guard::NONE);
                if guard != Guard::NONE {
                    let (g, neg) = (guard.0 & 0x7fff, guard.0 & 0x8000 != 0);
                    self.emit(Op::PLogic { op: BoolOp::And, d: p, a: p, na: false, b: g, nb: neg }, Guard::NONE);
                }
                ld_guard = Guard::new(p, false);
            }
        }
        if ld_guard.0 == self.pred_false {
            let zero = self.konst(0);
            for &t in &tmp[..2] {
                self.emit(Op::IUn { op: IUn::Mov, w: 64, d: t, a: zero }, guard);
            }
        } else {
            self.emit(Op::Ld { space: sspace, ty, vec, dst: tmp, addr: saddr }, ld_guard);
        }
        self.emit(Op::St { space: dspace, ty, vec, src: tmp, addr: daddr }, guard);
        self.emit(Op::AsyncPending { space: dspace, addr: daddr, len: size }, guard);
        Ok(())
    }

    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]`.
    fn bulk(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope, guard: Guard) -> Result<(), SimError> {
        let shared = mods.has("shared::cluster") || mods.has("shared::cta") || mods.has("shared");
        let global = mods.has("global");
        let tx = mods.has("mbarrier::complete_tx::bytes");
        let hint = mods.has("L2::cache_hint");
        self.finish_mods(ins, mods)?;
        let ops = &ins.ops;
        if !shared || !global || !tx || ops.len() != 4 + usize::from(hint) {
            return self.unsupported(format!("{} (only global → shared bulk copies with an mbarrier)", ins.text));
        }
        let (dst, dspace) = self.addr(fs, &ops[0], Space::Shared)?;
        let (src, sspace) = self.addr(fs, &ops[1], Space::Global)?;
        let size = self.src(fs, &ops[2], Ty::U(32))?;
        let (mbar, mspace) = self.addr(fs, &ops[3], Space::Shared)?;
        let tmp = [self.new_slot(), self.new_slot(), self.new_slot(), self.new_slot()];
        let op = Op::BulkCopy { dst, dspace, src, sspace, size, mbar, mspace, tmp };
        self.emit(op, guard);
        Ok(())
    }

    fn mbarrier(&mut self, ins: &ast::Instr, mods: &mut Mods, fs: &FnScope, guard: Guard) -> Result<(), SimError> {
        for m in ["release", "acquire", "relaxed", "cta", "cluster"] {
            mods.has(m);
        }
        let space = mbar_space(mods);
        mods.types();
        let ops = &ins.ops;
        let verb =
            mods.any(&["init", "inval", "arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait", "try_wait"]);
        let Some(verb) = verb else { return self.unsupported(&ins.text) };
        let expect = mods.has("expect_tx");
        let no_complete = mods.has("noComplete");
        let parity = mods.has("parity");
        self.finish_mods(ins, mods)?;
        if no_complete {
            return self.unsupported(format!("{} (.noComplete)", ins.text));
        }
        let op = match verb {
            "init" | "expect_tx" | "complete_tx" | "inval" => {
                let want = if verb == "inval" { 1 } else { 2 };
                if ops.len() != want {
                    return self.bad(format!("expects {want} operands"));
                }
                let (addr, space) = self.addr(fs, &ops[0], space)?;
                let a = if want == 2 { self.src(fs, &ops[1], Ty::U(32))? } else { NO_REG };
                let op = match verb {
                    "init" => MbarOp::Init,
                    "expect_tx" => MbarOp::ExpectTx,
                    "complete_tx" => MbarOp::CompleteTx,
                    _ => MbarOp::Inval,
                };
                Op::Mbar { op, space, addr, d: NO_REG, a }
            }
            "arrive" | "arrive_drop" => {
                // `state, [addr]{, count}` or, with .expect_tx, `state, [addr], txCount`
                if !(2..=3).contains(&ops.len()) {
                    return self.bad("expects a state, an address and an optional count");
                }
                let d = match &ops[0] {
                    Operand::Name(n) if n == "_" => NO_REG,
                    o => self.dst(fs, o)?,
                };
                let (addr, space) = self.addr(fs, &ops[1], space)?;
                let a = match ops.get(2) {
                    Some(o) => self.src(fs, o, Ty::U(32))?,
                    None => self.konst(1),
                };
                let op = match (verb, expect) {
                    ("arrive", false) => MbarOp::Arrive,
                    ("arrive", true) => MbarOp::ArriveExpectTx,
                    ("arrive_drop", false) => MbarOp::ArriveDrop,
                    _ => return self.unsupported(&ins.text),
                };
                Op::Mbar { op, space, addr, d, a }
            }
            _ => {
                // `p, [addr], state|parity{, suspend-time hint}`
                if !(3..=4).contains(&ops.len()) {
                    return self.bad("expects a predicate, an address and a state");
                }
                let p = self.pred_dst(fs, &ops[0])?;
                let (addr, space) = self.addr(fs, &ops[1], space)?;
                let a = self.src(fs, &ops[2], Ty::B(64))?;
                Op::MbarWait { p, space, addr, a, parity }
            }
        };
        self.emit(op, guard);
        Ok(())
    }
}

/// `.shared`/`.shared::cta` (or no space: a generic address).
fn mbar_space(mods: &mut Mods) -> Space {
    if mods.has("shared") || mods.has("shared::cta") {
        Space::Shared
    } else {
        Space::Generic
    }
}
