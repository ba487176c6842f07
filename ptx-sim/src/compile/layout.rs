//! Per-kernel memory layout: the kernel's `.shared` variables (with guard gaps,
//! see `shared_layout`) and dynamic shared area, its `.local` frame, and its
//! parameter buffer. Shared memory is laid out before the body is compiled, so
//! every address is known when an instruction names it.

use std::collections::HashMap;

use super::context::{KCtx, Sym};
use crate::error::SimError;
use crate::ir::ParamInfo;
use crate::parse::ast::{self, Function, Operand, Stmt, VarDecl};

/// Local memory one thread may use, as on CUDA GPUs (512 KiB).
pub const MAX_LOCAL_BYTES: u32 = 512 << 10;

pub(super) fn align_up(x: u32, a: u32) -> u32 {
    let a = a.max(1);
    x.div_ceil(a).saturating_mul(a)
}

/// A kernel's parameter buffer: each parameter's offset, the symbols that name
/// them, and the buffer's size.
pub(super) struct ParamLayout {
    pub(super) params: Vec<ParamInfo>,
    pub(super) syms: HashMap<String, Sym>,
    pub(super) bytes: u32,
}

impl<'a> KCtx<'a> {
    /// Places the `.shared` variables `f` uses and then its dynamic area.
    pub(super) fn layout_shared(&mut self, f: &Function, body: &[Stmt]) {
        // Module-scope .shared variables count only if this kernel (or a function it
        // calls) names them, as on the GPU.
        let used = self.names_used(f);
        let mut dyn_align = 16;
        for v in &self.m.vars {
            if v.space == ast::Space::Shared && used.contains(v.name.as_str()) {
                self.alloc_shared(v);
                if v.is_extern {
                    dyn_align = dyn_align.max(v.alignment());
                }
            }
        }
        for s in body {
            if let Stmt::Var(v) = s {
                if v.space == ast::Space::Shared {
                    self.alloc_shared(v);
                    if v.is_extern {
                        dyn_align = dyn_align.max(v.alignment());
                    }
                }
            }
        }
        self.layout.place_dynamic(dyn_align);
        self.dyn_offset = self.layout.dyn_offset;
    }

    /// The kernel parameter buffer of `f`.
    pub(super) fn layout_params(&mut self, f: &Function) -> Result<ParamLayout, SimError> {
        let mut params = Vec::new();
        let mut top = HashMap::new();
        let mut off = 0u32;
        for p in &f.params {
            // CUDA passes at most 32 KiB of kernel parameters (4 KiB before 12.1).
            off = align_up(off, p.alignment());
            let Some(size) = u32::try_from(p.size()).ok().filter(|&s| off as u64 + s as u64 <= 32 << 10) else {
                return self.unsupported(format!("kernel parameters beyond 32 KiB (`{}`)", p.name));
            };
            top.insert(p.name.clone(), Sym::KParam(off));
            params.push(ParamInfo { name: p.name.clone(), offset: off, size, ty: p.ty.clone() });
            off += size;
        }
        Ok(ParamLayout { params, syms: top, bytes: off })
    }

    pub(super) fn alloc_shared(&mut self, v: &VarDecl) {
        if v.is_extern || v.array == Some(None) {
            if self.layout.extern_name.is_none() {
                self.layout.extern_name = Some(crate::shared_layout::demangle(&v.name));
            }
            return;
        }
        let off = self.layout.place(&v.name, v.size(), v.alignment(), v.elem_size());
        self.shared.insert(v.name.clone(), off);
        self.shared_end = self.layout.end;
    }

    pub(super) fn alloc_local(&mut self, size: u64, align: u32) -> Result<u32, SimError> {
        let off = align_up(self.local_end, align);
        let end = (off as u64).saturating_add(size);
        if end > MAX_LOCAL_BYTES as u64 {
            return self.unsupported(format!(
                "{end} bytes of local memory per thread (CUDA allows at most {MAX_LOCAL_BYTES})"
            ));
        }
        self.local_end = end as u32;
        Ok(off)
    }

    /// Every name an entry and the functions it calls (transitively) mention.
    fn names_used(&self, f: &'a Function) -> std::collections::HashSet<&'a str> {
        fn walk<'m>(o: &'m Operand, out: &mut std::collections::HashSet<&'m str>) {
            match o {
                Operand::Name(n) | Operand::SymOffset(n, _) => {
                    out.insert(n);
                }
                Operand::Addr { base: Some(n), .. } => {
                    out.insert(n);
                }
                Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|x| walk(x, out)),
                Operand::Pair(a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Operand::Not(x) => walk(x, out),
                _ => {}
            }
        }
        let mut used = std::collections::HashSet::new();
        let mut todo = vec![f];
        let mut seen = std::collections::HashSet::new();
        while let Some(g) = todo.pop() {
            if !seen.insert(g.name.as_str()) {
                continue;
            }
            for st in g.body.iter().flatten() {
                if let Stmt::Instr(i) = st {
                    for o in &i.ops {
                        walk(o, &mut used);
                    }
                    if i.opcode == "call" {
                        for o in &i.ops {
                            if let Operand::Name(n) = o {
                                if let Some(callee) = self.funcs.get(n.as_str()) {
                                    todo.push(callee);
                                }
                            }
                        }
                    }
                }
            }
        }
        used
    }
}
