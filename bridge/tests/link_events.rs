//! What any upstream link can report, whatever carries it (a process, a URL, a
//! server in the same process): a failed request, a question for VS Code, its end,
//! and what it learns of VS Code's side.

use crate::common;

use common::{Bridge, Upstream, WAIT, vscode_initialize};
use mcp_bridge_vscode::Exit;
use mcp_bridge_vscode::internals::catalogue::UpstreamLost;
use mcp_bridge_vscode::internals::upstream::{
    ClientQuestion, ClientState, LinkEnd, RequestFailure, UpstreamEvent,
};
use mcp_bridge_vscode::internals::wire::frame::Outcome;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::time::timeout;

async fn ready() -> (Bridge, Upstream) {
    let mut bridge = Bridge::start();
    let (_, upstream) = bridge.initialize(json!({"tools":{}})).await;
    (bridge, upstream)
}

fn call(id: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":{}}})
}

fn upstream_id(frame: &Value) -> u64 {
    frame["id"].as_u64().expect("an upstream id")
}

#[tokio::test(flavor = "current_thread")]
async fn a_failed_request_fails_alone_and_the_next_request_works() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(call(json!(1))).await;
    let first = upstream.recv().await;
    let failure = RequestFailure::Status {
        status: 503,
        detail: "Service Unavailable".into(),
    };
    upstream.peer().fail(upstream_id(&first), failure).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32603,
            "message":"The connection to the upstream server failed. See the Output channel of the server.",
            "data":{"cause":"transport_failed","detail":"Service Unavailable (HTTP status 503)"}}})
    );
    assert!(bridge.logs.has(
        "mcp-bridge-vscode: bridge: warning: request 1 (tools/call): the upstream request failed: Service Unavailable (HTTP status 503)"
    ));
    bridge.send(call(json!(2))).await;
    let second = upstream.recv().await;
    upstream
        .respond(&second, json!({"content":[{"type":"text","text":"ok"}]}))
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}]}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_failed_discover_names_the_http_status_and_initialize_can_come_again() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    let failure = RequestFailure::Status {
        status: 404,
        detail: "Not Found".into(),
    };
    upstream.peer().fail(upstream_id(&discover), failure).await;
    let error = bridge.recv().await;
    assert_eq!(error["id"], 1);
    assert_eq!(error["error"]["code"], -32603);
    assert_eq!(
        error["error"]["data"],
        json!({"cause":"discover_failed","detail":"Not Found (HTTP status 404)"})
    );
    assert!(bridge.logs.has(
        "mcp-bridge-vscode: bridge: warning: server/discover failed: Not Found (HTTP status 404)"
    ));
    bridge.send(vscode_initialize(2)).await;
    let mut again = bridge.upstream().await;
    assert_eq!(again.recv().await["method"], "server/discover");
}

/// The question of a link, and where its answer arrives.
fn question(method: &str, params: Value) -> (UpstreamEvent, oneshot::Receiver<Outcome>) {
    let (answer, answered) = oneshot::channel();
    let Value::Object(params) = params else {
        panic!("params are an object")
    };
    let question = ClientQuestion {
        method: method.into(),
        params,
        answer,
    };
    (UpstreamEvent::AskClient(question), answered)
}

#[tokio::test(flavor = "current_thread")]
async fn a_question_of_the_link_goes_to_vs_code_as_a_bridge_request_and_its_answer_comes_back() {
    let (mut bridge, mut upstream) = ready().await;
    let params = json!({"mode":"url","message":"Sign in.","url":"https://auth.example/authorize","elicitationId":"e-1"});
    let (event, answered) = question("elicitation/create", params.clone());
    upstream.send_event(event).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":"b-1","method":"elicitation/create","params":params})
    );
    // A request of VS Code goes on meanwhile, and its own input request is b-2.
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":7,"method":"ping"}))
            .await,
        json!({"jsonrpc":"2.0","id":7,"result":{}})
    );
    accept(&mut bridge, "b-1", answered).await;
    // A second answer with the same id reaches nobody.
    late_answer_is_dropped(&mut bridge, "b-1").await;
}

/// VS Code accepts the question `id`, and the link gets the accept.
async fn accept(bridge: &mut Bridge, id: &str, answered: oneshot::Receiver<Outcome>) {
    bridge
        .send(json!({"jsonrpc":"2.0","id":id,"result":{"action":"accept"}}))
        .await;
    let outcome = timeout(WAIT, answered).await.unwrap().unwrap();
    assert_eq!(outcome, Outcome::Result(json!({"action":"accept"})));
}

/// An answer to a question that no longer waits reaches nobody.
async fn late_answer_is_dropped(bridge: &mut Bridge, id: &str) {
    bridge
        .send(json!({"jsonrpc":"2.0","id":id,"result":{"action":"accept"}}))
        .await;
    bridge
        .expect_silence(std::time::Duration::from_millis(100))
        .await;
}

#[tokio::test(flavor = "current_thread")]
async fn an_answer_that_is_not_valid_ends_the_question_without_an_answer() {
    let (mut bridge, mut upstream) = ready().await;
    let (event, answered) = question("elicitation/create", json!({"mode":"url"}));
    upstream.send_event(event).await;
    assert_eq!(bridge.recv().await["id"], "b-1");
    bridge
        .send_line(r#"{"jsonrpc":"2.0","id":"b-1","result":"#)
        .await;
    assert!(timeout(WAIT, answered).await.unwrap().is_err());
}

#[tokio::test(flavor = "current_thread")]
async fn the_end_of_input_cancels_a_question_of_the_link() {
    let (mut bridge, mut upstream) = ready().await;
    let (event, answered) = question("elicitation/create", json!({"mode":"url"}));
    upstream.send_event(event).await;
    assert_eq!(bridge.recv().await["id"], "b-1");
    bridge.close_stdin();
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId":"b-1","reason":"the bridge stops at the end of its input"}})
    );
    assert!(timeout(WAIT, answered).await.unwrap().is_err());
    drop(upstream);
    assert_eq!(
        timeout(WAIT * 6, &mut bridge.exit).await.unwrap().unwrap(),
        Exit::EndOfInput
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_withdrawn_question_is_cancelled_toward_vs_code_and_the_others_stay() {
    let (mut bridge, mut upstream) = ready().await;
    let (first, withdrawn) = question("elicitation/create", json!({"mode":"url"}));
    let (second, kept) = question("elicitation/create", json!({"mode":"url"}));
    upstream.send_event(first).await;
    upstream.send_event(second).await;
    assert_eq!(bridge.recv().await["id"], "b-1");
    assert_eq!(bridge.recv().await["id"], "b-2");
    drop(withdrawn);
    upstream
        .send_event(UpstreamEvent::QuestionsWithdrawn {
            reason: "the sign-in did not complete in time".into(),
        })
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled",
            "params":{"requestId":"b-1","reason":"the sign-in did not complete in time"}})
    );
    // The question whose answer the link still waits for goes on.
    accept(&mut bridge, "b-2", kept).await;
    // A late answer to the withdrawn question is dropped.
    late_answer_is_dropped(&mut bridge, "b-1").await;
}

#[tokio::test(flavor = "current_thread")]
async fn the_link_learns_what_vs_code_declared_and_when_it_sent_initialized() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    assert_eq!(
        *upstream.peer().client.borrow(),
        ClientState {
            initialized: false,
            url_elicitation: true
        }
    );
    upstream
        .respond(&discover, common::discover_result(json!({"tools":{}})))
        .await;
    bridge.recv().await;
    bridge
        .send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;
    let mut client = upstream.peer().client.clone();
    timeout(WAIT, client.wait_for(|state| state.initialized))
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn while_the_link_connects_ping_set_level_and_discover_are_answered_at_once() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    assert_eq!(upstream.recv().await["method"], "server/discover");
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":2,"method":"ping"}))
            .await,
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}))
            .await,
        json!({"jsonrpc":"2.0","id":3,"result":{}})
    );
    let discover = bridge
        .call(json!({"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}}))
        .await;
    assert_eq!(discover["error"]["code"], -32601);
}

#[tokio::test(flavor = "current_thread")]
async fn a_link_that_ends_without_ending_the_session_fails_its_requests_and_the_bridge_serves_on() {
    let (mut bridge, mut upstream) = ready().await;
    bridge.send(call(json!(1))).await;
    upstream.recv().await;
    upstream
        .end(LinkEnd::Lost(UpstreamLost::ConnectionClosed))
        .await;
    let error = bridge.recv().await;
    assert_eq!(error["id"], 1);
    assert_eq!(
        error["error"]["data"],
        json!({"cause":"transport_failed","detail":"the connection to the upstream server closed"})
    );
    assert!(
        bridge.logs.has(
            "mcp-bridge-vscode: bridge: warning: the connection to the upstream server closed"
        )
    );
    assert_eq!(
        bridge
            .call(json!({"jsonrpc":"2.0","id":2,"method":"ping"}))
            .await,
        json!({"jsonrpc":"2.0","id":2,"result":{}})
    );
    let refused = bridge.call(call(json!(3))).await;
    assert_eq!(refused["error"]["data"]["cause"], "not_connected");
    assert_eq!(bridge.close().await, Exit::EndOfInput);
}

#[test]
fn each_connect_error_has_its_cause_and_its_line() {
    use mcp_bridge_vscode::internals::upstream::ConnectError;
    let cases = [
        (
            ConnectError::Spawn("No such file or directory (os error 2)".into()),
            "spawn_failed",
            "cannot start the upstream command: No such file or directory (os error 2)",
        ),
        (
            ConnectError::Connect("connection refused".into()),
            "transport_failed",
            "server/discover failed: connection refused",
        ),
        (
            ConnectError::Tls("invalid peer certificate: UnknownIssuer".into()),
            "transport_failed",
            "server/discover failed: invalid peer certificate: UnknownIssuer",
        ),
        (
            ConnectError::Configuration("HTTPS_PROXY is not a URL".into()),
            "not_connected",
            "cannot make the HTTP client for the upstream server: HTTPS_PROXY is not a URL",
        ),
    ];
    for (error, cause, line) in cases {
        assert_eq!(error.to_error().to_object()["data"]["cause"], cause);
        assert_eq!(error.log_line().to_string(), line);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn o10_m4_an_upstream_at_a_url_gives_vscode_only_data_icons() {
    use mcp_bridge_vscode::config::{HttpTarget, Limits, SignInOptions, UpstreamTarget};
    let mut config = common::config(Limits::default());
    config.upstream = UpstreamTarget::Url(Box::new(HttpTarget {
        url: "https://mcp.example.com/mcp".parse().unwrap(),
        headers: vec![],
        max_response_bytes: 1 << 20,
        extra_roots: vec![],
        sign_in: SignInOptions::default(),
    }));
    let icons = json!([{"src":"data:image/png;base64,AAAA"},{"src":"https://x.example/i.png"},{"src":"file:///i.png"}]);
    let data_only = json!([{"src":"data:image/png;base64,AAAA"}]);
    let mut bridge = Bridge::start_with(config);
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    let mut result = common::discover_result(json!({"tools":{}}));
    result["_meta"]["io.modelcontextprotocol/serverInfo"]["icons"] = icons.clone();
    upstream.respond(&discover, result).await;
    let initialized = bridge.recv().await;
    assert_eq!(initialized["result"]["serverInfo"]["icons"], data_only);
    // The default name is the host (R1, M4) when the upstream sends none: here it sends one.
    assert_eq!(initialized["result"]["serverInfo"]["name"], "fixture");
    bridge
        .send(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}))
        .await;
    let list = upstream.recv().await;
    upstream
        .respond(
            &list,
            json!({"tools":[{"name":"a","inputSchema":{"type":"object"},"icons":icons}]}),
        )
        .await;
    assert_eq!(
        bridge.recv().await["result"]["tools"][0]["icons"],
        data_only
    );
    bridge.send(call(json!(3))).await;
    let called = upstream.recv().await;
    upstream
        .respond(
            &called,
            json!({"content":[{"type":"resource_link","uri":"x:y","name":"n","icons":icons}]}),
        )
        .await;
    assert_eq!(
        bridge.recv().await["result"]["content"][0]["icons"],
        data_only
    );
}
