use serde_json::{Value, json};

use crate::common::Fixture;

const FIXTURE_TOOLS: [&str; 21] = [
    "echo",
    "add",
    "slow",
    "progress",
    "bare_array",
    "structured",
    "crash",
    "shutdown",
    "ask_form",
    "ask_url",
    "ask_url_twice",
    "ask_bad_url",
    "sample",
    "sample_tools",
    "list_roots",
    "multi",
    "many_inputs",
    "toggle",
    "toggled",
    "touch",
    "log",
];
const READ_ONLY: [&str; 8] = [
    "echo",
    "add",
    "slow",
    "progress",
    "bare_array",
    "structured",
    "toggled",
    "log",
];

fn names(list: &Value, member: &str) -> Vec<String> {
    list[member]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_fixture_lists_21_tools_and_3_prompts_with_the_study_annotations() {
    let mut fixture = Fixture::start(&[]).await;
    let tools = fixture.result("tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools"), FIXTURE_TOOLS);
    assert_eq!(tools["ttlMs"], 0);
    assert_eq!(tools["cacheScope"], "public");
    assert!(tools.get("nextCursor").is_none());
    for tool in tools["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        if READ_ONLY.contains(&name) {
            assert_eq!(tool["annotations"], json!({"readOnlyHint": true}), "{name}");
        } else {
            assert!(tool.get("annotations").is_none(), "{name}");
        }
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
    }
    let by_name = |name: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        by_name("bare_array")["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "values": {"type": "array"},
                "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
                "choice": {"anyOf": [{"type": "array"}, {"type": "string"}]},
            },
            "required": ["values"],
            "additionalProperties": false,
        })
    );
    assert_eq!(
        by_name("structured")["outputSchema"],
        json!({"type": "object", "properties": {"text": {"type": "string"}, "length": {"type": "integer"}}, "required": ["text", "length"]})
    );
    let toggle = by_name("toggle")["inputSchema"].clone();
    assert_eq!(toggle["required"], json!(["enabled"]));
    assert_eq!(
        toggle["properties"]["target"]["enum"],
        json!(["tool", "prompt"])
    );
    assert_eq!(toggle["additionalProperties"], false);
    assert_eq!(
        by_name("shutdown")["inputSchema"]["required"],
        json!(["after_ms"])
    );
    let prompts = fixture.result("prompts/list", json!({})).await;
    assert_eq!(names(&prompts, "prompts"), ["greet", "ask_name", "toggled"]);
    assert_eq!(
        prompts["prompts"][0]["arguments"],
        json!([{"name": "name", "description": "The name of the person", "required": true}])
    );
    let templates = fixture.result("resources/templates/list", json!({})).await;
    assert_eq!(
        templates,
        json!({"resultType": "complete", "resourceTemplates": [], "ttlMs": 0, "cacheScope": "public"})
    );
}

#[tokio::test]
async fn many_tools_150_gives_two_pages_of_tools_list() {
    let mut fixture = Fixture::start(&["--many-tools", "150"]).await;
    let first = fixture.result("tools/list", json!({})).await;
    assert_eq!(first["tools"].as_array().unwrap().len(), 100);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next cursor")
        .to_owned();
    let second = fixture
        .result("tools/list", json!({"cursor": cursor}))
        .await;
    assert!(second.get("nextCursor").is_none());
    let mut all = names(&first, "tools");
    all.extend(names(&second, "tools"));
    assert_eq!(all.len(), 171);
    assert_eq!(&all[..21], FIXTURE_TOOLS);
    let numbered: Vec<String> = (0..150).map(|i| format!("tool_{i}")).collect();
    assert_eq!(&all[21..], numbered);
    assert_eq!(fixture.call_text("tool_149", json!({})).await, "tool_149");
    for cursor in [json!(""), json!("bm9wZTox"), json!(5)] {
        let error = fixture.error("tools/list", json!({"cursor": cursor})).await;
        assert_eq!(error["code"], -32602, "{cursor}");
    }
    let prompts_cursor = fixture
        .error("prompts/list", json!({"cursor": first["nextCursor"]}))
        .await;
    assert_eq!(prompts_cursor["code"], -32602);
}

#[tokio::test]
async fn resources_list_and_read_give_the_notes_and_refuse_unknown_uris() {
    let mut fixture = Fixture::start(&[]).await;
    let list = fixture.result("resources/list", json!({})).await;
    assert_eq!(
        list,
        json!({
            "resultType": "complete",
            "resources": [{"uri": "file:///fixture/notes.txt", "name": "notes", "mimeType": "text/plain"}],
            "ttlMs": 0,
            "cacheScope": "public",
        })
    );
    let read = fixture
        .result(
            "resources/read",
            json!({"uri": "file:///fixture/notes.txt"}),
        )
        .await;
    assert_eq!(
        read,
        json!({
            "resultType": "complete",
            "contents": [{"uri": "file:///fixture/notes.txt", "mimeType": "text/plain", "text": "The notes of the fixture."}],
            "ttlMs": 0,
            "cacheScope": "public",
        })
    );
    let error = fixture
        .error("resources/read", json!({"uri": "file:///fixture/none.txt"}))
        .await;
    assert_eq!(
        error,
        json!({"code": -32602, "message": "Resource not found", "data": {"uri": "file:///fixture/none.txt"}})
    );
    assert_eq!(
        fixture.error("resources/read", json!({})).await["code"],
        -32602
    );
}
