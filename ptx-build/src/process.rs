//! Running a helper program (python3, nvcc) without letting it hang us.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Runs `cmd` to completion, capturing stdout and stderr. `Ok(None)`: it ran
/// past `timeout` and was killed.
pub(crate) fn output_with_timeout(cmd: &mut Command, timeout: Duration) -> std::io::Result<Option<Output>> {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    // Read both pipes while waiting, or a chatty child blocks on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            let stdout = out.join().unwrap_or_default();
            let stderr = err.join().unwrap_or_default();
            return Ok(Some(Output { status, stdout, stderr }));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            // Not joining the readers: a grandchild may still hold the pipes.
            return Ok(None);
        }
        thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_times_out() {
        let out =
            output_with_timeout(Command::new("sh").args(["-c", "echo hi; echo err >&2"]), Duration::from_secs(10))
                .unwrap()
                .unwrap();
        assert_eq!(out.stdout, b"hi\n");
        assert_eq!(out.stderr, b"err\n");
        let t = Instant::now();
        assert!(output_with_timeout(Command::new("sleep").arg("5"), Duration::from_millis(200)).unwrap().is_none());
        assert!(t.elapsed() < Duration::from_secs(4));
    }
}
