//! `subscriptions/listen` over HTTPS: one long SSE response with the acknowledgment,
//! keep-alive comments while quiet, the list changes and resource updates it asked for,
//! and its graceful response when the server stops.

use hyper::StatusCode;
use serde_json::json;

use super::client::{Event, Events, Server, request};

#[tokio::test]
async fn a_listen_stream_gets_keep_alives_a_list_change_and_a_resource_update() {
    let mut server = Server::start(&["--https", "--keep-alive-ms", "100"]).await;
    let listen = request(
        json!("L"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///fixture"]}}),
        json!({}),
    );
    let response = server.post(&listen).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut events = Events::of(response);
    assert_eq!(
        events.next().await,
        Some(Event::Data(json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": "L"},
                "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///fixture"]},
            },
        })))
    );
    assert_eq!(
        events.next().await,
        Some(Event::Comment("keep-alive".into()))
    );
    assert!(
        events.raw.ends_with("\n\n: keep-alive\n\n"),
        "{:?}",
        events.raw
    );

    let toggle = server
        .call(&request(
            json!(1),
            "tools/call",
            json!({"name": "toggle", "arguments": {"enabled": false}}),
            json!({}),
        ))
        .await;
    assert_eq!(toggle["result"]["isError"], false);
    assert_eq!(
        events.next_data().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
               "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}})
    );
    server
        .call(&request(
            json!(2),
            "tools/call",
            json!({"name": "touch", "arguments": {"uri": "file:///fixture/a.txt"}}),
            json!({}),
        ))
        .await;
    assert_eq!(
        events.next_data().await.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}, "uri": "file:///fixture/a.txt"}})
    );

    // The end of stdin ends the stream gracefully: its response, then the end.
    server.close_stdin();
    let last = events.next_data().await.unwrap();
    assert_eq!(last["id"], "L");
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L"
    );
    assert_eq!(events.next_data().await, None);
    assert_eq!(server.exit_code().await, Some(0));
}

#[tokio::test]
async fn closing_a_listen_stream_ends_the_subscription() {
    // Keep-alives every 50 ms: a server notices a closed stream when it writes to it.
    let server = Server::start(&["--https", "--keep-alive-ms", "50"]).await;
    let listen = |id: &str| {
        request(
            json!(id),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
            json!({}),
        )
    };
    let mut first = Events::of(server.post(&listen("A")).await);
    first.next_data().await.unwrap();
    drop(first);
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    // The id of the closed stream is free again: a new stream may use it.
    let mut again = Events::of(server.post(&listen("A")).await);
    let ack = again.next_data().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
}
