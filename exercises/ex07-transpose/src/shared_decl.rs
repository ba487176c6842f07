//! The `__shared__` arrays a kernel declares, with their sizes in bytes, read
//! from the PTX. General (nothing here is specific to the transpose), so it can
//! move into `kit::inspect`.
//!
//! NVVM writes a kernel's static `__shared__` variables as declarations such as
//! `.shared .align 4 .b8 _ZZ16transpose_paddedE4tile[4224];`: inside the
//! `.entry` body when the variable was "demoted" to the one kernel that uses it,
//! at module scope otherwise (file-scope `__shared__` used by several kernels).
//! `extern __shared__` arrays are `.extern .shared ... name[];`, sized at launch.

/// How big one shared declaration is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedSize {
    /// A fixed number of bytes, from the declaration.
    Static(usize),
    /// `extern __shared__`: sized by the launch (dynamic shared memory).
    Dynamic,
}

/// One `.shared` variable a kernel can reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedArray {
    /// The PTX name (C++-mangled for variables declared inside a kernel).
    pub name: String,
    pub size: SharedSize,
}

impl SharedArray {
    pub fn static_bytes(&self) -> Option<usize> {
        match self.size {
            SharedSize::Static(b) => Some(b),
            SharedSize::Dynamic => None,
        }
    }
}

/// The shared variables declared in the body of `.entry kernel` plus those
/// declared at module scope that the body refers to by name. Empty when the
/// kernel is not in `ptx` (callers check its presence first).
pub fn shared_arrays(ptx: &str, kernel: &str) -> Vec<SharedArray> {
    let Some(body) = entry_body(ptx, kernel) else { return Vec::new() };
    let inside = body.lines().filter_map(parse_declaration);
    let module = module_scope_lines(ptx).filter_map(parse_declaration).filter(|a| mentions(body, &a.name));
    inside.chain(module).collect()
}

/// The text between the braces of `.entry name(...) { ... }`.
fn entry_body<'a>(ptx: &'a str, name: &str) -> Option<&'a str> {
    let start = ptx.match_indices(".entry ").map(|(i, _)| i + ".entry ".len()).find(|&i| {
        let rest = &ptx[i..];
        rest.starts_with(name) && rest[name.len()..].trim_start().starts_with('(')
    })?;
    let open = start + ptx[start..].find('{')?;
    let mut depth = 0usize;
    for (off, c) in ptx[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&ptx[open + 1..open + off]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Lines outside every function body (brace depth 0 where the line starts).
fn module_scope_lines(ptx: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0i64;
    ptx.lines().filter(move |line| {
        let at_module_scope = depth == 0;
        let code = line.split("//").next().unwrap_or("");
        depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
        at_module_scope
    })
}

/// True when `name` occurs in `text` as a whole identifier (not inside a
/// longer name, a `%register` or a `.directive`).
fn mentions(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(|c| ident(c) || c == '%' || c == '.') && !after.is_some_and(ident)
    })
}

/// Parses `[.extern] [.visible] .shared [.align N] [.vK] .TYPE name[D1][D2]...;`.
fn parse_declaration(line: &str) -> Option<SharedArray> {
    let code = line.split("//").next()?.trim().trim_end_matches(';').trim();
    let mut tokens = code.split_whitespace().peekable();
    let (mut shared, mut external, mut lanes, mut element) = (false, false, 1usize, None);
    while let Some(&tok) = tokens.peek() {
        if !tok.starts_with('.') {
            break;
        }
        tokens.next();
        match tok {
            ".shared" => shared = true,
            ".extern" => external = true,
            ".align" => {
                tokens.next();
            }
            ".v2" | ".v4" | ".v8" => lanes = tok[2..].parse().ok()?,
            ".visible" | ".weak" | ".common" => {}
            ty => element = Some(type_bytes(ty)?),
        }
    }
    if !shared {
        return None;
    }
    let declarator: String = tokens.collect();
    let (name, dims) = declarator.split_once('[').map_or((declarator.as_str(), ""), |(n, d)| (n, d));
    let mut bytes = element? * lanes;
    if !dims.is_empty() {
        for dim in dims.trim_end_matches(']').split("][") {
            match dim.trim() {
                "" => return Some(SharedArray { name: name.to_string(), size: SharedSize::Dynamic }),
                n => bytes *= n.parse::<usize>().ok()?,
            }
        }
    }
    let size = if external && bytes == 0 { SharedSize::Dynamic } else { SharedSize::Static(bytes) };
    (!name.is_empty()).then(|| SharedArray { name: name.to_string(), size })
}

/// Bytes of a PTX fundamental type: `.b8` 1, `.f32` 4, `.u64` 8, `.f16x2` 4.
fn type_bytes(ty: &str) -> Option<usize> {
    let spec = ty.strip_prefix('.')?.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let (bits, count) = spec.split_once('x').unwrap_or((spec, "1"));
    let bits: usize = bits.parse().ok()?;
    (bits % 8 == 0).then_some(bits / 8 * count.parse::<usize>().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trimmed from NVRTC 12.9 output (`--gpu-architecture=compute_75`).
    const PTX: &str = r#"
.version 8.8
.target sm_75
.address_size 64

	// .globl	transpose_padded
// _ZZ16transpose_paddedE4tile has been demoted
.shared .align 4 .b8 gtile[4096];
// vt has been demoted
.extern .shared .align 16 .b8 dyn[];
.shared .align 4 .b8 unused_by_padded[128];

.visible .entry transpose_padded(
	.param .u64 transpose_padded_param_0,
	.param .u32 transpose_padded_param_3
)
{
	.reg .b32 	%r<20>;
	// demoted variable
	.shared .align 4 .b8 _ZZ16transpose_paddedE4tile[4224];
	st.shared.f32 	[%rd3+1056], %f2;
	bar.sync 	0;
	ld.shared.f32 	%f5, [%rd5];
	ret;
}
.visible .entry other(
	.param .u64 other_param_0
)
{
	// demoted variable
	.shared .align 8 .b8 vt[24];
	.shared .align 4 .u32 _ZZ5otherE5count;
	.shared .align 4 .f32 grid2d[32][33];
	mov.u64 	%rd8, gtile;
	cvt.u32.u64 	%r3, %rd12;
	mov.u64 	%rd16, dyn;
	ret;
}
"#;

    fn sizes(kernel: &str) -> Vec<(String, SharedSize)> {
        shared_arrays(PTX, kernel).into_iter().map(|a| (a.name, a.size)).collect()
    }

    #[test]
    fn finds_a_demoted_tile_in_the_body() {
        assert_eq!(sizes("transpose_padded"), vec![("_ZZ16transpose_paddedE4tile".into(), SharedSize::Static(4224))]);
    }

    #[test]
    fn finds_module_scope_arrays_only_when_the_kernel_names_them() {
        use SharedSize::*;
        let got = sizes("other");
        assert_eq!(
            got,
            vec![
                ("vt".into(), Static(24)),
                ("_ZZ5otherE5count".into(), Static(4)),
                ("grid2d".into(), Static(32 * 33 * 4)),
                ("gtile".into(), Static(4096)),
                ("dyn".into(), Dynamic),
            ]
        );
        assert!(!got.iter().any(|(n, _)| n == "unused_by_padded"));
    }

    #[test]
    fn unknown_kernel_and_non_declarations() {
        assert!(shared_arrays(PTX, "transpose").is_empty());
        assert_eq!(parse_declaration("\tst.shared.f32 \t[%rd3], %f1;"), None);
        assert_eq!(parse_declaration(".global .align 4 .b8 g[16];"), None);
        let v = parse_declaration(".shared .align 16 .v4 .f32 quad[2]; // four lanes").unwrap();
        assert_eq!(v.static_bytes(), Some(32));
        assert_eq!(type_bytes(".f16x2"), Some(4));
        assert_eq!(type_bytes(".pred"), None);
    }

    #[test]
    fn whole_identifiers_only() {
        assert!(mentions("mov.u64 %rd8, gtile;", "gtile"));
        assert!(!mentions("mov.u64 %rd8, gtile2;", "gtile"));
        assert!(!mentions("cvt.u32.u64 %r3, %rd12;", "rd1"));
        assert!(!mentions("cvt.u32.u64 %r3, %rd12;", "r3"));
        assert!(!mentions("ld.shared.f32 %f1, [%rd1];", "shared"));
    }
}
