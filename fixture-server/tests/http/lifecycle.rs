//! Start and stop of the HTTP mode: the announcement lines, the certificates of
//! `--tls-dir`, the end of stdin and SIGTERM.

use std::time::Duration;

use serde_json::json;

use super::client::{Server, request};

#[tokio::test]
async fn the_end_of_stdin_stops_the_server_with_0_and_removes_its_ca_folder() {
    let mut server = Server::start(&["--https"]).await;
    let ca_file = server.ca_file.clone().unwrap();
    let pem = std::fs::read_to_string(&ca_file).unwrap();
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    server
        .call(&request(json!(1), "tools/list", json!({}), json!({})))
        .await;
    server.close_stdin();
    assert_eq!(server.exit_code().await, Some(0));
    assert!(!ca_file.exists(), "the folder the server made is removed");
}

#[tokio::test]
async fn a_request_in_flight_at_the_end_of_stdin_still_gets_its_response() {
    let mut server = Server::start(&["--https"]).await;
    let slow = request(
        json!(1),
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 200}}),
        json!({}),
    );
    let stdin = server.take_stdin();
    let (response, ()) = tokio::join!(server.post(&slow), async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(stdin);
    });
    let frame = super::client::body_json(response).await;
    assert_eq!(frame["result"]["content"][0]["text"], "slept 200 ms");
    assert_eq!(server.exit_code().await, Some(0));
}

#[cfg(unix)]
#[tokio::test]
async fn sigterm_stops_the_server_with_0() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let mut server = Server::start(&["--http"]).await;
    let pid = Pid::from_raw(i32::try_from(server.child.id().unwrap()).unwrap());
    kill(pid, Signal::SIGTERM).unwrap();
    assert_eq!(server.exit_code().await, Some(0));
}

#[tokio::test]
async fn tls_dir_serves_the_certificates_that_tls_fixtures_writes() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = tls_fixtures::generate().unwrap();
    tls_fixtures::files::write_to(dir.path(), &fixtures).unwrap();
    let path = dir.path().to_str().unwrap();
    let mut server = Server::start(&["--https", "--tls-dir", path]).await;
    assert_eq!(
        server.ca_file.as_deref(),
        Some(dir.path().join("ca.crt").as_path())
    );
    let frame = server
        .call(&request(json!(1), "server/discover", json!({}), json!({})))
        .await;
    assert_eq!(frame["result"]["resultType"], "complete");
    server.close_stdin();
    assert_eq!(server.exit_code().await, Some(0));
    assert!(dir.path().join("ca.crt").exists(), "a given folder stays");
}

#[tokio::test]
async fn a_fixed_port_is_served() {
    // Ask the system for a free port, release it, then give it to the server.
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let port_text = port.to_string();
    let server = Server::start(&["--http", "--port", &port_text]).await;
    assert_eq!(server.url, format!("http://127.0.0.1:{port}/mcp"));
    tokio::time::timeout(Duration::from_secs(5), async {
        server
            .call(&request(json!(1), "tools/list", json!({}), json!({})))
            .await
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn shutdown_answers_ends_the_listen_stream_then_exits_0() {
    let mut server = Server::start(&["--https"]).await;
    let listen = request(
        json!("L"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        json!({}),
    );
    let mut events = super::client::Events::of(server.post(&listen).await);
    events.next_data().await.unwrap();
    let answer = server
        .call(&request(
            json!(1),
            "tools/call",
            json!({"name": "shutdown", "arguments": {"after_ms": 1}}),
            json!({}),
        ))
        .await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "the server ended its listen streams and stops in 1 ms"
    );
    assert_eq!(events.next_data().await.unwrap()["id"], "L");
    assert_eq!(server.exit_code().await, Some(0));
}

#[tokio::test]
async fn crash_ends_the_process_with_3_without_a_response() {
    let mut server = Server::start(&["--https"]).await;
    let crash = request(
        json!(1),
        "tools/call",
        json!({"name": "crash", "arguments": {}}),
        json!({}),
    );
    let sent = server
        .send(
            "POST",
            &super::client::mcp_headers(&crash),
            crash.to_string().into_bytes(),
        )
        .await;
    assert!(sent.is_err(), "no response: {sent:?}");
    assert_eq!(server.exit_code().await, Some(3));
}
