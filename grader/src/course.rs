//! The course's folder, found the same way by every command that needs it
//! when `--root` does not say: the current folder if it holds the exercises
//! (a student's checkout, the device machine's copy of the repository), else
//! the workspace the grader was built in.

use std::path::PathBuf;

/// The course's own choices, in its folder.
pub const CONFIG_FILE: &str = "cuda-lab.toml";

/// The course's folder, or `None` where neither the current folder nor the
/// workspace the grader was built in holds `exercises/`. Falling back to the
/// latter it says so once (on stderr): a grader built in one checkout and run
/// elsewhere would otherwise grade with that checkout's course without a word.
pub fn root() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    if cwd.join("exercises").is_dir() {
        return Some(cwd);
    }
    let built_in = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let found = built_in.join("exercises").is_dir().then(|| built_in.canonicalize().ok()).flatten()?;
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!(
            "note: no exercises/ in {}: using the course of the checkout this grader was built in, {} \
             (run from the course's folder, or pass --root)",
            cwd.display(),
            found.display()
        )
    });
    Some(found)
}
