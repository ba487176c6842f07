//! The PTX text read line by line, for a module the simulator's parser refuses
//! ([`super::parsed`] reads every other one). Such a module may still load on
//! a GPU (the driver reads more PTX than the simulator does), and its structure
//! checks keep the verdicts they always had: this is the reader they had.

use super::view::{shared_end, type_bytes, KernelView, Op, SharedArray, SharedSize};

/// The text of kernel `name`'s body, braces included.
fn body<'a>(ptx: &'a str, name: &str) -> Option<(usize, &'a str)> {
    let start = ptx.match_indices(".entry ").map(|(i, _)| i).find(|&i| {
        let rest = &ptx[i + ".entry ".len()..];
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
                    return Some((open, &ptx[open..open + off]));
                }
            }
            _ => {}
        }
    }
    None
}

/// Kernel `name` of a module, read from its text.
pub(super) fn kernel_view(ptx: &str, name: &str) -> Option<KernelView> {
    let (open, body) = body(ptx, name)?;
    let first_line = ptx[..open].matches('\n').count() + 1;
    let ops = body
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let opcode = opcode(l)?;
            Some(Op { opcode: opcode.to_string(), line: first_line + i, shared_end: shared_access_end(l.trim()) })
        })
        .collect();
    let inside = body.lines().filter_map(parse_declaration);
    let module = module_scope_lines(ptx).filter_map(parse_declaration).filter(|a| mentions(body, &a.name));
    Some(KernelView {
        ops,
        shared: inside.chain(module).collect(),
        names_shared: ptx.contains(".shared") && body.contains(".shared"),
        dynamic_shared: ptx.lines().chain(body.lines()).any(|l| l.contains(".extern") && l.contains(".shared")),
    })
}

/// The opcode of a line, with any `@p` guard removed. Directives (`.loc`,
/// `.reg`, ...), labels, braces, comments and the label lists of a
/// `.branchtargets` table are not instructions.
fn opcode(l: &str) -> Option<&str> {
    let l = l.trim();
    let l = if l.starts_with('@') { l.split_once(char::is_whitespace)?.1.trim_start() } else { l };
    let op = l.split(|c: char| c.is_whitespace() || c == ';').next()?;
    let word = op.starts_with(|c: char| c.is_ascii_alphabetic());
    (word && !op.ends_with(':') && !op.ends_with(',')).then_some(op)
}

/// Every `.entry` name in the module.
pub(super) fn entries(ptx: &str) -> Vec<String> {
    ptx.match_indices(".entry ")
        .filter_map(|(i, _)| {
            let rest = &ptx[i + ".entry ".len()..];
            let end = rest.find(|c: char| c == '(' || c.is_whitespace())?;
            Some(rest[..end].to_string())
        })
        .collect()
}

/// One `.entry`'s header: its name, its parameters as (type without its dot,
/// bytes), and its `.maxntid` threads. Entries whose parameter list cannot be
/// read are left out.
pub(super) type Header = (String, Vec<(String, usize)>, Option<u32>);

pub(super) fn headers(ptx: &str) -> Vec<Header> {
    let mut found = Vec::new();
    for (at, _) in ptx.match_indices(".entry ") {
        let rest = &ptx[at + ".entry ".len()..];
        let Some(body) = rest.find('{') else { continue };
        let header = &rest[..body];
        // `.entry k(...)` or, with no parameters, `.entry k` alone.
        let (name, list, directives) = match (header.find('('), header.find(')')) {
            (Some(open), Some(close)) if open < close => {
                (&header[..open], &header[open + 1..close], &header[close + 1..])
            }
            (None, None) => header.split_once('\n').map_or((header, "", ""), |(n, d)| (n, "", d)),
            _ => continue,
        };
        let name = name.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            continue;
        }
        let params: Option<Vec<(String, usize)>> =
            list.split(',').map(str::trim).filter(|d| !d.is_empty()).map(parse_param).collect();
        let Some(params) = params else { continue };
        found.push((name.to_string(), params, max_ntid(directives)));
    }
    found
}

/// `.maxntid 128, 1, 1` between the parameter list and the body: 128.
fn max_ntid(directives: &str) -> Option<u32> {
    let at = directives.find(".maxntid")? + ".maxntid".len();
    let dims = directives[at..].lines().next()?;
    dims.split(',').map(|d| d.trim().parse::<u32>().ok()).product()
}

/// Parses `.param [.align N] [.ptr [.space] [.align N]] .TYPE name[[LEN]]`.
fn parse_param(decl: &str) -> Option<(String, usize)> {
    let mut tokens = decl.split_whitespace();
    if tokens.next()? != ".param" {
        return None;
    }
    let mut ty = None;
    let mut declarator = None;
    while let Some(tok) = tokens.next() {
        match tok {
            ".align" => {
                tokens.next();
            }
            ".ptr" | ".global" | ".const" | ".shared" | ".local" => {}
            t if t.starts_with('.') => ty = Some(t),
            name => {
                declarator = Some(name);
                break;
            }
        }
    }
    let ty = ty?;
    let len = match declarator?.split_once('[') {
        Some((_, dims)) => dims.trim_end_matches(']').trim().parse::<usize>().ok()?,
        None => 1,
    };
    Some((ty[1..].to_string(), type_bytes(ty)? * len))
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
pub(super) fn mentions(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(|c| ident(c) || c == '%' || c == '.') && !after.is_some_and(ident)
    })
}

/// Parses `[.extern] [.visible] .shared [.align N] [.vK] .TYPE name[D1][D2]...;`.
pub(super) fn parse_declaration(line: &str) -> Option<SharedArray> {
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

/// For a shared-memory instruction with an address `[base+K]`: K plus the bytes it accesses.
pub(super) fn shared_access_end(line: &str) -> Option<usize> {
    let line = if line.starts_with('@') { line.split_once(char::is_whitespace)?.1.trim_start() } else { line };
    let op = line.split_whitespace().next()?;
    shared_end(op, 0)?;
    let address = &line[line.find('[')? + 1..line.find(']')?];
    let offset = match address.rsplit_once('+') {
        Some((_, k)) => k.trim().parse::<i64>().ok()?,
        None => 0,
    };
    shared_end(op, offset)
}
