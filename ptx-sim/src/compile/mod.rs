//! AST → IR, once per module at load time: module variables placed in global
//! memory, then each `.entry` compiled to a [`Kernel`] with its registers as
//! slots, its symbols as addresses, its labels as instruction indices and its
//! `.func` calls inlined.
//!
//! `globals` places module variables; `context` holds the per-kernel state
//! ([`context::KCtx`]) that the other files extend: `layout` (shared, local and
//! parameter memory), `registers` (slot allocation), `operands` (operand
//! decoding), `mods` (modifiers), `entry` (the body and its labels), `select`
//! (instruction dispatch) with `arith`, `convert`, `access`, `inline`, `carry`,
//! `half` and `asynch` for the instruction families.

use std::collections::HashMap;

use crate::error::SimError;
use crate::ir::Kernel;
use crate::memory::GlobalMem;
use crate::parse::ast::{Function, Module};

mod access;
mod arith;
mod asynch;
mod carry;
mod context;
mod convert;
mod entry;
mod globals;
mod half;
mod inline;
mod layout;
mod mods;
mod operands;
mod recursion;
mod registers;
mod select;

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
    let recursive = recursion::recursive_funcs(m);
    let mut kernels = HashMap::new();
    for f in &m.funcs {
        if f.is_entry && f.body.is_some() {
            let mut cx = KCtx::new(m, &funcs, &symbols);
            cx.recursive = &recursive;
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
