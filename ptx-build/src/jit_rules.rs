//! What NVRTC refuses and clang's CUDA mode accepts, refused under clang too,
//! so that a file gets the same verdict whichever compiler the machine has.
//!
//! NVRTC compiles device code only ("JIT mode"): a function or a namespace
//! scope variable with no `__device__`/`__global__`/... is host code and an
//! error, and so is a call of the CUDA runtime's host API (`cudaMalloc`,
//! undefined there). clang parses host code as well and simply leaves it out
//! of the PTX; a file with `int main()` or a helper without `__device__` would
//! compile on a Mac and fail on the GPU machine. So, after clang's device
//! compile succeeds, a second, host-side compile to LLVM IR (`-O0 -g`) lists
//! what the student's file defines for the host, and the PTX lists the runtime
//! functions a kernel calls; each becomes NVRTC's error, on the student's line.

use crate::{Diagnostic, Severity};

pub(crate) const HOST_FUNCTION: &str =
    "A function without execution space annotations (__host__/__device__/__global__) \
     is considered a host function, and host functions are not allowed in JIT mode";
pub(crate) const HOST_VARIABLE: &str = "A namespace scope variable without memory space annotations \
     (__device__/__constant__/__shared__/__managed__) is considered a host variable, and host variables are not \
     allowed in JIT mode";

/// Host-only definitions of the student's file (from the host-side LLVM IR
/// `ir`, whose file `input` is the student's), as NVRTC's errors. `ptx` is the
/// device compile's output: a `__host__ __device__` function is in both.
pub(crate) fn host_definitions(ir: &str, input: &str, ptx: &str, display: &str, source: &str) -> Vec<Diagnostic> {
    let meta = Metadata::new(ir);
    let files: Vec<&str> = meta
        .nodes
        .iter()
        .filter(|(_, body)| body.starts_with("!DIFile(") && field(body, "filename").as_deref() == Some(input))
        .map(|(id, _)| *id)
        .collect();
    let in_student_file = |body: &str| field(body, "file").is_some_and(|f| files.contains(&f.as_str()));
    let mut out = Vec::new();
    for line in ir.lines() {
        if let Some(rest) = line.strip_prefix("define ") {
            let Some(name) = symbol(rest) else { continue };
            let Some(sub) = line.rsplit_once("!dbg ").and_then(|(_, d)| meta.get(d.trim_end_matches(" {").trim()))
            else {
                continue;
            };
            if name.starts_with("__device_stub__") || !in_student_file(sub) || defines_in_ptx(ptx, &name) {
                continue;
            }
            let shown = field(sub, "name").unwrap_or(name);
            out.push(error(display, source, sub, &shown, HOST_FUNCTION));
        } else if line.starts_with('@') && (line.contains(" global ") || line.contains(" constant ")) {
            // `@x = internal global i32 undef` is the host's shadow of a `__device__` variable.
            if line.contains(" undef") || line.contains("externally_initialized") {
                continue;
            }
            let Some(expr) = line.rsplit_once("!dbg ").and_then(|(_, d)| meta.get(d.trim())) else { continue };
            let Some(var) = field(expr, "var").and_then(|v| meta.get(&v)) else { continue };
            if !in_student_file(var) {
                continue;
            }
            let shown = field(var, "name").unwrap_or_default();
            out.push(error(display, source, var, &shown, HOST_VARIABLE));
        }
    }
    out
}

/// Calls of the CUDA runtime API (`cudaMalloc`, ...) from device code: clang
/// declares them for dynamic parallelism and leaves them as `.extern .func`,
/// which no GPU here could link. NVRTC says the identifier is undefined.
pub(crate) fn runtime_calls(ptx: &str, display: &str, source: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in ptx.lines().filter(|l| l.trim_start().starts_with(".extern .func")) {
        let Some(name) = line.split(|c: char| c.is_whitespace() || c == '(').rev().find(|w| w.starts_with("cuda"))
        else {
            continue;
        };
        let (line_no, column) = find_ident(source, name).map_or((None, None), |(l, c)| (Some(l), Some(c)));
        out.push(Diagnostic {
            file: display.into(),
            line: line_no,
            column,
            severity: Severity::Error,
            message: format!("identifier \"{name}\" is undefined"),
        });
    }
    out
}

fn error(display: &str, source: &str, node: &str, name: &str, message: &str) -> Diagnostic {
    let line = field(node, "line").and_then(|l| l.parse::<u32>().ok()).filter(|&l| l > 0);
    let column = line.and_then(|l| {
        let text = source.split('\n').nth(l as usize - 1)?;
        ident_at(text, name).map(|byte| text[..byte].chars().count() as u32 + 1)
    });
    Diagnostic { file: display.into(), line, column, severity: Severity::Error, message: message.into() }
}

/// Whether the PTX defines a function (or kernel) of this mangled name.
fn defines_in_ptx(ptx: &str, name: &str) -> bool {
    ptx.lines().any(|l| {
        let t = l.trim_start();
        (t.starts_with(".visible") || t.starts_with(".func") || t.starts_with(".weak") || t.starts_with(".entry"))
            && !t.starts_with(".extern")
            && t.split(|c: char| c.is_whitespace() || c == '(').any(|w| w == name)
    })
}

/// `@name(` or `@"name"(` of a `define` line.
fn symbol(rest: &str) -> Option<String> {
    let at = rest.find('@')?;
    let s = &rest[at + 1..];
    if let Some(q) = s.strip_prefix('"') {
        return Some(q[..q.find('"')?].to_string());
    }
    Some(s[..s.find('(')?].to_string())
}

/// `key: value` of a metadata node's body (`name: "x"` → `x`, `file: !9` → `!9`).
fn field(body: &str, key: &str) -> Option<String> {
    let pat = format!("{key}: ");
    let mut from = 0;
    while let Some(i) = body[from..].find(&pat) {
        let at = from + i;
        let before = body[..at].chars().next_back();
        if matches!(before, Some('(' | ' ')) {
            let v = &body[at + pat.len()..];
            if let Some(q) = v.strip_prefix('"') {
                return Some(q[..q.find('"')?].to_string());
            }
            let end = v.find([',', ')']).unwrap_or(v.len());
            return Some(v[..end].trim().to_string());
        }
        from = at + pat.len();
    }
    None
}

struct Metadata<'a> {
    nodes: Vec<(&'a str, &'a str)>,
}

impl<'a> Metadata<'a> {
    /// `!12 = distinct !DISubprogram(...)` → ("!12", "!DISubprogram(...)").
    fn new(ir: &'a str) -> Self {
        let nodes = ir
            .lines()
            .filter(|l| l.starts_with('!') && l.as_bytes().get(1).is_some_and(u8::is_ascii_digit))
            .filter_map(|l| {
                let (id, body) = l.split_once(" = ")?;
                Some((id, body.trim_start_matches("distinct ")))
            })
            .collect();
        Metadata { nodes }
    }

    fn get(&self, id: &str) -> Option<&'a str> {
        self.nodes.iter().find(|(i, _)| *i == id).map(|(_, b)| *b)
    }
}

/// The first place `name` stands as a whole identifier: (line, column), 1-based, in characters.
fn find_ident(source: &str, name: &str) -> Option<(u32, u32)> {
    source
        .split('\n')
        .enumerate()
        .find_map(|(i, text)| ident_at(text, name).map(|byte| (i as u32 + 1, text[..byte].chars().count() as u32 + 1)))
}

fn ident_at(text: &str, name: &str) -> Option<usize> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).map(|(i, _)| i).find(|&i| {
        !text[..i].chars().next_back().is_some_and(is_ident)
            && !text[i + name.len()..].chars().next().is_some_and(is_ident)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Trimmed from clang 22's `--cuda-host-only -O0 -g -S -emit-llvm` of the source below.
    const SRC: &str = "__device__ int dv;\nint hv = 3;\n__host__ __device__ float hd(float x) { return x; }\n\
                       extern \"C\" __global__ void k(float *a) { a[0] = hd(1) + dv; }\nint main() { return 0; }\n";
    const IR: &str = "@dv = internal global i32 undef, align 4, !dbg !0\n@hv = dso_local global i32 3, align 4, !dbg !5\n\
define dso_local noundef float @_Z2hdf(float noundef %0) #0 !dbg !11 {\n\
define dso_local void @__device_stub__k(ptr noundef %0) #1 !dbg !16 {\n\
define dso_local noundef i32 @main() #3 !dbg !19 {\n\
define linkonce_odr dso_local void @_ZN4dim3C2Ejjj(ptr %0) #2 !dbg !30 {\n\
!0 = !DIGlobalVariableExpression(var: !1, expr: !DIExpression())\n\
!1 = distinct !DIGlobalVariable(name: \"dv\", scope: !2, file: !9, line: 1, type: !7, isLocal: false, isDefinition: true)\n\
!5 = !DIGlobalVariableExpression(var: !6, expr: !DIExpression())\n\
!6 = distinct !DIGlobalVariable(name: \"hv\", scope: !2, file: !9, line: 2, type: !7, isLocal: false, isDefinition: true)\n\
!9 = !DIFile(filename: \"cuda-lab-input.cu\", directory: \"/tmp/x\")\n\
!10 = !DIFile(filename: \"/c/include/vector_types.h\", directory: \"/tmp/x\")\n\
!11 = distinct !DISubprogram(name: \"hd\", scope: !9, file: !9, line: 3, type: !12, spFlags: DISPFlagDefinition)\n\
!16 = distinct !DISubprogram(name: \"k\", scope: !9, file: !9, line: 4, type: !12, spFlags: DISPFlagDefinition)\n\
!19 = distinct !DISubprogram(name: \"main\", scope: !9, file: !9, line: 5, type: !12, spFlags: DISPFlagDefinition)\n\
!30 = distinct !DISubprogram(name: \"dim3\", scope: !10, file: !10, line: 9, type: !12, spFlags: DISPFlagDefinition)\n";
    const PTX: &str = ".visible .func  (.param .b32 func_retval0) _Z2hdf(\n.visible .entry k(\n";

    #[test]
    fn host_functions_and_variables_of_the_students_file_are_errors() {
        let d = host_definitions(IR, "cuda-lab-input.cu", PTX, "kernels/k.cu", SRC);
        let shown: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        assert_eq!(shown.len(), 2, "{shown:#?}");
        assert!(shown[0].starts_with("kernels/k.cu:2:5: error: A namespace scope variable without memory space"));
        assert!(shown[1].starts_with("kernels/k.cu:5:5: error: A function without execution space annotations"));
        // The same file without `main` and `hv` (the PTX has hd) is clean.
        let clean: String =
            IR.lines().filter(|l| !l.contains("@main") && !l.starts_with("@hv")).map(|l| format!("{l}\n")).collect();
        assert!(host_definitions(&clean, "cuda-lab-input.cu", PTX, "kernels/k.cu", SRC).is_empty());
        // Were `hd` not in the PTX, it would be host-only.
        assert_eq!(host_definitions(&clean, "cuda-lab-input.cu", ".visible .entry k(\n", "kernels/k.cu", SRC).len(), 1);
    }

    #[test]
    fn runtime_api_calls_are_undefined_identifiers() {
        let ptx = ".extern .func  (.param .b32 func_retval0) cudaMalloc\n(\n.extern .func  (.param .b32 func_retval0) vprintf\n";
        let src = "extern \"C\" __global__ void k(float *a)\n{\n    float *d; cudaMalloc(&d, 4);\n}\n";
        let d = runtime_calls(ptx, "k.cu", src);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].to_string(), "k.cu:3:15: error: identifier \"cudaMalloc\" is undefined");
    }
}
