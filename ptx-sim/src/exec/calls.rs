//! Calls of recursive functions (`compile::recursion`): a stack of frames per
//! thread. A frame keeps what the callee's previous activation left in the
//! callee's registers, predicates and local memory, and where to return; the
//! return copies the results out, then puts all of it back. Lanes of a warp
//! may be at different depths: each lane pops its own frame, and lanes that
//! meet at one pc run together (their registers are their own).

use super::Exec;
use crate::error::SimError;
use crate::ir::*;

/// Frames a thread may stack. A GPU's stack (1 KiB per thread by default)
/// holds a few dozen; past this, recursion is taken to be endless.
pub const MAX_CALL_DEPTH: usize = 1024;
/// Bytes the frames of a block's threads may hold together: a function with
/// thousands of registers must not exhaust the grader's memory first.
pub const MAX_STACK_BYTES: usize = 256 << 20;

pub(super) struct Frame {
    ret_pc: u32,
    site: u32,
    regs: Vec<u64>,
    preds: Vec<bool>,
    local: Vec<u8>,
}

impl Exec<'_> {
    /// `Op::Call` at `pc` by lanes `m` of warp `w`.
    pub(super) fn call(&mut self, w: usize, pc: u32, site: u32, m: u32) -> Result<u32, SimError> {
        let k = self.k;
        let s = &k.sites[site as usize];
        let f = &k.funcs[s.func as usize];
        let lb = k.local_bytes as usize;
        let mut err = None;
        let frame_bytes = 8 * (f.slots.1 - f.slots.0) as usize
            + (f.preds.1 - f.preds.0) as usize
            + f.local.iter().map(|&(_, len)| len as usize).sum::<usize>();
        super::ops::lanes(m, |l| {
            let t = w * 32 + l;
            if err.is_some()
                || self.stacks[t].len() >= MAX_CALL_DEPTH
                || self.stack_bytes + frame_bytes > MAX_STACK_BYTES
            {
                err.get_or_insert(l);
                return;
            }
            self.stack_bytes += frame_bytes;
            let rb = w * self.nslots * LANES + l;
            let regs = (f.slots.0..f.slots.1).map(|s| self.regs[rb + s as usize * LANES]).collect();
            let pb = w * self.npreds;
            let preds = (f.preds.0..f.preds.1).map(|p| self.preds[pb + p as usize] >> l & 1 == 1).collect();
            let frame = &mut self.local[t * lb..(t + 1) * lb];
            let mut local = Vec::new();
            for &(off, len) in &f.local {
                local.extend_from_slice(&frame[off as usize..(off + len) as usize]);
            }
            for &(dst, src, len) in &s.args {
                frame.copy_within(src as usize..(src + len) as usize, dst as usize);
            }
            self.stacks[t].push(Frame { ret_pc: pc + 1, site, regs, preds, local });
        });
        if let Some(l) = err {
            let (thread, _) = self.thread_of(w, l);
            return Err(SimError::StackOverflow {
                depth: self.stacks[w * 32 + l].len(),
                function: f.name.clone(),
                ptx_line: k.ptx_line(pc as usize),
                location: k.source_of(pc as usize),
                kernel: k.name.clone(),
                thread,
                block: self.block_idx,
            });
        }
        Ok(f.entry)
    }

    /// `Op::Ret` of function `func` by lanes `m` of warp `w`: each lane goes
    /// back to its own caller.
    pub(super) fn ret(&mut self, w: usize, func: u32, m: u32) {
        let k = self.k;
        let f = &k.funcs[func as usize];
        let lb = k.local_bytes as usize;
        let mut m = m;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let t = w * 32 + l;
            let Some(fr) = self.stacks[t].pop() else { continue };
            self.stack_bytes -= 8 * fr.regs.len() + fr.preds.len() + fr.local.len();
            let frame = &mut self.local[t * lb..(t + 1) * lb];
            // the results first, as this activation left them; they go to the
            // caller's slots after the restore, which may cover them (a
            // recursive caller's slots are the callee's own frame)
            let rets = &k.sites[fr.site as usize].rets;
            let results: Vec<Vec<u8>> =
                rets.iter().map(|&(_, src, len)| frame[src as usize..(src + len) as usize].to_vec()).collect();
            let mut at = 0;
            for &(off, len) in &f.local {
                frame[off as usize..(off + len) as usize].copy_from_slice(&fr.local[at..at + len as usize]);
                at += len as usize;
            }
            for (&(dst, _, len), bytes) in rets.iter().zip(results) {
                frame[dst as usize..(dst + len) as usize].copy_from_slice(&bytes);
            }
            let rb = w * self.nslots * LANES + l;
            for (s, v) in (f.slots.0..f.slots.1).zip(fr.regs) {
                self.regs[rb + s as usize * LANES] = v;
            }
            let pb = w * self.npreds;
            for (p, v) in (f.preds.0..f.preds.1).zip(fr.preds) {
                let bits = &mut self.preds[pb + p as usize];
                *bits = if v { *bits | 1 << l } else { *bits & !(1 << l) };
            }
            self.push_group(w, fr.ret_pc, 1 << l);
        }
    }
}
