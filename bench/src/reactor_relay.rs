//! `harness-bench relay --reactor -- <server command...>`: the floor of a process
//! built as the bridge is (`bench --floor --reactor`), and `relay --tasks`, the
//! same with the bridge's tasks (`bench --floor --tasks`).
//!
//! It passes each line of both directions through unchanged, whole, on a tokio
//! runtime of one thread with its stdin and stdout and the server's pipes in the
//! reactor, without parsing and without a session. `--reactor` has one task a
//! direction, which reads a line and writes it. `--tasks` hands each line on as
//! the bridge does: a reader task a direction, one middle task for both (where the
//! bridge's session is) and a writer task a direction, joined by channels of the
//! bridge's kinds. What is left between the plain relay (two blocking threads)
//! and `--reactor` is the price of the event loop; between `--reactor` and
//! `--tasks`, that of the four channel hops of a call; between `--tasks` and the
//! bridge, what the bridge itself does.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::Command;
use tokio::sync::mpsc;

use super::url_relay::{input, output};

/// Starts `command`, relays stdin to it and its stdout back, a line at a time,
/// until its stdout ends; returns its exit code (1 when it cannot start). With
/// `tasks`, each line goes through the bridge's tasks ([`relay_through_tasks`]).
pub fn run(command: &[String], tasks: bool) -> i32 {
    let Some((program, args)) = command.split_first() else {
        eprintln!("harness-bench relay: the server command is empty");
        return 2;
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("harness-bench relay: no runtime: {error}");
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
                eprintln!("harness-bench relay: cannot start {program}: {error}");
                return 1;
            }
        };
        let (Some(to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
            return 1;
        };
        // The end of our stdin closes the child's: its pump drops its end.
        if tasks {
            tokio::task::LocalSet::new()
                .run_until(relay_through_tasks(input(), output(), to_child, from_child))
                .await;
        } else {
            tokio::join!(
                pump_lines(input(), to_child),
                pump_lines(from_child, output())
            );
        }
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

/// The capacities of the bridge's channels: VS Code's lines to the session, the
/// server's lines to the session, and the session's frames to stdout (the channel
/// to the server is unbounded, as the bridge's).
const FROM_CLIENT: usize = 1024;
const FROM_SERVER: usize = 256;
const TO_CLIENT: usize = 1024;

/// Relays through the bridge's tasks: each line is read by the reader task of its
/// direction, passed to the middle task, then to the writer task of the other side,
/// which flushes when no more lines wait, as the bridge's writers do.
async fn relay_through_tasks(
    client_in: impl AsyncRead + Unpin + 'static,
    client_out: impl AsyncWrite + Unpin + 'static,
    server_in: impl AsyncWrite + Unpin + 'static,
    server_out: impl AsyncRead + Unpin + 'static,
) {
    let (from_client, mut client_lines) = mpsc::channel(FROM_CLIENT);
    let (from_server, mut server_lines) = mpsc::channel(FROM_SERVER);
    let (to_server, server_queue) = mpsc::unbounded_channel();
    let (to_client, client_queue) = mpsc::channel(TO_CLIENT);
    tokio::task::spawn_local(read_lines(client_in, from_client));
    tokio::task::spawn_local(read_lines(server_out, from_server));
    let server_writer = tokio::task::spawn_local(write_lines(server_in, server_queue, true));
    let client_writer = tokio::task::spawn_local(write_lines(client_out, client_queue, false));
    let middle = tokio::task::spawn_local(async move {
        // Dropped at the end of the client's input: the server's stdin closes.
        let mut to_server = Some(to_server);
        loop {
            tokio::select! {
                biased;
                line = server_lines.recv() => match line {
                    Some(line) => {
                        if to_client.send(line).await.is_err() {
                            return;
                        }
                    }
                    None => return,
                },
                line = client_lines.recv(), if to_server.is_some() => match (line, &to_server) {
                    (Some(line), Some(sender)) => {
                        let _ = sender.send(line);
                    }
                    _ => to_server = None,
                },
            }
        }
    });
    let _ = middle.await;
    let _ = tokio::join!(server_writer, client_writer);
}

/// Sends each whole line of `from` until its end.
async fn read_lines(from: impl AsyncRead + Unpin, lines: mpsc::Sender<Vec<u8>>) {
    let mut from = BufReader::with_capacity(256 * 1024, from);
    loop {
        let mut line = Vec::new();
        match from.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if lines.send(line).await.is_err() {
            return;
        }
    }
}

/// A channel of lines, bounded or not, as the writers of the bridge read them.
trait LineQueue {
    fn next(&mut self) -> impl Future<Output = Option<Vec<u8>>>;
    fn is_empty(&self) -> bool;
}

impl LineQueue for mpsc::Receiver<Vec<u8>> {
    fn next(&mut self) -> impl Future<Output = Option<Vec<u8>>> {
        self.recv()
    }

    fn is_empty(&self) -> bool {
        mpsc::Receiver::is_empty(self)
    }
}

impl LineQueue for mpsc::UnboundedReceiver<Vec<u8>> {
    fn next(&mut self) -> impl Future<Output = Option<Vec<u8>>> {
        self.recv()
    }

    fn is_empty(&self) -> bool {
        mpsc::UnboundedReceiver::is_empty(self)
    }
}

/// Writes each line of `lines`, flushing when no more wait, until the channel
/// ends; then ends the output (`shutdown`: the server's stdin) or only flushes it.
async fn write_lines(to: impl AsyncWrite + Unpin, mut lines: impl LineQueue, shutdown: bool) {
    let mut to = BufWriter::with_capacity(64 * 1024, to);
    while let Some(line) = lines.next().await {
        if write_line(&mut to, &line, lines.is_empty()).await.is_err() {
            return;
        }
    }
    let _ = if shutdown {
        to.shutdown().await
    } else {
        to.flush().await
    };
}

async fn write_line(
    to: &mut (impl AsyncWrite + Unpin),
    line: &[u8],
    flush: bool,
) -> std::io::Result<()> {
    to.write_all(line).await?;
    if flush {
        to.flush().await?;
    }
    Ok(())
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

    #[tokio::test]
    async fn through_the_tasks_each_direction_passes_unchanged() {
        use tokio::io::AsyncReadExt;
        let client_in: &[u8] = b"{\"id\":1}\n{\"id\":2,\"text\":\"long\"}\nrest";
        let answer: &[u8] = b"{\"id\":1,\"result\":{}}\n";
        let (server_in, mut server_reads) = tokio::io::duplex(1024);
        let (mut server_writes, server_out) = tokio::io::duplex(1024);
        let (client_out, mut client_reads) = tokio::io::duplex(1024);
        // A server that answers once its input has ended.
        let server = async move {
            let mut got = Vec::new();
            server_reads.read_to_end(&mut got).await.unwrap();
            server_writes.write_all(answer).await.unwrap();
            got
        };
        let relay = relay_through_tasks(client_in, client_out, server_in, server_out);
        let (to_server, ()) = tokio::task::LocalSet::new()
            .run_until(async { tokio::join!(server, relay) })
            .await;
        assert_eq!(to_server, client_in);
        let mut to_client = Vec::new();
        client_reads.read_to_end(&mut to_client).await.unwrap();
        assert_eq!(to_client, answer);
    }
}
