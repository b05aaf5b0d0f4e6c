//! `harness-sim relay --reactor -- <server command...>`: the floor of a process
//! built as the bridge is (`bench --floor --reactor`).
//!
//! It passes each line of both directions through unchanged, whole, on a tokio
//! runtime of one thread with its stdin and stdout and the server's pipes in the
//! reactor: one task a direction, no parsing, no session. What is left between it
//! and the bridge is what the bridge itself does; what is left between it and the
//! plain relay (two blocking threads) is the price of the event loop.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::Command;

use super::url_relay::{input, output};

/// Starts `command`, relays stdin to it and its stdout back, a line at a time,
/// until its stdout ends; returns its exit code (1 when it cannot start).
pub fn run(command: &[String]) -> i32 {
    let Some((program, args)) = command.split_first() else {
        eprintln!("harness-sim relay: the server command is empty");
        return 2;
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("harness-sim relay: no runtime: {error}");
            return 1;
        }
    };
    runtime.block_on(async {
        let mut child = match Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
        {
            Ok(child) => child,
            Err(error) => {
                eprintln!("harness-sim relay: cannot start {program}: {error}");
                return 1;
            }
        };
        let (Some(to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
            return 1;
        };
        // The end of our stdin closes the child's: its pump drops its end.
        tokio::join!(
            pump_lines(input(), to_child),
            pump_lines(from_child, output())
        );
        child
            .wait()
            .await
            .ok()
            .and_then(|status| status.code())
            .unwrap_or(1)
    })
}

/// Copies until the end of `from` or an error, writing each line once it is whole.
async fn pump_lines(from: impl AsyncRead + Unpin, mut to: impl AsyncWrite + Unpin) {
    let mut from = BufReader::with_capacity(256 * 1024, from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if to.write_all(&line).await.is_err() || to.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_line_passes_unchanged_and_a_rest_without_a_newline_too() {
        let input: &[u8] = b"{\"a\":1}\n\n{\"b\":\"long line\"}\ntail";
        let mut out = Vec::new();
        pump_lines(input, &mut out).await;
        assert_eq!(out, input);
    }
}
