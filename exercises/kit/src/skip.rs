//! [`Skip`], the error of a check that cannot run here, in a module of its own:
//! it is raised by timing ([`crate::perf`]), by memory measurement
//! ([`crate::measure`]) and by [`crate::exercise`]'s contexts, and living in
//! any of them made `exercise` -> `perf` -> `exercise` (and `exercise` ->
//! `shared` -> `perf` -> `exercise`) an import cycle. It imports nothing of
//! the crate.

/// A check that cannot run here (no timing on the simulator, say). Not a failure.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Skip(pub String);
