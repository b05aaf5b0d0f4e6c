//! The fault options of the HTTP mode, each seen from the client.

use std::time::Duration;

use hyper::StatusCode;
use serde_json::json;

use super::client::{Event, Events, Server, body_text, header, mcp_headers, request};

fn progress(id: i64, count: i64) -> serde_json::Value {
    request(
        json!(id),
        "tools/call",
        json!({"name": "progress", "arguments": {"count": count, "ms": 1}}),
        json!({"progressToken": id}),
    )
}

#[tokio::test]
async fn fail_status_answers_the_nth_post_with_the_status() {
    let server = Server::start(&[
        "--https",
        "--fail-status",
        "1:503",
        "--fail-status",
        "3:429",
    ])
    .await;
    let list = request(json!(1), "tools/list", json!({}), json!({}));
    // A GET is not a POST: it does not count.
    let get = server.send("GET", &[], Vec::new()).await.unwrap();
    assert_eq!(get.status(), StatusCode::METHOD_NOT_ALLOWED);
    let first = server.post(&list).await;
    assert_eq!(first.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        header(&first, "content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(
        body_text(first).await,
        "--fail-status: the POST 1 gets 503 Service Unavailable.\n"
    );
    assert_eq!(server.post(&list).await.status(), StatusCode::OK);
    assert_eq!(
        server.post(&list).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(server.post(&list).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn slow_stream_delays_every_event() {
    let server = Server::start(&["--https", "--slow-stream-ms", "150"]).await;
    let started = tokio::time::Instant::now();
    let mut events = Events::of(server.post(&progress(1, 2)).await);
    let mut frames = Vec::new();
    while let Some(frame) = events.next_data().await {
        frames.push(frame);
    }
    assert_eq!(
        frames.len(),
        3,
        "two progress notifications and the response"
    );
    assert_eq!(frames[2]["id"], 1);
    assert!(
        started.elapsed() >= Duration::from_millis(450),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn break_stream_after_closes_the_stream_without_the_response() {
    let server = Server::start(&["--https", "--break-stream-after", "2"]).await;
    let mut events = Events::of(server.post(&progress(4, 5)).await);
    let mut frames = Vec::new();
    while let Some(frame) = events.next_data().await {
        frames.push(frame);
    }
    let methods: Vec<_> = frames.iter().map(|frame| frame["method"].clone()).collect();
    assert_eq!(
        methods,
        [
            json!("notifications/progress"),
            json!("notifications/progress")
        ]
    );
    assert!(
        frames.iter().all(|frame| frame.get("id").is_none()),
        "no response"
    );
    // A request whose response is its only frame answers JSON: no stream to break.
    let list = request(json!(5), "tools/list", json!({}), json!({}));
    let response = server.post(&list).await;
    assert_eq!(header(&response, "content-type"), Some("application/json"));
}

#[tokio::test]
async fn oversized_event_starts_every_stream_with_one_event_of_that_size() {
    let server = Server::start(&["--https", "--oversized-event", "100000", "--always-sse"]).await;
    let list = request(json!(1), "tools/list", json!({}), json!({}));
    let response = server.post_with(&list, &mcp_headers(&list)).await;
    let mut events = Events::of(response);
    let Some(Event::Data(first)) = events.next().await else {
        panic!("a data event first");
    };
    assert_eq!(first.to_string().len(), 100_000);
    assert_eq!(first["method"], "notifications/message");
    assert_eq!(first["params"]["logger"], "fixture.oversized-event");
    assert!(events.raw.len() >= 100_000 + "data: \n\n".len());
    let response = events.next_data().await.unwrap();
    assert_eq!(response["id"], 1);
    assert_eq!(response["result"]["tools"].as_array().unwrap().len(), 21);
    assert_eq!(events.next().await, None);
}
