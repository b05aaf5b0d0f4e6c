//! Reliability of the URL form over HTTP: faults of one request never stop
//! the bridge, and a long load leaves its memory flat.
//!
//! - a response of 64 MiB + 1 byte (one over `--max-response-bytes` at its default)
//!   fails its request alone, with or without a Content-Length; 64 MiB exactly passes;
//! - a JSON body that is the result of another request fails its call at once;
//! - a server that accepts the connection and never answers: discover fails at its
//!   time limit; a call that is never answered is cancelled by VS Code, the bridge
//!   closes its connection, and ping and the next call are answered;
//! - 10,000 calls at 64 in flight through the bridge to the fixture over HTTPS: every
//!   answer exactly once, and the bridge's VmRSS after 10,000 calls within
//!   [`FLAT_BOUND_KIB`] of its figure after 1,000.
//!
//! No assertion on speed: the machine is shared.

use crate::https_fixture;
use crate::pipes;
use crate::tiny_http;

use harness_sim::proc_mem;
use harness_sim::process::StdioPeer;
use https_fixture::{HttpsFixture, bridge, bridge_to};
use pipes::*;
use serde_json::{Value, json};
use std::time::Duration;
use tiny_http::{Reply, Seen, TinyHttp, text_result_of_size, text_result_overhead};

/// The default of `--max-response-bytes`: 64 MiB.
const LIMIT: usize = 64 * 1024 * 1024;

/// The growth of the bridge's VmRSS from 1,000 to 10,000 calls that still counts as
/// flat: 4 MiB (a run on 2026-12-01 grew by 0.7 MiB, from 13.7 MiB). A leak of a few
/// bytes per call would pass unseen; a leak of 512 bytes or more per call (4.4 MiB over
/// the 9,000 calls: a request, a response, a connection or its buffers) would not.
const FLAT_BOUND_KIB: u64 = 4 * 1024;

/// The answers of the tiny server by tool name.
fn sized_tools(message: &Value) -> Reply {
    let id = &message["id"];
    match message["params"]["name"].as_str() {
        Some("over") => Reply::Json(text_result_of_size(id, LIMIT + 1)),
        Some("over_chunked") => Reply::Chunked(text_result_of_size(id, LIMIT + 1)),
        Some("exact") => Reply::Json(text_result_of_size(id, LIMIT)),
        Some("hang") => Reply::Never,
        _ => Reply::Json(text_result_of_size(id, 200)),
    }
}

/// The bridge in front of the tiny server over loopback http, initialized.
async fn bridge_to_tiny(server: &TinyHttp, args: &[&str]) -> StdioPeer {
    let mut command_args = vec!["--log-level", "debug"];
    command_args.extend_from_slice(args);
    // The CA file is not used over http, but the helper passes one: any readable PEM.
    let mut bridge = bridge_to(&server.url, &ca_file(), &command_args, &[]);
    let initialized = initialize(&mut bridge).await;
    assert_eq!(
        initialized["result"]["capabilities"],
        json!({"logging":{},"tools":{}}),
        "{initialized}"
    );
    bridge
}

/// A CA file of tls-fixtures, written once for the process.
fn ca_file() -> String {
    static FILE: std::sync::OnceLock<(tempfile::TempDir, String)> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = tls_fixtures::generate().unwrap();
        let paths = tls_fixtures::files::write_to(dir.path(), &fixtures).unwrap();
        let ca = paths[0].display().to_string();
        (dir, ca)
    })
    .1
    .clone()
}

async fn expect_ping_answered(bridge: &mut StdioPeer, id: u64) {
    bridge
        .send(&json!({"jsonrpc":"2.0","id":id,"method":"ping"}))
        .await
        .unwrap();
    assert_eq!(
        response(bridge).await,
        json!({"jsonrpc":"2.0","id":id,"result":{}})
    );
}

/// A small call of the tiny server is answered: its text is 200 bytes of JSON in all.
async fn expect_small_call_answered(bridge: &mut StdioPeer, id: u64) {
    bridge.send(&call(id, "small", json!({}))).await.unwrap();
    let answered = response(bridge).await;
    assert_eq!(answered["id"], id, "{answered}");
    assert!(text_of(&answered).bytes().all(|b| b == b'x'), "{answered}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_of_64_mib_and_one_byte_fails_alone_and_64_mib_exactly_passes() {
    let server = TinyHttp::start(sized_tools).await;
    let mut bridge = bridge_to_tiny(&server, &[]).await;
    for (id, tool) in [(2, "over"), (3, "over_chunked")] {
        bridge.send(&call(id, tool, json!({}))).await.unwrap();
        assert_eq!(
            response(&mut bridge).await,
            json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,
                "message":"The upstream server sent a response that is not valid. See the Output channel of the server.",
                "data":{"cause":"invalid_response",
                    "detail":"the response is longer than --max-response-bytes (67108864 bytes)"}}}),
            "{tool}"
        );
        expect_ping_answered(&mut bridge, 10 + id).await;
        expect_small_call_answered(&mut bridge, 20 + id).await;
    }
    bridge.send(&call(4, "exact", json!({}))).await.unwrap();
    let answered = response(&mut bridge).await;
    assert_eq!(answered["id"], 4);
    assert_eq!(
        text_of(&answered).len(),
        LIMIT - text_result_overhead(&json!(4))
    );
    expect_ping_answered(&mut bridge, 5).await;
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_accepts_and_never_answers_fails_discover_at_its_time_limit_and_ping_is_answered()
 {
    let (url, held) = tiny_http::silent_server().await;
    // No token in a memory store: a sign-in can start, so server/discover waits for
    // both time limits together (the contract's "URL form").
    let limits = [
        "--discover-timeout",
        "1",
        "--sign-in-timeout",
        "1",
        "--token-store",
        "memory",
    ];
    let mut bridge = bridge_to(&url, &ca_file(), &limits, &[]);
    bridge.send(&initialize_frame()).await.unwrap();
    assert_eq!(
        response(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,
            "message":"The upstream server did not answer server/discover. It is not an MCP server of revision 2026-07-28, or it does not respond. See the Output channel of the server.",
            "data":{"cause":"discover_failed","detail":"no response in 2 s"}}})
    );
    expect_ping_answered(&mut bridge, 2).await;
    let (code, after) = stop(&mut bridge, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
    assert!(after < Duration::from_secs(5), "{after:?}");
    held.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_is_never_answered_is_cancelled_its_connection_closed_and_the_bridge_serves_on()
{
    let mut server = TinyHttp::start(sized_tools).await;
    let mut bridge = bridge_to_tiny(&server, &[]).await;
    bridge.send(&call(2, "hang", json!({}))).await.unwrap();
    let hang = Seen::Request("tools/call".into(), Some("hang".into()));
    server.wait_for(|seen| *seen == hang).await;
    // Meanwhile the bridge answers ping and other calls.
    expect_ping_answered(&mut bridge, 3).await;
    expect_small_call_answered(&mut bridge, 4).await;
    bridge
        .send(&json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user stopped it"}}))
        .await
        .unwrap();
    // The cancellation closes the response stream: the server sees the connection end.
    let closed = Seen::ClosedUnanswered("tools/call".into());
    server.wait_for(|seen| *seen == closed).await;
    // No answer for the cancelled call; the next ones are answered.
    expect_ping_answered(&mut bridge, 5).await;
    expect_small_call_answered(&mut bridge, 6).await;
    assert!(
        bridge.recv(Duration::from_millis(300)).await.is_none(),
        "an answer after the cancellation"
    );
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
}

/// The answers of a server with a bug: the JSON body of the call `other_id` is the
/// result of a request the bridge never sent; every other call gets its own.
fn misaddressed_tools(message: &Value) -> Reply {
    match message["params"]["name"].as_str() {
        Some("other_id") => Reply::Json(text_result_of_size(&json!(9_999_999), 200)),
        _ => Reply::Json(text_result_of_size(&message["id"], 200)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_body_that_answers_another_request_fails_its_call_at_once_and_the_bridge_serves_on()
{
    // A JSON body carries one message: when it is not the response, none comes.
    let server = TinyHttp::start(misaddressed_tools).await;
    let mut bridge = bridge_to_tiny(&server, &[]).await;
    bridge.send(&call(2, "other_id", json!({}))).await.unwrap();
    assert_eq!(
        response(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32603,
            "message":"The upstream server sent a response that is not valid. See the Output channel of the server.",
            "data":{"cause":"invalid_response",
                "detail":"the JSON body is not the response to the request"}}})
    );
    expect_ping_answered(&mut bridge, 3).await;
    expect_small_call_answered(&mut bridge, 4).await;
    // The Output channel shows both: the stray result and the failed request.
    for line in [
        "mcp-bridge-vscode: mcp_router: warning: dropped a response with the id 9999999: the bridge sent no request with this id",
        "mcp-bridge-vscode: bridge: warning: request 2 (tools/call): the upstream request failed: the JSON body is not the response to the request",
    ] {
        let seen = bridge.wait_stderr(EXCHANGE, |l| l == line).await;
        assert!(
            seen.is_some(),
            "no line {line:?} in {:?}",
            bridge.stderr_lines()
        );
    }
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
}

/// The answers of a server with another bug: the JSON body of the call `both` has
/// the call's id, but a result and an error at once; every other call gets its own.
fn ambiguous_tools(message: &Value) -> Reply {
    match message["params"]["name"].as_str() {
        Some("both") => Reply::Json(
            serde_json::to_vec(&json!({"jsonrpc":"2.0","id":message["id"],
                "result":{"content":[]},"error":{"code":1,"message":"x"}}))
            .unwrap(),
        ),
        _ => Reply::Json(text_result_of_size(&message["id"], 200)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_body_with_the_request_s_id_that_is_not_valid_is_its_one_answer() {
    let server = TinyHttp::start(ambiguous_tools).await;
    let mut bridge = bridge_to_tiny(&server, &[]).await;
    bridge.send(&call(2, "both", json!({}))).await.unwrap();
    assert_eq!(
        response(&mut bridge).await,
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32603,
            "message":"The upstream server sent a response that is not valid. See the Output channel of the server.",
            "data":{"cause":"invalid_response","detail":"it is not a valid JSON-RPC message"}}})
    );
    expect_ping_answered(&mut bridge, 3).await;
    expect_small_call_answered(&mut bridge, 4).await;
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
    // The frame that is not valid was the request's answer: its exchange ended
    // there, with no second failure of the request after it.
    let lines = bridge.stderr_lines();
    let dropped = "mcp-bridge-vscode: mcp_router: warning: dropped a frame: it is not a valid JSON-RPC message, and the request 2 of the client fails";
    assert_eq!(
        lines.iter().filter(|line| *line == dropped).count(),
        1,
        "{lines:#?}"
    );
    assert!(
        !lines
            .iter()
            .any(|line| line.contains("failed after its end")),
        "{lines:#?}"
    );
}

const IN_FLIGHT: usize = 64;

fn echo(id: usize) -> Value {
    call(id as u64, "echo", json!({ "text": format!("n{id}") }))
}

/// Sends the echo calls `ids` with [`IN_FLIGHT`] in flight; checks that each is
/// answered exactly once, with its own text.
async fn run_load(bridge: &mut StdioPeer, ids: std::ops::Range<usize>) {
    let count = ids.len();
    let mut answered = vec![false; count];
    let (mut sent, mut received) = (0, 0);
    while received < count {
        while sent < count && sent - received < IN_FLIGHT {
            bridge.send(&echo(ids.start + sent)).await.unwrap();
            sent += 1;
        }
        let frame = recv(bridge).await;
        let Some(id) = frame.get("id") else {
            continue; // the list changes of the listen stream
        };
        let id = id
            .as_u64()
            .unwrap_or_else(|| panic!("an id that was never sent: {frame}"))
            as usize;
        assert!(ids.contains(&id), "an id that was never sent: {frame}");
        let slot = &mut answered[id - ids.start];
        assert!(!*slot, "a second answer for {id}: {frame}");
        *slot = true;
        assert_eq!(text_of(&frame), format!("n{id}"), "{frame}");
        received += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_at_64_in_flight_over_https_are_answered_once_and_memory_stays_flat() {
    let fixture = HttpsFixture::start(&[], &[]).await;
    let mut bridge = bridge(&fixture, &[], &[]);
    assert!(initialize(&mut bridge).await.get("result").is_some());
    let pid = bridge.pid().expect("the bridge has a pid");
    run_load(&mut bridge, 0..1_000).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let at_1000 = proc_mem::read(pid).unwrap_or_default().rss / 1024;
    run_load(&mut bridge, 1_000..10_000).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let at_10000 = proc_mem::read(pid).unwrap_or_default().rss / 1024;
    eprintln!(
        "URL load: VmRSS of the bridge {at_1000} KiB after 1,000 calls, {at_10000} KiB after 10,000, peak {} KiB",
        proc_mem::read(pid).unwrap_or_default().peak / 1024
    );
    assert!(at_1000 > 0 && at_10000 > 0, "no VmRSS");
    assert!(
        at_10000 <= at_1000 + FLAT_BOUND_KIB,
        "the memory of the bridge grew: {at_1000} KiB after 1,000 calls, {at_10000} KiB after 10,000"
    );
    let stderr = bridge.stderr_lines();
    assert!(
        !stderr.iter().any(|line| line.contains("warning")),
        "{stderr:?}"
    );
    assert_eq!(stop(&mut bridge, Duration::from_secs(10)).await.0, Some(0));
}
