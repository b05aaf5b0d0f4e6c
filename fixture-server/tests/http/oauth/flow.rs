//! The authorization code flow with PKCE, the token endpoint, refresh and expiry.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hyper::StatusCode;
use serde_json::{Value, json};

use super::super::client::{Server, header};
use super::*;

fn code_form<'a>(code: &'a str, verifier: &'a str, client: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", REDIRECT),
        ("code_verifier", verifier),
        ("client_id", client),
    ]
}

#[tokio::test]
async fn the_code_flow_with_pkce_gives_a_token_that_calls_a_tool() {
    let server = Server::start(&["--https", "--auth"]).await;
    let (verifier, challenge) = pkce("flow");
    let params = authorize(
        &server,
        &authorize_params(&server.url, PUBLIC, &challenge, "mcp:read"),
    )
    .await;
    assert_eq!(params["state"], STATE);
    assert_eq!(params["iss"], issuer(&server));
    assert_eq!(params["code"].len(), 43);
    let (status, body) = token(&server, &code_form(&params["code"], &verifier, PUBLIC)).await;
    assert_eq!(status, StatusCode::OK);
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "access_token",
            "token_type",
            "expires_in",
            "refresh_token",
            "scope"
        ]
    );
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 900);
    assert_eq!(body["scope"], "mcp:read");
    let access = body["access_token"].as_str().unwrap();
    assert_eq!(
        call_text(&server, access, "add", json!({"a": 2, "b": 40})).await,
        "42"
    );
}

#[tokio::test]
async fn a_refresh_rotates_the_refresh_token_and_may_narrow_the_scope() {
    let server = Server::start(&["--https", "--auth", "--token-lifetime", "60"]).await;
    let first = sign_in(&server, "mcp:read mcp:write").await;
    assert_eq!(first["expires_in"], 60);
    let old = first["refresh_token"].as_str().unwrap();
    let (status, second) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", old),
            ("client_id", PUBLIC),
            ("scope", "mcp:read"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(second["scope"], "mcp:read");
    let new = second["refresh_token"].as_str().unwrap();
    assert_ne!(new, old);
    assert_ne!(second["access_token"], first["access_token"]);
    let (status, body) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", old),
            ("client_id", PUBLIC),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_grant");
    // The grant keeps both scopes: the new refresh token gives them back.
    let (status, third) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", new),
            ("client_id", PUBLIC),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(third["scope"], "mcp:read mcp:write");
    let (status, body) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", third["refresh_token"].as_str().unwrap()),
            ("client_id", PUBLIC),
            ("scope", "mcp:admin"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_scope");
}

#[tokio::test]
async fn a_replayed_code_gets_invalid_grant_and_revokes_its_tokens() {
    let server = Server::start(&["--https", "--auth"]).await;
    let (verifier, challenge) = pkce("replay");
    let params = authorize(
        &server,
        &authorize_params(&server.url, PUBLIC, &challenge, "mcp:read"),
    )
    .await;
    let form = code_form(&params["code"], &verifier, PUBLIC);
    let (status, first) = token(&server, &form).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = token(&server, &form).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        json!({"error": "invalid_grant", "error_description": "The code was already used: the tokens issued for it are revoked."})
    );
    let response = call_with_token(
        &server,
        first["access_token"].as_str(),
        "echo",
        json!({"text": "x"}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let (status, body) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", first["refresh_token"].as_str().unwrap()),
            ("client_id", PUBLIC),
        ],
    )
    .await;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::BAD_REQUEST, &json!("invalid_grant"))
    );
}

#[tokio::test]
async fn a_wrong_verifier_or_redirect_uri_gets_invalid_grant() {
    let server = Server::start(&["--https", "--auth"]).await;
    let (_, challenge) = pkce("right");
    let (wrong, _) = pkce("wrong");
    let params = authorize(
        &server,
        &authorize_params(&server.url, PUBLIC, &challenge, "mcp:read"),
    )
    .await;
    let (status, body) = token(&server, &code_form(&params["code"], &wrong, PUBLIC)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        json!({"error": "invalid_grant", "error_description": "The code_verifier does not match the code_challenge."})
    );
    let (verifier, challenge) = pkce("other");
    let params = authorize(
        &server,
        &authorize_params(&server.url, PUBLIC, &challenge, "mcp:read"),
    )
    .await;
    let mut form = code_form(&params["code"], &verifier, PUBLIC);
    form[2] = ("redirect_uri", "http://127.0.0.1:41895/callback");
    let (status, body) = token(&server, &form).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error_description"],
        "The redirect_uri differs from the one of the authorization request."
    );
}

/// How the confidential client sends its secret to the token endpoint.
#[derive(Clone, Copy, Debug)]
enum SecretIn {
    Basic,
    Post,
}

/// A sign-in of the confidential client up to its code exchange, the secret sent
/// as `how` says: the token endpoint's answer.
async fn confidential_code_exchange(server: &Server, how: SecretIn) -> (StatusCode, Value) {
    let (verifier, challenge) = pkce(&format!("{how:?}"));
    let params = authorize(
        server,
        &authorize_params(&server.url, CONFIDENTIAL, &challenge, "mcp:read"),
    )
    .await;
    let mut form = code_form(&params["code"], &verifier, CONFIDENTIAL);
    let mut headers = Vec::new();
    match how {
        SecretIn::Basic => headers.push((
            "authorization".to_owned(),
            format!(
                "Basic {}",
                STANDARD.encode(format!("{CONFIDENTIAL}:{SECRET}"))
            ),
        )),
        SecretIn::Post => form.push(("client_secret", SECRET)),
    }
    token_with(server, &form, &headers).await
}

#[tokio::test]
async fn the_confidential_client_authenticates_with_basic_or_post() {
    let server = Server::start(&["--https", "--auth"]).await;
    let wrong = format!("Basic {}", STANDARD.encode(format!("{CONFIDENTIAL}:nope")));
    for (how, method) in [(SecretIn::Basic, "basic"), (SecretIn::Post, "post")] {
        let (status, body) = confidential_code_exchange(&server, how).await;
        assert_eq!(status, StatusCode::OK, "{method}: {body}");
        assert_eq!(
            call_text(
                &server,
                body["access_token"].as_str().unwrap(),
                "echo",
                json!({"text": method})
            )
            .await,
            method
        );
    }
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", "whatever"),
    ];
    let response = server
        .send_to(
            "/token",
            "POST",
            &[
                (
                    "content-type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
                ("authorization".into(), wrong),
            ],
            query(&form).into_bytes(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        header(&response, "www-authenticate"),
        Some("Basic realm=\"bridge-fixture-server\"")
    );
    assert_eq!(
        super::super::client::body_json(response).await,
        json!({"error": "invalid_client", "error_description": "The client authentication failed."})
    );
    let (status, body) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", "whatever"),
            ("client_id", CONFIDENTIAL),
            ("client_secret", "nope"),
        ],
    )
    .await;
    assert_eq!(
        (status, &body["error"]),
        (StatusCode::UNAUTHORIZED, &json!("invalid_client"))
    );
    let (status, _) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", "x"),
            ("client_id", CONFIDENTIAL),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn expired_tokens_get_401_and_a_refresh_gives_a_working_one() {
    let server = Server::start(&["--https", "--auth"]).await;
    let tokens = sign_in(&server, "mcp:read").await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        call_text(&server, access, "echo", json!({"text": "a"})).await,
        "a"
    );
    let response = server
        .send_to("/fixture/expire-tokens", "POST", &[], Vec::new())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let response = call_with_token(&server, Some(access), "echo", json!({"text": "b"})).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        header(&response, "www-authenticate").unwrap(),
        format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:read\"",
            issuer(&server)
        )
    );
    let (status, fresh) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", PUBLIC),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        call_text(
            &server,
            fresh["access_token"].as_str().unwrap(),
            "echo",
            json!({"text": "c"})
        )
        .await,
        "c"
    );
}

#[tokio::test]
async fn without_refresh_tokens_or_with_a_refresh_error_no_refresh_works() {
    let server = Server::start(&["--https", "--auth", "--no-refresh-tokens"]).await;
    let tokens = sign_in(&server, "mcp:read").await;
    assert_eq!(tokens.get("refresh_token"), None::<&Value>);
    for (option, error) in [
        (vec!["--invalid-grant"], "invalid_grant"),
        (vec!["--refresh-error", "invalid_scope"], "invalid_scope"),
    ] {
        let args: Vec<&str> = ["--https", "--auth"].into_iter().chain(option).collect();
        let server = Server::start(&args).await;
        let tokens = sign_in(&server, "mcp:read").await;
        let (status, body) = token(
            &server,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
                ("client_id", PUBLIC),
            ],
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["error"], error);
    }
}

#[tokio::test]
async fn client_secret_post_only_refuses_basic_and_says_so_in_its_metadata() {
    let server = Server::start(&["--https", "--auth", "--client-secret-post-only"]).await;
    let metadata = super::super::client::body_json(
        get(&server, "/.well-known/oauth-authorization-server").await,
    )
    .await;
    assert_eq!(
        metadata["token_endpoint_auth_methods_supported"],
        json!(["client_secret_post"])
    );
    let (status, body) = confidential_code_exchange(&server, SecretIn::Basic).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client")),
        "{body}"
    );
    let (status, body) = confidential_code_exchange(&server, SecretIn::Post).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A code redirect without `iss`, and whether the metadata announces `iss`.
async fn redirect_without_iss(args: &[&str]) -> bool {
    let server = Server::start(args).await;
    let (_, challenge) = pkce("no-iss");
    let params = authorize(
        &server,
        &authorize_params(&server.url, PUBLIC, &challenge, "mcp:read"),
    )
    .await;
    assert_eq!(params.get("iss"), None);
    assert!(params.contains_key("code"));
    let metadata = super::super::client::body_json(
        get(&server, "/.well-known/oauth-authorization-server").await,
    )
    .await;
    metadata["authorization_response_iss_parameter_supported"] == true
}

#[tokio::test]
async fn no_iss_leaves_the_iss_out_of_the_redirect_and_the_metadata_says_so() {
    assert!(!redirect_without_iss(&["--https", "--auth", "--no-iss"]).await);
}

#[tokio::test]
async fn hostile_redirect_no_iss_leaves_out_the_iss_that_the_metadata_announces() {
    let args = ["--https", "--auth", "--hostile-redirect", "no-iss"];
    assert!(redirect_without_iss(&args).await);
}

#[tokio::test]
async fn the_plain_http_mode_serves_the_same_flow() {
    let server = Server::start(&["--http", "--auth"]).await;
    assert!(server.url.starts_with("http://127.0.0.1:"));
    let tokens = sign_in(&server, "mcp:read").await;
    assert_eq!(
        call_text(
            &server,
            tokens["access_token"].as_str().unwrap(),
            "echo",
            json!({"text": "h"})
        )
        .await,
        "h"
    );
}
