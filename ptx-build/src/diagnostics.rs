//! Compiler messages as data, and the parser for NVRTC's / nvcc's log.
//!
//! NVRTC (EDG front end) writes:
//! ```text
//! kernels/pi.cu(4): error: identifier "x" is undefined
//!       x = 1;
//!       ^
//!
//! kernels/pi.cu(3): warning #177-D: variable "y" was declared but never referenced
//! ...
//!           detected during instantiation of "T f(T) [with T=int]" at line 2
//! ```
//! The excerpt is the source line indented by two spaces; the caret line mirrors
//! it (tabs included) with the caret under the offending *byte*.

use std::fmt;

use serde::{Deserialize, Serialize};

/// At most this many diagnostics are kept; a note says how many were left out.
pub const MAX_DIAGNOSTICS: usize = 50;

/// Logs longer than this are cut in errors (a template error can run to megabytes).
pub const MAX_LOG_BYTES: usize = 64 * 1024;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Diagnostic {
    /// The student's display path (never a temporary file name).
    pub file: String,
    /// 1-based.
    pub line: Option<u32>,
    /// 1-based, in characters of the source line.
    pub column: Option<u32>,
    pub severity: Severity,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    /// gcc style: `kernels/pi.cu:12:5: error: identifier "x" is undefined`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": {}: {}", self.severity, self.message)
    }
}

/// How to read one compiler log.
pub(crate) struct LogContext<'a> {
    /// Names the compiler uses for the student's file (NVRTC's program name,
    /// nvcc's temporary file); all are reported as `display_path`.
    pub aliases: &'a [&'a str],
    pub display_path: &'a str,
    /// The source, to turn the caret's byte offset into a character column.
    pub source: &'a str,
}

impl LogContext<'_> {
    fn file_name(&self, name: &str) -> String {
        if name == self.display_path || self.aliases.contains(&name) {
            self.display_path.to_string()
        } else {
            name.to_string()
        }
    }

    fn is_student_file(&self, name: &str) -> bool {
        name == self.display_path
    }
}

/// Parses a log into diagnostics, in the order given, capped at `MAX_DIAGNOSTICS`.
pub(crate) fn parse_log(log: &str, cx: &LogContext) -> Vec<Diagnostic> {
    let lines: Vec<&str> = log.lines().collect();
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(mut d) = parse_header(lines[i], cx) else {
            i += 1;
            continue;
        };
        i += 1;
        // EDG: an excerpt line and a caret line follow. Only trust a caret that
        // comes right after the excerpt.
        if i + 1 < lines.len() && is_caret_line(lines[i + 1]) {
            d.column = caret_column(lines[i], lines[i + 1], &d, cx);
            i += 2;
        }
        let file = d.file.clone();
        out.push(d);
        // Indented follow-ups: "detected during instantiation of ... at line N".
        while i < lines.len() && lines[i].starts_with(' ') && parse_header(lines[i], cx).is_none() {
            if let Some(note) = parse_context_note(lines[i], &file, cx) {
                out.push(note);
            }
            i += 1;
        }
    }
    cap(out, cx.display_path)
}

/// The log kept in errors: at most `MAX_LOG_BYTES`, cut at a character.
pub(crate) fn cap_log(log: &str) -> String {
    if log.len() <= MAX_LOG_BYTES {
        return log.to_string();
    }
    let mut end = MAX_LOG_BYTES;
    while !log.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[log truncated: {} more bytes not shown]\n", &log[..end], log.len() - end)
}

/// A failed compile always carries an error: if the log had none we could
/// read, its first line becomes one.
pub(crate) fn ensure_error(mut diags: Vec<Diagnostic>, file: &str, log: &str) -> Vec<Diagnostic> {
    if !diags.iter().any(|d| d.severity == Severity::Error) {
        let first = log.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("compilation failed (no message)");
        let message: String = first.chars().take(500).collect();
        diags.insert(0, Diagnostic { file: file.into(), line: None, column: None, severity: Severity::Error, message });
    }
    diags
}

fn cap(mut diags: Vec<Diagnostic>, file: &str) -> Vec<Diagnostic> {
    if diags.len() > MAX_DIAGNOSTICS {
        let more = diags.len() - MAX_DIAGNOSTICS;
        // Keep the first error even behind a flood of warnings: it is what failed.
        let first_error = diags.iter().position(|d| d.severity == Severity::Error);
        if let Some(e) = first_error.filter(|&e| e >= MAX_DIAGNOSTICS) {
            diags.swap(MAX_DIAGNOSTICS - 1, e);
        }
        diags.truncate(MAX_DIAGNOSTICS);
        diags.push(Diagnostic {
            file: file.to_string(),
            line: None,
            column: None,
            severity: Severity::Note,
            message: format!("{more} more diagnostics were not shown; fix the ones above first"),
        });
    }
    diags
}

/// `file(LINE): severity[ #code]: message` (EDG) or `file:LINE[:COL]: severity: message` (gcc).
fn parse_header(line: &str, cx: &LogContext) -> Option<Diagnostic> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    parse_edg_header(line, cx).or_else(|| parse_gcc_header(line, cx))
}

fn parse_edg_header(line: &str, cx: &LogContext) -> Option<Diagnostic> {
    // The file name may itself hold parentheses: take the first "(digits): " that
    // is followed by a severity word.
    for (open, _) in line.match_indices('(') {
        if open == 0 {
            continue;
        }
        let rest = &line[open + 1..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || !rest[digits..].starts_with("): ") {
            continue;
        }
        let Ok(n) = rest[..digits].parse::<u32>() else { continue };
        if let Some((severity, message)) = split_severity(&rest[digits + 3..]) {
            return Some(Diagnostic {
                file: cx.file_name(&line[..open]),
                line: Some(n).filter(|&n| n > 0),
                column: None,
                severity,
                message,
            });
        }
    }
    None
}

fn parse_gcc_header(line: &str, cx: &LogContext) -> Option<Diagnostic> {
    // file:LINE:COL: severity: message  or  file:LINE: severity: message
    for (colon, _) in line.match_indices(':') {
        if colon == 0 {
            continue;
        }
        let mut rest = &line[colon + 1..];
        let num = |s: &str| -> Option<(u32, usize)> {
            let d = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if d == 0 {
                return None;
            }
            Some((s[..d].parse().ok()?, d))
        };
        let Some((ln, d)) = num(rest) else { continue };
        rest = &rest[d..];
        let mut col = None;
        if let Some(after) = rest.strip_prefix(':') {
            if let Some((c, d2)) = num(after) {
                // Columns are 1-based: a compiler's 0 means "no column".
                col = Some(c).filter(|&c| c > 0);
                rest = &after[d2..];
            }
        }
        let Some(after) = rest.strip_prefix(": ") else { continue };
        if let Some((severity, message)) = split_severity(after) {
            return Some(Diagnostic {
                file: cx.file_name(&line[..colon]),
                line: Some(ln).filter(|&n| n > 0),
                column: col,
                severity,
                message,
            });
        }
    }
    None
}

/// "error: msg", "warning #177-D: msg", "catastrophic error: msg", ...
fn split_severity(s: &str) -> Option<(Severity, String)> {
    const WORDS: &[(&str, Severity)] = &[
        ("catastrophic error", Severity::Error),
        ("fatal error", Severity::Error),
        ("error", Severity::Error),
        ("warning", Severity::Warning),
        ("remark", Severity::Note),
        ("note", Severity::Note),
    ];
    for (word, sev) in WORDS {
        let Some(mut rest) = s.strip_prefix(word) else { continue };
        // Optional diagnostic number: " #177-D" or " #20012".
        if let Some(code) = rest.strip_prefix(" #") {
            let end = code.find(':').unwrap_or(code.len());
            if code[..end].chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                rest = &code[end..];
            }
        }
        if let Some(msg) = rest.strip_prefix(": ").or_else(|| rest.strip_prefix(':')) {
            return Some((*sev, msg.trim().to_string()));
        }
    }
    None
}

fn is_caret_line(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t']);
    t.starts_with('^') && t[1..].trim().is_empty()
}

/// EDG indents excerpt and caret by two spaces; the caret sits under a byte.
/// Where the excerpt is the student's line, convert that byte to a character.
fn caret_column(excerpt: &str, caret: &str, d: &Diagnostic, cx: &LogContext) -> Option<u32> {
    const INDENT: usize = 2;
    let at = caret.find('^')?;
    let byte = at.checked_sub(INDENT)?;
    let shown = excerpt.get(INDENT..).unwrap_or("");
    if cx.is_student_file(&d.file) {
        if let Some(src) = d.line.and_then(|n| source_line(cx.source, n)) {
            if src == shown && byte <= src.len() {
                let mut b = byte;
                while !src.is_char_boundary(b) {
                    b -= 1;
                }
                return Some(src[..b].chars().count() as u32 + 1);
            }
        }
    }
    Some(byte as u32 + 1)
}

fn source_line(source: &str, n: u32) -> Option<&str> {
    let line = source.split('\n').nth(n.checked_sub(1)? as usize)?;
    Some(line.strip_suffix('\r').unwrap_or(line))
}

/// "detected during instantiation of "..." at line 12" (optionally `of "file"`).
fn parse_context_note(line: &str, file: &str, cx: &LogContext) -> Option<Diagnostic> {
    let t = line.trim();
    let at = t.rfind(" at line ")?;
    let tail = &t[at + " at line ".len()..];
    let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let n: u32 = tail[..digits].parse().ok()?;
    let mut file = file.to_string();
    if let Some(of) = tail[digits..].strip_prefix(" of \"") {
        if let Some(name) = of.strip_suffix('"') {
            file = cx.file_name(name);
        }
    }
    let what = t[..at].trim_start_matches("detected during").trim_start_matches(':').trim();
    let line = Some(n).filter(|&n| n > 0);
    Some(Diagnostic { file, line, column: None, severity: Severity::Note, message: format!("{what} here") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx<'a>(source: &'a str) -> LogContext<'a> {
        LogContext { aliases: &["/tmp/.tmpAbC/input.cu", "input.cu"], display_path: "kernels/pi.cu", source }
    }

    const SRC: &str = "extern \"C\" __global__ void k(int *a)\n{\n\tint y;\n    x = 1;  a[0] = 2\n}\n";
    // Verbatim NVRTC 12.9 output for SRC.
    const LOG: &str = "kernels/pi.cu(4): error: identifier \"x\" is undefined\n      x = 1;  a[0] = 2\n      ^\n\n\
kernels/pi.cu(5): error: expected a \";\"\n  }\n  ^\n\n\
kernels/pi.cu(3): warning #177-D: variable \"y\" was declared but never referenced\n  \tint y;\n  \t    ^\n\n\
Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n\
2 errors detected in the compilation of \"kernels/pi.cu\".\n";

    #[test]
    fn errors_and_warnings_with_caret_columns() {
        let d = parse_log(LOG, &cx(SRC));
        assert_eq!(d.len(), 3, "{d:#?}");
        assert_eq!(d[0].to_string(), "kernels/pi.cu:4:5: error: identifier \"x\" is undefined");
        assert_eq!(d[1].to_string(), "kernels/pi.cu:5:1: error: expected a \";\"");
        // The code "#177-D" is dropped; the tab counts as one column.
        assert_eq!(d[2].to_string(), "kernels/pi.cu:3:6: warning: variable \"y\" was declared but never referenced");
        assert_eq!(d[2].severity, Severity::Warning);
    }

    #[test]
    fn caret_under_a_byte_becomes_a_character_column() {
        let src = "extern \"C\" __global__ void k(int *a){ /* héllo wörld */ x = 1; }\n";
        let log = "kernels/pi.cu(1): error: identifier \"x\" is undefined\n  extern \"C\" __global__ void k(int *a){ /* héllo wörld */ x = 1; }\n                                                            ^\n";
        let d = parse_log(log, &cx(src));
        assert_eq!(d[0].column, Some(57));
        assert_eq!(src.chars().nth(56), Some('x'));
    }

    #[test]
    fn catastrophic_errors_and_instantiation_notes() {
        let log = "kernels/pi.cu(1): catastrophic error: could not open source file \"x.h\" (no directories in search list)\n  #include <x.h>\n                ^\n\n\
kernels/pi.cu(1): error: expression must have class type but it has type \"int\"\n  template<class T> __device__ T f(T a){ return a.foo; }\n                                                ^\n          detected during instantiation of \"T f(T) [with T=int]\" at line 2\n\n";
        let d = parse_log(log, &cx(""));
        assert_eq!(d.len(), 3, "{d:#?}");
        assert_eq!(d[0].severity, Severity::Error);
        assert_eq!(d[0].column, Some(15));
        assert_eq!(
            d[2],
            Diagnostic {
                file: "kernels/pi.cu".into(),
                line: Some(2),
                column: None,
                severity: Severity::Note,
                message: "instantiation of \"T f(T) [with T=int]\" here".into()
            }
        );
    }

    #[test]
    fn nvcc_temp_names_become_the_display_path() {
        let log = "/tmp/.tmpAbC/input.cu(7): error: expected a \";\"\ninput.cu(9): warning #550-D: variable \"q\" was set but never used\ninput.cu:3:10: fatal error: foo.h: No such file or directory\n";
        let d = parse_log(log, &cx(""));
        assert_eq!(d.len(), 3);
        assert!(d.iter().all(|d| d.file == "kernels/pi.cu"), "{d:#?}");
        assert_eq!(d[0].line, Some(7));
        assert_eq!(d[1].message, "variable \"q\" was set but never used");
        assert_eq!((d[2].line, d[2].column, d[2].severity), (Some(3), Some(10), Severity::Error));
        assert_eq!(d[2].message, "foo.h: No such file or directory");
    }

    #[test]
    fn file_names_with_parentheses_and_other_files() {
        let log = "ex (copy)/pi.cu(3): error: oops\nstdint.h(2): warning: hm\n";
        let c = LogContext { aliases: &[], display_path: "ex (copy)/pi.cu", source: "" };
        let d = parse_log(log, &c);
        assert_eq!(d[0].file, "ex (copy)/pi.cu");
        assert_eq!(d[0].line, Some(3));
        assert_eq!(d[1].file, "stdint.h");
    }

    #[test]
    fn tool_messages_and_summaries_are_not_diagnostics() {
        let log = "nvrtc: error: invalid value for --gpu-architecture (-arch)\n1 error detected in the compilation of \"x\".\nCompilation terminated.\n";
        assert!(parse_log(log, &cx("")).is_empty());
    }

    #[test]
    fn too_many_diagnostics_are_capped_with_a_note() {
        let log: String = (1..=80).map(|i| format!("kernels/pi.cu({i}): error: e{i}\n")).collect();
        let d = parse_log(&log, &cx(""));
        assert_eq!(d.len(), MAX_DIAGNOSTICS + 1);
        assert_eq!(d[MAX_DIAGNOSTICS].severity, Severity::Note);
        assert!(d[MAX_DIAGNOSTICS].message.starts_with("30 more"));
    }

    #[test]
    fn long_logs_are_cut_with_a_note() {
        let log = "é".repeat(MAX_LOG_BYTES);
        let cut = cap_log(&log);
        assert!(cut.len() < MAX_LOG_BYTES + 100);
        assert!(cut.ends_with(&format!("[log truncated: {} more bytes not shown]\n", MAX_LOG_BYTES)));
        assert_eq!(cap_log("short"), "short");
    }

    #[test]
    fn a_failed_compile_always_has_an_error() {
        let d = ensure_error(Vec::new(), "a.cu", "\nnvrtc: error: something odd\n");
        assert_eq!(d[0].to_string(), "a.cu: error: nvrtc: error: something odd");
        let w = parse_log("a.cu(1): warning #1-D: w\n", &LogContext { aliases: &[], display_path: "a.cu", source: "" });
        assert_eq!(ensure_error(w.clone(), "a.cu", "").len(), 2);
        let e = parse_log("a.cu(1): error: e\n", &LogContext { aliases: &[], display_path: "a.cu", source: "" });
        assert_eq!(ensure_error(e.clone(), "a.cu", ""), e);
    }

    #[test]
    fn display_is_gcc_style() {
        let mut d = Diagnostic {
            file: "kernels/pi.cu".into(),
            line: Some(12),
            column: Some(5),
            severity: Severity::Error,
            message: "identifier \"x\" is undefined".into(),
        };
        assert_eq!(d.to_string(), "kernels/pi.cu:12:5: error: identifier \"x\" is undefined");
        d.column = None;
        assert_eq!(d.to_string(), "kernels/pi.cu:12: error: identifier \"x\" is undefined");
        d.line = None;
        d.severity = Severity::Note;
        assert_eq!(d.to_string(), "kernels/pi.cu: note: identifier \"x\" is undefined");
    }

    #[test]
    fn severity_serializes_lowercase() {
        assert_eq!(serde_json::to_string(&Severity::Warning).unwrap(), "\"warning\"");
    }

    #[test]
    fn a_zero_line_or_column_means_none() {
        // Found by fuzzing (fuzz/regressions/diagnostics/column-zero): columns
        // and lines are 1-based, and a compiler's 0 means "not known".
        let d = parse_log("kernels/pi.cu:0:0: error: bad option\n", &cx(SRC));
        assert_eq!((d[0].line, d[0].column), (None, None), "{d:?}");
        let d = parse_log("kernels/pi.cu:3:0: error: x\n", &cx(SRC));
        assert_eq!((d[0].line, d[0].column), (Some(3), None), "{d:?}");
        let d = parse_log("kernels/pi.cu(0): error: x\n", &cx(SRC));
        assert_eq!(d[0].line, None, "{d:?}");
    }
}
