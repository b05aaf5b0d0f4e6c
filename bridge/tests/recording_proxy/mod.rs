//! A proxy on 127.0.0.1 that records the request line of every request it gets:
//! the tests point `HTTPS_PROXY` at it, so that a request that reaches it is one
//! the bridge would have sent off the machine.
//!
//! It refuses every request (403) but a `CONNECT` to a port of its list, which it
//! carries to the same port on 127.0.0.1: a test reaches a server on loopback by a
//! name that is not loopback by its spelling (a "remote" upstream), and nothing ever
//! leaves the machine.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct RecordingProxy {
    pub port: u16,
    lines: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RecordingProxy {
    /// A proxy that refuses everything.
    pub async fn refusing() -> Self {
        Self::tunneling_to(&[]).await
    }

    /// A proxy that carries a `CONNECT` to one of `ports` to that port on 127.0.0.1.
    pub async fn tunneling_to(ports: &[u16]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let ports = ports.to_vec();
        let recorded = lines.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, ports.clone(), recorded.clone()));
            }
        });
        Self { port, lines, task }
    }

    /// The value of `HTTPS_PROXY`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The request lines it got, in order (`GET http://host/path HTTP/1.1`,
    /// `CONNECT host:443 HTTP/1.1`).
    pub fn requests(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut stream: TcpStream, ports: Vec<u16>, lines: Arc<Mutex<Vec<String>>>) {
    let mut head = Vec::new();
    let mut buffer = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
        if head.len() > 64 * 1024 {
            return;
        }
    }
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().next().unwrap_or_default().to_owned();
    lines.lock().unwrap().push(line.clone());
    let tunnel_port = line
        .strip_prefix("CONNECT ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|authority| authority.rsplit_once(':'))
        .and_then(|(_, port)| port.parse::<u16>().ok())
        .filter(|port| ports.contains(port));
    let Some(port) = tunnel_port else {
        let _ = stream
            .write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await;
        return;
    };
    let Ok(mut inner) = TcpStream::connect(("127.0.0.1", port)).await else {
        let _ = stream
            .write_all(
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            )
            .await;
        return;
    };
    if stream
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut stream, &mut inner).await;
}
