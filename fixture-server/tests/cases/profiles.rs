//! The `--profile conformance` surface: the everything-server names of the MCP
//! conformance suite, answered the 2026-07-28 way.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Fixture, text_of};

fn names(list: &Value, member: &str) -> Vec<String> {
    list[member]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_conformance_profile_lists_the_everything_server_surface() {
    let mut fixture = Fixture::start(&["--profile", "conformance"]).await;
    let tools = fixture.result("tools/list", json!({})).await;
    let tool_names = names(&tools, "tools");
    for name in [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_error_handling",
        "test_sampling",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "test_elicitation_sep1036_url",
        "json_schema_2020_12_tool",
        "test_logging_tool",
        "test_tool_fast",
        "test_tool_slow",
        "test_input_required_result_elicitation",
        "test_input_required_result_sampling",
        "test_input_required_result_list_roots",
        "test_input_required_result_request_state",
        "test_input_required_result_multiple_inputs",
        "test_input_required_result_multi_round",
        "test_input_required_result_tampered_state",
        "test_input_required_result_capabilities",
        "test_missing_capability",
        "test_streaming_elicitation",
        "test_trigger_tool_change",
        "test_trigger_prompt_change",
        "test_toggled_tool",
        "sep_2106_array_output_tool",
        "sep_2106_primitive_output_tool",
        "crash",
        "shutdown",
    ] {
        assert!(
            tool_names.contains(&name.to_owned()),
            "{name} is missing: {tool_names:?}"
        );
    }
    assert!(!tool_names.contains(&"echo".to_owned()));
    let prompts = fixture.result("prompts/list", json!({})).await;
    assert_eq!(
        names(&prompts, "prompts"),
        [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_input_required_result_prompt",
            "test_toggled_prompt",
        ]
    );
    let resources = fixture.result("resources/list", json!({})).await;
    let uris: Vec<_> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].clone())
        .collect();
    assert_eq!(
        uris,
        [
            json!("test://static-text"),
            json!("test://static-binary"),
            json!("test://watched-resource")
        ]
    );
    let templates = fixture.result("resources/templates/list", json!({})).await;
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );
    let completion = fixture
        .result("completion/complete", json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": ""}}))
        .await;
    assert_eq!(
        completion["completion"],
        json!({"values": [], "total": 0, "hasMore": false})
    );
}

#[tokio::test]
async fn the_conformance_tools_give_the_expected_content() {
    let mut fixture = Fixture::start(&["--profile", "conformance"]).await;
    assert_eq!(
        fixture.call_text("test_simple_text", json!({})).await,
        "This is a simple text response for testing."
    );
    let image = fixture.call("test_image_content", json!({})).await;
    assert_eq!(image["content"][0]["type"], "image");
    assert_eq!(image["content"][0]["mimeType"], "image/png");
    let audio = fixture.call("test_audio_content", json!({})).await;
    assert_eq!(audio["content"][0]["mimeType"], "audio/wav");
    let embedded = fixture.call("test_embedded_resource", json!({})).await;
    assert_eq!(
        embedded["content"][0]["resource"],
        json!({"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."})
    );
    let mixed = fixture.call("test_multiple_content_types", json!({})).await;
    let kinds: Vec<_> = mixed["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].clone())
        .collect();
    assert_eq!(kinds, [json!("text"), json!("image"), json!("resource")]);
    let error = fixture.call("test_error_handling", json!({})).await;
    assert_eq!(error["isError"], true);
    assert_eq!(
        error["content"][0]["text"],
        "This tool intentionally returns an error for testing"
    );
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "test_tool_with_logging"}),
            json!({"io.modelcontextprotocol/logLevel": "info"}),
        )
        .await;
    let data: Vec<_> = before.iter().map(|m| m["params"]["data"].clone()).collect();
    assert_eq!(
        data,
        [
            json!("Tool execution started"),
            json!("Tool processing data"),
            json!("Tool execution completed")
        ]
    );
    let (before, response) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "test_tool_with_progress"}),
            json!({"progressToken": "progress-test-1"}),
        )
        .await;
    let progress: Vec<_> = before
        .iter()
        .map(|m| m["params"]["progress"].clone())
        .collect();
    assert_eq!(progress, [json!(0), json!(50), json!(100)]);
    assert_eq!(response["result"]["content"][0]["text"], "progress-test-1");
    let (before, _) = fixture
        .exchange_with(
            "tools/call",
            json!({"name": "test_logging_tool"}),
            json!({"io.modelcontextprotocol/logLevel": "error"}),
        )
        .await;
    assert_eq!(before.len(), 1);
    assert_eq!(before[0]["params"]["level"], "error");
    let array = fixture.call("sep_2106_array_output_tool", json!({})).await;
    assert_eq!(array["structuredContent"], json!([1, 2, 3]));
    let number = fixture
        .call("sep_2106_primitive_output_tool", json!({}))
        .await;
    assert_eq!(number["structuredContent"], json!(42));
    let schema = fixture
        .call_text(
            "json_schema_2020_12_tool",
            json!({"name": "n", "address": {"city": "c"}}),
        )
        .await;
    assert_eq!(
        schema,
        r#"JSON Schema 2020-12 tool called with: {"name":"n","address":{"city":"c"}}"#
    );
    let slow = fixture
        .send_request(
            "tools/call",
            json!({"name": "test_tool_slow", "arguments": {"durationMs": 10000}}),
        )
        .await;
    fixture.cancel(&slow).await;
    assert_eq!(
        fixture.call_text("test_tool_fast", json!({})).await,
        "The fast tool completed."
    );
    fixture.assert_quiet(Duration::from_millis(100)).await;
}

async fn round(fixture: &mut Fixture, tool: &str, arguments: Value) -> Value {
    let result = fixture.call(tool, arguments).await;
    assert_eq!(result["resultType"], "input_required", "{tool}: {result}");
    result
}

async fn answer(
    fixture: &mut Fixture,
    tool: &str,
    arguments: Value,
    responses: Value,
    round: &Value,
) -> Value {
    fixture
        .result(
            "tools/call",
            json!({"name": tool, "arguments": arguments, "inputResponses": responses, "requestState": round["requestState"]}),
        )
        .await
}

#[tokio::test]
async fn the_conformance_input_tools_complete_after_their_rounds() {
    let mut fixture = Fixture::start(&["--profile", "conformance"]).await;
    let sampling = round(&mut fixture, "test_sampling", json!({"prompt": "Hi"})).await;
    assert_eq!(
        sampling["inputRequests"]["sampling"]["params"]["maxTokens"],
        100
    );
    let reply = json!({"sampling": {"role": "assistant", "model": "test-model", "content": {"type": "text", "text": "This is a test response from the client"}, "stopReason": "endTurn"}});
    let done = answer(
        &mut fixture,
        "test_sampling",
        json!({"prompt": "Hi"}),
        reply,
        &sampling,
    )
    .await;
    assert_eq!(
        text_of(&done),
        "LLM response: This is a test response from the client"
    );

    let form = round(
        &mut fixture,
        "test_elicitation",
        json!({"message": "Please provide your information"}),
    )
    .await;
    let reply = json!({"elicitation": {"action": "accept", "content": {"username": "testuser", "email": "test@example.com"}}});
    let done = answer(
        &mut fixture,
        "test_elicitation",
        json!({"message": "x"}),
        reply,
        &form,
    )
    .await;
    assert_eq!(
        text_of(&done),
        r#"User response: action=accept, content={"username":"testuser","email":"test@example.com"}"#
    );

    for tool in [
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
    ] {
        let form = round(&mut fixture, tool, json!({})).await;
        let done = answer(
            &mut fixture,
            tool,
            json!({}),
            json!({"form": {"action": "decline"}}),
            &form,
        )
        .await;
        assert_eq!(
            text_of(&done),
            "Elicitation completed: action=decline, content={}"
        );
    }
    let url = round(&mut fixture, "test_elicitation_sep1036_url", json!({})).await;
    let done = answer(
        &mut fixture,
        "test_elicitation_sep1036_url",
        json!({}),
        json!({"authorization": {"action": "accept"}}),
        &url,
    )
    .await;
    assert_eq!(text_of(&done), "URL elicitation completed: action=accept");

    let state = round(
        &mut fixture,
        "test_input_required_result_request_state",
        json!({}),
    )
    .await;
    let done = answer(
        &mut fixture,
        "test_input_required_result_request_state",
        json!({}),
        json!({"confirm": {"action": "accept", "content": {"ok": true}}}),
        &state,
    )
    .await;
    assert!(text_of(&done).contains("state-ok"));

    let multiple = round(
        &mut fixture,
        "test_input_required_result_multiple_inputs",
        json!({}),
    )
    .await;
    let keys: Vec<_> = multiple["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["user_name", "greeting", "client_roots"]);
    let replies = json!({
        "user_name": {"action": "accept", "content": {"name": "Alice"}},
        "greeting": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "Hello there!"}},
        "client_roots": {"roots": [{"uri": "file:///r"}]},
    });
    let done = answer(
        &mut fixture,
        "test_input_required_result_multiple_inputs",
        json!({}),
        replies,
        &multiple,
    )
    .await;
    assert_eq!(text_of(&done), "name=Alice, greeting=Hello there!, roots=1");

    let first = round(
        &mut fixture,
        "test_input_required_result_multi_round",
        json!({}),
    )
    .await;
    let second = answer(
        &mut fixture,
        "test_input_required_result_multi_round",
        json!({}),
        json!({"step1": {"action": "accept", "content": {"name": "Alice"}}}),
        &first,
    )
    .await;
    assert_eq!(second["resultType"], "input_required");
    assert_ne!(second["requestState"], first["requestState"]);
    let done = answer(
        &mut fixture,
        "test_input_required_result_multi_round",
        json!({}),
        json!({"step2": {"action": "accept", "content": {"color": "blue"}}}),
        &second,
    )
    .await;
    assert_eq!(text_of(&done), "name=Alice, color=blue");

    let wrong_key = fixture
        .call_with_responses(
            "test_input_required_result_elicitation",
            json!({"wrong_key": {"action": "accept", "content": {"data": "wrong"}}}),
        )
        .await;
    assert_eq!(wrong_key["resultType"], "input_required");
    assert!(wrong_key["inputRequests"].get("user_name").is_some());
}

#[tokio::test]
async fn the_conformance_prompts_and_resources_give_their_contents() {
    let mut fixture = Fixture::start(&["--profile", "conformance"]).await;
    let with_args = fixture
        .result("prompts/get", json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "hello", "arg2": "world"}}))
        .await;
    assert_eq!(
        with_args["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='hello', arg2='world'"}}])
    );
    let missing = fixture
        .error(
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}}),
        )
        .await;
    assert_eq!(missing["code"], -32602);
    let embedded = fixture
        .result("prompts/get", json!({"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://x"}}))
        .await;
    assert_eq!(
        embedded["messages"][0]["content"]["resource"]["uri"],
        "test://x"
    );
    let image = fixture
        .result("prompts/get", json!({"name": "test_prompt_with_image"}))
        .await;
    assert_eq!(image["messages"][0]["content"]["type"], "image");
    let first = fixture
        .result(
            "prompts/get",
            json!({"name": "test_input_required_result_prompt"}),
        )
        .await;
    assert_eq!(first["resultType"], "input_required");
    let done = fixture
        .result("prompts/get", json!({"name": "test_input_required_result_prompt", "inputResponses": {"user_context": {"action": "accept", "content": {"context": "test context"}}}, "requestState": first["requestState"]}))
        .await;
    assert_eq!(
        done["messages"][0]["content"]["text"],
        "Use this context: test context"
    );

    let text = fixture
        .result("resources/read", json!({"uri": "test://static-text"}))
        .await;
    assert_eq!(
        text["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let binary = fixture
        .result("resources/read", json!({"uri": "test://static-binary"}))
        .await;
    assert_eq!(binary["contents"][0]["mimeType"], "image/png");
    assert!(binary["contents"][0]["blob"].is_string());
    let template = fixture
        .result("resources/read", json!({"uri": "test://template/123/data"}))
        .await;
    assert_eq!(
        template["contents"],
        json!([{"uri": "test://template/123/data", "mimeType": "application/json", "text": r#"{"id":"123","templateTest":true,"data":"Data for ID: 123"}"#}])
    );
    assert_eq!(
        fixture
            .error("resources/read", json!({"uri": "test://template//data"}))
            .await["code"],
        -32602
    );
}
