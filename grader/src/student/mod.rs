//! The student's loop: progress (`grader status`), hints that unfold
//! (`grader hint`), and re-grading on save (`grader watch`).

pub use crate::words::COMMAND;

pub mod hint;
pub mod status;
pub mod watch;

/// Every exercise, built once: the watcher's threads name them for the whole run.
pub fn exercises() -> &'static [kit::Exercise] {
    static ALL: std::sync::OnceLock<Vec<kit::Exercise>> = std::sync::OnceLock::new();
    ALL.get_or_init(crate::registry::all)
}
