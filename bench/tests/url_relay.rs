//! `harness-bench url-relay`, the floor of the URL form in `--floor`, against the
//! fixture over HTTPS: each line is POSTed with its method's headers, each answer
//! comes back as a line, a notification's empty answer writes nothing, and the end
//! of stdin ends the relay with 0.

use std::path::Path;
use std::process::Stdio;

use harness_bench::Side;
use harness_bench::frames::Frames;
use harness_bench::http::HttpsFixture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::time::{Duration, timeout};

use crate::common::{fixture, harness_bench};

#[tokio::test]
async fn the_url_relay_posts_each_line_and_writes_each_answer() {
    let fixture = HttpsFixture::start(Path::new(&fixture())).await.unwrap();
    let mut relay = Command::new(harness_bench())
        .args(["url-relay", &fixture.ca_file, &fixture.url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = relay.stdin.take().unwrap();
    let mut lines = BufReader::new(relay.stdout.take().unwrap()).lines();
    // The frames of the bench's direct client: the whole _meta of 2026-07-28.
    let frames = Frames::new(Side::Relay);
    let mut echo = Vec::new();
    frames.echo().render(1, "over the relay", &mut echo);
    let cancelled =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}});
    let frames: [Value; 3] = [
        serde_json::from_slice(&frames.opening()).unwrap(),
        cancelled,
        serde_json::from_slice(&echo).unwrap(),
    ];
    for frame in &frames {
        let mut line = frame.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).await.unwrap();
        // One at a time, so that the answers come in the order of the requests.
        if frame.get("id").is_some() {
            let answer = timeout(Duration::from_secs(30), lines.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let answer: Value = serde_json::from_str(&answer).unwrap();
            assert_eq!(answer["id"], frame["id"], "{answer}");
            assert!(answer.get("result").is_some(), "{answer}");
            if answer["id"] == 1 {
                assert!(answer.to_string().contains("over the relay"), "{answer}");
            }
        }
    }
    drop(stdin);
    let end = timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap();
    assert_eq!(end.unwrap(), None, "nothing more after the notification");
    let status = timeout(Duration::from_secs(30), relay.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}
