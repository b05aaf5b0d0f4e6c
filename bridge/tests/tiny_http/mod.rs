//! A tiny HTTP/1.1 upstream on loopback, written with raw tokio sockets, for the faults
//! that the fixture server cannot make: a body of an exact size, a request that is
//! never answered while the test watches its connection close.
//!
//! It reads each POST (headers, then a body of its Content-Length), answers
//! `server/discover` with a minimal result of 2026-07-28, a notification with 202,
//! and every other request as the test's [`Reply`] function says.
#![allow(dead_code)]

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// What the server does with one request.
pub enum Reply {
    /// 200 with this JSON body and its Content-Length.
    Json(Vec<u8>),
    /// 200 with this JSON body, chunked (no Content-Length).
    Chunked(Vec<u8>),
    /// Nothing: the connection stays open until the client closes it.
    Never,
}

/// What the server saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A request (method, and `params.name` where there is one).
    Request(String, Option<String>),
    /// The client closed a connection whose request got [`Reply::Never`].
    ClosedUnanswered(String),
}

pub struct TinyHttp {
    pub url: String,
    pub seen: mpsc::UnboundedReceiver<Seen>,
    _task: tokio::task::JoinHandle<()>,
}

impl TinyHttp {
    /// Serves `reply` for every request but discover and notifications.
    pub async fn start(reply: fn(&Value) -> Reply) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let (tx, seen) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, reply, tx.clone()));
            }
        });
        Self {
            url,
            seen,
            _task: task,
        }
    }

    /// Waits for the next thing seen that `wanted` accepts.
    pub async fn wait_for(&mut self, wanted: impl Fn(&Seen) -> bool) -> Seen {
        loop {
            let seen = tokio::time::timeout(crate::pipes::EXCHANGE, self.seen.recv())
                .await
                .expect("the tiny server saw it in time")
                .expect("the tiny server runs");
            if wanted(&seen) {
                return seen;
            }
        }
    }
}

/// The discover result: tools only (no serverInfo: the bridge names the server by its host), no list changes (no listen stream is needed).
pub fn discover_result(id: &Value) -> Vec<u8> {
    json!({"jsonrpc":"2.0","id":id,"result":{"resultType":"complete",
        "supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},
"ttlMs":0,"cacheScope":"public"}})
    .to_string()
    .into_bytes()
}

fn text_result(id: &Value, text: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":text}],"isError":false}})
        .to_string()
}

/// The bytes of a text result of [`text_result_of_size`] around its text.
pub fn text_result_overhead(id: &Value) -> usize {
    text_result(id, "").len()
}

/// A tools/call result whose whole JSON-RPC body is exactly `size` bytes long: a
/// text of `x`.
pub fn text_result_of_size(id: &Value, size: usize) -> Vec<u8> {
    let text = "x".repeat(size - text_result_overhead(id));
    let body = text_result(id, &text).into_bytes();
    assert_eq!(body.len(), size);
    body
}

async fn serve(
    mut stream: TcpStream,
    reply: fn(&Value) -> Reply,
    seen: mpsc::UnboundedSender<Seen>,
) {
    let mut buffer = Vec::new();
    while let Some(body) = read_request(&mut stream, &mut buffer).await {
        let Ok(message) = serde_json::from_slice::<Value>(&body) else {
            return;
        };
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        let name = message["params"]["name"].as_str().map(str::to_owned);
        let _ = seen.send(Seen::Request(method.clone(), name));
        let Some(id) = message.get("id") else {
            if write(&mut stream, "202 Accepted", &[], None).await.is_err() {
                return;
            }
            continue;
        };
        let answer = if method == "server/discover" {
            Reply::Json(discover_result(id))
        } else {
            reply(&message)
        };
        let written = match answer {
            Reply::Json(body) => write(&mut stream, "200 OK", &body, Some(body.len())).await,
            Reply::Chunked(body) => write(&mut stream, "200 OK", &body, None).await,
            Reply::Never => {
                // Read until the client gives up on the request and closes.
                let mut sink = [0u8; 1024];
                while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
                let _ = seen.send(Seen::ClosedUnanswered(method));
                return;
            }
        };
        if written.is_err() {
            return;
        }
    }
}

/// The body of the next request, or `None` at the end of the connection.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut chunk = [0u8; 16 * 1024];
    let header_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..header_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < header_end + length {
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    }
    let body = buffer[header_end..header_end + length].to_vec();
    buffer.drain(..header_end + length);
    Some(body)
}

/// Writes one response; `length: None` with a body sends it as one chunk.
async fn write(
    stream: &mut TcpStream,
    status: &str,
    body: &[u8],
    length: Option<usize>,
) -> std::io::Result<()> {
    let framing = match length {
        Some(length) => format!("Content-Length: {length}"),
        None if body.is_empty() => "Content-Length: 0".to_owned(),
        None => "Transfer-Encoding: chunked".to_owned(),
    };
    let head = format!("HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{framing}\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    if length.is_none() && !body.is_empty() {
        stream
            .write_all(format!("{:x}\r\n", body.len()).as_bytes())
            .await?;
        stream.write_all(body).await?;
        stream.write_all(b"\r\n0\r\n\r\n").await?;
    } else {
        stream.write_all(body).await?;
    }
    stream.flush().await
}

/// A server that accepts every connection and keeps it, without reading or writing
/// a byte: its URL, and the task to abort at the end of the test.
pub async fn silent_server() -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut connections = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            connections.push(stream);
        }
    });
    (url, held)
}
