//! CUDA C as a stream of normalised tokens: comments and layout gone, every
//! name the student chose replaced by one placeholder, every literal by
//! another, and runs of independent simple statements put in one canonical
//! order. Two kernels that differ only by renamed variables, reformatting,
//! changed comments or reordered independent statements give the same stream.

use std::collections::{BTreeMap, BTreeSet};

/// One token after normalisation, with the source line it came from (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub line: usize,
}

/// The atomics: kept as words, and fences of reorderable runs.
const ATOMICS: &[&str] = &[
    "atomicAdd",
    "atomicSub",
    "atomicMax",
    "atomicMin",
    "atomicCAS",
    "atomicExch",
    "atomicInc",
    "atomicOr",
    "atomicAnd",
];

/// A word kept as itself (a keyword, a builtin, an atomic), not renamed.
fn kept(word: &str) -> bool {
    KEPT.contains(&word) || ATOMICS.contains(&word)
}

/// A word that ends a run of reorderable statements.
fn fence(word: &str) -> bool {
    FENCES.contains(&word) || ATOMICS.contains(&word)
}

/// Words kept as they are: the language's and CUDA's, and the built-ins every
/// kernel names (with [`ATOMICS`]). Everything else a kernel names is the
/// student's choice.
const KEPT: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "const",
    "constexpr",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "false",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "true",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "size_t",
    "uint32_t",
    "uint64_t",
    "int64_t",
    "int32_t",
    "__global__",
    "__device__",
    "__shared__",
    "__constant__",
    "__restrict__",
    "__forceinline__",
    "__noinline__",
    "__launch_bounds__",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "x",
    "y",
    "z",
    "__syncthreads",
    "__syncwarp",
    "__ldg",
    "__shfl_down_sync",
    "__shfl_xor_sync",
    "__shfl_sync",
    "__shfl_up_sync",
    "__threadfence",
    "fmaf",
    "fma",
    "sqrtf",
    "min",
    "max",
    "fminf",
    "fmaxf",
    "curand_init",
    "curand_uniform",
    "curandState",
    "define",
    "pragma",
    "unroll",
    "include",
];

/// Words that end a run of reorderable statements (control flow, barriers;
/// [`ATOMICS`] too).
const FENCES: &[&str] = &[
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "return",
    "break",
    "continue",
    "goto",
    "__syncthreads",
    "__syncwarp",
    "__threadfence",
    "__shared__",
    "#",
];

const PUNCT3: &[&str] = &["<<=", ">>=", "..."];
const PUNCT2: &[&str] = &[
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "->",
    "::",
];

/// A raw token of the source: its text, line, and what kind it is.
#[derive(Debug, Clone)]
struct Raw {
    text: String,
    line: usize,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Word,
    Number,
    Literal,
    Punct,
}

/// Splits C source into tokens, dropping comments and whitespace.
fn lex(src: &str) -> Vec<Raw> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if src[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if src[i..].starts_with("/*") {
            i += 2;
            while i < b.len() && !src[i..].starts_with("*/") {
                line += usize::from(b[i] == b'\n');
                i += 1;
            }
            i = (i + 2).min(b.len());
        } else if c == b'"' || c == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push(Raw { text: src[start..i].into(), line, kind: Kind::Literal });
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || b[i] == b'.'
                    || ((b[i] == b'+' || b[i] == b'-') && matches!(b[i - 1], b'e' | b'E')))
            {
                i += 1;
            }
            out.push(Raw { text: src[start..i].into(), line, kind: Kind::Number });
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Raw { text: src[start..i].into(), line, kind: Kind::Word });
        } else {
            let rest = &src[i..];
            let n = if PUNCT3.iter().any(|p| rest.starts_with(p)) {
                3
            } else if PUNCT2.iter().any(|p| rest.starts_with(p)) {
                2
            } else {
                rest.chars().next().map_or(1, char::len_utf8)
            };
            out.push(Raw { text: rest[..n].into(), line, kind: Kind::Punct });
            i += n;
        }
    }
    out
}

/// The kernels' parameters by position: the stub fixes them, and a renamed
/// parameter keeps its place, so `out[x * width]` and `out[x * height]` differ
/// whatever the two are called.
fn parameters(raw: &[Raw]) -> BTreeMap<String, usize> {
    let mut params = BTreeMap::new();
    for (g, _) in raw.iter().enumerate().filter(|(_, t)| t.text == "__global__") {
        let Some(open) = raw[g..].iter().position(|t| t.text == "(").map(|o| g + o) else { continue };
        let (mut depth, mut index) = (0, 0);
        for (i, t) in raw.iter().enumerate().skip(open) {
            match t.text.as_str() {
                "(" => depth += 1,
                ")" | "," if depth == 1 => {
                    if let Some(name) = raw.get(i - 1).filter(|p| p.kind == Kind::Word && !kept(&p.text)) {
                        params.entry(name.text.clone()).or_insert(index);
                    }
                    index += 1;
                    if t.text == ")" {
                        break;
                    }
                }
                ")" => depth -= 1,
                _ => {}
            }
        }
    }
    params
}

fn normalised(r: &Raw, params: &BTreeMap<String, usize>) -> String {
    match r.kind {
        Kind::Word if kept(&r.text) => r.text.clone(),
        Kind::Word => params.get(&r.text).map_or_else(|| "$v".into(), |i| format!("$p{i}")),
        Kind::Number => "$n".into(),
        Kind::Literal => "$s".into(),
        Kind::Punct => r.text.clone(),
    }
}

/// The normalised tokens of `src`, independent statements in canonical order.
pub fn normalise(src: &str) -> Vec<Token> {
    let raw = lex(src);
    let params = parameters(&raw);
    let params = &params;
    let mut out = Vec::with_capacity(raw.len());
    let mut run: Vec<Vec<Raw>> = Vec::new();
    let mut stmt: Vec<Raw> = Vec::new();
    let mut depth = 0i32;
    let flush = |run: &mut Vec<Vec<Raw>>, out: &mut Vec<Token>| {
        for s in canonical_order(std::mem::take(run), params) {
            out.extend(s.iter().map(|r| Token { text: normalised(r, params), line: r.line }));
        }
    };
    for r in raw {
        let text = r.text.as_str();
        if depth == 0 && (text == "{" || text == "}") {
            // A brace ends the statement in progress (a declaration's header, say).
            run.push(std::mem::take(&mut stmt));
            flush(&mut run, &mut out);
            out.push(Token { text: text.into(), line: r.line });
            continue;
        }
        match text {
            "(" | "[" => depth += 1,
            ")" | "]" => depth -= 1,
            _ => {}
        }
        let ends = depth == 0 && text == ";";
        stmt.push(r);
        if ends {
            let s = std::mem::take(&mut stmt);
            if s.iter().any(|t| fence(&t.text)) {
                flush(&mut run, &mut out);
                out.extend(s.iter().map(|r| Token { text: normalised(r, params), line: r.line }));
            } else {
                run.push(s);
            }
        }
    }
    run.push(stmt);
    flush(&mut run, &mut out);
    out
}

/// Names a statement writes: the first name of an assignment's left side, a
/// declared name, and names next to `++` or `--`.
fn writes(s: &[Raw]) -> BTreeSet<&str> {
    let mut w = BTreeSet::new();
    let assign = s.iter().position(|t| {
        t.kind == Kind::Punct
            && matches!(t.text.as_str(), "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=" | "<<=" | ">>=")
    });
    if let Some(a) = assign {
        // The left side's names (a declaration's type words are kept words, not names).
        w.extend(s[..a].iter().filter(|t| t.kind == Kind::Word && !kept(&t.text)).map(|t| t.text.as_str()));
    }
    for (i, t) in s.iter().enumerate() {
        if t.text == "++" || t.text == "--" {
            for n in [i.wrapping_sub(1), i + 1] {
                if let Some(x) = s.get(n).filter(|x| x.kind == Kind::Word) {
                    w.insert(x.text.as_str());
                }
            }
        }
        // Declarations separated by commas (`int tx = ..., ty = ...;`): every name before an `=`.
        if t.text == "=" && i > 0 && s[i - 1].kind == Kind::Word {
            w.insert(s[i - 1].text.as_str());
        }
    }
    // A declaration without an initialiser (`float sum;`).
    if assign.is_none() && s.first().is_some_and(|t| kept(&t.text)) {
        w.extend(s.iter().filter(|t| t.kind == Kind::Word && !kept(&t.text)).map(|t| t.text.as_str()));
    }
    w
}

fn names(s: &[Raw]) -> BTreeSet<&str> {
    s.iter().filter(|t| t.kind == Kind::Word && !kept(&t.text)).map(|t| t.text.as_str()).collect()
}

/// The smallest order (by normalised text) that keeps every dependent pair of
/// statements in its order: the same for every reordering of independent ones.
fn canonical_order(run: Vec<Vec<Raw>>, params: &BTreeMap<String, usize>) -> Vec<Vec<Raw>> {
    let run: Vec<Vec<Raw>> = run.into_iter().filter(|s| !s.is_empty()).collect();
    let n = run.len();
    if n < 2 {
        return run;
    }
    let w: Vec<BTreeSet<&str>> = run.iter().map(|s| writes(s)).collect();
    let r: Vec<BTreeSet<&str>> = run.iter().map(|s| names(s)).collect();
    let key: Vec<String> =
        run.iter().map(|s| s.iter().map(|r| normalised(r, params)).collect::<Vec<_>>().join(" ")).collect();
    let dependent = |i: usize, j: usize| !w[i].is_disjoint(&r[j]) || !w[j].is_disjoint(&r[i]);
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let ready = (0..n).filter(|&j| !done[j] && (0..j).all(|i| done[i] || !dependent(i, j)));
        let next = ready
            .min_by(|&a, &b| key[a].cmp(&key[b]).then(a.cmp(&b)))
            .expect("a statement with no pending predecessor");
        done[next] = true;
        order.push(next);
    }
    let mut slots: Vec<Option<Vec<Raw>>> = run.into_iter().map(Some).collect();
    order.into_iter().map(|i| slots[i].take().expect("each once")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<String> {
        normalise(src).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn names_literals_comments_and_layout_do_not_matter() {
        let a = "// sum\n__global__ void k(float *a, int n) { int i = threadIdx.x; /* x */ a[i] = 1.5f; }";
        let b = "__global__ void\nkernel_b(float *out,\n int count)\n{\n  int idx = threadIdx.x;\n  out[idx] = 2.0f; // set\n}";
        assert_eq!(texts(a), texts(b));
        assert_ne!(texts(a), texts("__global__ void k(float *a, int n) { int i = threadIdx.y; a[i] = 1.5f; }"));
    }

    #[test]
    fn independent_statements_are_put_in_one_order_and_dependent_ones_are_not() {
        let a = "void k() { int tx = threadIdx.x; int ty = threadIdx.y; int r = ty * 2; }";
        let b = "void k() { int ty = threadIdx.y; int tx = threadIdx.x; int r = ty * 2; }";
        assert_eq!(texts(a), texts(b));
        // `r` reads `ty`: it cannot move before it, so these differ.
        let c = "void k() { int a = 1; a = a + 2; int b = a; }";
        let d = "void k() { int a = 1; int b = a; a = a + 2; }";
        assert_ne!(texts(c), texts(d));
    }
}
