//! PTX tokens. Identifiers keep their dots (`ld.global.u32`, `%tid.x`) because PTX
//! opcodes and special registers are dotted words; the parser splits them.

use crate::error::SimError;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    /// An integer literal's magnitude (the parser applies a leading `-`).
    Int(u64),
    /// `0fXXXXXXXX`: the bits of an f32.
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX`: the bits of an f64.
    F64Bits(u64),
    /// A decimal floating-point literal (`1.5`, `2e3`).
    Float(f64),
    Str(String),
    Punct(char),
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || matches!(c, b'_' | b'$' | b'%' | b'.')
}

fn is_ident_cont(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.')
}

pub fn lex(src: &str) -> Result<Vec<Token>, SimError> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut line = 1;
    let mut out = Vec::with_capacity(src.len() / 4);
    let err = |line: usize, msg: String| SimError::Parse { line, msg };
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return Err(err(line, "unterminated string".into()));
                }
                out.push(Token { tok: Tok::Str(src[start..i].to_string()), line });
                i += 1;
            }
            c if c.is_ascii_digit() => {
                let (tok, n) = lex_number(&src[i..]).ok_or_else(|| err(line, "bad number".into()))?;
                out.push(Token { tok, line });
                i += n;
            }
            c if is_ident_start(c) => {
                let start = i;
                i += 1;
                loop {
                    if i < b.len() && is_ident_cont(b[i]) {
                        i += 1;
                    } else if i + 2 < b.len() && b[i] == b':' && b[i + 1] == b':' && is_ident_cont(b[i + 2]) {
                        // qualifiers like `.L1::evict_last` or `.shared::cta` are one word
                        i += 2;
                    } else {
                        break;
                    }
                }
                out.push(Token { tok: Tok::Ident(src[start..i].to_string()), line });
            }
            b',' | b';' | b':' | b'[' | b']' | b'{' | b'}' | b'(' | b')' | b'+' | b'-' | b'|' | b'!' | b'@' | b'<'
            | b'>' | b'=' | b'*' => {
                out.push(Token { tok: Tok::Punct(c as char), line });
                i += 1;
            }
            _ => return Err(err(line, format!("unexpected character `{}`", c as char))),
        }
    }
    Ok(out)
}

/// Lexes one numeric literal at the start of `s`; returns the token and its length.
fn lex_number(s: &str) -> Option<(Tok, usize)> {
    let b = s.as_bytes();
    let hex_run = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
    if b.len() > 2 && b[0] == b'0' {
        match b[1] {
            b'f' | b'F' if hex_run(2) == 8 => {
                return Some((Tok::F32Bits(u32::from_str_radix(&s[2..10], 16).ok()?), 10));
            }
            b'd' | b'D' if hex_run(2) == 16 => {
                return Some((Tok::F64Bits(u64::from_str_radix(&s[2..18], 16).ok()?), 18));
            }
            b'x' | b'X' => {
                let n = hex_run(2);
                let v = u64::from_str_radix(&s[2..2 + n], 16).ok()?;
                let mut len = 2 + n;
                if b.get(len) == Some(&b'U') {
                    len += 1;
                }
                return Some((Tok::Int(v), len));
            }
            b'b' | b'B' => {
                let n = b[2..].iter().take_while(|c| matches!(c, b'0' | b'1')).count();
                let v = u64::from_str_radix(&s[2..2 + n], 2).ok()?;
                let mut len = 2 + n;
                if b.get(len) == Some(&b'U') {
                    len += 1;
                }
                return Some((Tok::Int(v), len));
            }
            _ => {}
        }
    }
    let mut n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut is_float = false;
    if b.get(n) == Some(&b'.') && b.get(n + 1).is_some_and(|c| c.is_ascii_digit()) {
        is_float = true;
        n += 1;
        n += b[n..].iter().take_while(|c| c.is_ascii_digit()).count();
    }
    if matches!(b.get(n), Some(b'e') | Some(b'E')) {
        let mut m = n + 1;
        if matches!(b.get(m), Some(b'+') | Some(b'-')) {
            m += 1;
        }
        let digits = b[m..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            is_float = true;
            n = m + digits;
        }
    }
    if is_float {
        return Some((Tok::Float(s[..n].parse().ok()?), n));
    }
    let text = &s[..n];
    let v = if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8).ok()? // PTX octal
    } else {
        text.parse().ok()?
    };
    if b.get(n) == Some(&b'U') {
        n += 1;
    }
    Some((Tok::Int(v), n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(lex_number("0f3F800000;").unwrap(), (Tok::F32Bits(0x3f80_0000), 10));
        assert_eq!(lex_number("0d3FF0000000000000").unwrap(), (Tok::F64Bits(0x3ff0_0000_0000_0000), 18));
        assert_eq!(lex_number("0x1fU").unwrap(), (Tok::Int(31), 5));
        assert_eq!(lex_number("017").unwrap(), (Tok::Int(15), 3));
        assert_eq!(lex_number("1.5,").unwrap(), (Tok::Float(1.5), 3));
        assert_eq!(lex_number("42]").unwrap(), (Tok::Int(42), 2));
    }
}
