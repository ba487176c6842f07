//! Capped capture of a child's output. A kernel `printf` in a loop can print
//! gigabytes; we keep the beginning (where compile errors are) and the end
//! (where the crash or the summary is), count the rest, and keep draining the
//! pipe so the child never blocks on a full one.

use std::collections::VecDeque;
use std::io::Read;

/// What was kept of one stream.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Captured {
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    /// Bytes between head and tail that were read and thrown away.
    pub dropped: u64,
}

impl Captured {
    pub fn total_bytes(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.dropped
    }

    /// The kept text, with a marker where bytes were dropped.
    pub fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            out += &format!(
                "\n[... {} bytes of output dropped: the log keeps the first and last part ...]\n",
                self.dropped
            );
        }
        out += &String::from_utf8_lossy(&self.tail);
        out
    }
}

/// Reads `reader` to its end, keeping at most `cap` bytes: the first half of
/// the cap, and the last half in a ring.
pub fn read_capped(mut reader: impl Read, cap: usize) -> Captured {
    let head_cap = cap / 2;
    let tail_cap = cap - head_cap;
    let mut captured = Captured::default();
    let mut tail: VecDeque<u8> = VecDeque::with_capacity(tail_cap.min(1 << 16));
    let mut buf = [0u8; 8192];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut chunk = &buf[..n];
        let room = head_cap - captured.head.len();
        if room > 0 {
            let take = room.min(chunk.len());
            captured.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        // Keep the last `tail_cap` bytes of (tail + chunk), counting what falls out.
        let keep_from_chunk = chunk.len().min(tail_cap);
        captured.dropped += (chunk.len() - keep_from_chunk) as u64;
        let overflow = (tail.len() + keep_from_chunk).saturating_sub(tail_cap);
        tail.drain(..overflow);
        captured.dropped += overflow as u64;
        tail.extend(&chunk[chunk.len() - keep_from_chunk..]);
    }
    captured.tail = tail.into();
    captured
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let c = read_capped(&b"hello"[..], 100);
        assert_eq!(c.text(), "hello");
        assert_eq!(c.dropped, 0);
    }

    #[test]
    fn long_output_keeps_head_and_tail_and_counts_the_rest() {
        let data: Vec<u8> = (0..10_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let c = read_capped(&data[..], 100);
        assert_eq!(c.head, &data[..50]);
        assert_eq!(c.tail, &data[data.len() - 50..]);
        assert_eq!(c.dropped, 9_900);
        assert_eq!(c.total_bytes(), 10_000);
        assert!(c.text().contains("9900 bytes of output dropped"));
    }
}
