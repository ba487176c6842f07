//! `grader export-template`: the students' template repository for GitHub
//! Classroom. It is this workspace with the exercise stubs, the grader and its
//! crates, a README for students and the Classroom workflow, and without the
//! instructors' material: no `reference/` (solutions), no calibration notes, no
//! instructors' tests or guides, no build output, no hidden folders but the
//! dev container (a Codespace).
//!
//! The grader builds without `reference/`: it reads reference sources only at
//! run time, with `--reference`.

use std::path::{Component, Path};

use anyhow::{bail, Context, Result};
use kit::Exercise;

/// Top-level entries of the workspace that go into the template. Anything
/// else (a new folder of solutions, say) stays out until it is added here.
pub const TOP_LEVEL: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "rustfmt.toml",
    ".gitignore",
    "cuda-lab.toml",
    // Performance thresholds per GPU model: a student's own run grades with the course's.
    "calibration",
    "exercises",
    "grader",
    "ptx-build",
    "ptx-sim",
    "docs",
    ".devcontainer",
    "scripts/devcontainer-setup.sh",
];

/// Paths under those that are for instructors only.
const INSTRUCTORS_ONLY: &[&str] = &[
    "grader/tests",
    "docs/ta-guide.md",
    "docs/classroom.md",
    "docs/gradescope",
    "docs/platforms.md",
    "docs/prairielearn",
    "docs/hostile.md",
    "docs/gpu-runs.md",
];

/// Hidden entries at the top that the template keeps: a Classroom assignment
/// opens in a Codespace with `.devcontainer/`.
const SHOWN_AT_TOP: &[&str] = &[".gitignore", ".devcontainer"];

/// Names left out wherever they appear.
fn left_out(name: &str) -> bool {
    name == "target"
        || name.to_ascii_lowercase().starts_with("reference")
        || name == "CALIBRATION.md"
        || name.ends_with(".ptx")
        || name.ends_with(".cubin")
}

const STUDENT_README: &str = include_str!("../template/README.md");

/// Where the template keeps its Classroom workflow.
pub const WORKFLOW_PATH: &str = ".github/workflows/classroom.yml";

#[derive(Debug, Default)]
pub struct Exported {
    pub files: usize,
    pub bytes: u64,
}

/// Writes the template for `exercises` (the Classroom runners) into `dest`,
/// which must not exist yet or be empty.
pub fn export(root: &Path, dest: &Path, exercises: &[Exercise]) -> Result<Exported> {
    if dest.exists() && std::fs::read_dir(dest)?.next().is_some() {
        bail!("{} is not empty: export the template into a new folder", dest.display());
    }
    let mut exported = Exported::default();
    for top in TOP_LEVEL {
        let walk = walkdir::WalkDir::new(root.join(top)).follow_links(false).sort_by_file_name();
        for entry in walk.into_iter().filter_entry(|e| keep(root, e.path())) {
            let entry = entry.with_context(|| format!("reading {}", root.join(top).display()))?;
            if !entry.file_type().is_file() {
                continue; // folders are created with their files; links are never copied
            }
            let rel = entry.path().strip_prefix(root).expect("walked under root");
            refuse_a_solution(root, rel)?;
            let to = dest.join(rel);
            std::fs::create_dir_all(to.parent().expect("a file has a folder"))?;
            exported.bytes += std::fs::copy(entry.path(), &to).with_context(|| format!("copying {}", rel.display()))?;
            exported.files += 1;
        }
    }
    for (rel, text) in [("README.md", STUDENT_README.to_string()), (WORKFLOW_PATH, classroom_workflow(exercises))] {
        let to = dest.join(rel);
        std::fs::create_dir_all(to.parent().expect("a file has a folder"))?;
        std::fs::write(&to, &text).with_context(|| format!("writing {}", to.display()))?;
        exported.files += 1;
        exported.bytes += text.len() as u64;
    }
    Ok(exported)
}

/// A kernel under `exercises/` that is its reference solution (the same text
/// but for white space) would hand the solution to every student: an
/// instructor who filled in a stub to try it exports it by mistake.
fn refuse_a_solution(root: &Path, rel: &Path) -> Result<()> {
    let Ok(in_exercises) = rel.strip_prefix("exercises") else { return Ok(()) };
    let solution = root.join("reference").join(in_exercises);
    let (Ok(stub), Ok(reference)) = (std::fs::read(root.join(rel)), std::fs::read(&solution)) else {
        return Ok(());
    };
    let text = |b: &[u8]| b.iter().filter(|c| !c.is_ascii_whitespace()).copied().collect::<Vec<u8>>();
    if text(&stub) == text(&reference) {
        bail!(
            "{} is the reference solution (the same as reference/{}): the template would give it to every \
             student. Put the stub back (`git checkout -- {}`) and export again",
            rel.display(),
            in_exercises.display(),
            rel.display()
        );
    }
    Ok(())
}

fn keep(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else { return false };
    let rel_text = rel.to_string_lossy();
    if INSTRUCTORS_ONLY.iter().any(|p| rel_text == *p) {
        return false;
    }
    rel.components().enumerate().all(|(depth, c)| match c {
        Component::Normal(name) => {
            let name = name.to_string_lossy();
            let hidden = name.starts_with('.') && !(depth == 0 && SHOWN_AT_TOP.contains(&name.as_ref()));
            !hidden && !left_out(&name)
        }
        _ => false,
    })
}

/// The Classroom workflow of the students' repositories, grading `exercises`.
/// The copy at `.github/workflows/classroom.yml` is this for every exercise
/// (a test keeps them equal).
pub fn classroom_workflow(exercises: &[Exercise]) -> String {
    let ids: Vec<&str> = exercises.iter().map(|e| e.id).collect();
    classroom_workflow_for(&ids)
}

/// [`classroom_workflow`] for exercise ids (`grader new exercise` adds one
/// that is not compiled in yet).
pub fn classroom_workflow_for(ids: &[&str]) -> String {
    let env_lines: String = ids
        .iter()
        .map(|id| format!("          {}_RESULTS: ${{{{ steps.grade.outputs.{id} }}}}\n", id.to_ascii_uppercase()))
        .collect();
    WORKFLOW_TEMPLATE.replace("{EXERCISES}", &ids.join(",")).replace("{RESULTS_ENV}\n", &env_lines)
}

const WORKFLOW_TEMPLATE: &str = r#"# GitHub Classroom autograding for the students' repositories, on a
# self-hosted runner with an NVIDIA GPU (runner labels: self-hosted, gpu).
# Written by `grader export-template`; change grader/src/template.rs, not this file.
#
# The grader is built from the course's trusted repository, never from the
# student's tree: set these organization variables (Settings > Secrets and
# variables > Actions > Variables):
#   CUDA_LAB_GRADER_REPO  owner/name of the course's repository (the job is
#                         skipped while it is unset, e.g. in that repository itself)
#   CUDA_LAB_GRADER_REF   the tag or branch to grade with (default: main)
# and, when that repository is private, the organization secret
# CUDA_LAB_GRADER_TOKEN: a token that can read it.
# Only the student's .cu files of the exercises are graded (docs/classroom.md).
#
# Every job starts clean: the runner must be ephemeral (scripts/runner/: one job
# per fresh container) unless CUDA_LAB_ALLOW_PERSISTENT_RUNNER is `true`; the
# grader is built into this job's own folder, or, when the runner offers a
# prebuilt one, run only if its SHA-256 equals CUDA_LAB_GRADER_SHA256.
name: Autograding Tests
on:
  push:
  workflow_dispatch:
  repository_dispatch:
permissions:
  checks: write
  actions: read
  contents: read
env:
  EXERCISES: {EXERCISES}
jobs:
  run-autograding-tests:
    runs-on: [self-hosted, gpu]
    if: github.actor != 'github-classroom[bot]' && vars.CUDA_LAB_GRADER_REPO != ''
    timeout-minutes: 60
    steps:
      - name: Check out the submission
        uses: actions/checkout@v4
        with:
          path: class/submission
          persist-credentials: false
      - name: Check out the grader (the course's trusted copy)
        uses: actions/checkout@v4
        with:
          repository: ${{ vars.CUDA_LAB_GRADER_REPO }}
          ref: ${{ vars.CUDA_LAB_GRADER_REF || 'main' }}
          token: ${{ secrets.CUDA_LAB_GRADER_TOKEN || github.token }}
          path: trusted-grader
          persist-credentials: false
      - name: Refuse a runner that is not ephemeral
        # One job per fresh container; otherwise a job could leave behind what
        # a later student's job runs (docs/classroom.md).
        working-directory: trusted-grader
        env:
          CUDA_LAB_ALLOW_PERSISTENT_RUNNER: ${{ vars.CUDA_LAB_ALLOW_PERSISTENT_RUNNER }}
        run: scripts/runner/check-ephemeral.sh
      - name: Build or verify the grader
        # Nothing from an earlier job is trusted: the build folder is this job's
        # own, and a prebuilt grader must match the pinned SHA-256 or the job fails.
        working-directory: trusted-grader
        env:
          CARGO_TARGET_DIR: ${{ runner.temp }}/cuda-lab-target
          CUDA_LAB_GRADER_SHA256: ${{ vars.CUDA_LAB_GRADER_SHA256 }}
          CUDA_LAB_PREBUILT_GRADER: ${{ vars.CUDA_LAB_PREBUILT_GRADER }}
        run: scripts/verify-grader.sh "$RUNNER_TEMP/grader"
      - name: Grade
        id: grade
        # Each part in its own process with a time limit, from a staged copy of
        # the .cu files only; then one step output per exercise (ex01=<base64>).
        run: |
          "$RUNNER_TEMP/grader" batch class --out "$RUNNER_TEMP/grades" --exercises "$EXERCISES" --backend cuda
          "$RUNNER_TEMP/grader" report "$RUNNER_TEMP/grades/submissions/submission.json" \
            --format classroom --github-output "$GITHUB_OUTPUT"
      - name: Job summary and HTML report
        if: ${{ !cancelled() }}
        # The score table and each part's first failure on the run's page, and
        # the report with pictures as an artifact (docs/classroom.md).
        run: |
          "$RUNNER_TEMP/grader" report "$RUNNER_TEMP/grades/submissions/submission.json" \
            --format summary --html "$RUNNER_TEMP/report/report.html"
      - name: Upload the HTML report
        if: ${{ !cancelled() }}
        uses: actions/upload-artifact@v4
        with:
          name: cuda-lab-report
          path: ${{ runner.temp }}/report/report.html
          if-no-files-found: warn
      - name: Report to GitHub Classroom
        if: ${{ !cancelled() }}
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
{RESULTS_ENV}
        with:
          runners: {EXERCISES}
"#;
