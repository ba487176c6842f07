//! Compiling one `.entry`: memory layout, then the body statement by
//! statement (declarations, labels, instructions), then branch targets
//! resolved and the [`Kernel`] assembled.

use std::collections::HashMap;

use super::context::{FnScope, KCtx, Sym};
use super::layout::{align_up, ParamLayout};
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast::{self, Function, Stmt};

impl KCtx<'_> {
    pub(super) fn compile_entry(mut self, f: &Function) -> Result<(Kernel, Vec<SimError>), SimError> {
        self.cur_line = f.line;
        let body = f.body.as_ref().expect("entry has a body");
        // Shared layout first, so the dynamic area's offset is known before any use.
        self.layout_shared(f, body);
        let ParamLayout { params, syms: top, bytes: param_bytes } = self.layout_params(f)?;
        let mut fs = FnScope { scopes: vec![top], prefix: String::new(), ret_label: None, depth: 0, ret_func: None };
        self.compile_body(body, &mut fs)?;
        self.emit(Op::Exit, Guard::NONE);
        self.compile_outlined()?;
        self.resolve_branches(f.line)?;
        // Every slot is a register of every thread (constants and specials too).
        if self.nslots as usize + self.npreds as usize > 2 * crate::parse::MAX_REGISTERS {
            return self.unsupported(format!(
                "{} registers in one kernel (the simulator allows {})",
                self.nslots as usize + self.npreds as usize,
                2 * crate::parse::MAX_REGISTERS
            ));
        }
        let mut consts: Vec<(Reg, u64)> = self.consts.iter().map(|(&b, &r)| (r, b)).collect();
        consts.sort();
        let mut specials: Vec<(Reg, Special)> = self.specials.iter().map(|(&s, &r)| (r, s)).collect();
        specials.sort_by_key(|x| x.0);
        let found = std::mem::take(&mut self.found);
        let deferred = crate::discard::deferred_reads(&self.code, &self.table_labels);
        let k = Kernel {
            name: f.name.clone(),
            code: self.code,
            info: self.info,
            nslots: self.nslots,
            npreds: self.npreds,
            consts,
            specials,
            pred_false: self.pred_false,
            pred_true: self.pred_true,
            params,
            param_bytes,
            shared_static: self.shared_end,
            dyn_shared_offset: self.dyn_offset,
            shared_layout: self.layout,
            local_bytes: align_up(self.local_end, 16),
            files: self.m.files.clone(),
            tables: std::mem::take(&mut self.table_labels),
            deferred,
            funcs: std::mem::take(&mut self.funcs_out),
            sites: std::mem::take(&mut self.sites),
        };
        Ok((k, found))
    }

    /// Points every `bra` at its label and fills the `.branchtargets` tables.
    fn resolve_branches(&mut self, entry_line: usize) -> Result<(), SimError> {
        for (idx, key, line) in std::mem::take(&mut self.fixups) {
            let Some(&t) = self.labels.get(&key) else {
                let name = key.split_once('#').map_or(key.as_str(), |(_, n)| n);
                return Err(SimError::Parse { line, msg: format!("unknown label `{name}`") });
            };
            if let Op::Bra { target } = &mut self.code[idx].op {
                *target = t;
            }
        }
        for (table, labels) in std::mem::take(&mut self.tables).into_values() {
            let mut pcs = Vec::with_capacity(labels.len());
            for l in &labels {
                let Some(&t) = self.labels.get(l) else {
                    let name = l.split_once('#').map_or(l.as_str(), |(_, n)| n);
                    return Err(SimError::Parse {
                        line: entry_line,
                        msg: format!("unknown label `{name}` in .branchtargets"),
                    });
                };
                pcs.push(t);
            }
            self.table_labels[table as usize] = pcs;
        }
        Ok(())
    }

    pub(super) fn compile_body(&mut self, body: &[Stmt], fs: &mut FnScope) -> Result<(), SimError> {
        for s in body {
            match s {
                Stmt::Reg { ty, names, line } => {
                    self.cur_line = *line;
                    let scope = fs.scopes.len() - 1;
                    for n in names {
                        let sym = if ty == "pred" {
                            Sym::Pred(self.new_pred())
                        } else {
                            let bits = Ty::parse(ty).map_or(64, |t| t.bits());
                            Sym::Reg { slot: self.new_slot(), bits }
                        };
                        fs.scopes[scope].insert(n.clone(), sym);
                    }
                }
                Stmt::Var(v) => {
                    self.cur_line = v.line;
                    let sym = match v.space {
                        ast::Space::Local | ast::Space::Param => Sym::Local(self.alloc_local(v.size(), v.alignment())?),
                        ast::Space::Shared if v.is_extern || v.array == Some(None) => Sym::DynShared,
                        ast::Space::Shared => match self.shared.get(&v.name) {
                            Some(&o) => Sym::Shared(o),
                            None => {
                                // declared inside an inlined function: place it now
                                self.alloc_shared(v);
                                if self.shared_end > self.dyn_offset {
                                    return self.unsupported(format!(".shared variable `{}` in a .func", v.name));
                                }
                                Sym::Shared(self.shared[&v.name])
                            }
                        },
                        _ => return self.unsupported(format!("function-scope .global/.const variable `{}`", v.name)),
                    };
                    fs.scopes.last_mut().unwrap().insert(v.name.clone(), sym);
                }
                Stmt::Label(name, _) => {
                    self.labels.insert(format!("{}{}", fs.prefix, name), self.code.len() as u32);
                }
                Stmt::Loc { file, line, .. } => self.loc = Some((*file, *line)),
                Stmt::ScopeOpen => fs.scopes.push(HashMap::new()),
                Stmt::ScopeClose => {
                    if fs.scopes.len() > 1 {
                        fs.scopes.pop();
                    }
                }
                Stmt::Pragma => {}
                Stmt::BranchTargets { name, targets, .. } => {
                    let key = format!("{}{}", fs.prefix, name);
                    let labels = targets.iter().map(|t| format!("{}{}", fs.prefix, t)).collect();
                    self.tables.insert(key, (self.table_labels.len() as u32, labels));
                    self.table_labels.push(Vec::new());
                }
                Stmt::Instr(i) => {
                    self.cur_line = i.line;
                    self.cur_text = i.text.clone();
                    match self.instr(i, fs) {
                        Err(e @ SimError::Unsupported { .. }) if self.collect => {
                            self.found.push(e);
                            self.emit(Op::Nop, Guard::NONE);
                        }
                        r => r?,
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn emit(&mut self, op: Op, guard: Guard) {
        self.code.push(Instr { op, guard });
        self.info.push(InstrInfo { ptx_line: self.cur_line as u32, src: self.loc, text: self.cur_text.clone() });
    }
}
