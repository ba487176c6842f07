//! `grader watch [exNN]`: re-grades the exercise whose `.cu` was saved, clears
//! the screen, and shows the first failure first and the score line. `q` quits,
//! `h` shows the next hint. Each grading runs in a child grader process, so a
//! stuck compile or a crash never takes the watcher down.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Sender};
use std::time::Duration;

use anyhow::{Context, Result};
use crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, terminal};
use kit::Exercise;
use notify_debouncer_mini::{new_debouncer, notify::RecursiveMode, DebounceEventResult};

use super::status::{cut, state_of, State};
use crate::report::{CompileStatus, GradeReport, Status};

/// How long saves are gathered into one (editors write a file in several steps).
const DEBOUNCE: Duration = Duration::from_millis(300);

pub struct Options {
    pub root: PathBuf,
    /// The exercise graded at the start (and `h` talks about until another is saved).
    pub first: Option<&'static Exercise>,
    /// The grader binary to run for each grading.
    pub exe: PathBuf,
    /// Passed on to each grading (`--backend sim`, `--timeout 5`, ...).
    pub grade_args: Vec<String>,
}

enum Event {
    Saved(&'static Exercise),
    Quit,
    Hint,
}

/// Runs until `q` (or Ctrl-C, or the end of standard input).
pub fn run(opts: Options) -> Result<()> {
    let (tx, rx) = channel();
    let watched = opts.root.join("exercises");
    let save_tx = tx.clone();
    let mut debouncer = new_debouncer(DEBOUNCE, move |res: DebounceEventResult| {
        let Ok(events) = res else { return };
        let mut seen = Vec::new();
        for e in events {
            if let Some(ex) = exercise_of(&e.path).filter(|ex| !seen.contains(&ex.id)) {
                seen.push(ex.id);
                let _ = save_tx.send(Event::Saved(ex));
            }
        }
    })
    .context("starting the file watcher")?;
    debouncer
        .watcher()
        .watch(&watched, RecursiveMode::Recursive)
        .with_context(|| format!("watching {}", watched.display()))?;

    let raw = std::io::stdin().is_terminal() && terminal::enable_raw_mode().is_ok();
    spawn_keys(tx, raw);
    let screen = Screen { raw };
    let mut current = opts.first;
    match current {
        Some(ex) => screen.show(&grade(&opts, ex)),
        None => screen.show(&format!(
            "Watching {}: save a .cu file to grade its exercise.\n\nq quits · h shows a hint",
            watched.display()
        )),
    }
    // What each exercise's files held when last graded: editors touch files
    // without changing them, and a save that changes nothing is not re-graded.
    let mut graded: HashMap<&'static str, Vec<u8>> = HashMap::new();
    if let Some(ex) = opts.first {
        graded.insert(ex.id, contents(&opts.root, ex));
    }
    while let Ok(ev) = rx.recv() {
        match ev {
            Event::Quit => break,
            Event::Saved(ex) => {
                let now = contents(&opts.root, ex);
                if graded.get(ex.id) == Some(&now) {
                    continue;
                }
                current = Some(ex);
                screen.show(&format!("{} — grading…\n", ex.id));
                screen.show(&grade(&opts, ex));
                graded.insert(ex.id, now);
            }
            Event::Hint => {
                let text = match current {
                    Some(ex) => super::hint::next_hint(&opts.root, ex, None).unwrap_or_else(|e| format!("{e:#}")),
                    None => "Save a .cu file first: hints are about the exercise you are working on.".into(),
                };
                screen.print(&format!("\n{text}\n"));
            }
        }
    }
    if raw {
        let _ = terminal::disable_raw_mode();
    }
    println!();
    Ok(())
}

/// The bytes of every file the exercise grades, in order.
fn contents(root: &Path, ex: &Exercise) -> Vec<u8> {
    let dir = root.join("exercises").join(ex.folder_name());
    ex.parts.iter().flat_map(|p| std::fs::read(dir.join(p.file)).unwrap_or_default()).collect()
}

/// The exercise a saved `.cu` file belongs to.
fn exercise_of(path: &Path) -> Option<&'static Exercise> {
    if path.extension().is_none_or(|e| e != "cu") {
        return None;
    }
    let s = path.to_string_lossy();
    super::exercises().iter().find(|e| s.contains(&format!("/{}/", e.folder_name())))
}

fn spawn_keys(tx: Sender<Event>, raw: bool) {
    std::thread::spawn(move || {
        if raw {
            while let Ok(ev) = event::read() {
                if let TermEvent::Key(k) = ev {
                    if k.kind != KeyEventKind::Press {
                        continue;
                    }
                    let ev = match k.code {
                        KeyCode::Char('q') | KeyCode::Esc => Event::Quit,
                        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Event::Quit,
                        KeyCode::Char('h') => Event::Hint,
                        _ => continue,
                    };
                    let quit = matches!(ev, Event::Quit);
                    if tx.send(ev).is_err() || quit {
                        return;
                    }
                }
            }
        } else {
            // Not a terminal (a pipe, a test): one command per line.
            let mut line = String::new();
            while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
                let ev = match line.trim() {
                    "q" => Event::Quit,
                    "h" => Event::Hint,
                    _ => {
                        line.clear();
                        continue;
                    }
                };
                line.clear();
                if tx.send(ev).is_err() {
                    return;
                }
            }
            let _ = tx.send(Event::Quit);
        }
    });
}

struct Screen {
    raw: bool,
}

impl Screen {
    fn show(&self, text: &str) {
        let mut out = std::io::stdout();
        if self.raw {
            let _ = execute!(out, terminal::Clear(terminal::ClearType::All), cursor::MoveTo(0, 0));
        } else {
            let _ = write!(out, "\x1b[2J\x1b[H");
        }
        self.print(text);
    }

    /// In raw mode a newline does not return the carriage.
    fn print(&self, text: &str) {
        let mut out = std::io::stdout();
        let text = if self.raw { text.replace('\n', "\r\n") } else { text.to_string() };
        let _ = write!(out, "{text}");
        let _ = out.flush();
    }
}

/// Grades `ex` in a child grader and renders the screen from its JSON.
fn grade(opts: &Options, ex: &Exercise) -> String {
    let json = opts.root.join("target").join("grades").join(format!("{}.json", ex.id));
    let started = std::time::Instant::now();
    let out = Command::new(&opts.exe)
        .arg(ex.id)
        .arg("--root")
        .arg(&opts.root)
        .arg("--json")
        .arg(&json)
        .args(&opts.grade_args)
        .stdin(Stdio::null())
        .output();
    let secs = started.elapsed().as_secs_f64();
    let out = match out {
        Ok(o) => o,
        Err(e) => return format!("could not start the grader {}: {e}", opts.exe.display()),
    };
    let report = std::fs::read(&json).ok().and_then(|b| serde_json::from_slice::<GradeReport>(&b).ok());
    match report {
        Some(r) if is_recent(&r, secs) => screen(&r, ex, secs, &opts.root),
        _ => {
            let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = text.lines().rev().take(30).collect();
            format!(
                "{} — grading did not finish ({}):\n\n{}\n\nq quits · h shows a hint",
                ex.id,
                out.status,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )
        }
    }
}

/// The run just made wrote this JSON (not a stale one from before).
fn is_recent(r: &GradeReport, took_secs: f64) -> bool {
    let Ok(t) = humantime::parse_rfc3339(&r.finished_at) else { return false };
    t.elapsed().is_ok_and(|age| age.as_secs_f64() <= took_secs + 2.0)
}

/// The screen after one grading: the first failure first, then the parts, then the score.
pub fn screen(r: &GradeReport, ex: &Exercise, secs: f64, root: &Path) -> String {
    let mut s = format!("{} {} — graded in {secs:.1} s (seed {})\n\n", ex.id, ex.title, r.seed);
    let parts = r.exercises.iter().flat_map(|e| &e.parts);
    let first_failure = parts.clone().find_map(|p| {
        if p.compile.missing {
            return Some(p.compile.message.clone().unwrap_or_default());
        }
        if p.compile.status == CompileStatus::Error {
            let diag = p.compile.diagnostics.first().map(|d| d.to_string());
            return Some(format!(
                "{} did not compile:\n{}",
                p.file,
                diag.or(p.compile.message.clone()).unwrap_or_default()
            ));
        }
        let t = p.tests.iter().find(|t| t.status == Status::Fail)?;
        Some(format!("FAILED {}\n{}", t.name, t.message.as_deref().unwrap_or("")))
    });
    match &first_failure {
        Some(f) => s += &format!("{f}\n\n"),
        None => s += "Every check that ran passed.\n\n",
    }
    for p in parts {
        let (mark, word) = match state_of(p) {
            State::Done => ("✓", "done"),
            State::Failing => ("✗", "failing"),
            State::NotStarted => ("·", "not run"),
        };
        let failed = p.tests.iter().filter(|t| t.status == Status::Fail).count();
        let need_gpu: f64 = p.tests.iter().filter_map(|t| t.not_graded.as_ref()).map(|n| n.points).sum();
        s += &format!(
            "  {mark} {:<12} {:<8} {:>6.2} / {:<6.2} {}{}\n",
            p.name,
            word,
            p.score,
            p.max_score,
            if failed > 0 { format!("{failed} failing") } else { String::new() },
            if need_gpu > 0.0 {
                format!("  ({} need a GPU)", crate::words::rounded_points(need_gpu))
            } else {
                String::new()
            }
        );
    }
    let pct = if r.max_score > 0.0 { 100.0 * r.score / r.max_score } else { 0.0 };
    let (here, elsewhere) = if r.counts.not_graded_points > 0.0 {
        (" graded here", format!("; {} need a GPU", crate::words::rounded_points(r.counts.not_graded_points)))
    } else {
        ("", String::new())
    };
    s += &format!(
        "\nscore {:.2} / {:.2}{here} ({pct:.0} %){elsewhere} · {}\n",
        r.score,
        r.max_score,
        r.counts_line().trim()
    );
    let report = crate::html::default_path(root);
    if report.exists() {
        s += &format!("report: file://{}\n", cut(&report.display().to_string(), 200));
    }
    s += "\nsave to re-grade · h shows a hint · q quits\n";
    s
}
