//! Which instructions are *data additions*: the work of a scan or a reduction.
//!
//! A kernel's additions are of two kinds: index arithmetic (`tid + stride`,
//! `base + 4 * i`) and additions of the values it computes on. Only the second
//! is the work a textbook counts (Kogge-Stone's n log n against Brent-Kung's
//! 2n), and it does not depend on how the kernel is spelled: registers, shared
//! memory or warp shuffles.
//!
//! The rule, decided once per kernel: a register holds *data* when a load from
//! memory (global, shared, local, generic) or an atomic wrote it, or an
//! instruction computed it from data (arithmetic, `selp`, moves, shuffles).
//! Flow-insensitive: every PTX register is one slot, and a register that holds
//! data anywhere holds it everywhere, which only matters for registers reused
//! for two purposes (compilers' virtual registers rarely are). Parameters and
//! `__constant__` values are not data: they are the launch's settings. A data
//! addition is an integer or float add or subtract, an `fma`, a carry add or an
//! add reduction with a data operand.

use crate::discard::regs;
use crate::ir::*;

/// Per instruction: whether it is a data addition.
pub fn data_additions(code: &[Instr]) -> Vec<bool> {
    let (mut rd, mut wr) = (Vec::new(), Vec::new());
    let mut data = std::collections::HashSet::new();
    // each pass marks at least one more register, so this ends
    loop {
        let before = data.len();
        for ins in code {
            regs(&ins.op, &mut rd, &mut wr);
            let from_memory = matches!(
                ins.op,
                Op::Ld { space: Space::Global | Space::Shared | Space::Local | Space::Generic, .. } | Op::Atom { .. }
            );
            let computed = !matches!(ins.op, Op::Ld { .. } | Op::Atom { .. }) && rd.iter().any(|r| data.contains(r));
            if from_memory || computed {
                data.extend(wr.iter().copied());
            }
        }
        if data.len() == before {
            break;
        }
    }
    code.iter()
        .map(|ins| {
            let operands = match ins.op {
                Op::IBin { op: IBin::Add | IBin::Sub | IBin::AddSat | IBin::SubSat, a, b, .. }
                | Op::IBin { op: IBin::Pair16(Pair16 { op: Pair16Op::Add | Pair16Op::Sub, .. }), a, b, .. }
                | Op::FBin { op: FBin::Add | FBin::Sub, a, b, .. }
                | Op::Carry { op: CarryOp::Add | CarryOp::Sub, a, b, .. } => [a, b, NO_REG],
                Op::Fma { a, b, c, .. } => [a, b, c],
                Op::Redux { op: IBin::Add, a, .. } => [a, NO_REG, NO_REG],
                _ => [NO_REG; 3],
            };
            operands.iter().any(|r| data.contains(r))
        })
        .collect()
}
