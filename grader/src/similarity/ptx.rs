//! The compiled PTX as a second opinion: what the compiler made of two kernels
//! is alike when the kernels are, however the source was dressed up (macros,
//! helper functions, renamed everything). Registers, labels, symbols and the
//! kernel's name are replaced by placeholders, and debug lines and comments
//! dropped, before the same winnowing as the source's.

use super::tokens::Token;

/// The normalised tokens of a PTX text; `line` is the PTX line.
pub fn tokens(ptx: &str) -> Vec<Token> {
    let mut out = Vec::new();
    for (i, raw) in ptx.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty()
            || [".loc", ".file", ".version", ".target", ".address_size", ".reg", ".visible", ".entry", ".param"]
                .iter()
                .any(|d| line.starts_with(d))
            || line.starts_with(')')
        {
            continue;
        }
        let mut words: Vec<String> = Vec::new();
        let mut word = String::new();
        for c in line.chars() {
            if c.is_whitespace() || ",;[](){}+".contains(c) {
                words.push(std::mem::take(&mut word));
                if !c.is_whitespace() {
                    words.push(c.to_string());
                }
            } else {
                word.push(c);
            }
        }
        words.push(word);
        out.extend(words.into_iter().filter(|w| !w.is_empty()).map(|w| Token { text: normalised(&w), line: i + 1 }));
    }
    out
}

fn normalised(w: &str) -> String {
    if w.len() == 1 && ",;[](){}+".contains(w) {
        return w.to_string();
    }
    // A guard (`@%p1`, `@!%p2`) is its register's kind.
    if let Some(guard) = w.strip_prefix("@!") {
        return format!("@!{}", normalised(guard));
    }
    if let Some(guard) = w.strip_prefix('@') {
        return format!("@{}", normalised(guard));
    }
    // Virtual registers (%r12, %rd3, %f7, %p2, %rs1): their kind only. Special
    // registers (%tid.x, %ctaid.y, %laneid) stay.
    if let Some(rest) = w.strip_prefix('%') {
        let kind: String = rest.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        let tail = &rest[kind.len()..];
        if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) {
            return format!("%{kind}");
        }
        return w.to_string();
    }
    if w.starts_with("$L") {
        return "$L".into();
    }
    if let Some((_, n)) = w.rsplit_once("_param_") {
        return format!("$param{n}");
    }
    if w.starts_with("_Z") || w.starts_with("__cuda") {
        return "$sym".into();
    }
    // An instruction (ld.global.f32), a number, or a name the student chose (a
    // global symbol, a called function): names become one placeholder.
    let first = w.chars().next().unwrap_or(' ');
    if first.is_ascii_digit() || first == '-' || w.contains('.') || is_opcode(w) {
        w.to_string()
    } else {
        "$name".into()
    }
}

/// Opcodes without a type suffix.
fn is_opcode(w: &str) -> bool {
    ["ret", "exit", "bra", "call", "trap", "brkpt"].contains(&w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_labels_and_symbols_do_not_matter() {
        let a = "\t.loc 1 6 0\n\tld.param.u64 \t%rd8, [k_param_0];\n\tmov.u32 \t%r19, %ctaid.y;\n$L__BB0_2:\n\t@%p1 bra \t$L__BB0_7;\n\tmov.u64 %rd12, _ZZ1kE2Ms;\n";
        let b = "\tld.param.u64 \t%rd1, [other_param_0];\n\t.loc 1 9 0\n\tmov.u32 \t%r2, %ctaid.y;\n$L__BB1_5:\n\t@%p3 bra \t$L__BB1_1;\n\tmov.u64 %rd4, _ZZ5otherE4tile;\n";
        let t = |s: &str| tokens(s).into_iter().map(|t| t.text).collect::<Vec<_>>();
        assert_eq!(t(a), t(b));
        assert!(t(a).contains(&"%ctaid.y".to_string()));
        assert_ne!(t(a), t(&b.replace("%ctaid.y", "%ctaid.x")));
    }
}
