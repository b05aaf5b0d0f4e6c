//! An upstream server that fails, scripted in the same process
//! (the faults at the level of frames; `reliability_upstream_process.rs` has the
//! faults of a real process). Each case: the error of the contract, the exit code,
//! the lines of the Output channel, and every request answered exactly once.

use crate::common;

use common::*;
use mcp_bridge_vscode::Exit;
use mcp_bridge_vscode::config::Limits;
use mcp_bridge_vscode::internals::upstream::stdio::ExitReport;
use serde_json::{Value, json};
use std::time::Duration;

const EXITED: &str = "The upstream server process stopped. See the Output channel of the server.";
const INVALID: &str =
    "The upstream server sent a response that is not valid. See the Output channel of the server.";

async fn ready() -> (Bridge, Upstream) {
    ready_with(Limits::default()).await
}

async fn ready_with(limits: Limits) -> (Bridge, Upstream) {
    let mut bridge = Bridge::start_with(config(limits));
    let (_, upstream) = bridge
        .initialize(json!({"tools":{},"prompts":{},"resources":{},"completions":{}}))
        .await;
    (bridge, upstream)
}

fn call(id: Value, name: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":{}}})
}

fn exited(id: Value, report: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,"message":EXITED,
        "data":{"cause":"upstream_exited","detail":format!("the upstream server exited with {report}")}}})
}

fn invalid(id: Value, detail: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,"message":INVALID,
        "data":{"cause":"invalid_response","detail":detail}}})
}

/// The bridge ends with `exit`, and stdout ends after the frames already read.
async fn ends_with(bridge: &mut Bridge, exit: Exit) {
    let got = tokio::time::timeout(WAIT, &mut bridge.exit)
        .await
        .expect("the bridge stops")
        .expect("the session did not panic");
    assert_eq!(got, exit);
    assert_eq!(bridge.recv_or_end().await, None, "a frame after the end");
}

fn has_exit_lines(bridge: &Bridge, short: &str, long: &str) {
    assert!(
        bridge.logs.has(&format!(
            "mcp-bridge-vscode: mcp_stdio: warning: stdio server exited ({short}); no restart is left"
        )),
        "{:?}",
        bridge.logs.lines()
    );
    assert!(bridge.logs.has(&format!(
        "mcp-bridge-vscode: bridge: error: the upstream server exited with {long}"
    )));
}

#[tokio::test(flavor = "current_thread")]
async fn an_upstream_that_dies_before_answering_discover_fails_initialize_and_exits_one() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    assert_eq!(upstream.recv().await["method"], "server/discover");
    upstream.exit(ExitReport::Code(5)).await;
    assert_eq!(bridge.recv().await, exited(json!(1), "code 5"));
    ends_with(&mut bridge, Exit::Failure).await;
    has_exit_lines(&bridge, "exit code 5", "code 5");
    assert!(
        !bridge
            .logs
            .has("mcp-bridge-vscode: bridge: info: the upstream server is ready")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn an_upstream_killed_by_a_signal_during_calls_fails_each_call_once_and_exits_one() {
    let (mut bridge, mut upstream) = ready().await;
    for id in [json!(1), json!("two"), json!(3)] {
        bridge.send(call(id, "slow")).await;
        upstream.recv().await;
    }
    upstream.exit(ExitReport::Signal(9)).await;
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.push(bridge.recv().await);
    }
    for id in [json!(1), json!("two"), json!(3)] {
        assert_eq!(
            answers.iter().filter(|a| a["id"] == id).count(),
            1,
            "{id}: {answers:?}"
        );
        assert!(answers.contains(&exited(id, "signal 9")));
    }
    ends_with(&mut bridge, Exit::Failure).await;
    has_exit_lines(&bridge, "signal 9", "signal 9");
}

#[tokio::test(flavor = "current_thread")]
async fn an_upstream_that_dies_between_two_rounds_fails_the_call_and_cancels_the_questions() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(call(json!(4), "ask_form")).await;
    let first = upstream.recv().await;
    let schema = json!({"type":"object","properties":{"name":{"type":"string"}}});
    upstream
        .respond(
            &first,
            json!({"resultType":"input_required","requestState":"s","inputRequests":{
            "a":{"method":"elicitation/create","params":{"message":"A?","requestedSchema":schema}},
            "b":{"method":"roots/list"}}}),
        )
        .await;
    assert_eq!(bridge.recv().await["id"], "b-1");
    assert_eq!(bridge.recv().await["id"], "b-2");
    // One answer came, the other did not, when the upstream dies.
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-2","result":{"roots":[]}}))
        .await;
    // The answer is in before the upstream dies.
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":"p","method":"ping"}))
            .await["id"],
        "p"
    );
    upstream.exit(ExitReport::Code(3)).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1","reason":"the upstream server stopped"}})
    );
    assert_eq!(bridge.recv().await, exited(json!(4), "code 3"));
    ends_with(&mut bridge, Exit::Failure).await;
    has_exit_lines(&bridge, "exit code 3", "code 3");
}

#[tokio::test(flavor = "current_thread")]
async fn an_upstream_that_dies_while_a_listen_stream_is_open_exits_one_without_a_frame() {
    let mut bridge = Bridge::start();
    let (_, mut upstream) = bridge
        .initialize(json!({"tools":{"listChanged":true}}))
        .await;
    let stream = upstream.recv().await;
    assert_eq!(stream["method"], "subscriptions/listen");
    upstream
        .send(
            json!({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",
            "params":{"notifications":stream["params"]["notifications"],
                "_meta":{"io.modelcontextprotocol/subscriptionId":stream["id"]}}}),
        )
        .await;
    assert_eq!(
        bridge.recv().await["method"],
        "notifications/tools/list_changed"
    );
    upstream.exit(ExitReport::Code(0)).await;
    ends_with(&mut bridge, Exit::Failure).await;
    has_exit_lines(&bridge, "exit code 0", "code 0");
    assert_eq!(bridge.logs.count_containing("A new stream follows"), 0);
}

#[tokio::test(flavor = "current_thread")]
async fn responses_to_unknown_ids_are_dropped_with_a_warning_and_the_call_goes_on() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(call(json!(7), "echo")).await;
    let request = upstream.recv().await;
    for id in [json!(999), json!("2"), json!(-1), json!(2.5), json!(null)] {
        upstream
            .send(json!({"jsonrpc":"2.0","id":id,"result":{"content":[]}}))
            .await;
    }
    // An id that the bridge used before, for a request that is over.
    upstream
        .send(json!({"jsonrpc":"2.0","id":1,"result":{}}))
        .await;
    bridge.expect_silence(Duration::from_millis(20)).await;
    for id in ["999", "\"2\"", "-1", "2.5", "null"] {
        assert!(
            bridge.logs.has(&format!(
                "mcp-bridge-vscode: mcp_router: warning: dropped a response with the id {id}: the bridge sent no request with this id"
            )),
            "{id}: {:?}",
            bridge.logs.lines()
        );
    }
    assert!(bridge.logs.has(
        "mcp-bridge-vscode: mcp_router: debug: dropped a response with the id 1: the request is no longer in flight"
    ));
    upstream
        .respond(&request, json!({"content":[{"type":"text","text":"hi"}]}))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn results_of_the_wrong_shape_fail_with_invalid_response() {
    let (mut bridge, mut upstream) = ready().await;
    let cases = [
        (
            "tools/call",
            json!({"content":"text"}),
            "the tools/call result has a content that is not an array",
        ),
        (
            "tools/list",
            json!({"tools":{"a":1}}),
            "the tools/list result has no tools array",
        ),
        (
            "tools/list",
            json!({"nextCursor":"x"}),
            "the tools/list result has no tools array",
        ),
        (
            "prompts/list",
            json!({"prompts":null}),
            "the prompts/list result has no prompts array",
        ),
        (
            "resources/list",
            json!({"resources":"all"}),
            "the resources/list result has no resources array",
        ),
        (
            "resources/templates/list",
            json!({}),
            "the resources/templates/list result has no resourceTemplates array",
        ),
        (
            "prompts/get",
            json!({"messages":{}}),
            "the prompts/get result has no messages array",
        ),
        (
            "resources/read",
            json!({"contents":7}),
            "the resources/read result has no contents array",
        ),
        (
            "completion/complete",
            json!({"completion":[]}),
            "the completion/complete result has no completion object",
        ),
        ("tools/list", json!([]), "the result is not an object"),
        ("tools/call", json!("done"), "the result is not an object"),
    ];
    for (index, (method, result, detail)) in cases.into_iter().enumerate() {
        let id = json!(100 + index);
        bridge
            .send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"name":"x","uri":"file:///x"}}))
            .await;
        let request = upstream.recv().await;
        upstream.respond(&request, result.clone()).await;
        assert_eq!(
            bridge.recv().await,
            invalid(id.clone(), detail),
            "{method} {result}"
        );
        if result.is_object() {
            assert!(bridge.logs.has(&format!(
                "mcp-bridge-vscode: bridge: warning: request {id} ({method}): {detail}"
            )));
        }
    }
    // The next call with a good result works.
    bridge.send(call(json!(1), "echo")).await;
    let request = upstream.recv().await;
    upstream.respond(&request, json!({"content":[]})).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{"content":[]}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn unknown_content_types_and_members_pass_through_untouched() {
    let (mut bridge, mut upstream) = ready().await;
    let blocks = json!([
        {"type":"hologram","frames":[{"t":0,"data":"AAEC"}],"annotations":{"priority":0.5}},
        {"type":"text","text":"x","_meta":{"vendor/key":[1,{"a":null}]}},
        {"type":"resource_link","uri":"ui://fixture/view","name":"v","x-extra":true},
        {"no_type":1}
    ]);
    let cases = [
        (
            "tools/call",
            json!({"content":blocks,"isError":false,"structuredContent":{"k":[1.5,-0.0,1e300]},"x-future":{"a":1}}),
        ),
        (
            "prompts/get",
            json!({"messages":[{"role":"user","content":blocks[0]}],"description":"d","x-future":[]}),
        ),
        (
            "resources/read",
            json!({"contents":[{"uri":"ui://fixture/view","mimeType":"text/html;profile=mcp-app","text":"<p>","_meta":{"ui":{"csp":{}}}}]}),
        ),
        (
            "completion/complete",
            json!({"completion":{"values":["a"],"total":1,"hasMore":false,"x":1}}),
        ),
    ];
    for (index, (method, result)) in cases.into_iter().enumerate() {
        bridge
            .send(json!({"jsonrpc":"2.0","id":index,"method":method,"params":{}}))
            .await;
        let request = upstream.recv().await;
        let mut upstream_result = result.clone();
        upstream_result["resultType"] = json!("complete");
        upstream.respond(&request, upstream_result).await;
        assert_eq!(
            bridge.recv().await,
            json!({"jsonrpc":"2.0","id":index,"result":result}),
            "{method}"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_flood_of_upstream_notifications_reaches_vscode_only_where_the_contract_says() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p"}}}))
        .await;
    let request = upstream.recv().await;
    let token = request["params"]["_meta"]["progressToken"].clone();
    const FLOOD: usize = 5_000;
    for n in 0..FLOOD {
        upstream
            .send(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":n}}))
            .await;
        // Noise: unknown methods, progress of no request, logs without a level,
        // cancellations, list changes of a stream that is not the bridge's, and
        // updates of a resource that VS Code did not subscribe.
        let noise = match n % 6 {
            0 => json!({"jsonrpc":"2.0","method":"notifications/unknown","params":{"n":n}}),
            1 => {
                json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9999,"progress":n}})
            }
            2 => {
                json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"x"}})
            }
            3 => {
                json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})
            }
            4 => {
                json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9999}}})
            }
            _ => {
                json!({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///x"}})
            }
        };
        upstream.send(noise).await;
    }
    upstream.respond(&request, json!({"content":[]})).await;
    for n in 0..FLOOD {
        assert_eq!(
            bridge.recv().await,
            json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":n}})
        );
    }
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{"content":[]}})
    );
    bridge.expect_silence(Duration::from_millis(20)).await;
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_upstream_that_stops_reading_gets_timeouts_and_its_late_answers_are_dropped() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":"list","method":"tools/list"}))
        .await;
    bridge.send(call(json!("call"), "slow")).await;
    let list = upstream.recv().await;
    let call_request = upstream.recv().await;
    // Nothing more is read upstream; pings still work meanwhile.
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":"p","method":"ping"}))
            .await["result"],
        json!({})
    );
    let timeout = |id: &str, detail: &str| {
        json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,
            "message":"The upstream server did not answer in time. See the Output channel of the server.",
            "data":{"cause":"timeout","detail":detail}}})
    };
    assert_eq!(
        bridge.recv_within(Duration::from_secs(121)).await,
        timeout("list", "tools/list: no response in 120 s")
    );
    assert_eq!(
        bridge.recv_within(Duration::from_secs(3600)).await,
        timeout("call", "tools/call: no response in 3600 s")
    );
    assert!(bridge.logs.has(
        "mcp-bridge-vscode: bridge: warning: request \"call\" (tools/call): no response in 3600 s"
    ));
    // The late answers go nowhere.
    upstream.respond(&list, json!({"tools":[]})).await;
    upstream.respond(&call_request, json!({"content":[]})).await;
    bridge.expect_silence(Duration::from_secs(1)).await;
    assert_eq!(
        bridge
            .logs
            .count_containing("the request is no longer in flight"),
        2
    );
    // Each timed-out request was cancelled upstream.
    for request in [&list, &call_request] {
        assert_eq!(
            upstream.recv().await,
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":request["id"],"reason":"The bridge stopped waiting for the answer."}})
        );
    }
    assert_eq!(bridge.close().await, Exit::EndOfInput);
}

/// A sampling answer whose content holds `arrays` levels of arrays.
fn deep_sampling_answer(arrays: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":"b-1","result":{{"role":"assistant","model":"m","content":{}1{}}}}}"#,
        "[".repeat(arrays),
        "]".repeat(arrays)
    )
}

#[tokio::test(flavor = "current_thread")]
async fn an_answer_of_vscode_too_deep_for_the_next_round_fails_the_request_at_once() {
    let (mut bridge, mut upstream) = ready().await;
    let ask = json!({"resultType":"input_required","requestState":"s","inputRequests":{
        "model":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}}});
    // 124 levels of content: the round upstream would have 128 levels.
    bridge.send(call(json!(1), "sample")).await;
    let first = upstream.recv().await;
    upstream.respond(&first, ask.clone()).await;
    assert_eq!(bridge.recv().await["id"], "b-1");
    bridge.send_line(&deep_sampling_answer(124)).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,
            "message":"The client sent an answer that is not valid for the input request of the upstream server.",
            "data":{"cause":"invalid_client_answer",
                "detail":"input request 'model': the answer has more levels of nesting than the limit of the bridge"}}})
    );
    assert_eq!(upstream.try_recv(Duration::from_millis(20)).await, None);
    // One level less: the next round goes upstream with 127 levels.
    bridge.send(call(json!(2), "sample")).await;
    let first = upstream.recv().await;
    upstream.respond(&first, ask).await;
    assert_eq!(bridge.recv().await["id"], "b-2");
    bridge
        .send_line(&deep_sampling_answer(123).replace("b-1", "b-2"))
        .await;
    let second = upstream.recv().await;
    let mut line = second.to_string().into_bytes();
    line.push(b'\n');
    assert!(mcp_bridge_vscode::internals::wire::frame::parse(&line).is_ok());
    upstream.respond(&second, json!({"content":[]})).await;
    assert_eq!(bridge.recv().await["id"], 2);
}

/// On two worker threads, as in the executable: the flood fills the channel of
/// upstream events as fast as the session empties it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_never_stops_sending_notifications_does_not_starve_vscode() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(call(json!(1), "echo")).await;
    let request = upstream.recv().await;
    let events = upstream.events();
    let flood = tokio::spawn(async move {
        let noise = json!({"jsonrpc":"2.0","method":"notifications/unknown"});
        loop {
            let message =
                mcp_bridge_vscode::internals::wire::frame::Message::classify(noise.clone())
                    .unwrap();
            if events
                .send(mcp_bridge_vscode::internals::upstream::UpstreamEvent::Message(message))
                .await
                .is_err()
            {
                return;
            }
        }
    });
    for id in 0..20 {
        assert_eq!(
            bridge
                .call(json!({"jsonrpc":"2.0","id":format!("p{id}"),"method":"ping"}))
                .await["id"],
            format!("p{id}")
        );
    }
    bridge
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}))
        .await;
    let cancel = loop {
        let frame = upstream.recv().await;
        if frame["method"] == "notifications/cancelled" {
            break frame;
        }
    };
    assert_eq!(cancel["params"]["requestId"], request["id"]);
    flood.abort();
}
