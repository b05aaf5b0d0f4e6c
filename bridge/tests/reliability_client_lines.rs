//! Hostile lines of the client. Each line gets the error of the
//! contract (code, message, cause, id) or is dropped with a debug line, and a valid
//! request right after it still works.
//!
//! The depth limit is 127 levels of nesting, counting the frame object itself: the
//! recursion limit of serde_json (`wire::frame::MAX_DEPTH`), which refuses deeper
//! frames without using the stack.

use crate::common;

use common::*;
use mcp_bridge_vscode::config::Limits;
use serde_json::{Value, json};
use std::time::Duration;

fn with_line_limit(bytes: usize) -> Bridge {
    let mut config = config(Limits::default());
    config.max_line_bytes = bytes;
    Bridge::start_with(config)
}

/// A ping right after a hostile line gets its answer, and nothing else came before it.
async fn ping_still_works(bridge: &mut Bridge, after: &str) {
    let id = format!("ping-after-{after}");
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":id,"method":"ping"}))
            .await,
        json!({"jsonrpc":"2.0","id":id,"result":{}}),
        "after {after}"
    );
}

fn error(id: Value, code: i64, message: &str, data: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message,"data":data}})
}

const PARSE_ERROR: &str = "The request is not valid JSON.";
const SHAPE: &str = "The message is not a valid JSON-RPC 2.0 request.";
const TOO_LONG: &str = "The request is longer than the line limit of the bridge.";
const TOO_DEEP: &str = "The request has more levels of nesting than the limit of the bridge.";

#[tokio::test(flavor = "current_thread")]
async fn invalid_json_and_invalid_utf8_get_parse_error_with_a_null_id_and_the_next_request_works() {
    let mut bridge = Bridge::start();
    let lines: [&[u8]; 8] = [
        b"{\"jsonrpc\":",
        b"not json at all",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",}",
        b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"x\":\"\xff\xfe\"}",
        b"\xc3\x28\x00\x01",
        b"{\"id\":1e400,\"jsonrpc\":\"2.0\",\"method\":\"ping\"}",
    ];
    for (index, line) in lines.into_iter().enumerate() {
        bridge.send_bytes(line).await;
        assert_eq!(
            bridge.recv().await,
            error(
                json!(null),
                -32700,
                PARSE_ERROR,
                json!({"cause":"parse_error"})
            ),
            "line {index}: {}",
            String::from_utf8_lossy(line)
        );
        ping_still_works(&mut bridge, &format!("line-{index}")).await;
    }
}

#[tokio::test(flavor = "current_thread")]
async fn arrays_batches_and_scalars_get_invalid_request_with_a_null_id() {
    let mut bridge = Bridge::start();
    for line in [
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        "[]",
        "7",
        r#""ping""#,
        "null",
        "true",
        "{}",
    ] {
        bridge.send_line(line).await;
        assert_eq!(
            bridge.recv().await,
            error(
                json!(null),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"})
            ),
            "{line}"
        );
        ping_still_works(&mut bridge, line).await;
    }
}

#[tokio::test(flavor = "current_thread")]
async fn json_rpc_with_wrong_types_gets_the_error_of_its_kind_with_its_usable_id() {
    let mut bridge = Bridge::start();
    let params_error = "The parameters of the request are not valid.";
    for (line, expected) in [
        (
            json!({"jsonrpc":"2.0","id":{"a":1},"method":"ping"}),
            error(
                json!(null),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"}),
            ),
        ),
        (
            json!({"jsonrpc":"2.0","id":[1],"method":"ping"}),
            error(
                json!(null),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"}),
            ),
        ),
        (
            json!({"jsonrpc":"2.0","id":null,"method":"ping"}),
            error(
                json!(null),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"}),
            ),
        ),
        (
            json!({"jsonrpc":"2.0","id":true,"method":"ping"}),
            error(
                json!(null),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"}),
            ),
        ),
        (
            json!({"jsonrpc":"2.0","id":4,"method":7}),
            error(
                json!(4),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"}),
            ),
        ),
        (
            json!({"jsonrpc":"2.0","id":"m","method":null}),
            error(
                json!("m"),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"}),
            ),
        ),
        (
            json!({"jsonrpc":2.0,"id":5,"method":"ping"}),
            error(
                json!(5),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"}),
            ),
        ),
        (
            json!({"id":5,"method":"ping"}),
            error(
                json!(5),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"}),
            ),
        ),
        (
            json!({"jsonrpc":"2.0","id":6,"method":"ping","params":[1]}),
            error(
                json!(6),
                -32602,
                params_error,
                json!({"cause":"invalid_params"}),
            ),
        ),
        (
            json!({"jsonrpc":"2.0","id":6,"method":"ping","params":"x"}),
            error(
                json!(6),
                -32602,
                params_error,
                json!({"cause":"invalid_params"}),
            ),
        ),
        (
            json!({"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}),
            error(
                json!(7),
                -32600,
                SHAPE,
                json!({"cause":"invalid_request_shape"}),
            ),
        ),
    ] {
        bridge.send(line.clone()).await;
        assert_eq!(bridge.recv().await, expected, "{line}");
        ping_still_works(&mut bridge, &line.to_string()).await;
    }
}

/// A frame of `depth` levels of nesting, the frame object counted: a ping whose
/// params hold arrays.
fn nested_ping(id: u64, depth: usize) -> String {
    let arrays = depth - 2;
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"a":{}{}}}}}"#,
        "[".repeat(arrays),
        "]".repeat(arrays)
    )
}

#[tokio::test(flavor = "current_thread")]
async fn nesting_up_to_127_levels_is_served_and_one_more_level_gets_too_deep() {
    let mut bridge = Bridge::start();
    bridge.send_line(&nested_ping(1, 127)).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{}})
    );
    bridge.send_line(&nested_ping(2, 128)).await;
    assert_eq!(
        bridge.recv().await,
        error(
            json!(2),
            -32600,
            TOO_DEEP,
            json!({"cause":"too_deep","detail":"the limit is 127 levels"})
        )
    );
    ping_still_works(&mut bridge, "128 levels").await;
    // Far past the limit, with the id at the end: the stack is not used up.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","method":"ping","params":{{"a":{}{}}},"id":"deep"}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    bridge.send_line(&deep).await;
    assert_eq!(
        bridge.recv().await,
        error(
            json!("deep"),
            -32600,
            TOO_DEEP,
            json!({"cause":"too_deep","detail":"the limit is 127 levels"})
        )
    );
    // Unbalanced nesting is not JSON.
    bridge.send_line(&"[".repeat(50_000)).await;
    assert_eq!(bridge.recv().await["error"]["data"]["cause"], "too_deep");
    ping_still_works(&mut bridge, "100000 levels").await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_line_over_the_limit_gets_line_too_long_with_the_id_from_its_start_or_its_end() {
    let limit = 4096;
    let mut bridge = with_line_limit(limit);
    let padding = "x".repeat(3 * limit);
    let cases = [
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"t":"{padding}"}}}}"#
            ),
            json!(41),
        ),
        (
            format!(
                r#"{{"id":"first","jsonrpc":"2.0","method":"tools/call","params":{{"t":"{padding}"}}}}"#
            ),
            json!("first"),
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"t":"{padding}"}},"id":"last"}}"#
            ),
            json!("last"),
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"t":"{padding}"}} , "id" : 7 }}"#
            ),
            json!(7),
        ),
        // The id in the middle cannot be recovered; an id inside params is not the id.
        (
            format!(
                r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"t":"{padding}"}},"id":8,"x":"{padding}"}}"#
            ),
            json!(null),
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"t":"{padding}","id":9}}}}"#
            ),
            json!(null),
        ),
        // Not JSON and over the limit: still line_too_long, without an id.
        (format!("garbage {padding}"), json!(null)),
    ];
    for (line, id) in cases {
        bridge.send_line(&line).await;
        assert_eq!(
            bridge.recv().await,
            error(
                id.clone(),
                -32600,
                TOO_LONG,
                json!({"cause":"line_too_long","detail":format!("the line has {} bytes, and the limit is {limit}", line.len())})
            ),
            "id {id}"
        );
        ping_still_works(&mut bridge, &format!("too long {id}")).await;
    }
    // A line of exactly the limit is served.
    let exact = ping_of_length("exact", limit);
    assert_eq!(exact.len(), limit);
    bridge.send_line(&exact).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":"exact","result":{}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_line_at_the_limit_ending_in_crlf_is_served() {
    let limit = 200;
    let mut bridge = with_line_limit(limit);
    let exact = ping_of_length("crlf", limit);
    assert_eq!(exact.len(), limit);
    bridge.send_line(&format!("{exact}\r")).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":"crlf","result":{}})
    );
}

/// A ping of exactly `length` bytes.
fn ping_of_length(id: &str, length: usize) -> String {
    let frame = |padding: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping","params":{{"t":"{}"}}}}"#,
            "y".repeat(padding)
        )
    };
    frame(length - frame(0).len())
}

async fn ready() -> (Bridge, Upstream) {
    let mut bridge = Bridge::start();
    let (_, upstream) = bridge
        .initialize(json!({"tools":{},"prompts":{},"resources":{}}))
        .await;
    (bridge, upstream)
}

fn slow_call(id: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"slow","arguments":{"ms":1000}}})
}

const DUPLICATE: &str =
    "The request has the id of a request that is still in flight on this connection.";

#[tokio::test(flavor = "current_thread")]
async fn duplicate_ids_in_flight_get_duplicate_id_and_the_first_request_is_answered_once() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(slow_call(json!(5))).await;
    let request = upstream.recv().await;
    // Every later request with the id 5, forwarded or answered by the bridge, is
    // refused, but for ping and server/discover (below).
    for method in ["tools/call", "tools/list", "logging/setLevel"] {
        let mut duplicate =
            json!({"jsonrpc":"2.0","id":5,"method":method,"params":{"level":"info"}});
        if method == "tools/call" {
            duplicate = slow_call(json!(5));
        }
        assert_eq!(
            bridge.call(duplicate).await,
            error(json!(5), -32600, DUPLICATE, json!({"cause":"duplicate_id"})),
            "{method}"
        );
    }
    // R2, C1: ping and server/discover are answered at once in every state, also
    // with the id of a request in flight.
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":5,"method":"ping"}))
            .await,
        json!({"jsonrpc":"2.0","id":5,"result":{}})
    );
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":5,"method":"server/discover","params":{}}))
            .await,
        error(
            json!(5),
            -32601,
            "The server does not have this method.",
            json!({"cause":"method_not_found"})
        )
    );
    // The number 5 and the string "5" are different ids.
    bridge.send(slow_call(json!("5"))).await;
    let other = upstream.recv().await;
    upstream
        .respond(
            &request,
            json!({"content":[{"type":"text","text":"first"}]}),
        )
        .await;
    upstream
        .respond(&other, json!({"content":[{"type":"text","text":"string"}]}))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"first"}]}})
    );
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":"5","result":{"content":[{"type":"text","text":"string"}]}})
    );
    // Nothing went upstream for the duplicates, and the id is free again.
    assert_eq!(upstream.try_recv(Duration::from_millis(20)).await, None);
    bridge.send(slow_call(json!(5))).await;
    assert_eq!(upstream.recv().await["method"], "tools/call");
    bridge.expect_silence(Duration::from_millis(20)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_request_with_the_id_of_the_pending_initialize_gets_duplicate_id() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}))
            .await,
        error(json!(1), -32600, DUPLICATE, json!({"cause":"duplicate_id"}))
    );
    // R2: a ping is answered at once, whatever its id.
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":1,"method":"ping"}))
            .await,
        json!({"jsonrpc":"2.0","id":1,"result":{}})
    );
    upstream
        .respond(&discover, discover_result(json!({"tools":{}})))
        .await;
    let result = bridge.recv().await;
    assert_eq!(result["id"], 1);
    assert!(result.get("result").is_some(), "{result}");
    ping_still_works(&mut bridge, "initialize").await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_request_with_the_id_of_a_waiting_subscription_change_gets_duplicate_id() {
    let mut bridge = Bridge::start();
    let (_, mut upstream) = bridge
        .initialize(json!({"resources":{"subscribe":true}}))
        .await;
    let first = upstream.recv().await;
    assert_eq!(first["method"], "subscriptions/listen");
    let ack = |stream: &Value| {
        json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
            "params":{"notifications":stream["params"]["notifications"],
                "_meta":{"io.modelcontextprotocol/subscriptionId":stream["id"]}}})
    };
    upstream.send(ack(&first)).await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":9,"method":"resources/subscribe","params":{"uri":"file:///a"}}))
        .await;
    let second = upstream.recv().await;
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":9,"method":"resources/unsubscribe","params":{"uri":"file:///a"}}))
            .await,
        error(
            json!(9),
            -32600,
            DUPLICATE,
            json!({"cause":"duplicate_id"})
        )
    );
    upstream.send(ack(&second)).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":9,"result":{}})
    );
    ping_still_works(&mut bridge, "the subscription").await;
}

#[tokio::test(flavor = "current_thread")]
async fn client_ids_that_look_like_the_bridges_own_do_not_mix_with_them() {
    let (mut bridge, mut upstream) = ready().await;
    // A request of the bridge to VS Code: b-1.
    bridge
        .send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_form","arguments":{}}}))
        .await;
    let first = upstream.recv().await;
    let schema =
        json!({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]});
    upstream
        .respond(&first, json!({"resultType":"input_required","requestState":"s",
            "inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":schema}}}}))
        .await;
    assert_eq!(bridge.recv().await["id"], "b-1");
    // VS Code's own request with the id "b-1" is a different request.
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-1","method":"tools/list"}))
        .await;
    let list = upstream.recv().await;
    assert_eq!(list["method"], "tools/list");
    // VS Code cancels its request "b-1": the bridge's b-1 stays.
    bridge
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1"}}))
        .await;
    assert_eq!(
        upstream.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":list["id"],"reason":"The client canceled the request."}})
    );
    upstream.respond(&list, json!({"tools":[]})).await;
    // The answer to the bridge's b-1 still completes its round.
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"name":"Ada"}}}))
        .await;
    let second = upstream.recv().await;
    assert_eq!(
        second["params"]["inputResponses"],
        json!({"who":{"action":"accept","content":{"name":"Ada"}}})
    );
    upstream
        .respond(&second, json!({"content":[{"type":"text","text":"Ada"}]}))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Ada"}]}})
    );
    bridge.expect_silence(Duration::from_millis(20)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn responses_to_requests_the_bridge_never_sent_are_dropped_with_a_debug_line() {
    let (mut bridge, _upstream) = ready().await;
    for id in [
        json!("b-1"),
        json!("b-99"),
        json!(3),
        json!(null),
        json!("x"),
    ] {
        bridge
            .send(json!({"jsonrpc":"2.0","id":id,"result":{"action":"accept"}}))
            .await;
        bridge
            .send(json!({"jsonrpc":"2.0","id":id,"error":{"code":-32000,"message":"no"}}))
            .await;
        ping_still_works(&mut bridge, &id.to_string()).await;
        assert_eq!(
            bridge.logs.count_containing(&format!(
                "mcp-bridge-vscode: bridge: debug: dropped an answer of the client with the id {id}: no request of the bridge with this id waits"
            )),
            2,
            "{id}"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_flood_of_cancellations_for_unknown_ids_is_dropped_with_debug_lines() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(slow_call(json!(1))).await;
    let request = upstream.recv().await;
    const FLOOD: usize = 10_000;
    for n in 0..FLOOD {
        let id = if n % 2 == 0 {
            json!(n + 2)
        } else {
            json!(format!("b-{n}"))
        };
        bridge
            .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":id,"reason":"x"}}))
            .await;
    }
    for params in [json!(null), json!({}), json!({"requestId":{"a":1}})] {
        bridge
            .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":params}))
            .await;
    }
    ping_still_works(&mut bridge, "the flood").await;
    assert_eq!(
        bridge.logs.count_containing("which is not in flight"),
        FLOOD
    );
    assert_eq!(
        bridge.logs.count_containing(
            "mcp-bridge-vscode: bridge: debug: dropped a notifications/cancelled without a valid requestId"
        ),
        2
    );
    assert!(bridge.logs.has(
        "mcp-bridge-vscode: bridge: debug: dropped a notifications/cancelled for request 2, which is not in flight"
    ));
    // Nothing reached the upstream, and the request in flight is untouched.
    assert_eq!(upstream.try_recv(Duration::from_millis(20)).await, None);
    upstream.respond(&request, json!({"content":[]})).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{"content":[]}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn notifications_that_are_not_valid_get_no_answer_and_a_debug_line() {
    let mut bridge = Bridge::start();
    for line in [
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":null}),
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}),
        json!({"jsonrpc":"1.0","method":"notifications/initialized"}),
        json!({"method":"notifications/initialized"}),
    ] {
        bridge.send(line).await;
    }
    ping_still_works(&mut bridge, "notifications").await;
    assert_eq!(
        bridge.logs.count_containing(
            "mcp-bridge-vscode: bridge: debug: dropped a notification of the client that is not valid JSON-RPC"
        ),
        4
    );
}

#[tokio::test(flavor = "current_thread")]
async fn unknown_notifications_and_blank_lines_get_nothing() {
    let mut bridge = Bridge::start();
    bridge
        .send(json!({"jsonrpc":"2.0","method":"notifications/whatever","params":{"a":1}}))
        .await;
    bridge.send_line("").await;
    bridge.send_line("   \t ").await;
    bridge.send_line("\r").await;
    ping_still_works(&mut bridge, "blank lines").await;
    assert!(bridge.logs.has(
        "mcp-bridge-vscode: bridge: debug: dropped the notification notifications/whatever of the client"
    ));
}
