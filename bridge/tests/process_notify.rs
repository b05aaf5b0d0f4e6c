//! M3 over the pipes: the list change of a tool call reaches VS Code before the
//! result, every time, and subscriptions deliver updates.

use crate::pipes;

use pipes::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn toggling_the_tool_list_1000_times_gives_each_list_change_before_its_result() {
    let mut bridge = with_fixture(&[]);
    initialize(&mut bridge).await;
    for _ in 0..3 {
        recv(&mut bridge).await;
    }
    for id in 0..1000u64 {
        let enabled = id % 2 == 1;
        bridge
            .send(&call(id + 10, "toggle", json!({"enabled":enabled})))
            .await
            .unwrap();
        let change = recv(&mut bridge).await;
        assert_eq!(
            change,
            json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}),
            "call {id}"
        );
        let result = recv(&mut bridge).await;
        assert_eq!(result["id"], id + 10);
        let state = if enabled { "enabled" } else { "disabled" };
        assert_eq!(text_of(&result), format!("tool toggled: {state}"));
    }
    let (code, _) = stop(&mut bridge, Duration::from_secs(5)).await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn subscribe_touch_and_unsubscribe_through_the_bridge() {
    let mut bridge = with_fixture(&[]);
    initialize(&mut bridge).await;
    for _ in 0..3 {
        recv(&mut bridge).await;
    }
    let uri = "file:///fixture/notes.txt";
    bridge
        .send(&json!({"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":uri}}))
        .await
        .unwrap();
    assert_eq!(
        recv(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
    bridge
        .send(&call(3, "touch", json!({"uri":uri})))
        .await
        .unwrap();
    assert_eq!(
        recv(&mut bridge).await,
        json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":uri}})
    );
    assert_eq!(text_of(&recv(&mut bridge).await), format!("touched {uri}"));
    bridge
        .send(
            &json!({"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":uri}}),
        )
        .await
        .unwrap();
    assert_eq!(
        recv(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":4,"result":{}})
    );
    bridge
        .send(&call(5, "touch", json!({"uri":uri})))
        .await
        .unwrap();
    assert_eq!(text_of(&recv(&mut bridge).await), format!("touched {uri}"));
    let (code, _) = stop(&mut bridge, Duration::from_secs(5)).await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn the_shutdown_of_the_upstream_ends_its_listen_stream_and_the_bridge_exits_one() {
    let mut bridge = with_fixture(&[]);
    initialize(&mut bridge).await;
    for _ in 0..3 {
        recv(&mut bridge).await;
    }
    bridge
        .send(&call(2, "shutdown", json!({"after_ms":300})))
        .await
        .unwrap();
    assert_eq!(
        text_of(&response(&mut bridge).await),
        "the server ended its listen streams and stops in 300 ms"
    );
    let (status, _) = bridge.wait_exit(EXCHANGE).await.expect("the bridge exits");
    assert_eq!(status.code(), Some(1));
    assert!(bridge.wait_stderr_closed(EXCHANGE).await);
    let lines = bridge.stderr_lines();
    assert!(lines.iter().any(|l| l.starts_with("mcp-bridge-vscode: bridge: info: the upstream server ended the listen stream. A new stream follows in 500 ms.")), "{lines:#?}");
    assert!(
        lines.iter().any(
            |l| l == "mcp-bridge-vscode: bridge: error: the upstream server exited with code 0"
        )
    );
}
