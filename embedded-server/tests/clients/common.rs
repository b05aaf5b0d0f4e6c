//! `bridge-embedded-server` over pipes, started as VS Code starts a stdio server.

use harness_sim::process::{PeerOptions, StdioPeer};
use serde_json::{Value, json};
use std::time::Duration;

/// How long one exchange may take before the test fails.
pub const EXCHANGE: Duration = Duration::from_secs(30);

pub fn start(args: &[&str]) -> StdioPeer {
    let exe = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bridge-embedded-server"));
    let mut command = vec![exe.display().to_string()];
    command.extend(args.iter().map(|arg| arg.to_string()));
    StdioPeer::spawn_with(&command, PeerOptions::default()).expect("the server starts")
}

/// The initialize of the Local harness (VS Code 1.141).
pub fn initialize_frame(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}},
        "clientInfo":{"name":"Visual Studio Code","version":"1.141.0"}}})
}

/// The `_meta` of a request of revision 2026-07-28.
pub fn modern_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},
        "io.modelcontextprotocol/clientInfo":{"name":"copilot-cli","version":"1.0.95"}})
}

pub fn discover_frame(id: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"server/discover","params":{"_meta":modern_meta()}})
}

/// A tools/call of the Local harness (no `_meta`).
pub fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":arguments}})
}

/// A tools/call of revision 2026-07-28.
pub fn modern_call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":name,"arguments":arguments,"_meta":modern_meta()}})
}

/// The next frame; every line on stdout must be JSON-RPC.
pub async fn recv(peer: &mut StdioPeer) -> Value {
    let received = peer
        .recv(EXCHANGE)
        .await
        .expect("the server answered in time");
    assert!(
        received.is_json(),
        "stdout carries only JSON-RPC lines, got {:?}",
        received.raw
    );
    received.frame
}

/// The next frame that is not a notification.
pub async fn response(peer: &mut StdioPeer) -> Value {
    loop {
        let frame = recv(peer).await;
        if frame.get("id").is_some() {
            return frame;
        }
    }
}

/// initialize and notifications/initialized; returns the initialize response.
pub async fn initialize(peer: &mut StdioPeer) -> Value {
    peer.send(&initialize_frame(1)).await.unwrap();
    let result = response(peer).await;
    peer.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await
        .unwrap();
    result
}

pub fn text_of(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
}

/// Closes stdin and waits for the exit; the exit code and the time after the end
/// of stdin.
pub async fn stop(peer: &mut StdioPeer, limit: Duration) -> (Option<i32>, Duration) {
    peer.close_stdin().await;
    let (status, after) = peer
        .wait_exit(limit)
        .await
        .expect("the server exits in time");
    (status.code(), after)
}
