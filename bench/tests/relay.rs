//! `harness-bench relay`, the floor of one more process on the path in `--floor`.
#![cfg(unix)]

use crate::common;

use harness_sim::StdioPeer;
use tokio::time::Duration;

const LIMIT: Duration = Duration::from_secs(10);

/// A server that prints what its fds 0, 1 and 2 are (`sock`, `fifo` or `other`)
/// and whether they are three different files, then exits (`harness-sim
/// stdio-probe`).
fn probe() -> Vec<String> {
    vec![common::harness_sim(), "stdio-probe".into()]
}

/// The first stdout line of `peer` as text.
async fn first_line(peer: &mut StdioPeer) -> String {
    let received = peer.recv(LIMIT).await.expect("the server prints a line");
    received.raw.expect("a line of text, not JSON")
}

/// `harness-bench relay` (the floor of `--floor`) reads and writes its own
/// stdin and stdout with blocking calls: over socket pairs it passes the lines
/// through, stops at the end of its stdin, and gives the server pipes, as the
/// bridge gives its upstream.
#[tokio::test]
async fn the_relay_serves_over_socket_pairs_and_gives_its_server_pipes() {
    let mut command = vec![common::harness_bench(), "relay".into(), "--".into()];
    command.extend(probe());
    let mut probed = StdioPeer::spawn(&command).unwrap();
    // The relay passes its own stderr on: a socket.
    assert_eq!(first_line(&mut probed).await, "fifo fifo sock distinct");
    let (status, _) = probed.wait_exit(LIMIT).await.unwrap();
    assert_eq!(status.code(), Some(0));

    // The same with `--whole-lines`, which holds each line until its newline.
    for options in [&[][..], &["--whole-lines"]] {
        let mut relay = vec![common::harness_bench(), "relay".into()];
        relay.extend(options.iter().map(|option| option.to_string()));
        relay.extend(["--".into(), "cat".into()]);
        let mut peer = StdioPeer::spawn(&relay).unwrap();
        peer.send_raw(b"{\"id\"").await.unwrap();
        peer.send_raw(b":1}\nnot json\n").await.unwrap();
        let frame = peer.recv(LIMIT).await.unwrap();
        assert_eq!(frame.frame, serde_json::json!({"id": 1}), "{options:?}");
        assert_eq!(first_line(&mut peer).await, "not json", "{options:?}");
        peer.close_stdin().await;
        let (status, after_the_end) = peer.wait_exit(LIMIT).await.expect("the relay stops");
        assert_eq!(status.code(), Some(0), "{options:?}");
        assert!(after_the_end < Duration::from_secs(2), "{after_the_end:?}");
    }
}
