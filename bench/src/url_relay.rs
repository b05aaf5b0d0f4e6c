//! `harness-bench url-relay CA-FILE URL`: the floor of the URL form (`bench --floor`).
//!
//! One process between a stdio client of revision 2026-07-28 and the server at URL
//! that does only what any such process must: it reads each line, POSTs it with
//! the headers of its method ([`DirectClient`]: reqwest and rustls, the stack of
//! the bridge's URL form), and writes each response body as a line, in the order
//! they complete. No translation, no session: what is left between it and the
//! bridge is what the bridge itself does. Like the bridge, it runs on one thread,
//! with its stdin and stdout in the reactor (no thread hop a line).

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

use super::http::DirectClient;

/// Runs the relay of `args` (`CA-FILE URL`); returns the exit code: 0 at the end of
/// stdin, 2 for bad arguments. A request that fails ends the process with 1.
pub fn run(args: &[String]) -> i32 {
    let [ca_file, url] = args else {
        eprintln!("harness-bench url-relay: usage: harness-bench url-relay CA-FILE URL");
        return 2;
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("harness-bench url-relay: no runtime: {error}");
            return 1;
        }
    };
    runtime.block_on(relay(ca_file, url))
}

async fn relay(ca_file: &str, url: &str) -> i32 {
    let client = match DirectClient::with_ca_file(url, ca_file) {
        Ok(client) => client,
        Err(error) => {
            eprintln!("harness-bench url-relay: {error}");
            return 1;
        }
    };
    let (bodies, mut to_write) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        let mut stdout = output();
        while let Some(body) = to_write.recv().await {
            if stdout.write_all(&body).await.is_err() || stdout.flush().await.is_err() {
                return;
            }
        }
    });
    let mut stdin = BufReader::with_capacity(64 * 1024, input());
    let mut requests = tokio::task::JoinSet::new();
    loop {
        let mut line = Vec::new();
        match stdin.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let (client, bodies) = (client.clone(), bodies.clone());
        requests.spawn(async move {
            let (method, name) = headers_of(&line);
            match client.post(&method, name.as_deref(), line).await {
                // A notification's answer (202) has no body.
                Ok((_, body)) if body.is_empty() => true,
                Ok((_, mut body)) => {
                    if body.last() != Some(&b'\n') {
                        body.push(b'\n');
                    }
                    bodies.send(body).is_ok()
                }
                Err(error) => {
                    eprintln!("harness-bench url-relay: {method}: {error}");
                    // At once: the bench then sees the end of stdout, not a call
                    // that never comes back.
                    std::process::exit(1)
                }
            }
        });
    }
    let mut code = 0;
    while let Some(done) = requests.join_next().await {
        if !matches!(done, Ok(true)) {
            code = 1;
        }
    }
    drop(bodies);
    let _ = writer.await;
    code
}

/// The method of a request line and its `Mcp-Name` (the tool or prompt name, the
/// resource URI), as a client of revision 2026-07-28 sends them.
fn headers_of(line: &[u8]) -> (String, Option<String>) {
    let frame: Value = serde_json::from_slice(line).unwrap_or_default();
    let method = frame["method"].as_str().unwrap_or_default().to_owned();
    let name = match method.as_str() {
        "tools/call" | "prompts/get" => frame["params"]["name"].as_str(),
        "resources/read" => frame["params"]["uri"].as_str(),
        _ => None,
    };
    (method, name.map(str::to_owned))
}

/// Stdin in the reactor when it is a pipe or a socket (the bench gives one or the
/// other), else tokio's, which reads on a blocking thread.
pub(super) fn input() -> Box<dyn AsyncRead + Unpin> {
    let reactor = match descriptor(std::io::stdin().as_fd()) {
        Some((fd, true)) => pipe::Receiver::from_owned_fd(fd)
            .ok()
            .map(|pipe| Box::new(pipe) as Box<dyn AsyncRead + Unpin>),
        Some((fd, false)) => {
            socket(fd).map(|socket| Box::new(socket) as Box<dyn AsyncRead + Unpin>)
        }
        None => None,
    };
    reactor.unwrap_or_else(|| Box::new(tokio::io::stdin()))
}

/// Stdout, as [`input`].
pub(super) fn output() -> Box<dyn AsyncWrite + Unpin + Send> {
    let reactor = match descriptor(std::io::stdout().as_fd()) {
        Some((fd, true)) => pipe::Sender::from_owned_fd(fd)
            .ok()
            .map(|pipe| Box::new(pipe) as Box<dyn AsyncWrite + Unpin + Send>),
        Some((fd, false)) => {
            socket(fd).map(|socket| Box::new(socket) as Box<dyn AsyncWrite + Unpin + Send>)
        }
        None => None,
    };
    reactor.unwrap_or_else(|| Box::new(tokio::io::stdout()))
}

/// A new descriptor of `fd` when it is a pipe (`true`) or a socket (`false`).
fn descriptor(fd: std::os::fd::BorrowedFd<'_>) -> Option<(OwnedFd, bool)> {
    let owned = fd.try_clone_to_owned().ok()?;
    let file_type = std::fs::File::from(owned.try_clone().ok()?)
        .metadata()
        .ok()?
        .file_type();
    if file_type.is_fifo() {
        Some((owned, true))
    } else if file_type.is_socket() {
        Some((owned, false))
    } else {
        None
    }
}

fn socket(fd: OwnedFd) -> Option<UnixStream> {
    let socket = std::os::unix::net::UnixStream::from(fd);
    socket.set_nonblocking(true).ok()?;
    UnixStream::from_std(socket).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headers_name_the_method_and_the_tool_prompt_or_resource() {
        type Headers<'a> = (&'a str, Option<&'a str>);
        let cases: [(&[u8], Headers<'_>); 4] = [
            (
                br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
                ("tools/call", Some("echo")),
            ),
            (
                br#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://a"}}"#,
                ("resources/read", Some("test://a")),
            ),
            (
                br#"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}"#,
                ("server/discover", None),
            ),
            (b"not json", ("", None)),
        ];
        for (line, (method, name)) in cases {
            let (got_method, got_name) = headers_of(line);
            assert_eq!(got_method, method);
            assert_eq!(got_name.as_deref(), name);
        }
    }
}
