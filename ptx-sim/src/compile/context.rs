//! The state of compiling one kernel ([`KCtx`]) and the symbols a scope
//! resolves to. Each stage of the compiler (layout, registers, operands,
//! instruction selection, inlining) adds methods to `KCtx` in its own file;
//! this one holds only what they all share.

use std::collections::HashMap;

use super::globals::GlobalSym;
use crate::error::SimError;
use crate::ir::*;
use crate::parse::ast::{Function, Module};

#[derive(Debug, Clone, Copy)]
pub(super) enum Sym {
    Reg {
        slot: Reg,
        bits: u8,
    },
    Pred(Pred),
    /// Offset in the per-thread local frame (`.local` variables, call `.param` slots).
    Local(u32),
    Shared(u32),
    DynShared,
    KParam(u32),
    Global(u64),
}

pub(super) struct FnScope {
    pub(super) scopes: Vec<HashMap<String, Sym>>,
    pub(super) prefix: String,
    /// For an inlined body: the label its `ret` jumps to.
    pub(super) ret_label: Option<String>,
    /// For a recursive function's body: its index, for `Op::Ret`.
    pub(super) ret_func: Option<u32>,
    pub(super) depth: u32,
}

pub(super) struct KCtx<'a> {
    pub(super) m: &'a Module,
    pub(super) funcs: &'a HashMap<&'a str, &'a Function>,
    pub(super) globals: &'a HashMap<String, GlobalSym>,
    pub(super) code: Vec<Instr>,
    pub(super) info: Vec<InstrInfo>,
    pub(super) nslots: u32,
    pub(super) npreds: u32,
    pub(super) consts: HashMap<u64, Reg>,
    pub(super) specials: HashMap<Special, Reg>,
    pub(super) shared: HashMap<String, u32>,
    pub(super) shared_end: u32,
    pub(super) dyn_offset: u32,
    /// The variables with guard gaps (`shared_layout`); `shared_end` and
    /// `dyn_offset` are its `end` and `dyn_offset`.
    pub(super) layout: crate::shared_layout::SharedLayout,
    pub(super) local_end: u32,
    pub(super) labels: HashMap<String, u32>,
    pub(super) fixups: Vec<(usize, String, usize)>,
    pub(super) loc: Option<(u32, u32)>,
    pub(super) instances: u32,
    pub(super) pred_false: Pred,
    pub(super) pred_true: Pred,
    pub(super) cur_line: usize,
    pub(super) cur_text: String,
    /// Note unsupported instructions in `found` and go on (see [`super::unsupported_in`]).
    pub(super) collect: bool,
    pub(super) found: Vec<SimError>,
    /// The carry flag's slot (`add.cc`, `addc`, ...), once used.
    pub(super) carry_slot: Option<Reg>,
    /// `.branchtargets` by (prefixed) name: their index and labels.
    pub(super) tables: HashMap<String, (u32, Vec<String>)>,
    /// The jump tables, resolved once the body is compiled.
    pub(super) table_labels: Vec<Vec<u32>>,
    /// The module's functions on a call cycle (`recursion`): called, not inlined.
    pub(super) recursive: &'a std::collections::HashSet<String>,
    /// Those called so far, by name: their index in `funcs_out`.
    pub(super) outlined: HashMap<String, u32>,
    pub(super) funcs_out: Vec<Func>,
    pub(super) sites: Vec<CallSite>,
    /// Outlined functions whose bodies are not compiled yet.
    pub(super) outline_todo: Vec<String>,
}

fn empty_set() -> &'static std::collections::HashSet<String> {
    static EMPTY: std::sync::OnceLock<std::collections::HashSet<String>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Default::default)
}

impl<'a> KCtx<'a> {
    pub(super) fn new(
        m: &'a Module,
        funcs: &'a HashMap<&'a str, &'a Function>,
        globals: &'a HashMap<String, GlobalSym>,
    ) -> Self {
        let mut k = KCtx {
            m,
            funcs,
            globals,
            code: Vec::new(),
            info: Vec::new(),
            nslots: 0,
            npreds: 0,
            consts: HashMap::new(),
            specials: HashMap::new(),
            shared: HashMap::new(),
            shared_end: 0,
            dyn_offset: 0,
            layout: Default::default(),
            local_end: 0,
            labels: HashMap::new(),
            fixups: Vec::new(),
            loc: None,
            instances: 0,
            pred_false: 0,
            pred_true: 0,
            cur_line: 0,
            cur_text: String::new(),
            collect: false,
            found: Vec::new(),
            carry_slot: None,
            tables: HashMap::new(),
            table_labels: Vec::new(),
            recursive: empty_set(),
            outlined: HashMap::new(),
            funcs_out: Vec::new(),
            sites: Vec::new(),
            outline_todo: Vec::new(),
        };
        k.pred_false = k.new_pred();
        k.pred_true = k.new_pred();
        k
    }

    pub(super) fn unsupported<T>(&self, what: impl Into<String>) -> Result<T, SimError> {
        Err(SimError::Unsupported { instruction: what.into(), line: self.cur_line })
    }
    pub(super) fn bad<T>(&self, msg: impl Into<String>) -> Result<T, SimError> {
        Err(SimError::Parse { line: self.cur_line, msg: format!("`{}`: {}", self.cur_text, msg.into()) })
    }
}
