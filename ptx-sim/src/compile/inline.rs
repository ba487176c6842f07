//! `call`: `vprintf` and `__assertfail` become single ops; every other call to
//! a `.func` with a body is inlined, its parameters aliasing the caller's
//! call-site `.param` slots and its labels renamed per call.

use std::collections::HashMap;

use super::context::{FnScope, KCtx, Sym};
use super::mods::Mods;
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast::{self, Operand};

impl KCtx<'_> {
    pub(super) fn call(
        &mut self,
        ins: &ast::Instr,
        mods: &mut Mods,
        fs: &mut FnScope,
        guard: Guard,
    ) -> Result<(), SimError> {
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
        if self.recursive.contains(func.as_str()) {
            let args = args.iter().map(|a| slot_of(self, a)).collect::<Result<Vec<_>, _>>()?;
            let rets = rets.iter().map(|r| slot_of(self, r)).collect::<Result<Vec<_>, _>>()?;
            return self.call_outlined(f, &args, &rets);
        }
        if fs.depth >= 16 {
            return self.unsupported(format!("call to `{func}` (calls nested more than 16 deep)"));
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
        let mut callee = FnScope {
            scopes: vec![top],
            prefix,
            ret_label: Some(ret_label.clone()),
            depth: fs.depth + 1,
            ret_func: None,
        };
        let saved = (self.cur_line, self.cur_text.clone(), self.loc);
        self.compile_body(body, &mut callee)?;
        self.labels.insert(ret_label, self.code.len() as u32);
        (self.cur_line, self.cur_text, self.loc) = saved;
        Ok(())
    }
}
