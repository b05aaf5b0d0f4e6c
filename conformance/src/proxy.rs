//! The HTTPS proxy of the transcripts of Q10: an HTTP CONNECT proxy on a loopback
//! port, with Basic credentials, that the runner starts for a transcript whose
//! environment names `$PROXY`. It tunnels only to this machine: a CONNECT to any
//! host reaches 127.0.0.1 at the port asked, so a transcript can give the bridge a
//! name that is not loopback by its spelling (which a bridge must proxy) and still
//! never leave loopback. Each tunnel it opens is a line of its log
//! (`CONNECT <host>:<port> as <user>`), which `expect_proxy` matches.
//!
//! A CONNECT without the right credentials gets 407 and a line
//! `refused CONNECT <host>:<port>`; any other method gets 405.

use std::sync::{Arc, Mutex};

use base64::Engine;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// The user and password of `$PROXY`.
pub const USER: &str = "bridge";
pub const PASSWORD: &str = "proxy-pass-8c2e";

/// A running proxy; it stops when dropped.
pub struct Proxy {
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
    accepting: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub async fn start() -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let accepting = tokio::spawn(accept(listener, log.clone()));
        Ok(Proxy {
            port,
            log,
            accepting,
        })
    }

    /// The URL of the proxy with its credentials, for `HTTPS_PROXY` or `ALL_PROXY`.
    pub fn url(&self) -> String {
        format!("http://{USER}:{PASSWORD}@127.0.0.1:{}", self.port)
    }

    /// The tunnels opened and refused so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().map(|log| log.clone()).unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

async fn accept(listener: TcpListener, log: Arc<Mutex<Vec<String>>>) {
    while let Ok((client, _)) = listener.accept().await {
        tokio::spawn(tunnel(client, log.clone()));
    }
}

/// One connection: the CONNECT head, the check of its credentials, then the bytes
/// both ways until either side closes.
async fn tunnel(client: TcpStream, log: Arc<Mutex<Vec<String>>>) {
    let mut client = BufReader::new(client);
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        match client.read_line(&mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => head.push(line.trim_end().to_owned()),
        }
        if head.len() > 100 {
            return;
        }
    }
    let reply = |status: &str| format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
    let Some((target, port)) = connect_target(head.first().map(String::as_str).unwrap_or(""))
    else {
        let _ = client
            .write_all(reply("405 Method Not Allowed").as_bytes())
            .await;
        return;
    };
    let record = |line: String| {
        if let Ok(mut log) = log.lock() {
            log.push(line);
        }
    };
    if !authorized(&head[1..]) {
        record(format!("refused CONNECT {target}"));
        let _ = client
            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm=\"transcripts\"\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    }
    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", port)).await else {
        record(format!("failed CONNECT {target}"));
        let _ = client.write_all(reply("502 Bad Gateway").as_bytes()).await;
        return;
    };
    record(format!("CONNECT {target} as {USER}"));
    if client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

/// `host:port` and the port of a `CONNECT host:port HTTP/1.1` line.
fn connect_target(request_line: &str) -> Option<(String, u16)> {
    let mut words = request_line.split(' ');
    let (method, target) = (words.next()?, words.next()?);
    if method != "CONNECT" {
        return None;
    }
    let port = target.rsplit_once(':')?.1.parse().ok()?;
    Some((target.to_owned(), port))
}

/// Whether a `Proxy-Authorization` header of the head carries [`USER`] and
/// [`PASSWORD`].
fn authorized(headers: &[String]) -> bool {
    let expected = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    headers.iter().any(|header| {
        header.split_once(':').is_some_and(|(name, value)| {
            name.eq_ignore_ascii_case("proxy-authorization")
                && value.trim().strip_prefix("Basic ").map(str::trim) == Some(expected.as_str())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_connect_line_names_a_target() {
        assert_eq!(
            connect_target("CONNECT fixture.mcp-bridge.test:8443 HTTP/1.1"),
            Some(("fixture.mcp-bridge.test:8443".into(), 8443))
        );
        assert_eq!(connect_target("GET http://x/ HTTP/1.1"), None);
        assert_eq!(connect_target("CONNECT nohost HTTP/1.1"), None);
    }

    #[test]
    fn the_credentials_must_be_those_of_the_url() {
        let good = format!(
            "Proxy-Authorization: Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"))
        );
        assert!(authorized(&["Host: x".into(), good]));
        assert!(!authorized(&["Proxy-Authorization: Basic Ym9iOm5v".into()]));
        assert!(!authorized(&[]));
    }
}
