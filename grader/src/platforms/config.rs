//! `[platforms]` in cuda-lab.toml: which maximum every platform's file
//! receives ([`Maximum`]); `--maximum` overrides it for one run.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

use super::Maximum;
use crate::policy::CONFIG_FILE;

#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    platforms: Section,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct Section {
    maximum: Option<Maximum>,
}

/// The maximum for the platforms: the flag, else cuda-lab.toml under `root`, else `graded-here`.
pub fn maximum(root: &Path, flag: Option<Maximum>) -> Result<Maximum> {
    if let Some(m) = flag {
        return Ok(m);
    }
    let path = root.join(CONFIG_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(parse(&text).with_context(|| format!("reading [platforms] in {}", path.display()))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Maximum::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn parse(text: &str) -> Result<Maximum> {
    let file: File = toml::from_str(text)?;
    Ok(file.platforms.maximum.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_course_file_names_the_maximum() {
        assert_eq!(parse("[platforms]\nmaximum = \"full-given\"\n").unwrap(), Maximum::FullGiven);
        assert_eq!(parse("[class-report]\nleaderboard = true\n").unwrap(), Maximum::GradedHere);
        assert!(parse("[platforms]\nmaximum = \"all\"\n").is_err());
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(here.join(CONFIG_FILE)).unwrap();
        parse(&text).expect("the repository's own cuda-lab.toml reads");
    }
}
