//! `bridge-fixture-server`: the upstream MCP server of the mcp-bridge-rs tests, and the
//! server that people start for a manual check in a real VS Code.
//!
//! It speaks MCP revision 2026-07-28 only, over stdio: one JSON-RPC message per line on
//! stdin and stdout, log lines on stderr (`bridge-fixture-server: <level>(<scope>): `);
//! or over Streamable HTTP with `--https` / `--http` ([`https`]): the same session and
//! dispatch, one POST per message at `/mcp`.
//! Every request carries its protocol version and client capabilities in
//! `params._meta`; tools ask for input with `InputRequiredResult` and a sealed
//! `requestState`; list changes and resource updates go to `subscriptions/listen`
//! streams. Lists have pages of [`pagination::PAGE_SIZE`] (100) items, so
//! `--many-tools 150` gives two pages of `tools/list`.
//!
//! # Driving it
//!
//! Every request needs `params._meta` with the protocol version and the client
//! capabilities of that request (the other keys are optional):
//!
//! ```json
//! {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
//!   "name": "ask_form",
//!   "_meta": {
//!     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}},
//!     "io.modelcontextprotocol/clientInfo": {"name": "a-client", "version": "1.0.0"},
//!     "io.modelcontextprotocol/logLevel": "info",
//!     "progressToken": 7
//!   }}}
//! ```
//!
//! A tool that needs input answers `resultType: "input_required"` with `inputRequests`
//! and a `requestState`; the retry (a new id) repeats the params and adds
//! `inputResponses` and the same `requestState`. List changes and resource updates come
//! only on `subscriptions/listen` streams. At the end of stdin the server ends its listen
//! streams, gives requests in flight [`END_OF_INPUT_GRACE`], and exits with 0.
//!
//! # Layout
//!
//! - `main.rs` / [`stdio`]: the executable: arguments, the misbehaving `--close-stdout`
//!   mode, the exit code.
//! - [`cli`]: the command line and its usage text.
//! - [`serve`]: the read loop of one connection and the end of input.
//! - [`wire`]: JSON-RPC frames in and out; [`outbox`]: the one ordered writer of stdio,
//!   or the routes of HTTP (one per request).
//! - [`https`]: Streamable HTTP with or without TLS, its checks and fault options.
//! - [`auth`]: the OAuth authorization server of `--auth` and the token check of `/mcp`.
//! - [`browse`] and [`fetch`]: the test browser of `--browse`, and the GET client that it
//!   shares with the fetch of client ID metadata documents.
//! - [`session`]: requests in flight, cancellation, listen streams, the switches of
//!   `toggle`; why the fixture drives its own loop and not rmcp's runtime.
//! - [`meta`]: the per-request `_meta` (-32602, -32022, -32021).
//! - [`input`] and [`state`]: multi round-trip requests and the sealed `requestState`.
//! - [`methods`]: one file per method group; [`pagination`]: pages and cursors.
//! - [`catalog`]: tools, prompts and resources of a profile; [`tools`], [`prompts`],
//!   [`resources`]: the fixture profile (study section 1); [`conformance`]: the
//!   "everything" server profile of the MCP conformance suite.
#![forbid(unsafe_code)]

pub mod auth;
pub mod browse;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod conformance;
pub mod context;
pub mod diag;
pub mod fetch;
pub mod http_body;
pub mod https;
pub mod input;
pub mod meta;
pub mod methods;
pub mod outbox;
pub mod pagination;
pub mod profiles;
pub mod prompts;
pub mod resources;
pub mod session;
pub mod state;
pub mod stdio;
pub mod switch;
pub mod tools;
pub mod wire;

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;

pub use config::{Config, Profile};

use outbox::Outbox;
use session::{Control, Session};
use state::StateCodec;
use wire::Message;

/// `serverInfo.name`.
pub const SERVER_NAME: &str = "bridge-fixture-server";
/// `serverInfo.version`.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// At the end of input, requests in flight get this long to finish (and answer) before
/// they are cancelled: a server must exit soon after its stdin closes.
pub const END_OF_INPUT_GRACE: Duration = Duration::from_millis(500);

/// How serving one connection ended.
#[derive(Debug)]
pub enum Outcome {
    /// The input ended (exit code 0).
    EndOfInput,
    /// A tool asked for the end of the process (`crash`: 3, `shutdown`: 0).
    Exit(i32),
    /// The output failed (exit code 1).
    OutputFailed(std::io::Error),
}

impl Outcome {
    /// The exit code of the executable.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::EndOfInput => 0,
            Outcome::Exit(code) => *code,
            Outcome::OutputFailed(_) => 1,
        }
    }
}

/// Serves one connection: reads messages from `input` until it ends, writes frames to
/// `output`. Tests in the same process can run it on a `tokio::io::duplex` pair.
pub async fn serve<R, W>(
    input: R,
    output: W,
    config: Config,
) -> Result<Outcome, state::StateKeyError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let states = StateCodec::new()?;
    let catalog = crate::profiles::catalog(&config);
    let (outbox, mut writer) = Outbox::spawn(output);
    let (control, mut controls) = mpsc::unbounded_channel();
    let session = Arc::new(Session::new(
        config,
        catalog,
        outbox.clone(),
        states,
        control,
    ));
    let mut reader = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        tokio::select! {
            read = reader.read_until(b'\n', &mut line) => {
                match read {
                    Ok(0) => break,
                    Ok(_) => handle_line(&session, &line),
                    Err(e) => {
                        error!("stdio", "reading the input failed: {e}");
                        break;
                    }
                }
                line.clear();
            }
            Some(Control::Exit(code)) = controls.recv() => {
                outbox.flush().await;
                return Ok(Outcome::Exit(code));
            }
            written = &mut writer => {
                let error = match written {
                    Ok(Err(e)) => e,
                    Ok(Ok(())) => std::io::Error::other("the writer stopped"),
                    Err(e) => std::io::Error::other(e.to_string()),
                };
                error!("stdio", "writing the output failed: {error}");
                return Ok(Outcome::OutputFailed(error));
            }
        }
    }
    end_of_input(&session).await;
    Ok(Outcome::EndOfInput)
}

fn handle_line(session: &Arc<Session>, line: &[u8]) {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    match wire::parse(line) {
        Ok(Message::Request(request)) => methods::request(session, request),
        Ok(Message::Notification(notification)) => methods::notification(session, notification),
        Ok(Message::BadNotification(reason)) => {
            warning!(
                "stdio",
                "ignored a notification that is not valid: {reason}"
            );
        }
        Ok(Message::Response) => warning!(
            "stdio",
            "ignored a JSON-RPC response: the server sends no requests, so the client must not send responses"
        ),
        Err(refusal) => {
            warning!("stdio", "refused an input line: {}", refusal.error.message);
            session
                .outbox
                .push(wire::error(refusal.id.as_ref(), &refusal.error));
        }
    }
}

/// The end of input: listen streams end gracefully, requests in flight get
/// [`END_OF_INPUT_GRACE`] to answer, the rest is cancelled, and the output is flushed.
async fn end_of_input(session: &Session) {
    let streams = session.end_listens("the end of the input of the server");
    let deadline = tokio::time::Instant::now() + END_OF_INPUT_GRACE;
    while session.in_flight() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let cancelled = session.cancel_all();
    session.outbox.flush().await;
    info!(
        "stdio",
        "the end of stdin: {streams} listen streams ended, {cancelled} requests cancelled"
    );
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    #[tokio::test]
    async fn serve_works_in_process_on_a_duplex_pipe_with_array_output() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let config = Config {
            array_output: true,
            ..Config::default()
        };
        let served = tokio::spawn(serve(server_read, server_write, config));
        let (client_read, mut client_write) = tokio::io::split(client);
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"_meta": meta, "name": "array_output"}}),
        ];
        for request in &requests {
            client_write
                .write_all(format!("{request}\n").as_bytes())
                .await
                .unwrap();
        }
        let mut lines = BufReader::new(client_read).lines();
        let mut responses = Vec::new();
        while responses.len() < 2 {
            let line = lines.next_line().await.unwrap().unwrap();
            responses.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        responses.sort_by_key(|response| response["id"].as_i64());
        let names: Vec<&str> = responses[0]["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap())
            .collect();
        // In process: no crash and shutdown; array_output after structured (study order).
        assert_eq!(names.len(), 20);
        assert_eq!(names[5..7], ["structured", "array_output"]);
        assert!(!names.contains(&"crash"));
        assert_eq!(
            responses[1]["result"]["structuredContent"],
            json!([1, 2, 3])
        );
        client_write.shutdown().await.unwrap();
        let outcome = served.await.unwrap().unwrap();
        assert!(matches!(outcome, Outcome::EndOfInput));
    }
}
