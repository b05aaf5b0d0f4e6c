//! The example consumer (examples/consumer/, a crate outside the workspace that
//! depends on the bridge with only the feature `rmcp`) builds, and its `greet`
//! tool asks VS Code for the name through the embedded bridge.

use harness_sim::process::{PeerOptions, StdioPeer};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// The next frame that is not a notification.
async fn response(peer: &mut StdioPeer) -> serde_json::Value {
    loop {
        let frame = peer.recv(EXCHANGE).await.expect("an answer in time").frame;
        if frame.get("id").is_some() {
            return frame;
        }
    }
}

/// A build from nothing on two shared cores; a warm one takes seconds.
const BUILD_LIMIT: Duration = Duration::from_secs(1200);
const EXCHANGE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn the_consumer_example_builds_and_greets_through_the_embedded_bridge() {
    let manifest =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/consumer/Cargo.toml");
    let profile = workspace_bin::profile_dir().expect("the profile directory");
    let target = profile
        .parent()
        .expect("the target directory")
        .to_path_buf();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = tokio::process::Command::new(cargo);
    build
        .args(["build", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .kill_on_drop(true);
    let status = tokio::time::timeout(BUILD_LIMIT, build.status())
        .await
        .expect("the consumer builds in time")
        .expect("cargo runs");
    assert!(status.success(), "cargo build of the consumer: {status}");

    let exe = target
        .join("debug")
        .join(format!("consumer{}", std::env::consts::EXE_SUFFIX));
    let mut consumer = StdioPeer::spawn_with(&[exe.display().to_string()], PeerOptions::default())
        .expect("the consumer starts");
    consumer
        .send(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
            "capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"Visual Studio Code","version":"1.141.0"}}}))
        .await
        .unwrap();
    let init = response(&mut consumer).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    consumer
        .send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await
        .unwrap();
    consumer
        .send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{}}}))
        .await
        .unwrap();
    let question = response(&mut consumer).await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    consumer
        .send(&json!({"jsonrpc":"2.0","id":question["id"],"result":{"action":"accept","content":{"name":"Ada"}}}))
        .await
        .unwrap();
    let greeted = response(&mut consumer).await;
    assert_eq!(
        greeted["result"]["content"][0]["text"], "Hello, Ada.",
        "{greeted}"
    );
    consumer.close_stdin().await;
    let (status, _) = consumer
        .wait_exit(EXCHANGE)
        .await
        .expect("the consumer exits in time");
    assert_eq!(status.code(), Some(0));
}
