//! Diagnostics shown the way rustc and clang show them: the message, the
//! student's source line, a caret under the column, and a `help:` for the
//! mistakes every first-week student makes (host code in the kernel file, a
//! launch, `main`, a misspelt `extern "C"`).
//!
//! ```text
//! kernels/pi.cu:12:5: error: identifier "cudaMalloc" is undefined
//!    12 |     cudaMalloc(&d, n);
//!       |     ^
//!       = help: `cudaMalloc` is host code: ...
//! ```

use crate::{Diagnostic, Severity};

/// Every diagnostic of `diags` with its excerpt and hints, one block each;
/// `source` is the text of the student's file the diagnostics point into.
pub fn render_diagnostics(diags: &[Diagnostic], source: &str) -> String {
    let mut out = String::new();
    let mut hinted = Vec::new();
    for d in diags {
        out.push_str(&d.to_string());
        out.push('\n');
        if let Some(excerpt) = excerpt(d, source) {
            out.push_str(&excerpt);
        }
        for h in hints(d, source) {
            // The same advice once, however many errors it explains.
            if !hinted.contains(&h) {
                out.push_str(&format!("{:>GUTTER$} = help: {h}\n", ""));
                hinted.push(h);
            }
        }
    }
    out
}

const GUTTER: usize = 6;

/// `   12 |     x = 1;` and the caret line under it.
fn excerpt(d: &Diagnostic, source: &str) -> Option<String> {
    let n = d.line?;
    let line = source.lines().nth(n.checked_sub(1)? as usize)?.trim_end_matches('\r');
    let mut s = format!("{n:>GUTTER$} | {line}\n");
    if let Some(col) = d.column.filter(|&c| c >= 1) {
        // Keep the tabs of the line, so the caret lands under the same character.
        let pad: String = line.chars().take(col as usize - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        s.push_str(&format!("{:>GUTTER$} | {pad}^\n", ""));
    }
    Some(s)
}

/// Host functions a kernel file cannot call (the grader's host code does that).
const HOST_CALLS: &[&str] = &[
    "cudaMalloc",
    "cudaMallocManaged",
    "cudaMemcpy",
    "cudaMemset",
    "cudaFree",
    "cudaDeviceSynchronize",
    "cudaGetLastError",
    "cudaEventCreate",
    "cudaEventRecord",
    "malloc",
    "free",
    "fopen",
    "scanf",
    "std::cout",
    "cout",
    "exit",
];

/// Advice for the error `d`, in the light of the student's source.
pub(crate) fn hints(d: &Diagnostic, source: &str) -> Vec<String> {
    let msg = d.message.as_str();
    // clang says why a call has no match in a note after the error.
    let host_callee = msg.contains("call to __host__ function from __global__ function")
        || msg.contains("call to __host__ function from __device__ function");
    if d.severity != Severity::Error && !host_callee {
        return Vec::new();
    }
    let mut out = Vec::new();
    let line = d.line.and_then(|n| source.lines().nth(n.saturating_sub(1) as usize)).unwrap_or("");
    if let Some(name) = undefined_identifier(msg) {
        if HOST_CALLS.contains(&name) {
            out.push(format!(
                "`{name}` is host code, and this file holds only device code (`__global__` and `__device__` \
                 functions): the grader allocates, copies and launches for you. Remove the call"
            ));
        }
    }
    if line.contains("<<<") {
        out.push(
            "`kernel<<<grid, block>>>(...)` is a launch, which is host code: the grader launches your kernel \
             (see the exercise README for the configuration). Remove the launch from this file"
                .into(),
        );
    }
    if defines_main(line) || (msg.contains("\"main\"") && defines_main(source)) {
        out.push(
            "`main` is host code: this file holds only the kernel; the grader is the program that runs it. \
             Remove `main`"
                .into(),
        );
    }
    if (host_callee || msg.contains("without execution space annotations") && msg.contains("function"))
        && !defines_main(line)
    {
        out.push(
            "a helper function called from a kernel needs `__device__` in front (`__device__ float f(...)`); \
             host functions do not belong in this file"
                .into(),
        );
    }
    if line.contains("extern") && !line.contains("extern \"C\"") && line.contains("__global__") {
        out.push(
            "write the kernel's first line as in the stub: `extern \"C\" __global__ void name(...)` \
             (`\"C\"` in double quotes, capital C), so the grader finds it by its name"
                .into(),
        );
    }
    if msg.contains("__global__") && msg.contains("return type") || msg.starts_with("kernel function type") {
        out.push("a kernel returns nothing (`void`): write results into an output pointer instead".into());
    }
    out
}

/// `identifier "x" is undefined` (NVRTC) or `use of undeclared identifier 'x'` (clang) → `x`.
fn undefined_identifier(msg: &str) -> Option<&str> {
    if let Some(rest) = msg.strip_prefix("use of undeclared identifier '") {
        return rest.strip_suffix('\'');
    }
    let rest = msg.strip_prefix("identifier \"")?;
    let end = rest.find('"')?;
    rest[end..].contains("undefined").then(|| &rest[..end])
}

fn defines_main(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        ["int main(", "int main (", "void main(", "int main(void)"].iter().any(|p| l.starts_with(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(line: u32, column: Option<u32>, message: &str) -> Diagnostic {
        Diagnostic {
            file: "kernels/k.cu".into(),
            line: Some(line),
            column,
            severity: Severity::Error,
            message: message.into(),
        }
    }

    #[test]
    fn caret_under_the_column_like_rustc() {
        let src = "extern \"C\" __global__ void k(int *a)\n{\n    a[0] = x;\n}\n";
        let shown = render_diagnostics(&[error(3, Some(12), "identifier \"x\" is undefined")], src);
        assert_eq!(
            shown,
            "kernels/k.cu:3:12: error: identifier \"x\" is undefined\n     3 |     a[0] = x;\n       |            ^\n"
        );
    }

    #[test]
    fn tabs_are_kept_so_the_caret_lines_up() {
        let src = "\tint y = z;\n";
        let shown = render_diagnostics(&[error(1, Some(10), "identifier \"z\" is undefined")], src);
        assert!(shown.ends_with("     1 | \tint y = z;\n       | \t        ^\n"), "{shown:?}");
    }

    #[test]
    fn no_line_no_excerpt() {
        let d = Diagnostic { line: None, column: None, ..error(1, None, "compilation failed") };
        assert_eq!(render_diagnostics(&[d], "x\n"), "kernels/k.cu: error: compilation failed\n");
        // A line past the end of the file (a stale cache entry) shows no excerpt either.
        assert_eq!(render_diagnostics(&[error(9, Some(1), "e")], "x\n"), "kernels/k.cu:9:1: error: e\n");
    }

    #[test]
    fn host_calls_launches_and_main_get_a_hint_once() {
        let src = "int main() {\n  cudaMalloc(&p, 4);\n  k<<<1, 1>>>(p);\n  cudaMalloc(&q, 4);\n}\n";
        let shown = render_diagnostics(
            &[
                error(2, Some(3), "identifier \"cudaMalloc\" is undefined"),
                error(3, Some(3), "expected an expression"),
                error(4, Some(3), "identifier \"cudaMalloc\" is undefined"),
            ],
            src,
        );
        assert_eq!(shown.matches("help: `cudaMalloc` is host code").count(), 1, "{shown}");
        assert!(shown.contains("help: `kernel<<<grid, block>>>(...)` is a launch"), "{shown}");
        let d = error(1, Some(5), "function \"main\" has already been defined");
        assert!(hints(&d, src).iter().any(|h| h.starts_with("`main` is host code")));
    }

    #[test]
    fn a_misspelt_extern_c_gets_the_stub_line() {
        let src = "extern C __global__ void k(int *a) {}\n";
        let h = hints(&error(1, Some(8), "expected a \";\""), src);
        assert!(h.iter().any(|h| h.contains("extern \\\"C\\\"") || h.contains("extern \"C\" __global__")), "{h:?}");
        // The right spelling gets no such hint.
        assert!(hints(&error(1, Some(1), "x"), "extern \"C\" __global__ void k() {}\n").is_empty());
    }

    #[test]
    fn an_unannotated_helper_is_told_about_device() {
        let msg = "A function without execution space annotations (__host__/__device__/__global__) is considered a \
                   host function, and host functions are not allowed in JIT mode.";
        let h = hints(&error(1, Some(7), msg), "float sq(float x) { return x * x; }\n");
        assert!(h.iter().any(|h| h.contains("needs `__device__` in front")), "{h:?}");
        let h = hints(&error(1, Some(5), msg), "int main() {}\n");
        assert!(h.iter().all(|h| !h.contains("__device__` in front")) && h[0].starts_with("`main`"), "{h:?}");
    }

    #[test]
    fn clangs_wording_gets_the_same_hints() {
        let src =
            "float sq(float x) { return x * x; }\nextern \"C\" __global__ void k(float *a) { a[0] = malloc(sq(1)); }\n";
        let h = hints(&error(2, Some(45), "use of undeclared identifier 'malloc'"), src);
        assert!(h.iter().any(|h| h.starts_with("`malloc` is host code")), "{h:?}");
        let note = Diagnostic {
            severity: Severity::Note,
            ..error(1, Some(7), "candidate function not viable: call to __host__ function from __global__ function")
        };
        assert!(hints(&note, src).iter().any(|h| h.contains("needs `__device__` in front")));
        let h = hints(&error(1, Some(27), "kernel function type 'int (float *)' must have void return type"), src);
        assert!(h.iter().any(|h| h.starts_with("a kernel returns nothing")), "{h:?}");
    }

    #[test]
    fn warnings_get_no_hints() {
        let d = Diagnostic { severity: Severity::Warning, ..error(1, Some(1), "identifier \"malloc\" is undefined") };
        assert!(hints(&d, "malloc(1);\n").is_empty());
    }
}
