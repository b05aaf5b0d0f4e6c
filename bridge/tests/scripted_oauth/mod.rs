//! A scripted upstream and authorization server in one, plain http on 127.0.0.1,
//! for the sign-in tests that need documents no honest server sends: each path
//! answers what the test put there, and every request is recorded.
//!
//! `POST /mcp` answers 401 with the test's `WWW-Authenticate` (a sign-in starts);
//! every other path answers its canned response, or 404. One request per
//! connection (`Connection: close`).
#![allow(dead_code)]

use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One canned response.
#[derive(Clone, Debug)]
pub struct Canned {
    pub status: u16,
    pub body: String,
}

impl Canned {
    pub fn json(value: &Value) -> Self {
        Self {
            status: 200,
            body: value.to_string(),
        }
    }
}

#[derive(Default)]
struct Script {
    challenge: String,
    routes: HashMap<String, Canned>,
    seen: Vec<String>,
}

pub struct ScriptedOAuth {
    /// `http://127.0.0.1:<port>`.
    pub origin: String,
    pub port: u16,
    script: Arc<Mutex<Script>>,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedOAuth {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let script = Arc::new(Mutex::new(Script {
            challenge: "Bearer".into(),
            ..Script::default()
        }));
        let shared = script.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, shared.clone()));
            }
        });
        Self {
            origin: format!("http://127.0.0.1:{port}"),
            port,
            script,
            task,
        }
    }

    /// The MCP URL of the upstream.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.origin)
    }

    /// The `WWW-Authenticate` of the 401 to `POST /mcp`.
    pub fn challenge(&self, value: &str) {
        self.script.lock().unwrap().challenge = value.to_owned();
    }

    /// What `GET` or `POST` of `path` (without its query) answers.
    pub fn route(&self, path: &str, canned: Canned) {
        self.script
            .lock()
            .unwrap()
            .routes
            .insert(path.to_owned(), canned);
    }

    /// The request lines without the version (`GET /path?query`), in order.
    pub fn seen(&self) -> Vec<String> {
        self.script.lock().unwrap().seen.clone()
    }

    /// The protected resource metadata at `/prm` and an authorization server at
    /// this origin whose metadata is `metadata` (with the issuer, S256 and the
    /// endpoints of this origin unless `metadata` names them), and a challenge that
    /// names `/prm`.
    pub fn serve_authorization_server(&self, metadata: Value) {
        let origin = &self.origin;
        self.challenge(&format!(
            "Bearer resource_metadata=\"{origin}/prm\", scope=\"mcp:read\""
        ));
        self.route(
            "/prm",
            Canned::json(&serde_json::json!({
                "resource": self.mcp_url(),
                "authorization_servers": [origin],
            })),
        );
        let mut full = serde_json::json!({
            "issuer": origin,
            "authorization_endpoint": format!("{origin}/authorize"),
            "token_endpoint": format!("{origin}/token"),
            "registration_endpoint": format!("{origin}/register"),
            "code_challenge_methods_supported": ["S256"],
        });
        for (name, value) in metadata.as_object().cloned().unwrap_or_default() {
            full[name] = value;
        }
        self.route(
            "/.well-known/oauth-authorization-server",
            Canned::json(&full),
        );
        self.route(
            "/register",
            Canned {
                status: 201,
                body: serde_json::json!({"client_id": "scripted-client"}).to_string(),
            },
        );
    }
}

impl Drop for ScriptedOAuth {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut stream: TcpStream, script: Arc<Mutex<Script>>) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let length: usize = head
        .to_ascii_lowercase()
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let line = head.lines().next().unwrap_or_default();
    let mut parts = line.split(' ');
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let path = target.split('?').next().unwrap_or_default().to_owned();
    let (status, headers, body) = {
        let mut script = script.lock().unwrap();
        script.seen.push(format!("{method} {target}"));
        if method == "POST" && path == "/mcp" {
            (
                401,
                format!("WWW-Authenticate: {}\r\n", script.challenge),
                String::new(),
            )
        } else {
            match script.routes.get(&path) {
                Some(canned) => (canned.status, String::new(), canned.body.clone()),
                None => (404, String::new(), String::new()),
            }
        }
    };
    let reason = match status {
        200 => "OK",
        201 => "Created",
        401 => "Unauthorized",
        _ => "Other",
    };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\n{headers}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
