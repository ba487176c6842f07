//! The PTX syntax tree: directives and instructions as written, names unresolved.

use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    Global,
    Const,
    Shared,
    Local,
    Param,
}

#[derive(Debug, Clone, PartialEq)]
pub enum InitVal {
    Int(i128),
    F32Bits(u32),
    F64Bits(u64),
    Float(f64),
    /// `generic(sym)` or a bare symbol: the address of another variable.
    Symbol(String),
}

#[derive(Debug, Clone)]
pub struct VarDecl {
    pub space: Space,
    pub name: String,
    pub align: u32,
    /// The element type word without the dot, e.g. `b8`, `u32`, `f32`.
    pub ty: String,
    /// `.v2`/`.v4` vector variables: number of lanes (1 otherwise).
    pub vec: u32,
    /// `None`: a scalar; `Some(None)`: `name[]`; `Some(Some(n))`: `name[n]`.
    pub array: Option<Option<u64>>,
    pub init: Vec<InitVal>,
    pub is_extern: bool,
    pub line: usize,
}

impl VarDecl {
    pub fn elem_size(&self) -> u32 {
        type_size(&self.ty).unwrap_or(1) * self.vec
    }
    /// Size in bytes (0 for unsized `extern` arrays).
    pub fn size(&self) -> u64 {
        let n = match self.array {
            None => 1,
            Some(None) => 0,
            Some(Some(n)) => n,
        };
        n.saturating_mul(self.elem_size() as u64)
    }
    pub fn alignment(&self) -> u32 {
        if self.align > 0 {
            self.align
        } else {
            self.elem_size().max(1)
        }
    }
}

/// Size in bytes of a PTX fundamental type word (`u32` → 4).
pub fn type_size(t: &str) -> Option<u32> {
    Some(match t {
        "b8" | "u8" | "s8" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        "pred" => 1,
        _ => return None,
    })
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register, special register, variable, label or function name.
    Name(String),
    Int(i64),
    F32Bits(u32),
    F64Bits(u64),
    Float(f64),
    /// `[base+offset]`; `base` is a register or a variable name, or absent for `[imm]`.
    Addr {
        base: Option<String>,
        offset: i64,
    },
    /// `{a, b, c, d}`
    Vector(Vec<Operand>),
    /// `%r|%p` (a destination plus a predicate destination)
    Pair(Box<Operand>, Box<Operand>),
    /// `!%p`
    Not(Box<Operand>),
    /// `(a, b)` in `call`
    List(Vec<Operand>),
    /// `name+offset` outside brackets (e.g. `mov.u64 %rd1, arr+8;`)
    SymOffset(String, i64),
}

#[derive(Debug, Clone)]
pub struct Instr {
    /// Guard predicate register and whether it is negated (`@!%p`).
    pub guard: Option<(String, bool)>,
    pub opcode: String,
    pub mods: Vec<String>,
    pub ops: Vec<Operand>,
    pub line: usize,
    /// The full opcode as written, e.g. `ld.global.f32`.
    pub text: String,
}

#[derive(Debug, Clone)]
pub enum Stmt {
    Reg {
        ty: String,
        names: Vec<String>,
        line: usize,
    },
    Var(VarDecl),
    Label(String, usize),
    Instr(Instr),
    /// `.loc file line col`: where the next instructions come from. `outer`:
    /// the places it was inlined into, innermost first (NVRTC's `inlined_at`,
    /// clang's `@[ file:line:col ]` comment); see [`crate::parse`].
    Loc {
        file: u32,
        line: u32,
        outer: Vec<(LocFile, u32)>,
    },
    ScopeOpen,
    ScopeClose,
    /// `.pragma "nounroll";` and other hints without meaning here.
    Pragma,
    /// `name: .branchtargets L1, L2, ...;`: a jump table for `brx.idx`.
    BranchTargets {
        name: String,
        targets: Vec<String>,
        line: usize,
    },
}

/// The file of an inlined-at location: a `.file` index, or a path still to be
/// matched with one (clang names it only in a comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocFile {
    Index(u32),
    Path(String),
}

#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub is_entry: bool,
    pub params: Vec<VarDecl>,
    pub rets: Vec<VarDecl>,
    /// `None` for a prototype (`.extern .func vprintf(...)`).
    pub body: Option<Vec<Stmt>>,
    pub line: usize,
    /// `.maxntid 128, 1, 1` (from `__launch_bounds__`) as written between the
    /// parameter list and the body: `[128, 1, 1]`. Read for the kit's launch
    /// checks; the simulator itself does not use it.
    pub max_ntid: Option<Vec<u64>>,
}

#[derive(Debug, Clone, Default)]
pub struct Module {
    pub version: String,
    pub target: String,
    pub address_size: u32,
    pub files: HashMap<u32, String>,
    pub vars: Vec<VarDecl>,
    pub funcs: Vec<Function>,
}
