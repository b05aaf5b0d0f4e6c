use serde_json::json;

use crate::common::{Fixture, VERSION};

#[tokio::test]
async fn a_request_without_the_required_meta_gets_invalid_params() {
    let mut fixture = Fixture::start(&[]).await;
    let cases = [
        ("tools/list", None),
        ("tools/list", Some(json!({}))),
        ("server/discover", Some(json!({"_meta": {}}))),
        (
            "tools/call",
            Some(
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}, "name": "echo", "arguments": {"text": "x"}}),
            ),
        ),
        (
            "subscriptions/listen",
            Some(
                json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}, "notifications": {}}),
            ),
        ),
        ("prompts/list", Some(json!({"_meta": "text"}))),
    ];
    for (method, params) in cases {
        let id = fixture.new_id();
        fixture
            .send_raw_request(id.clone(), method, params.clone())
            .await;
        let (_, response) = fixture.until_response(&id).await;
        assert_eq!(
            response["error"]["code"], -32602,
            "{method} {params:?}: {response}"
        );
    }
    let id = fixture.new_id();
    fixture
        .send_raw_request(
            id.clone(),
            "tools/list",
            Some(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}})),
        )
        .await;
    let (_, response) = fixture.until_response(&id).await;
    assert_eq!(
        response["error"]["data"],
        json!({"missing": ["io.modelcontextprotocol/clientCapabilities"]})
    );
}

#[tokio::test]
async fn an_unsupported_protocol_version_gets_32022_with_supported_and_requested() {
    let mut fixture = Fixture::start(&[]).await;
    for version in ["2025-11-25", "1900-01-01"] {
        let (_, response) = fixture
            .exchange_with(
                "tools/list",
                json!({}),
                json!({"io.modelcontextprotocol/protocolVersion": version}),
            )
            .await;
        assert_eq!(response["error"]["code"], -32022);
        assert_eq!(
            response["error"]["data"],
            json!({"supported": ["2026-07-28"], "requested": version})
        );
    }
}

#[tokio::test]
async fn each_request_is_judged_by_its_own_meta() {
    let mut fixture = Fixture::start(&[]).await;
    fixture.caps = json!({});
    assert_eq!(
        fixture
            .error("tools/call", json!({"name": "ask_form"}))
            .await["code"],
        -32021
    );
    fixture.caps = json!({"elicitation": {}});
    let result = fixture.call("ask_form", json!({})).await;
    assert_eq!(result["resultType"], "input_required");
    fixture.caps = json!({});
    assert_eq!(
        fixture
            .error("tools/call", json!({"name": "ask_form"}))
            .await["code"],
        -32021
    );
}

#[tokio::test]
async fn an_undeclared_input_kind_gets_32021_naming_the_missing_capabilities() {
    let mut fixture = Fixture::start(&[]).await;
    let cases = [
        (
            "ask_form",
            json!({"elicitation": {"url": {}}}),
            json!({"elicitation": {"form": {}}}),
        ),
        (
            "ask_url",
            json!({"elicitation": {}}),
            json!({"elicitation": {"url": {}}}),
        ),
        (
            "ask_url_twice",
            json!({"elicitation": {"form": {}}}),
            json!({"elicitation": {"url": {}}}),
        ),
        (
            "ask_bad_url",
            json!({}),
            json!({"elicitation": {"url": {}}}),
        ),
        ("sample", json!({"roots": {}}), json!({"sampling": {}})),
        (
            "sample_tools",
            json!({"sampling": {}}),
            json!({"sampling": {"tools": {}}}),
        ),
        ("list_roots", json!({"sampling": {}}), json!({"roots": {}})),
        (
            "multi",
            json!({"elicitation": {"url": {}}}),
            json!({"elicitation": {"form": {}}, "roots": {}}),
        ),
        ("many_inputs", json!({}), json!({"roots": {}})),
    ];
    for (tool, caps, required) in cases {
        fixture.caps = caps;
        let error = fixture.error("tools/call", json!({"name": tool})).await;
        assert_eq!(error["code"], -32021, "{tool}");
        assert_eq!(
            error["data"],
            json!({"requiredCapabilities": required}),
            "{tool}"
        );
    }
    fixture.caps = json!({});
    let error = fixture
        .error("prompts/get", json!({"name": "ask_name"}))
        .await;
    assert_eq!(
        error["data"],
        json!({"requiredCapabilities": {"elicitation": {"form": {}}}})
    );
}

#[tokio::test]
async fn an_invalid_log_level_progress_token_or_capability_shape_gets_invalid_params() {
    let mut fixture = Fixture::start(&[]).await;
    for extra in [
        json!({"io.modelcontextprotocol/logLevel": "banana"}),
        json!({"io.modelcontextprotocol/logLevel": 3}),
        json!({"progressToken": 1.5}),
        json!({"progressToken": null}),
        json!({"io.modelcontextprotocol/clientCapabilities": {"roots": true}}),
        json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": 1}}}),
        json!({"io.modelcontextprotocol/clientInfo": {"name": "no version"}}),
        json!({"io.modelcontextprotocol/protocolVersion": 20260728}),
    ] {
        let (_, response) = fixture
            .exchange_with("tools/call", json!({"name": "log"}), extra.clone())
            .await;
        assert_eq!(response["error"]["code"], -32602, "{extra}: {response}");
    }
}
