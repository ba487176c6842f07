//! CodeRunner reads the whole of stdout as its JSON: while the grading runs,
//! file descriptor 1 points at stderr, and the real stdout comes back for the
//! results alone.

use anyhow::{Context, Result};

/// Points file descriptor 1 at stderr until [`restore_stdout`], so that the
/// test harness's lines, the report and any child's output go there; returns
/// the real stdout.
pub fn json_only_stdout() -> Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsFd, AsRawFd};
    let saved = std::io::stdout().as_fd().try_clone_to_owned().context("keeping stdout")?;
    // SAFETY: dup2 on two open descriptors; Rust's stdout keeps using fd 1.
    if unsafe { libc::dup2(std::io::stderr().as_raw_fd(), 1) } < 0 {
        anyhow::bail!("sending stdout to stderr: {}", std::io::Error::last_os_error());
    }
    Ok(saved)
}

pub fn restore_stdout(saved: std::os::fd::OwnedFd) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: dup2 on two open descriptors.
    if unsafe { libc::dup2(saved.as_raw_fd(), 1) } < 0 {
        anyhow::bail!("restoring stdout: {}", std::io::Error::last_os_error());
    }
    Ok(())
}
