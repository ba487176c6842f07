//! `grader new exercise exNN-slug [--shape linear|rows|tiles-2d]`: writes a
//! complete exercise that builds and grades (its stub 0, its reference full
//! marks), from the templates in `template/` (`linear`) or
//! `template/<shape>/`: the crate (one part, a correctness check at sizes that
//! are not multiples of the block, a measured structure check for `rows` and
//! `tiles-2d`, a timed check against a yardstick with the same launch and a
//! measured stand-in), README, hints, CALIBRATION.md with the measurements to
//! take, the stub, the reference, the slow variant, a yardstick, calibration
//! variants, and the timed check's family in the variants corpus
//! ([`super::variants`]). It then registers the exercise (one dependency line
//! in grader/Cargo.toml), adds it to the Classroom workflow and to the
//! README's table, and says what to do next. The teacher replaces the task;
//! the host code stays (docs/authoring.md).

use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use kit::Exercise;

pub use crate::author::shape::Shape;
use crate::author::{completeness, variants};

/// One shape's templates and the names of the files they become.
struct Templates {
    lib: &'static str,
    measured: &'static str,
    readme: &'static str,
    hints: &'static str,
    calibration_md: &'static str,
    stub: &'static str,
    solution: &'static str,
    slow: &'static str,
    /// `yardsticks/<name>.cu`.
    yardstick: (&'static str, &'static str),
    /// `calibration/<kernel>_<name>.cu`: a style variant that passes, and a
    /// wrong-technique one the measured check fails.
    style: (&'static str, &'static str),
    technique: (&'static str, &'static str),
}

macro_rules! shape_templates {
    ($dir:literal, $yardstick:literal, $style:literal, $style_file:literal, $technique:literal, $technique_file:literal) => {
        Templates {
            lib: include_str!(concat!("template/", $dir, "lib.rs.tmpl")),
            measured: include_str!(concat!("template/", $dir, "measured.rs.tmpl")),
            readme: include_str!(concat!("template/", $dir, "README.md.tmpl")),
            hints: include_str!(concat!("template/", $dir, "hints.toml.tmpl")),
            calibration_md: include_str!(concat!("template/", $dir, "CALIBRATION.md.tmpl")),
            stub: include_str!(concat!("template/", $dir, "stub.cu.tmpl")),
            solution: include_str!(concat!("template/", $dir, "solution.cu.tmpl")),
            slow: include_str!(concat!("template/", $dir, "slow.cu.tmpl")),
            yardstick: ($yardstick, include_str!(concat!("template/", $dir, "yardstick.cu.tmpl"))),
            style: ($style, include_str!(concat!("template/", $dir, $style_file))),
            technique: ($technique, include_str!(concat!("template/", $dir, $technique_file))),
        }
    };
}

fn templates(shape: Shape) -> Templates {
    match shape {
        Shape::Linear => {
            shape_templates!("", "copy_linear", "grid_stride", "grid_stride.cu.tmpl", "chunked", "chunked.cu.tmpl")
        }
        Shape::Rows => {
            shape_templates!("rows/", "copy_rows", "shuffle", "style.cu.tmpl", "chunked", "technique.cu.tmpl")
        }
        Shape::Tiles2d => {
            shape_templates!("tiles-2d/", "copy_2d", "grid_stride", "style.cu.tmpl", "row_walk", "technique.cu.tmpl")
        }
    }
}

/// The names of a new exercise, all derived from `exNN-slug`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// "ex09"
    pub id: String,
    /// "picture"
    pub slug: String,
    /// "ex09-picture": the folder and the crate's package name.
    pub folder: String,
    /// The part, the kernel and its file: the slug as a C identifier ("picture").
    pub kernel: String,
    pub title: String,
    /// The template's shape (`--shape`, linear by default).
    pub shape: Shape,
}

impl Names {
    /// Parses `exNN-slug`: two digits, then lowercase words joined by `-`.
    pub fn parse(name: &str, title: Option<&str>) -> Result<Self> {
        let bad = || {
            anyhow::anyhow!(
                "`{name}` is not an exercise name: write exNN-slug, two digits and a slug of lowercase letters, \
                 digits and dashes, e.g. `ex09-picture`"
            )
        };
        let (id, slug) = name.split_once('-').ok_or_else(bad)?;
        let digits = id.strip_prefix("ex").ok_or_else(bad)?;
        ensure!(digits.len() == 2 && digits.bytes().all(|b| b.is_ascii_digit()), bad());
        let words_ok =
            slug.split('-').all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
        ensure!(words_ok && slug.starts_with(|c: char| c.is_ascii_lowercase()), bad());
        Ok(Self {
            id: id.to_string(),
            slug: slug.to_string(),
            folder: name.to_string(),
            kernel: slug.replace('-', "_"),
            title: title.map(str::to_string).unwrap_or_else(|| format!("{} (a new exercise)", slug.replace('-', " "))),
            shape: Shape::Linear,
        })
    }

    /// The same names for the template of `shape`.
    pub fn shaped(self, shape: Shape) -> Self {
        Self { shape, ..self }
    }

    pub(crate) fn fill(&self, template: &str) -> String {
        template
            .replace("{{id}}", &self.id)
            .replace("{{slug}}", &self.slug)
            .replace("{{folder}}", &self.folder)
            .replace("{{kernel}}", &self.kernel)
            .replace("{{part}}", &self.kernel)
            .replace("{{title}}", &self.title.replace('"', "'"))
    }

    /// Every file the exercise consists of: path from the root, template.
    fn files(&self) -> Vec<(String, &'static str)> {
        let (ex, k) = (format!("exercises/{}", self.folder), &self.kernel);
        let t = templates(self.shape);
        vec![
            (format!("{ex}/Cargo.toml"), include_str!("template/Cargo.toml.tmpl")),
            (format!("{ex}/src/lib.rs"), t.lib),
            (format!("{ex}/src/measured.rs"), t.measured),
            (format!("{ex}/README.md"), t.readme),
            (format!("{ex}/hints.toml"), t.hints),
            (format!("{ex}/CALIBRATION.md"), t.calibration_md),
            (format!("{ex}/kernels/{k}.cu"), t.stub),
            (format!("{ex}/yardsticks/{}.cu", t.yardstick.0), t.yardstick.1),
            (format!("{ex}/calibration/{k}_{}.cu", t.style.0), t.style.1),
            (format!("{ex}/calibration/{k}_{}.cu", t.technique.0), t.technique.1),
            (format!("reference/{}/kernels/{k}.cu", self.folder), t.solution),
            (format!("reference/slow/{}/kernels/{k}.cu", self.folder), t.slow),
        ]
    }

    /// The style variant's file, from the root (a correct case of the
    /// variants family too, which points at it rather than holding a copy).
    pub(crate) fn style_file(&self) -> String {
        format!("exercises/{}/calibration/{}_{}.cu", self.folder, self.kernel, templates(self.shape).style.0)
    }
}

/// What [`create`] wrote and changed, relative to the root.
#[derive(Debug, Default)]
pub struct Created {
    pub written: Vec<String>,
    pub changed: Vec<String>,
}

/// Writes the exercise `names` into the workspace at `root`, next to the
/// `registered` ones, and registers it. Refuses to overwrite anything.
pub fn create(root: &Path, names: &Names, registered: &[Exercise]) -> Result<Created> {
    ensure!(
        root.join("grader/Cargo.toml").is_file() && root.join("exercises").is_dir(),
        "{} is not the cuda-lab workspace (no grader/Cargo.toml and exercises/): run from its root or pass --root",
        root.display()
    );
    if let Some(e) = registered.iter().find(|e| e.id == names.id || e.slug == names.slug) {
        bail!("{} ({}) exists already: choose another number and slug", e.id, e.folder_name());
    }
    if let Some(f) = completeness::exercise_folders(root).into_iter().find(|f| f.starts_with(&format!("{}-", names.id)))
    {
        bail!("exercises/{f} exists already: choose another number");
    }
    let mut created = Created::default();
    let mut files: Vec<(String, String)> = names.files().into_iter().map(|(rel, t)| (rel, names.fill(t))).collect();
    // The timed check's family in the variants corpus, where the workspace has one.
    let fill = |t: &str| names.fill(t);
    let naming = variants::Naming {
        id: &names.id,
        folder: &names.folder,
        kernel: &names.kernel,
        shape: names.shape,
        style_file: &names.style_file(),
        fill: &fill,
    };
    let corpus = variants::Scaffold::new(root, &naming)?;
    if let Some(corpus) = &corpus {
        files.extend(corpus.files());
    }
    for (rel, _) in &files {
        ensure!(!root.join(rel).exists(), "{rel} exists already: nothing was written");
    }
    for (rel, text) in files {
        let path = root.join(&rel);
        std::fs::create_dir_all(path.parent().expect("a file has a folder"))?;
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        created.written.push(rel);
    }
    format_rust(root, &created.written);
    if let Some(corpus) = &corpus {
        corpus.add_rows()?;
        created.changed.push(variants::TABLE.into());
    }
    register(root, names)?;
    created.changed.push("grader/Cargo.toml".into());
    // Every exercise grader/Cargo.toml registers now: also those generated
    // earlier by this same binary, which its registry does not know yet.
    let mut ids: Vec<String> = registered.iter().map(|e| e.id.to_string()).collect();
    ids.extend(registered_ids(root)?);
    ids.sort();
    ids.dedup();
    let workflow = root.join(crate::template::WORKFLOW_PATH);
    if workflow.is_file() {
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        std::fs::write(&workflow, crate::template::classroom_workflow_for(&ids))?;
        created.changed.push(crate::template::WORKFLOW_PATH.into());
    }
    if add_readme_row(&root.join("README.md"), names)? {
        created.changed.push("README.md".into());
    }
    Ok(created)
}

/// Runs rustfmt (with the workspace's rustfmt.toml) on the written Rust
/// files, so that they pass `cargo fmt --check` whatever the names' lengths.
/// Without rustfmt they still build; only their layout differs.
fn format_rust(root: &Path, written: &[String]) {
    let files: Vec<_> = written.iter().filter(|f| f.ends_with(".rs")).map(|f| root.join(f)).collect();
    let _ = std::process::Command::new("rustfmt").args(["--edition", "2021"]).args(&files).current_dir(root).output();
}

/// The ids (`exNN`) of the exercises grader/Cargo.toml depends on.
fn registered_ids(root: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(root.join("grader/Cargo.toml"))?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once("path = \"../exercises/").map(|(_, rest)| rest))
        .filter(|folder| folder.starts_with("ex") && folder.len() > 4)
        .map(|folder| folder[..4].to_string())
        .collect())
}

/// The dependency line that registers the exercise (build.rs reads it).
pub fn dependency_line(names: &Names) -> String {
    format!("{} = {{ path = \"../exercises/{}\" }}", names.folder, names.folder)
}

/// Adds the dependency line to grader/Cargo.toml after the other exercises'.
fn register(root: &Path, names: &Names) -> Result<()> {
    let path = root.join("grader/Cargo.toml");
    let text = std::fs::read_to_string(&path)?;
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.iter().rposition(|l| l.contains("path = \"../exercises/ex"));
    let at = match last {
        Some(i) => i + 1,
        None => {
            lines
                .iter()
                .position(|l| l.trim() == "[dependencies]")
                .context("grader/Cargo.toml has no [dependencies]")?
                + 1
        }
    };
    let line = dependency_line(names);
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.push(&line);
    out.extend_from_slice(&lines[at..]);
    std::fs::write(&path, out.join("\n") + "\n")?;
    Ok(())
}

/// Adds `| exNN | title | `part` |` after the last exercise row of the
/// README's table, if it has one: the generated exercise's one part. When the
/// teacher renames or adds parts, the completeness test
/// (`cargo test -p grader --lib author`) fails until the row names them, and
/// says the row to write. Returns whether it did.
fn add_readme_row(path: &Path, names: &Names) -> Result<bool> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(false) };
    let lines: Vec<&str> = text.lines().collect();
    let Some(last) = lines.iter().rposition(|l| completeness::readme_table_row(l).is_some()) else {
        return Ok(false);
    };
    let row = format!(
        "| {} | {} | {} |",
        names.id,
        names.title.replace('|', "\\|"),
        completeness::readme_parts([names.kernel.as_str()])
    );
    let mut out: Vec<&str> = lines[..=last].to_vec();
    out.push(&row);
    out.extend_from_slice(&lines[last + 1..]);
    std::fs::write(path, out.join("\n") + "\n")?;
    Ok(true)
}

/// What to do next, printed after [`create`].
pub fn next_steps(names: &Names, created: &Created) -> String {
    let mut s = format!("Wrote {} ({}):\n", names.folder, crate::words::count(created.written.len(), "file"));
    for f in &created.written {
        s += &format!("  {f}\n");
    }
    s += "Changed:\n";
    for f in &created.changed {
        s += &format!("  {f}\n");
    }
    s += &format!(
        "\nNext (docs/authoring.md):\n  \
         cargo run -p grader -- {id} --reference --backend sim --perf-without-gpu simulate   # full marks\n  \
         cargo run -p grader -- {id} --backend sim                                           # the stub: 0\n  \
         cargo test -p {folder}                                                              # its own tests\n  \
         cargo test -p grader --lib author                                                   # complete, registered\n\
         then replace the task (src/lib.rs, kernels/, reference/), write its hints and README (and its parts in \
         README.md's table of exercises: the completeness test checks them), grow its family of \
         variants in grader/tests/variants (written here: three correct cases and the slow one; add the kinds of \
         mistakes students make, then run the whole corpus: `cargo test -p grader --test suite -- \
         --ignored variants::`), regenerate its report baselines (`cargo run -p grader -- baseline-profiles {id}`: \
         only its entries) and calibrate the thresholds on a GPU (CALIBRATION.md). Before pushing, as CI does: \
         `cargo fmt --all -- --check` and `cargo clippy -p {folder} --all-targets -- -D warnings`. The kit's API: \
         `cargo doc -p cuda-lab-kit --no-deps --open`.\n",
        id = names.id,
        folder = names.folder
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_exnn_slug() {
        let n = Names::parse("ex09-picture", None).unwrap();
        assert_eq!(
            (n.id.as_str(), n.slug.as_str(), n.folder.as_str(), n.kernel.as_str()),
            ("ex09", "picture", "ex09-picture", "picture")
        );
        assert_eq!(Names::parse("ex12-shared-load", Some("T")).unwrap().kernel, "shared_load");
        for bad in ["ex9-x", "ex09", "ex09-", "ex09-Pic", "x09-a", "ex09-a_b", "ex09--a", "ex0a-b", "ex09-1a"] {
            assert!(Names::parse(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn templates_are_filled_completely() {
        for shape in [Shape::Linear, Shape::Rows, Shape::Tiles2d] {
            let n = Names::parse("ex42-scale-it", Some("Scale \"it\"")).unwrap().shaped(shape);
            for (rel, template) in n.files() {
                let text = n.fill(template);
                assert!(!text.contains("{{"), "{shape:?}: {rel} keeps a placeholder");
                assert!(!rel.contains("scale-it") || rel.contains("/ex42-scale-it/"), "{rel}: the folder only");
                if rel.ends_with(".rs") {
                    // The yardstick the crate includes is the one written.
                    for included in text.split("include_str!(\"../").skip(1) {
                        let file = &included[..included.find('"').unwrap()];
                        let written = format!("exercises/ex42-scale-it/{file}");
                        assert!(n.files().iter().any(|(r, _)| *r == written), "{shape:?}: {rel} includes {file}");
                    }
                }
            }
            let rels: Vec<String> = n.files().into_iter().map(|(rel, _)| rel).collect();
            assert!(rels.contains(&"exercises/ex42-scale-it/kernels/scale_it.cu".to_string()), "{rels:?}");
            assert!(n.fill("\"{{title}}\"").contains("Scale 'it'"), "a title cannot break the Rust string");
        }
    }

    #[test]
    fn shapes_are_named_on_the_command_line() {
        use clap::ValueEnum;
        for shape in [Shape::Linear, Shape::Rows, Shape::Tiles2d] {
            assert_eq!(Shape::from_str(shape.name(), false).unwrap(), shape);
        }
        assert_eq!(Shape::default(), Shape::Linear);
    }

    fn fake_workspace() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("grader")).unwrap();
        std::fs::create_dir_all(root.join("exercises/ex01-pi")).unwrap();
        std::fs::write(
            root.join("grader/Cargo.toml"),
            "[dependencies]\nkit.workspace = true\nex01-pi = { path = \"../exercises/ex01-pi\" }\n\nserde = \"1\"\n",
        )
        .unwrap();
        std::fs::write(
            root.join("README.md"),
            "| id | exercise | parts |\n| --- | --- | --- |\n| ex01 | pi | `global` |\n\nMore.\n",
        )
        .unwrap();
        tmp
    }

    #[test]
    fn create_writes_registers_and_refuses_to_overwrite() {
        let tmp = fake_workspace();
        let root = tmp.path();
        let registered = crate::registry::select(&["ex01".into()]).unwrap();
        let n = Names::parse("ex42-scale", Some("Scale a vector")).unwrap();
        let created = create(root, &n, &registered).unwrap();
        assert_eq!(created.written.len(), 12);
        for f in &created.written {
            assert!(root.join(f).is_file(), "{f}");
        }
        let cargo = std::fs::read_to_string(root.join("grader/Cargo.toml")).unwrap();
        assert!(
            cargo.contains("ex01-pi = { path = \"../exercises/ex01-pi\" }\nex42-scale = { path = \"../exercises/ex42-scale\" }\n\nserde"),
            "{cargo}"
        );
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        assert!(readme.contains("| ex01 | pi | `global` |\n| ex42 | Scale a vector | `scale` |\n\nMore."), "{readme}");
        let next = next_steps(&n, &created);
        for step in [
            "cargo run -p grader -- ex42 --reference --backend sim --perf-without-gpu simulate",
            "cargo run -p grader -- ex42 --backend sim",
            "cargo test -p ex42-scale",
            "cargo test -p grader --lib author",
            "baseline-profiles ex42",
            "cargo fmt --all -- --check",
            "-D warnings",
        ] {
            assert!(next.contains(step), "the next steps say `{step}`:\n{next}");
        }
        let lib = std::fs::read_to_string(root.join("exercises/ex42-scale/src/lib.rs")).unwrap();
        assert!(lib.contains("id: \"ex42\"") && lib.contains("\"kernels/scale.cu\""));
        // Once more: refused, nothing changed.
        let err = create(root, &n, &registered).unwrap_err().to_string();
        assert!(err.contains("exercises/ex42-scale exists already"), "{err}");
        let taken = Names::parse("ex01-other", None).unwrap();
        assert!(create(root, &taken, &registered).unwrap_err().to_string().contains("ex01 (ex01-pi) exists already"));
        assert!(create(&root.join("nowhere"), &Names::parse("ex43-a", None).unwrap(), &registered).is_err());
    }

    #[test]
    fn with_a_variants_corpus_the_family_is_written_too() {
        let tmp = fake_workspace();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("grader/tests/variants")).unwrap();
        std::fs::write(root.join(variants::TABLE), "{\n  \"cases\": {\n    \"a\": {}\n  }\n}\n").unwrap();
        let registered = crate::registry::select(&["ex01".into()]).unwrap();
        let n = Names::parse("ex43-row-sum", None).unwrap().shaped(Shape::Rows);
        let created = create(root, &n, &registered).unwrap();
        // The exercise's 12 files and two correct cases' kernels (the third points at the style variant).
        assert_eq!(created.written.len(), 14, "{:?}", created.written);
        assert!(created.changed.contains(&variants::TABLE.to_string()));
        let lib = std::fs::read_to_string(root.join("exercises/ex43-row-sum/src/lib.rs")).unwrap();
        assert!(lib.contains("LaunchConfig::linear(rows as u32, THREADS)"), "one block per row");
        assert!(root.join("exercises/ex43-row-sum/yardsticks/copy_rows.cu").is_file());
        let table = std::fs::read_to_string(root.join(variants::TABLE)).unwrap();
        assert!(table.contains("\"ex43-row-sum-slow\"") && table.contains("\"ex43/row_sum/perf::share-of-copy\""));
        assert!(table.contains(
            "\"ex43-row-sum/kernels/row_sum.cu\": \"exercises/ex43-row-sum/calibration/row_sum_shuffle.cu\""
        ));
    }
}
