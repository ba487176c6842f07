//! The fused multiply-adds a GPU makes of PTX that does not spell them.
//!
//! The PTX ISA lets the code generator fuse a `mul` and an `add` that carry no
//! rounding modifier into one `fma`, rounded once instead of twice, and ptxas
//! does where the product has no other use. On an H100 (2026-11-25,
//! `grader/differential/`, docs/grading-accuracy.md): cuda_fp16.h's `__hmul2`
//! then `__hadd2` (`mul.f16x2`, `add.f16x2`) ran as one `HFMA2`, `__hmul` then
//! `__hadd` as one `HFMA2`, and `mul.f32`/`add.f32` and `mul.f64`/`add.f64`
//! as `FFMA` and `DFMA`; a product used twice stayed `FMUL` then `FADD`, and
//! `_rn` spellings (`mul.rn.f16x2`) stay apart. The simulator fuses the same
//! pairs, so that it computes the GPU's bits. A product then a subtraction
//! is left as two roundings (not seen on the GPU yet).

use std::collections::{HashMap, HashSet};

use crate::parse::ast::{Instr, Module, Operand, Stmt};

const FUSED_TYPES: [&str; 4] = ["f16", "f16x2", "f32", "f64"];
/// How far after a `mul` its `add` is looked for, in statements: the pairs seen
/// stood side by side, and a hostile module of many far-apart pairs must not
/// cost the square of its length.
const WINDOW: usize = 64;

/// Fuses every eligible `mul` + `add` pair of every function of `m`.
pub fn fuse_mul_add(m: &mut Module) {
    for f in &mut m.funcs {
        if let Some(body) = &mut f.body {
            fuse_in(body);
        }
    }
}

fn fuse_in(body: &mut [Stmt]) {
    let resolved = Mentions::of(body);
    let mut fusions = Vec::new();
    for i in 0..body.len() {
        let Stmt::Instr(mul) = &body[i] else { continue };
        let Some((ty, ftz)) = contractible(mul, "mul") else { continue };
        let (Operand::Name(_), a, b) = (&mul.ops[0], &mul.ops[1], &mul.ops[2]) else { continue };
        // The product's declaration, defined here and read once: the add is its only use.
        let product = resolved.at[i][0];
        if resolved.count[&product] != 2 {
            continue;
        }
        let Some(j) = resolved.only_use(body, i, product) else { continue };
        let Stmt::Instr(add) = &body[j] else { continue };
        if contractible(add, "add") != Some((ty, ftz)) {
            continue;
        }
        let is_product = |o: &Operand| resolved.decl(j, o) == Some(product);
        let addend = match (is_product(&add.ops[1]), is_product(&add.ops[2])) {
            (true, false) => add.ops[2].clone(),
            (false, true) => add.ops[1].clone(),
            _ => continue,
        };
        let mut mods = vec!["rn".to_string()];
        if ftz {
            mods.push("ftz".into());
        }
        mods.push(ty.into());
        let fused = Instr {
            guard: None,
            opcode: "fma".into(),
            text: format!("fma.{} (the GPU fuses `{}` and `{}`)", mods.join("."), mul.text, add.text),
            ops: vec![add.ops[0].clone(), a.clone(), b.clone(), addend],
            mods,
            line: add.line,
        };
        fusions.push((j, fused));
    }
    for (j, fused) in fusions {
        body[j] = Stmt::Instr(fused);
    }
}

/// A register as one declaration: its name and the scope that declares it (0:
/// the function's own). Inline asm writes `{ .reg .f32 t; ... }`, so two
/// blocks may each have their own `t`.
type Decl<'a> = (&'a str, usize);

/// Every instruction's mentions of names, each resolved to its declaration,
/// and how many mentions each declaration has.
struct Mentions<'a> {
    /// Per statement, in operand order (guard first); empty for non-instructions.
    at: Vec<Vec<Decl<'a>>>,
    count: HashMap<Decl<'a>, usize>,
}

impl<'a> Mentions<'a> {
    fn of(body: &'a [Stmt]) -> Self {
        // The nested scopes open here, each with the names it declares (a name no
        // nested scope declares is the function's: scope 0, which keeps no list).
        let mut scopes: Vec<(usize, HashSet<&'a str>)> = Vec::new();
        let mut opened = 0;
        let mut at = Vec::with_capacity(body.len());
        let mut count = HashMap::new();
        for stmt in body {
            let mut here = Vec::new();
            match stmt {
                Stmt::ScopeOpen => {
                    opened += 1;
                    scopes.push((opened, HashSet::new()));
                }
                Stmt::ScopeClose => drop(scopes.pop()),
                Stmt::Reg { names, .. } => {
                    if let Some((_, declared)) = scopes.last_mut() {
                        declared.extend(names.iter().map(String::as_str));
                    }
                }
                Stmt::Instr(ins) => instr_names(ins, &mut |n| {
                    let scope = scopes.iter().rev().find(|(_, names)| names.contains(&n)).map_or(0, |s| s.0);
                    *count.entry((n, scope)).or_default() += 1;
                    here.push((n, scope));
                }),
                _ => {}
            }
            at.push(here);
        }
        Mentions { at, count }
    }

    /// The declaration operand `o` of the instruction at `j` names, if a register.
    fn decl(&self, j: usize, o: &Operand) -> Option<Decl<'a>> {
        let Operand::Name(n) = o else { return None };
        self.at[j].iter().find(|(m, _)| m == n).copied()
    }

    /// The index of the first instruction after the mul at `at` that mentions
    /// `product`, if only scopes and instructions that touch neither it nor the
    /// mul's sources lie between (no label, no declaration: straight-line code),
    /// within [`WINDOW`] statements.
    fn only_use(&self, body: &[Stmt], at: usize, product: Decl<'a>) -> Option<usize> {
        let sources = &self.at[at][1..];
        for (j, stmt) in body.iter().enumerate().skip(at + 1).take(WINDOW) {
            match stmt {
                Stmt::Instr(_) => {
                    let mentions = &self.at[j];
                    // The use (which may read, or write, a source too: it reads first).
                    if mentions.contains(&product) {
                        return Some(j);
                    }
                    if mentions.iter().any(|m| sources.contains(m)) {
                        return None;
                    }
                }
                Stmt::ScopeOpen | Stmt::ScopeClose | Stmt::Loc { .. } => {}
                _ => return None,
            }
        }
        None
    }
}

/// `(type, ftz)` of an unguarded `opcode` with three operands, a float type and
/// no rounding, saturation or relu modifier: one the GPU may fuse.
fn contractible<'a>(ins: &'a Instr, opcode: &str) -> Option<(&'a str, bool)> {
    if ins.opcode != opcode || ins.guard.is_some() || ins.ops.len() != 3 {
        return None;
    }
    let mut ty = None;
    let mut ftz = false;
    for m in &ins.mods {
        match m.as_str() {
            "ftz" => ftz = true,
            t if FUSED_TYPES.contains(&t) && ty.is_none() => ty = Some(t),
            _ => return None, // a rounding mode, .sat, .relu, another type
        }
    }
    ty.map(|t| (t, ftz))
}

fn instr_names<'a>(ins: &'a Instr, f: &mut impl FnMut(&'a str)) {
    if let Some((g, _)) = &ins.guard {
        f(g);
    }
    for o in &ins.ops {
        names(o, f);
    }
}

fn names<'a>(o: &'a Operand, f: &mut impl FnMut(&'a str)) {
    match o {
        Operand::Name(n) | Operand::SymOffset(n, _) => f(n),
        Operand::Addr { base: Some(n), .. } => f(n),
        Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|o| names(o, f)),
        Operand::Pair(a, b) => {
            names(a, f);
            names(b, f);
        }
        Operand::Not(a) => names(a, f),
        Operand::Addr { base: None, .. }
        | Operand::Int(_)
        | Operand::F32Bits(_)
        | Operand::F64Bits(_)
        | Operand::Float(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fused(ptx_body: &str) -> Vec<String> {
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<20>;\n.reg .b16 %rs<20>;\n{ptx_body}\nret;\n}}\n"
        );
        let mut m = crate::parse::parse(&ptx).unwrap();
        fuse_mul_add(&mut m);
        let body = m.funcs[0].body.as_ref().unwrap();
        body.iter()
            .filter_map(|s| match s {
                Stmt::Instr(i) if i.opcode != "ret" => Some(format!("{}.{} {:?}", i.opcode, i.mods.join("."), i.ops)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_product_read_once_by_an_add_is_fused_as_the_gpu_fuses_it() {
        // What cuda_fp16.h's __hmul2 then __hadd2 look like in NVRTC's PTX.
        let out = fused("{mul.f16x2 %r8,%r6,%r7;\n}\n{add.f16x2 %r11,%r8,%r6;\n}");
        assert!(out[1].starts_with("fma.rn.f16x2"), "{out:?}");
        assert!(out[1].contains(r#"[Name("%r11"), Name("%r6"), Name("%r7"), Name("%r6")]"#), "{out:?}");
        let scalar = fused("mul.ftz.f16 %rs3, %rs1, %rs2;\nadd.ftz.f16 %rs4, %rs5, %rs3;");
        assert!(scalar[1].starts_with("fma.rn.ftz.f16") && scalar[1].contains(r#"Name("%rs5")]"#), "{scalar:?}");
        let float = fused(".reg .f32 %f<9>;\nmul.f32 %f3, %f1, %f2;\nadd.f32 %f4, %f3, %f5;");
        assert!(float[1].starts_with("fma.rn.f32"), "{float:?}");
        let double = fused(".reg .f64 %fd<9>;\nmul.f64 %fd3, %fd1, %fd2;\nadd.f64 %fd4, %fd3, %fd5;");
        assert!(double[1].starts_with("fma.rn.f64"), "{double:?}");
        // Two inline-asm blocks, each with its own `t`.
        let blocks = ".reg .f32 %f<9>;\n{ .reg .f32 t; mul.f32 t, %f1, %f2; add.f32 %f3, t, %f4; }\n\
                      { .reg .f32 t; mul.f32 t, %f5, %f6; add.f32 %f7, t, %f8; }";
        let out = fused(blocks);
        assert!(out[1].starts_with("fma.rn.f32") && out[3].starts_with("fma.rn.f32"), "{out:?}");
    }

    #[test]
    fn a_pair_the_gpu_must_round_twice_is_left_alone() {
        for body in [
            // Rounding spelled out: __hmul2_rn, __hadd2_rn.
            "mul.rn.f16x2 %r8, %r6, %r7;\nadd.rn.f16x2 %r11, %r8, %r6;",
            // The product is used again.
            "mul.f16x2 %r8, %r6, %r7;\nadd.f16x2 %r11, %r8, %r6;\nmov.b32 %r12, %r8;",
            // A source changes in between.
            "mul.f16x2 %r8, %r6, %r7;\nmov.b32 %r6, 0;\nadd.f16x2 %r11, %r8, %r6;",
            // A label in between: another path may reach the add.
            "mul.f16x2 %r8, %r6, %r7;\nL1:\nadd.f16x2 %r11, %r8, %r6;",
            // Saturation, other types, a guard.
            "mul.sat.f16x2 %r8, %r6, %r7;\nadd.f16x2 %r11, %r8, %r6;",
            "mul.f16x2 %r8, %r6, %r7;\nadd.ftz.f16x2 %r11, %r8, %r6;",
            "mul.f16x2 %r8, %r6, %r7;\nadd.f32 %r11, %r8, %r6;",
            // A product then a subtraction (not fused yet).
            "mul.f16x2 %r8, %r6, %r7;\nsub.f16x2 %r11, %r8, %r6;",
            "setp.eq.u32 %p1, %r1, 0;\n@%p1 mul.f16x2 %r8, %r6, %r7;\nadd.f16x2 %r11, %r8, %r6;",
            // The add reads another `t` than the product (the outer one).
            ".reg .f32 t;\n{ .reg .f32 t; mul.f32 t, %r6, %r7; }\nadd.f32 %r11, t, %r6;",
            // The product added to itself.
            "mul.f16x2 %r8, %r6, %r7;\nadd.f16x2 %r11, %r8, %r8;",
        ] {
            let out = fused(&format!(".reg .pred %p<3>;\n{body}"));
            assert!(out.iter().all(|i| !i.starts_with("fma")), "{body}: {out:?}");
        }
    }
}
