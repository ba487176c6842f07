//! `[headers]` in cuda-lab.toml (issue 51): which families of CUDA's device
//! headers exercise files may include, the course's choice, per exercise
//! where it matters.
//!
//! ```toml
//! [headers]
//! allow = ["cuda_fp16", "cuda_bf16", "cooperative_groups"]   # the default
//! [headers.exercises]
//! ex08 = ["cuda_fp16", "cuda_bf16", "cooperative_groups", "cub"]
//! ```
//!
//! The in-memory C headers (`<stdio.h>`, `<stdint.h>`, ...) are always
//! allowed; the families are those of [`ptx_build::header_families`]. A
//! refused `#include` names the setting that refused it. A batch grades every
//! submission with the course's file, never a submission's own: the batch
//! hands its path to the graders it starts ([`COURSE_CONFIG_ENV`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ptx_build::AllowedHeaders;
use serde::Deserialize;

use crate::course::CONFIG_FILE;

/// The course's cuda-lab.toml, set by `grader batch` for the graders it
/// starts (whose root is a staged submission): `[headers]` is read from it.
pub const COURSE_CONFIG_ENV: &str = "CUDA_LAB_COURSE_CONFIG";

#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    headers: Section,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    allow: Option<Vec<String>>,
    #[serde(default)]
    exercises: BTreeMap<String, Vec<String>>,
}

/// The course's choice for every exercise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CourseHeaders {
    course: AllowedHeaders,
    exercises: BTreeMap<String, AllowedHeaders>,
}

impl CourseHeaders {
    /// What exercise `id` (`ex08`) may include, and where that was set.
    pub fn for_exercise(&self, id: &str) -> AllowedHeaders {
        self.exercises.get(id).unwrap_or(&self.course).clone()
    }

    /// The README's line for exercise `id`: what a file may include, and the setting.
    pub fn readme_line(&self, id: &str) -> String {
        let a = self.for_exercise(id);
        let families = match a.families().count() {
            0 => "no CUDA header family".to_string(),
            _ => format!(
                "the CUDA header families {}",
                a.families().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
            ),
        };
        format!(
            "**Headers:** your files may include the C headers the grader serves (`<stdio.h>`, `<stdint.h>`, \
             `<cmath>`, ...) and {families}, as set in {}; any other `#include` is a compile error that names \
             that setting.",
            a.setting()
        )
    }
}

/// Where `[headers]` is read from: the batch's course file where it set one,
/// else cuda-lab.toml under `root`.
pub fn config_path(root: &Path) -> PathBuf {
    match std::env::var_os(COURSE_CONFIG_ENV).filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => root.join(CONFIG_FILE),
    }
}

/// The course's `[headers]` (the default without a file).
pub fn resolve(root: &Path) -> Result<CourseHeaders> {
    resolve_file(&config_path(root))
}

/// `[headers]` of the cuda-lab.toml at `path` (the default where there is none).
pub fn resolve_file(path: &Path) -> Result<CourseHeaders> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text).with_context(|| format!("reading [headers] in {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(CourseHeaders::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

pub fn parse(text: &str) -> Result<CourseHeaders> {
    let file: File = toml::from_str(text)?;
    let h = file.headers;
    let setting = |key: &str| format!("{CONFIG_FILE}, `{key}`");
    let allowed = |names: &[String], key: &str| {
        AllowedHeaders::new(names, setting(key)).map_err(|e| anyhow::anyhow!("{key}: {e}"))
    };
    let course = match &h.allow {
        Some(names) => allowed(names, "[headers] allow")?,
        None => AllowedHeaders::default(),
    };
    let mut exercises = BTreeMap::new();
    for (id, names) in &h.exercises {
        anyhow::ensure!(
            crate::registry::all().iter().any(|e| e.id == id),
            "[headers.exercises] names `{id}`, which is no exercise (they are {})",
            crate::registry::all().iter().map(|e| e.id).collect::<Vec<_>>().join(", ")
        );
        exercises.insert(id.clone(), allowed(names, &format!("[headers.exercises] {id}"))?);
    }
    Ok(CourseHeaders { course, exercises })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_todays_list_and_the_repository_keeps_it() {
        let d = CourseHeaders::default().for_exercise("ex08");
        assert_eq!(d.families().collect::<Vec<_>>(), ["cuda_fp16", "cuda_bf16", "cooperative_groups"]);
        assert!(d.allows("cooperative_groups/reduce.h") && !d.allows("cub/cub.cuh"));
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(CONFIG_FILE);
        let course = parse(&std::fs::read_to_string(here).unwrap()).expect("the repository's own cuda-lab.toml reads");
        for e in crate::registry::all() {
            let a = course.for_exercise(e.id);
            assert_eq!(a.families().collect::<Vec<_>>(), d.families().collect::<Vec<_>>(), "{}: the default", e.id);
        }
    }

    #[test]
    fn per_exercise_lists_replace_the_courses_and_name_their_key() {
        let c = parse(
            "[headers]\nallow = [\"cuda_fp16\"]\n[headers.exercises]\nex08 = [\"cuda_fp16\", \"cooperative_groups\", \"cub\"]\n",
        )
        .unwrap();
        let ex08 = c.for_exercise("ex08");
        assert!(ex08.allows("cub/block/block_reduce.cuh"));
        assert_eq!(ex08.setting(), "cuda-lab.toml, `[headers.exercises] ex08`");
        let ex11 = c.for_exercise("ex11");
        assert!(!ex11.allows("cub/block/block_scan.cuh") && !ex11.allows("cooperative_groups.h"));
        assert_eq!(ex11.setting(), "cuda-lab.toml, `[headers] allow`");
        assert!(
            c.readme_line("ex11")
                .contains("the CUDA header families `cuda_fp16`, as set in cuda-lab.toml, `[headers] allow`;"),
            "{}",
            c.readme_line("ex11")
        );
    }

    #[test]
    fn every_readme_says_what_its_exercise_may_include() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let course = resolve_file(&root.join(CONFIG_FILE)).unwrap();
        for e in crate::registry::all() {
            let readme = root.join(e.dir).join("README.md");
            let text = std::fs::read_to_string(&readme).unwrap();
            let line = course.readme_line(e.id);
            assert!(
                text.lines().any(|l| l == line),
                "{}: add this line (before `## Hints`): what the course's cuda-lab.toml allows it to include:\n{line}",
                readme.display()
            );
        }
    }

    #[test]
    fn mistakes_in_the_setting_are_refused_with_the_key() {
        let e = parse("[headers]\nallow = [\"cub\", \"thrusty\"]\n").unwrap_err();
        assert!(format!("{e:#}").contains("[headers] allow: `thrusty` is no header family"), "{e:#}");
        let e = parse("[headers.exercises]\nex99 = [\"cub\"]\n").unwrap_err();
        assert!(format!("{e:#}").contains("`ex99`, which is no exercise"), "{e:#}");
        assert!(parse("[headers]\nallowed = []\n").is_err(), "unknown keys are refused");
        // An empty list is a choice: only the C headers.
        assert_eq!(parse("[headers]\nallow = []\n").unwrap().for_exercise("ex01").names(), "none");
    }
}
