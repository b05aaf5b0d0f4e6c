//! The last lines that a child writes on stderr, for `doctor`: a server that
//! exits at its start says why there, and doctor quotes it. The lines still reach
//! the bridge's stderr as they came; the tail keeps a bounded number of them, each
//! cut to a bounded length and made [`printable`].

use crate::log::printable;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// How many of the last lines the tail keeps.
pub const TAIL_LINES: usize = 10;
/// How many characters of one line the tail keeps.
pub const TAIL_LINE_CHARS: usize = 300;

/// The last lines of a child's stderr, shared with whoever reads them.
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<Tail>>);

#[derive(Debug, Default)]
struct Tail {
    lines: VecDeque<String>,
    /// The line being read, cut to [`TAIL_LINE_CHARS`] bytes and a margin.
    partial: Vec<u8>,
}

impl StderrTail {
    fn lock(&self) -> MutexGuard<'_, Tail> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The last lines, oldest first, the line without its end included.
    pub fn lines(&self) -> Vec<String> {
        let tail = self.lock();
        let mut lines: Vec<String> = tail.lines.iter().cloned().collect();
        if !tail.partial.is_empty() {
            lines.push(shown(&tail.partial));
            if lines.len() > TAIL_LINES {
                lines.remove(0);
            }
        }
        lines
    }

    /// Takes what the child wrote.
    fn take(&self, bytes: &[u8]) {
        let mut tail = self.lock();
        for &byte in bytes {
            if byte == b'\n' {
                let line = shown(&std::mem::take(&mut tail.partial));
                if tail.lines.len() == TAIL_LINES {
                    tail.lines.pop_front();
                }
                tail.lines.push_back(line);
            } else if tail.partial.len() < TAIL_LINE_CHARS * 4 {
                tail.partial.push(byte);
            }
        }
    }

    /// Copies `stderr` to the bridge's stderr until its end, keeping the tail.
    pub async fn read(self, mut stderr: impl AsyncRead + Unpin) {
        let mut out = tokio::io::stderr();
        let mut buffer = [0u8; 4096];
        loop {
            match stderr.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(read) => {
                    let bytes = buffer.get(..read).unwrap_or_default();
                    let _ = out.write_all(bytes).await;
                    self.take(bytes);
                }
            }
        }
    }
}

/// A line as the tail keeps it: printable, at most [`TAIL_LINE_CHARS`] characters.
fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches('\r');
    let mut line = printable(&text.chars().take(TAIL_LINE_CHARS).collect::<String>());
    if text.chars().count() > TAIL_LINE_CHARS {
        line.push_str(" ...");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_tail_keeps_the_last_lines_cut_and_printable() {
        let tail = StderrTail::default();
        let mut text = String::new();
        for n in 0..15 {
            text.push_str(&format!("line {n}\n"));
        }
        text.push_str("\u{1b}]0;title\u{7}error: ");
        text.push_str(&"x".repeat(2000));
        tail.clone().read(text.as_bytes()).await;
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "line 6");
        assert_eq!(lines[8], "line 14");
        assert!(
            lines[9].starts_with("\\u{1b}]0;title\\u{7}error: xxx"),
            "{}",
            lines[9]
        );
        assert!(lines[9].ends_with("x ..."), "{}", lines[9]);
        assert!(lines[9].chars().count() < TAIL_LINE_CHARS + 20);
    }
}
