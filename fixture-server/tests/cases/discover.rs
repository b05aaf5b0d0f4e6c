use serde_json::json;

use crate::common::{Fixture, server_info};

#[tokio::test]
async fn discover_gives_the_version_capabilities_instructions_and_server_info() {
    let mut fixture = Fixture::start(&[]).await;
    let id = fixture.send_request("server/discover", json!({})).await;
    let (before, response) = fixture.until_response(&id).await;
    assert!(before.is_empty());
    assert_eq!(
        response["result"],
        json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {
                "tools": {"listChanged": true},
                "prompts": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": true},
                "logging": {},
                "completions": {},
            },
            "instructions": "The upstream server of the mcp-bridge-rs tests.",
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
        })
    );
    fixture.close_stdin().await;
    assert_eq!(fixture.exit_code().await, 0);
}

#[tokio::test]
async fn apps_adds_the_ui_extension_the_show_tool_and_two_resources() {
    let mut fixture = Fixture::start(&["--apps"]).await;
    let discover = fixture.result("server/discover", json!({})).await;
    assert_eq!(
        discover["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}})
    );
    let tools = fixture.result("tools/list", json!({})).await;
    let show = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "show")
        .cloned()
        .expect("the tool show");
    assert_eq!(
        show["_meta"],
        json!({"ui": {"resourceUri": "ui://fixture/view"}})
    );
    assert_eq!(show["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(tools["tools"].as_array().unwrap().len(), 22);
    assert_eq!(fixture.call_text("show", json!({})).await, "shown");
    let resources = fixture.result("resources/list", json!({})).await;
    let uris: Vec<_> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        uris,
        [
            "file:///fixture/notes.txt",
            "file:///fixture/readme.txt",
            "ui://fixture/view"
        ]
    );
    let view = fixture
        .result("resources/read", json!({"uri": "ui://fixture/view"}))
        .await;
    assert_eq!(
        view["contents"],
        json!([{"uri": "ui://fixture/view", "mimeType": "text/html;profile=mcp-app", "text": "<p>The view of the fixture.</p>"}])
    );
    let readme = fixture
        .result(
            "resources/read",
            json!({"uri": "file:///fixture/readme.txt"}),
        )
        .await;
    assert_eq!(readme["contents"][0]["text"], "The text of the fixture.");
    fixture.assert_valid();
}

#[tokio::test]
async fn no_completions_removes_the_capability_and_the_method() {
    let mut fixture = Fixture::start(&["--no-completions"]).await;
    let discover = fixture.result("server/discover", json!({})).await;
    assert!(discover["capabilities"].get("completions").is_none());
    let error = fixture
        .error(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}),
        )
        .await;
    assert_eq!(error["code"], -32601);
}

#[tokio::test]
async fn completion_gives_alpha_and_beta_for_any_reference() {
    let mut fixture = Fixture::start(&[]).await;
    for reference in [
        json!({"type": "ref/prompt", "name": "greet"}),
        json!({"type": "ref/resource", "uri": "file:///{x}"}),
    ] {
        let result = fixture
            .result(
                "completion/complete",
                json!({"ref": reference, "argument": {"name": "name", "value": "a"}}),
            )
            .await;
        assert_eq!(
            result,
            json!({"resultType": "complete", "completion": {"values": ["alpha", "beta"], "total": 2, "hasMore": false}})
        );
    }
    let error = fixture
        .error(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt"}, "argument": {"name": "n", "value": "v"}}),
        )
        .await;
    assert_eq!(error["code"], -32602);
}
