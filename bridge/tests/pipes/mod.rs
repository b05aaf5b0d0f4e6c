//! The real executables over pipes: `mcp-bridge-vscode -- bridge-fixture-server`,
//! started as VS Code starts a stdio server.
#![allow(dead_code)]

use harness_sim::process::{PeerOptions, StdioPeer};
use serde_json::{Value, json};
use std::time::Duration;

/// How long one exchange may take before the test fails.
pub const EXCHANGE: Duration = Duration::from_secs(30);

pub fn bridge_exe() -> String {
    env!("CARGO_BIN_EXE_mcp-bridge-vscode").to_owned()
}

/// harness-sim, whose `scripted-upstream` is the upstream that misbehaves as a process.
pub fn harness_sim_exe() -> String {
    workspace_bin::path("harness-sim", "harness-sim")
        .expect("harness-sim builds")
        .display()
        .to_string()
}

pub fn fixture_exe() -> String {
    workspace_bin::path("bridge-fixture-server", "bridge-fixture-server")
        .expect("the fixture server builds")
        .display()
        .to_string()
}

/// Starts the bridge with `bridge_args`, then `--`, then `upstream`.
pub fn start(bridge_args: &[&str], upstream: &[String], env: &[(&str, &str)]) -> StdioPeer {
    let mut command = vec![bridge_exe()];
    command.extend(bridge_args.iter().map(|arg| arg.to_string()));
    command.push("--".into());
    command.extend(upstream.iter().cloned());
    let options = PeerOptions {
        env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
        ..PeerOptions::default()
    };
    StdioPeer::spawn_with(&command, options).expect("the bridge starts")
}

/// The bridge in front of the fixture with `fixture_args`.
pub fn with_fixture(fixture_args: &[&str]) -> StdioPeer {
    let mut upstream = vec![fixture_exe()];
    upstream.extend(fixture_args.iter().map(|arg| arg.to_string()));
    start(&[], &upstream, &[])
}

pub fn initialize_frame() -> Value {
    json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}},
        "clientInfo":{"name":"Visual Studio Code","version":"1.141.0"}}})
}

/// The next frame; every line on stdout must be JSON-RPC (R7).
pub async fn recv(peer: &mut StdioPeer) -> Value {
    let received = peer
        .recv(EXCHANGE)
        .await
        .expect("the bridge answered in time");
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

/// initialize and notifications/initialized; returns the initialize result.
pub async fn initialize(peer: &mut StdioPeer) -> Value {
    peer.send(&initialize_frame()).await.unwrap();
    let result = response(peer).await;
    peer.send(&json!({"method":"notifications/initialized","jsonrpc":"2.0"}))
        .await
        .unwrap();
    result
}

pub fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":arguments}})
}

pub fn text_of(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
}

/// Closes stdin and waits for the exit; returns the exit code and the time after
/// the end of stdin. Also waits for stderr to end, which proves that no process of
/// the upstream holds it any more.
pub async fn stop(peer: &mut StdioPeer, limit: Duration) -> (Option<i32>, Duration) {
    peer.close_stdin().await;
    let (status, after) = peer
        .wait_exit(limit)
        .await
        .expect("the bridge exits in time");
    assert!(
        peer.wait_stderr_closed(EXCHANGE).await,
        "a process still holds the bridge's stderr"
    );
    (status.code(), after)
}

/// After the first acknowledgment of a listen stream of the fixture: one list
/// change for each declared list (M3), in any order.
pub async fn expect_three_list_changes(peer: &mut StdioPeer) {
    let mut changes = Vec::new();
    for _ in 0..3 {
        changes.push(
            recv(peer).await["method"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    changes.sort();
    assert_eq!(
        changes,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed"
        ]
    );
}

/// The name by which libtest knows `test` of the module `module_path` (its
/// `module_path!()`), for a test that runs itself again in a child with `--exact`:
/// the path without the crate of the test executable.
pub fn libtest_name(module_path: &str, test: &str) -> String {
    match module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{test}"),
        None => test.to_owned(),
    }
}
