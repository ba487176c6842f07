//! What a batch worker is doing when it is slow to answer or to die: each of
//! its threads' state and the kernel function it waits in (from /proc), so a
//! stall on the GPU machine can be told apart afterwards: a thread in `D`
//! inside the NVIDIA driver (a context torn down under a kernel still
//! running), one asleep on a lock file, or one simply busy.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// How long a worker may be silent before the batch notes what it is doing.
pub const REPORT_AFTER: Duration = Duration::from_secs(10);

/// One line per thread of process `pid`: id, name, state and wait channel.
/// Empty where /proc is not there (not Linux) or the process is gone.
pub fn describe(pid: u32) -> String {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return String::new() };
    let mut lines: Vec<String> = tasks
        .filter_map(|t| t.ok())
        .map(|t| {
            let dir = t.path();
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
            // "tid (name) S ...": the name may hold spaces and parentheses.
            let (name, state) = match (stat.find('('), stat.rfind(')')) {
                (Some(open), Some(close)) => {
                    (&stat[open + 1..close], stat[close + 1..].split_whitespace().next().unwrap_or("?"))
                }
                _ => ("?", "?"),
            };
            let wchan = std::fs::read_to_string(dir.join("wchan")).unwrap_or_default();
            let wchan = if wchan.is_empty() || wchan == "0" { "-".to_string() } else { wchan };
            format!("  thread {} ({name}): state {state}, waiting in {wchan}", t.file_name().to_string_lossy())
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

/// Appends `what` and the threads of `pid` to the worker's log (best effort).
pub fn note(log: &Path, pid: u32, what: &str) {
    let threads = describe(pid);
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
        let _ = writeln!(file, "---- batch: {what} (worker {pid}) ----\n{threads}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn every_thread_of_a_process_is_described() {
        let parked = std::thread::Builder::new()
            .name("parked one".into())
            .spawn(|| std::thread::park_timeout(Duration::from_secs(5)))
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let text = describe(std::process::id());
        assert!(text.lines().count() >= 2, "{text}");
        assert!(text.contains("(parked one): state S"), "{text}");
        parked.thread().unpark();
        parked.join().unwrap();
        assert_eq!(describe(u32::MAX), "", "a process that does not exist");

        let log = std::env::temp_dir().join(format!("stall-note-{}.log", std::process::id()));
        note(&log, std::process::id(), "no answer for 10 s");
        let written = std::fs::read_to_string(&log).unwrap();
        let _ = std::fs::remove_file(&log);
        assert!(written.starts_with("---- batch: no answer for 10 s (worker "), "{written}");
        assert!(written.contains("state "), "{written}");
    }
}
