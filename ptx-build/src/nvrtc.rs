//! NVRTC through cudarc: find the library, load it, compile.
//!
//! cudarc loads NVRTC by *name* (`libnvrtc.so`, `libnvrtc.so.12`, ...) and
//! panics when none loads. So we look for the file ourselves (toolkit, library
//! path, pip wheel), `dlopen` it by full path and keep it loaded: glibc then
//! answers cudarc's `dlopen("libnvrtc.so.12")` with the loaded library, whose
//! SONAME matches. Only then is cudarc called, and behind `catch_unwind`.

use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use cudarc::nvrtc::sys::{self, nvrtcResult};

use crate::diagnostics::{self, cap_log, LogContext};
use crate::toolkit::DeviceIncludes;
use crate::{headers, provision, BuildError, CompileOptions, Ptx, SourceFile};

const WHAT: &str = "NVRTC (the CUDA runtime compiler)";
const INSTALL_HINT: &str = "Install the CUDA toolkit, or run `python3 -m pip install nvidia-cuda-nvrtc-cu12`, \
                            or set CUDA_PATH to the folder the CUDA toolkit is installed in.";

/// The outcome of finding and loading NVRTC, once per process (a loaded
/// library cannot be swapped for another anyway).
struct Loaded {
    version: String,
    /// The file cudarc ended up using, where we know it.
    path: Option<PathBuf>,
}

#[derive(Clone)]
struct Missing {
    searched: Vec<PathBuf>,
    hint: String,
}

static LOADED: OnceLock<Result<Loaded, Missing>> = OnceLock::new();

/// Finds and loads NVRTC (once); its version ("NVRTC 12.9") and file.
pub(crate) fn load() -> Result<(String, Option<PathBuf>), BuildError> {
    match LOADED.get_or_init(find_and_load) {
        Ok(l) => Ok((l.version.clone(), l.path.clone())),
        Err(m) => Err(BuildError::NotFound { what: WHAT.into(), searched: m.searched.clone(), hint: m.hint.clone() }),
    }
}

fn find_and_load() -> Result<Loaded, Missing> {
    if std::env::var(crate::NO_NVRTC_ENV).is_ok_and(|v| v.trim() == "1") {
        return Err(Missing {
            searched: Vec::new(),
            hint: format!(
                "{}=1 hides NVRTC from this process (to try what a machine without it, such as a Mac, does)",
                crate::NO_NVRTC_ENV
            ),
        });
    }
    let mut search = locate::Search::default();
    let mut problems = Vec::new();
    let mut unusable = None;
    while let Some(file) = search.next_candidate() {
        match preload::open(&file) {
            Ok(()) => match verify(Some(&file), &search.searched) {
                Ok(loaded) => return Ok(loaded),
                // Keep looking: a usable one may come later (e.g. a pip wheel
                // after a CUDA 13 toolkit).
                Err(m) => unusable = unusable.or(Some(m.hint)),
            },
            Err(e) => problems.push(format!("{} could not be loaded: {e}", file.display())),
        }
    }
    // Not in any folder we know: maybe the system linker finds it (ldconfig).
    if cudarc_can_load() {
        return verify(None, &search.searched);
    }
    // Nowhere at all, nor unusable: install it into our own cache (first run).
    if unusable.is_none() && problems.is_empty() {
        match provision::ensure(&provision::NVRTC) {
            Ok(dir) => {
                let file = dir.join(provision::NVRTC.proof);
                return match preload::open(&file) {
                    Ok(()) => verify(Some(&file), &search.searched),
                    Err(e) => Err(Missing {
                        searched: search.searched,
                        hint: format!("{} could not be loaded: {e}. {INSTALL_HINT}", file.display()),
                    }),
                };
            }
            Err(f) => return Err(Missing { searched: search.searched, hint: f.message(&provision::NVRTC) }),
        }
    }
    let mut hint = unusable.unwrap_or_else(|| INSTALL_HINT.to_string());
    for p in problems.iter().rev() {
        hint = format!("{p}. {hint}");
    }
    Err(Missing { searched: search.searched, hint })
}

fn cudarc_can_load() -> bool {
    // SAFETY: dlopen of a library's initialisers; the same call cudarc makes.
    catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

/// After a preload: can cudarc load it by name now, and which version is it?
fn verify(preloaded: Option<&Path>, searched: &[PathBuf]) -> Result<Loaded, Missing> {
    if !cudarc_can_load() {
        let file = preloaded.map(|p| p.display().to_string()).unwrap_or_default();
        let dir = preloaded.and_then(Path::parent).map(|p| p.display().to_string()).unwrap_or_default();
        let hint = format!(
            "Found {file}, but the CUDA bindings (cudarc) load NVRTC by the names libnvrtc.so, libnvrtc.so.12, \
             libnvrtc.so.11, ... and this file's name (SONAME) is not one of them. Install NVRTC 12 \
             (`python3 -m pip install nvidia-cuda-nvrtc-cu12`), or put a folder holding a `libnvrtc.so` link \
             to it on LD_LIBRARY_PATH (e.g. `export LD_LIBRARY_PATH={dir}:$LD_LIBRARY_PATH` if {dir} has one)."
        );
        return Err(Missing { searched: searched.to_vec(), hint });
    }
    let version = catch_unwind(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: plain out-parameters.
        let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
        (r == nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
    });
    match version {
        Ok(Some((major, minor))) => Ok(Loaded {
            version: format!("NVRTC {major}.{minor}"),
            path: preloaded.filter(|_| preload::cudarc_uses_preloaded()).map(Path::to_path_buf),
        }),
        _ => Err(Missing {
            searched: searched.to_vec(),
            hint: format!("NVRTC loaded but does not answer nvrtcVersion (a broken install?). {INSTALL_HINT}"),
        }),
    }
}

/// Where NVRTC may be, in order: CUDA_PATH, CUDA_HOME, /usr/local/cuda,
/// LD_LIBRARY_PATH, a conda env, pip wheels under Python's site-packages,
/// then the usual system folders.
mod locate {
    use super::*;

    #[derive(Default)]
    pub(super) struct Search {
        /// What to tell the student: folders that exist, and the toolkit roots
        /// we tried even where they do not.
        pub searched: Vec<PathBuf>,
        seen: Vec<PathBuf>,
        stage: usize,
        queue: Vec<PathBuf>,
    }

    impl Search {
        /// The next NVRTC library file to try (the expensive Python query only
        /// runs when the cheap places had none that loads).
        pub fn next_candidate(&mut self) -> Option<PathBuf> {
            loop {
                while !self.queue.is_empty() {
                    let dir = self.queue.remove(0);
                    if self.seen.contains(&dir) {
                        continue;
                    }
                    self.seen.push(dir.clone());
                    let shown = if dir.is_dir() { Some(dir.clone()) } else { toolkit_root(&dir) };
                    if let Some(shown) = shown.filter(|s| !self.searched.contains(s)) {
                        self.searched.push(shown);
                    }
                    if let Some(f) = library_in(&dir) {
                        return Some(f);
                    }
                }
                self.queue = match self.stage {
                    0 => toolkit_dirs(),
                    // What an earlier run installed (cheap: no Python to ask).
                    1 => provision::installed(&provision::NVRTC).into_iter().flat_map(|d| wheel_dirs(&d)).collect(),
                    2 => site_packages().iter().flat_map(|sp| wheel_dirs(sp)).collect(),
                    3 => system_dirs(),
                    _ => return None,
                };
                self.stage += 1;
            }
        }
    }

    /// `/usr/local/cuda` for `/usr/local/cuda/lib64` (also when it does not exist).
    fn toolkit_root(dir: &Path) -> Option<PathBuf> {
        let roots = ["CUDA_PATH", "CUDA_HOME"]
            .iter()
            .filter_map(|v| std::env::var_os(v).filter(|v| !v.is_empty()).map(PathBuf::from))
            .chain([PathBuf::from("/usr/local/cuda")]);
        roots.into_iter().find(|r| lib_dirs_of(r).iter().any(|d| d == dir))
    }

    fn lib_dirs_of(root: &Path) -> Vec<PathBuf> {
        let arch = if cfg!(target_arch = "aarch64") { "sbsa-linux" } else { "x86_64-linux" };
        vec![root.join("lib64"), root.join("lib"), root.join("targets").join(arch).join("lib")]
    }

    fn toolkit_dirs() -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for var in ["CUDA_PATH", "CUDA_HOME"] {
            if let Some(root) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                dirs.extend(lib_dirs_of(Path::new(&root)));
            }
        }
        dirs.extend(lib_dirs_of(Path::new("/usr/local/cuda")));
        if let Some(p) = std::env::var_os("LD_LIBRARY_PATH") {
            dirs.extend(std::env::split_paths(&p).filter(|d| !d.as_os_str().is_empty()));
        }
        if let Some(conda) = std::env::var_os("CONDA_PREFIX").filter(|v| !v.is_empty()) {
            dirs.push(Path::new(&conda).join("lib"));
        }
        dirs
    }

    fn system_dirs() -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> =
            ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/opt/cuda/lib64"]
                .iter()
                .map(PathBuf::from)
                .collect();
        // Versioned toolkits: /usr/local/cuda-12.9, ...
        for d in subdirs(Path::new("/usr/local"), "cuda-").into_iter().rev() {
            dirs.extend(lib_dirs_of(&d));
        }
        dirs
    }

    /// Folders of the NVRTC wheels: nvidia-cuda-nvrtc-cu12 and CUDA 13's layout.
    fn wheel_dirs(site: &Path) -> Vec<PathBuf> {
        let nv = site.join("nvidia");
        vec![nv.join("cuda_nvrtc").join("lib"), nv.join("cu13").join("lib"), nv.join("cu12").join("lib")]
    }

    /// Python's own answer first, then the usual places (pyenv, venvs, ~/.local).
    pub(super) fn site_packages() -> Vec<PathBuf> {
        let mut out = python_site_packages();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let mut prefixes: Vec<PathBuf> = Vec::new();
        for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
            if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                prefixes.push(v.into());
            }
        }
        if let Some(h) = &home {
            prefixes.push(h.join(".local"));
            prefixes.extend(subdirs(&h.join(".pyenv").join("versions"), ""));
        }
        prefixes.extend(["/usr/local", "/usr", "/opt/conda"].map(PathBuf::from));
        for prefix in prefixes {
            for py in subdirs(&prefix.join("lib"), "python3") {
                out.push(py.join("site-packages"));
                out.push(py.join("dist-packages"));
            }
        }
        out.push("/usr/lib/python3/dist-packages".into());
        out
    }

    fn python_site_packages() -> Vec<PathBuf> {
        const SCRIPT: &str = "import site, sys\n\
                              paths = list(getattr(site, 'getsitepackages', lambda: [])())\n\
                              paths.append(site.getusersitepackages())\n\
                              paths += [p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))]\n\
                              print('\\n'.join(paths))";
        let mut cmd = std::process::Command::new("python3");
        cmd.args(["-c", SCRIPT]);
        match crate::process::output_with_timeout(&mut cmd, Duration::from_secs(5)) {
            Ok(Some(out)) if out.status.success() => String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(PathBuf::from)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Sub-folders of `dir` whose names start with `prefix`, sorted.
    fn subdirs(dir: &Path, prefix: &str) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        out.sort();
        out
    }

    /// The NVRTC library in `dir`: the name cudarc asks for first, else any
    /// other major version (reported as found but unusable if cudarc cannot
    /// load it by name).
    pub(super) fn library_in(dir: &Path) -> Option<PathBuf> {
        let names: &[&str] = if cfg!(unix) { &["libnvrtc.so.12", "libnvrtc.so"] } else { &[] };
        for name in names {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
        let mut others: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with("libnvrtc.so.") && !n.contains("alt")
            })
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        others.sort();
        others.pop()
    }
}

/// Loading a library file by path, for the process's lifetime.
mod preload {
    use super::*;

    #[cfg(unix)]
    static KEPT: std::sync::Mutex<Vec<libloading::os::unix::Library>> = std::sync::Mutex::new(Vec::new());

    /// Loads `file` (and its builtins library beside it) and keeps it loaded.
    #[cfg(unix)]
    pub(super) fn open(file: &Path) -> Result<(), String> {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        // libnvrtc dlopens libnvrtc-builtins.so.X.Y by name when compiling;
        // loaded first, it is found by SONAME wherever it lives.
        if let Some(dir) = file.parent() {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with("libnvrtc-builtins.so") && !name.contains("alt") {
                    // SAFETY: NVRTC's own library; its initialisers are what NVRTC runs anyway.
                    if let Ok(lib) = unsafe { Library::open(Some(entry.path()), RTLD_NOW | RTLD_LOCAL) } {
                        kept.push(lib);
                    }
                }
            }
        }
        // SAFETY: as above.
        let lib = unsafe { Library::open(Some(file), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| e.to_string())?;
        kept.push(lib);
        Ok(())
    }

    #[cfg(not(unix))]
    pub(super) fn open(_file: &Path) -> Result<(), String> {
        Err("loading by path is only done on Unix; put NVRTC's folder on PATH".into())
    }

    /// Whether cudarc's NVRTC is the one we preloaded (and not another libnvrtc.so that the
    /// system linker found first): same address for the same symbol.
    #[cfg(unix)]
    pub(super) fn cudarc_uses_preloaded() -> bool {
        type F = unsafe extern "C" fn();
        let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        // The NVRTC library itself is pushed last.
        let Some(ours) = kept.last() else { return false };
        catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: only the symbols' addresses are compared; nothing is called.
            unsafe {
                let a = ours.get::<F>(b"nvrtcVersion").map(|s| *s as usize);
                let b = sys::culib().get::<F>(b"nvrtcVersion").map(|s| *s as usize);
                matches!((a, b), (Ok(a), Ok(b)) if a == b)
            }
        }))
        .unwrap_or(false)
    }

    #[cfg(not(unix))]
    pub(super) fn cudarc_uses_preloaded() -> bool {
        false
    }
}

/// The command line NVRTC gets.
pub(crate) fn args(opts: &CompileOptions) -> Vec<String> {
    let mut a = vec![format!("--gpu-architecture={}", opts.arch_name()), "--std=c++17".into()];
    // Exercise files include nothing from disk (see includes.rs); make NVRTC
    // agree by not searching the source's folder either.
    a.push(NO_SOURCE_INCLUDE.into());
    // INFINITY, FLT_MAX, INT_MAX & co. (prelude.rs), without moving a line.
    a.push(format!("--pre-include={}", crate::prelude::NAME));
    if opts.line_info {
        a.push("-lineinfo".into());
    }
    a.extend(opts.define_args());
    a.extend(opts.extra.iter().cloned());
    a
}

const NO_SOURCE_INCLUDE: &str = "--no-source-include";

enum Outcome {
    Compiled { ptx: String, log: String },
    Failed { log: String },
    BadOption { log: String },
    Broken(String),
}

pub(crate) fn compile(
    src: &SourceFile,
    opts: &CompileOptions,
    version: &str,
    device_includes: &dyn Fn() -> Result<DeviceIncludes, String>,
) -> Result<Ptx, BuildError> {
    let mut args = args(opts);
    if headers::uses_device_headers(&src.text) {
        let includes =
            device_includes().map_err(|why| BuildError::Other(format!("{}: error: {why}", src.display_path)))?;
        add_device_include_paths(&mut args, &includes);
    }
    let mut outcome = run(src, &args)?;
    if matches!(&outcome, Outcome::BadOption { log } if log.contains(NO_SOURCE_INCLUDE.trim_start_matches('-'))) {
        // An NVRTC older than the option: the include scan still applies.
        args.retain(|a| a != NO_SOURCE_INCLUDE);
        outcome = run(src, &args)?;
    }
    let display = src.display_path.as_str();
    let cx = LogContext { aliases: &[], display_path: display, source: &src.text };
    match outcome {
        Outcome::Compiled { ptx, log } => Ok(Ptx {
            text: ptx,
            diagnostics: diagnostics::parse_log(&log, &cx),
            from_cache: false,
            compiler: version.into(),
        }),
        Outcome::Failed { log } => {
            let diagnostics = diagnostics::ensure_error(diagnostics::parse_log(&log, &cx), display, &log);
            Err(BuildError::Compile { file: display.into(), diagnostics, log: cap_log(&log) })
        }
        Outcome::BadOption { log } => Err(bad_option(opts, version, &args, &log)),
        Outcome::Broken(why) => Err(BuildError::Other(format!("{version} failed on `{display}`: {why}"))),
    }
}

/// `cuda_fp16.h` & co. come from the toolkit's include folder, else the
/// provisioned headers (see `toolkit`), and only from there. Their own
/// `#include "details/x.h"` resolve relative to the header, which
/// `--no-source-include` forbids; dropping it is safe because the include
/// policy admits device headers only as `<name>`, which never searches the
/// student's folder.
fn add_device_include_paths(args: &mut Vec<String>, includes: &DeviceIncludes) {
    args.retain(|a| a != NO_SOURCE_INCLUDE);
    let at = args.len().min(2);
    for (i, inc) in includes.dirs.iter().enumerate() {
        args.insert(at + i, format!("--include-path={}", inc.display()));
    }
}

fn bad_option(opts: &CompileOptions, version: &str, args: &[String], log: &str) -> BuildError {
    let wanted = (opts.arch.0 * 10 + opts.arch.1) as i32;
    let supported = supported_archs();
    if !supported.is_empty() && !supported.contains(&wanted) {
        let list = supported.iter().map(|a| format!("compute_{a}")).collect::<Vec<_>>().join(", ");
        return BuildError::Other(format!(
            "{version} cannot compile for {} (it supports {list}). Use a CUDA version that supports this GPU, \
             or choose a supported architecture.",
            opts.arch_name()
        ));
    }
    BuildError::Other(format!("{version} rejected the options `{}`: {}", args.join(" "), log.trim()))
}

fn supported_archs() -> Vec<i32> {
    catch_unwind(|| {
        let mut n: c_int = 0;
        // SAFETY: out-parameter, then a buffer of the size NVRTC gave.
        unsafe {
            if sys::nvrtcGetNumSupportedArchs(&mut n) != nvrtcResult::NVRTC_SUCCESS || n <= 0 {
                return Vec::new();
            }
            let mut archs = vec![0 as c_int; n as usize];
            if sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) != nvrtcResult::NVRTC_SUCCESS {
                return Vec::new();
            }
            archs
        }
    })
    .unwrap_or_default()
}

/// Destroys the program however we leave.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram, destroyed once.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { sys::nvrtcDestroyProgram(&mut self.0) }));
    }
}

fn run(src: &SourceFile, args: &[String]) -> Result<Outcome, BuildError> {
    let text =
        CString::new(src.text.as_str()).map_err(|_| BuildError::Other("the source contains a NUL byte".into()))?;
    let name = CString::new(src.display_path.replace('\0', "?")).expect("NUL replaced");
    let prelude = [(crate::prelude::NAME, crate::prelude::TEXT)];
    let served = headers::ALLOWED.iter().map(|h| (h.name, h.text)).chain(prelude);
    let (names, texts): (Vec<&str>, Vec<&str>) = served.unzip();
    let header_texts: Vec<CString> = texts.iter().map(|t| CString::new(*t).expect("no NUL")).collect();
    let header_names: Vec<CString> = names.iter().map(|n| CString::new(*n).expect("no NUL")).collect();
    let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();
    let arg_c: Vec<CString> = args
        .iter()
        .map(|a| CString::new(a.as_str()))
        .collect::<Result<_, _>>()
        .map_err(|_| BuildError::Other("a compile option contains a NUL byte".into()))?;
    let arg_ptrs: Vec<*const c_char> = arg_c.iter().map(|c| c.as_ptr()).collect();

    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut raw: sys::nvrtcProgram = std::ptr::null_mut();
        // SAFETY: every pointer refers to a live CString of this function; the
        // counts match the arrays; the program is destroyed by `Program`.
        unsafe {
            let r = sys::nvrtcCreateProgram(
                &mut raw,
                text.as_ptr(),
                name.as_ptr(),
                text_ptrs.len() as c_int,
                text_ptrs.as_ptr(),
                name_ptrs.as_ptr(),
            );
            if r != nvrtcResult::NVRTC_SUCCESS {
                return Outcome::Broken(format!("nvrtcCreateProgram: {}", error_string(r)));
            }
            let prog = Program(raw);
            let r = sys::nvrtcCompileProgram(prog.0, arg_ptrs.len() as c_int, arg_ptrs.as_ptr());
            let log = read_string(prog.0, sys::nvrtcGetProgramLogSize, sys::nvrtcGetProgramLog).unwrap_or_default();
            match r {
                nvrtcResult::NVRTC_SUCCESS => match read_string(prog.0, sys::nvrtcGetPTXSize, sys::nvrtcGetPTX) {
                    Ok(ptx) => Outcome::Compiled { ptx, log },
                    Err(e) => Outcome::Broken(format!("nvrtcGetPTX: {}", error_string(e))),
                },
                nvrtcResult::NVRTC_ERROR_COMPILATION => Outcome::Failed { log },
                nvrtcResult::NVRTC_ERROR_INVALID_OPTION => Outcome::BadOption { log },
                other => Outcome::Broken(format!("{}: {}", error_string(other), log.trim())),
            }
        }
    }));
    outcome.map_err(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        BuildError::Other(format!("calling NVRTC failed: {why}"))
    })
}

type SizeFn = unsafe fn(sys::nvrtcProgram, *mut usize) -> nvrtcResult;
type ReadFn = unsafe fn(sys::nvrtcProgram, *mut c_char) -> nvrtcResult;

/// Reads the log or the PTX: NVRTC gives the size (with the final NUL), then the bytes.
unsafe fn read_string(prog: sys::nvrtcProgram, size: SizeFn, read: ReadFn) -> Result<String, nvrtcResult> {
    let mut n = 0usize;
    let r = size(prog, &mut n);
    if r != nvrtcResult::NVRTC_SUCCESS {
        return Err(r);
    }
    let mut buf = vec![0u8; n.max(1)];
    let r = read(prog, buf.as_mut_ptr().cast());
    if r != nvrtcResult::NVRTC_SUCCESS {
        return Err(r);
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    buf.truncate(end);
    Ok(String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

fn error_string(r: nvrtcResult) -> String {
    catch_unwind(|| {
        // SAFETY: NVRTC returns a static string.
        let p = unsafe { sys::nvrtcGetErrorString(r) };
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    })
    .ok()
    .flatten()
    .unwrap_or_else(|| format!("{r:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_passed_to_nvrtc() {
        let o = CompileOptions {
            arch: (8, 6),
            line_info: true,
            defines: vec![("N".into(), "256".into()), ("FAST".into(), String::new())],
            extra: vec!["--use_fast_math".into()],
            ..Default::default()
        };
        assert_eq!(
            args(&o),
            [
                "--gpu-architecture=compute_86",
                "--std=c++17",
                "--no-source-include",
                "--pre-include=cuda_lab_prelude.h",
                "-lineinfo",
                "-DN=256",
                "-DFAST",
                "--use_fast_math"
            ]
        );
        assert!(!args(&CompileOptions::default()).iter().any(|a| a.contains("default-device")));
    }

    #[test]
    fn library_in_prefers_the_name_cudarc_asks_for() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(locate::library_in(dir.path()), None);
        for n in ["libnvrtc.alt.so.12", "libnvrtc-builtins.so.13.0", "libnvrtc.so.13"] {
            std::fs::write(dir.path().join(n), b"").unwrap();
        }
        assert_eq!(locate::library_in(dir.path()), Some(dir.path().join("libnvrtc.so.13")));
        std::fs::write(dir.path().join("libnvrtc.so.12"), b"").unwrap();
        assert_eq!(locate::library_in(dir.path()), Some(dir.path().join("libnvrtc.so.12")));
    }
}
