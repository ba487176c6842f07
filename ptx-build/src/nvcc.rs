//! The nvcc alternative: `nvcc -ptx` on a copy of the source in a temporary
//! folder. Its messages name that copy; they are rewritten to the display path.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::diagnostics::{self, cap_log, LogContext};
use crate::process::output_with_timeout;
use crate::{BuildError, CompileOptions, Ptx, SourceFile};

/// A kernel file compiles in seconds; this only stops a runaway template.
const COMPILE_TIMEOUT: Duration = Duration::from_secs(300);
const INPUT: &str = "cuda-lab-input.cu";
const OUTPUT: &str = "cuda-lab-output.ptx";

/// nvcc in CUDA_PATH, CUDA_HOME, /usr/local/cuda, then PATH.
pub(crate) fn locate() -> Result<PathBuf, BuildError> {
    let exe = format!("nvcc{}", std::env::consts::EXE_SUFFIX);
    let mut dirs = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(Path::new(&root).join("bin"));
        }
    }
    dirs.push("/usr/local/cuda/bin".into());
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p).filter(|d| !d.as_os_str().is_empty()));
    }
    dirs.dedup();
    for d in &dirs {
        let p = d.join(&exe);
        if is_executable(&p) {
            return Ok(p);
        }
    }
    Err(BuildError::NotFound {
        what: "nvcc (the CUDA compiler driver)".into(),
        searched: dirs,
        hint: "Install the CUDA toolkit and set CUDA_PATH to its folder, or unset CUDA_LAB_COMPILER to use NVRTC \
               (`python3 -m pip install nvidia-cuda-nvrtc-cu12` is enough for that)."
            .into(),
    })
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// "nvcc 13.0", from `nvcc --version`.
pub(crate) fn version(nvcc: &Path) -> Result<String, BuildError> {
    let out = output_with_timeout(Command::new(nvcc).arg("--version"), Duration::from_secs(30))
        .map_err(|error| BuildError::Io { context: format!("could not run {}", nvcc.display()), error })?
        .ok_or_else(|| BuildError::Other(format!("{} --version did not finish in 30 s", nvcc.display())))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_version(&text).ok_or_else(|| {
        BuildError::Other(format!(
            "{} --version did not say which release it is (a broken install?): {}{}",
            nvcc.display(),
            text.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    })
}

/// "Cuda compilation tools, release 13.0, V13.0.48" → "nvcc 13.0".
pub(crate) fn parse_version(text: &str) -> Option<String> {
    let rest = &text[text.find("release ")? + "release ".len()..];
    let v: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    (!v.is_empty()).then(|| format!("nvcc {v}"))
}

pub(crate) fn args(opts: &CompileOptions) -> Vec<String> {
    let mut a = vec!["-ptx".into(), format!("-arch={}", opts.arch_name()), "-std=c++17".into()];
    if opts.line_info {
        a.push("-lineinfo".into());
    }
    a.extend(opts.define_args());
    a.extend(opts.extra.iter().cloned());
    a.extend(["-o".into(), OUTPUT.into(), INPUT.into()]);
    a
}

pub(crate) fn compile(nvcc: &Path, src: &SourceFile, opts: &CompileOptions, version: &str) -> Result<Ptx, BuildError> {
    let display = src.display_path.as_str();
    let io = |what: &str| {
        let what = what.to_string();
        move |error| BuildError::Io { context: format!("nvcc: could not {what}"), error }
    };
    let tmp = tempfile::Builder::new().prefix("ptx-build-").tempdir().map_err(io("create a temporary folder"))?;
    let input = tmp.path().join(INPUT);
    std::fs::write(&input, &src.text).map_err(io("write the source to a temporary file"))?;
    let out = output_with_timeout(Command::new(nvcc).current_dir(tmp.path()).args(args(opts)), COMPILE_TIMEOUT)
        .map_err(io("run nvcc"))?
        .ok_or_else(|| {
            BuildError::Other(format!("nvcc did not finish compiling `{display}` in {} s", COMPILE_TIMEOUT.as_secs()))
        })?;
    // nvcc may print the path as given or with symlinks resolved.
    let input_abs = input.display().to_string();
    let input_real = std::fs::canonicalize(&input).map(|p| p.display().to_string()).unwrap_or(input_abs.clone());
    let rename = |text: &str| rename(text, &[&input_abs, &input_real], display);
    let log = rename(&format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout)));
    let cx = LogContext { aliases: &[&input_abs, &input_real, INPUT], display_path: display, source: &src.text };
    let diags = diagnostics::parse_log(&log, &cx);
    if out.status.success() {
        let ptx = std::fs::read_to_string(tmp.path().join(OUTPUT)).map_err(io("read the PTX nvcc wrote"))?;
        // `.file` directives (with -lineinfo) name the temporary copy.
        let ptx = rename(&ptx);
        return Ok(Ptx { text: ptx, diagnostics: diags, from_cache: false, compiler: version.into() });
    }
    if diags.iter().any(|d| d.severity == crate::Severity::Error) {
        return Err(BuildError::Compile { file: display.into(), diagnostics: diags, log: cap_log(&log) });
    }
    // No message about the source: nvcc itself failed (no host compiler, bad option, ...).
    Err(BuildError::Other(format!("nvcc failed ({}) on `{display}`: {}", out.status, cap_log(log.trim()))))
}

/// Replaces the temporary file's names (full paths first) with the display path.
fn rename(text: &str, full_paths: &[&str], display: &str) -> String {
    rename_input(text, full_paths, INPUT, display)
}

/// As [`rename`], for a compiler whose input file is called `input` (clang's too).
pub(crate) fn rename_input(text: &str, full_paths: &[&str], input: &str, display: &str) -> String {
    let mut out = text.to_string();
    for p in full_paths {
        out = out.replace(p, display);
    }
    out.replace(input, display)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_from_nvcc_output() {
        let out = "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n\
                   Built on Wed_Jul_16_07:30:01_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.48\n\
                   Build cuda_13.0.r13.0/compiler.36260728_0\n";
        assert_eq!(parse_version(out).as_deref(), Some("nvcc 13.0"));
        assert_eq!(parse_version("garbage"), None);
    }

    #[test]
    fn nvcc_arguments() {
        let o = CompileOptions { arch: (9, 0), line_info: true, ..CompileOptions::default() };
        assert_eq!(
            args(&o),
            ["-ptx", "-arch=compute_90", "-std=c++17", "-lineinfo", "-o", "cuda-lab-output.ptx", "cuda-lab-input.cu"]
        );
    }

    #[test]
    fn nvcc_messages_point_at_the_display_path() {
        let abs = "/tmp/ptx-build-XyZ/cuda-lab-input.cu";
        let raw = format!(
            "{abs}(4): error: identifier \"x\" is undefined\n      x = 1;\n      ^\n\n\
             cuda-lab-input.cu(2): warning #177-D: variable \"y\" was declared but never referenced\n\n\
             1 error detected in the compilation of \"{abs}\".\n"
        );
        let log = rename(&raw, &[abs, "/private/tmp/ptx-build-XyZ/cuda-lab-input.cu"], "kernels/pi.cu");
        assert!(!log.contains("cuda-lab-input") && !log.contains("/tmp/"), "{log}");
        let src = "a\nint y;\nb\n    x = 1;\n";
        let cx = LogContext { aliases: &[abs, INPUT], display_path: "kernels/pi.cu", source: src };
        let d = diagnostics::parse_log(&log, &cx);
        assert_eq!(d[0].to_string(), "kernels/pi.cu:4:5: error: identifier \"x\" is undefined");
        assert_eq!(d[1].to_string(), "kernels/pi.cu:2: warning: variable \"y\" was declared but never referenced");
        // Also without the textual rewrite, through the aliases alone.
        let d2 = diagnostics::parse_log(&raw, &cx);
        assert_eq!(d, d2);
    }

    #[test]
    fn a_fake_nvcc_is_run_in_a_temp_dir() {
        // A shell script standing in for nvcc: proves the plumbing (args, temp
        // file, log rewriting) without a CUDA toolkit.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let dir = tempfile::tempdir().unwrap();
            let fake = dir.path().join("nvcc");
            std::fs::write(
                &fake,
                "#!/bin/sh\nif grep -q bad cuda-lab-input.cu; then\n\
                 echo \"$PWD/cuda-lab-input.cu(1): error: this is bad\" >&2; exit 1; fi\n\
                 printf '.version 8.0\\n.target sm_75\\n// %s\\n' \"$*\" > cuda-lab-output.ptx\n",
            )
            .unwrap();
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
            let o = CompileOptions::default();
            let ok = compile(&fake, &SourceFile::from_text("k/a.cu", "good"), &o, "nvcc 0.0").unwrap();
            assert!(ok.text.contains("-arch=compute_75"), "{}", ok.text);
            assert_eq!(ok.compiler, "nvcc 0.0");
            let e = compile(&fake, &SourceFile::from_text("k/a.cu", "bad"), &o, "nvcc 0.0").unwrap_err();
            assert_eq!(e.to_string(), "k/a.cu:1: error: this is bad");
        }
    }
}
