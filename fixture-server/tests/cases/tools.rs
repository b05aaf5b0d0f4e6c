use serde_json::json;

use crate::common::Fixture;

#[tokio::test]
async fn every_plain_tool_gives_the_study_result_text() {
    let mut fixture = Fixture::start(&[]).await;
    let cases = [
        ("echo", json!({"text": "hello"}), "hello"),
        ("add", json!({"a": 2, "b": 3}), "5"),
        ("add", json!({"a": -7, "b": 3}), "-4"),
        ("slow", json!({"ms": 5}), "slept 5 ms"),
        (
            "progress",
            json!({"count": 3}),
            "sent 3 progress notifications",
        ),
        ("bare_array", json!({"values": [1, "a", null]}), "3 values"),
        (
            "bare_array",
            json!({"values": [], "pair": ["a", 1], "choice": "x"}),
            "0 values",
        ),
        ("toggled", json!({}), "toggled"),
        (
            "touch",
            json!({"uri": "file:///fixture/notes.txt"}),
            "touched file:///fixture/notes.txt",
        ),
        ("log", json!({}), "logged 4 messages"),
        (
            "toggle",
            json!({"enabled": true}),
            "tool toggled: enabled (no change)",
        ),
        (
            "toggle",
            json!({"enabled": true, "target": "prompt"}),
            "prompt toggled: enabled (no change)",
        ),
    ];
    for (name, arguments, expected) in cases {
        assert_eq!(
            fixture.call_text(name, arguments.clone()).await,
            expected,
            "{name} {arguments}"
        );
    }
    let structured = fixture.call("structured", json!({"text": "héllo"})).await;
    assert_eq!(
        structured,
        json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": "6 bytes"}],
            "structuredContent": {"text": "héllo", "length": 6},
            "isError": false,
        })
    );
    fixture.assert_valid();
}

#[tokio::test]
async fn wrong_arguments_and_unknown_tools_get_invalid_params() {
    let mut fixture = Fixture::start(&[]).await;
    let cases = [
        ("nope", json!({})),
        ("echo", json!({})),
        ("echo", json!({"text": 1})),
        ("add", json!({"a": 1})),
        ("add", json!({"a": 1.5, "b": 1})),
        ("add", json!({"a": i64::MAX, "b": 1})),
        ("slow", json!({"ms": -1})),
        ("bare_array", json!({"values": "x"})),
        ("bare_array", json!({"values": [], "extra": 1})),
        ("bare_array", json!({"values": [], "pair": [1, "a"]})),
        ("toggle", json!({"enabled": "yes"})),
        ("toggle", json!({"enabled": true, "target": "resource"})),
        ("toggle", json!({})),
        ("ask_form", json!({"x": 1})),
        ("shutdown", json!({})),
        ("shutdown", json!({"after_ms": 0})),
        ("crash", json!({"after_ms": 60001})),
    ];
    for (name, arguments) in cases {
        let error = fixture
            .error("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        assert_eq!(error["code"], -32602, "{name} {arguments}: {error}");
    }
    let error = fixture.error("tools/call", json!({"name": "nope"})).await;
    assert_eq!(
        error,
        json!({"code": -32602, "message": "Unknown tool: nope", "data": {"name": "nope"}})
    );
    let error = fixture
        .error("tools/call", json!({"name": "echo", "arguments": [1]}))
        .await;
    assert_eq!(error["code"], -32602);
    let error = fixture.error("tools/call", json!({"arguments": {}})).await;
    assert_eq!(error["code"], -32602);
}

#[tokio::test]
async fn array_output_gives_an_array_as_structured_content() {
    let mut fixture = Fixture::start(&["--array-output"]).await;
    let tools = fixture.result("tools/list", json!({})).await;
    let tool = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "array_output")
        .cloned()
        .expect("array_output is listed");
    assert_eq!(
        tool["outputSchema"],
        json!({"type": "array", "items": {"type": "integer"}})
    );
    assert_eq!(
        fixture.call("array_output", json!({})).await,
        json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": "[1,2,3]"}],
            "structuredContent": [1, 2, 3],
            "isError": false,
        })
    );
}

#[tokio::test]
async fn greet_and_toggled_prompts_give_their_messages() {
    let mut fixture = Fixture::start(&[]).await;
    let greet = fixture
        .result(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        greet,
        json!({
            "resultType": "complete",
            "description": "A greeting",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Hello, Ada."}}],
        })
    );
    let nobody = fixture
        .result("prompts/get", json!({"name": "greet"}))
        .await;
    assert_eq!(nobody["messages"][0]["content"]["text"], "Hello, nobody.");
    let toggled = fixture
        .result("prompts/get", json!({"name": "toggled"}))
        .await;
    assert_eq!(
        toggled["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "toggled"}}])
    );
    let error = fixture.error("prompts/get", json!({"name": "nope"})).await;
    assert_eq!(error["code"], -32602);
    let error = fixture
        .error(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": 1}}),
        )
        .await;
    assert_eq!(error["code"], -32602);
}
