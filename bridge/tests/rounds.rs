//! The rounds of input requests that the bridge does for VS Code (R8, O1-O3, C2,
//! quirks, M2), with a scripted upstream.

use crate::common;

use common::*;
use mcp_bridge_vscode::Exit;
use mcp_bridge_vscode::config::Limits;
use mcp_bridge_vscode::internals::upstream::stdio::ExitReport;
use serde_json::{Value, json};
use std::time::Duration;

async fn ready() -> (Bridge, Upstream) {
    ready_with(Limits::default()).await
}

async fn ready_with(limits: Limits) -> (Bridge, Upstream) {
    let mut bridge = Bridge::start_with(config(limits));
    let (_, upstream) = bridge
        .initialize(json!({"tools":{},"prompts":{},"resources":{}}))
        .await;
    (bridge, upstream)
}

fn call(id: u64, name: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":{}}})
}

fn input_required(inputs: Value, state: &str) -> Value {
    json!({"resultType":"input_required","inputRequests":inputs,"requestState":state})
}

fn form_schema() -> Value {
    json!({"type":"object","properties":{"name":{"type":"string","title":"Name","minLength":1}},"required":["name"]})
}

/// Calls `tool`, and the upstream answers its first round with `inputs` and
/// `state`; returns that first upstream request.
async fn first_round(
    bridge: &mut Bridge,
    upstream: &mut Upstream,
    id: u64,
    tool: &str,
    inputs: Value,
    state: &str,
) -> Value {
    bridge.send(call(id, tool)).await;
    let first = upstream.recv().await;
    upstream
        .respond(&first, input_required(inputs, state))
        .await;
    first
}

/// One form input, `profile`, with the name form.
fn form_input() -> Value {
    json!({"profile":{"method":"elicitation/create","params":{"message":"m","requestedSchema":form_schema()}}})
}

/// Sends `method` for `name`; its first round asks for the name form, which VS
/// Code declines; returns the second upstream request.
async fn declined_first_round(
    bridge: &mut Bridge,
    upstream: &mut Upstream,
    id: u64,
    method: &str,
    name: &str,
    state: &str,
) -> Value {
    bridge
        .send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"name":name}}))
        .await;
    let first = upstream.recv().await;
    upstream
        .respond(&first, input_required(form_input(), state))
        .await;
    let form = bridge.recv().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":form["id"],"result":{"action":"decline"}}))
        .await;
    upstream.recv().await
}

fn text(text: &str) -> Value {
    json!({"resultType":"complete","content":[{"type":"text","text":text}]})
}

#[tokio::test(flavor = "current_thread")]
async fn r8_o1_a_form_round_goes_to_vscode_and_back_with_the_state() {
    let (mut bridge, mut upstream) = ready().await;
    let first = first_round(&mut bridge, &mut upstream, 6, "ask_form", json!({"profile":{"method":"elicitation/create","params":{"mode":"form","message":"Tell us about you.","requestedSchema":form_schema()}}}), "state-1").await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":"b-1","method":"elicitation/create","params":{"mode":"form","message":"Tell us about you.","requestedSchema":form_schema()}})
    );
    bridge.send(json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"name":"Ada"}}})).await;
    let second = upstream.recv().await;
    assert_ne!(second["id"], first["id"]);
    let mut expected = first["params"].clone();
    expected["inputResponses"] = json!({"profile":{"action":"accept","content":{"name":"Ada"}}});
    expected["requestState"] = json!("state-1");
    assert_eq!(second["params"], expected);
    upstream
        .respond(&second, text("form: accept {\"name\":\"Ada\"}"))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"form: accept {\"name\":\"Ada\"}"}]}})
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: debug: request 6 (tools/call): sent elicitation/create to the client as request \"b-1\""));
}

#[tokio::test(flavor = "current_thread")]
async fn all_inputs_of_a_round_go_at_once_and_the_answers_keep_their_keys() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 7, "multi", json!({
            "name":{"method":"elicitation/create","params":{"message":"Your name?","requestedSchema":form_schema()}},
            "roots":{"method":"roots/list"}}), "m").await;
    let form = bridge.recv().await;
    let roots = bridge.recv().await;
    assert_eq!(
        (form["id"].as_str(), roots["id"].as_str()),
        (Some("b-1"), Some("b-2"))
    );
    assert_eq!(
        roots,
        json!({"jsonrpc":"2.0","id":"b-2","method":"roots/list","params":{}})
    );
    // Answers in the other order; only file:// roots reach the upstream (O3).
    bridge.send(json!({"jsonrpc":"2.0","id":"b-2","result":{"roots":[{"name":"ws","uri":"file:///home/me/ws"},{"uri":"vscode-remote://x/y"}]}})).await;
    assert_eq!(
        upstream.try_recv(Duration::from_millis(20)).await,
        None,
        "the next round came too early"
    );
    bridge.send(json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"name":"Ada"}}})).await;
    let second = upstream.recv().await;
    assert_eq!(
        second["params"]["inputResponses"],
        json!({"roots":{"roots":[{"uri":"file:///home/me/ws","name":"ws"}]},"name":{"action":"accept","content":{"name":"Ada"}}})
    );
    upstream
        .respond(&second, text("name: Ada (accept); roots: 1"))
        .await;
    assert_eq!(
        bridge.recv().await["result"]["content"][0]["text"],
        "name: Ada (accept); roots: 1"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn o1_a_url_elicitation_gets_an_id_and_its_step_completes_before_the_result() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 6, "ask_url", json!({"auth":{"method":"elicitation/create","params":{"mode":"url","message":"Sign in to continue.","url":"https://example.com/auth"}}}), "u").await;
    let request = bridge.recv().await;
    let elicitation_id = request["params"]["elicitationId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        request,
        json!({"jsonrpc":"2.0","id":"b-1","method":"elicitation/create","params":{"mode":"url","message":"Sign in to continue.","url":"https://example.com/auth","elicitationId":elicitation_id}})
    );
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"x":1}}}))
        .await;
    let second = upstream.recv().await;
    assert_eq!(
        second["params"]["inputResponses"],
        json!({"auth":{"action":"accept"}})
    );
    upstream.respond(&second, text("url: accept")).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":elicitation_id}})
    );
    assert_eq!(
        bridge.recv().await["result"]["content"][0]["text"],
        "url: accept"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn o1_a_url_asked_again_after_its_accept_becomes_the_continue_form() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(call(6, "ask_url_twice")).await;
    let url_input = json!({"auth":{"method":"elicitation/create","params":{"mode":"url","message":"Sign in to continue.","url":"https://example.com/auth"}}});
    let first = upstream.recv().await;
    upstream
        .respond(&first, input_required(url_input.clone(), "round-1"))
        .await;
    let request = bridge.recv().await;
    let elicitation_id = request["params"]["elicitationId"].clone();
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept"}}))
        .await;
    let second = upstream.recv().await;
    upstream
        .respond(&second, input_required(url_input, "round-2"))
        .await;
    let again = bridge.recv().await;
    assert_eq!(again["id"], "b-2");
    assert_eq!(
        again["params"],
        json!({"mode":"form","message":"Sign in to continue.","requestedSchema":{"type":"object",
            "properties":{"choice":{"type":"string","title":"Continue","enum":["Continue"],"default":"Continue"}},"required":["choice"]}})
    );
    bridge.send(json!({"jsonrpc":"2.0","id":"b-2","result":{"action":"accept","content":{"choice":"Continue"}}})).await;
    let third = upstream.recv().await;
    assert_eq!(
        third["params"]["inputResponses"],
        json!({"auth":{"action":"accept"}})
    );
    assert_eq!(third["params"]["requestState"], "round-2");
    upstream.respond(&third, text("url twice: accept")).await;
    let complete = bridge.recv().await;
    assert_eq!(complete["method"], "notifications/elicitation/complete");
    assert_eq!(complete["params"]["elicitationId"], elicitation_id);
    assert_eq!(
        bridge.recv().await["result"]["content"][0]["text"],
        "url twice: accept"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn quirk_an_unsafe_url_never_reaches_vscode_and_the_upstream_gets_decline() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 6, "ask_bad_url", json!({"file":{"method":"elicitation/create","params":{"mode":"url","message":"Open the file.","url":"file://localhost/etc/passwd"}}}), "b").await;
    let second = upstream.recv().await;
    assert_eq!(
        second["params"]["inputResponses"],
        json!({"file":{"action":"decline"}})
    );
    upstream.respond(&second, text("url: decline")).await;
    assert_eq!(
        bridge.recv().await["result"]["content"][0]["text"],
        "url: decline"
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: input request 'file': the bridge refused the URL of a URL elicitation, and the upstream server gets decline"));
}

#[tokio::test(flavor = "current_thread")]
async fn quirk_an_empty_form_is_the_continue_choice_and_accept_sends_empty_content() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 6, "confirm", json!({"ok":{"method":"elicitation/create","params":{"message":"Delete it?","requestedSchema":{"type":"object"}}}}), "c").await;
    let form = bridge.recv().await;
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["choice"]["enum"],
        json!(["Continue"])
    );
    assert_eq!(form["params"]["message"], "Delete it?");
    bridge.send(json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"choice":"Continue"}}})).await;
    assert_eq!(
        upstream.recv().await["params"]["inputResponses"],
        json!({"ok":{"action":"accept","content":{}}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn c2_an_undeclared_kind_fails_the_request_before_vscode_sees_anything() {
    let mut bridge = Bridge::start();
    bridge.send(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{"sampling":{},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"copilot-cli","version":"1.0.92"}}})).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    upstream
        .respond(&discover, discover_result(json!({"tools":{}})))
        .await;
    bridge.recv().await;
    first_round(
        &mut bridge,
        &mut upstream,
        3,
        "list_roots",
        json!({"roots":{"method":"roots/list"}}),
        "r",
    )
    .await;
    let error = bridge.recv().await;
    assert_eq!(error["id"], 3);
    assert_eq!(
        error["error"],
        json!({"code":-32603,"message":"The upstream server asked for input that the client did not declare.",
            "data":{"cause":"undeclared_input_request","detail":"input request 'roots': the client did not declare roots"}})
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: request 3 (tools/call): the input requests of the upstream server failed: input request 'roots': the client did not declare roots"));
}

#[tokio::test(flavor = "current_thread")]
async fn o2_sampling_with_tools_is_refused() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 3, "sample_tools", json!({"model":{"method":"sampling/createMessage","params":{
            "messages":[{"role":"user","content":{"type":"text","text":"Look up the weather."}}],"maxTokens":50,
            "tools":[{"name":"lookup","inputSchema":{"type":"object"}}]}}}), "s").await;
    let error = bridge.recv().await;
    assert_eq!(error["error"]["data"]["cause"], "undeclared_input_request");
}

#[tokio::test(flavor = "current_thread")]
async fn quirk_accepted_content_that_breaks_the_schema_fails_with_invalid_client_answer() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 6, "ask_form", form_input(), "f").await;
    bridge.recv().await;
    bridge
        .send(
            json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"name":""}}}),
        )
        .await;
    let error = bridge.recv().await;
    assert_eq!(error["error"]["data"]["cause"], "invalid_client_answer");
    assert_eq!(
        error["error"]["data"]["detail"],
        "input request 'profile': the accepted content does not fit the requested schema at '/name'"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn o1_an_error_of_vscode_to_an_elicitation_is_a_cancel_for_the_upstream() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 6, "ask_form", form_input(), "f").await;
    bridge.recv().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-1","error":{"code":-32603,"message":"refused"}}))
        .await;
    assert_eq!(
        upstream.recv().await["params"]["inputResponses"],
        json!({"profile":{"action":"cancel"}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn o2_a_refusal_of_sampling_fails_the_request_with_that_error_and_cancels_the_rest() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 7, "sample", json!({
            "model":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Say hello."}}],"maxTokens":50}},
            "roots":{"method":"roots/list"}}), "s").await;
    assert_eq!(bridge.recv().await["method"], "sampling/createMessage");
    assert_eq!(bridge.recv().await["method"], "roots/list");
    bridge.send(json!({"jsonrpc":"2.0","id":"b-1","error":{"code":-32000,"message":"Sampling not allowed"}})).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-2","reason":"the request ended"}})
    );
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"Sampling not allowed"}})
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: info: request 7 (tools/call): the client answered an input request with an error: Sampling not allowed"));
    // The late answer to b-2 is dropped with a debug line; the bridge goes on.
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-2","result":{"roots":[]}}))
        .await;
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":8,"method":"ping"}))
            .await["id"],
        8
    );
    assert!(
        bridge
            .logs
            .count_containing("dropped an answer of the client with the id \"b-2\"")
            == 1
    );
}

#[tokio::test(flavor = "current_thread")]
async fn limits_too_many_inputs_in_one_round() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(call(3, "many_inputs")).await;
    let first = upstream.recv().await;
    let inputs: serde_json::Map<String, Value> = (0..17)
        .map(|i| (format!("r{i}"), json!({"method":"roots/list"})))
        .collect();
    upstream
        .respond(&first, input_required(Value::Object(inputs), "m"))
        .await;
    let error = bridge.recv().await;
    assert_eq!(
        error["error"]["data"],
        json!({"cause":"too_many_input_requests","detail":"17 input requests in one round, and the limit is 16"})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn limits_ten_rounds_of_input_fail_the_request() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(call(3, "forever")).await;
    for _ in 0..10 {
        let round = upstream.recv().await;
        upstream
            .respond(
                &round,
                json!({"resultType":"input_required","requestState":"again"}),
            )
            .await;
    }
    let error = bridge.recv().await;
    assert_eq!(error["error"]["data"]["cause"], "too_many_rounds");
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: request 3 (tools/call): the upstream server asked for input in 10 rounds"));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn limits_vscode_that_does_not_answer_in_an_hour_fails_the_request() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 5, "multi", json!({
            "name":{"method":"elicitation/create","params":{"message":"Your name?","requestedSchema":form_schema()}},
            "roots":{"method":"roots/list"}}), "m").await;
    bridge.recv().await;
    bridge.recv().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-2","result":{"roots":[]}}))
        .await;
    let cancel = bridge.recv_within(Duration::from_secs(3601)).await;
    assert_eq!(
        cancel,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1","reason":"the client did not answer in time"}})
    );
    let error = bridge.recv().await;
    assert_eq!(
        error["error"]["data"],
        json!({"cause":"input_timeout","detail":"no answers of the client in 3600 s (1 of 2 input requests)"})
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: request 5 (tools/call): no answers of the client in 3600 s (input requests without an answer: 1 of 2)"));
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: info: still waiting for the answers of the client to the input requests of tools/call (request 5, 10 s)"));
}

/// The time limit of a round: 120 s for the first round of prompts/get, as for a
/// list, and 1 h for its later rounds, which follow the user's answers.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn limits_the_first_round_of_prompts_get_has_120_s_and_its_later_rounds_an_hour() {
    let (mut bridge, mut upstream) = ready().await;
    let second = declined_first_round(
        &mut bridge,
        &mut upstream,
        6,
        "prompts/get",
        "ask_name",
        "s",
    )
    .await;
    tokio::time::sleep(Duration::from_secs(121)).await;
    upstream
        .respond(&second, json!({"resultType":"complete","messages":[]}))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":6,"result":{"messages":[]}})
    );

    bridge
        .send(json!({"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"slow"}}))
        .await;
    upstream.recv().await;
    let error = bridge.recv_within(Duration::from_secs(121)).await;
    assert_eq!(error["id"], 7);
    assert_eq!(
        error["error"]["data"],
        json!({"cause":"timeout","detail":"prompts/get: no response in 120 s"})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn quirk_vscode_cancels_while_its_answers_wait_and_the_bridge_cancels_its_requests() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 9, "ask_form", form_input(), "f").await;
    bridge.recv().await;
    bridge
        .send(json!({"method":"notifications/cancelled","params":{"requestId":9},"jsonrpc":"2.0"}))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1","reason":"the client canceled the request"}})
    );
    bridge.send(json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"name":"late"}}})).await;
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":10,"method":"ping"}))
            .await["id"],
        10
    );
    assert_eq!(upstream.try_recv(Duration::from_millis(20)).await, None);
}

#[tokio::test(flavor = "current_thread")]
async fn the_end_of_stdin_cancels_the_requests_of_the_bridge_and_exits_zero() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 5, "multi", json!({
            "name":{"method":"elicitation/create","params":{"message":"Your name?","requestedSchema":form_schema()}},
            "roots":{"method":"roots/list"}}), "m").await;
    bridge.recv().await;
    bridge.recv().await;
    bridge.close_stdin();
    for id in ["b-1", "b-2"] {
        let cancel = bridge.recv().await;
        assert_eq!(cancel["method"], "notifications/cancelled");
        assert_eq!(cancel["params"]["requestId"], id);
    }
    assert_eq!(upstream.try_recv(WAIT).await, Some(None));
    drop(upstream);
    assert_eq!(
        tokio::time::timeout(WAIT, &mut bridge.exit)
            .await
            .unwrap()
            .unwrap(),
        Exit::EndOfInput
    );
}

#[tokio::test(flavor = "current_thread")]
async fn an_upstream_exit_while_vscode_answers_cancels_the_requests_of_the_bridge() {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 5, "ask_form", form_input(), "f").await;
    bridge.recv().await;
    upstream.exit(ExitReport::Code(3)).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b-1","reason":"the upstream server stopped"}})
    );
    assert_eq!(
        bridge.recv().await["error"]["data"]["cause"],
        "upstream_exited"
    );
    assert_eq!(
        tokio::time::timeout(WAIT, &mut bridge.exit)
            .await
            .unwrap()
            .unwrap(),
        Exit::Failure
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_refused_request_state_asks_the_user_to_run_the_tool_again() {
    let (mut bridge, mut upstream) = ready().await;
    for (id, method, name) in [
        (5, "tools/call", "ask_form"),
        (6, "prompts/get", "ask_name"),
    ] {
        let second =
            declined_first_round(&mut bridge, &mut upstream, id, method, name, "old").await;
        upstream.respond_error(&second, json!({"code":-32602,"message":"The request state is not valid or has expired.","data":{"x":1}})).await;
        let response = bridge.recv().await;
        if method == "tools/call" {
            assert_eq!(
                response["result"],
                json!({"content":[{"type":"text","text":"The upstream server did not accept the saved state of the request. Run the tool again."}],"isError":true})
            );
        } else {
            assert_eq!(
                response["error"],
                json!({"code":-32602,"message":"The upstream server did not accept the saved state of the request. Send the request again.","data":{"x":1}})
            );
        }
    }
    assert_eq!(
        bridge.logs.count_containing(
            "the upstream server refused the request state after an input wait of"
        ),
        2
    );
}

#[tokio::test(flavor = "current_thread")]
async fn o4_progress_of_every_round_carries_the_token_of_vscode() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask_form","_meta":{"progressToken":"tok"}}})).await;
    let first = upstream.recv().await;
    let token = first["params"]["_meta"]["progressToken"].clone();
    upstream
        .respond(&first, input_required(json!({"p":{"method":"elicitation/create","params":{"message":"m","requestedSchema":form_schema()}}}), "x"))
        .await;
    bridge.recv().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"decline"}}))
        .await;
    let second = upstream.recv().await;
    assert_eq!(second["params"]["_meta"]["progressToken"], token);
    upstream.send(json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":token,"progress":2}})).await;
    assert_eq!(
        bridge.recv().await["params"],
        json!({"progressToken":"tok","progress":2})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn answers_with_unknown_numeric_or_null_ids_are_dropped_and_a_broken_answer_fails_its_request()
 {
    let (mut bridge, mut upstream) = ready().await;
    first_round(&mut bridge, &mut upstream, 6, "ask_form", form_input(), "f").await;
    bridge.recv().await;
    for id in [json!("b-9"), json!(1), json!(null)] {
        bridge
            .send(json!({"jsonrpc":"2.0","id":id,"result":{"action":"accept"}}))
            .await;
    }
    bridge
        .send_line(r#"{"jsonrpc":"2.0","id":"b-1","result":{"action":"#)
        .await;
    let error = bridge.recv().await;
    assert_eq!(error["id"], 6);
    assert_eq!(error["error"]["data"]["cause"], "invalid_client_answer");
    assert_eq!(upstream.try_recv(Duration::from_millis(20)).await, None);
}

#[tokio::test(flavor = "current_thread")]
async fn a_state_without_questions_goes_back_at_once() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(
            json!({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x"}}),
        )
        .await;
    let first = upstream.recv().await;
    upstream
        .respond(
            &first,
            json!({"resultType":"input_required","requestState":"poll"}),
        )
        .await;
    let second = upstream.recv().await;
    assert_eq!(second["params"]["requestState"], "poll");
    assert_eq!(second["params"]["inputResponses"], json!({}));
    upstream
        .respond(
            &second,
            json!({"resultType":"complete","contents":[],"ttlMs":0,"cacheScope":"public"}),
        )
        .await;
    assert_eq!(bridge.recv().await["result"], json!({"contents":[]}));
}

#[tokio::test(flavor = "current_thread")]
async fn r8_methods_that_cannot_ask_for_input_fail_when_they_do() {
    let (mut bridge, mut upstream) = ready().await;
    bridge
        .send(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}))
        .await;
    let first = upstream.recv().await;
    upstream
        .respond(
            &first,
            json!({"resultType":"input_required","requestState":"x"}),
        )
        .await;
    assert_eq!(
        bridge.recv().await["error"]["data"]["cause"],
        "invalid_response"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn m2_a_large_request_waits_for_its_next_rounds_in_a_file_and_goes_again_as_it_came() {
    let limits = Limits {
        kept_in_file_from: 64,
        ..Limits::default()
    };
    let (mut bridge, mut upstream) = ready_with(limits).await;
    let arguments = json!({"text": "é \"quoted\" \\ text ".repeat(20), "n": [1, 2.5e3, null]});
    bridge
        .send(json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask_form","arguments":arguments}}))
        .await;
    let first = upstream.recv().await;
    let mut previous = first.clone();
    for (number, state) in ["state-1", "state-2"].into_iter().enumerate() {
        upstream
            .respond(&previous, input_required(form_input(), state))
            .await;
        let ask = bridge.recv().await;
        assert_eq!(ask["id"], json!(format!("b-{}", number + 1)));
        // The file is written while VS Code answers; a user takes longer.
        tokio::time::sleep(Duration::from_millis(50)).await;
        bridge
            .send(json!({"jsonrpc":"2.0","id":ask["id"],"result":{"action":"accept","content":{"name":"Ada"}}}))
            .await;
        let next = upstream.recv().await;
        let mut expected = first["params"].clone();
        expected["inputResponses"] =
            json!({"profile":{"action":"accept","content":{"name":"Ada"}}});
        expected["requestState"] = json!(state);
        assert_eq!(next["params"], expected);
        previous = next;
    }
    upstream.respond(&previous, text("done")).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}})
    );
}
