//! The batch's half of the GPU lock (`kit::gpu_lock`): every process it
//! starts gets the lock file opened by the batch. A lock taken on that
//! descriptor belongs to the batch's copy too, so a worker that dies holding
//! it (after a part whose kernel never ended) holds it until the batch has
//! reaped it: only then is its context, and the kernel still running in it,
//! gone from the GPU, and only then may another worker time a kernel.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Opens `path` for the process `cmd` will start and hands it down; keep the
/// returned file until that process has been reaped.
pub fn hand_down(cmd: &mut Command, path: &Path) -> std::io::Result<File> {
    let file = kit::gpu_lock::open(path)?;
    let fd = file.as_raw_fd();
    cmd.env(kit::gpu_lock::FD_ENV, fd.to_string());
    // SAFETY: between fork and exec only fcntl(2), which is async-signal-safe;
    // it clears close-on-exec in the child's table alone.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(file)
}

/// The lock file of one GPU (see `kit::gpu_lock`): workers and isolated
/// children of the same GPU share it. Here, not with the workers (`pool`),
/// since both the workers and the isolated children (`part`) are handed it.
pub fn lock_file(dir: &Path, gpu: Option<&str>) -> PathBuf {
    dir.join(format!("gpu-{}.lock", gpu.unwrap_or("default").replace(|c: char| !c.is_ascii_alphanumeric(), "_")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_gets_the_lock_file_and_no_one_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gpu-default.lock");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "readlink /proc/self/fd/$CUDA_LAB_GPU_LOCK_FD"]);
        let hold = hand_down(&mut cmd, &path).unwrap();
        let out = cmd.output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), path.to_str().unwrap());
        // Another child started meanwhile does not inherit it.
        let other =
            Command::new("sh").arg("-c").arg(format!("test -e /proc/self/fd/{}", hold.as_raw_fd())).status().unwrap();
        assert!(!other.success(), "the descriptor leaked into an unrelated child");
    }
}
