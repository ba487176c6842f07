//! The student's loop, end to end on the simulator: `grader watch` in a real
//! terminal (tmux) through edit -> re-grade -> fixed; progress and hints; the
//! HTML report's charts for a failing and a passing run; the report in headless
//! Chromium with a screenshot checked; the coalescing lab's curves.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use grader::report::{GradeReport, Status};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn nvrtc_available() -> bool {
    let ok = support::nvrtc_available();
    if !ok {
        eprintln!("skipped: NVRTC is not installed (the grader cannot compile .cu files here)");
    }
    ok
}

fn grader(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grader")).args(args).output().expect("grader runs")
}

/// A student's checkout who has solved everything (the reference kernels in
/// place of the stubs), with some files replaced.
fn student_root(files: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&workspace().join("exercises"), &dir.path().join("exercises"));
    copy_tree(&workspace().join("reference"), &dir.path().join("exercises"));
    // A student's checkout holds reference/: the report grades it on the run's own inputs.
    copy_tree(&workspace().join("reference"), &dir.path().join("reference"));
    for (rel, text) in files {
        std::fs::write(dir.path().join(rel), text).unwrap();
    }
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else if e.file_type().is_file() && !e.path().components().any(|c| c.as_os_str() == "target") {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

fn reference(rel: &str) -> String {
    std::fs::read_to_string(workspace().join("reference").join(rel)).unwrap()
}

/// The reference with one deliberate change (asserted to apply).
fn broken(rel: &str, from: &str, to: &str) -> (String, String) {
    let text = reference(rel);
    assert!(text.contains(from), "{rel} no longer contains `{from}`");
    (format!("exercises/{rel}"), text.replacen(from, to, 1))
}

fn grade(root: &Path, exercises: &[&str]) -> (Output, GradeReport) {
    let mut args: Vec<&str> = exercises.to_vec();
    let root_s = root.to_str().unwrap();
    args.extend(["--backend", "sim", "--seed", "3", "--root", root_s]);
    let out = grader(&args);
    let json = root.join("target/grades").join(format!("{}.json", exercises.join("-")));
    let report = serde_json::from_slice(
        &std::fs::read(&json).unwrap_or_else(|_| panic!("no JSON; output:\n{}", String::from_utf8_lossy(&out.stdout))),
    )
    .unwrap();
    (out, report)
}

/// Kernels with bugs a student makes: an edge tile loaded wrongly (matrix), the
/// last positions of the DNA string skipped (vector).
fn failing_files() -> Vec<(String, String)> {
    vec![
        broken("ex03-matmul/kernels/matmul_rect.cu", "col < n)", "col < n - 3)"),
        broken("ex04-dna/kernels/search_v1.cu", "p > n - SEQ_LEN", "p > n - SEQ_LEN - 3"),
    ]
}

fn charts(html: &str, kind: &str) -> usize {
    html.matches(&format!("data-chart=\"{kind}\"")).count()
}

#[test]
fn report_draws_every_chart_for_a_failing_and_a_passing_run() {
    if !nvrtc_available() {
        return;
    }
    let files = failing_files();
    let files: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
    let failing = student_root(&files);
    let (out, report) = grade(failing.path(), &["ex03", "ex04"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let page_path = failing.path().join("target/grades/report.html");
    assert!(stdout.contains(&format!("file://{}", page_path.canonicalize().unwrap().display())), "linked:\n{stdout}");
    let html = std::fs::read_to_string(&page_path).unwrap();
    let rect = report.exercises[0].parts.iter().find(|p| p.name == "rect").unwrap();
    assert!(rect.tests.iter().any(|t| t.status == Status::Fail && t.mismatches.is_some()), "mismatches recorded");
    // Memory against the reference, one warp's sectors, resources: for every part that ran.
    assert!(charts(&html, "memory") >= 6, "a memory chart per part");
    assert!(!html.contains("no reference figures"), "the shipped reference profiles match the test names");
    assert!(charts(&html, "warp") >= 6, "a warp picture per part");
    assert!(charts(&html, "resources") >= 6, "resources per part");
    // Wrong outputs: a heat map for the product, a strip with marks for DNA.
    assert!(html.contains("data-chart=\"mismatch\"><svg"), "{}", &html[..200]);
    let mismatch_figures: Vec<&str> = html.split("data-chart=\"mismatch\"").skip(1).collect();
    assert!(mismatch_figures.iter().any(|f| f.contains("`P` (") && f.contains("in red")), "heat map of P");
    assert!(mismatch_figures.iter().any(|f| f.contains("positions answered wrongly")), "DNA positions marked");
    assert!(html.contains("<p><b>first failure</b> <code>ex03::rect::correct::"), "first failure shown");
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count(), "every chart closed");
    assert_eq!(html.matches("<figure").count(), html.matches("</figure>").count());

    // Passing: the same charts but no mismatch picture.
    let passing = student_root(&[(
        "exercises/ex03-matmul/kernels/matmul_tiled.cu",
        reference("ex03-matmul/kernels/matmul_tiled.cu"),
    )]);
    let (_, report) = grade(passing.path(), &["ex03"]);
    let mut tiled = report.clone();
    tiled.exercises[0].parts.retain(|p| p.name == "tiled");
    assert!(tiled.exercises[0].parts[0].tests.iter().all(|t| t.status != Status::Fail));
    let html = std::fs::read_to_string(passing.path().join("target/grades/report.html")).unwrap();
    let tiled_section = html.split("id=\"ex03-tiled\"").nth(1).unwrap().split("<section").next().unwrap();
    for kind in ["memory", "warp", "resources"] {
        assert_eq!(charts(tiled_section, kind), 1, "{kind} in the passing part");
    }
    assert_eq!(charts(tiled_section, "mismatch"), 0);
    assert!(tiled_section.contains("Timed checks did not run here"), "says why there are no timing bars");

    // Timing bars come from `perf` (a GPU run): drawn from the JSON as it is.
    let t = tiled.exercises[0].parts[0].tests.iter_mut().find(|t| t.kind == kit::CheckKind::Performance).unwrap();
    t.status = Status::Fail;
    t.perf = Some(kit::perf::PerfFigures {
        kind: "speedup".into(),
        value: 1.1,
        threshold: 1.25,
        student: 10.0,
        baseline: 11.0,
        unit: "ms".into(),
        baseline_name: "naive".into(),
        threshold_from: None,
        margin: None,
    });
    let page = grader::html::render(&tiled, &grader::html::Extras::default());
    assert_eq!(charts(&page, "timing"), 1);
    assert!(page.contains("needs &lt;= 8.80 ms"), "threshold drawn in the student's unit");
}

#[test]
fn report_opens_in_headless_chromium_and_the_screenshot_is_not_blank() {
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
    else {
        eprintln!("skipped: no chromium installed (apt-get install chromium; CI installs it)");
        return;
    };
    if !nvrtc_available() {
        return;
    }
    let files = failing_files();
    let files: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
    let root = student_root(&files);
    grade(root.path(), &["ex03"]);
    let page = root.path().join("target/grades/report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"), "no JavaScript");
    // Off a GPU (the default policy leaves the timed checks out): the header
    // says so, and no left-out check reads "0.00 / 0.00".
    assert!(html.contains(" graded here (") && html.contains("points need a GPU</span>"), "the header");
    assert!(html.contains("(needs a GPU)") && !html.contains("<td>0.00 / 0.00</td>"), "the left-out checks' worth");
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("url("), "nothing fetched");

    let profile = tempfile::tempdir().unwrap();
    let shot = root.path().join("shot.png");
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
            "--window-size=1100,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed:\n{log}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE") || l.contains("Uncaught")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");

    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).expect("a screenshot")));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1100, 1600));
    let px = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    let ink = pixels.iter().filter(|p| p[..3].iter().any(|&c| c < 200)).count();
    let red = pixels.iter().filter(|p| p[0] > 180 && p[1] < 120 && p[2] < 120).count();
    let blue = pixels.iter().filter(|p| p[2] > 180 && p[0] < 100).count();
    assert!(ink * 100 > pixels.len(), "text and charts drawn: {ink} of {} pixels", pixels.len());
    assert!(red > 500 && blue > 500, "the student's (red) and reference (blue) bars are drawn: {red} red, {blue} blue");
}

#[test]
fn status_lists_every_part_and_hints_unfold_one_level_at_a_time() {
    if !nvrtc_available() {
        return;
    }
    let files = failing_files();
    let files: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
    let root = student_root(&files);
    let r = root.path().to_str().unwrap();
    let fresh = String::from_utf8(grader(&["--root", r]).stdout).unwrap();
    let parts: usize = grader::registry::all().iter().map(|e| e.parts.len()).sum();
    assert!(fresh.contains(&format!("0 of {parts} parts done")), "{fresh}");
    assert!(String::from_utf8(grader(&["hint", "ex03", "--root", r]).stdout)
        .unwrap()
        .contains("run `cargo run -p grader -- ex03` first"));

    grade(root.path(), &["ex03"]);
    let status = String::from_utf8(grader(&["status", "--root", r]).stdout).unwrap();
    for line in ["✓ naive", "✗ rect", "· stencil", "· global"] {
        assert!(status.contains(line), "`{line}` missing:\n{status}");
    }
    assert!(status.contains("ex03::rect::correct::"), "the first failure is named:\n{status}");
    // The newest run wins: fix rect and grade it alone.
    std::fs::write(
        root.path().join("exercises/ex03-matmul/kernels/matmul_rect.cu"),
        reference("ex03-matmul/kernels/matmul_rect.cu"),
    )
    .unwrap();
    let hint = |part: &str| {
        let mut args = vec!["hint", "ex03", "--root", r];
        if !part.is_empty() {
            args.push(part);
        }
        String::from_utf8(grader(&args).stdout).unwrap()
    };
    let first = hint("");
    assert!(first.starts_with("Hint 1 of 3 for ex03::rect::correct::"), "{first}");
    assert!(first.contains("double precision"), "level 1 says what the check measures:\n{first}");
    // The footer names the command a student types.
    assert!(first.contains("(`cargo run -p grader -- hint ex03` again for hint 2 of 3)"), "{first}");
    assert!(hint("").starts_with("Hint 2 of 3"));
    let third = hint("rect");
    assert!(third.starts_with("Hint 3 of 3") && third.contains("usual bugs"), "{third}");
    assert!(hint("rect").contains("that was the last hint"));
    assert!(hint("naive").contains("Nothing fails"));

    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(["ex03", "--part", "rect", "--backend", "sim", "--root", r])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let status = String::from_utf8(grader(&["--root", r]).stdout).unwrap();
    assert!(status.contains("✓ rect"), "the newer result wins:\n{status}");
}

#[test]
fn every_check_of_every_exercise_has_hints() {
    for e in grader::registry::all() {
        let path = grader::student::hint::hints_path(&workspace(), &e);
        let file = grader::student::hint::HintFile::read(&path).unwrap();
        for h in &file.hints {
            assert!(h.levels.len() >= 3, "{}: a hint for {}::{} needs three levels", path.display(), h.part, h.kind);
            assert!(
                h.part == "*" || e.parts.iter().any(|p| p.name == h.part),
                "{}: no part `{}`",
                path.display(),
                h.part
            );
        }
        for p in &e.parts {
            for c in &p.checks {
                let name = e.test_name(p, c);
                assert!(file.find(&name).is_some(), "no hint for {name} in {}", path.display());
            }
        }
    }
}

/// Waits until the tmux pane's screen satisfies `ok` (or fails with the screen).
fn wait_until(session: &str, what: &str, secs: u64, ok: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let out = Command::new("tmux").args(["capture-pane", "-p", "-t", session]).output().unwrap();
        let screen = String::from_utf8_lossy(&out.stdout).to_string();
        if ok(&screen) {
            return screen;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            panic!("{what} did not appear within {secs} s; the screen:\n{screen}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn wait_for(session: &str, want: &str, secs: u64) -> String {
    wait_until(session, &format!("`{want}`"), secs, |s| s.contains(want))
}

/// Stops the tmux session when the test ends, passed or not.
struct Tmux(String);
impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["kill-session", "-t", &self.0]).output();
    }
}

#[test]
fn watch_regrades_on_save_from_failing_to_fixed() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (apt-get install tmux; CI installs it)");
        return;
    }
    if !nvrtc_available() {
        return;
    }
    let stub = support::shipped("exercises/ex05-stencil/kernels/stencil.cu");
    let root = student_root(&[("exercises/ex05-stencil/kernels/stencil.cu", stub)]);
    let session = format!("cuda-lab-watch-{}", std::process::id());
    let _guard = Tmux(session.clone());
    let cmd = format!(
        "{} watch ex05 --backend sim --root {}; echo watch-exited-$?; sleep 60",
        env!("CARGO_BIN_EXE_grader"),
        root.path().display()
    );
    let mut tmux = Command::new("tmux");
    tmux.args(["new-session", "-d", "-s", &session, "-x", "120", "-y", "40", &cmd]);
    // The grader finds NVRTC through the same environment as this test.
    for var in ["LD_LIBRARY_PATH", "CUDA_LAB_REQUIRE_NVRTC", "PATH", "HOME"] {
        if let Some(v) = std::env::var_os(var) {
            tmux.env(var, v);
        }
    }
    assert!(tmux.status().unwrap().success(), "tmux starts");
    // The stub fails; the first failure comes first, then the score line.
    let screen = wait_for(&session, "score 0.00", 60);
    let failure = screen.find("FAILED ex05::stencil::correct::").expect("the first failure is shown");
    assert!(failure < screen.find("score 0.00").unwrap(), "first failure before the score:\n{screen}");
    assert!(screen.contains("never written"), "{screen}");

    // `h` unfolds the first hint under the screen.
    Command::new("tmux").args(["send-keys", "-t", &session, "h"]).status().unwrap();
    wait_for(&session, "Hint 1 of 3 for ex05::stencil::correct::", 20);

    // Edit: a half-fixed kernel (writes every output, but no halo), saved ->
    // re-graded -> still failing, now on wrong values rather than unwritten ones.
    let file = root.path().join("exercises/ex05-stencil/kernels/stencil.cu");
    let fixed = reference("ex05-stencil/kernels/stencil.cu");
    let (_, half) = broken(
        "ex05-stencil/kernels/stencil.cu",
        "tmp[BLOCK_SIZE + t] = in[base + BLOCK_SIZE + t];",
        "tmp[BLOCK_SIZE + t] = 0;",
    );
    std::fs::write(&file, &half).unwrap();
    let screen = wait_until(&session, "a re-grade of the half-fixed kernel", 60, |s| {
        s.contains("FAILED ex05::stencil::correct::") && !s.contains("never written") && s.contains("score ")
    });
    assert!(screen.contains("✗ stencil"), "{screen}");
    // Edit again: fixed.
    std::fs::write(&file, &fixed).unwrap();
    let screen = wait_for(&session, "Every check that ran passed.", 60);
    assert!(screen.contains("✓ stencil"), "{screen}");
    assert!(screen.contains("report: file://"), "{screen}");

    Command::new("tmux").args(["send-keys", "-t", &session, "q"]).status().unwrap();
    wait_for(&session, "watch-exited-0", 10);
}

#[test]
fn coalescing_lab_draws_the_sector_curves_on_the_simulator() {
    if !nvrtc_available() {
        return;
    }
    let root = student_root(&[]);
    let out_dir = root.path().join("lab-out");
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(["lab", "coalescing", "--root", root.path().to_str().unwrap(), "--out", out_dir.to_str().unwrap()])
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(out_dir.join("lab-coalescing.csv")).unwrap();
    let spr = |kind: &str, x: u32| -> f64 {
        let row = csv.lines().find(|l| l.starts_with(&format!("{kind},{x},"))).unwrap();
        row.rsplit(',').next().unwrap().parse().unwrap()
    };
    // The notes' lesson, measured: aligned = 4 sectors, misaligned = 5, stride 2 = 8, stride >= 8 = 32.
    assert_eq!(spr("offset", 0), 4.0);
    assert_eq!(spr("offset", 1), 5.0);
    assert_eq!(spr("offset", 8), 4.0);
    assert_eq!(spr("stride", 2), 8.0);
    assert_eq!(spr("stride", 8), 32.0);
    assert_eq!(spr("stride", 32), 32.0);
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert_eq!(charts(&html, "lab"), 2, "sectors vs offset and vs stride (no bandwidth without a GPU)");
    assert!(html.contains("these need a GPU"));
}

#[test]
fn classroom_job_summary_and_html_artifact_from_a_grades_json() {
    if !nvrtc_available() {
        return;
    }
    let root = student_root(&[]);
    let r = root.path().to_str().unwrap();
    let json = root.path().join("ex05.json");
    let out = grader(&["ex05", "--backend", "none", "--root", r, "--json", json.to_str().unwrap(), "--no-report"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(!root.path().join("target/grades/report.html").exists(), "--no-report writes no page");
    let summary = root.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let html = root.path().join("artifact/report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_grader"))
        .args(["report", json.to_str().unwrap(), "--format", "summary", "--html", html.to_str().unwrap()])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.starts_with("earlier step\n## cuda-lab: "), "appended, not overwritten:\n{md}");
    assert!(md.contains("| ex05 | stencil |"), "{md}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("id=\"ex05-stencil\"") && page.contains("data-chart=\"resources\""), "the artifact's page");
}
