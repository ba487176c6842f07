//! A module as the simulator's parser reads it ([`ptx_sim::parse_module`]):
//! the one reader of PTX, fuzzed, that also runs the kernels. Only a module it
//! refuses is read from its text ([`super::text`]).

use ptx_sim::parse::ast::{Function, Instr, Module, Operand, Space, Stmt, VarDecl};

use super::view::{shared_end, type_bytes, KernelView, Op, SharedArray, SharedSize};

/// The module, or `None` where the simulator's parser refuses it.
pub(super) fn read(ptx: &str) -> Option<Module> {
    ptx_sim::parse_module(ptx).ok()
}

/// The module's kernels (`.entry` with a body), in text order.
pub(super) fn kernels(m: &Module) -> impl Iterator<Item = &Function> {
    m.funcs.iter().filter(|f| f.is_entry && f.body.is_some())
}

/// Every statement of a body, nested scopes included.
fn statements(f: &Function) -> impl Iterator<Item = &Stmt> {
    f.body.iter().flatten()
}

fn instructions(f: &Function) -> impl Iterator<Item = &Instr> {
    statements(f).filter_map(|s| match s {
        Stmt::Instr(i) => Some(i),
        _ => None,
    })
}

/// Kernel `f` of module `m`.
pub(super) fn kernel_view(m: &Module, f: &Function) -> KernelView {
    let ops = instructions(f)
        .map(|i| Op { opcode: i.text.clone(), line: i.line, shared_end: shared_access_end(i) })
        .collect();
    let inside: Vec<&VarDecl> = statements(f)
        .filter_map(|s| match s {
            Stmt::Var(v) if v.space == Space::Shared => Some(v),
            _ => None,
        })
        .collect();
    let named = m.vars.iter().filter(|v| v.space == Space::Shared && instructions(f).any(|i| names(i, &v.name)));
    KernelView {
        ops,
        shared: inside.iter().copied().chain(named).map(shared_array).collect(),
        names_shared: !inside.is_empty() || instructions(f).any(|i| i.text.contains(".shared")),
        dynamic_shared: m.vars.iter().any(|v| v.is_extern && v.space == Space::Shared),
    }
}

/// A `.shared` declaration's name and size.
fn shared_array(v: &VarDecl) -> SharedArray {
    let element = type_bytes(&format!(".{}", v.ty)).unwrap_or(0) * v.vec as usize;
    let size = match v.array {
        Some(None) => SharedSize::Dynamic,
        Some(Some(n)) if v.is_extern && n == 0 => SharedSize::Dynamic,
        Some(Some(n)) => SharedSize::Static(element * n as usize),
        None => SharedSize::Static(element),
    };
    SharedArray { name: v.name.clone(), size }
}

/// Whether an operand of `i` is `name` (as a value, an address or `name+K`).
fn names(i: &Instr, name: &str) -> bool {
    fn is(op: &Operand, name: &str) -> bool {
        match op {
            Operand::Name(n) | Operand::SymOffset(n, _) => n == name,
            Operand::Addr { base, .. } => base.as_deref() == Some(name),
            Operand::Vector(v) | Operand::List(v) => v.iter().any(|o| is(o, name)),
            Operand::Pair(a, b) => is(a, name) || is(b, name),
            Operand::Not(a) => is(a, name),
            Operand::Int(_) | Operand::F32Bits(_) | Operand::F64Bits(_) | Operand::Float(_) => false,
        }
    }
    i.ops.iter().any(|o| is(o, name))
}

/// For a shared-memory access `[base+K]`: K plus the bytes it accesses.
fn shared_access_end(i: &Instr) -> Option<usize> {
    let (base, offset) = i.ops.iter().find_map(|o| match o {
        Operand::Addr { base, offset } => Some((base, *offset)),
        _ => None,
    })?;
    // `[K]` alone is an address, not an offset past a base.
    shared_end(&i.text, if base.is_some() { offset } else { 0 })
}

/// One `.entry`'s parameters as (type without its dot, bytes), or `None`
/// where one has no size (`name[]`, an unknown type).
pub(super) fn params(f: &Function) -> Option<Vec<(String, usize)>> {
    f.params
        .iter()
        .map(|v| {
            let len = match v.array {
                None => 1,
                Some(Some(n)) => n as usize,
                Some(None) => return None,
            };
            Some((v.ty.clone(), type_bytes(&format!(".{}", v.ty))? * len))
        })
        .collect()
}

/// `.maxntid x, y, z`: x * y * z threads.
pub(super) fn max_threads(f: &Function) -> Option<u32> {
    let dims = f.max_ntid.as_ref().filter(|d| !d.is_empty())?;
    dims.iter().map(|&d| u32::try_from(d).ok()).product()
}
