//! One grading run of the grader binary on the simulator, and a cache of such
//! runs that the slow lanes of one CI run share (`CUDA_LAB_GRADE_CACHE`, set
//! by `.ci/run` to a fresh folder): the variants lane grades every case with
//! NVRTC, and the two-compiler sweep then grades only the clang builds, taking
//! the NVRTC half from here instead of grading it a second time.
//!
//! A run is reused only when everything that decides it is the same: the
//! grader binary (its size and modification time), its arguments, the
//! compiler and the compile time limit, and every file of the submission the
//! grader reads (its graded folder and `cuda-lab.toml`). Without the variable
//! nothing is cached and every test grades its own cases, as before.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// The folder of cached runs; unset: no cache.
pub const GRADE_CACHE_ENV: &str = "CUDA_LAB_GRADE_CACHE";

/// What one grading run left behind.
#[derive(Debug, Clone)]
pub struct Graded {
    /// The grades JSON, if the grader wrote one.
    pub json: Option<String>,
    pub stdout: String,
    pub stderr: String,
    pub status: Option<i32>,
    /// How long the run took (when it was made, for a cached one).
    pub elapsed: Duration,
    /// Taken from the cache, not graded now.
    pub cached: bool,
}

/// One grading run: `grader <args> --root <root> --json … -- --quiet --color never`,
/// in a scratch folder with a PTX cache of its own (a part must not pass on
/// another case's PTX), with `compiler` (`CUDA_LAB_COMPILER`; `None`: the one
/// this process would give it) and the compile time limit `compile_timeout`.
/// `graded` names the folders under `root` whose files decide the grade
/// (`exercises`, `reference`, …).
pub struct Run<'a> {
    pub args: Vec<String>,
    pub root: &'a Path,
    pub graded: &'a [&'a str],
    pub compiler: Option<&'a str>,
    pub compile_timeout: &'a str,
}

impl Run<'_> {
    /// The compiler the grader will use, as `CUDA_LAB_COMPILER` names it.
    fn compiler(&self) -> String {
        let value = self.compiler.map(String::from).or_else(|| std::env::var(ptx_build::COMPILER_ENV).ok());
        match value.as_deref() {
            None | Some("") => "nvrtc".into(),
            Some(v) => v.into(),
        }
    }

    /// Grades now, or takes the same run from the cache when there is one.
    pub fn grade(&self) -> Graded {
        let Some(dir) = cache_dir() else { return self.grade_now() };
        let entry = dir.join(self.key());
        if let Some(hit) = read(&entry) {
            return hit;
        }
        let graded = self.grade_now();
        // Only a run that produced a result; a crash of the test itself is regraded.
        if graded.json.is_some() {
            write(&dir, &entry, &graded);
        }
        graded
    }

    fn grade_now(&self) -> Graded {
        let scratch = tempfile::tempdir().unwrap();
        let json = scratch.path().join("grades.json");
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_grader"))
            .args(&self.args)
            .arg("--root")
            .arg(self.root)
            .arg("--json")
            .arg(&json)
            .args(["--", "--quiet", "--color", "never"])
            .current_dir(scratch.path())
            .env(ptx_build::COMPILER_ENV, self.compiler())
            .env(grader::grade::PTX_CACHE_ENV, scratch.path().join("ptx-cache"))
            .env(grader::grade::COMPILE_TIMEOUT_ENV, self.compile_timeout)
            .output()
            .expect("the grader runs");
        Graded {
            json: std::fs::read_to_string(&json).ok(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            status: out.status.code(),
            elapsed: start.elapsed(),
            cached: false,
        }
    }

    /// Everything that decides the run, hashed.
    pub fn key(&self) -> String {
        let mut h = Sha256::new();
        let mut field = |name: &str, value: &[u8]| {
            h.update((name.len() as u64).to_le_bytes());
            h.update(name.as_bytes());
            h.update((value.len() as u64).to_le_bytes());
            h.update(value);
        };
        field("grader", binary_identity().as_bytes());
        for a in &self.args {
            field("arg", a.as_bytes());
        }
        field("compiler", self.compiler().as_bytes());
        field("compile-timeout", self.compile_timeout.as_bytes());
        for (rel, bytes) in files(self.root, self.graded) {
            field(&rel, &bytes);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn cache_dir() -> Option<PathBuf> {
    std::env::var_os(GRADE_CACHE_ENV).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The grader binary this test process runs: a rebuilt one is another binary.
fn binary_identity() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let path = env!("CARGO_BIN_EXE_grader");
        let meta = std::fs::metadata(path).expect("the grader binary");
        let modified = meta.modified().ok().and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok());
        format!("{path} {} {:?}", meta.len(), modified)
    })
}

/// The files that decide a grade: every file under `root/<folder>`, and the
/// course's `cuda-lab.toml`; sorted by path, with their contents.
fn files(root: &Path, graded: &[&str]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut tops: Vec<PathBuf> = graded.iter().map(|g| root.join(g)).collect();
    tops.push(root.join("cuda-lab.toml"));
    for top in tops {
        for entry in walkdir::WalkDir::new(&top).sort_by_file_name().into_iter().filter_map(Result::ok) {
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(root).unwrap_or(entry.path()).to_string_lossy().into_owned();
                out.push((rel, std::fs::read(entry.path()).unwrap_or_default()));
            }
        }
    }
    out
}

fn read(entry: &Path) -> Option<Graded> {
    let text = |name: &str| std::fs::read_to_string(entry.join(name)).ok();
    let meta = text("meta")?;
    let mut lines = meta.lines();
    let status = lines.next()?.parse::<i32>().ok();
    let elapsed = Duration::from_secs_f64(lines.next()?.parse().ok()?);
    Some(Graded {
        json: text("grades.json"),
        stdout: text("stdout")?,
        stderr: text("stderr")?,
        status,
        elapsed,
        cached: true,
    })
}

/// Writes the entry whole or not at all (another lane may read it at once).
fn write(dir: &Path, entry: &Path, graded: &Graded) {
    let _ = std::fs::create_dir_all(dir);
    let Ok(tmp) = tempfile::tempdir_in(dir) else { return };
    let status = graded.status.map(|s| s.to_string()).unwrap_or_else(|| "signal".into());
    let meta = format!("{status}\n{}\n", graded.elapsed.as_secs_f64());
    let mut files = vec![("meta", meta.as_str()), ("stdout", &graded.stdout), ("stderr", &graded.stderr)];
    files.extend(graded.json.as_deref().map(|j| ("grades.json", j)));
    for (name, text) in files {
        if std::fs::write(tmp.path().join(name), text).is_err() {
            return;
        }
    }
    // A rename onto an entry another process just wrote fails: theirs is as good.
    let _ = std::fs::rename(tmp.keep(), entry);
}
