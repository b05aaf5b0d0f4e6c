//! The first line of the client selects the path of `bridge-embedded-server` (M5,
//! "The bridge in a zig-sdk server", "The Copilot harness and an embedded server").

use crate::common::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn initialize_selects_the_bridge_which_does_the_input_rounds_for_vscode() {
    let mut server = start(&[]);
    let init = initialize(&mut server).await;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        init["result"]["serverInfo"]["name"],
        "bridge-embedded-server"
    );

    server
        .send(&json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}))
        .await
        .unwrap();
    let list = response(&mut server).await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("a list of tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["echo", "add", "slow", "toggle", "ask_name"]);

    server
        .send(&call(3, "echo", json!({"text":"hi"})))
        .await
        .unwrap();
    let echoed = response(&mut server).await;
    assert_eq!((echoed["id"].clone(), text_of(&echoed)), (json!(3), "hi"));

    // The input round: VS Code gets elicitation/create from the bridge as b-1.
    server.send(&call(4, "ask_name", json!({}))).await.unwrap();
    let question = response(&mut server).await;
    assert_eq!(question["id"], "b-1");
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(question["params"]["message"], "Your name?");
    server
        .send(&json!({"jsonrpc":"2.0","id":"b-1","result":{"action":"accept","content":{"name":"Ada"}}}))
        .await
        .unwrap();
    let greeted = response(&mut server).await;
    assert_eq!(greeted["id"], 4);
    assert_eq!(text_of(&greeted), "Hello, Ada.");

    let (code, after) = stop(&mut server, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
    assert!(
        after < Duration::from_secs(3),
        "stopped {after:?} after the end of stdin"
    );
}

#[tokio::test]
async fn a_discover_first_is_answered_by_the_server_and_the_modern_path_follows() {
    let mut server = start(&[]);
    server.send(&discover_frame(json!(0))).await.unwrap();
    let discover = response(&mut server).await;
    assert_eq!(discover["id"], 0);
    let versions = discover["result"]["supportedVersions"]
        .as_array()
        .unwrap_or_else(|| panic!("a discover result: {discover}"));
    assert!(versions.contains(&json!("2026-07-28")), "{discover}");

    server
        .send(&modern_call(1, "add", json!({"a":2,"b":3})))
        .await
        .unwrap();
    let sum = response(&mut server).await;
    assert_eq!((sum["id"].clone(), text_of(&sum)), (json!(1), "5"));

    // On the modern path the client does the rounds: the server's own input_required.
    server
        .send(&modern_call(2, "ask_name", json!({})))
        .await
        .unwrap();
    let asked = response(&mut server).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].clone();
    let mut retry = modern_call(3, "ask_name", json!({}));
    retry["params"]["inputResponses"] =
        json!({"name":{"action":"accept","content":{"name":"Grace"}}});
    retry["params"]["requestState"] = state;
    server.send(&retry).await.unwrap();
    let greeted = response(&mut server).await;
    assert_eq!(text_of(&greeted), "Hello, Grace.");

    let (code, _) = stop(&mut server, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn with_discover_refused_the_harness_gets_32601_and_its_initialize_selects_the_bridge() {
    let mut server = start(&["--refuse-discover"]);
    server.send(&discover_frame(json!("d-1"))).await.unwrap();
    let refused = response(&mut server).await;
    assert_eq!(refused["id"], "d-1");
    assert_eq!(refused["error"]["code"], -32601);

    let init = initialize(&mut server).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    server
        .send(&call(2, "echo", json!({"text":"legacy"})))
        .await
        .unwrap();
    assert_eq!(text_of(&response(&mut server).await), "legacy");

    let (code, _) = stop(&mut server, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn a_first_line_that_is_not_json_rpc_selects_the_modern_path_and_gets_rmcps_answer() {
    let mut server = start(&[]);
    // Not JSON: rmcp ignores it. JSON that is no message: rmcp's -32600 without an id.
    server.send_raw(b"this is not json\n").await.unwrap();
    server.send_raw(b"{\"hello\":1}\n").await.unwrap();
    let invalid = recv(&mut server).await;
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    assert!(invalid.get("id").is_none_or(|id| id.is_null()), "{invalid}");

    // The path is rmcp's own: a request of revision 2026-07-28 works, and
    // initialize no longer selects the bridge.
    server
        .send(&modern_call(1, "echo", json!({"text":"direct"})))
        .await
        .unwrap();
    let echoed = response(&mut server).await;
    assert_eq!(text_of(&echoed), "direct");
    assert_eq!(echoed["result"]["resultType"], "complete", "{echoed}");

    let (code, _) = stop(&mut server, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn on_the_legacy_path_a_list_change_of_the_server_reaches_vscode_before_the_result() {
    let mut server = start(&[]);
    initialize(&mut server).await;
    // The first acknowledgment of the bridge's listen stream: one list change.
    let first = recv(&mut server).await;
    assert_eq!(
        first["method"], "notifications/tools/list_changed",
        "{first}"
    );
    // rmcp acknowledges a listen stream before it hands the stream to
    // ServerHandler::listen, so a change right after the acknowledgment can miss it.
    tokio::time::sleep(Duration::from_millis(300)).await;

    server
        .send(&call(2, "toggle", json!({"enabled":true})))
        .await
        .unwrap();
    let change = recv(&mut server).await;
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    let result = recv(&mut server).await;
    assert_eq!(
        (result["id"].clone(), text_of(&result)),
        (json!(2), "toggled is on")
    );

    server
        .send(&json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}))
        .await
        .unwrap();
    let list = response(&mut server).await;
    assert!(
        list["result"]["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|tool| tool["name"] == "toggled")),
        "{list}"
    );
    assert_eq!(stop(&mut server, Duration::from_secs(10)).await.0, Some(0));
}

#[tokio::test]
async fn on_the_modern_path_a_listen_stream_gets_the_list_change_and_ends_at_the_end_of_stdin() {
    let mut server = start(&["--shutdown-grace-ms", "5000"]);
    server
        .send(
            &json!({"jsonrpc":"2.0","id":1,"method":"subscriptions/listen",
            "params":{"notifications":{"toolsListChanged":true},"_meta":modern_meta()}}),
        )
        .await
        .unwrap();
    let acknowledged = recv(&mut server).await;
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    // rmcp acknowledges a listen stream before it hands the stream to
    // ServerHandler::listen, so a change right after the acknowledgment can miss it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    server
        .send(&modern_call(2, "toggle", json!({"enabled":true})))
        .await
        .unwrap();
    let change = recv(&mut server).await;
    assert_eq!(
        change["method"], "notifications/tools/list_changed",
        "{change}"
    );
    assert_eq!(text_of(&response(&mut server).await), "toggled is on");
    // The listen stream does not hold the end for shutdown_grace.
    let (code, after) = stop(&mut server, Duration::from_secs(10)).await;
    assert_eq!(code, Some(0));
    assert!(
        after < Duration::from_secs(2),
        "stopped {after:?} after the end of stdin"
    );
}
