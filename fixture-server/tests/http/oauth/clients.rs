//! Where clients come from: dynamic client registration, client ID metadata documents,
//! and a server that forgets its registered clients.

use hyper::StatusCode;
use serde_json::{Value, json};

use super::super::client::{Server, body_json, body_text};
use super::*;

async fn register(server: &Server, metadata: &Value) -> (StatusCode, Value) {
    let response = server
        .send_to(
            "/register",
            "POST",
            &[("content-type".into(), "application/json".into())],
            metadata.to_string().into_bytes(),
        )
        .await
        .unwrap();
    let status = response.status();
    (status, body_json(response).await)
}

async fn consent_page(server: &Server, client_id: &str) -> String {
    let (_, challenge) = pkce(client_id);
    let params = authorize_params(&server.url, client_id, &challenge, "mcp:read");
    let response = get(server, &format!("/authorize?{}", query(&params))).await;
    assert_eq!(response.status(), StatusCode::OK);
    body_text(response).await
}

#[tokio::test]
async fn a_registered_client_signs_in_under_its_name() {
    let server = Server::start(&["--https", "--auth"]).await;
    let (status, client) = register(
        &server,
        &json!({"redirect_uris": ["http://127.0.0.1/callback"], "client_name": "mcp-bridge-vscode (mcp-bridge-rs)"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let id = client["client_id"].as_str().unwrap();
    assert_eq!(id.len(), 43);
    assert!(client["client_id_issued_at"].as_u64().unwrap() > 1_700_000_000);
    assert_eq!(client["token_endpoint_auth_method"], "none");
    assert_eq!(
        client["redirect_uris"],
        json!(["http://127.0.0.1/callback"])
    );
    assert_eq!(
        client["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(client.get("client_secret"), None);
    let page = consent_page(&server, id).await;
    assert!(
        page.contains("<span id=\"client\">mcp-bridge-vscode (mcp-bridge-rs)</span>"),
        "{page}"
    );
    assert!(page.contains("<span id=\"scopes\">mcp:read</span>"));
    let (verifier, challenge) = pkce("dcr");
    let params = authorize(
        &server,
        &authorize_params(&server.url, id, &challenge, "mcp:read"),
    )
    .await;
    let (status, _) = token(
        &server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &params["code"]),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &verifier),
            ("client_id", id),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn bad_registration_metadata_gets_the_errors_of_rfc_7591() {
    let server = Server::start(&["--https", "--auth"]).await;
    for (metadata, error) in [
        (json!({}), "invalid_redirect_uri"),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": ["http://example.com/cb"]}),
            "invalid_redirect_uri",
        ),
        (json!({"redirect_uris": [7]}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "private_key_jwt"}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["http://127.0.0.1/cb"], "grant_types": ["password"]}),
            "invalid_client_metadata",
        ),
        (
            json!({"redirect_uris": ["http://127.0.0.1/cb"], "client_name": 5}),
            "invalid_client_metadata",
        ),
        (json!([1, 2]), "invalid_client_metadata"),
    ] {
        let (status, body) = register(&server, &metadata).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{metadata}");
        assert_eq!(body["error"], error, "{metadata}");
    }
    let (status, client) = register(
        &server,
        &json!({"redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "client_secret_post"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(client["client_secret"].as_str().unwrap().len(), 43);
}

#[tokio::test]
async fn no_registration_has_no_registration_endpoint() {
    let server = Server::start(&["--https", "--auth", "--no-registration"]).await;
    let metadata = body_json(get(&server, "/.well-known/oauth-authorization-server").await).await;
    assert_eq!(metadata.get("registration_endpoint"), None);
    let response = server
        .send_to(
            "/register",
            "POST",
            &[("content-type".into(), "application/json".into())],
            br#"{"redirect_uris": ["http://127.0.0.1/cb"]}"#.to_vec(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_server_that_forgets_its_clients_shows_a_page_and_refuses_the_refresh() {
    let server = Server::start(&["--https", "--auth"]).await;
    let metadata =
        json!({"redirect_uris": ["http://127.0.0.1/callback"], "client_name": "forgotten"});
    let (_, client) = register(&server, &metadata).await;
    let id = client["client_id"].as_str().unwrap();
    let (verifier, challenge) = pkce("forget");
    let params = authorize(
        &server,
        &authorize_params(&server.url, id, &challenge, "mcp:read"),
    )
    .await;
    let (_, tokens) = token(
        &server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &params["code"]),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &verifier),
            ("client_id", id),
        ],
    )
    .await;
    let response = server
        .send_to("/fixture/forget-clients", "POST", &[], Vec::new())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let (status, body) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", id),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client"))
    );
    let response = get(
        &server,
        &format!(
            "/authorize?{}",
            query(&authorize_params(&server.url, id, &challenge, "mcp:read"))
        ),
    )
    .await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(super::super::client::header(&response, "location"), None);
    // The pre-registered clients stay.
    sign_in(&server, "mcp:read").await;

    // --forget-clients: the first sign-in works, then the client is forgotten.
    let server = Server::start(&["--https", "--auth", "--forget-clients"]).await;
    let (status, client) = register(&server, &metadata).await;
    assert_eq!(status, StatusCode::CREATED);
    let id = client["client_id"].as_str().unwrap();
    let params = authorize(
        &server,
        &authorize_params(&server.url, id, &challenge, "mcp:read"),
    )
    .await;
    let (status, tokens) = token(
        &server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &params["code"]),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &verifier),
            ("client_id", id),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", id),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client"))
    );
    let params = authorize_params(&server.url, id, &challenge, "mcp:read");
    let response = get(&server, &format!("/authorize?{}", query(&params))).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(super::super::client::header(&response, "location"), None);
    assert!(body_text(response).await.contains("the server forgot it"));
}

#[tokio::test]
async fn a_client_id_metadata_document_is_fetched_over_https() {
    let server = Server::start(&["--https", "--auth", "--cimd"]).await;
    let origin = issuer(&server);
    let metadata = body_json(get(&server, "/.well-known/oauth-authorization-server").await).await;
    assert_eq!(metadata["client_id_metadata_document_supported"], true);
    let document = body_json(get(&server, "/fixture/client.json").await).await;
    let id = format!("{origin}/fixture/client.json");
    assert_eq!(
        document,
        json!({
            "client_id": id,
            "client_name": "bridge-fixture metadata client",
            "redirect_uris": ["http://127.0.0.1/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        })
    );
    let page = consent_page(&server, &id).await;
    assert!(page.contains("<span id=\"client\">bridge-fixture metadata client</span>"));
    let (verifier, challenge) = pkce("cimd");
    let params = authorize(
        &server,
        &authorize_params(&server.url, &id, &challenge, "mcp:read"),
    )
    .await;
    let (status, tokens) = token(
        &server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &params["code"]),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &verifier),
            ("client_id", &id),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        call_text(
            &server,
            tokens["access_token"].as_str().unwrap(),
            "echo",
            json!({"text": "d"})
        )
        .await,
        "d"
    );
    // With ?port=N the document lists that port only, and its client_id has the query.
    let with_port = format!("{origin}/fixture/client.json?port=41894");
    let document = body_json(get(&server, "/fixture/client.json?port=41894").await).await;
    assert_eq!(document["client_id"], with_port);
    assert_eq!(document["redirect_uris"], json!([REDIRECT]));
    consent_page(&server, &with_port).await;
    let mut params = authorize_params(&server.url, &with_port, &challenge, "mcp:read");
    params[2] = ("redirect_uri", "https://app.example/cb");
    let response = get(&server, &format!("/authorize?{}", query(&params))).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(
        body_text(response)
            .await
            .contains("the document does not list the redirect_uri")
    );
    let missing = format!("{origin}/fixture/none.json");
    let params = authorize_params(&server.url, &missing, &challenge, "mcp:read");
    let response = get(&server, &format!("/authorize?{}", query(&params))).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(
        body_text(response)
            .await
            .contains("the fetch got the status 404")
    );
}

#[tokio::test]
async fn a_document_of_another_server_needs_its_ca_in_auth_ca_file() {
    let other = Server::start(&["--https", "--auth"]).await;
    let id = format!("{}/fixture/client.json", issuer(&other));
    let other_ca = other.ca_file.as_ref().unwrap().to_str().unwrap().to_owned();
    let (_, challenge) = pkce("other");
    let untrusting = Server::start(&["--https", "--auth", "--cimd"]).await;
    let params = authorize_params(&untrusting.url, &id, &challenge, "mcp:read");
    let response = get(&untrusting, &format!("/authorize?{}", query(&params))).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let page = body_text(response).await;
    assert!(
        page.contains("is not usable: the fetch failed: the TLS handshake with 127.0.0.1:"),
        "{page}"
    );
    let trusting =
        Server::start(&["--https", "--auth", "--cimd", "--auth-ca-file", &other_ca]).await;
    let page = consent_page(&trusting, &id).await;
    assert!(page.contains("<span id=\"client\">bridge-fixture metadata client</span>"));
}
