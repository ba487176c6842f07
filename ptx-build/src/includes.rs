//! The include policy: a student's file may include only the in-memory headers
//! of [`crate::headers`], because NVRTC would otherwise read any file on the
//! grading machine (`#include "/etc/passwd"`) and echo it into the error log.
//!
//! The scan runs before any compiler sees the source and errs on the side of
//! refusing. It flags `#` (or the digraph `%:`) followed by `include`,
//! `include_next`, `import` or `embed` *anywhere* outside comments and literals,
//! not only at the start of a line: NVRTC treats `int q; /*⏎*/ #include "f"` as
//! a directive, and a flagged `#include <stdio.h>` in odd places costs nothing.
//!
//! Where compilers disagree about what is a comment or a literal, every reading
//! is scanned and a refusal in any of them counts (see [`Dialect`]). Probed on
//! NVRTC 12.9: `\` + spaces + newline splices lines, a lone `\r` ends a line,
//! `%:include` works, trigraphs are off, `__has_include("/f")` tests for files.

use crate::headers;
use crate::AllowedHeaders;

/// Why a source was refused, and where (1-based line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub line: u32,
    pub reason: String,
}

/// Checks `text` against the include policy, the device header families
/// `allowed` (and for NUL bytes, which a C string cannot carry).
pub(crate) fn check(text: &str, allowed: &AllowedHeaders) -> Result<(), Refusal> {
    let lines = LineIndex::new(text.as_bytes());
    if let Some(nul) = text.find('\0') {
        return Err(Refusal {
            line: lines.line_of(nul),
            reason: "the file contains a NUL byte (\\0); save it as plain text".into(),
        });
    }
    for dialect in Dialect::relevant(text.as_bytes()) {
        Scanner { s: text.as_bytes(), d: dialect, lines: &lines, allowed }.run()?;
    }
    Ok(())
}

/// One reading of the translation phases that decide what is a comment or a
/// literal. The first is NVRTC's; the others cover compilers (and versions)
/// that read the ambiguous cases differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dialect {
    /// `??=` is `#`, `??/` is `\`, ...
    trigraphs: bool,
    /// `\`, spaces, newline is a line splice (gcc, EDG), not only `\`, newline.
    lenient_splice: bool,
    /// A lone `\r` ends a line.
    cr_newline: bool,
    /// C++14 `1'000` is one number, not `1` and a character literal.
    digit_separators: bool,
}

impl Dialect {
    const NVRTC: Dialect = Dialect { trigraphs: false, lenient_splice: true, cr_newline: true, digit_separators: true };

    /// NVRTC's reading first, then every variant whose difference can matter
    /// for this text (most files need two scans).
    fn relevant(s: &[u8]) -> Vec<Dialect> {
        let has = |pred: &dyn Fn(&[u8]) -> bool| s.windows(2).any(pred);
        // NVRTC's choice first; the other only where the text could tell them apart.
        let both = |nvrtc: bool, matters: bool| if matters { vec![nvrtc, !nvrtc] } else { vec![nvrtc] };
        let maybe_trigraphs = has(&|w| w == b"??");
        let t = both(false, maybe_trigraphs);
        // `??/` is a backslash too.
        let l = both(true, maybe_trigraphs || has(&|w| w[0] == b'\\' && is_hspace(w[1])));
        let c = both(true, has(&|w| w[0] == b'\r' && w[1] != b'\n') || s.last() == Some(&b'\r'));
        let d = both(true, s.contains(&b'\''));
        let mut out = Vec::new();
        for &trigraphs in &t {
            for &lenient_splice in &l {
                for &cr_newline in &c {
                    for &digit_separators in &d {
                        out.push(Dialect { trigraphs, lenient_splice, cr_newline, digit_separators });
                    }
                }
            }
        }
        debug_assert_eq!(out[0], Dialect::NVRTC);
        out
    }
}

/// Physical line numbers, counting `\n`, `\r\n` and a lone `\r` as one break (as NVRTC does).
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(s: &[u8]) -> Self {
        let mut starts = vec![0];
        for (i, &b) in s.iter().enumerate() {
            if b == b'\n' || (b == b'\r' && s.get(i + 1) != Some(&b'\n')) {
                starts.push(i + 1);
            }
        }
        Self { starts }
    }

    fn line_of(&self, pos: usize) -> u32 {
        self.starts.partition_point(|&s| s <= pos) as u32
    }
}

const NL: u8 = b'\n';

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

fn is_ident_continue(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

fn is_hspace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | 0x0b | 0x0c | b'\r')
}

fn trigraph(c: u8) -> Option<u8> {
    Some(match c {
        b'=' => b'#',
        b'/' => b'\\',
        b'\'' => b'^',
        b'(' => b'[',
        b')' => b']',
        b'!' => b'|',
        b'<' => b'{',
        b'>' => b'}',
        b'-' => b'~',
        _ => return None,
    })
}

struct Scanner<'a> {
    s: &'a [u8],
    d: Dialect,
    lines: &'a LineIndex,
    allowed: &'a AllowedHeaders,
}

impl Scanner<'_> {
    /// The character at physical position `i` after trigraph replacement, with
    /// every line break reported as `\n`; and the position after it.
    fn phys(&self, i: usize) -> Option<(u8, usize)> {
        let c = *self.s.get(i)?;
        if self.d.trigraphs && c == b'?' && self.s.get(i + 1) == Some(&b'?') {
            if let Some(t) = self.s.get(i + 2).copied().and_then(trigraph) {
                return Some((t, i + 3));
            }
        }
        Some(match c {
            b'\r' if self.s.get(i + 1) == Some(&NL) => (NL, i + 2),
            b'\r' if self.d.cr_newline => (NL, i + 1),
            _ => (c, i + 1),
        })
    }

    /// As `phys`, after removing line splices: what the lexer sees.
    fn get(&self, mut i: usize) -> Option<(u8, usize)> {
        loop {
            let (c, next) = self.phys(i)?;
            if c == b'\\' {
                if let Some(after) = self.splice_end(next) {
                    i = after;
                    continue;
                }
            }
            return Some((c, next));
        }
    }

    /// Where a line splice whose backslash ends before `i` ends, if it is one.
    fn splice_end(&self, mut i: usize) -> Option<usize> {
        if self.d.lenient_splice {
            while let Some((_, n)) = self.phys(i).filter(|&(c, _)| is_hspace(c)) {
                i = n;
            }
        }
        match self.phys(i) {
            Some((NL, n)) => Some(n),
            _ => None,
        }
    }

    fn refuse(&self, at: usize, reason: String) -> Refusal {
        Refusal { line: self.lines.line_of(at), reason }
    }

    fn run(&self) -> Result<(), Refusal> {
        let mut i = 0;
        while let Some((c, n)) = self.get(i) {
            i = match c {
                b'/' => match self.get(n) {
                    Some((b'/', m)) => self.skip_line_comment(m),
                    Some((b'*', m)) => self.skip_block_comment(m),
                    _ => n,
                },
                b'"' | b'\'' => self.skip_literal(n, c),
                b'#' => {
                    self.directive(i, n)?;
                    n
                }
                b'%' => match self.get(n) {
                    Some((b':', m)) => {
                        self.directive(i, m)?;
                        m
                    }
                    _ => n,
                },
                b'\\' if matches!(self.get(n), Some((b'u' | b'U', _))) => {
                    // A universal character name could spell `include` in a way
                    // this scan does not decode.
                    return Err(self.refuse(
                        i,
                        "universal character names (`\\u...`) outside string literals are not supported in exercise files"
                            .into(),
                    ));
                }
                c if is_ident_start(c) => {
                    let (name, end) = self.ident(i);
                    self.check_ident(i, &name, end)?;
                    end
                }
                c if c.is_ascii_digit() => self.skip_pp_number(n),
                b'.' if matches!(self.get(n), Some((d, _)) if d.is_ascii_digit()) => self.skip_pp_number(n),
                _ => n,
            };
        }
        Ok(())
    }

    fn skip_line_comment(&self, mut i: usize) -> usize {
        while let Some((c, n)) = self.get(i) {
            if c == NL {
                return i;
            }
            i = n;
        }
        i
    }

    fn skip_block_comment(&self, mut i: usize) -> usize {
        while let Some((c, n)) = self.get(i) {
            if c == b'*' {
                if let Some((b'/', m)) = self.get(n) {
                    return m;
                }
            }
            i = n;
        }
        self.s.len()
    }

    /// A string or character literal; an unterminated one ends at the line's end.
    fn skip_literal(&self, mut i: usize, quote: u8) -> usize {
        while let Some((c, n)) = self.get(i) {
            match c {
                NL => return i,
                b'\\' => match self.get(n) {
                    Some((NL, _)) | None => return n,
                    Some((_, m)) => i = m,
                },
                c if c == quote => return n,
                _ => i = n,
            }
        }
        i
    }

    /// A preprocessing number (the first character already taken): `1'000`,
    /// `0x1p-3`, `1e+5f`, `1.5_km`.
    fn skip_pp_number(&self, mut i: usize) -> usize {
        while let Some((c, n)) = self.get(i) {
            let next = self.get(n);
            if matches!(c, b'e' | b'E' | b'p' | b'P') && matches!(next, Some((b'+' | b'-', _))) {
                i = next.unwrap().1;
            } else if is_ident_continue(c) || c == b'.' {
                i = n;
            } else if c == b'\'' && self.d.digit_separators && matches!(next, Some((d, _)) if is_ident_continue(d)) {
                i = next.unwrap().1;
            } else {
                break;
            }
        }
        i
    }

    fn ident(&self, mut i: usize) -> (Vec<u8>, usize) {
        let mut name = Vec::new();
        while let Some((c, n)) = self.get(i).filter(|&(c, _)| is_ident_continue(c)) {
            name.push(c);
            i = n;
        }
        (name, i)
    }

    fn check_ident(&self, at: usize, name: &[u8], end: usize) -> Result<(), Refusal> {
        if matches!(name, b"__has_include" | b"__has_include_next" | b"__has_embed") {
            return Err(self.refuse(
                at,
                format!(
                    "`{}` is not allowed in exercise files (it looks for files on the grading machine)",
                    String::from_utf8_lossy(name)
                ),
            ));
        }
        // A raw string's body is exempt from line splicing and may hold
        // anything; rather than model that, refuse it (kernels need none).
        if matches!(name, b"R" | b"u8R" | b"uR" | b"UR" | b"LR") && matches!(self.get(end), Some((b'"', _))) {
            return Err(self.refuse(at, "raw string literals (R\"(...)\") are not supported in exercise files".into()));
        }
        Ok(())
    }

    /// Horizontal space and block comments (which may span lines: they count
    /// as one space).
    fn skip_space(&self, mut i: usize) -> usize {
        while let Some((c, n)) = self.get(i) {
            if is_hspace(c) {
                i = n;
            } else if c == b'/' && matches!(self.get(n), Some((b'*', _))) {
                i = self.skip_block_comment(self.get(n).unwrap().1);
            } else {
                break;
            }
        }
        i
    }

    /// `hash` is where `#` (or `%:`) stands, `after` just past it.
    fn directive(&self, hash: usize, after: usize) -> Result<(), Refusal> {
        let p = self.skip_space(after);
        let Some((c, _)) = self.get(p) else { return Ok(()) };
        if !is_ident_start(c) {
            return Ok(());
        }
        let (name, q) = self.ident(p);
        match name.as_slice() {
            b"include" => self.header_name(hash, q),
            b"include_next" | b"import" | b"embed" => Err(self.refuse(
                hash,
                format!(
                    "`#{}` is not allowed in exercise files; only {} may be included",
                    String::from_utf8_lossy(&name),
                    self.allowed.list()
                ),
            )),
            _ => Ok(()),
        }
    }

    fn header_name(&self, hash: usize, after: usize) -> Result<(), Refusal> {
        let p = self.skip_space(after);
        let close = match self.get(p) {
            Some((b'"', _)) => b'"',
            Some((b'<', _)) => b'>',
            _ => {
                return Err(self.refuse(
                    hash,
                    "`#include` must name a header such as <stdio.h>; including through a macro (`#include NAME`) \
                     is not allowed in exercise files"
                        .into(),
                ))
            }
        };
        let mut i = self.get(p).unwrap().1;
        let mut name = Vec::new();
        let closed = loop {
            match self.get(i) {
                Some((c, _)) if c == close => break true,
                Some((NL, _)) | None => break false,
                Some((c, n)) => {
                    name.push(c);
                    i = n;
                }
            }
        };
        let name = String::from_utf8_lossy(&name).into_owned();
        if closed && close == b'"' && headers::is_device(&name) {
            // `"name"` would look in the student's folder first.
            return Err(self.refuse(
                hash,
                format!(
                    "write `#include <{name}>` (with angle brackets): CUDA's headers are not read from your folder"
                ),
            ));
        }
        if closed && self.allowed.allows(&name) {
            return Ok(());
        }
        let shown = show_name(&name);
        let written = if close == b'"' { format!("\"{shown}\"") } else { format!("<{shown}>") };
        let setting = self.allowed.setting();
        if let Some(family) = headers::family_of(&name).filter(|_| closed) {
            return Err(self.refuse(
                hash,
                format!(
                    "`#include {written}` is not allowed here: it is a header of `{}` ({}), and this course does not \
                     allow that family for this exercise ({setting} allows {}). A course allows it by adding \
                     \"{}\" to that list; until then, write the kernel without it. Allowed: {}",
                    family.name,
                    family.about,
                    self.allowed.names(),
                    family.name,
                    self.allowed.list()
                ),
            ));
        }
        Err(self.refuse(
            hash,
            format!(
                "`#include {written}` is not allowed: only {} may be included in exercise files \
                 (the compiler has everything else a kernel needs built in; {setting} names the CUDA header \
                 families allowed)",
                self.allowed.list()
            ),
        ))
    }
}

/// The student's header name, printable and short.
fn show_name(name: &str) -> String {
    const MAX: usize = 80;
    let clean: String = name.chars().map(|c| if c.is_control() { '?' } else { c }).collect();
    if clean.chars().count() > MAX {
        format!("{}...", clean.chars().take(MAX).collect::<String>())
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(src: &str) -> Refusal {
        check(src, &AllowedHeaders::default()).expect_err(&format!("should be refused: {src:?}"))
    }

    fn check(src: &str, allowed: &AllowedHeaders) -> Result<(), Refusal> {
        super::check(src, allowed)
    }

    fn ok(src: &str) -> Result<(), Refusal> {
        check(src, &AllowedHeaders::default())
    }

    #[test]
    fn allowed_headers_pass() {
        let src = "#include <stdio.h>\n  #  include \"cuda_runtime.h\"\n#include<stdint.h>\n#include <cmath>\n\
                   # /* why not */ include <float.h>\nextern \"C\" __global__ void k() {}\n";
        assert_eq!(ok(src), Ok(()));
    }

    #[test]
    fn absolute_path_is_refused_with_line_and_list() {
        let r = refused("// ex01\n\n#include \"/etc/passwd\"\n");
        assert_eq!(r.line, 3);
        assert!(r.reason.starts_with("`#include \"/etc/passwd\"` is not allowed: only <stdio.h>, "), "{}", r.reason);
        assert!(r.reason.contains("<cuda_runtime.h>"));
    }

    #[test]
    fn parent_dirs_and_other_headers_are_refused() {
        assert_eq!(refused("#include \"../secret.h\"\n").line, 1);
        assert!(refused("#include <iostream>\n").reason.starts_with("`#include <iostream>`"));
        assert!(refused("#include \"stdio.h \"\n").reason.contains("\"stdio.h \""));
        refused("#include <stdio.h\n"); // unterminated
    }

    #[test]
    fn macro_includes_are_refused() {
        let r = refused("#define F \"/etc/passwd\"\n#include F\n");
        assert_eq!(r.line, 2);
        assert!(r.reason.contains("through a macro"));
    }

    #[test]
    fn includes_in_comments_and_literals_are_ignored() {
        let src = "// #include \"/etc/passwd\"\n/* #include <iostream>\n#include \"x.h\" */\n\
                   const char *s = \"#include </etc/passwd>\"; char c = '#';\n\
                   // a spliced comment \\\n#include \"/etc/passwd\"\n";
        assert_eq!(ok(src), Ok(()));
    }

    #[test]
    fn line_continuations_are_followed() {
        assert_eq!(refused("int a;\n#inc\\\nlude \"/etc/passwd\"\n").line, 2);
        assert_eq!(refused("#include \\\n  \"/etc/passwd\"\n").line, 1);
        assert_eq!(refused("#include \"/etc/\\\npasswd\"\n").line, 1);
        // Backslash, spaces, newline: a splice for NVRTC, not for every compiler.
        refused("// comment \\  \n#include \"/etc/passwd\"\n");
    }

    #[test]
    fn digraphs_trigraphs_and_lone_cr_are_refused() {
        refused("%:include \"/etc/passwd\"\n");
        refused("%: include <iostream>\n");
        refused("??=include \"/etc/passwd\"\n");
        refused("// comment ??/\n#include \"/etc/passwd\"\n");
        assert_eq!(refused("// hi\r#include \"/etc/passwd\"\n").line, 2);
        assert_eq!(refused("a\r\nb\r\n#include <x>\r\n").line, 3);
    }

    #[test]
    fn directives_not_at_line_start_still_count() {
        // NVRTC treats this as a directive: the comment is one space.
        assert_eq!(refused("int q; /*\n*/ #include \"/etc/passwd\"\n").line, 2);
        refused("#include /* a\n b */ \"/etc/passwd\"\n");
    }

    #[test]
    fn other_ways_to_reach_files_are_refused() {
        assert!(refused("#if __has_include(\"/etc/hostname\")\n#endif\n").reason.contains("__has_include"));
        assert!(refused("#include_next \"/etc/passwd\"\n").reason.contains("#include_next"));
        refused("#import \"/etc/passwd\"\n");
        refused("#embed \"/etc/passwd\"\n");
        assert!(refused("const char *s = R\"x(/*)x\";\n").reason.contains("raw string"));
        refused("int x = u8R\"(a)\";\n");
        refused("int __has_incl\\u0075de;\n");
        assert_eq!(refused("int a;\n\0").line, 2);
    }

    #[test]
    fn literals_do_not_hide_directives() {
        // With digit separators `1'0` is a number and `"'/*"` a string...
        refused("int x = 1'0\"'/*\";\n#include \"/etc/passwd\"\n// */\n");
        // ...and without them, `'0"'` is a character: both readings are scanned.
        refused("int x = 1'0\"'/*\";\n#include <iostream>\n");
        refused("char c = '\"';\n#include \"/etc/passwd\"\n");
        refused("const char *s = \"abc\\\"\";\n#include \"/etc/passwd\"\n");
        // An unterminated literal ends at the end of its line.
        refused("const char *s = \"abc;\n#include \"/etc/passwd\"\n");
    }

    #[test]
    fn ordinary_preprocessor_use_passes() {
        let src = "#define STR(x) #x\n#define CAT(a, b) a##b\n#define N 256\n#if N > 128\n#pragma unroll\n#endif\n\
                   #line 10\nint x = 1'000'000; float f = 1.5e+3f; double d = .5; char q = '\\'';\n\
                   extern \"C\" __global__ void k(int *a) { a[0] = N; }\n";
        assert_eq!(ok(src), Ok(()));
    }

    #[test]
    fn refused_names_are_shown_short_and_printable() {
        let long = "a".repeat(500);
        let r = refused(&format!("#include \"{long}\"\n"));
        // The allowed list and the setting are ~500 bytes; the name adds at most 80 characters.
        assert!(r.reason.len() < 700, "{}", r.reason);
        assert!(refused("#include \"a\x1bb\"\n").reason.contains("a?b"));
    }

    #[test]
    fn device_headers_pass_only_in_angle_brackets() {
        let src = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cooperative_groups.h>\n\
                   #include <cooperative_groups/reduce.h>\n";
        assert_eq!(ok(src), Ok(()));
        // `"name"` searches the student's folder first: a cuda_fp16.h of their own could include anything.
        let r = refused("#include <cuda_fp16.h>\n#include \"cuda_fp16.h\"\n");
        assert_eq!(r.line, 2);
        assert!(r.reason.contains("write `#include <cuda_fp16.h>` (with angle brackets)"), "{}", r.reason);
    }

    #[test]
    fn host_headers_of_the_cuda_include_folder_stay_refused() {
        for h in [
            "cuda_runtime_api.h",
            "driver_types.h",
            "cuda_fp16.hpp",
            "cooperative_groups/details/info.h",
            "nv/target",
            "cuda/std/cstdint",
            "cooperative_groups/../../../etc/passwd",
            "stdlib.h",
            "iostream",
        ] {
            let r = refused(&format!("#include <{h}>\n"));
            assert!(r.reason.contains("is not allowed"), "{h}: {}", r.reason);
        }
    }

    #[test]
    fn cub_is_the_courses_to_allow_and_the_refusal_names_the_setting() {
        let src = "#include <cub/block/block_reduce.cuh>\n";
        let r = refused(src);
        assert_eq!(r.line, 1);
        assert!(
            r.reason
                .starts_with("`#include <cub/block/block_reduce.cuh>` is not allowed here: it is a header of `cub`"),
            "{}",
            r.reason
        );
        assert!(
            r.reason.contains(
                "the default of cuda-lab.toml's `[headers] allow` allows cuda_fp16, cuda_bf16, cooperative_groups"
            ),
            "{}",
            r.reason
        );
        assert!(r.reason.contains("adding \"cub\" to that list"), "{}", r.reason);
        let cub = AllowedHeaders::new(&["cuda_fp16", "cub"], "cuda-lab.toml, `[headers.ex08] allow`").unwrap();
        assert_eq!(check(src, &cub), Ok(()));
        assert_eq!(check("#include <cub/cub.cuh>\n#include <cub/warp/warp_reduce.cuh>\n", &cub), Ok(()));
        // A course that forbids cooperative groups for an exercise: refused, naming where.
        let r = check("#include <cooperative_groups.h>\n", &cub).unwrap_err();
        assert!(
            r.reason.contains("`cooperative_groups`")
                && r.reason.contains("`[headers.ex08] allow` allows cuda_fp16, cub"),
            "{}",
            r.reason
        );
        // Whatever is allowed: no way out of the folder, no host headers, no quotes.
        for bad in ["cub/../../etc/passwd.cuh", "cub/./x.cuh", "cub//x.cuh", "cub/.hidden.cuh", "cub/block/x.h", "cub/"]
        {
            let r = check(&format!("#include <{bad}>\n"), &cub).unwrap_err();
            assert!(r.reason.contains("is not allowed"), "{bad}: {}", r.reason);
        }
        assert!(check("#include \"cub/cub.cuh\"\n", &cub).unwrap_err().reason.contains("angle brackets"));
        assert!(AllowedHeaders::new(&["thrust-ish"], "x").unwrap_err().contains("`cub`"));
    }

    #[test]
    fn a_large_file_is_scanned_quickly() {
        let line = "    sum += x[i] * y[i]; // it's a 'comment' with \"quotes\" and 1'000\n";
        let src = line.repeat((1 << 20) / line.len());
        let t = std::time::Instant::now();
        assert_eq!(ok(&src), Ok(()));
        assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    }
}
