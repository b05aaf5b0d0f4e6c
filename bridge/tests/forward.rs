//! Forwarded requests and their results (R3-R6, O4, O8-O11, C3, quirks), with a
//! scripted upstream.

use crate::common;

use common::*;
use mcp_bridge_vscode::Exit;
use mcp_bridge_vscode::config::Limits;
use mcp_bridge_vscode::internals::upstream::UpstreamEvent;
use mcp_bridge_vscode::internals::upstream::stdio::ExitReport;
use serde_json::{Value, json};
use std::time::Duration;

async fn ready() -> (Bridge, Upstream) {
    let mut bridge = Bridge::start();
    let (_, upstream) = bridge
        .initialize(json!({"tools":{},"prompts":{},"resources":{},"completions":{}}))
        .await;
    (bridge, upstream)
}

fn base_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientInfo":{"name":"Visual Studio Code","version":"1.141.0"},
        "io.modelcontextprotocol/clientCapabilities":vscode_upstream_capabilities()})
}

#[tokio::test(flavor = "current_thread")]
async fn r3_a_list_request_goes_upstream_with_the_meta_of_the_bridge() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"page-2"}}))
        .await;
    let request = upstream.recv().await;
    assert_eq!(
        request,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"page-2","_meta":base_meta()}})
    );
    // A list without params gets params with only the _meta.
    bridge
        .send(json!({"jsonrpc":"2.0","id":5,"method":"prompts/list"}))
        .await;
    assert_eq!(
        upstream.recv().await["params"],
        json!({"_meta":base_meta()})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn r3_tools_call_meta_keeps_trace_and_vscode_keys_and_the_token_stays_with_the_bridge() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},
            "task":{},"_meta":{"progressToken":"0b9f2c1e-6a57-4c1d-9a3e-5d7f0c2b8a41",
            "vscode.conversationId":"4f1c","vscode.requestId":"request_7d3e",
            "traceparent":"00-4bf9-00f0-01","tracestate":"vscode=1","other":"x"}}}))
        .await;
    let request = upstream.recv().await;
    let mut meta = base_meta();
    let extra = json!({"progressToken":2,"vscode.conversationId":"4f1c","vscode.requestId":"request_7d3e",
        "traceparent":"00-4bf9-00f0-01","tracestate":"vscode=1"});
    meta.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    assert_eq!(
        request["params"],
        json!({"name":"add","arguments":{"a":2,"b":3},"_meta":meta})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn o5_the_log_level_goes_with_requests_started_after_it() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}))
        .await;
    assert!(
        upstream.recv().await["params"]["_meta"]
            .get("io.modelcontextprotocol/logLevel")
            .is_none()
    );
    bridge.call(json!({"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"warning"}})).await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}))
        .await;
    assert_eq!(
        upstream.recv().await["params"]["_meta"]["io.modelcontextprotocol/logLevel"],
        "warning"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn r4_r8_list_results_lose_modern_members_and_null_cursors() {
    let (mut bridge, mut upstream) = ready().await;
    for (method, cursor, expected) in [
        ("tools/list", json!(null), json!({"tools":[]})),
        ("prompts/list", json!(7), json!({"prompts":[]})),
        (
            "resources/list",
            json!("next"),
            json!({"resources":[],"nextCursor":"next"}),
        ),
        (
            "resources/templates/list",
            json!(""),
            json!({"resourceTemplates":[],"nextCursor":""}),
        ),
    ] {
        bridge
            .send(json!({"jsonrpc":"2.0","id":10,"method":method}))
            .await;
        let request = upstream.recv().await;
        let key = expected.as_object().unwrap().keys().next().unwrap().clone();
        upstream
            .respond(&request, json!({key:[],"nextCursor":cursor,"resultType":"complete","ttlMs":300000,"cacheScope":"private",
                "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}}))
            .await;
        assert_eq!(
            bridge.recv().await,
            json!({"jsonrpc":"2.0","id":10,"result":expected}),
            "{method}"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn r5_r6_o10_o11_results_keep_everything_else() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}}))
        .await;
    let request = upstream.recv().await;
    let tool = json!({"name":"bare_array","title":"Bare","icons":[{"src":"data:image/png;base64,AA=="}],
        "inputSchema":{"type":"object","properties":{"values":{"type":"array"},
            "pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false},
            "choice":{"anyOf":[{"type":"array"},{"type":"string"}]}},"required":["values"],"additionalProperties":false},
        "annotations":{"readOnlyHint":true},"_meta":{"ui":{"resourceUri":"ui://fixture/view"}},"x-unknown":[1]});
    let array_output = json!({"name":"array_output","inputSchema":{"type":"object"},"outputSchema":{"type":"array","items":{"type":"integer"}}});
    upstream.respond(&request, json!({"tools":[tool, array_output],"resultType":"complete","ttlMs":0,"cacheScope":"public"})).await;
    let result = bridge.recv().await["result"].clone();
    let schema = &result["tools"][0]["inputSchema"];
    assert_eq!(
        schema["properties"]["values"],
        json!({"type":"array","items":{}})
    );
    assert_eq!(schema["properties"]["pair"]["items"], json!({}));
    assert_eq!(schema["properties"]["pair"]["maxItems"], 2);
    assert_eq!(
        schema["properties"]["choice"]["anyOf"][0],
        json!({"type":"array","items":{}})
    );
    for key in ["title", "icons", "annotations", "_meta", "x-unknown"] {
        assert_eq!(result["tools"][0][key], tool[key], "{key}");
    }
    assert_eq!(
        result["tools"][1],
        json!({"name":"array_output","inputSchema":{"type":"object"}})
    );
    for pointer in [
        "/properties/values",
        "/properties/pair",
        "/properties/choice/anyOf/0",
    ] {
        assert!(bridge.logs.has(&format!(
            "mcp-bridge-vscode: bridge: info: tool 'bare_array': added an items schema at '{pointer}' of the input schema"
        )));
    }

    bridge.send(json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"array_output","arguments":{}}})).await;
    let request = upstream.recv().await;
    upstream
        .respond(
            &request,
            json!({"resultType":"complete","structuredContent":[1,2,3],"isError":false}),
        )
        .await;
    assert_eq!(
        bridge.recv().await["result"],
        json!({"structuredContent":[1,2,3],"isError":false,"content":[{"type":"text","text":"[1,2,3]"}]})
    );

    bridge
        .send(json!({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"x"}}))
        .await;
    let request = upstream.recv().await;
    let content = json!([{"type":"text","text":"hi","annotations":{"audience":["user"]}},{"type":"future_kind","blob":"x"}]);
    upstream
        .respond(
            &request,
            json!({"resultType":"complete","content":content,"structuredContent":{"a":1}}),
        )
        .await;
    assert_eq!(
        bridge.recv().await["result"],
        json!({"content":content,"structuredContent":{"a":1}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn o8_completion_is_always_forwarded_and_upstream_errors_pass_unchanged() {
    let mut bridge = Bridge::start();
    let (_, mut upstream) = bridge.initialize(json!({"tools":{}})).await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"a"}}}))
        .await;
    let request = upstream.recv().await;
    assert_eq!(request["method"], "completion/complete");
    let error = json!({"code":-32601,"message":"Method not found: completion/complete","data":{"method":"completion/complete"}});
    upstream.respond_error(&request, error.clone()).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":7,"error":error})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn quirk_url_elicitation_required_becomes_an_internal_error_without_data() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}))
        .await;
    let request = upstream.recv().await;
    upstream
        .respond_error(&request, json!({"code":-32042,"message":"Open it","data":{"elicitations":[{"mode":"url","url":"file:///etc/passwd","elicitationId":"1","message":"m"}]}}))
        .await;
    assert_eq!(
        bridge.recv().await["error"],
        json!({"code":-32603,"message":"Open it"})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn results_that_are_not_valid_fail_with_invalid_response() {
    let (mut bridge, mut upstream) = ready().await;
    for (result, detail) in [
        (
            json!({"resultType":"task","task":{}}),
            "the result has the resultType \"task\"",
        ),
        (json!([1]), "the result is not an object"),
    ] {
        bridge
            .send(json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}))
            .await;
        let request = upstream.recv().await;
        upstream.respond(&request, result).await;
        let error = bridge.recv().await["error"].clone();
        assert_eq!(error["code"], -32603);
        assert_eq!(
            error["data"],
            json!({"cause":"invalid_response","detail":detail})
        );
    }
    bridge
        .send(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}))
        .await;
    let request = upstream.recv().await;
    upstream.respond_error(&request, json!({"code":"x"})).await;
    assert_eq!(
        bridge.recv().await["error"]["data"]["cause"],
        "invalid_response"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn c3_o4_progress_goes_to_vscode_with_its_token_zero_too() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":0}}})).await;
    let request = upstream.recv().await;
    let token = request["params"]["_meta"]["progressToken"].clone();
    assert!(token.is_u64());
    upstream
        .send(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":1,"total":2,"message":"Step 0 of 2"}}))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":1,"total":2,"message":"Step 0 of 2"}})
    );
    upstream.respond(&request, json!({"content":[]})).await;
    assert_eq!(bridge.recv().await["id"], 2);
}

#[tokio::test(flavor = "current_thread")]
async fn o4_without_a_token_of_vscode_no_progress_goes_anywhere() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress"}}))
        .await;
    let request = upstream.recv().await;
    assert!(request["params"]["_meta"].get("progressToken").is_none());
    upstream.send(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}})).await;
    upstream.respond(&request, json!({"content":[]})).await;
    assert_eq!(bridge.recv().await["id"], 2);
}

#[tokio::test(flavor = "current_thread")]
async fn quirk_vscode_cancels_its_request_and_gets_no_response() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}))
        .await;
    let request = upstream.recv().await;
    bridge
        .send(json!({"method":"notifications/cancelled","params":{"requestId":7},"jsonrpc":"2.0"}))
        .await;
    assert_eq!(
        upstream.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":request["id"],"reason":"The client canceled the request."}})
    );
    // A late answer of the upstream goes nowhere; the next request still works.
    upstream.respond(&request, json!({"content":[]})).await;
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":8,"method":"ping"}))
            .await["id"],
        8
    );
}

#[tokio::test(flavor = "current_thread")]
async fn quirk_upstream_cancellations_never_reach_vscode() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}))
        .await;
    let request = upstream.recv().await;
    upstream
        .send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}))
        .await;
    upstream.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":request["id"]}})).await;
    upstream.respond(&request, json!({"content":[]})).await;
    assert_eq!(bridge.recv().await["id"], 3);
}

#[tokio::test(flavor = "current_thread")]
async fn requests_over_the_in_flight_limit_are_refused_at_once() {
    let mut bridge = Bridge::start_with(config(Limits {
        max_in_flight: 2,
        ..Limits::default()
    }));
    let (_, mut upstream) = bridge.initialize(json!({"tools":{}})).await;
    for id in [1, 2] {
        bridge.send(json!({"jsonrpc":"2.0","id":id + 10,"method":"tools/call","params":{"name":"slow"}})).await;
    }
    let first = upstream.recv().await;
    upstream.recv().await;
    let refused = bridge
        .call(json!({"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"slow"}}))
        .await;
    assert_eq!(
        refused["error"],
        json!({"code":-32603,"message":"The connection has too many requests in flight.","data":{"cause":"too_many_requests"}})
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: rejected request 13 (tools/call): too many requests in flight"));
    // When one ends, there is room again.
    upstream.respond(&first, json!({"content":[]})).await;
    assert_eq!(bridge.recv().await["id"], 11);
    bridge
        .send(json!({"jsonrpc":"2.0","id":14,"method":"tools/list"}))
        .await;
    assert_eq!(upstream.recv().await["method"], "tools/list");
}

#[tokio::test(flavor = "current_thread")]
async fn a_duplicate_id_in_flight_is_refused_and_the_first_request_goes_on() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}))
        .await;
    let request = upstream.recv().await;
    let duplicate = bridge
        .call(json!({"jsonrpc":"2.0","id":"a","method":"tools/list"}))
        .await;
    assert_eq!(duplicate["error"]["data"]["cause"], "duplicate_id");
    upstream
        .respond(
            &request,
            json!({"content":[{"type":"text","text":"slept"}]}),
        )
        .await;
    assert_eq!(bridge.recv().await["result"]["content"][0]["text"], "slept");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_silent_upstream_gets_still_waiting_lines_then_the_time_limit() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}))
        .await;
    let request = upstream.recv().await;
    let response = bridge.recv_within(Duration::from_secs(121)).await;
    assert_eq!(
        response["error"],
        json!({"code":-32603,"message":"The upstream server did not answer in time. See the Output channel of the server.",
            "data":{"cause":"timeout","detail":"tools/list: no response in 120 s"}})
    );
    for seconds in [10, 40, 70, 100] {
        assert!(bridge.logs.has(&format!(
            "mcp-bridge-vscode: bridge: info: still waiting for the upstream server: tools/list (request 5, {seconds} s)"
        )), "{:?}", bridge.logs.lines());
    }
    assert!(
        bridge.logs.has(
            "mcp-bridge-vscode: bridge: warning: request 5 (tools/list): no response in 120 s"
        )
    );
    let cancel = upstream.recv().await;
    assert_eq!(cancel["params"]["requestId"], request["id"]);
}

#[tokio::test(flavor = "current_thread")]
async fn an_unreadable_upstream_frame_fails_the_request_it_names() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}))
        .await;
    let request = upstream.recv().await;
    upstream
        .send_event(UpstreamEvent::Unreadable {
            frame: "a frame of 99 bytes".into(),
            reason: "it is longer than --max-line-bytes".into(),
            id: Some(request["id"].clone()),
        })
        .await;
    let error = bridge.recv().await["error"].clone();
    assert_eq!(
        error["data"],
        json!({"cause":"invalid_response","detail":"it is longer than --max-line-bytes"})
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: mcp_router: warning: dropped a frame of 99 bytes: it is longer than --max-line-bytes, and the request 5 of the client fails"));
}

#[tokio::test(flavor = "current_thread")]
async fn an_upstream_exit_fails_every_request_in_flight_and_exits_one() {
    let (mut bridge, mut upstream) = ready().await;
    for id in [1, 2] {
        bridge
            .send(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"slow"}}))
            .await;
        upstream.recv().await;
    }
    upstream.exit(ExitReport::Code(3)).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let response = bridge.recv().await;
        assert_eq!(response["error"]["code"], -32603);
        assert_eq!(
            response["error"]["data"],
            json!({"cause":"upstream_exited","detail":"the upstream server exited with code 3"})
        );
        ids.push(response["id"].as_u64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, vec![1, 2]);
    let exit = tokio::time::timeout(WAIT, &mut bridge.exit)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit, Exit::Failure);
    assert!(bridge.logs.has("mcp-bridge-vscode: mcp_stdio: warning: stdio server exited (exit code 3); no restart is left"));
    assert!(
        bridge
            .logs
            .has("mcp-bridge-vscode: bridge: error: the upstream server exited with code 3")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_end_of_stdin_cancels_requests_in_flight_without_a_response() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}}))
        .await;
    let request = upstream.recv().await;
    bridge.close_stdin();
    let cancel = upstream.recv().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], request["id"]);
    assert_eq!(upstream.try_recv(WAIT).await, Some(None));
    drop(upstream);
    let exit = tokio::time::timeout(WAIT, &mut bridge.exit)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(exit, Exit::EndOfInput);
    // No response to request 9 was written: stdout ended without a frame.
    assert_eq!(bridge.recv_or_end().await, None);
}
