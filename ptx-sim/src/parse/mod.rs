//! PTX text → [`ast::Module`]: a recursive-descent parser over [`lexer`] tokens.

pub mod ast;
pub mod lexer;

use ast::*;
use lexer::{Tok, Token};

use crate::error::SimError;

/// Registers one kernel may declare (NVRTC's largest course kernels use a few
/// hundred); more is refused, in the parser and again in the compiler.
pub const MAX_REGISTERS: usize = 16_384;
/// Register names a whole module may declare (each is a string while parsing).
const MODULE_REGISTERS: usize = 8 * MAX_REGISTERS;

/// `.global` and the other state-space words (without `.param`).
fn is_space_word(w: &str) -> bool {
    matches!(w, ".global" | ".const" | ".shared" | ".local")
}

pub fn parse(src: &str) -> Result<Module, SimError> {
    let toks = lexer::lex(src)?;
    let mut m = Parser { t: toks, i: 0, registers: 0, inlined: clang_inlined_at(src), inlined_at: Default::default() }
        .module()?;
    attribute_to_sources(&mut m);
    Ok(m)
}

/// clang writes where an inlined `.loc` was called from only in a comment:
/// `.loc 2 53 27 // hdr.h:53:27 @[ /dir/k.cu:10:22 ]` (nested ones as
/// `@[ a:1:2 @[ b:3:4 ] ]`). By source line: the outer places, innermost first.
fn clang_inlined_at(src: &str) -> std::collections::HashMap<usize, Vec<(String, u32)>> {
    let mut out = std::collections::HashMap::new();
    for (i, l) in src.lines().enumerate() {
        if !l.contains("@[") || !l.trim_start().starts_with(".loc") {
            continue;
        }
        let Some((_, comment)) = l.split_once("//") else { continue };
        let frames: Vec<(String, u32)> = comment
            .split("@[")
            .skip(1)
            .filter_map(|f| {
                let f = f.trim().trim_end_matches(|c: char| c == ']' || c.is_whitespace());
                let mut it = f.rsplitn(3, ':');
                let (_col, line, path) = (it.next()?, it.next()?, it.next()?);
                Some((path.to_string(), line.parse().ok()?))
            })
            .collect();
        if !frames.is_empty() {
            out.insert(i + 1, frames);
        }
    }
    out
}

/// A student's line, not a header's: a `.loc` in a file that is not a `.cu`
/// file (CUDA's or clang's headers, inlined) is moved to the innermost place it
/// was inlined into that is in a `.cu` file, where there is one. Messages then
/// name the line the student wrote (`atomicAdd(...)`), whichever compiler
/// inlined which header.
fn attribute_to_sources(m: &mut Module) {
    let is_cu = |p: &str| p.ends_with(".cu");
    let mut files = m.files.clone();
    let mut next = files.keys().max().map_or(1, |k| k + 1);
    for f in &mut m.funcs {
        for st in f.body.iter_mut().flatten() {
            let Stmt::Loc { file, line, outer } = st else { continue };
            if outer.is_empty() || files.get(file).is_some_and(|p| is_cu(p)) {
                continue;
            }
            for (of, ol) in outer.iter() {
                let idx = match of {
                    LocFile::Index(i) => Some(*i),
                    LocFile::Path(p) => {
                        let base = |s: &str| s.rsplit(['/', '\\']).next().unwrap_or("").to_string();
                        let found = files
                            .iter()
                            .find(|(_, q)| *q == p)
                            .or_else(|| files.iter().find(|(_, q)| base(q) == base(p)));
                        match found {
                            Some((&i, _)) => Some(i),
                            None if is_cu(p) => {
                                files.insert(next, p.clone());
                                next += 1;
                                Some(next - 1)
                            }
                            None => None,
                        }
                    }
                };
                if let Some(i) = idx.filter(|i| files.get(i).is_some_and(|p| is_cu(p))) {
                    (*file, *line) = (i, *ol);
                    break;
                }
            }
        }
    }
    m.files = files;
}

struct Parser {
    t: Vec<Token>,
    i: usize,
    /// Register names declared so far in the module (see [`MAX_REGISTERS`]).
    registers: usize,
    /// clang's inlined-at comments by source line (see [`clang_inlined_at`]).
    inlined: std::collections::HashMap<usize, Vec<(String, u32)>>,
    /// NVRTC's `inlined_at` of each `.loc` (file, line, column) of the function.
    inlined_at: std::collections::HashMap<(u32, u32, u32), (u32, u32, u32)>,
}

type PResult<T> = Result<T, SimError>;

impl Parser {
    fn line(&self) -> usize {
        self.t.get(self.i).or(self.t.last()).map_or(0, |t| t.line)
    }
    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        Err(SimError::Parse { line: self.line(), msg: msg.into() })
    }
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i).map(|t| &t.tok)
    }
    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.t.get(self.i + k).map(|t| &t.tok)
    }
    fn next(&mut self) -> PResult<Tok> {
        match self.t.get(self.i) {
            Some(t) => {
                self.i += 1;
                Ok(t.tok.clone())
            }
            None => self.err("unexpected end of file"),
        }
    }
    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, c: char) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.err(format!("expected `{c}`, found {:?}", self.peek()))
        }
    }
    fn ident(&mut self) -> PResult<String> {
        match self.next()? {
            Tok::Ident(s) => Ok(s),
            t => {
                self.i -= 1;
                self.err(format!("expected a name, found {t:?}"))
            }
        }
    }
    fn peek_ident(&self) -> Option<&str> {
        match self.peek() {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }
    fn int(&mut self) -> PResult<i64> {
        let neg = self.eat_punct('-');
        match self.next()? {
            Tok::Int(v) => Ok(if neg { (v as i64).wrapping_neg() } else { v as i64 }),
            t => self.err(format!("expected an integer, found {t:?}")),
        }
    }
    fn skip_to_semicolon(&mut self) -> PResult<()> {
        while !self.eat_punct(';') {
            self.next()?;
        }
        Ok(())
    }
    /// Skips the remaining tokens on source line `line` (used after `.loc`).
    fn skip_line(&mut self, line: usize) {
        while self.t.get(self.i).is_some_and(|t| t.line == line) {
            self.i += 1;
        }
    }

    fn module(mut self) -> PResult<Module> {
        let mut m = Module { address_size: 64, ..Default::default() };
        let mut is_extern = false;
        while let Some(tok) = self.peek().cloned() {
            let Tok::Ident(word) = tok else {
                return self.err(format!("unexpected {tok:?} at module scope"));
            };
            let line = self.line();
            match word.as_str() {
                ".version" => {
                    self.i += 1;
                    m.version = match self.next()? {
                        Tok::Float(f) => format!("{f}"),
                        Tok::Int(v) => v.to_string(),
                        t => format!("{t:?}"),
                    };
                }
                ".target" => {
                    self.i += 1;
                    m.target = self.ident()?;
                    while self.eat_punct(',') {
                        self.ident()?;
                    }
                }
                ".address_size" => {
                    self.i += 1;
                    m.address_size = self.int()? as u32;
                    if m.address_size != 64 {
                        return self.err("only `.address_size 64` is supported");
                    }
                }
                ".file" => {
                    self.i += 1;
                    let n = self.int()? as u32;
                    // `"path"`, or clang's `"directory" "file"`; then optional
                    // `, timestamp, size` or `, md5 0x...`: the rest of the line
                    let mut names = Vec::new();
                    while let Some(Tok::Str(s)) = self.peek().cloned() {
                        self.i += 1;
                        names.push(s);
                    }
                    let path = match names.as_slice() {
                        [dir, file] if !file.starts_with('/') && !dir.is_empty() => {
                            format!("{}/{file}", dir.trim_end_matches('/'))
                        }
                        [.., file] => file.clone(),
                        [] => return self.err("`.file` without a file name"),
                    };
                    m.files.insert(n, path);
                    self.skip_line(line);
                }
                ".section" => {
                    // DWARF sections (from -G): skip the braced body.
                    self.i += 1;
                    while !self.is_punct('{') {
                        self.next()?;
                    }
                    self.skip_braces()?;
                }
                ".pragma" | ".alias" => self.skip_to_semicolon()?,
                ".visible" | ".weak" | ".common" => self.i += 1,
                ".extern" => {
                    self.i += 1;
                    is_extern = true;
                    continue;
                }
                ".entry" | ".func" => {
                    let f = self.function(line)?;
                    m.funcs.push(f);
                }
                ".global" | ".const" | ".shared" | ".local" => {
                    let v = self.var_decl(is_extern)?;
                    self.expect_punct(';')?;
                    m.vars.push(v);
                }
                ".globl" => {
                    self.i += 1;
                    self.ident()?;
                }
                _ => return self.err(format!("unexpected `{word}` at module scope")),
            }
            is_extern = false;
        }
        Ok(m)
    }

    fn skip_braces(&mut self) -> PResult<()> {
        self.expect_punct('{')?;
        let mut depth = 1;
        while depth > 0 {
            match self.next()? {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    /// `.global .align 4 .b8 name[20] = {..}` (the caller consumes the `;`).
    fn var_decl(&mut self, is_extern: bool) -> PResult<VarDecl> {
        let line = self.line();
        let space = match self.ident()?.as_str() {
            ".global" => Space::Global,
            ".const" => Space::Const,
            ".shared" => Space::Shared,
            ".local" => Space::Local,
            ".param" => Space::Param,
            w => return self.err(format!("unknown state space `{w}`")),
        };
        let mut v = VarDecl {
            space,
            name: String::new(),
            align: 0,
            ty: String::new(),
            vec: 1,
            array: None,
            init: Vec::new(),
            is_extern,
            line,
        };
        loop {
            let w = self.ident()?;
            match w.as_str() {
                ".align" => v.align = self.int()? as u32,
                ".v2" => v.vec = 2,
                ".v4" => v.vec = 4,
                // Pointer attributes on kernel params: `.ptr [.space] [.align N]`. The
                // `.align` there is the alignment of the data pointed to (clang writes
                // `.ptr .align 1` for every pointer), not the parameter's own.
                ".ptr" => {
                    if self.peek_ident().is_some_and(is_space_word) {
                        self.i += 1;
                    }
                    if self.peek_ident() == Some(".align") {
                        self.i += 1;
                        self.int()?;
                    }
                }
                ".global" | ".const" | ".shared" | ".local" | ".param" => {}
                ".attribute" => {
                    self.expect_punct('(')?;
                    while !self.eat_punct(')') {
                        self.next()?;
                    }
                }
                w if w.starts_with('.') && type_size(&w[1..]).is_some() => v.ty = w[1..].to_string(),
                w if w.starts_with('.') => return self.err(format!("unknown variable attribute `{w}`")),
                _ => {
                    v.name = w;
                    break;
                }
            }
        }
        if v.ty.is_empty() {
            return self.err(format!("variable `{}` has no type", v.name));
        }
        if self.eat_punct('[') {
            if self.eat_punct(']') {
                v.array = Some(None);
            } else {
                let n = self.int()? as u64;
                self.expect_punct(']')?;
                v.array = Some(Some(n));
            }
            // multi-dimensional arrays: multiply out
            while self.eat_punct('[') {
                let n = self.int()? as u64;
                self.expect_punct(']')?;
                if let Some(Some(m)) = v.array {
                    v.array = Some(Some(m.saturating_mul(n)));
                }
            }
        }
        if self.eat_punct('=') {
            if self.eat_punct('{') {
                self.init_list(&mut v.init)?;
            } else {
                let x = self.init_val()?;
                v.init.push(x);
            }
        }
        Ok(v)
    }

    fn init_list(&mut self, out: &mut Vec<InitVal>) -> PResult<()> {
        if self.eat_punct('}') {
            return Ok(());
        }
        loop {
            if self.eat_punct('{') {
                self.init_list(out)?;
            } else {
                let x = self.init_val()?;
                out.push(x);
            }
            if self.eat_punct('}') {
                return Ok(());
            }
            self.expect_punct(',')?;
        }
    }

    fn init_val(&mut self) -> PResult<InitVal> {
        let neg = self.eat_punct('-');
        Ok(match self.next()? {
            Tok::Int(v) => InitVal::Int(if neg { -(v as i128) } else { v as i128 }),
            Tok::F32Bits(b) => InitVal::F32Bits(if neg { b ^ 0x8000_0000 } else { b }),
            Tok::F64Bits(b) => InitVal::F64Bits(if neg { b ^ (1 << 63) } else { b }),
            Tok::Float(f) => InitVal::Float(if neg { -f } else { f }),
            Tok::Ident(s) if s == "generic" => {
                self.expect_punct('(')?;
                let n = self.ident()?;
                self.expect_punct(')')?;
                InitVal::Symbol(n)
            }
            Tok::Ident(s) => InitVal::Symbol(s),
            t => return self.err(format!("bad initializer {t:?}")),
        })
    }

    fn param_list(&mut self) -> PResult<Vec<VarDecl>> {
        let mut out = Vec::new();
        self.expect_punct('(')?;
        if self.eat_punct(')') {
            return Ok(out);
        }
        loop {
            if self.peek_ident() == Some(".reg") {
                return self.err("`.reg` function parameters are not supported");
            }
            out.push(self.var_decl(false)?);
            if self.eat_punct(')') {
                return Ok(out);
            }
            self.expect_punct(',')?;
        }
    }

    fn function(&mut self, line: usize) -> PResult<Function> {
        self.inlined_at.clear();
        let is_entry = self.ident()? == ".entry";
        let rets = if !is_entry && self.is_punct('(') { self.param_list()? } else { Vec::new() };
        let name = self.ident()?;
        let params = if self.is_punct('(') { self.param_list()? } else { Vec::new() };
        // performance directives (.maxntid 256, 1, 1 / .reqntid / .minnctapersm / .noreturn ...)
        let mut max_ntid = None;
        loop {
            if self.eat_punct(';') {
                return Ok(Function { name, is_entry, params, rets, body: None, line, max_ntid });
            }
            if self.is_punct('{') {
                break;
            }
            if self.peek_ident() == Some(".maxntid") {
                // kept, not checked: the tokens are read on as before
                let mut dims = Vec::new();
                let mut k = 1;
                while let Some(Tok::Int(d)) = self.peek_at(k) {
                    dims.push(*d);
                    if self.peek_at(k + 1) != Some(&Tok::Punct(',')) {
                        break;
                    }
                    k += 2;
                }
                max_ntid = Some(dims);
            }
            self.next()?;
        }
        self.expect_punct('{')?;
        let mut body = Vec::new();
        let mut depth = 1;
        loop {
            if self.eat_punct('{') {
                depth += 1;
                body.push(Stmt::ScopeOpen);
                continue;
            }
            if self.eat_punct('}') {
                depth -= 1;
                if depth == 0 {
                    break;
                }
                body.push(Stmt::ScopeClose);
                continue;
            }
            body.push(self.statement()?);
        }
        Ok(Function { name, is_entry, params, rets, body: Some(body), line, max_ntid })
    }

    fn statement(&mut self) -> PResult<Stmt> {
        let line = self.line();
        if let Some(w) = self.peek_ident() {
            match w {
                ".reg" => {
                    self.i += 1;
                    let mut ty = String::new();
                    while let Some(w) = self.peek_ident().filter(|w| w.starts_with('.')) {
                        if w == ".v2" || w == ".v4" {
                            return self.err("vector registers are not supported");
                        }
                        let is_align = w == ".align";
                        if !is_align {
                            ty = w[1..].to_string();
                        }
                        self.i += 1;
                        if is_align {
                            self.int()?;
                        }
                    }
                    let mut names = Vec::new();
                    loop {
                        let n = self.ident()?;
                        if self.eat_punct('<') {
                            let count = self.int()?;
                            self.expect_punct('>')?;
                            // Each name becomes a slot of every thread: a hostile
                            // `%r<100000000>` must not take the machine's memory.
                            let total = (self.registers + names.len()) as i64;
                            if count < 0 || total.saturating_add(count) > MODULE_REGISTERS as i64 {
                                return self.err(format!(
                                    "`.reg {n}<{count}>`: the module declares more than {MODULE_REGISTERS} registers"
                                ));
                            }
                            for k in 0..count {
                                names.push(format!("{n}{k}"));
                            }
                        } else {
                            names.push(n);
                        }
                        if self.eat_punct(';') {
                            break;
                        }
                        self.expect_punct(',')?;
                    }
                    self.registers += names.len();
                    return Ok(Stmt::Reg { ty, names, line });
                }
                ".local" | ".shared" | ".param" | ".const" | ".global" => {
                    let v = self.var_decl(false)?;
                    self.expect_punct(';')?;
                    return Ok(Stmt::Var(v));
                }
                ".loc" => {
                    self.i += 1;
                    let file = self.int()? as u32;
                    let l = self.int()? as u32;
                    let col = if matches!(self.peek(), Some(Tok::Int(_))) { self.int()? as u32 } else { 0 };
                    // `, function_name ..., inlined_at F L C` are on the same line
                    let mut outer = Vec::new();
                    while self.t.get(self.i).is_some_and(|t| t.line == line) {
                        if self.peek_ident() == Some("inlined_at") {
                            self.i += 1;
                            if let (Ok(f), Ok(ol), Ok(oc)) = (self.int(), self.int(), self.int()) {
                                let mut at = (f as u32, ol as u32, oc as u32);
                                // NVRTC gives one level per `.loc`; the call site's own
                                // `.loc` (met before) gives the next one out.
                                self.inlined_at.insert((file, l, col), at);
                                for _ in 0..64 {
                                    outer.push((LocFile::Index(at.0), at.1));
                                    match self.inlined_at.get(&at) {
                                        Some(&next) if next != at => at = next,
                                        _ => break,
                                    }
                                }
                            }
                        } else {
                            self.i += 1;
                        }
                    }
                    if let Some(frames) = self.inlined.get(&line) {
                        outer.extend(frames.iter().map(|(p, ol)| (LocFile::Path(p.clone()), *ol)));
                    }
                    return Ok(Stmt::Loc { file, line: l, outer });
                }
                ".pragma" => {
                    self.skip_to_semicolon()?;
                    return Ok(Stmt::Pragma);
                }
                _ => {}
            }
            if self.peek_at(1) == Some(&Tok::Punct(':')) {
                let name = self.ident()?;
                self.i += 1;
                if self.peek_ident() == Some(".branchtargets") {
                    self.i += 1;
                    let mut targets = vec![self.ident()?];
                    while self.eat_punct(',') {
                        targets.push(self.ident()?);
                    }
                    self.expect_punct(';')?;
                    return Ok(Stmt::BranchTargets { name, targets, line });
                }
                return Ok(Stmt::Label(name, line));
            }
        }
        self.instruction().map(Stmt::Instr)
    }

    fn instruction(&mut self) -> PResult<Instr> {
        let line = self.line();
        let mut guard = None;
        if self.eat_punct('@') {
            let neg = self.eat_punct('!');
            guard = Some((self.ident()?, neg));
        }
        let text = self.ident()?;
        let mut parts = text.split('.');
        let opcode = parts.next().unwrap_or_default().to_string();
        let mods = parts.map(|s| s.to_string()).collect();
        let mut ops = Vec::new();
        if !self.eat_punct(';') {
            loop {
                ops.push(self.operand()?);
                if self.eat_punct(';') {
                    break;
                }
                self.expect_punct(',')?;
            }
        }
        Ok(Instr { guard, opcode, mods, ops, line, text })
    }

    fn operand(&mut self) -> PResult<Operand> {
        if self.eat_punct('!') {
            return Ok(Operand::Not(Box::new(self.operand()?)));
        }
        if self.eat_punct('[') {
            let mut base = None;
            let mut offset = 0i64;
            match self.peek().cloned() {
                Some(Tok::Ident(s)) => {
                    self.i += 1;
                    base = Some(s);
                }
                _ => offset = self.int()?,
            }
            while !self.eat_punct(']') {
                if self.eat_punct('+') || self.is_punct('-') {
                    offset = offset.wrapping_add(self.int()?);
                } else {
                    return self.err(format!("bad address expression near {:?}", self.peek()));
                }
            }
            return Ok(Operand::Addr { base, offset });
        }
        if self.eat_punct('{') {
            let mut v = Vec::new();
            loop {
                v.push(self.operand()?);
                if self.eat_punct('}') {
                    break;
                }
                self.expect_punct(',')?;
            }
            return Ok(Operand::Vector(v));
        }
        if self.eat_punct('(') {
            let mut v = Vec::new();
            if self.eat_punct(')') {
                return Ok(Operand::List(v));
            }
            loop {
                v.push(self.operand()?);
                if self.eat_punct(')') {
                    break;
                }
                self.expect_punct(',')?;
            }
            return Ok(Operand::List(v));
        }
        let neg = self.eat_punct('-');
        match self.next()? {
            Tok::Int(v) => Ok(Operand::Int(if neg { (v as i64).wrapping_neg() } else { v as i64 })),
            Tok::F32Bits(b) => Ok(Operand::F32Bits(if neg { b ^ 0x8000_0000 } else { b })),
            Tok::F64Bits(b) => Ok(Operand::F64Bits(if neg { b ^ (1 << 63) } else { b })),
            Tok::Float(f) => Ok(Operand::Float(if neg { -f } else { f })),
            Tok::Ident(s) if !neg => {
                if self.eat_punct('|') {
                    let p = self.ident()?;
                    return Ok(Operand::Pair(Box::new(Operand::Name(s)), Box::new(Operand::Name(p))));
                }
                if self.is_punct('+') && matches!(self.peek_at(1), Some(Tok::Int(_)) | Some(Tok::Punct('-'))) {
                    self.i += 1;
                    let off = self.int()?;
                    return Ok(Operand::SymOffset(s, off));
                }
                Ok(Operand::Name(s))
            }
            t => self.err(format!("bad operand {t:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_small_kernel() {
        let src = r#"
.version 8.8
.target sm_75
.address_size 64
.const .align 4 .b8 coef[8] = {0, 0, 128, 63, 0, 0, 0, 64};
.visible .entry k(
    .param .u64 k_param_0,
    .param .u32 k_param_1
)
.maxntid 256, 1, 1
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    .loc 1 3 0
    ld.param.u64 %rd1, [k_param_0];
    mov.u32 %r1, %tid.x;
    setp.ge.s32 %p1, %r1, 4;
    @%p1 bra $L__BB0_2;
    st.global.v2.f32 [%rd1+-8], {%r1, %r2};
    shfl.sync.down.b32 %r2|%p1, %r1, 1, 31, -1;
$L__BB0_2:
    ret;
}
.file 1 "k.cu"
"#;
        let m = parse(src).unwrap();
        assert_eq!(m.vars.len(), 1);
        assert_eq!(m.vars[0].init.len(), 8);
        let f = &m.funcs[0];
        assert_eq!(f.params.len(), 2);
        assert_eq!(f.max_ntid, Some(vec![256, 1, 1]));
        let body = f.body.as_ref().unwrap();
        let instrs: Vec<_> = body
            .iter()
            .filter_map(|s| match s {
                Stmt::Instr(i) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(instrs.len(), 7);
        assert_eq!(instrs[3].guard, Some(("%p1".into(), false)));
        assert_eq!(instrs[4].ops[0], Operand::Addr { base: Some("%rd1".into()), offset: -8 });
        assert!(matches!(instrs[5].ops[0], Operand::Pair(..)));
        assert_eq!(m.files[&1], "k.cu");
    }
}
