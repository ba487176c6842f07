//! The second compiler: clang's CUDA mode, for machines NVIDIA ships no NVRTC
//! for (macOS) or where NVRTC cannot be installed, and on request
//! (`CUDA_LAB_COMPILER=clang`).
//!
//! Everything comes from pip, like NVRTC, into the grader's cache:
//! - the `ziglang` wheel carries a whole clang with the NVPTX back end
//!   (`zig clang ...`), and libc++/glibc headers for the host side that
//!   clang's CUDA mode parses too;
//! - clang's CUDA wrapper headers (`__clang_cuda_runtime_wrapper.h`,
//!   `cuda_wrappers/`) are not in it: the `clang-tidy` wheel of the same clang
//!   version ships them, as its resource folder;
//! - `--cuda-path` is a CUDA layout built from NVIDIA's header wheels (plain
//!   files whatever the OS, so installed with `--platform manylinux2014_x86_64`
//!   on a Mac too): `include/`, `nvvm/libdevice/libdevice.10.bc`, a
//!   `version.json`, and the empty `curand_mtgp32_kernel.h` the wrapper includes.
//!
//! The host side is always parsed as `x86_64-linux-gnu` against those
//! headers (never the machine's own), so the PTX is the same on every machine.
//! The output is then made to read as NVRTC's does: the temporary file's name
//! becomes the display path, and `.loc` directives that point into a header
//! (an inlined `atomicAdd`, `threadIdx.x`) point at the student's line they
//! were inlined into (see [`student_locs`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use crate::diagnostics::{self, cap_log, LogContext};
use crate::process::output_with_timeout;
use crate::provision::{self, Bundle};
use crate::{jit_rules, BuildError, CompileOptions, Diagnostic, Ptx, Severity, SourceFile};

/// The clang inside the ziglang wheel, and the wrapper headers of the same
/// clang release (measured: `zig clang --version` says "clang version 22.1.8").
pub(crate) const CLANG: Bundle = Bundle {
    dir: "clang-22.1.8-zig-0.17.1",
    what: "clang 22 (LLVM's CUDA compiler, from the ziglang and clang-tidy wheels)",
    packages: &["ziglang==0.17.1", "clang-tidy==22.1.8"],
    proof: ZIG,
    // clang-tidy itself (the binary) is not needed, only its resource headers.
    prune: &["clang_tidy/data/bin"],
    pip_args: &[],
    finish: Some(prune_clang),
};

/// CUDA 12.9's headers and libdevice, laid out as a toolkit for `--cuda-path`.
pub(crate) const CLANG_CUDA: Bundle = Bundle {
    dir: "clang-cuda-12.9",
    what: "CUDA 12.9's headers and libdevice (for clang)",
    packages: &[
        "nvidia-cuda-runtime-cu12==12.9.79",
        "nvidia-cuda-cccl-cu12==12.9.27",
        "nvidia-cuda-nvcc-cu12==12.9.86",
    ],
    proof: "cuda/version.json",
    prune: &[],
    // Plain headers and bitcode: the Linux wheels serve every OS.
    pip_args: &["--platform", "manylinux2014_x86_64", "--only-binary=:all:"],
    finish: Some(cuda_layout),
};

#[cfg(windows)]
const ZIG: &str = "ziglang/zig.exe";
#[cfg(not(windows))]
const ZIG: &str = "ziglang/zig";

/// The clang release of [`CLANG`]: its resource folder's name.
const CLANG_MAJOR: &str = "22";
const RESOURCE: &str = "clang_tidy/data/lib/clang";
/// What of zig's `lib/` the CUDA front end reads: libc++ and glibc headers.
const ZIG_LIB_KEEP: &[&str] = &[
    "libcxx/include",
    "libcxxabi/include",
    "libc/include/x86-linux-gnu",
    "libc/include/generic-glibc",
    "libc/include/x86-linux-any",
    "libc/include/any-linux-any",
];

/// A compile of a kernel file takes a second; this only stops a runaway template.
const COMPILE_TIMEOUT: Duration = Duration::from_secs(300);
const INPUT: &str = "cuda-lab-input.cu";
const OUTPUT: &str = "cuda-lab-output.ptx";
const HOST_OUTPUT: &str = "cuda-lab-host.ll";

/// The installed pieces.
#[derive(Debug)]
pub(crate) struct Install {
    pub zig: PathBuf,
    resource: PathBuf,
    zig_lib: PathBuf,
    cuda: PathBuf,
    pub version: String,
}

static INSTALL: OnceLock<Result<Install, String>> = OnceLock::new();

/// Finds (installing on first use) clang and its CUDA layout, once per process.
pub(crate) fn load() -> Result<&'static Install, BuildError> {
    INSTALL.get_or_init(find).as_ref().map_err(|hint| BuildError::NotFound {
        what: "clang (the second CUDA compiler, LLVM's)".into(),
        searched: provision::cache_root().into_iter().collect(),
        hint: hint.clone(),
    })
}

fn find() -> Result<Install, String> {
    let clang = provision::ensure(&CLANG).map_err(|f| f.message(&CLANG))?;
    let cuda = provision::ensure(&CLANG_CUDA).map_err(|f| f.message(&CLANG_CUDA))?;
    let zig = clang.join(ZIG);
    let out = output_with_timeout(Command::new(&zig).args(["clang", "--version"]), Duration::from_secs(60))
        .map_err(|e| format!("{} could not be run: {e}", zig.display()))?
        .ok_or_else(|| format!("{} clang --version did not answer in 60 s", zig.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = parse_version(&text)
        .ok_or_else(|| format!("{} clang --version did not say which release it is: {}", zig.display(), text.trim()))?;
    Ok(Install {
        zig,
        resource: clang.join(RESOURCE).join(CLANG_MAJOR),
        zig_lib: clang.join("ziglang").join("lib"),
        cuda: cuda.join("cuda"),
        version,
    })
}

/// "clang version 22.1.8 (...)" → "clang 22.1.8".
fn parse_version(text: &str) -> Option<String> {
    let rest = &text[text.find("clang version ")? + "clang version ".len()..];
    let v: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    (!v.is_empty()).then(|| format!("clang {v}"))
}

/// Where the device headers come from (for the grades JSON).
pub(crate) fn header_origin(install: &Install) -> String {
    format!("clang's CUDA 12.9 layout {}", install.cuda.join("include").display())
}

/// What one run of clang makes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Side {
    /// The PTX.
    Device,
    /// The host side's LLVM IR with debug info, for [`jit_rules`].
    Host,
}

pub(crate) fn args(install: &Install, opts: &CompileOptions, side: Side) -> Vec<String> {
    let d = |p: &Path| p.display().to_string();
    let res = &install.resource;
    let lib = &install.zig_lib;
    let mut a: Vec<String> = vec![
        "clang".into(),
        "-target".into(),
        "x86_64-linux-gnu".into(),
        "-x".into(),
        "cuda".into(),
        if side == Side::Device { "--cuda-device-only" } else { "--cuda-host-only" }.into(),
        format!("--cuda-gpu-arch=sm_{}{}", opts.arch.0, opts.arch.1),
        format!("--cuda-path={}", d(&install.cuda)),
        "-resource-dir".into(),
        d(res),
        // The machine's own headers never take part: the same PTX everywhere.
        "-nostdlibinc".into(),
        "-nostdinc++".into(),
    ];
    // clang's <cmath> & co. wrappers must come before libc++'s.
    let includes = [
        res.join("include").join("cuda_wrappers"),
        lib.join("libcxx/include"),
        lib.join("libcxxabi/include"),
        res.join("include"),
        lib.join("libc/include/x86-linux-gnu"),
        lib.join("libc/include/generic-glibc"),
        lib.join("libc/include/x86-linux-any"),
        lib.join("libc/include/any-linux-any"),
    ];
    for i in includes {
        a.push("-isystem".into());
        a.push(d(&i));
    }
    // What zig itself defines for libc++ on glibc 2.28; libc++ on x86 is
    // refused by CUDA's host_defines.h unless asked for (only host code sees it).
    for def in [
        "__GLIBC_MINOR__=28",
        "_LIBCPP_HAS_MUSL_LIBC=0",
        "_LIBCPP_ABI_VERSION=1",
        "_LIBCPP_ABI_NAMESPACE=__1",
        "_LIBCPP_HAS_THREADS=1",
        "_LIBCPP_HAS_MONOTONIC_CLOCK",
        "_LIBCPP_HAS_TERMINAL",
        "_LIBCXXABI_DISABLE_VISIBILITY_ANNOTATIONS",
        "_LIBCPP_DISABLE_VISIBILITY_ANNOTATIONS",
        "_LIBCPP_HAS_VENDOR_AVAILABILITY_ANNOTATIONS=0",
        "_LIBCPP_HAS_FILESYSTEM=1",
        "_LIBCPP_HAS_RANDOM_DEVICE",
        "_LIBCPP_HAS_LOCALIZATION",
        "_LIBCPP_HAS_UNICODE",
        "_LIBCPP_HAS_WIDE_CHARACTERS",
        "_LIBCPP_HAS_NO_STD_MODULES",
        "_LIBCPP_PSTL_BACKEND_SERIAL",
        "_LIBCPP_HARDENING_MODE=_LIBCPP_HARDENING_MODE_NONE",
        "_LIBCPP_ASSERTION_SEMANTIC_DEFAULT=_LIBCPP_ASSERTION_SEMANTIC_IGNORE",
        "_ALLOW_UNSUPPORTED_LIBCPP",
    ] {
        a.push(format!("-D{def}"));
    }
    match side {
        Side::Device => a.extend(["-O3", "-S"].map(String::from)),
        Side::Host => a.extend(["-O0", "-S", "-emit-llvm", "-g"].map(String::from)),
    }
    a.extend(
        [
            "-std=c++17",
            // CUDA 12.9 is newer than clang's list of tested releases; it works.
            "-Wno-unknown-cuda-version",
            "-fno-color-diagnostics",
            "-fno-caret-diagnostics",
            "-fno-diagnostics-show-option",
            // A `switch` as compare-and-branch, as NVRTC emits it, not a
            // `brx.idx` jump table (which ptx-sim does not run).
            "-fno-jump-tables",
        ]
        .map(String::from),
    );
    if opts.line_info && side == Side::Device {
        a.push("-gline-tables-only".into());
    }
    a.extend(opts.extra.iter().cloned());
    let output = if side == Side::Device { OUTPUT } else { HOST_OUTPUT };
    a.extend(["-o".into(), output.into(), INPUT.into()]);
    a
}

fn run(install: &Install, dir: &Path, opts: &CompileOptions, side: Side, display: &str) -> Result<Output, BuildError> {
    let mut cmd = Command::new(&install.zig);
    cmd.current_dir(dir).args(args(install, opts, side));
    // Include paths from the environment would reach past `-nostdlibinc`.
    for var in ["CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "CCC_OVERRIDE_OPTIONS"] {
        cmd.env_remove(var);
    }
    output_with_timeout(&mut cmd, COMPILE_TIMEOUT)
        .map_err(|error| BuildError::Io { context: "clang: could not run clang".into(), error })?
        .ok_or_else(|| {
            BuildError::Other(format!("clang did not finish compiling `{display}` in {} s", COMPILE_TIMEOUT.as_secs()))
        })
}

/// What NVRTC would refuse in a file clang compiled: host code (see [`jit_rules`]).
fn jit_errors(install: &Install, dir: &Path, opts: &CompileOptions, src: &SourceFile, ptx: &str) -> Vec<Diagnostic> {
    let display = src.display_path.as_str();
    let calls = jit_rules::runtime_calls(ptx, display, &src.text);
    let Ok(out) = run(install, dir, opts, Side::Host, display) else { return calls };
    let ir = std::fs::read_to_string(dir.join(HOST_OUTPUT)).ok().filter(|_| out.status.success());
    let mut errors = match ir {
        Some(ir) => jit_rules::host_definitions(&ir, INPUT, ptx, display, &src.text),
        None => {
            // Only host code fails on the host side alone (a host function calling a
            // `__device__` one): NVRTC refuses that code too. Its errors in the
            // student's file are reported; anything else leaves the PTX standing.
            let log = String::from_utf8_lossy(&out.stderr).into_owned();
            let input_abs = dir.join(INPUT).display().to_string();
            let cx = LogContext { aliases: &[&input_abs, INPUT], display_path: display, source: &src.text };
            let host = char_columns(diagnostics::parse_log(&log, &cx), display, &src.text);
            if host.iter().any(|d| d.severity == Severity::Error && d.file == display) {
                host
            } else {
                Vec::new()
            }
        }
    };
    errors.extend(calls);
    errors
}

pub(crate) fn compile(install: &Install, src: &SourceFile, opts: &CompileOptions) -> Result<Ptx, BuildError> {
    let display = src.display_path.as_str();
    let io = |what: &str| {
        let what = what.to_string();
        move |error| BuildError::Io { context: format!("clang: could not {what}"), error }
    };
    let tmp = tempfile::Builder::new().prefix("ptx-build-").tempdir().map_err(io("create a temporary folder"))?;
    let input = tmp.path().join(INPUT);
    std::fs::write(&input, with_defines(&src.text, opts)).map_err(io("write the source to a temporary file"))?;
    let out = run(install, tmp.path(), opts, Side::Device, display)?;
    let input_abs = input.display().to_string();
    let input_real = std::fs::canonicalize(&input).map(|p| p.display().to_string()).unwrap_or(input_abs.clone());
    let rename = |text: &str| crate::nvcc::rename_input(text, &[&input_abs, &input_real], INPUT, display);
    let log = rename(&format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout)));
    let cx = LogContext { aliases: &[&input_abs, &input_real, INPUT], display_path: display, source: &src.text };
    let diags = char_columns(diagnostics::parse_log(&log, &cx), display, &src.text);
    if out.status.success() {
        let ptx = std::fs::read_to_string(tmp.path().join(OUTPUT)).map_err(io("read the PTX clang wrote"))?;
        let jit = jit_errors(install, tmp.path(), opts, src, &ptx);
        if !jit.is_empty() {
            let log = jit.iter().map(|d| format!("{d}\n")).collect::<String>();
            return Err(BuildError::Compile { file: display.into(), diagnostics: jit, log });
        }
        let ptx = student_locs(&rename(&ptx), display);
        return Ok(Ptx { text: ptx, diagnostics: diags, from_cache: false, compiler: install.version.clone() });
    }
    if diags.iter().any(|d| d.severity == Severity::Error) {
        return Err(BuildError::Compile { file: display.into(), diagnostics: diags, log: cap_log(&log) });
    }
    Err(BuildError::Other(format!("clang failed ({}) on `{display}`: {}", out.status, cap_log(log.trim()))))
}

/// The prelude (prelude.rs) and the defines, at the top of the source rather
/// than on the command line:
/// there they would reach into CUDA's headers, which clang's wrapper includes
/// first (`-DN=4` breaks `cuda.h`'s parameters named `N`; NVRTC's built-in
/// headers never see them). `#line` keeps the student's line numbers.
fn with_defines(text: &str, opts: &CompileOptions) -> String {
    // The prelude (INFINITY, FLT_MAX, ...: prelude.rs) first, then the defines.
    let mut out: String = crate::prelude::TEXT.to_string();
    out += &opts
        .defines
        .iter()
        .map(|(k, v)| if v.is_empty() { format!("#define {k} 1\n") } else { format!("#define {k} {v}\n") })
        .collect::<String>();
    out += &format!("#line 1 \"{INPUT}\"\n");
    out + text
}

/// clang counts columns in bytes; the student's editor (and NVRTC's caret)
/// in characters.
fn char_columns(mut diags: Vec<Diagnostic>, display: &str, source: &str) -> Vec<Diagnostic> {
    for d in diags.iter_mut().filter(|d| d.file == display) {
        let (Some(line), Some(col)) = (d.line, d.column) else { continue };
        let Some(text) = source.split('\n').nth(line as usize - 1) else { continue };
        let mut byte = (col as usize - 1).min(text.len());
        while !text.is_char_boundary(byte) {
            byte -= 1;
        }
        d.column = Some(text[..byte].chars().count() as u32 + 1);
    }
    diags
}

/// LLVM gives an inlined call the header's line (`.loc 3 547 10` for the
/// `atom` of an `atomicAdd`), and names the student's line it was inlined
/// into only in the comment after it:
/// `// .../__clang_cuda_device_functions.h:547:10 @[ kernels/pi.cu:7:13 ]`.
/// NVRTC names the student's line; so do these, rewritten to the first
/// location of that chain in the student's file.
pub(crate) fn student_locs(ptx: &str, display: &str) -> String {
    let quoted = format!("\"{display}\"");
    let Some(student) = ptx.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix(".file")?;
        let (num, name) = rest.trim_start().split_once(char::is_whitespace)?;
        name.trim().starts_with(&quoted).then(|| num.trim().to_string())
    }) else {
        return ptx.to_string();
    };
    let needle = format!("{display}:");
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        out.push_str(&rewrite_loc(line, &student, &needle).unwrap_or_else(|| line.to_string()));
    }
    out
}

fn rewrite_loc(line: &str, student: &str, needle: &str) -> Option<String> {
    let body = line.trim_start().strip_prefix(".loc")?;
    let (directive, comment) = body.split_once("//")?;
    let mut fields = directive.split_whitespace();
    if fields.next()? == student {
        return None;
    }
    let at = comment.find(needle)? + needle.len();
    let tail = &comment[at..];
    let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let n = digits(tail);
    let src_line: u32 = tail[..n].parse().ok()?;
    let col = tail[n..].strip_prefix(':').map(|c| &c[..digits(c)]).filter(|c| !c.is_empty()).unwrap_or("0");
    let indent = &line[..line.len() - line.trim_start().len()];
    let newline = if line.ends_with('\n') { "\n" } else { "" };
    Some(format!("{indent}.loc\t{student} {src_line} {col}\t//{}{newline}", comment.trim_end_matches('\n')))
}

/// Keeps only what the CUDA front end reads: zig's headers, clang-tidy's
/// resource headers (about 60 MB of the 550 MB the wheels unpack to).
fn prune_clang(root: &Path) -> std::io::Result<()> {
    keep_only(&root.join("ziglang").join("lib"), ZIG_LIB_KEEP)?;
    let res = root.join(RESOURCE);
    keep_only(&root.join("clang_tidy"), &["data/lib/clang"])?;
    if !res.join(CLANG_MAJOR).join("include").join("__clang_cuda_runtime_wrapper.h").is_file() {
        return Err(std::io::Error::other(format!(
            "clang-tidy's wheel has no {}/{CLANG_MAJOR}/include/__clang_cuda_runtime_wrapper.h",
            RESOURCE
        )));
    }
    Ok(())
}

/// Removes everything under `base` except the relative paths `keep`.
fn keep_only(base: &Path, keep: &[&str]) -> std::io::Result<()> {
    fn walk(dir: &Path, rel: &str, keep: &[&str]) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let r = if rel.is_empty() { name } else { format!("{rel}/{name}") };
            if keep.contains(&r.as_str()) {
                continue;
            }
            let path = entry.path();
            if keep.iter().any(|k| k.starts_with(&format!("{r}/"))) && path.is_dir() {
                walk(&path, &r, keep)?;
            } else if path.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
        Ok(())
    }
    walk(base, "", keep)
}

/// NVIDIA's wheels → `cuda/{include,nvvm/libdevice,bin}` and `cuda/version.json`.
fn cuda_layout(root: &Path) -> std::io::Result<()> {
    let nv = root.join("nvidia");
    let cuda = root.join("cuda");
    let include = cuda.join("include");
    std::fs::create_dir_all(&include)?;
    for wheel in ["cuda_runtime", "cuda_cccl", "cuda_nvcc"] {
        for entry in std::fs::read_dir(nv.join(wheel).join("include"))? {
            let entry = entry?;
            std::fs::rename(entry.path(), include.join(entry.file_name()))?;
        }
    }
    // Included by clang's wrapper; cuRAND is not part of any exercise.
    std::fs::write(include.join("curand_mtgp32_kernel.h"), b"")?;
    let libdevice = cuda.join("nvvm").join("libdevice");
    std::fs::create_dir_all(&libdevice)?;
    std::fs::rename(nv.join("cuda_nvcc/nvvm/libdevice/libdevice.10.bc"), libdevice.join("libdevice.10.bc"))?;
    // clang takes a folder for a CUDA installation only with a `bin/`.
    std::fs::create_dir_all(cuda.join("bin"))?;
    std::fs::write(cuda.join("version.json"), b"{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"12.9.1\"}}\n")?;
    std::fs::remove_dir_all(&nv)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_from_clang_output() {
        let out =
            "clang version 22.1.8 (https://github.com/ziglang/zig-bootstrap abc)\nTarget: x86_64-unknown-linux-musl\n";
        assert_eq!(parse_version(out).as_deref(), Some("clang 22.1.8"));
        assert_eq!(parse_version("zig 0.17"), None);
    }

    #[test]
    fn inlined_header_lines_point_at_the_students_line() {
        let ptx = "\t.file\t1 \"kernels/pi.cu\"\n\t.file\t3 \"/c/__clang_cuda_device_functions.h\"\n\
                   \t.loc\t1 6 39                          // kernels/pi.cu:6:39\n\
                   \t.loc\t3 547 10                        // /c/__clang_cuda_device_functions.h:547:10 @[ /c/device_atomic_functions.hpp:112:10 @[ kernels/pi.cu:7:13 ] ]\n\
                   \tatom.global.add.u32 \t%r11, [%rd3], 1;\n\t.loc\t3 9 1\n";
        let out = student_locs(ptx, "kernels/pi.cu");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[2], ptx.lines().nth(2).unwrap(), "the student's own lines stay");
        assert!(
            lines[3].starts_with("\t.loc\t1 7 13\t// /c/__clang_cuda_device_functions.h:547:10 @["),
            "{}",
            lines[3]
        );
        assert_eq!(lines[5], "\t.loc\t3 9 1", "no chain into the student's file: left as it is");
        // Without a .file for the student's file, nothing changes.
        assert_eq!(student_locs(ptx, "other.cu"), ptx);
    }

    #[test]
    fn byte_columns_become_character_columns() {
        let src = "a\n/* é */ x = 1;\n";
        let d = crate::Diagnostic {
            file: "k.cu".into(),
            line: Some(2),
            column: Some(10),
            severity: Severity::Error,
            message: "m".into(),
        };
        let out = char_columns(vec![d.clone(), crate::Diagnostic { file: "h.h".into(), ..d }], "k.cu", src);
        assert_eq!(out[0].column, Some(9));
        assert_eq!(src.lines().nth(1).unwrap().chars().nth(8), Some('x'));
        assert_eq!(out[1].column, Some(10), "other files keep clang's column");
    }

    #[test]
    fn defines_go_into_the_source_keeping_its_lines() {
        let o = CompileOptions {
            defines: vec![("N".into(), "4".into()), ("F".into(), String::new())],
            ..Default::default()
        };
        let prelude = crate::prelude::TEXT;
        assert_eq!(with_defines("x\n", &o), format!("{prelude}#define N 4\n#define F 1\n#line 1 \"{INPUT}\"\nx\n"));
        assert_eq!(with_defines("x\n", &CompileOptions::default()), format!("{prelude}#line 1 \"{INPUT}\"\nx\n"));
    }

    #[test]
    fn keep_only_keeps_the_named_paths() {
        let t = tempfile::tempdir().unwrap();
        for f in ["a/b/c.h", "a/b2/d.h", "a/e.h", "f/g.h"] {
            let p = t.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, b"").unwrap();
        }
        keep_only(t.path(), &["a/b", "f"]).unwrap();
        assert!(t.path().join("a/b/c.h").is_file() && t.path().join("f/g.h").is_file());
        assert!(!t.path().join("a/b2").exists() && !t.path().join("a/e.h").exists());
    }

    #[test]
    fn arguments_name_the_arch_line_info_and_defines() {
        let i = Install {
            zig: "/z/zig".into(),
            resource: "/r".into(),
            zig_lib: "/z/lib".into(),
            cuda: "/c".into(),
            version: "clang 22.1.8".into(),
        };
        let o = CompileOptions {
            arch: (9, 0),
            line_info: true,
            defines: vec![("N".into(), "4".into())],
            ..Default::default()
        };
        let a = args(&i, &o, Side::Device);
        assert_eq!(a[0], "clang");
        for want in ["--cuda-gpu-arch=sm_90", "--cuda-path=/c", "-gline-tables-only", "-nostdlibinc"] {
            assert!(a.iter().any(|x| x == want), "{want}: {a:?}");
        }
        assert!(a.ends_with(&["-o".into(), OUTPUT.into(), INPUT.into()]));
        assert!(!args(&i, &CompileOptions::default(), Side::Device).iter().any(|x| x.starts_with("-g")));
        let h = args(&i, &o, Side::Host);
        assert!(h.iter().any(|x| x == "--cuda-host-only") && h.iter().any(|x| x == "-emit-llvm"), "{h:?}");
        assert!(!h.iter().any(|x| x == "-gline-tables-only"));
    }
}
