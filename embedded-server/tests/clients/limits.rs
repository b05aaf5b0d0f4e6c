//! The limits and the end of `bridge-embedded-server` on each path (M5, "Limits in
//! the process").

use crate::common::*;
use serde_json::json;
use std::time::Duration;

/// A tools/call line of `len` bytes or more (the text argument pads it).
fn long_call(id: u64, len: usize, modern: bool) -> Vec<u8> {
    let frame = if modern {
        modern_call(id, "echo", json!({"text": "x".repeat(len)}))
    } else {
        call(id, "echo", json!({"text": "x".repeat(len)}))
    };
    let mut line = frame.to_string().into_bytes();
    line.push(b'\n');
    line
}

#[tokio::test]
async fn a_too_long_line_gets_32600_on_the_legacy_path() {
    let mut server = start(&["--max-line-bytes", "1000"]);
    initialize(&mut server).await;
    server.send_raw(&long_call(2, 2000, false)).await.unwrap();
    let refused = response(&mut server).await;
    assert_eq!(refused["id"], 2, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    server
        .send(&call(3, "echo", json!({"text":"short"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut server).await), "short");
    assert_eq!(stop(&mut server, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test]
async fn a_too_long_first_line_is_dropped_without_a_response() {
    let mut server = start(&["--max-line-bytes", "1000"]);
    server.send_raw(&long_call(9, 2000, false)).await.unwrap();
    // The next line is the first one that counts: initialize selects the bridge.
    let init = initialize(&mut server).await;
    assert_eq!(init["id"], 1, "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(stop(&mut server, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test]
async fn a_too_long_line_is_dropped_without_a_response_on_the_modern_path() {
    let mut server = start(&["--max-line-bytes", "1000"]);
    server
        .send(&modern_call(1, "echo", json!({"text":"first"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut server).await), "first");
    server.send_raw(&long_call(2, 2000, true)).await.unwrap();
    server
        .send(&modern_call(3, "echo", json!({"text":"after"})))
        .await
        .unwrap();
    let next = response(&mut server).await;
    assert_eq!((next["id"].clone(), text_of(&next)), (json!(3), "after"));
    assert_eq!(stop(&mut server, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test]
async fn above_the_in_flight_limit_the_legacy_path_answers_32603_at_once_and_the_end_cancels_at_once()
 {
    let mut server = start(&["--max-in-flight", "2"]);
    initialize(&mut server).await;
    for id in [2, 3] {
        server
            .send(&call(id, "slow", json!({"ms":60000})))
            .await
            .unwrap();
    }
    server
        .send(&call(4, "echo", json!({"text":"one too many"})))
        .await
        .unwrap();
    let refused = response(&mut server).await;
    assert_eq!(refused["id"], 4, "{refused}");
    assert_eq!(refused["error"]["code"], -32603);
    assert_eq!(refused["error"]["data"]["cause"], "too_many_requests");
    // The end of stdin cancels the slow calls at once: no shutdown_grace to wait.
    let (code, after) = stop(&mut server, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
    assert!(
        after < Duration::from_secs(2),
        "stopped {after:?} after the end of stdin"
    );
}

#[tokio::test]
async fn above_the_in_flight_limit_the_modern_path_answers_32603_at_once_and_the_end_waits_the_grace()
 {
    let mut server = start(&["--max-in-flight", "2", "--shutdown-grace-ms", "500"]);
    for id in [1, 2] {
        server
            .send(&modern_call(id, "slow", json!({"ms":60000})))
            .await
            .unwrap();
    }
    server
        .send(&modern_call(3, "echo", json!({"text":"one too many"})))
        .await
        .unwrap();
    let refused = response(&mut server).await;
    assert_eq!(refused["id"], 3, "{refused}");
    assert_eq!(refused["error"]["code"], -32603);
    assert_eq!(refused["error"]["data"]["cause"], "too_many_requests");
    // The slow calls get shutdown_grace, then their cancel tokens fire.
    let (code, after) = stop(&mut server, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
    assert!(
        after >= Duration::from_millis(450) && after < Duration::from_secs(4),
        "stopped {after:?} after the end of stdin"
    );
}

#[tokio::test]
async fn at_the_end_of_stdin_the_modern_path_lets_a_request_in_flight_finish_within_the_grace() {
    let mut server = start(&["--shutdown-grace-ms", "5000"]);
    server
        .send(&modern_call(1, "slow", json!({"ms":300})))
        .await
        .unwrap();
    server.close_stdin().await;
    let finished = response(&mut server).await;
    assert_eq!(
        (finished["id"].clone(), text_of(&finished)),
        (json!(1), "slept 300 ms")
    );
    let (status, after) = server
        .wait_exit(Duration::from_secs(10))
        .await
        .expect("the server exits in time");
    assert_eq!(status.code(), Some(0));
    assert!(
        after < Duration::from_secs(3),
        "stopped {after:?} after the end of stdin"
    );
}

#[tokio::test]
async fn at_the_end_of_stdin_an_idle_server_exits_zero_on_either_path_or_none() {
    let mut legacy = start(&[]);
    initialize(&mut legacy).await;
    let mut modern = start(&[]);
    modern
        .send(&modern_call(1, "echo", json!({"text":"x"})))
        .await
        .unwrap();
    response(&mut modern).await;
    let mut nothing = start(&[]);
    for server in [&mut legacy, &mut modern, &mut nothing] {
        let (code, after) = stop(server, Duration::from_secs(10)).await;
        assert_eq!(code, Some(0));
        assert!(
            after < Duration::from_secs(2),
            "stopped {after:?} after the end of stdin"
        );
    }
}
