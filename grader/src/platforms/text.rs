//! Text the platforms share: where a message points in the student's file,
//! and cutting text to what a platform shows.

/// `file.cu:line` in the student's sources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for SourceLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// The first `<path>.cu:<line>` a message names (the simulator's and the
/// sanitizer's findings point at the student's line this way).
pub fn source_line(message: &str) -> Option<SourceLine> {
    let mut from = 0;
    while let Some(i) = message[from..].find(".cu:") {
        let dot = from + i;
        let digits: String = message[dot + 4..].chars().take_while(char::is_ascii_digit).collect();
        let start = message[..dot]
            .rfind(|c: char| c.is_whitespace() || matches!(c, '(' | '`' | '\'' | '"' | ','))
            .map_or(0, |s| s + 1);
        if let (Ok(line), true) = (digits.parse::<u32>(), start < dot) {
            return Some(SourceLine { file: message[start..dot + 3].to_string(), line });
        }
        from = dot + 4;
    }
    None
}

/// The first line, for places that take one (an attribute, a table cell's summary).
pub fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// At most `max_chars` characters, saying where it was cut.
pub fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{} [...]", &text[..cut]),
        None => text.to_string(),
    }
}

/// Points as people read them (2.5, not 2.4999999999999996).
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_students_line_is_found_in_a_message() {
        let m = "race: … at exercises/ex01-pi/kernels/pi_shared.cu:8 (PTX line 44) and …:17 with no barrier";
        assert_eq!(source_line(m), Some(SourceLine { file: "exercises/ex01-pi/kernels/pi_shared.cu".into(), line: 8 }));
        assert_eq!(source_line("`ld.global` (pi.cu:14, PTX line 3)").unwrap().to_string(), "pi.cu:14");
        assert_eq!(source_line("wrong: 3 of 1000 elements differ"), None);
        assert_eq!(source_line("see kernels/a.cu: no line"), None);
    }
}
