//! The student's loop: progress (`grader status`), hints that unfold
//! (`grader hint`), and re-grading on save (`grader watch`).

/// What a student types to run the grader (the README's command): every
/// message that tells a student what to run next spells it so.
pub const COMMAND: &str = "cargo run -p grader --";

pub mod hint;
pub mod status;
pub mod watch;

/// Every exercise, built once: the watcher's threads name them for the whole run.
pub fn exercises() -> &'static [kit::Exercise] {
    static ALL: std::sync::OnceLock<Vec<kit::Exercise>> = std::sync::OnceLock::new();
    ALL.get_or_init(crate::registry::all)
}
