//! Counts in words: "1 point", "2 points", "1 copy", never "1 points". Every
//! message that puts a number before a noun goes through here
//! (`grader/tests/messages.rs` reads the message templates for the mistake).

/// What a student types to run the grader (the README's command): every
/// message that tells a student what to run next spells it so.
pub const COMMAND: &str = "cargo run -p grader --";

/// `n` and the noun, singular for exactly one: `count(1, "copy")` is "1 copy",
/// `count(3, "copy")` "3 copies".
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {}", plural(noun))
    }
}

/// Points as a report shows them (two decimals, trailing zeros kept as the
/// score lines do), singular only when they read "1.00": "1.00 point",
/// "23.89 points".
pub fn points(x: f64) -> String {
    let shown = format!("{x:.2}");
    if shown == "1.00" {
        format!("{shown} point")
    } else {
        format!("{shown} points")
    }
}

/// Points rounded as the summary rounds them (`report::round`): "1 point",
/// "23.89 points".
pub fn rounded_points(x: f64) -> String {
    let shown = format!("{x:.2}");
    let shown = shown.trim_end_matches('0').trim_end_matches('.');
    if shown == "1" {
        "1 point".into()
    } else {
        format!("{shown} points")
    }
}

/// The English plural of the nouns the grader counts.
pub fn plural(noun: &str) -> String {
    let consonant_y = noun.len() > 1
        && noun.ends_with('y')
        && !matches!(noun.as_bytes()[noun.len() - 2], b'a' | b'e' | b'i' | b'o' | b'u');
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if ["s", "x", "ch", "sh"].iter().any(|e| noun.ends_with(e)) {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "copy"), "1 copy");
        assert_eq!(count(0, "copy"), "0 copies");
        assert_eq!(count(2, "point"), "2 points");
        assert_eq!(count(3, "day"), "3 days");
        assert_eq!(count(2, "match"), "2 matches");
        assert_eq!(points(1.0), "1.00 point");
        assert_eq!(points(0.999), "1.00 point", "as it reads");
        assert_eq!(points(23.891), "23.89 points");
        assert_eq!(rounded_points(1.0), "1 point");
        assert_eq!(rounded_points(23.891), "23.89 points");
    }
}
