//! `grader make-class`: a generated class of submissions, for measuring batch
//! throughput and for tests. Each student is a variant of the reference
//! solutions (or the stubs), many of them broken the way real submissions are.
//! The variants cycle, so any 13 consecutive students cover them all, and the
//! broken file moves from exercise to exercise.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use kit::Exercise;
use serde::Serialize;

use super::intake::expected_files;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Every file is the reference solution.
    Reference,
    /// Every file is the stub students start from.
    Stubs,
    /// Reference files, one with a syntax error.
    SyntaxError,
    /// Half reference, half stubs.
    Partial,
    /// Reference files, one missing.
    MissingFile,
    /// One kernel never ends.
    InfiniteLoop,
    /// One kernel writes far past its output.
    OutOfBounds,
    /// One kernel prints in a loop.
    PrintfFlood,
    /// One file is a symbolic link to a file outside the submission.
    SymlinkOutside,
    /// Reference files plus Cargo, Rust and script files that try to change the grading.
    ExtraFiles,
    /// No `.cu` file at all.
    NoSources,
    /// Reference files in a folder whose name is not UTF-8.
    NonUtf8Name,
}

const CYCLE: [Variant; 13] = [
    Variant::Reference,
    Variant::Stubs,
    Variant::SyntaxError,
    Variant::Partial,
    Variant::MissingFile,
    Variant::InfiniteLoop,
    Variant::Reference,
    Variant::OutOfBounds,
    Variant::SymlinkOutside,
    Variant::ExtraFiles,
    Variant::PrintfFlood,
    Variant::NoSources,
    Variant::NonUtf8Name,
];

/// One generated student, as listed in `<dir>/.class.json`.
#[derive(Debug, Clone, Serialize)]
pub struct Generated {
    /// The folder name (lossy for the non-UTF-8 one).
    pub folder: String,
    /// Its key in the gradebook.
    pub key: String,
    pub variant: Variant,
    /// The file the variant changed, if it changed one.
    pub file: Option<String>,
}

/// Writes `students` submissions for `exercises` into `dir`, from the
/// `reference/` and `exercises/` folders of `root`; with `distinct`, no two
/// students' files compile to the same PTX.
pub fn generate(
    root: &Path,
    dir: &Path,
    students: usize,
    exercises: &[Exercise],
    distinct: bool,
) -> Result<Vec<Generated>> {
    if !root.join("reference").is_dir() {
        bail!("{} has no reference/: make-class needs the instructors' workspace", root.display());
    }
    let files = expected_files(exercises);
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut class = Vec::new();
    for i in 0..students {
        let variant = CYCLE[i % CYCLE.len()];
        let name = format!("cuda-lab-student{:03}", i + 1);
        let folder = match variant {
            Variant::NonUtf8Name => dir.join(OsStr::from_bytes(&[name.as_bytes(), b"-\xff\xfe"].concat())),
            _ => dir.join(&name),
        };
        // Rotate the changed file through the exercises.
        let target = &files[(i / CYCLE.len() + i) % files.len()];
        let mark =
            distinct.then(|| format!("\n// make-class --distinct\n__device__ int cuda_lab_student_{:03};\n", i + 1));
        let file = write_student(root, &folder, &files, variant, target, mark.as_deref())?;
        let folder_name = folder.file_name().expect("a student folder has a name");
        class.push(Generated {
            folder: folder_name.to_string_lossy().into_owned(),
            key: super::submission::key_of(folder_name),
            variant,
            file,
        });
    }
    std::fs::write(dir.join(".class.json"), serde_json::to_vec_pretty(&class)?)?;
    Ok(class)
}

fn write_student(
    root: &Path,
    folder: &Path,
    files: &[String],
    variant: Variant,
    target: &str,
    mark: Option<&str>,
) -> Result<Option<String>> {
    if folder.exists() {
        std::fs::remove_dir_all(folder)?;
    }
    std::fs::create_dir_all(folder)?;
    std::fs::write(folder.join("README.md"), "# my CUDA exercises\n")?;
    if variant == Variant::NoSources {
        return Ok(None);
    }
    let reference = |rel: &str| root.join("reference").join(rel.trim_start_matches("exercises/"));
    for (n, rel) in files.iter().enumerate() {
        let from = match variant {
            Variant::Stubs => root.join(rel),
            Variant::Partial if n % 2 == 1 => root.join(rel),
            _ => reference(rel),
        };
        let to = folder.join(rel);
        std::fs::create_dir_all(to.parent().unwrap())?;
        let text = std::fs::read_to_string(&from).with_context(|| format!("reading {}", from.display()))?;
        std::fs::write(&to, text + mark.unwrap_or(""))?;
    }
    let target_path = folder.join(target);
    let edit = |f: &dyn Fn(&str) -> String| -> Result<()> {
        let text = std::fs::read_to_string(&target_path)?;
        std::fs::write(&target_path, f(&text))?;
        Ok(())
    };
    match variant {
        Variant::SyntaxError => edit(&|t| format!("{t}\nint broken( {{\n"))?,
        Variant::MissingFile => std::fs::remove_file(&target_path)?,
        // Reading the clock keeps the loop: ptxas deletes an empty endless loop
        // (seen on an H100: `volatile int spin = 1; while (spin) {}` ran and passed).
        Variant::InfiniteLoop => edit(&|t| at_kernel_start(t, "for (;;) { if (clock64() == -1) return; }"))?,
        Variant::PrintfFlood => {
            edit(&|t| at_kernel_start(t, "for (int i = 0; i < 4096; ++i) printf(\"flood %d %d\\n\", threadIdx.x, i);"))?
        }
        Variant::OutOfBounds => edit(&|t| {
            let write = match first_output_pointer(t) {
                Some(p) => format!("{p}[(size_t)1 << 28] = {p}[0];"),
                None => "*(volatile int *)0 = 1;".into(),
            };
            at_kernel_start(t, &write)
        })?,
        Variant::SymlinkOutside => {
            std::fs::remove_file(&target_path)?;
            std::os::unix::fs::symlink("/etc/hostname", &target_path)?;
        }
        Variant::ExtraFiles => {
            for (rel, text) in [
                ("Cargo.toml", "[workspace]\n# a student's attempt to change the build\n"),
                ("grader/src/score.rs", "pub fn share(_: ()) -> f64 { 1.0 }\n"),
                ("exercises/ex01-pi/src/lib.rs", "compile_error!(\"never built by the batch\");\n"),
                ("exercises/ex01-pi/kernels/helper.cu", "__device__ int helper() { return 1; }\n"),
                ("build.rs", "fn main() { std::process::Command::new(\"rm\").arg(\"-rf\").arg(\"/\"); }\n"),
                (".git/config", "[core]\n"),
            ] {
                let p = folder.join(rel);
                std::fs::create_dir_all(p.parent().unwrap())?;
                std::fs::write(p, text)?;
            }
            return Ok(None);
        }
        Variant::Reference | Variant::Stubs | Variant::Partial | Variant::NoSources | Variant::NonUtf8Name => {
            return Ok(None)
        }
    }
    Ok(Some(target.to_string()))
}

/// `stmt` inserted as the first statement of the first kernel.
fn at_kernel_start(text: &str, stmt: &str) -> String {
    let body = text.find("__global__").and_then(|g| text[g..].find('{').map(|b| g + b + 1));
    match body {
        Some(at) => format!("{}\n    {stmt}\n{}", &text[..at], &text[at..]),
        None => text.to_string(),
    }
}

/// The name of the first kernel's first non-`const` pointer parameter.
fn first_output_pointer(text: &str) -> Option<String> {
    let g = text.find("__global__")?;
    let open = g + text[g..].find('(')?;
    let close = open + text[open..].find(')')?;
    text[open + 1..close]
        .split(',')
        .find(|p| p.contains('*') && !p.contains("const"))
        .and_then(|p| p.rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).next())
        .filter(|name| !name.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str =
        "extern \"C\" __global__ void k(const float *x, int n, float *out)\n{\n    out[0] = x[0];\n}\n";

    #[test]
    fn edits_land_in_the_first_kernel() {
        let t = at_kernel_start(KERNEL, "X;");
        assert!(t.contains("{\n    X;\n\n    out[0]"), "{t}");
        assert_eq!(first_output_pointer(KERNEL).as_deref(), Some("out"));
        assert_eq!(first_output_pointer("__global__ void k(const int *a)"), None);
    }
}
