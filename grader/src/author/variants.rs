//! The generated exercise's family in the variants corpus
//! (`grader/tests/variants`, docs/grading-accuracy.md): three correct kernels
//! unlike the reference and the `reference/slow/` variant, each with the
//! verdict it must get and the timed check it brackets. The corpus test
//! `every_timed_check_has_a_family` needs them for every timed check, so
//! without them the workspace's tests fail until the author writes them; the
//! author grows the family from here (docs/authoring.md, section 5).

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context, Result};

use crate::author::shape::Shape;

/// The corpus's table, relative to the workspace root.
pub const TABLE: &str = "grader/tests/variants/expected.json";

/// A correct case: the name after `<folder>-`, what it varies, its kernel's
/// template (`None`: the exercise's style variant, which the case points at).
struct Correct {
    suffix: &'static str,
    what: &'static str,
    template: Option<&'static str>,
}

/// The slow case's expected verdict on the simulator and the GPU.
struct Slow {
    what: &'static str,
    sim: &'static str,
    gpu: &'static str,
    check: &'static str,
    says: &'static [&'static str],
}

/// What the family needs of a new exercise's names (given by
/// `new_exercise`, which this module does not import).
pub struct Naming<'a> {
    pub id: &'a str,
    pub folder: &'a str,
    pub kernel: &'a str,
    pub shape: Shape,
    /// The shape's style variant (`exercises/<folder>/calibration/…`), a
    /// correct case too: its row points at the file (`files`).
    pub style_file: &'a str,
    /// Fills a template's placeholders.
    pub fill: &'a dyn Fn(&str) -> String,
}

/// Three correct cases, each `(suffix, what, template)`.
fn correct(cases: [(&'static str, &'static str, Option<&'static str>); 3]) -> [Correct; 3] {
    cases.map(|(suffix, what, template)| Correct { suffix, what, template })
}

/// A slow case that a structure check (`check`) fails on every backend.
fn structure_slow(what: &'static str, check: &'static str, says: &'static [&'static str]) -> Slow {
    Slow { what, sim: "structure", gpu: "structure", check, says }
}

fn family(names: &Naming) -> ([Correct; 3], Slow) {
    match names.shape {
        Shape::Linear => (
            correct([
                (
                    "early-return",
                    "an early return, unsigned indices, the doubling as an addition",
                    Some(include_str!("template/variant_a.cu.tmpl")),
                ),
                (
                    "wide-index",
                    "64-bit indices and pointers advanced to the element",
                    Some(include_str!("template/variant_b.cu.tmpl")),
                ),
                ("grid-stride", "a grid-stride loop, __restrict__ and __ldg", None),
            ]),
            // No structure check: without a GPU the timed check is left out
            // (cuda-lab.toml's own-runs policy), on the GPU it is too slow.
            Slow {
                what:
                    "reference/slow: a chunk of 32 elements per thread. Correct; uncoalesced (32 sectors per request)",
                sim: "pass",
                gpu: "too-slow",
                check: "perf::share-of-copy",
                says: &[],
            },
        ),
        Shape::Rows => (
            correct([
                (
                    "unrolled-interleaved",
                    "the row's loop unrolled by two, a 64-bit row pointer, the tree with interleaved addressing",
                    Some(include_str!("template/rows/variant_a.cu.tmpl")),
                ),
                (
                    "shuffle-tail",
                    "an early return for rows past the end, the last warp of the tree done with shuffles",
                    Some(include_str!("template/rows/variant_b.cu.tmpl")),
                ),
                ("warp-shuffles", "__restrict__, __ldg, warp shuffles and one shared word per warp", None),
            ]),
            structure_slow(
                "reference/slow: thread 0 of each block walks its row alone. Correct; measured: 1 active lane per load",
                "structure::coalesced",
                &["active lanes per global load"],
            ),
        ),
        Shape::Tiles2d => (
            correct([
                (
                    "flat-thread-index",
                    "the block's threads flattened and split again, unsigned indices, an early return",
                    Some(include_str!("template/tiles-2d/variant_a.cu.tmpl")),
                ),
                (
                    "row-pointers",
                    "row pointers with 64-bit offsets, one early return per dimension",
                    Some(include_str!("template/tiles-2d/variant_b.cu.tmpl")),
                ),
                ("grid-stride", "2-D grid-stride loops, __restrict__ and __ldg", None),
            ]),
            structure_slow(
                "reference/slow: the column from threadIdx.y. Correct; measured: 16 sectors per request instead of 4",
                "structure::coalesced",
                &["sectors per global load request"],
            ),
        ),
    }
}

/// The family of one new exercise, to be written into the corpus at `root`.
pub struct Scaffold<'a> {
    root: PathBuf,
    names: &'a Naming<'a>,
}

impl<'a> Scaffold<'a> {
    /// `None` where the workspace has no variants corpus (the students'
    /// template, a scratch workspace). Refuses cases that exist already.
    pub fn new(root: &Path, names: &'a Naming<'a>) -> Result<Option<Self>> {
        let table = root.join(TABLE);
        if !table.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&table)?;
        let parsed: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{TABLE} does not parse"))?;
        let scaffold = Self { root: root.to_path_buf(), names };
        let cases = parsed.get("cases").and_then(|c| c.as_object()).context("expected.json has no `cases`")?;
        for name in scaffold.case_names() {
            ensure!(!cases.contains_key(&name), "{TABLE} has a case `{name}` already: nothing was written");
        }
        Ok(Some(scaffold))
    }

    fn case_names(&self) -> Vec<String> {
        let (correct, _) = family(self.names);
        let mut names: Vec<String> = correct.iter().map(|c| self.case(c.suffix)).collect();
        names.push(self.case("slow"));
        names
    }

    fn case(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.names.folder)
    }

    /// The correct cases' own kernels (not the style variant's): path from the root, text.
    pub fn files(&self) -> Vec<(String, String)> {
        let n = self.names;
        let (correct, _) = family(n);
        correct
            .iter()
            .filter_map(|c| Some((c, c.template?)))
            .map(|(c, template)| {
                let rel = format!(
                    "grader/tests/variants/{}/exercises/{}/kernels/{}.cu",
                    self.case(c.suffix),
                    n.folder,
                    n.kernel
                );
                (rel, (n.fill)(template))
            })
            .collect()
    }

    /// The four rows of expected.json, in the table's own layout.
    pub fn rows(&self) -> String {
        let n = self.names;
        let (correct, slow) = family(n);
        let q = |s: &str| serde_json::to_string(s).expect("a string");
        let key = format!("{}/{}", n.id, n.kernel);
        let family = format!("{key}/perf::share-of-copy");
        let mut rows = Vec::new();
        let file = format!("{}/kernels/{}.cu", n.folder, n.kernel);
        for c in &correct {
            // The style variant's case points at it: no kernel held twice.
            let points = match c.template {
                Some(_) => String::new(),
                None => format!(",\n      \"files\": {{\n        {}: {}\n      }}", q(&file), q(n.style_file)),
            };
            rows.push(format!(
                "    {}: {{\n      \"what\": {},\n      \"calibrates\": [\n        {}\n      ],\n      \"role\": \"correct\",\n      \
                 \"parts\": {{\n        {}: {{\n          \"sim\": \"pass\",\n          \"gpu\": \"pass\"\n        }}\n      }}{points}\n    }}",
                q(&self.case(c.suffix)),
                q(c.what),
                q(&family),
                q(&key)
            ));
        }
        let says = if slow.says.is_empty() {
            String::new()
        } else {
            let phrases: Vec<String> = slow.says.iter().map(|s| format!("            {}", q(s))).collect();
            format!(",\n          \"says\": [\n{}\n          ]", phrases.join(",\n"))
        };
        rows.push(format!(
            "    {}: {{\n      \"what\": {},\n      \"calibrates\": [\n        {}\n      ],\n      \"role\": \"slow\",\n      \
             \"parts\": {{\n        {}: {{\n          \"sim\": {},\n          \"gpu\": {},\n          \"check\": {}{says}\n        \
             }}\n      }},\n      \"slow_files\": {{\n        {}: {}\n      }}\n    }}",
            q(&self.case("slow")),
            q(slow.what),
            q(&family),
            q(&key),
            q(slow.sim),
            q(slow.gpu),
            q(slow.check),
            q(&file),
            q(&file)
        ));
        rows.join(",\n")
    }

    /// Appends [`Self::rows`] to the table's cases, keeping every other byte.
    pub fn add_rows(&self) -> Result<()> {
        let path = self.root.join(TABLE);
        let text = std::fs::read_to_string(&path)?;
        let body = text.trim_end();
        let cases_end = body
            .strip_suffix('}')
            .map(str::trim_end)
            .and_then(|b| b.strip_suffix('}'))
            .context("expected.json does not end with the `cases` object")?;
        let cases_end = cases_end.trim_end();
        let comma = if cases_end.ends_with('{') { "" } else { "," };
        let out = format!("{cases_end}{comma}\n{}\n  }}\n}}\n", self.rows());
        let parsed: serde_json::Value = serde_json::from_str(&out).context("expected.json with the new cases")?;
        ensure!(parsed["cases"].get(self.case("slow")).is_some(), "the new cases are not in `cases`");
        std::fs::write(&path, out)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names of `ex42-row-sum` (new_exercise's, written out: this module
    /// does not import it).
    fn naming(shape: Shape) -> Naming<'static> {
        Naming {
            id: "ex42",
            folder: "ex42-row-sum",
            kernel: "row_sum",
            shape,
            style_file: "exercises/ex42-row-sum/calibration/row_sum_style.cu",
            fill: &|t: &str| {
                t.replace("{{id}}", "ex42").replace("{{part}}", "row_sum").replace("{{kernel}}", "row_sum")
            },
        }
    }

    fn corpus(cases: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("grader/tests/variants")).unwrap();
        std::fs::write(tmp.path().join(TABLE), format!("{{\n  \"schema\": \"x\",\n  \"cases\": {{{cases}\n  }}\n}}\n"))
            .unwrap();
        tmp
    }

    #[test]
    fn every_shape_adds_a_family_of_three_correct_and_one_slow() {
        for shape in [Shape::Linear, Shape::Rows, Shape::Tiles2d] {
            let tmp = corpus("\n    \"old\": {\n      \"parts\": {}\n    }");
            let naming = naming(shape);
            let scaffold = Scaffold::new(tmp.path(), &naming).unwrap().unwrap();
            assert_eq!(scaffold.files().len(), 2, "the style variant's case points at its file");
            for (rel, text) in scaffold.files() {
                assert!(rel.ends_with("/exercises/ex42-row-sum/kernels/row_sum.cu"), "{rel}");
                assert!(text.contains("void row_sum(") && !text.contains("{{"), "{rel}");
            }
            scaffold.add_rows().unwrap();
            let text = std::fs::read_to_string(tmp.path().join(TABLE)).unwrap();
            assert!(text
                .starts_with("{\n  \"schema\": \"x\",\n  \"cases\": {\n    \"old\": {\n      \"parts\": {}\n    },\n"));
            let table: serde_json::Value = serde_json::from_str(&text).unwrap();
            let cases = table["cases"].as_object().unwrap();
            assert_eq!(cases.len(), 5, "{shape:?}");
            let roles: Vec<&str> = cases.values().filter_map(|c| c["role"].as_str()).collect();
            assert_eq!(roles.iter().filter(|&&r| r == "correct").count(), 3, "{shape:?}");
            assert_eq!(roles.iter().filter(|&&r| r == "slow").count(), 1, "{shape:?}");
            for case in cases.iter().filter(|(k, _)| k.starts_with("ex42-")).map(|(_, c)| c) {
                assert_eq!(case["calibrates"][0], "ex42/row_sum/perf::share-of-copy");
                assert!(case["parts"]["ex42/row_sum"]["gpu"].is_string());
            }
            let pointing: Vec<&serde_json::Value> = cases.values().filter_map(|c| c.get("files")).collect();
            assert_eq!(pointing.len(), 1, "{shape:?}");
            assert_eq!(
                pointing[0]["ex42-row-sum/kernels/row_sum.cu"],
                "exercises/ex42-row-sum/calibration/row_sum_style.cu"
            );
            let slow = &cases["ex42-row-sum-slow"];
            assert_eq!(slow["slow_files"]["ex42-row-sum/kernels/row_sum.cu"], "ex42-row-sum/kernels/row_sum.cu");
            // Once more: refused.
            assert!(Scaffold::new(tmp.path(), &naming).is_err());
        }
    }

    #[test]
    fn an_empty_table_gets_its_first_cases() {
        let tmp = corpus("");
        Scaffold::new(tmp.path(), &naming(Shape::Linear)).unwrap().unwrap().add_rows().unwrap();
        let table: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join(TABLE)).unwrap()).unwrap();
        assert_eq!(table["cases"].as_object().unwrap().len(), 4);
    }
}
