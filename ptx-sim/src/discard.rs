//! Loads whose value a lane throws away, for the shared-memory race check.
//!
//! Compilers if-convert `if (t == 0) total += cache[0];` into a load of
//! `cache[0]` by every thread and a `selp` (or a guarded add) that keeps the
//! sum only for thread 0. The other threads' loads are no reads of the
//! program: racecheck on a GPU sees them, but a read whose value is never used
//! cannot observe a race, and calling it one fails a correct kernel.
//!
//! The rule, decided once per kernel at load time and sound by construction:
//! a shared (or generic) scalar load `L` is *deferred* when its value can reach
//! the rest of the program only through one instruction `S` (the sink) of the
//! same straight-line run, which keeps it only for some lanes:
//!
//! - between `L` and `S` no instruction is a branch target, a branch, a
//!   barrier, a warp-synchronous or asynchronous instruction (so the warp runs
//!   `L..=S` in one go, in one barrier interval, with the same lanes);
//! - the value flows from `L` to `S` only through unguarded arithmetic (no
//!   address, no store, no predicate, no control is computed from it);
//! - `S` is a `selp` with the value on exactly one side (kept where the
//!   predicate picks that side) or a guarded arithmetic instruction (kept
//!   where the guard holds);
//! - every register on the way (the load's and the arithmetic's) is read
//!   nowhere in the kernel but on that way: a value cannot leak by a later
//!   read, a loop's next iteration, or another path.
//!
//! The race check then records `L`'s read when the warp executes `S`, for the
//! lanes that keep the value, at `L`'s instruction and address (`exec::mem`).
//! Everything else about `L` (bounds, uninitialised bytes, statistics) is
//! checked when it runs, as before.

use std::collections::{HashMap, HashSet};

use crate::ir::*;

/// Longest run from a load to its sink that is looked at.
const MAX_WINDOW: usize = 256;

/// What an instruction may be on the way from a load to its sink.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Writes registers from registers, nothing else.
    Arith,
    Selp,
    /// Writes predicates (a value reaching it steers control).
    Pred,
    /// Memory, fences, clocks: may sit between a load and its sink if the value
    /// is none of their operands.
    Memory,
    /// Ends a straight-line run, or orders threads.
    Stop,
}

fn push(v: &mut Vec<Reg>, regs: &[Reg]) {
    v.extend(regs.iter().copied().filter(|&r| r != NO_REG));
}

/// The registers `op` reads and writes, and its class. Exhaustive on purpose:
/// a new instruction must say what it reads, or a value could leak unseen.
pub(crate) fn regs(op: &Op, rd: &mut Vec<Reg>, wr: &mut Vec<Reg>) -> Class {
    rd.clear();
    wr.clear();
    match *op {
        Op::IBin { d, a, b, .. } | Op::FBin { d, a, b, .. } | Op::Set { d, a, b, .. } => {
            push(rd, &[a, b]);
            push(wr, &[d]);
            Class::Arith
        }
        Op::IUn { d, a, .. } | Op::FUn { d, a, .. } | Op::Cvt { d, a, .. } | Op::Cvta { d, a, .. } => {
            push(rd, &[a]);
            push(wr, &[d]);
            Class::Arith
        }
        Op::ITern { d, a, b, c, .. } | Op::Fma { d, a, b, c, .. } | Op::Half { d, a, b, c, .. } => {
            push(rd, &[a, b, c]);
            push(wr, &[d]);
            Class::Arith
        }
        Op::Bfi { d, a, b, c, e, .. } => {
            push(rd, &[a, b, c, e]);
            push(wr, &[d]);
            Class::Arith
        }
        Op::HalfCvt { d, a, b, .. } => {
            push(rd, &[a, b]);
            push(wr, &[d]);
            Class::Arith
        }
        Op::Pack { d, src, n, .. } => {
            push(rd, &src[..n as usize]);
            push(wr, &[d]);
            Class::Arith
        }
        Op::Unpack { dst, n, a, .. } => {
            push(rd, &[a]);
            push(wr, &dst[..n as usize]);
            Class::Arith
        }
        Op::Carry { d, a, b, c, cc, .. } => {
            push(rd, &[a, b, c, cc]);
            push(wr, &[d, cc]);
            Class::Arith
        }
        Op::Selp { d, a, b, .. } => {
            push(rd, &[a, b]);
            push(wr, &[d]);
            Class::Selp
        }
        Op::Setp { a, b, .. } | Op::HalfSetp { a, b, .. } => {
            push(rd, &[a, b]);
            Class::Pred
        }
        Op::Testp { a, .. } => {
            push(rd, &[a]);
            Class::Pred
        }
        Op::PLogic { .. } => Class::Pred,
        Op::Ld { vec, dst, addr, .. } => {
            push(rd, &[addr.base]);
            push(wr, &dst[..vec as usize]);
            Class::Memory
        }
        Op::St { vec, src, addr, .. } => {
            push(rd, &[addr.base]);
            push(rd, &src[..vec as usize]);
            Class::Memory
        }
        Op::Atom { d, addr, a, b, .. } => {
            push(rd, &[addr.base, a, b]);
            push(wr, &[d]);
            Class::Memory
        }
        Op::Activemask { d } | Op::Clock { d, .. } => {
            push(wr, &[d]);
            Class::Memory
        }
        Op::Fence { .. } | Op::Nop => Class::Memory,
        Op::BrxIdx { idx, .. } => {
            push(rd, &[idx]);
            Class::Stop
        }
        Op::WarpSync { mask } => {
            push(rd, &[mask]);
            Class::Stop
        }
        Op::Vote { d, mask, .. } => {
            push(rd, &[mask]);
            push(wr, &[d]);
            Class::Stop
        }
        Op::Shfl { d, a, b, c, mask, .. } => {
            push(rd, &[a, b, c, mask]);
            push(wr, &[d]);
            Class::Stop
        }
        Op::Match { d, a, mask, .. } => {
            push(rd, &[a, mask]);
            push(wr, &[d]);
            Class::Stop
        }
        Op::Redux { d, a, mask, .. } => {
            push(rd, &[a, mask]);
            push(wr, &[d]);
            Class::Stop
        }
        Op::Mbar { addr, d, a, .. } => {
            push(rd, &[addr.base, a]);
            push(wr, &[d]);
            Class::Stop
        }
        Op::MbarWait { addr, a, .. } => {
            push(rd, &[addr.base, a]);
            Class::Stop
        }
        Op::AsyncPending { addr, .. } => {
            push(rd, &[addr.base]);
            Class::Stop
        }
        Op::BulkCopy { dst, src, size, mbar, tmp, .. } => {
            push(rd, &[dst.base, src.base, size, mbar.base]);
            push(rd, &tmp);
            push(wr, &tmp);
            Class::Stop
        }
        Op::Bra { .. }
        | Op::Exit
        | Op::Bar
        | Op::BarRed { .. }
        | Op::Printf { .. }
        | Op::AsyncCommit
        | Op::AsyncWait { .. }
        | Op::Call { .. }
        | Op::Ret { .. }
        | Op::Trap => {
            if let Op::BarRed { d, .. } = *op {
                push(wr, &[d]);
            }
            Class::Stop
        }
    }
}

/// Per instruction: the sink of a deferred load (`None` for every other instruction).
pub fn deferred_reads(code: &[Instr], tables: &[Vec<u32>]) -> Vec<Option<Sink>> {
    let mut out = vec![None; code.len()];
    let loads: Vec<usize> = (0..code.len())
        .filter(|&pc| {
            matches!(code[pc].op, Op::Ld { space: Space::Shared | Space::Generic, vec: 1, .. })
                && code[pc].guard == Guard::NONE
        })
        .collect();
    if loads.is_empty() {
        return out;
    }
    let mut targets: HashSet<u32> = tables.iter().flatten().copied().collect();
    let (mut rd, mut wr) = (Vec::new(), Vec::new());
    let mut classes = Vec::with_capacity(code.len());
    let mut reads_of: HashMap<Reg, Vec<u32>> = HashMap::new();
    for (pc, ins) in code.iter().enumerate() {
        if let Op::Bra { target } = ins.op {
            targets.insert(target);
        }
        classes.push(regs(&ins.op, &mut rd, &mut wr));
        for &r in &rd {
            reads_of.entry(r).or_default().push(pc as u32);
        }
    }
    for l in loads {
        out[l] = sink_of(code, &classes, &targets, &reads_of, l);
    }
    out
}

fn sink_of(
    code: &[Instr],
    classes: &[Class],
    targets: &HashSet<u32>,
    reads_of: &HashMap<Reg, Vec<u32>>,
    l: usize,
) -> Option<Sink> {
    let Op::Ld { dst, .. } = code[l].op else { return None };
    let mut tainted: HashSet<Reg> = HashSet::from([dst[0]]);
    let mut chain: HashSet<Reg> = tainted.clone();
    // (pc, register) where a read sees the load's value
    let mut seen: HashSet<(u32, Reg)> = HashSet::new();
    let (mut rd, mut wr) = (Vec::new(), Vec::new());
    for pc in l + 1..code.len().min(l + 1 + MAX_WINDOW) {
        if targets.contains(&(pc as u32)) {
            return None;
        }
        let ins = &code[pc];
        let class = regs(&ins.op, &mut rd, &mut wr);
        debug_assert!(class == classes[pc]);
        let hot: Vec<Reg> = rd.iter().copied().filter(|r| tainted.contains(r)).collect();
        if class == Class::Stop {
            return None;
        }
        if hot.is_empty() {
            for r in &wr {
                tainted.remove(r);
            }
            continue;
        }
        for &r in &hot {
            seen.insert((pc as u32, r));
        }
        let sink = match (class, &ins.op) {
            (Class::Selp, &Op::Selp { d, a, b, .. }) if a != b && !chain.contains(&d) => {
                let (ta, tb) = (tainted.contains(&a), tainted.contains(&b));
                (ta != tb).then_some(Sink { pc: pc as u32, selp_a: Some(ta) })
            }
            (Class::Arith, _) if ins.guard != Guard::NONE && wr.iter().all(|r| !chain.contains(r)) => {
                Some(Sink { pc: pc as u32, selp_a: None })
            }
            (Class::Arith, _) if ins.guard == Guard::NONE => {
                for &r in &wr {
                    tainted.insert(r);
                    chain.insert(r);
                }
                continue;
            }
            _ => None,
        };
        let sink = sink?;
        // No register of the way is read anywhere else (later, in a loop's next
        // iteration, on another path), nor on the way before it holds the value.
        let ok = chain.iter().all(|r| {
            reads_of.get(r).into_iter().flatten().all(|&q| q as usize > l && q <= sink.pc && seen.contains(&(q, *r)))
        });
        return ok.then_some(sink);
    }
    None
}
