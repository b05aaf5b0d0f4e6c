//! The lifecycle toward VS Code (R1, R2, C1-C4), with a scripted upstream.

use crate::common;

use common::*;
use mcp_bridge_vscode::Exit;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "current_thread")]
async fn r1_initialize_result_is_made_from_the_discover_result() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    assert_eq!(
        discover,
        json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
            "io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientInfo":{"name":"Visual Studio Code","version":"1.141.0"},
            "io.modelcontextprotocol/clientCapabilities":vscode_upstream_capabilities()}}})
    );
    let capabilities = json!({"tools":{"listChanged":true},"prompts":{"listChanged":true},
        "resources":{"subscribe":true,"listChanged":true},"logging":{},"completions":{},"tasks":{"list":{}},
        "extensions":{"io.modelcontextprotocol/ui":{},"io.modelcontextprotocol/tasks":{}}});
    let mut result = discover_result(capabilities);
    result["_meta"]["io.modelcontextprotocol/serverInfo"] = json!({"name":"fixture","title":"The Fixture",
        "version":"1.0.0","icons":[{"src":"data:image/png;base64,AA=="}],"description":"d","websiteUrl":"https://x.test","other":1});
    upstream.respond(&discover, result).await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",
            "capabilities":{"logging":{},"completions":{},"prompts":{"listChanged":true},
                "resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},
                "extensions":{"io.modelcontextprotocol/ui":{}}},
            "serverInfo":{"name":"fixture","title":"The Fixture","version":"1.0.0",
                "icons":[{"src":"data:image/png;base64,AA=="}],"description":"d","websiteUrl":"https://x.test"},
            "instructions":"The fixture."}})
    );
    assert!(
        bridge
            .logs
            .has("mcp-bridge-vscode: bridge: info: initialize from Visual Studio Code 1.141.0")
    );
    assert!(
        bridge
            .logs
            .has("mcp-bridge-vscode: bridge: info: the upstream server is ready")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn r1_without_server_info_the_name_is_the_command_file_stem_and_the_bridge_version() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    upstream
        .respond(&discover, json!({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}))
        .await;
    let result = bridge.recv().await;
    assert_eq!(
        result["result"]["serverInfo"],
        json!({"name":"fixture-server","version":env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(result["result"]["capabilities"], json!({"logging":{}}));
}

#[tokio::test(flavor = "current_thread")]
async fn r1_name_option_names_the_server() {
    let mut config = config(Default::default());
    config.name = Some("demo".into());
    let mut bridge = Bridge::start_with(config);
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    upstream
        .respond(
            &discover,
            json!({"supportedVersions":["2026-07-28"],"capabilities":{}}),
        )
        .await;
    assert_eq!(bridge.recv().await["result"]["serverInfo"]["name"], "demo");
}

#[tokio::test(flavor = "current_thread")]
async fn a_failed_discover_gives_the_upstream_code_and_initialize_can_come_again() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    upstream
        .respond_error(
            &discover,
            json!({"code":-32601,"message":"Method not found"}),
        )
        .await;
    assert_eq!(
        bridge.recv().await,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,
            "message":"The upstream server did not answer server/discover. It is not an MCP server of revision 2026-07-28, or it does not respond. See the Output channel of the server.",
            "data":{"cause":"discover_failed","detail":"Method not found"}}})
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: server/discover failed: the error -32601: Method not found"));
    // The failed upstream's input ends; a new initialize starts a new upstream.
    assert_eq!(upstream.try_recv(WAIT).await, Some(None));
    let (result, _upstream) = bridge.initialize(json!({"tools":{}})).await;
    assert_eq!(
        result["result"]["capabilities"],
        json!({"logging":{},"tools":{}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_discover_result_without_our_revision_fails_initialize() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    upstream
        .respond(
            &discover,
            json!({"supportedVersions":["2027-01-01"],"capabilities":{}}),
        )
        .await;
    let error = bridge.recv().await["error"].clone();
    assert_eq!(error["code"], -32603);
    assert_eq!(
        error["data"],
        json!({"cause":"discover_failed","detail":"the upstream server supports only the revisions \"2027-01-01\""})
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn discover_timeout_bounds_the_wait_for_the_upstream() {
    let mut bridge = Bridge::start();
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    let started = tokio::time::Instant::now();
    let error = bridge.recv_within(Duration::from_secs(61)).await["error"].clone();
    assert!(started.elapsed() >= Duration::from_secs(60));
    assert_eq!(
        error["data"],
        json!({"cause":"discover_failed","detail":"no response in 60 s"})
    );
    let cancel = upstream.recv().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], discover["id"]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_command_that_does_not_start_gives_spawn_failed_and_initialize_can_come_again() {
    let mut bridge = Bridge::start();
    bridge
        .connector
        .refuse_with(Some("No such file or directory (os error 2)"));
    let response = bridge.call(vscode_initialize(1)).await;
    assert_eq!(response["error"]["code"], -32603);
    assert_eq!(
        response["error"]["data"],
        json!({"cause":"spawn_failed","detail":"No such file or directory (os error 2)"})
    );
    assert!(bridge.logs.has("mcp-bridge-vscode: bridge: warning: cannot start the upstream command: No such file or directory (os error 2)"));
    bridge.connector.refuse_with(None);
    let (result, _upstream) = bridge.initialize(json!({})).await;
    assert_eq!(result["id"], 1);
    assert!(result.get("result").is_some());
}

#[tokio::test(flavor = "current_thread")]
async fn c1_c4_the_copilot_sequence_discover_then_initialize() {
    let mut bridge = Bridge::start();
    let discover = json!({"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{
        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientInfo":{"name":"copilot-cli","version":"1.0.92"},
        "io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{"form":{},"url":{}}}}}});
    let response = bridge.call(discover.clone()).await;
    assert_eq!(response["id"], 0);
    assert_eq!(response["error"]["code"], -32601);
    assert_eq!(response["error"]["data"]["cause"], "method_not_found");
    // Any request of revision 2026-07-28 before the initialize result gets -32601 too.
    let modern = json!({"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}});
    assert_eq!(bridge.call(modern).await["error"]["code"], -32601);
    bridge.send(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
        "capabilities":{"sampling":{},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"copilot-cli","version":"1.0.92"}}})).await;
    let mut upstream = bridge.upstream().await;
    let upstream_discover = upstream.recv().await;
    assert_eq!(
        upstream_discover["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"sampling":{},"elicitation":{"form":{},"url":{}}})
    );
    upstream
        .respond(&upstream_discover, discover_result(json!({"tools":{}})))
        .await;
    assert!(bridge.recv().await.get("result").is_some());
    // After the result too, server/discover never goes upstream.
    assert_eq!(bridge.call(discover).await["error"]["code"], -32601);
    bridge
        .send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
        .await;
    assert_eq!(
        bridge.call(discover_request(9)).await["error"]["code"],
        -32601
    );
    assert_eq!(upstream.try_recv(Duration::from_millis(50)).await, None);
}

fn discover_request(id: u64) -> serde_json::Value {
    json!({"jsonrpc":"2.0","id":id,"method":"server/discover","params":{}})
}

#[tokio::test(flavor = "current_thread")]
async fn r2_ping_and_set_level_are_answered_in_every_phase() {
    let mut bridge = Bridge::start();
    let ping = |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"ping"});
    let set_level = |id: u64| json!({"jsonrpc":"2.0","id":id,"method":"logging/setLevel","params":{"level":"info"}});
    assert_eq!(
        bridge.call(ping(10)).await,
        json!({"jsonrpc":"2.0","id":10,"result":{}})
    );
    assert_eq!(
        bridge.call(set_level(11)).await,
        json!({"jsonrpc":"2.0","id":11,"result":{}})
    );
    bridge.send(vscode_initialize(1)).await;
    let mut upstream = bridge.upstream().await;
    let discover = upstream.recv().await;
    // While the upstream answers discover.
    assert_eq!(bridge.call(ping(12)).await["result"], json!({}));
    assert_eq!(bridge.call(set_level(13)).await["result"], json!({}));
    upstream
        .respond(&discover, discover_result(json!({"logging":{}})))
        .await;
    bridge.recv().await;
    assert_eq!(bridge.call(ping(14)).await["result"], json!({}));
    let bad = bridge
        .call(
            json!({"jsonrpc":"2.0","id":15,"method":"logging/setLevel","params":{"level":"loud"}}),
        )
        .await;
    assert_eq!(bad["error"]["code"], -32602);
    assert_eq!(bad["error"]["data"]["cause"], "invalid_params");
}

#[tokio::test(flavor = "current_thread")]
async fn requests_before_initialize_and_a_second_initialize_are_refused() {
    let mut bridge = Bridge::start();
    let list = json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}});
    let response = bridge.call(list.clone()).await;
    assert_eq!(
        response["error"],
        json!({"code":-32600,"message":"The client did not initialize the connection. Send initialize first.","data":{"cause":"not_initialized"}})
    );
    let (_, _upstream) = bridge.initialize(json!({"tools":{}})).await;
    let again = bridge.call(vscode_initialize(2)).await;
    assert_eq!(
        again["error"],
        json!({"code":-32600,"message":"The client already sent initialize on this connection.","data":{"cause":"already_initialized"}})
    );
}

#[tokio::test(flavor = "current_thread")]
async fn unknown_methods_get_method_not_found() {
    let mut bridge = Bridge::start();
    let (_, _upstream) = bridge.initialize(json!({"tools":{}})).await;
    for method in ["tasks/get", "tasks/list", "sampling/createMessage", "x/y"] {
        let response = bridge
            .call(json!({"jsonrpc":"2.0","id":4,"method":method,"params":{}}))
            .await;
        assert_eq!(response["error"]["code"], -32601, "{method}");
        assert_eq!(
            response["error"]["message"],
            "The server does not have this method."
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_end_of_stdin_while_idle_ends_the_upstream_input_and_exits_zero() {
    let mut bridge = Bridge::start();
    let (_, mut upstream) = bridge.initialize(json!({"tools":{}})).await;
    let stop = tokio::spawn(async move { bridge.close().await });
    assert_eq!(upstream.try_recv(WAIT).await, Some(None));
    drop(upstream);
    assert_eq!(stop.await.unwrap(), Exit::EndOfInput);
}
