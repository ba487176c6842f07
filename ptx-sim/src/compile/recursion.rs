//! Recursive `.func`s: called, not inlined. Inlining a function that calls
//! itself never ends, so a function on a cycle of the module's call graph is
//! compiled once per kernel, after the kernel's body, and reached by
//! `Op::Call` / `Op::Ret`: each call pushes a frame per lane holding the
//! callee's registers and local memory (its parameters, results and `.local`
//! variables) as the caller left them, and the return puts them back, so every
//! activation has its own (`exec::calls`). Functions called from a recursive
//! one but not on a cycle are still inlined into it.

use std::collections::{HashMap, HashSet};

use super::context::{FnScope, KCtx, Sym};
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast::{Function, Module, Operand, Stmt};

/// The functions of `m` that can reach themselves through calls.
pub(super) fn recursive_funcs(m: &Module) -> HashSet<String> {
    let calls: HashMap<&str, Vec<&str>> = m
        .funcs
        .iter()
        .map(|f| {
            let callees = f
                .body
                .iter()
                .flatten()
                .filter_map(|s| match s {
                    Stmt::Instr(i) if i.opcode == "call" => {
                        i.ops.iter().find_map(|o| if let Operand::Name(n) = o { Some(n.as_str()) } else { None })
                    }
                    _ => None,
                })
                .collect();
            (f.name.as_str(), callees)
        })
        .collect();
    let mut out = HashSet::new();
    for f in &m.funcs {
        // depth-first from f's callees: does any path come back to f?
        let mut seen = HashSet::new();
        let mut todo: Vec<&str> = calls.get(f.name.as_str()).cloned().unwrap_or_default();
        while let Some(g) = todo.pop() {
            if g == f.name {
                out.insert(f.name.clone());
                break;
            }
            if seen.insert(g) {
                todo.extend(calls.get(g).into_iter().flatten());
            }
        }
    }
    out
}

impl KCtx<'_> {
    /// A call of the recursive function `f` with the call-site `.param` slots
    /// `args` and `rets` (local offsets): an `Op::Call` of its one compiled copy.
    pub(super) fn call_outlined(&mut self, f: &Function, args: &[u32], rets: &[u32]) -> Result<(), SimError> {
        let func = match self.outlined.get(f.name.as_str()) {
            Some(&i) => i,
            None => {
                let mut params = Vec::new();
                for p in &f.params {
                    params.push((self.alloc_local(p.size(), p.alignment())?, p.size() as u32));
                }
                let mut results = Vec::new();
                for r in &f.rets {
                    results.push((self.alloc_local(r.size(), r.alignment())?, r.size() as u32));
                }
                let i = self.funcs_out.len() as u32;
                self.funcs_out.push(Func {
                    name: f.name.clone(),
                    entry: u32::MAX,
                    slots: (0, 0),
                    preds: (0, 0),
                    local: params.iter().chain(&results).copied().collect(),
                    params,
                    rets: results,
                });
                self.outlined.insert(f.name.clone(), i);
                self.outline_todo.push(f.name.clone());
                i
            }
        };
        let callee = &self.funcs_out[func as usize];
        let site = CallSite {
            func,
            args: callee.params.iter().zip(args).map(|(&(dst, len), &src)| (dst, src, len)).collect(),
            rets: callee.rets.iter().zip(rets).map(|(&(src, len), &dst)| (dst, src, len)).collect(),
        };
        self.sites.push(site);
        self.emit(Op::Call { site: self.sites.len() as u32 - 1 }, Guard::NONE);
        Ok(())
    }

    /// Compiles the bodies of the recursive functions called so far (and those
    /// they call), after the kernel's own code.
    pub(super) fn compile_outlined(&mut self) -> Result<(), SimError> {
        while let Some(name) = self.outline_todo.pop() {
            let f = *self.funcs.get(name.as_str()).expect("an outlined function exists");
            let i = self.outlined[&name] as usize;
            let mut top = HashMap::new();
            for (p, &(off, _)) in f.params.iter().zip(&self.funcs_out[i].params) {
                top.insert(p.name.clone(), Sym::Local(off));
            }
            for (r, &(off, _)) in f.rets.iter().zip(&self.funcs_out[i].rets) {
                top.insert(r.name.clone(), Sym::Local(off));
            }
            self.instances += 1;
            let prefix = format!("{}#", self.instances);
            let mut fs = FnScope { scopes: vec![top], prefix, ret_label: None, depth: 0, ret_func: Some(i as u32) };
            let (entry, slot0, pred0, local0) = (self.code.len() as u32, self.nslots, self.npreds, self.local_end);
            self.cur_line = f.line;
            self.compile_body(f.body.as_deref().unwrap_or_default(), &mut fs)?;
            self.emit(Op::Ret { func: i as u32 }, Guard::NONE);
            let out = &mut self.funcs_out[i];
            out.entry = entry;
            out.slots = (slot0, self.nslots);
            out.preds = (pred0, self.npreds);
            if self.local_end > local0 {
                out.local.push((local0, self.local_end - local0));
            }
        }
        Ok(())
    }
}
