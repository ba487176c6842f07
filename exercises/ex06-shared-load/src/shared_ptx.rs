//! Shared memory in PTX: how much a kernel declares statically, whether it
//! stores to and loads from it, and how far from its base address any shared
//! access reaches. A candidate for `kit::inspect`: an identical copy lives in
//! ex05-stencil and ex06-shared-load, because exercise helpers do not edit the kit.
//!
//! NVRTC writes a kernel's `__shared__ int tmp[518];` as
//! `.shared .align 4 .b8 _ZZ10stencil_1dE3tmp[2072];`, inside the `.entry`
//! ("demoted") or at module scope; `extern __shared__` arrays are `.extern` and
//! have no size, so they are not counted.

use kit::inspect::KernelPtx;

/// Bytes of static `.shared` storage visible to `kernel`: declarations at module
/// scope plus those inside `kernel`'s own body (not other kernels').
pub fn static_shared_bytes(ptx: &str, kernel: &str) -> usize {
    scoped_lines(ptx, kernel).filter_map(declared_bytes).sum()
}

/// The shared access of `kernel` that reaches furthest past its base address:
/// `(immediate offset + access width, the instruction)`. In `st.shared.u32
/// [%rd12+1024], %r17` the base register holds the buffer's address plus a
/// non-negative index in any ordinary kernel, so the access touches byte 1027
/// of the buffer or beyond.
pub fn furthest_shared_access(ptx: &str, kernel: &str) -> Option<(usize, String)> {
    scoped_lines(ptx, kernel)
        .filter_map(|l| Some((shared_access_end(l)?, l.split_whitespace().collect::<Vec<_>>().join(" "))))
        .max_by_key(|(end, _)| *end)
}

/// Stores to shared memory (or generic accesses, which the PTX cannot tell apart).
pub fn writes_shared(k: &KernelPtx) -> bool {
    ["st.shared", "atom.shared", "red.shared", "cvta.shared", "cvta.to.shared"].iter().any(|op| k.uses(op))
}

/// Loads from shared memory (or generic accesses, which the PTX cannot tell apart).
pub fn reads_shared(k: &KernelPtx) -> bool {
    ["ld.shared", "atom.shared", "cvta.shared", "cvta.to.shared"].iter().any(|op| k.uses(op))
}

/// Trimmed lines at module scope or inside `kernel`'s body.
fn scoped_lines<'a>(ptx: &'a str, kernel: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let mut depth = 0usize;
    // Whether the current `.entry` / `.func` (if any) is `kernel`.
    let mut in_kernel = false;
    ptx.lines().filter_map(move |line| {
        let line = line.trim();
        if depth == 0 {
            if let Some(name) = entry_name(line) {
                in_kernel = name == kernel;
            }
        }
        let visible = depth == 0 || in_kernel;
        for c in line.split("//").next().unwrap_or("").chars() {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        visible.then_some(line)
    })
}

/// For a shared-memory instruction with an address `[base+K]`: K plus the bytes it accesses.
fn shared_access_end(line: &str) -> Option<usize> {
    let line = if line.starts_with('@') { line.split_once(char::is_whitespace)?.1.trim_start() } else { line };
    let op = line.split_whitespace().next()?;
    let parts: Vec<&str> = op.split('.').collect();
    if !matches!(parts[0], "ld" | "st" | "atom" | "red") || !parts.contains(&"shared") {
        return None;
    }
    let lanes = parts.iter().find_map(|p| p.strip_prefix('v')?.parse::<usize>().ok()).unwrap_or(1);
    let width = parts.iter().rev().find_map(|p| type_bytes(&format!(".{p}")))?;
    let address = &line[line.find('[')? + 1..line.find(']')?];
    let offset = match address.rsplit_once('+') {
        Some((_, k)) => k.trim().parse::<i64>().ok()?,
        None => 0,
    };
    Some((offset.max(0) as usize) + lanes * width)
}

/// The name of the function a `.entry` or `.func` line starts.
fn entry_name(line: &str) -> Option<&str> {
    let (keyword, at) = [".entry ", ".func "].iter().find_map(|k| Some((*k, line.find(k)? + k.len())))?;
    let mut rest = line[at..].trim_start();
    if keyword == ".func " && rest.starts_with('(') {
        // `.func (.param .b32 ret) name(`: skip the return value.
        rest = rest[rest.find(')')? + 1..].trim_start();
    }
    let end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Size of one static `.shared` declaration (`None` if the line is not one).
fn declared_bytes(line: &str) -> Option<usize> {
    let decl = line.strip_suffix(';')?;
    let mut tokens = decl.split_whitespace().skip_while(|t| matches!(*t, ".visible" | ".weak" | ".common"));
    if tokens.next()? != ".shared" {
        return None;
    }
    let mut element = None;
    let mut name = None;
    while let Some(t) = tokens.next() {
        match t {
            ".align" => {
                tokens.next();
            }
            _ if t.starts_with('.') => element = element.or(type_bytes(t)),
            _ => {
                name = Some(t);
                break;
            }
        }
    }
    let (element, name) = (element?, name?);
    let mut count = 1usize;
    for dim in name.split('[').skip(1) {
        count *= dim.trim_end_matches(']').trim().parse::<usize>().ok()?;
    }
    Some(element * count)
}

fn type_bytes(t: &str) -> Option<usize> {
    let bits: usize = t.trim_start_matches('.').get(1..)?.parse().ok()?;
    matches!(t.as_bytes().get(1), Some(b'b' | b'u' | b's' | b'f')).then_some(bits / 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#"
.version 8.8
.target sm_75
.address_size 64
.extern .shared .align 16 .b8 dyn[];
.shared .align 4 .u32 counter;
// .globl	stencil_1d
.visible .entry other(
	.param .u64 p
)
{
	.shared .align 4 .b8 _ZZ5otherE1x[4096];
	ret;
}
.visible .entry stencil_1d(
	.param .u64 stencil_1d_param_0
)
{
	.reg .b32 	%r<29>;
	// demoted variable
	.shared .align 4 .b8 _ZZ10stencil_1dE3tmp[2072];
	.shared .align 8 .f64 _ZZ10stencil_1dE4grid[2][3];
	ld.shared.u32 	%r11, [%rd2+24];
	@%p1 st.shared.u32 	[%rd2+2048], %r10;
	ret;
}
"#;

    #[test]
    fn counts_module_scope_and_own_body_only() {
        // 4 (counter) + 2072 (tmp) + 48 (grid); not `other`'s 4096, not the extern.
        assert_eq!(static_shared_bytes(PTX, "stencil_1d"), 4 + 2072 + 48);
        assert_eq!(static_shared_bytes(PTX, "other"), 4 + 4096);
        assert_eq!(static_shared_bytes(PTX, "missing"), 4);
    }

    #[test]
    fn finds_the_furthest_shared_access() {
        // 2048 + 4 (st.shared.u32 at +2048); ld.shared.u32 at +24 reaches 28.
        assert_eq!(furthest_shared_access(PTX, "stencil_1d").map(|(end, _)| end), Some(2052));
        assert_eq!(furthest_shared_access(PTX, "other"), None);
        assert_eq!(shared_access_end("st.shared.u32 	[%rd12+1024], %r17;"), Some(1028));
        assert_eq!(shared_access_end("@%p1 st.shared.u8 	[%rd12], %rs1;"), Some(1));
        assert_eq!(shared_access_end("ld.shared.v4.u32 	{%r1, %r2, %r3, %r4}, [%rd66+496];"), Some(512));
        assert_eq!(shared_access_end("ld.shared.u8 	%r32, [%rd16+-8];"), Some(1));
        assert_eq!(shared_access_end("atom.shared.add.u32 	%r1, [counter], 1;"), Some(4));
        assert_eq!(shared_access_end("ld.global.u32 	%r7, [%rd1+4096];"), None);
        assert_eq!(shared_access_end(".shared .align 4 .b8 tmp[2072];"), None);
    }

    #[test]
    fn parses_declarations_not_instructions() {
        assert_eq!(declared_bytes(".shared .align 4 .b8 _ZZ10stencil_1dE3tmp[2072];"), Some(2072));
        assert_eq!(declared_bytes(".shared .align 2 .u16 s[10];"), Some(20));
        assert_eq!(declared_bytes(".extern .shared .align 16 .b8 in[];"), None);
        assert_eq!(declared_bytes("st.shared.u32 	[%rd2], %r7;"), None);
        assert_eq!(declared_bytes("ld.shared.u32 	%r11, [%rd2];"), None);
        assert_eq!(entry_name(".visible .entry stencil_1d("), Some("stencil_1d"));
        assert_eq!(entry_name(".func  (.param .b32 func_retval0) helper("), Some("helper"));
        assert_eq!(entry_name(".func helper(.param .b32 x)"), Some("helper"));
        assert_eq!(entry_name("ret;"), None);
    }
}
