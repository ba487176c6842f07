//! What the integration tests share. Each test file uses only part of it.
#![allow(dead_code)]

pub mod grade_cache;
pub mod intake_tree;

/// CI sets it: there NVRTC (and the device headers it installs) must be
/// found, and a test that would skip without it fails instead.
pub const REQUIRE_NVRTC_ENV: &str = "CUDA_LAB_REQUIRE_NVRTC";

/// Whether NVRTC must be found here ([`REQUIRE_NVRTC_ENV`]).
pub fn nvrtc_required() -> bool {
    std::env::var_os(REQUIRE_NVRTC_ENV).is_some()
}

/// NVRTC, if it loads here; without it the grader compiles nothing, and the
/// tests that grade `.cu` files prove nothing and skip. Panics where it is
/// required and missing.
pub fn nvrtc() -> Option<ptx_build::Compiler> {
    match ptx_build::Compiler::nvrtc() {
        Ok(c) => Some(c),
        Err(_) if nvrtc_required() => panic!("CUDA_LAB_REQUIRE_NVRTC is set but NVRTC is missing"),
        Err(_) => None,
    }
}

/// Whether NVRTC loads here (see [`nvrtc`]).
pub fn nvrtc_available() -> bool {
    nvrtc().is_some()
}

/// The workspace (the repository's root).
pub fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The text of `rel` (a path from the workspace's root) as shipped: as
/// committed (`git show HEAD:rel`), never as a student edited it mid-term.
/// Outside a git checkout (a tarball, a Classroom template whose history was
/// squashed away), and for a file git does not track (an exercise being
/// written, not committed yet), the working file is all there is.
pub fn shipped(rel: &str) -> String {
    shipped_in(&workspace(), rel)
}

/// [`shipped`] in the checkout at `root`.
pub fn shipped_in(root: &std::path::Path, rel: &str) -> String {
    let git = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["show", &format!("HEAD:{rel}")])
        .stderr(std::process::Stdio::null())
        .output();
    match git {
        Ok(out) if out.status.success() => {
            String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{rel} as committed is not UTF-8: {e}"))
        }
        _ => std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}")),
    }
}

/// Every registered part's `.cu` file under `tree` ("exercises" or
/// "reference"): its path from the root, the kernels it must define, and its
/// text, the stubs ([`shipped`]) as shipped.
pub fn part_sources(root: &std::path::Path, tree: &str) -> Vec<(String, &'static [&'static str], String)> {
    let mut out = Vec::new();
    for ex in grader::registry::all() {
        for part in &ex.parts {
            let rel = format!("{tree}/{}/{}", ex.folder_name(), part.file);
            let text = match tree {
                "exercises" => shipped_in(root, &rel),
                _ => std::fs::read_to_string(root.join(&rel)).unwrap_or_else(|e| panic!("{rel}: {e}")),
            };
            out.push((rel, part.kernels, text));
        }
    }
    out
}

/// A course folder whose `exercises/` holds every part's stub as shipped
/// ([`shipped`]), for tests that grade the stubs: a student who has filled in
/// half the term's kernels still sees those tests pass. `reference/`,
/// `calibration/`, `grader/` and `cuda-lab.toml` are links to the workspace's
/// (nothing a student edits); pass it as `--root`.
pub fn shipped_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = workspace().canonicalize().unwrap();
    write_shipped_stubs(&root, dir.path());
    for link in ["reference", "calibration", "grader", "cuda-lab.toml"] {
        if root.join(link).exists() {
            std::os::unix::fs::symlink(root.join(link), dir.path().join(link)).unwrap();
        }
    }
    dir
}

/// A copy of what `grader export-template` exports (it never follows a
/// link), with every part's stub as shipped ([`shipped`]) and `reference/`
/// linked: pass it as `--root` to export the template a clean checkout would.
pub fn shipped_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = workspace().canonicalize().unwrap();
    for top in grader::template::TOP_LEVEL {
        let walk = walkdir::WalkDir::new(root.join(top)).into_iter().filter_entry(|e| {
            let rel = e.path().strip_prefix(&root).unwrap();
            e.file_name() != "target" && !rel.starts_with("grader/tests")
        });
        for entry in walk.map(|e| e.unwrap()).filter(|e| e.file_type().is_file()) {
            let to = dir.path().join(entry.path().strip_prefix(&root).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(entry.path(), to).unwrap();
        }
    }
    write_shipped_stubs(&root, dir.path());
    std::os::unix::fs::symlink(root.join("reference"), dir.path().join("reference")).unwrap();
    dir
}

/// Every part's stub as shipped ([`shipped`]) from `root`, written under `dir`.
fn write_shipped_stubs(root: &std::path::Path, dir: &std::path::Path) {
    for (rel, _, text) in part_sources(root, "exercises") {
        let to = dir.join(&rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, text).unwrap();
    }
}

/// Picks the default test lane's sample from a whole-corpus sweep: `per`
/// items of each group (e.g. one variants case per exercise), chosen by a
/// hash of the group, the item and the sample seed, so that the same seed
/// always picks the same items and another seed (`CUDA_LAB_SAMPLE_SEED=N`)
/// rotates through the corpus. The whole sweep runs in CI as an `#[ignore]`d
/// test. Prints what it chose and how to replay it.
pub fn sample<T: Clone>(what: &str, groups: &[(String, Vec<(String, T)>)], per: usize) -> Vec<(String, T)> {
    let seed: u64 = std::env::var("CUDA_LAB_SAMPLE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let fnv =
        |s: &str| s.bytes().fold(0xcbf2_9ce4_8422_2325u64 ^ seed, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let mut chosen = Vec::new();
    for (group, items) in groups {
        let mut ranked: Vec<&(String, T)> = items.iter().collect();
        ranked.sort_by_key(|(name, _)| (fnv(&format!("{group}/{name}")), name.clone()));
        chosen.extend(ranked.into_iter().take(per).cloned());
    }
    let names: Vec<&str> = chosen.iter().map(|(n, _)| n.as_str()).collect();
    eprintln!("sample of {what} (CUDA_LAB_SAMPLE_SEED={seed}; every one with `-- --ignored`): {}", names.join(", "));
    chosen
}
