//! A cache of successful compiles, keyed by everything that decides the output.
//!
//! One file per entry, `<key>.json`, written to a temporary file in the same
//! folder and renamed into place, so concurrent graders never see half a file.
//! A broken entry reads as a miss and is overwritten; cache trouble is never
//! an error.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{headers, CompileOptions, CompilerKind, Diagnostic, Ptx};

/// Bump when the entry format or the meaning of a key changes.
const FORMAT: u32 = 1;

#[derive(Serialize)]
struct KeyInput<'a> {
    format: u32,
    /// A new ptx-build may compile differently (options, headers).
    ptx_build: &'a str,
    headers: String,
    kind: &'a str,
    compiler: &'a str,
    /// Where device headers came from (empty for a file that includes none).
    device_headers: &'a str,
    arch: (u32, u32),
    line_info: bool,
    defines: &'a [(String, String)],
    extra: &'a [String],
    display_path: &'a str,
    source: &'a str,
}

/// SHA-256 (hex) over the compiler, its version, every option, the display
/// path (it appears in diagnostics) and the source text.
pub(crate) fn key(
    kind: CompilerKind,
    version: &str,
    device_headers: &str,
    opts: &CompileOptions,
    display_path: &str,
    source: &str,
) -> String {
    let mut h = Sha256::new();
    for hd in headers::ALLOWED {
        h.update(hd.name.as_bytes());
        h.update([0]);
        h.update(hd.text.as_bytes());
        h.update([0]);
    }
    // The prelude every file is compiled with (prelude.rs).
    h.update(crate::prelude::TEXT.as_bytes());
    let input = KeyInput {
        format: FORMAT,
        ptx_build: env!("CARGO_PKG_VERSION"),
        headers: crate::source::hex(&h.finalize()),
        kind: kind.name(),
        compiler: version,
        device_headers,
        arch: opts.arch,
        line_info: opts.line_info,
        defines: &opts.defines,
        extra: &opts.extra,
        display_path,
        source,
    };
    // JSON is an unambiguous encoding of the fields (no separator tricks).
    let json = serde_json::to_vec(&input).expect("serializing plain data");
    crate::source::hex(&Sha256::digest(&json))
}

#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    key: String,
    compiler: String,
    text: String,
    diagnostics: Vec<Diagnostic>,
}

fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.json"))
}

pub(crate) fn load(dir: &Path, key: &str) -> Option<Ptx> {
    let bytes = std::fs::read(entry_path(dir, key)).ok()?;
    let e: Entry = serde_json::from_slice(&bytes).ok()?;
    // A renamed or hand-edited file is not this entry.
    if e.format != FORMAT || e.key != key {
        return None;
    }
    Some(Ptx { text: e.text, diagnostics: e.diagnostics, from_cache: true, compiler: e.compiler })
}

/// Best effort: a cache that cannot be written only costs time.
pub(crate) fn store(dir: &Path, key: &str, ptx: &Ptx) {
    let _ = try_store(dir, key, ptx);
}

fn try_store(dir: &Path, key: &str, ptx: &Ptx) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let entry = Entry {
        format: FORMAT,
        key: key.to_string(),
        compiler: ptx.compiler.clone(),
        text: ptx.text.clone(),
        diagnostics: ptx.diagnostics.clone(),
    };
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").suffix(".json").tempfile_in(dir)?;
    tmp.write_all(&serde_json::to_vec(&entry).map_err(std::io::Error::other)?)?;
    tmp.as_file().sync_all()?;
    tmp.persist(entry_path(dir, key)).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Severity;

    fn k(version: &str, opts: &CompileOptions, path: &str, src: &str) -> String {
        key(CompilerKind::Nvrtc, version, "", opts, path, src)
    }

    #[test]
    fn key_changes_with_every_input() {
        let o = CompileOptions::default();
        let base = k("NVRTC 12.9", &o, "a.cu", "int x;");
        assert_eq!(base.len(), 64);
        assert_eq!(base, k("NVRTC 12.9", &o, "a.cu", "int x;"), "deterministic");
        assert_ne!(base, k("NVRTC 12.9", &o, "a.cu", "int y;"), "source");
        assert_ne!(base, k("NVRTC 13.0", &o, "a.cu", "int x;"), "version");
        assert_ne!(base, k("NVRTC 12.9", &o, "b.cu", "int x;"), "display path");
        assert_ne!(base, key(CompilerKind::Nvcc, "NVRTC 12.9", "", &o, "a.cu", "int x;"), "kind");
        assert_ne!(base, key(CompilerKind::Clang, "NVRTC 12.9", "", &o, "a.cu", "int x;"), "kind");
        assert_ne!(base, key(CompilerKind::Nvrtc, "NVRTC 12.9", "toolkit /t", &o, "a.cu", "int x;"), "headers");
        let variants = [
            CompileOptions { arch: (8, 0), ..o.clone() },
            CompileOptions { line_info: !o.line_info, ..o.clone() },
            CompileOptions { defines: vec![("N".into(), "1".into())], ..o.clone() },
            CompileOptions { defines: vec![("N".into(), "2".into())], ..o.clone() },
            CompileOptions { extra: vec!["--use_fast_math".into()], ..o.clone() },
        ];
        let mut seen = std::collections::HashSet::from([base]);
        for v in &variants {
            assert!(seen.insert(k("NVRTC 12.9", v, "a.cu", "int x;")), "{v:?}");
        }
        // No ambiguity between fields.
        assert_ne!(k("v", &o, "ab", "c"), k("v", &o, "a", "bc"));
    }

    fn sample() -> Ptx {
        Ptx {
            text: ".version 8.8\n.target sm_75\n".into(),
            diagnostics: vec![Diagnostic {
                file: "a.cu".into(),
                line: Some(3),
                column: Some(6),
                severity: Severity::Warning,
                message: "unused".into(),
            }],
            from_cache: false,
            compiler: "NVRTC 12.9".into(),
        }
    }

    #[test]
    fn round_trip_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("nested/cache");
        let key = "ab".repeat(32);
        assert!(load(&cache, &key).is_none());
        store(&cache, &key, &sample());
        let hit = load(&cache, &key).unwrap();
        assert!(hit.from_cache);
        assert_eq!(hit.text, sample().text);
        assert_eq!(hit.diagnostics, sample().diagnostics);
        assert_eq!(hit.compiler, "NVRTC 12.9");
        // Only the entry is left behind, no temporary files.
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);

        std::fs::write(entry_path(&cache, &key), b"{\"format\":1,\"key\":\"ab").unwrap();
        assert!(load(&cache, &key).is_none(), "truncated entry is a miss");
        store(&cache, &key, &sample());
        assert!(load(&cache, &key).is_some(), "and is overwritten");

        // An entry under another key's name is not trusted.
        let other = "cd".repeat(32);
        std::fs::copy(entry_path(&cache, &key), entry_path(&cache, &other)).unwrap();
        assert!(load(&cache, &other).is_none());
    }

    #[test]
    fn an_unwritable_cache_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        store(&file, &"ab".repeat(32), &sample());
        assert!(load(&file, &"ab".repeat(32)).is_none());
    }
}
