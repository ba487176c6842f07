//! No import circles between the modules of `grader/src` nor of
//! `exercises/kit/src`: a module that uses another must
//! not be used back by it, directly or through others. A circle means neither
//! side can be read, tested or changed alone.
//!
//! The graph is read from the source text: every `crate::`, `super::` and
//! `self::` path (in `use` trees, with their braces, and inline), and in a
//! module with submodules every `child::` path. A file is a node; a path
//! names the deepest module file it reaches. A submodule's references to its
//! own ancestors (`super::Item`) are not edges: a submodule is part of its
//! parent, which uses it. Comments and string literals are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate's modules: module path (`batch::part`, `` for the root) → the uses it makes.
struct Crate {
    modules: BTreeMap<String, BTreeSet<String>>,
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_grader_has_no_import_circles() {
    let grader = read_crate(&manifest().join("src"));
    assert!(grader.modules.len() > 40, "read the grader's modules: {:?}", grader.modules.keys());
    let cycles = cycles(&grader);
    assert!(cycles.is_empty(), "import circles in grader/src:\n{}", describe(&cycles));
}

#[test]
fn kit_has_no_import_circles() {
    let kit = read_crate(&manifest().join("../exercises/kit/src"));
    assert!(kit.modules.len() > 5, "read kit's modules: {:?}", kit.modules.keys());
    let cycles = cycles(&kit);
    assert!(cycles.is_empty(), "import circles in exercises/kit/src:\n{}", describe(&cycles));
}

#[test]
fn the_reader_finds_a_circle_and_the_paths_it_is_made_of() {
    let text = "use crate::{a::{self, B}, b::c::D}; // crate::nope\n\
                fn f() { super::e::f(); child::g(); let s = \"crate::nope\"; }\n\
                mod tests { use super::*; use super::child::H; }";
    let mut refs = BTreeSet::new();
    references(text, "x::y", &["child".to_string()], &mut refs);
    let got: Vec<&str> = refs.iter().map(String::as_str).collect();
    assert_eq!(got, ["a", "a::B", "b::c::D", "x::e::f", "x::y", "x::y::child::H", "x::y::child::g"]);

    let modules = |pairs: &[(&str, &[&str])]| {
        pairs.iter().map(|(m, uses)| (m.to_string(), uses.iter().map(|u| u.to_string()).collect())).collect()
    };
    let circle = Crate { modules: modules(&[("", &[]), ("a", &["b::X"]), ("b", &["a::f"]), ("c", &["a"])]) };
    assert_eq!(cycles(&circle), vec![vec!["a".to_string(), "b".to_string()]]);
    // A submodule using its parent is no circle; a sibling is.
    let family = Crate { modules: modules(&[("", &[]), ("p", &["p::k::f"]), ("p::k", &["p::Item", "crate_root_fn"])]) };
    assert!(cycles(&family).is_empty());
}

fn describe(cycles: &[Vec<String>]) -> String {
    cycles.iter().map(|c| format!("  {}\n", c.join(" <-> "))).collect()
}

/// Reads every `.rs` file under `src` (`main.rs` and `cli/`, the binary's crate, left out).
fn read_crate(src: &Path) -> Crate {
    let mut files = Vec::new();
    collect(src, &mut files);
    let module_of = |file: &Path| -> String {
        let rel = file.strip_prefix(src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
            parts.pop();
        }
        parts.join("::")
    };
    let all: BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    let mut modules = BTreeMap::new();
    for file in &files {
        let module = module_of(file);
        let prefix = if module.is_empty() { String::new() } else { format!("{module}::") };
        let children: Vec<String> = all
            .iter()
            .filter_map(|m| m.strip_prefix(&prefix).filter(|rest| !rest.is_empty() && !rest.contains("::")))
            .map(str::to_string)
            .collect();
        let text = std::fs::read_to_string(file).unwrap();
        let mut refs = BTreeSet::new();
        references(&text, &module, &children, &mut refs);
        modules.insert(module, refs);
    }
    Crate { modules }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && path.file_name().is_some_and(|n| n != "cli") {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().is_some_and(|n| n != "main.rs") {
            out.push(path);
        }
    }
}

/// Every path `text` (the file of `module`) names from its own crate, made
/// absolute: `crate::a::B` is `a::B`; in `x::y`, `super::e` is `x::e`.
fn references(text: &str, module: &str, children: &[String], out: &mut BTreeSet<String>) {
    let code = strip(text);
    let bytes = code.as_bytes();
    let file: Vec<&str> = if module.is_empty() { Vec::new() } else { module.split("::").collect() };
    // Inline modules (`mod tests { … }`), each with the brace depth it opened at.
    let mut inline: Vec<(&str, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        let starts_word =
            i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        if !starts_word || !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
            i += 1;
            continue;
        }
        let end = i + code[i..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(code.len() - i);
        let word = &code[i..end];
        if word == "mod" {
            let rest = code[end..].trim_start();
            let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            if rest[len..].trim_start().starts_with('{') {
                inline.push((&rest[..len], depth));
            }
        }
        let here: Vec<&str> = file.iter().copied().chain(inline.iter().map(|&(m, _)| m)).collect();
        let base: Option<Vec<&str>> = match word {
            "crate" => Some(Vec::new()),
            "super" => Some(here[..here.len().saturating_sub(1)].to_vec()),
            "self" => Some(here.clone()),
            w if inline.is_empty() && children.iter().any(|c| c == w) => Some([file.as_slice(), &[w]].concat()),
            _ => None,
        };
        match base {
            Some(base) if code[end..].starts_with("::") => {
                let mut paths = Vec::new();
                let after = use_tree(&code[end + 2..], &base.join("::"), &mut paths);
                out.extend(paths.into_iter().filter(|p| !p.is_empty()));
                // Braces of a use tree are read there, not counted here.
                i = end + 2 + after;
            }
            _ => i = end,
        }
    }
}

/// Reads a use tree (`a::b`, `{a, b::{c, self}}`, `super::x`) at the start of
/// `text` under `base`, pushing every path it names; returns the bytes read.
fn use_tree(text: &str, base: &str, out: &mut Vec<String>) -> usize {
    let join = |base: &str, seg: &str| if base.is_empty() { seg.to_string() } else { format!("{base}::{seg}") };
    let mut path = base.to_string();
    let mut i = 0;
    loop {
        let rest = &text[i..];
        let trimmed = rest.trim_start();
        i += rest.len() - trimmed.len();
        if trimmed.starts_with('{') {
            i += 1;
            loop {
                let rest = &text[i..];
                let trimmed = rest.trim_start();
                i += rest.len() - trimmed.len();
                if trimmed.starts_with('}') {
                    return i + 1;
                }
                if trimmed.starts_with(',') {
                    i += 1;
                    continue;
                }
                if trimmed.is_empty() {
                    return i;
                }
                let read = use_tree(&text[i..], &path, out);
                if read == 0 {
                    i += 1;
                } else {
                    i += read;
                }
            }
        }
        let len = trimmed.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(trimmed.len());
        if trimmed.starts_with('*') {
            out.push(path);
            return i + 1;
        }
        if len == 0 {
            if path != base {
                out.push(path);
            }
            return i;
        }
        let seg = &trimmed[..len];
        i += len;
        match seg {
            "self" => {}
            "super" => path = path.rsplit_once("::").map_or(String::new(), |(p, _)| p.to_string()),
            _ => path = join(&path, seg),
        }
        if text[i..].starts_with("::") {
            i += 2;
        } else {
            out.push(path);
            return i;
        }
    }
}

/// `text` with comments, string and character literals blanked out.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#") || rest.starts_with(b"br"))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && raw_string_end(&b[i..]).is_some()
        {
            i += raw_string_end(&b[i..]).unwrap();
            out.push(b' ');
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(b' ');
        } else if b[i] == b'\'' && (rest.get(1) == Some(&b'\\') || rest.get(2) == Some(&b'\'')) {
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(b' ');
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The length of the raw string literal (`r"…"`, `r#"…"#`, `br"…"`) at the start of `b`.
fn raw_string_end(b: &[u8]) -> Option<usize> {
    let mut i = if b.starts_with(b"br") { 2 } else { 1 };
    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
    i += hashes;
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
    let body = &b[i + 1..];
    (0..body.len()).find(|&k| body[k..].starts_with(&close)).map(|k| i + 1 + k + close.len())
}

/// The module a path lands in: the deepest module that is a prefix of it.
fn target(modules: &BTreeMap<String, BTreeSet<String>>, path: &str) -> Option<String> {
    let mut p = path;
    loop {
        if modules.contains_key(p) {
            return Some(p.to_string());
        }
        p = p.rsplit_once("::")?.0;
    }
}

/// Every circle: the strongly connected components of more than one module.
fn cycles(krate: &Crate) -> Vec<Vec<String>> {
    let names: Vec<&String> = krate.modules.keys().collect();
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let is_ancestor = |a: &str, of: &str| a.is_empty() || of.starts_with(&format!("{a}::"));
    let edges: Vec<BTreeSet<usize>> = names
        .iter()
        .map(|from| {
            krate.modules[*from]
                .iter()
                .filter_map(|p| target(&krate.modules, p))
                .filter(|to| to != *from && !is_ancestor(to, from))
                .map(|to| index[to.as_str()])
                .collect()
        })
        .collect();
    // Tarjan's strongly connected components.
    struct State {
        next: usize,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        found: Vec<Vec<usize>>,
    }
    fn visit(v: usize, edges: &[BTreeSet<usize>], s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &edges[v] {
            match s.index[w] {
                None => {
                    visit(w, edges, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let n = names.len();
    let mut s = State {
        next: 0,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &edges, &mut s);
        }
    }
    let mut out: Vec<Vec<String>> = s
        .found
        .into_iter()
        .map(|c| {
            let mut c: Vec<String> = c.into_iter().map(|i| names[i].clone()).collect();
            c.sort();
            c
        })
        .collect();
    out.sort();
    out
}

/// The grader's layers, top first. A module may use modules of its own layer
/// and of the layers below it, never one above: a report that reads a batch's
/// output stands above the batch, so the batch cannot call it (the command
/// line, `src/main.rs` and `src/cli/`, a crate of its own, stands above them
/// all and calls both). A new module goes into the list where what it uses and
/// what uses it put it (ARCHITECTURE.md).
const LAYERS: &[(&str, &[&str])] = &[
    (
        "commands' work and views of a run or a class",
        &["audit", "author", "differential", "gpu_load", "lab", "student"],
    ),
    (
        "batches, a grading run, the platforms' files and the HTML report",
        &["batch", "class_report", "grade", "html", "platforms", "similarity"],
    ),
    ("how checks count", &["ahead", "check_limits", "counters", "not_graded_here", "sanitize"]),
    ("the course's settings and calibrations", &["calibrate", "credit", "headers", "policy", "score"]),
    (
        "the data every layer shares",
        &["atomic", "course", "digests", "process", "registry", "report", "template", "verdict", "words"],
    ),
];

/// Every use of `krate` that runs upward against `layers`, as
/// `from (layer) uses to (layer above)`; and every top-level module missing from `layers`.
fn upward(krate: &Crate, layers: &[(&str, &[&str])]) -> (Vec<String>, Vec<String>) {
    let layer_of = |module: &str| -> Option<usize> {
        let top = module.split("::").next().unwrap_or("");
        layers.iter().position(|(_, mods)| mods.contains(&top))
    };
    let mut unplaced: BTreeSet<String> = BTreeSet::new();
    let mut wrong = BTreeSet::new();
    for (from, uses) in &krate.modules {
        if from.is_empty() {
            continue;
        }
        let Some(low) = layer_of(from) else {
            unplaced.insert(from.split("::").next().unwrap().to_string());
            continue;
        };
        for to in uses.iter().filter_map(|p| target(&krate.modules, p)).filter(|t| !t.is_empty()) {
            if let Some(high) = layer_of(&to).filter(|&l| l < low) {
                wrong.insert(format!("  {from} ({}) uses {to} ({}), a layer above it", layers[low].0, layers[high].0));
            }
        }
    }
    (wrong.into_iter().collect(), unplaced.into_iter().collect())
}

#[test]
fn no_grader_module_uses_one_above_it() {
    let grader = read_crate(&manifest().join("src"));
    let (wrong, unplaced) = upward(&grader, LAYERS);
    assert!(
        unplaced.is_empty(),
        "grader modules in no layer: {unplaced:?}: add each to LAYERS in grader/tests/module_graph.rs, \
         in the layer its uses put it (ARCHITECTURE.md)"
    );
    assert!(
        wrong.is_empty(),
        "imports against the layers (turn each around, or move what both need to the lower module):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_layer_check_fails_an_upward_use_and_an_unplaced_module() {
    let modules = |pairs: &[(&str, &[&str])]| Crate {
        modules: pairs.iter().map(|(m, uses)| (m.to_string(), uses.iter().map(|u| u.to_string()).collect())).collect(),
    };
    let layers: &[(&str, &[&str])] = &[("top", &["report"]), ("bottom", &["batch", "words"])];
    // The shape of batch -> class_report before issue 50.
    let krate =
        modules(&[("", &[]), ("report", &["batch::run"]), ("batch", &["report::after", "words"]), ("words", &[])]);
    let (wrong, unplaced) = upward(&krate, layers);
    assert_eq!(wrong, ["  batch (bottom) uses report (top), a layer above it"]);
    assert!(unplaced.is_empty());
    let krate = modules(&[("", &[]), ("report", &["batch"]), ("batch", &["words"]), ("words", &[]), ("new", &[])]);
    let (wrong, unplaced) = upward(&krate, layers);
    assert!(wrong.is_empty(), "{wrong:?}");
    assert_eq!(unplaced, ["new"]);
}
