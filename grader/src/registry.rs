//! Every exercise the grader knows, and how a name on the command line selects one.
//! The list is generated from grader/Cargo.toml by build.rs: an exercise is
//! registered by being a dependency (`grader new exercise` adds it).

use anyhow::{bail, Result};
use kit::Exercise;

// `all()` and `FOLDERS`: one exercise per `exNN-slug` path dependency in
// grader/Cargo.toml (build.rs); nothing here to edit when adding one.
include!(concat!(env!("OUT_DIR"), "/exercises.rs"));

/// `ex01`, `ex01-pi` and `pi` all select ex01; `all` selects everything.
pub fn select(names: &[String]) -> Result<Vec<Exercise>> {
    if names.is_empty() {
        bail!(
            "say which exercise to grade, e.g. `{c} ex01` or `{c} all` (`{c} list` shows them)",
            c = crate::words::COMMAND
        );
    }
    let mut chosen: Vec<Exercise> = Vec::new();
    for name in names {
        let name = name.to_ascii_lowercase();
        let matches: Vec<Exercise> = all()
            .into_iter()
            .filter(|e| name == "all" || name == e.id || name == e.slug || name == e.folder_name())
            .collect();
        if matches.is_empty() {
            let known: Vec<String> = all().iter().map(|e| format!("{} ({})", e.id, e.slug)).collect();
            bail!("no exercise called `{name}`; the exercises are: {}", known.join(", "));
        }
        for e in matches {
            if !chosen.iter().any(|c| c.id == e.id) {
                chosen.push(e);
            }
        }
    }
    chosen.sort_by_key(|e| e.id);
    Ok(chosen)
}

/// Keeps only the part called `part` of the selected exercise (one process per
/// part is how batch grading isolates a crash).
pub fn keep_part(exercises: &mut [Exercise], part: &str) -> Result<()> {
    if exercises.len() != 1 {
        bail!("--part needs exactly one exercise");
    }
    let ex = &mut exercises[0];
    let names: Vec<&str> = ex.parts.iter().map(|p| p.name).collect();
    if !names.contains(&part) {
        bail!("{} has no part `{part}`; its parts are: {}", ex.id, names.join(", "));
    }
    ex.parts.retain(|p| p.name == part);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[&str]) -> Vec<&'static str> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        select(&names).unwrap().iter().map(|e| e.id).collect()
    }

    #[test]
    fn every_name_of_an_exercise_selects_it() {
        assert_eq!(ids(&["ex01"]), ["ex01"]);
        assert_eq!(ids(&["ex01-pi"]), ["ex01"]);
        assert_eq!(ids(&["PI"]), ["ex01"]);
        assert_eq!(ids(&["all"]).len(), all().len());
        assert_eq!(ids(&["pi", "ex01"]), ["ex01"]);
    }

    #[test]
    fn keep_part_selects_one_part_or_explains() {
        let mut one = select(&["ex01".into()]).unwrap();
        keep_part(&mut one, "shared").unwrap();
        assert_eq!(one[0].parts.len(), 1);
        let mut one = select(&["ex01".into()]).unwrap();
        let err = keep_part(&mut one, "nope").unwrap_err().to_string();
        assert!(err.contains("global, shared"), "{err}");
        let mut all_ = select(&["all".into()]).unwrap();
        assert!(keep_part(&mut all_, "shared").is_err());
    }

    #[test]
    fn unknown_names_list_the_real_ones() {
        let err = select(&["ex99".into()]).err().unwrap().to_string();
        assert!(err.contains("ex01 (pi)"), "{err}");
        assert!(select(&[]).is_err());
    }

    #[test]
    fn ids_and_test_names_are_unique() {
        let exercises = all();
        let mut seen = std::collections::HashSet::new();
        for e in &exercises {
            assert!(seen.insert(e.id), "duplicate id {}", e.id);
            for p in &e.parts {
                let mut names = std::collections::HashSet::new();
                for c in &p.checks {
                    assert!(names.insert((c.kind, c.name.clone())), "duplicate check {}::{}::{}", e.id, p.name, c.name);
                }
            }
        }
    }
}
