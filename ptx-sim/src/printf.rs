//! Device `printf` (`vprintf(fmt, args)`): C-style formatting from the argument
//! buffer the kernel builds in local memory (each argument aligned to its size;
//! `float` is promoted to `double`, `char`/`short` to `int`).

/// Captured printf output of one launch, capped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrintfOutput {
    pub text: String,
    /// Calls whose output was cut or not kept because the cap was reached.
    pub dropped_calls: u64,
    /// Number of printf calls (thread-level).
    pub calls: u64,
    /// Count the calls only (`SimConfig::capture_printf` off).
    pub(crate) discard: bool,
}

pub const PRINTF_CAP: usize = 64 * 1024;

impl PrintfOutput {
    pub(crate) fn push(&mut self, s: &str) {
        self.calls += 1;
        let room = PRINTF_CAP.saturating_sub(self.text.len());
        if s.len() <= room {
            self.text.push_str(s);
        } else {
            let mut cut = room;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            self.text.push_str(&s[..cut]);
            self.dropped_calls += 1;
        }
    }

    /// The cap is reached (a call was cut or dropped): what later calls
    /// print is not kept.
    pub(crate) fn full(&self) -> bool {
        self.dropped_calls > 0
    }

    /// `n` calls counted and dropped unformatted (the cap is reached).
    pub(crate) fn drop_calls(&mut self, n: u64) {
        self.calls += n;
        self.dropped_calls += n;
    }
}

/// Reads argument bytes and C strings for the formatter.
pub(crate) trait ArgSource {
    /// `size` bytes at `offset` in the argument buffer, little-endian.
    fn arg(&mut self, offset: usize, size: usize) -> Option<u64>;
    /// A NUL-terminated string at a generic address.
    fn cstr(&mut self, addr: u64) -> Option<Vec<u8>>;
}

pub(crate) fn format(fmt: &[u8], src: &mut dyn ArgSource) -> String {
    let mut out = String::new();
    let mut off = 0usize;
    let mut i = 0;
    let mut next = |size: usize, src: &mut dyn ArgSource| -> Option<u64> {
        off = off.div_ceil(size) * size;
        let v = src.arg(off, size);
        off += size;
        v
    };
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            let start = i;
            while i < fmt.len() && fmt[i] != b'%' {
                i += 1;
            }
            out.push_str(&String::from_utf8_lossy(&fmt[start..i]));
            continue;
        }
        i += 1;
        if i >= fmt.len() {
            out.push('%');
            break;
        }
        if fmt[i] == b'%' {
            out.push('%');
            i += 1;
            continue;
        }
        let spec_start = i - 1;
        let mut flags = Flags::default();
        while i < fmt.len() {
            match fmt[i] {
                b'-' => flags.left = true,
                b'+' => flags.plus = true,
                b' ' => flags.space = true,
                b'0' => flags.zero = true,
                b'#' => flags.alt = true,
                _ => break,
            }
            i += 1;
        }
        let mut width: Option<usize> = None;
        if i < fmt.len() && fmt[i] == b'*' {
            width = next(4, src).map(|v| v as i32 as i64).map(|w| {
                if w < 0 {
                    flags.left = true;
                }
                w.unsigned_abs() as usize
            });
            i += 1;
        } else {
            let mut w = 0usize;
            let mut any = false;
            while i < fmt.len() && fmt[i].is_ascii_digit() {
                w = w * 10 + (fmt[i] - b'0') as usize;
                any = true;
                i += 1;
            }
            if any {
                width = Some(w.min(4096));
            }
        }
        let mut prec: Option<usize> = None;
        if i < fmt.len() && fmt[i] == b'.' {
            i += 1;
            if i < fmt.len() && fmt[i] == b'*' {
                prec = next(4, src).map(|v| (v as i32).max(0) as usize);
                i += 1;
            } else {
                let mut p = 0usize;
                while i < fmt.len() && fmt[i].is_ascii_digit() {
                    p = p * 10 + (fmt[i] - b'0') as usize;
                    i += 1;
                }
                prec = Some(p.min(512));
            }
        }
        let mut long = 0;
        while i < fmt.len() && matches!(fmt[i], b'h' | b'l' | b'L' | b'z' | b'j' | b't' | b'q') {
            if matches!(fmt[i], b'l' | b'L' | b'z' | b'j' | b't' | b'q') {
                long += 1;
            }
            i += 1;
        }
        if i >= fmt.len() {
            out.push_str(&String::from_utf8_lossy(&fmt[spec_start..]));
            break;
        }
        let conv = fmt[i];
        i += 1;
        let isize_ = if long > 0 { 8 } else { 4 };
        let body: String = match conv {
            b'd' | b'i' => {
                let v = next(isize_, src).unwrap_or(0);
                let v = if isize_ == 4 { v as i32 as i64 } else { v as i64 };
                let mut s = v.unsigned_abs().to_string();
                if let Some(p) = prec {
                    while s.len() < p {
                        s.insert(0, '0');
                    }
                }
                pad_num(flags.sign(v < 0), &s, width, &flags, prec.is_none())
            }
            b'u' | b'x' | b'X' | b'o' => {
                let v = next(isize_, src).unwrap_or(0);
                let v = if isize_ == 4 { v as u32 as u64 } else { v };
                let mut s = match conv {
                    b'u' => v.to_string(),
                    b'x' => format!("{v:x}"),
                    b'X' => format!("{v:X}"),
                    _ => format!("{v:o}"),
                };
                if let Some(p) = prec {
                    while s.len() < p {
                        s.insert(0, '0');
                    }
                }
                let prefix = match (flags.alt && v != 0, conv) {
                    (true, b'x') => "0x",
                    (true, b'X') => "0X",
                    (true, b'o') => "0",
                    _ => "",
                };
                pad_num(prefix, &s, width, &flags, prec.is_none())
            }
            b'c' => {
                let v = next(4, src).unwrap_or(0) as u8;
                pad(&(v as char).to_string(), width, flags.left)
            }
            b's' => {
                let p = next(8, src).unwrap_or(0);
                let mut s = if p == 0 {
                    "(null)".to_string()
                } else {
                    src.cstr(p).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_else(|| "<bad>".into())
                };
                if let Some(pr) = prec {
                    s = s.chars().take(pr).collect();
                }
                pad(&s, width, flags.left)
            }
            b'p' => {
                let p = next(8, src).unwrap_or(0);
                pad(&format!("0x{p:x}"), width, flags.left)
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(next(8, src).unwrap_or(0));
                let (sign, s) = fmt_float(v, conv, prec.unwrap_or(6), flags.alt);
                pad_num(flags.sign(sign), &s, width, &flags, v.is_finite())
            }
            b'n' => {
                next(8, src);
                String::new()
            }
            _ => String::from_utf8_lossy(&fmt[spec_start..i]).into_owned(),
        };
        out.push_str(&body);
    }
    out
}

#[derive(Default)]
struct Flags {
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    alt: bool,
}

impl Flags {
    /// What a signed conversion writes before its digits.
    fn sign(&self, negative: bool) -> &'static str {
        match (negative, self.plus, self.space) {
            (true, ..) => "-",
            (false, true, _) => "+",
            (false, false, true) => " ",
            _ => "",
        }
    }
}

fn pad(s: &str, width: Option<usize>, left: bool) -> String {
    let n = s.chars().count();
    match width {
        Some(w) if w > n => {
            let fill = " ".repeat(w - n);
            if left {
                format!("{s}{fill}")
            } else {
                format!("{fill}{s}")
            }
        }
        _ => s.to_string(),
    }
}

fn pad_num(sign: &str, digits: &str, width: Option<usize>, f: &Flags, zero_ok: bool) -> String {
    let n = sign.len() + digits.len();
    match width {
        Some(w) if w > n && f.zero && !f.left && zero_ok => format!("{sign}{}{digits}", "0".repeat(w - n)),
        _ => pad(&format!("{sign}{digits}"), width, f.left),
    }
}

/// C-style float formatting. Returns (negative, text without sign).
fn fmt_float(v: f64, conv: u8, prec: usize, alt: bool) -> (bool, String) {
    let neg = v.is_sign_negative() && !v.is_nan();
    let a = v.abs();
    let upper = conv.is_ascii_uppercase();
    if !a.is_finite() {
        let s = if a.is_nan() { "nan" } else { "inf" };
        return (neg, if upper { s.to_uppercase() } else { s.to_string() });
    }
    let s = match conv.to_ascii_lowercase() {
        b'f' => {
            let mut s = format!("{a:.prec$}");
            if alt && prec == 0 {
                s.push('.');
            }
            s
        }
        b'e' => fmt_exp(a, prec, alt),
        b'a' => format!("{a:e}"),
        _ => {
            // %g: precision P (0 → 1); exponent X of %e; use %f if P > X >= -4
            let p = if prec == 0 { 1 } else { prec };
            let x = if a == 0.0 {
                0
            } else {
                let e = fmt_exp(a, p - 1, false);
                e.rsplit_once('e').and_then(|(_, x)| x.parse::<i32>().ok()).unwrap_or(0)
            };
            let mut s = if (p as i32) > x && x >= -4 {
                let fp = (p as i32 - 1 - x).max(0) as usize;
                format!("{a:.fp$}")
            } else {
                fmt_exp(a, p - 1, alt)
            };
            if !alt {
                // strip trailing zeros of the fraction
                let (mant, exp) = match s.find('e') {
                    Some(k) => (s[..k].to_string(), s[k..].to_string()),
                    None => (s.clone(), String::new()),
                };
                let mant = if mant.contains('.') {
                    mant.trim_end_matches('0').trim_end_matches('.').to_string()
                } else {
                    mant
                };
                s = mant + &exp;
            }
            s
        }
    };
    (neg, if upper { s.to_uppercase() } else { s })
}

fn fmt_exp(a: f64, prec: usize, alt: bool) -> String {
    let s = format!("{a:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    let mut mant = mant.to_string();
    if alt && prec == 0 {
        mant.push('.');
    }
    format!("{mant}e{}{:02}", if x < 0 { '-' } else { '+' }, x.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Buf(Vec<u8>);
    impl ArgSource for Buf {
        fn arg(&mut self, offset: usize, size: usize) -> Option<u64> {
            let b = self.0.get(offset..offset + size)?;
            let mut x = [0u8; 8];
            x[..size].copy_from_slice(b);
            Some(u64::from_le_bytes(x))
        }
        fn cstr(&mut self, _addr: u64) -> Option<Vec<u8>> {
            Some(b"str".to_vec())
        }
    }

    #[test]
    fn formats_like_c() {
        let mut b = Vec::new();
        b.extend_from_slice(&(-42i32).to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&1.5f64.to_le_bytes());
        b.extend_from_slice(&0x1234u64.to_le_bytes());
        b.extend_from_slice(&255u32.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&0.0001234f64.to_le_bytes());
        b.extend_from_slice(&1e10f64.to_le_bytes());
        let s = format(b"a=%5d f=%.2f s=%s x=%#06x g=%g %e|%-3c|", &mut Buf(b));
        assert_eq!(s, "a=  -42 f=1.50 s=str x=0x00ff g=0.0001234 1.000000e+10|\0  |");
    }

    #[test]
    fn general_format() {
        assert_eq!(fmt_float(100000.0, b'g', 6, false).1, "100000");
        assert_eq!(fmt_float(1000000.0, b'g', 6, false).1, "1e+06");
        assert_eq!(fmt_float(0.5, b'g', 6, false).1, "0.5");
        assert_eq!(fmt_float(3.0, b'f', 6, false).1, "3.000000");
    }
}
