//! Where CUDA's device headers (`cuda_fp16.h`, `cooperative_groups.h`, ...)
//! come from: the machine's own CUDA toolkit first, a download only where it
//! has none.
//!
//! An offline GPU node with a toolkit in `/usr/local/cuda` must compile a file
//! that includes `<cooperative_groups.h>` with that toolkit's headers, without
//! trying pip at all. So the include folder of the toolkit whose compiler is in
//! use (the folder next to NVRTC's library, or nvcc's) comes first, then the
//! toolkits the environment names (`CUDA_PATH`, `CUDA_HOME`, `/usr/local/cuda`,
//! `nvcc` on `PATH`), and only then the provisioned header bundle (installed on
//! first use, where this process may still download: see
//! [`provision::may_download`]).

use std::path::{Path, PathBuf};

use crate::provision;

/// The include folders device headers are read from, and where they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeviceIncludes {
    pub dirs: Vec<PathBuf>,
    /// For people: "toolkit /usr/local/cuda/include" or "provisioned cache ~/.cache/...".
    pub origin: String,
}

/// The toolkit include folders holding CUDA's device headers, best first,
/// without downloading anything. `compiler_file` is NVRTC's library or nvcc's
/// executable, where known.
pub(crate) fn from_toolkit(compiler_file: Option<&Path>) -> Option<DeviceIncludes> {
    let mut roots: Vec<PathBuf> = compiler_file.map(roots_of_compiler).unwrap_or_default();
    roots.extend(env_roots());
    roots.into_iter().find_map(|root| includes_of(&root))
}

/// Toolkit, else the provisioned bundle (installing it where this process may).
pub(crate) fn locate(compiler_file: Option<&Path>) -> Result<DeviceIncludes, String> {
    if let Some(found) = from_toolkit(compiler_file) {
        return Ok(found);
    }
    let dir = provision::ensure(&provision::DEVICE_HEADERS).map_err(|f| f.message(&provision::DEVICE_HEADERS))?;
    Ok(provisioned(&dir))
}

/// What [`locate`] would answer, without installing: for the grades JSON and
/// the header line of a run.
pub(crate) fn describe(compiler_file: Option<&Path>) -> String {
    if let Some(found) = from_toolkit(compiler_file) {
        return found.origin;
    }
    if let Some(dir) = provision::installed(&provision::DEVICE_HEADERS) {
        return provisioned(&dir).origin;
    }
    match provision::may_download() {
        Ok(()) => "none yet: CUDA 12.9's are installed with pip when a file includes one".into(),
        Err(_) => "none: no CUDA toolkit here, and nothing may be downloaded".into(),
    }
}

fn provisioned(dir: &Path) -> DeviceIncludes {
    DeviceIncludes {
        dirs: provision::DEVICE_INCLUDE_DIRS.iter().map(|d| dir.join(d)).collect(),
        origin: format!("provisioned cache {}", home_relative(dir)),
    }
}

/// `dir` as `~/…` when under the home folder: a report read on another
/// machine names no path only the grading machine has.
fn home_relative(dir: &Path) -> String {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    match home.as_deref().and_then(|h| dir.strip_prefix(h).ok()) {
        Some(rel) => format!("~/{}", rel.display()),
        None => dir.display().to_string(),
    }
}

/// The toolkit folders a compiler file may belong to: `<root>/lib64/libnvrtc.so`
/// and `<root>/bin/nvcc` → `<root>`; `<root>/targets/<arch>/lib` → that
/// target folder; a pip wheel's `site/nvidia/cuda_nvrtc/lib` → the runtime
/// wheel beside it (`site/nvidia/cuda_runtime`), and CUDA 13's
/// `site/nvidia/cu13/lib` → `site/nvidia/cu13`.
fn roots_of_compiler(file: &Path) -> Vec<PathBuf> {
    let Some(dir) = file.parent() else { return Vec::new() };
    let Some(up) = dir.parent() else { return Vec::new() };
    let mut out = vec![up.to_path_buf()];
    if up.file_name().is_some_and(|n| n == "cuda_nvrtc") {
        if let Some(nvidia) = up.parent() {
            out.push(nvidia.join("cuda_runtime"));
        }
    }
    out
}

fn env_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(|v| std::env::var_os(v).filter(|v| !v.is_empty()).map(PathBuf::from))
        .collect();
    roots.push("/usr/local/cuda".into());
    let exe = format!("nvcc{}", std::env::consts::EXE_SUFFIX);
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path).filter(|d| !d.as_os_str().is_empty()) {
            if d.join(&exe).is_file() {
                if let Some(root) = d.parent() {
                    roots.push(root.to_path_buf());
                }
            }
        }
    }
    roots
}

/// `<root>/include` where it holds the device headers, with what they include
/// from CCCL (`<nv/target>`): in the same folder (CUDA 12), in `include/cccl`
/// (CUDA 13), or in the CCCL wheel beside a runtime wheel.
fn includes_of(root: &Path) -> Option<DeviceIncludes> {
    let include = root.join("include");
    let has_device = ["cuda_fp16.h", "cuda_bf16.h", "cooperative_groups.h"].iter().all(|h| include.join(h).is_file());
    if !has_device {
        return None;
    }
    let mut dirs = vec![include.clone()];
    let cccl = [include.join("cccl"), root.with_file_name("cuda_cccl").join("include")]
        .into_iter()
        .find(|d| d.join("nv").join("target").is_file());
    match cccl {
        Some(d) => dirs.push(d),
        None if include.join("nv").join("target").is_file() => {}
        None => return None,
    }
    Some(DeviceIncludes { dirs, origin: format!("toolkit {}", include.display()) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"").unwrap();
    }

    fn fake_toolkit(root: &Path, cccl_beside: bool) {
        for h in ["cuda_fp16.h", "cuda_bf16.h", "cooperative_groups.h"] {
            touch(&root.join("include").join(h));
        }
        if cccl_beside {
            touch(&root.join("include/cccl/nv/target"));
        } else {
            touch(&root.join("include/nv/target"));
        }
    }

    #[test]
    fn a_toolkit_next_to_the_compiler_serves_its_headers() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("cuda-13.0");
        fake_toolkit(&root, true);
        let found = from_toolkit(Some(&root.join("lib64/libnvrtc.so.13"))).unwrap();
        assert_eq!(found.dirs, [root.join("include"), root.join("include/cccl")]);
        assert_eq!(found.origin, format!("toolkit {}", root.join("include").display()));
        // nvcc's folder works the same.
        assert_eq!(from_toolkit(Some(&root.join("bin/nvcc"))), Some(found));
    }

    #[test]
    fn wheels_find_the_runtime_wheel_beside_nvrtc() {
        let t = tempfile::tempdir().unwrap();
        let nv = t.path().join("site/nvidia");
        for h in ["cuda_fp16.h", "cuda_bf16.h", "cooperative_groups.h"] {
            touch(&nv.join("cuda_runtime/include").join(h));
        }
        let nvrtc = nv.join("cuda_nvrtc/lib/libnvrtc.so.12");
        // Without CCCL's <nv/target> the headers cannot compile: not a match.
        assert!(roots_of_compiler(&nvrtc).into_iter().find_map(|r| includes_of(&r)).is_none());
        touch(&nv.join("cuda_cccl/include/nv/target"));
        let found = roots_of_compiler(&nvrtc).into_iter().find_map(|r| includes_of(&r)).unwrap();
        assert_eq!(found.dirs, [nv.join("cuda_runtime/include"), nv.join("cuda_cccl/include")]);
    }

    #[test]
    fn a_folder_without_device_headers_is_no_toolkit() {
        let t = tempfile::tempdir().unwrap();
        touch(&t.path().join("include/cuda_fp16.h"));
        assert_eq!(includes_of(t.path()), None);
    }
}
