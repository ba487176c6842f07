//! Every calibrated GPU model side by side, per check, as Markdown: printed by
//! `grader calibrate --markdown`, and written into each exercise's
//! CALIBRATION.md between two markers by `--update-docs`.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::file::CalibrationFile;

pub const BEGIN: &str = "<!-- calibration:begin (written by `grader calibrate --update-docs`) -->";
pub const END: &str = "<!-- calibration:end -->";

/// The table of every check of exercise `id` (`ex05`; `None`: every check).
pub fn tables(files: &[(PathBuf, CalibrationFile)], id: Option<&str>) -> String {
    let mut checks: Vec<&String> = files.iter().flat_map(|(_, f)| f.checks.keys()).collect();
    checks.sort();
    checks.dedup();
    let mut out = String::from("## Thresholds per GPU model\n\n");
    out += "Each row is one committed calibration (`calibration/*.toml`, docs/grading-accuracy.md, \"Where a \
            threshold sits\"); margins are slowest correct / threshold and threshold / fastest slow.\n";
    let mut any = false;
    for check in checks.into_iter().filter(|c| id.is_none_or(|id| c.split("::").next() == Some(id))) {
        any = true;
        out += &format!("\n### `{check}`\n\n");
        out += "| GPU | measured | threshold | graded | slowest correct | fastest slow | margins |\n";
        out += "| --- | --- | --- | --- | --- | --- | --- |\n";
        for (_, f) in files {
            let Some(c) = f.checks.get(check) else { continue };
            let num = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.3}"));
            let margin = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}x"));
            let measured =
                if f.measured.contains(&f.date) { f.measured.clone() } else { format!("{}, {}", f.measured, f.date) };
            out += &format!(
                "| {} | {measured} | {:.3} | {} | {} | {} | {} / {} |\n",
                f.gpu.name,
                c.threshold,
                if c.graded { "yes" } else { "**not graded here**" },
                num(c.slowest_correct),
                num(c.fastest_slow),
                margin(c.margin_correct),
                margin(c.margin_slow)
            );
        }
    }
    if !any {
        out += "\nNo calibration yet.\n";
    }
    out + &counters(files, id)
}

/// The structure checks' figures per request on each model's counters beside
/// the simulator's (`[counters]`, `calibrate::counters`), for exercise `id`'s
/// checks (`None`: every check); empty where no file has any.
pub fn counters(files: &[(PathBuf, CalibrationFile)], id: Option<&str>) -> String {
    let mut checks: Vec<&String> = files.iter().flat_map(|(_, f)| f.counters.keys()).collect();
    checks.sort();
    checks.dedup();
    checks.retain(|c| id.is_none_or(|id| c.split("::").next() == Some(id)));
    if checks.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Structure checks on the GPU's counters\n\n");
    out += "Per warp request, the GPU's counters / the simulator's for the same launches (the range over a check's \
            measurements), for the reference and the slow variant, as `grader calibrate` recorded them \
            (`[counters]` in `calibration/*.toml`; docs/counters.md).\n\n";
    out += "| check | GPU | variant | measurements | load sectors | store sectors | shared passes | verdict |\n";
    out += "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for check in checks {
        for (_, f) in files {
            let Some(c) = f.counters.get(check) else { continue };
            for (role, w) in [("reference", &c.reference), ("slow", &c.slow)] {
                let Some(w) = w else { continue };
                let both = |g: Option<[f64; 2]>, s: Option<[f64; 2]>| match (g, s) {
                    (None, None) => "–".to_string(),
                    (g, s) => format!("{} / {}", span(g), span(s)),
                };
                out += &format!(
                    "| `{check}` | {} | {role} | {} | {} | {} | {} | {} |\n",
                    f.gpu.name,
                    w.measurements,
                    both(w.gpu.load_sectors, w.sim.load_sectors),
                    both(w.gpu.store_sectors, w.sim.store_sectors),
                    both(w.gpu.shared_passes, w.sim.shared_passes),
                    w.status
                );
            }
        }
    }
    out
}

/// `[least, most]` as `4.00`, or `3.00–4.00` where they differ (– for none).
fn span(r: Option<[f64; 2]>) -> String {
    match r {
        None => "–".into(),
        Some([lo, hi]) if format!("{lo:.2}") == format!("{hi:.2}") => format!("{lo:.2}"),
        Some([lo, hi]) => format!("{lo:.2}–{hi:.2}"),
    }
}

/// `text` with the section between [`BEGIN`] and [`END`] replaced by `section`
/// (appended where the markers are missing).
pub fn replace_section(text: &str, section: &str) -> String {
    let block = format!("{BEGIN}\n{section}{END}\n");
    match (text.find(BEGIN), text.find(END)) {
        (Some(b), Some(e)) if e > b => {
            format!("{}{block}{}", &text[..b], text[e + END.len()..].trim_start_matches('\n'))
        }
        _ => format!("{}\n{block}", text.trim_end_matches('\n').to_string() + "\n"),
    }
}

/// Writes each exercise's section into `<root>/exercises/<folder>/CALIBRATION.md`; returns the files changed.
pub fn update_docs(
    root: &Path,
    files: &[(PathBuf, CalibrationFile)],
    exercises: &[kit::Exercise],
) -> Result<Vec<PathBuf>> {
    let mut changed = Vec::new();
    for ex in exercises {
        let path = root.join(ex.dir).join("CALIBRATION.md");
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let new = replace_section(&text, &tables(files, Some(ex.id)));
        if crate::atomic::write_if_changed(&path, new.as_bytes())? {
            changed.push(path);
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exercises_calibration_md_shows_the_committed_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let files = CalibrationFile::all_in(&super::super::file::course_dir(&root));
        assert!(files.iter().any(|(_, f)| !f.counters.is_empty()), "a committed file with counters");
        let mut shown = 0;
        for ex in crate::registry::all() {
            let path = root.join(ex.dir).join("CALIBRATION.md");
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let section = tables(&files, Some(ex.id));
            shown += section.matches("| reference |").count();
            let now = replace_section(&text, &section);
            assert!(now == text, "{}: out of date, run `grader calibrate --update-docs`", path.display());
        }
        assert!(shown >= 30, "the references' counter figures are shown: {shown}");
    }

    #[test]
    fn the_section_is_replaced_in_place_or_appended() {
        let once = replace_section("# ex05\n\ntext\n", "table 1\n");
        assert!(once.ends_with(&format!("{BEGIN}\ntable 1\n{END}\n")), "{once}");
        let twice = replace_section(&(once.clone() + "after\n"), "table 2\n");
        assert_eq!(twice, once.replace("table 1", "table 2") + "after\n");
    }
}
