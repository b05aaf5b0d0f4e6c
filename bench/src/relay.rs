//! `harness-bench relay [--whole-lines] -- <server command...>`: the floor of any
//! process between a client and a server. It passes the bytes of both directions
//! through unchanged with two blocking threads and no parsing, so `bench --floor`
//! can show what one more process on the path costs by itself, apart from what the
//! bridge does.
//!
//! With `--whole-lines` it holds each line until its newline and writes it in one
//! piece, as the bridge must (it checks a frame whole and never passes on half of
//! one): the floor of a large message, which the plain relay pipelines.
//!
//! Its own stdin and stdout may be pipes or the ends of socket pairs (`bench
//! --stdio`): blocking reads and writes serve both, and a read returns 0 at the
//! shutdown of the client's writing side as at the close of a pipe. It gives the
//! server pipes, as the bridge gives its upstream, so that the two compare.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// Starts `command`, relays stdin to it and its stdout back until its stdout ends
/// (each line whole with `whole_lines`); returns its exit code (1 when it cannot
/// start).
pub fn run(command: &[String], whole_lines: bool) -> i32 {
    let Some((program, args)) = command.split_first() else {
        eprintln!("harness-bench relay: the server command is empty");
        return 2;
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            eprintln!("harness-bench relay: cannot start {program}: {error}");
            return 1;
        }
    };
    let (Some(mut to_child), Some(mut from_child)) = (child.stdin.take(), child.stdout.take())
    else {
        return 1;
    };
    // The end of our stdin closes the child's: the thread drops its end.
    if whole_lines {
        std::thread::spawn(move || pump_lines(&mut std::io::stdin().lock(), &mut to_child));
        pump_lines(&mut from_child, &mut std::io::stdout().lock());
    } else {
        std::thread::spawn(move || pump(&mut std::io::stdin().lock(), &mut to_child));
        pump(&mut from_child, &mut std::io::stdout().lock());
    }
    child
        .wait()
        .ok()
        .and_then(|status| status.code())
        .unwrap_or(1)
}

/// Copies until the end of `from` or an error, writing each read at once.
fn pump(from: &mut impl Read, to: &mut impl Write) {
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if to.write_all(&buffer[..read]).is_err() || to.flush().is_err() {
            return;
        }
    }
}

/// Copies until the end of `from` or an error, writing each line once it is whole
/// (a rest without a newline at the end goes as it is). A line is read into a
/// buffer of its own and handed over whole, as the bridge's line reader does.
fn pump_lines(from: &mut impl Read, to: &mut impl Write) {
    let mut buffer = vec![0u8; 256 * 1024];
    let mut line = Vec::new();
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let mut rest = &buffer[..read];
        while let Some(end) = rest.iter().position(|byte| *byte == b'\n') {
            line.extend_from_slice(&rest[..=end]);
            rest = &rest[end + 1..];
            if to.write_all(&line).is_err() || to.flush().is_err() {
                return;
            }
            line = Vec::new();
        }
        line.extend_from_slice(rest);
    }
    let _ = to.write_all(&line).and_then(|()| to.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that records each `write_all` call's bytes as one piece.
    #[derive(Default)]
    struct Pieces(Vec<Vec<u8>>);

    impl Write for Pieces {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.push(bytes.to_vec());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A reader that gives its bytes in reads of `step` bytes.
    struct Chunks<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl Read for Chunks<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let take = self.step.min(self.bytes.len()).min(out.len());
            out[..take].copy_from_slice(&self.bytes[..take]);
            self.bytes = &self.bytes[take..];
            Ok(take)
        }
    }

    #[test]
    fn whole_lines_go_in_one_piece_each_however_they_are_read() {
        let input = b"{\"a\":1}\n{\"b\":\"long line\"}\n\ntail";
        for step in [1, 3, 7, input.len()] {
            let mut out = Pieces::default();
            pump_lines(&mut Chunks { bytes: input, step }, &mut out);
            let pieces: Vec<&[u8]> = out.0.iter().map(Vec::as_slice).collect();
            assert_eq!(
                pieces,
                [
                    &b"{\"a\":1}\n"[..],
                    b"{\"b\":\"long line\"}\n",
                    b"\n",
                    b"tail"
                ],
                "reads of {step} bytes"
            );
        }
    }

    #[test]
    fn the_plain_pump_writes_each_read_as_it_comes() {
        let mut out = Pieces::default();
        pump(
            &mut Chunks {
                bytes: b"ab\ncd",
                step: 2,
            },
            &mut out,
        );
        let pieces: Vec<&[u8]> = out.0.iter().map(Vec::as_slice).collect();
        assert_eq!(pieces, [&b"ab"[..], b"\nc", b"d"]);
    }
}
