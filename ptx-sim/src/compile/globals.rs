//! Module-scope `.global`/`.const` variables: placed in the simulator's global
//! memory once per module, before any kernel is compiled, so that kernels (and
//! other variables' initializers) can refer to their addresses.

use std::collections::HashMap;

use crate::error::SimError;
use crate::memory::{write_le, GlobalMem};
use crate::parse::ast::{self, InitVal, Module};

/// A module-scope `.global`/`.const` variable, placed in global memory at load time.
#[derive(Debug, Clone)]
pub struct GlobalSym {
    pub addr: u64,
    pub size: u64,
}

/// A module-scope `.global`/`.const` variable larger than this is refused
/// (CUDA's whole constant bank is 64 KiB; the exercises' buffers are
/// allocated by the host, not declared in the module).
pub const MAX_MODULE_VARIABLE_BYTES: u64 = 256 << 20;

/// Allocates every module variable of `m` in `mem` and writes its initializer.
pub(super) fn place_module_vars(m: &Module, mem: &mut GlobalMem) -> Result<HashMap<String, GlobalSym>, SimError> {
    let mut symbols = HashMap::new();
    for v in &m.vars {
        if !matches!(v.space, ast::Space::Global | ast::Space::Const) {
            continue;
        }
        if v.is_extern && v.array == Some(None) {
            continue;
        }
        let size = v.size();
        if size > MAX_MODULE_VARIABLE_BYTES {
            return Err(SimError::OutOfMemory(format!(
                "module variable `{}` of {size} bytes (the simulator allows {MAX_MODULE_VARIABLE_BYTES})",
                v.name
            )));
        }
        let addr = mem
            .alloc(size.max(1) as usize)
            .ok_or_else(|| SimError::OutOfMemory(format!("module variable `{}`", v.name)))?;
        symbols.insert(v.name.clone(), GlobalSym { addr, size });
    }
    // initializers (after all addresses are known, for `generic(sym)` initializers)
    for v in &m.vars {
        if v.init.is_empty() {
            continue;
        }
        let Some(sym) = symbols.get(&v.name) else { continue };
        let esz = crate::parse::ast::type_size(&v.ty).unwrap_or(1) as usize;
        let is_f32 = v.ty == "f32";
        let mut bytes = vec![0u8; sym.size as usize];
        for (k, x) in v.init.iter().enumerate() {
            let val: u64 = match x {
                InitVal::Int(i) => *i as u64,
                InitVal::F32Bits(b) => *b as u64,
                InitVal::F64Bits(b) if is_f32 => (f64::from_bits(*b) as f32).to_bits() as u64,
                InitVal::F64Bits(b) => *b,
                InitVal::Float(f) if is_f32 => (*f as f32).to_bits() as u64,
                InitVal::Float(f) => f.to_bits(),
                InitVal::Symbol(s) => match symbols.get(s) {
                    Some(g) => g.addr,
                    None => {
                        return Err(SimError::Unsupported {
                            instruction: format!("initializer `{s}` of `{}`", v.name),
                            line: v.line,
                        })
                    }
                },
            };
            let off = k * esz;
            if off + esz <= bytes.len() {
                write_le(&mut bytes[off..], esz, val);
            }
        }
        if let Some(dst) = mem.slice_mut(sym.addr, bytes.len()) {
            dst.copy_from_slice(&bytes);
        }
    }
    Ok(symbols)
}
