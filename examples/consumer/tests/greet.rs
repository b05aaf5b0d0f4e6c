//! The example consumer's `greet` tool asks VS Code for the name through the
//! embedded bridge.

use harness_sim::process::{PeerOptions, StdioPeer};
use serde_json::json;
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

const EXCHANGE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn the_consumer_greets_through_the_embedded_bridge() {
    let exe = env!("CARGO_BIN_EXE_consumer");
    let mut consumer = StdioPeer::spawn_with(&[exe.to_owned()], PeerOptions::default())
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
