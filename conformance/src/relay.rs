//! `mcp-conformance relay PORT TOKEN`: the upstream command of the bridge in
//! every transcript.
//!
//! The bridge starts the relay as its upstream server; the relay connects to the
//! runner over loopback TCP and passes lines both ways. So the runner sees every
//! frame that the bridge writes upstream (for the wire checks of revision
//! 2026-07-28), and it either answers itself (a scripted upstream) or proxies to
//! a real `bridge-fixture-server` that it started.
//!
//! Relay to runner: `HELLO <token> <pid>` (the pid leads the process group that
//! the bridge gave its upstream), then each line of the relay's stdin as it
//! is; the end of stdin shuts the write side of the socket.
//! Runner to relay, one command per line (a data line never starts with `#`, so
//! a frame can hold anything):
//!
//! - `=<text>`: write `<text>` and a line end to stdout;
//! - `#stderr <text>`: write `<text>` to stderr (the bridge's stderr);
//! - `#exit <code>`: flush stdout and exit with `<code>` (a crash of the upstream);
//! - `#ignore-sigterm`: from now on a termination signal does not end the relay,
//!   as an upstream server that ignores it (only a kill stops it);
//! - `#close-stdout`: close stdout and keep running, as a server that can never
//!   answer again (the lines after it go nowhere);
//! - `#grandchild <ms> <text>`: start a process in the relay's process group, as
//!   a server that starts helpers; it runs until a termination signal, and then
//!   writes `<text>` to stderr after `<ms>` milliseconds of clean-up and exits.
//!
//! The end of the socket is an exit with code 0, as a server that ends.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Runs the relay; returns the exit code.
pub async fn run(port: u16, token: &str) -> i32 {
    let stream = match TcpStream::connect(("127.0.0.1", port)).await {
        Ok(stream) => stream,
        Err(error) => {
            eprintln!(
                "mcp-conformance relay: cannot connect to the runner on port {port}: {error}"
            );
            return 1;
        }
    };
    let _ = stream.set_nodelay(true);
    let (socket_in, mut socket_out) = stream.into_split();
    if socket_out
        .write_all(format!("HELLO {token} {}\n", std::process::id()).as_bytes())
        .await
        .is_err()
    {
        return 1;
    }
    // The bridge's frames to the runner, unchanged.
    tokio::spawn(async move {
        let mut stdin = BufReader::with_capacity(64 * 1024, tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            match stdin.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if socket_out.write_all(&line).await.is_err() {
                return;
            }
        }
        let _ = socket_out.shutdown().await;
    });
    let mut commands = BufReader::with_capacity(64 * 1024, socket_in);
    let mut stdout = tokio::io::stdout();
    let mut line = Vec::new();
    loop {
        line.clear();
        match commands.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => {
                let _ = stdout.flush().await;
                return 0;
            }
            Ok(_) => {}
        }
        let command = harness_sim::record::trim_line_end(&line);
        if let Some(data) = command.strip_prefix(b"=") {
            let mut out = Vec::with_capacity(data.len() + 1);
            out.extend_from_slice(data);
            out.push(b'\n');
            if stdout.write_all(&out).await.is_err() || stdout.flush().await.is_err() {
                // The bridge closed our stdout: go on reading, as a server whose
                // client went away keeps its other duties.
                continue;
            }
        } else if let Some(text) = command.strip_prefix(b"#stderr ") {
            eprintln!("{}", String::from_utf8_lossy(text));
        } else if let Some(code) = command.strip_prefix(b"#exit ") {
            let _ = stdout.flush().await;
            return String::from_utf8_lossy(code).trim().parse().unwrap_or(1);
        } else if command == b"#ignore-sigterm" {
            ignore_sigterm();
        } else if command == b"#close-stdout" {
            let _ = stdout.flush().await;
            close_stdout();
        } else if let Some(spec) = command.strip_prefix(b"#grandchild ") {
            start_grandchild(&String::from_utf8_lossy(spec));
        }
    }
}

/// Starts the process of `#grandchild <ms> <text>` in the relay's process group
/// (a shell, whose trap runs at once since it waits on a background sleep; its
/// own stderr, where it reports the sleep that the signal ended, goes nowhere). It
/// holds neither stdin nor stdout of the relay: only the stop of the group ends it.
fn start_grandchild(spec: &str) {
    let (millis, text) = spec.split_once(' ').unwrap_or((spec, ""));
    let Ok(millis) = millis.parse::<u64>() else {
        eprintln!("mcp-conformance relay: #grandchild needs milliseconds, got {millis:?}");
        return;
    };
    let script = format!(
        "exec 3>&2 2>/dev/null\ntrap 'sleep {seconds}; printf \"%s\\n\" \"$0\" >&3; exit 0' TERM\nwhile :; do sleep 1 & wait $!; done",
        seconds = millis as f64 / 1000.0
    );
    let started = std::process::Command::new("sh")
        .args(["-c", &script, text])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
    if let Err(error) = started {
        eprintln!("mcp-conformance relay: cannot start the grandchild: {error}");
    }
}

/// Puts `/dev/null` in place of stdout: the pipe to the bridge has no writer any
/// more, and the bridge reads its end.
fn close_stdout() {
    #[cfg(unix)]
    {
        let closed = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(|error| error.to_string())
            .and_then(|null| nix::unistd::dup2_stdout(&null).map_err(|error| error.to_string()));
        if let Err(error) = closed {
            eprintln!("mcp-conformance relay: cannot close stdout: {error}");
        }
    }
}

/// Replaces the default action of SIGTERM (the end of the process) with a
/// handler that does nothing.
fn ignore_sigterm() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::spawn(async move { while terminate.recv().await.is_some() {} });
            }
            Err(error) => eprintln!("mcp-conformance relay: cannot handle SIGTERM: {error}"),
        }
    }
}
