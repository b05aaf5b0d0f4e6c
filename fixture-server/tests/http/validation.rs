//! What the endpoint refuses, with the HTTP status and the JSON-RPC error of the spec
//! (streamable-http.mdx; WIRE-DIFF §8.2).

use hyper::StatusCode;
use serde_json::{Value, json};

use super::client::{Server, body_json, body_text, header, mcp_headers, request};

fn without(headers: Vec<(String, String)>, name: &str) -> Vec<(String, String)> {
    headers.into_iter().filter(|(n, _)| n != name).collect()
}

fn with(mut headers: Vec<(String, String)>, name: &str, value: &str) -> Vec<(String, String)> {
    headers.retain(|(n, _)| n != name);
    headers.push((name.into(), value.into()));
    headers
}

async fn refused(
    server: &Server,
    frame: &Value,
    headers: &[(String, String)],
) -> (StatusCode, Value) {
    let response = server.post_with(frame, headers).await;
    let status = response.status();
    assert_eq!(header(&response, "content-type"), Some("application/json"));
    (status, body_json(response).await)
}

#[tokio::test]
async fn get_and_delete_answer_405_allowing_post() {
    let server = Server::start(&["--https"]).await;
    for method in ["GET", "DELETE"] {
        let accept = vec![("accept".to_owned(), "text/event-stream".to_owned())];
        let response = server.send(method, &accept, Vec::new()).await.unwrap();
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method}"
        );
        assert_eq!(header(&response, "allow"), Some("POST"));
        assert_eq!(body_text(response).await, "");
    }
}

#[tokio::test]
async fn a_missing_or_mismatched_header_answers_400_with_header_mismatch() {
    let server = Server::start(&["--https"]).await;
    let call = request(
        json!(5),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
        json!({}),
    );
    let cases = [
        (
            without(mcp_headers(&call), "mcp-protocol-version"),
            "Header mismatch: the request has no MCP-Protocol-Version header.",
        ),
        (
            with(mcp_headers(&call), "mcp-protocol-version", "2025-11-25"),
            "Header mismatch: MCP-Protocol-Version header value '2025-11-25' does not match body value '2026-07-28'.",
        ),
        (
            without(mcp_headers(&call), "mcp-method"),
            "Header mismatch: the request has no Mcp-Method header.",
        ),
        (
            with(mcp_headers(&call), "mcp-method", "tools/list"),
            "Header mismatch: Mcp-Method header value 'tools/list' does not match body value 'tools/call'.",
        ),
        (
            without(mcp_headers(&call), "mcp-name"),
            "Header mismatch: a tools/call request needs an Mcp-Name header.",
        ),
        (
            with(mcp_headers(&call), "mcp-name", "add"),
            "Header mismatch: Mcp-Name header value 'add' does not match body value 'echo'.",
        ),
    ];
    for (headers, message) in cases {
        let (status, frame) = refused(&server, &call, &headers).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{message}");
        assert_eq!(
            frame,
            json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32020, "message": message}})
        );
    }
    // The Base64 sentinel form of Mcp-Name is decoded before the comparison.
    let encoded = with(mcp_headers(&call), "mcp-name", "=?base64?ZWNobw==?=");
    let response = server.post_with(&call, &encoded).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        body_json(response).await["result"]["content"][0]["text"],
        "x"
    );
}

#[tokio::test]
async fn an_unknown_method_answers_404_and_an_unsupported_version_400() {
    let server = Server::start(&["--https"]).await;
    let unknown = request(json!(1), "tasks/list", json!({}), json!({}));
    let (status, frame) = refused(&server, &unknown, &mcp_headers(&unknown)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(frame["error"]["code"], -32601);
    assert_eq!(frame["id"], 1);

    let mut old = request(json!(2), "tools/list", json!({}), json!({}));
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let headers = with(mcp_headers(&old), "mcp-protocol-version", "2025-11-25");
    let (status, frame) = refused(&server, &old, &headers).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(frame["error"]["code"], -32022);
    assert_eq!(
        frame["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );

    let bare = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}});
    let (status, frame) = refused(&server, &bare, &mcp_headers(&bare)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(frame["error"]["code"], -32602);
}

#[tokio::test]
async fn a_notification_answers_202_without_a_body() {
    let server = Server::start(&["--https"]).await;
    let notification =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}});
    let response = server.post(&notification).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert_eq!(header(&response, "content-type"), None);
    assert_eq!(body_text(response).await, "");
}

#[tokio::test]
async fn bad_bodies_accept_and_origin_get_http_errors_with_json_rpc_errors() {
    let server = Server::start(&["--https"]).await;
    let list = request(json!(1), "tools/list", json!({}), json!({}));
    let send = |body: &'static str| {
        let headers = mcp_headers(&list);
        let server = &server;
        async move {
            let response = server
                .send("POST", &headers, body.as_bytes().to_vec())
                .await
                .unwrap();
            (response.status(), body_json(response).await)
        }
    };
    let (status, frame) = send("{").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(frame["error"]["code"], -32700);
    assert!(frame.get("id").is_none());
    let (status, frame) = send(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#).await;
    assert_eq!(
        (status, frame["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32600))
    );
    let (status, frame) = send(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).await;
    assert_eq!(
        (status, frame["error"]["code"].clone()),
        (StatusCode::BAD_REQUEST, json!(-32600))
    );

    let (status, frame) = refused(
        &server,
        &list,
        &with(mcp_headers(&list), "accept", "application/json"),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(frame["error"]["code"], -32600);

    let foreign = with(mcp_headers(&list), "origin", "https://evil.example");
    let (status, frame) = refused(&server, &list, &foreign).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(frame.get("id").is_none());
    let local = with(mcp_headers(&list), "origin", "http://localhost:5173");
    assert_eq!(
        server.post_with(&list, &local).await.status(),
        StatusCode::OK
    );

    let (status, _) = refused(
        &server,
        &list,
        &with(mcp_headers(&list), "content-type", "text/plain"),
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn a_client_that_does_not_trust_the_ca_is_refused_at_the_handshake() {
    let mut server = Server::start(&["--https"]).await;
    let other = tls_fixtures::generate().unwrap();
    // A CA of another name: rustls cannot even find the issuer.
    server.trust(other.unknown_ca_cert.as_bytes());
    let list = request(json!(1), "tools/list", json!({}), json!({}));
    let error = server
        .send("POST", &mcp_headers(&list), list.to_string().into_bytes())
        .await
        .unwrap_err();
    assert!(error.contains("UnknownIssuer"), "{error}");
}

#[tokio::test]
async fn each_negative_tls_case_is_refused_by_a_client_that_trusts_the_ca_file() {
    let list = request(json!(1), "tools/list", json!({}), json!({}));
    for (case, reason) in [
        ("expired", "certificate expired"),
        ("wrong-host", "not valid for name \"127.0.0.1\""),
        ("unknown-ca", "UnknownIssuer"),
    ] {
        let server = Server::start(&["--https", "--tls-case", case]).await;
        let error = server
            .send("POST", &mcp_headers(&list), list.to_string().into_bytes())
            .await
            .unwrap_err();
        assert!(error.contains(reason), "{case}: {error}");
    }
}

#[tokio::test]
async fn a_negative_tls_case_loads_from_tls_dir_too() {
    let dir = tempfile::tempdir().unwrap();
    tls_fixtures::files::write_to(dir.path(), &tls_fixtures::generate().unwrap()).unwrap();
    let path = dir.path().to_str().unwrap();
    let server = Server::start(&["--https", "--tls-dir", path, "--tls-case", "wrong-host"]).await;
    let list = request(json!(1), "tools/list", json!({}), json!({}));
    let error = server
        .send("POST", &mcp_headers(&list), list.to_string().into_bytes())
        .await
        .unwrap_err();
    assert!(
        error.contains("only valid for DnsName(\"wrong.example\")"),
        "{error}"
    );
}

#[tokio::test]
async fn other_paths_bad_notifications_and_bad_header_bytes_are_refused() {
    let server = Server::start(&["--https"]).await;
    let list = request(json!(1), "tools/list", json!({}), json!({}));
    // Another path: a plain 404.
    let other = server
        .send_to(
            "/other",
            "POST",
            &mcp_headers(&list),
            list.to_string().into_bytes(),
        )
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
    // A notification without "jsonrpc": 400 with an error that has no id.
    let bad = json!({"method": "notifications/cancelled", "params": {"requestId": 1}});
    let (status, frame) = refused(&server, &bad, &mcp_headers(&bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(frame["error"]["code"], -32600);
    assert!(frame.get("id").is_none());
    // Bytes outside visible ASCII in a metadata header: -32020.
    let call = request(
        json!(2),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}}),
        json!({}),
    );
    let mut headers = mcp_headers(&call);
    headers.retain(|(name, _)| name != "mcp-name");
    let raw = server
        .send_raw_header(&call, &headers, "mcp-name", b"ech\xf6")
        .await;
    assert_eq!(raw.0, StatusCode::BAD_REQUEST);
    assert_eq!(raw.1["error"]["code"], -32020);
}

#[tokio::test]
async fn a_missing_client_capability_answers_400_and_a_tool_error_200() {
    let server = Server::start(&["--https"]).await;
    let mut ask = request(
        json!(1),
        "tools/call",
        json!({"name": "ask_form", "arguments": {}}),
        json!({}),
    );
    ask["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let (status, frame) = refused(&server, &ask, &mcp_headers(&ask)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(frame["error"]["code"], -32021);
    let wrong = request(
        json!(2),
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1}}),
        json!({}),
    );
    let (status, frame) = refused(&server, &wrong, &mcp_headers(&wrong)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(frame["error"]["code"], -32602);
}

#[tokio::test]
async fn param_header_echo_needs_mcp_param_text_only_while_the_list_marks_it() {
    let server = Server::start(&["--https", "--param-header-echo"]).await;
    let call = |id: i64, arguments: Value| {
        request(
            json!(id),
            "tools/call",
            json!({"name": "param_header_echo", "arguments": arguments}),
            json!({}),
        )
    };
    let listed_text = |list: Value| {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == "param_header_echo")
            .map(|tool| tool["inputSchema"]["properties"]["text"].clone())
            .unwrap()
    };
    let list = request(json!(1), "tools/list", json!({}), json!({}));
    let marked =
        json!({"type": "string", "description": "The text to send back", "x-mcp-header": "Text"});
    assert_eq!(listed_text(server.call(&list).await), marked);

    let unmark = call(2, json!({"text": "a", "mark": false}));
    let (status, frame) = refused(&server, &unmark, &mcp_headers(&unmark)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        frame["error"]["message"],
        "Header mismatch: the argument 'text' needs the header Mcp-Param-Text."
    );
    let headers = with(mcp_headers(&unmark), "mcp-param-text", "a");
    let response = server.post_with(&unmark, &headers).await;
    assert_eq!(
        body_json(response).await["result"]["content"][0]["text"],
        "a"
    );
    assert_eq!(
        listed_text(server.call(&list).await),
        json!({"type": "string", "description": "The text to send back"})
    );

    // Unmarked, the call needs no header; mark true puts the annotation back.
    let mark = call(3, json!({"text": "b", "mark": true}));
    let response = server.post_with(&mark, &mcp_headers(&mark)).await;
    assert_eq!(
        body_json(response).await["result"]["content"][0]["text"],
        "b"
    );
    assert_eq!(listed_text(server.call(&list).await), marked);
}
