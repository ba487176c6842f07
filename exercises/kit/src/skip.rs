//! [`Skip`], the error of a check that cannot run here, in a module of its own:
//! it is raised by timing ([`crate::perf`]), by memory measurement
//! ([`crate::measure`]) and by [`crate::exercise`]'s contexts, and living in
//! any of them made `exercise` -> `perf` -> `exercise` (and `exercise` ->
//! `shared` -> `perf` -> `exercise`) an import cycle. It imports nothing of
//! the crate.

/// A check that cannot run here (no timing on the simulator, say). Not a
/// failure: the test is shown `ignored` with this message, and its points
/// leave the maximum. The kit raises it itself where a GPU or a timing is
/// missing ([`crate::Ctx::copy_bandwidth_gbps`], [`crate::Ctx::kernel_module`]);
/// raise it for a case this backend cannot run.
///
/// ```no_run
/// # fn demo(ctx: &kit::Ctx) -> anyhow::Result<String> {
/// let gpu = ctx.kernel_module("scan")?.gpu();
/// if gpu.info().global_memory_bytes < 8 << 30 {
///     return Err(kit::Skip("the 2^31-element case needs 8 GiB of device memory".into()).into());
/// }
/// # Ok(String::new())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Skip(pub String);
