//! The rounds of the tools that ask for input (multi round-trip requests).

use serde_json::{Value, json};

use crate::common::{Fixture, text_of};

/// Round 1 of `tool`: checks the input requests and returns the requestState.
async fn round_one(fixture: &mut Fixture, tool: &str, arguments: Value, requests: Value) -> String {
    let result = fixture.call(tool, arguments).await;
    assert_eq!(result["resultType"], "input_required", "{tool}: {result}");
    assert_eq!(result["inputRequests"], requests, "{tool}");
    let keys: Vec<&String> = result.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["resultType", "inputRequests", "requestState"],
        "{tool}"
    );
    result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned()
}

/// The retry of `tool` with `responses` and `state`.
async fn retry(
    fixture: &mut Fixture,
    tool: &str,
    arguments: Value,
    responses: Value,
    state: &str,
) -> Value {
    fixture
        .result(
            "tools/call",
            json!({"name": tool, "arguments": arguments, "inputResponses": responses, "requestState": state}),
        )
        .await
}

fn profile_form() -> Value {
    json!({"profile": {"method": "elicitation/create", "params": {
        "mode": "form",
        "message": "Tell us about you.",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 1},
                "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
                "subscribe": {"type": "boolean", "title": "Subscribe"},
                "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"]},
            },
            "required": ["name"],
        },
    }}})
}

fn url_request(key: &str, message: &str, url: &str) -> Value {
    json!({key: {"method": "elicitation/create", "params": {"mode": "url", "message": message, "url": url}}})
}

#[tokio::test]
async fn ask_form_gives_the_accepted_content_or_the_action() {
    let mut fixture = Fixture::start(&[]).await;
    let content = json!({"name": "Ada", "age": 36, "subscribe": true, "color": "red"});
    for (answer, expected) in [
        (
            json!({"action": "accept", "content": content}),
            r#"form: accept {"name":"Ada","age":36,"subscribe":true,"color":"red"}"#,
        ),
        (json!({"action": "decline"}), "form: decline"),
        (json!({"action": "cancel"}), "form: cancel"),
    ] {
        let state = round_one(&mut fixture, "ask_form", json!({}), profile_form()).await;
        let result = retry(
            &mut fixture,
            "ask_form",
            json!({}),
            json!({"profile": answer}),
            &state,
        )
        .await;
        assert_eq!(text_of(&result), expected);
    }
}

#[tokio::test]
async fn ask_url_and_ask_bad_url_give_the_action() {
    let mut fixture = Fixture::start(&[]).await;
    for action in ["accept", "decline", "cancel"] {
        let requests = url_request("auth", "Sign in to continue.", "https://example.com/auth");
        let state = round_one(&mut fixture, "ask_url", json!({}), requests).await;
        let result = retry(
            &mut fixture,
            "ask_url",
            json!({}),
            json!({"auth": {"action": action}}),
            &state,
        )
        .await;
        assert_eq!(text_of(&result), format!("url: {action}"));
    }
    let requests = url_request("file", "Open the file.", "file://localhost/etc/passwd");
    let state = round_one(&mut fixture, "ask_bad_url", json!({}), requests).await;
    let result = retry(
        &mut fixture,
        "ask_bad_url",
        json!({}),
        json!({"file": {"action": "decline"}}),
        &state,
    )
    .await;
    assert_eq!(text_of(&result), "url: decline");
}

#[tokio::test]
async fn ask_url_twice_asks_the_same_url_in_two_rounds_with_new_states() {
    let mut fixture = Fixture::start(&[]).await;
    let requests = url_request("auth", "Sign in to continue.", "https://example.com/auth");
    let first = round_one(&mut fixture, "ask_url_twice", json!({}), requests.clone()).await;
    let round2 = retry(
        &mut fixture,
        "ask_url_twice",
        json!({}),
        json!({"auth": {"action": "accept"}}),
        &first,
    )
    .await;
    assert_eq!(round2["resultType"], "input_required");
    assert_eq!(round2["inputRequests"], requests);
    let second = round2["requestState"].as_str().unwrap().to_owned();
    assert_ne!(first, second);
    let done = retry(
        &mut fixture,
        "ask_url_twice",
        json!({}),
        json!({"auth": {"action": "accept"}}),
        &second,
    )
    .await;
    assert_eq!(text_of(&done), "url twice: accept");
    // With complete: true, round 2 gives the result.
    let args = json!({"complete": true});
    let state = round_one(&mut fixture, "ask_url_twice", args.clone(), requests).await;
    let done = retry(
        &mut fixture,
        "ask_url_twice",
        args,
        json!({"auth": {"action": "decline"}}),
        &state,
    )
    .await;
    assert_eq!(text_of(&done), "url twice: decline");
}

#[tokio::test]
async fn sample_and_sample_tools_give_the_first_text_of_the_model() {
    let mut fixture = Fixture::start(&[]).await;
    let requests = json!({"model": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}],
        "maxTokens": 50,
    }}});
    let state = round_one(&mut fixture, "sample", json!({}), requests).await;
    let answer = json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "hello"}, "stopReason": "endTurn"});
    let result = retry(
        &mut fixture,
        "sample",
        json!({}),
        json!({"model": answer}),
        &state,
    )
    .await;
    assert_eq!(text_of(&result), "model: hello");
    let state = round_one(
        &mut fixture,
        "sample",
        json!({}),
        result_requests_of_sample(),
    )
    .await;
    let image_only = json!({"role": "assistant", "model": "m", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]});
    let result = retry(
        &mut fixture,
        "sample",
        json!({}),
        json!({"model": image_only}),
        &state,
    )
    .await;
    assert_eq!(text_of(&result), "model: no text");

    let requests = json!({"model": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Look up the weather."}}],
        "maxTokens": 50,
        "tools": [{"name": "lookup", "inputSchema": {"type": "object"}}],
    }}});
    let state = round_one(&mut fixture, "sample_tools", json!({}), requests).await;
    let answer =
        json!({"role": "assistant", "model": "m", "content": [{"type": "text", "text": "sunny"}]});
    let result = retry(
        &mut fixture,
        "sample_tools",
        json!({}),
        json!({"model": answer}),
        &state,
    )
    .await;
    assert_eq!(text_of(&result), "model: sunny");
}

fn result_requests_of_sample() -> Value {
    json!({"model": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}],
        "maxTokens": 50,
    }}})
}

#[tokio::test]
async fn list_roots_multi_and_many_inputs_give_their_counts() {
    let mut fixture = Fixture::start(&[]).await;
    let roots = json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]});
    let state = round_one(
        &mut fixture,
        "list_roots",
        json!({}),
        json!({"roots": {"method": "roots/list"}}),
    )
    .await;
    let result = retry(
        &mut fixture,
        "list_roots",
        json!({}),
        json!({"roots": roots}),
        &state,
    )
    .await;
    assert_eq!(text_of(&result), "roots: file:///a\nfile:///b");

    let requests = json!({
        "name": {"method": "elicitation/create", "params": {"mode": "form", "message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}},
        "roots": {"method": "roots/list"},
    });
    let state = round_one(&mut fixture, "multi", json!({}), requests.clone()).await;
    let answers = json!({"name": {"action": "accept", "content": {"name": "Ada"}}, "roots": {"roots": [{"uri": "file:///w"}]}});
    let result = retry(&mut fixture, "multi", json!({}), answers, &state).await;
    assert_eq!(text_of(&result), "name: Ada (accept); roots: 1");
    let state = round_one(&mut fixture, "multi", json!({}), requests).await;
    let answers = json!({"name": {"action": "cancel"}, "roots": {"roots": []}});
    let result = retry(&mut fixture, "multi", json!({}), answers, &state).await;
    assert_eq!(text_of(&result), "name: nobody (cancel); roots: 0");

    let many: serde_json::Map<String, Value> = (0..17)
        .map(|i| (format!("r{i}"), json!({"method": "roots/list"})))
        .collect();
    let state = round_one(&mut fixture, "many_inputs", json!({}), Value::Object(many)).await;
    let all: serde_json::Map<String, Value> = (0..17)
        .map(|i| (format!("r{i}"), json!({"roots": []})))
        .collect();
    let result = retry(
        &mut fixture,
        "many_inputs",
        json!({}),
        Value::Object(all),
        &state,
    )
    .await;
    assert_eq!(text_of(&result), "answers: 17");
}

#[tokio::test]
async fn a_retry_without_the_needed_answer_or_state_asks_again() {
    let mut fixture = Fixture::start(&[]).await;
    let state = round_one(&mut fixture, "ask_form", json!({}), profile_form()).await;
    let again = retry(
        &mut fixture,
        "ask_form",
        json!({}),
        json!({"other": {"action": "accept"}}),
        &state,
    )
    .await;
    assert_eq!(again["resultType"], "input_required");
    assert_eq!(again["inputRequests"], profile_form());
    let no_state = fixture
        .call_with_responses("ask_form", json!({"profile": {"action": "decline"}}))
        .await;
    assert_eq!(no_state["resultType"], "input_required");
    // multi needs both answers.
    let state = fixture.call("multi", json!({})).await["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let partial = retry(
        &mut fixture,
        "multi",
        json!({}),
        json!({"roots": {"roots": []}}),
        &state,
    )
    .await;
    assert_eq!(partial["resultType"], "input_required");
}

#[tokio::test]
async fn a_malformed_answer_gets_invalid_params() {
    let mut fixture = Fixture::start(&[]).await;
    for (tool, key, answer) in [
        ("ask_form", "profile", json!({"action": "maybe"})),
        (
            "ask_form",
            "profile",
            json!({"action": "accept", "content": "Ada"}),
        ),
        (
            "sample",
            "model",
            json!({"content": {"type": "text", "text": "x"}}),
        ),
        (
            "list_roots",
            "roots",
            json!({"roots": [{"name": "no uri"}]}),
        ),
    ] {
        let state = fixture.call(tool, json!({})).await["requestState"]
            .as_str()
            .unwrap()
            .to_owned();
        let error = fixture
            .error(
                "tools/call",
                json!({"name": tool, "inputResponses": {key: answer}, "requestState": state}),
            )
            .await;
        assert_eq!(error["code"], -32602, "{tool}: {error}");
    }
    let error = fixture
        .error(
            "tools/call",
            json!({"name": "ask_form", "inputResponses": [1]}),
        )
        .await;
    assert_eq!(error["code"], -32602);
}

fn change_one_character(state: &str) -> String {
    let mut bytes = state.as_bytes().to_vec();
    let index = bytes.len() / 2;
    bytes[index] = if bytes[index] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

#[tokio::test]
async fn a_tampered_foreign_or_misbound_request_state_is_refused() {
    let mut fixture = Fixture::start(&[]).await;
    let mut other = Fixture::start(&[]).await;
    let state = round_one(
        &mut fixture,
        "ask_url",
        json!({}),
        url_request("auth", "Sign in to continue.", "https://example.com/auth"),
    )
    .await;
    let foreign = other.call("ask_url", json!({})).await["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = json!({"auth": {"action": "accept"}});
    let refused = [
        ("ask_url", change_one_character(&state)),
        ("ask_url", foreign),
        ("ask_bad_url", state.clone()),
        ("echo", state.clone()),
        ("ask_url", String::new()),
    ];
    for (tool, bad_state) in refused {
        let error = fixture
            .error(
                "tools/call",
                json!({"name": tool, "arguments": if tool == "echo" { json!({"text": "x"}) } else { json!({}) }, "inputResponses": answer, "requestState": bad_state}),
            )
            .await;
        assert_eq!(
            error,
            json!({"code": -32602, "message": "The request state is not valid or has expired.", "data": {"reason": "not_valid"}}),
            "{tool}"
        );
    }
    let error = fixture
        .error(
            "prompts/get",
            json!({"name": "ask_name", "inputResponses": answer, "requestState": state}),
        )
        .await;
    assert_eq!(error["code"], -32602);
    // The state itself still works.
    let result = retry(&mut fixture, "ask_url", json!({}), answer, &state).await;
    assert_eq!(text_of(&result), "url: accept");
}

#[tokio::test]
async fn the_prompt_ask_name_greets_after_a_form() {
    let mut fixture = Fixture::start(&[]).await;
    let request = json!({"name": {"method": "elicitation/create", "params": {"mode": "form", "message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}});
    for (answer, greeting) in [
        (
            json!({"action": "accept", "content": {"name": "Ada"}}),
            "Hello, Ada.",
        ),
        (json!({"action": "decline"}), "Hello, nobody."),
    ] {
        let round = fixture
            .result("prompts/get", json!({"name": "ask_name"}))
            .await;
        assert_eq!(round["resultType"], "input_required");
        assert_eq!(round["inputRequests"], request);
        let result = fixture
            .result(
                "prompts/get",
                json!({"name": "ask_name", "inputResponses": {"name": answer}, "requestState": round["requestState"]}),
            )
            .await;
        assert_eq!(
            result,
            json!({
                "resultType": "complete",
                "description": "A greeting after a form",
                "messages": [{"role": "user", "content": {"type": "text", "text": greeting}}],
            })
        );
    }
}
