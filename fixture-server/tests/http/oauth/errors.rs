//! The errors of `/authorize`: a redirect with the RFC 6749 error and the state when
//! the redirect URI is good, an HTML page without a redirect when it is not.

use hyper::StatusCode;

use super::super::client::{Server, body_text, header};
use super::*;

async fn error_page(server: &Server, params: &[(&str, &str)]) -> String {
    let response = get(server, &format!("/authorize?{}", query(params))).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(header(&response, "location"), None);
    assert_eq!(
        header(&response, "content-type"),
        Some("text/html; charset=utf-8")
    );
    body_text(response).await
}

#[tokio::test]
async fn an_unknown_client_or_a_foreign_redirect_uri_gets_a_page_without_a_redirect() {
    let server = Server::start(&["--https", "--auth"]).await;
    let (_, challenge) = pkce("page");
    let mut params = authorize_params(&server.url, "nobody", &challenge, "mcp:read");
    let page = error_page(&server, &params).await;
    assert!(
        page.contains("The client nobody is not known to this authorization server."),
        "{page}"
    );
    params[1] = ("client_id", PUBLIC);
    for foreign in [
        "https://evil.example/callback",
        "http://127.0.0.1:41894/other",
        "http://localhost:41894/callback",
    ] {
        params[2] = ("redirect_uri", foreign);
        let page = error_page(&server, &params).await;
        assert!(page.contains("The redirect_uri is not one that the client registered."));
    }
}

#[tokio::test]
async fn bad_parameters_redirect_with_the_error_and_the_state() {
    let server = Server::start(&["--https", "--auth"]).await;
    let origin = issuer(&server);
    let (_, challenge) = pkce("errors");
    let good = authorize_params(&server.url, PUBLIC, &challenge, "mcp:read");
    let change = |name: &'static str, value: &'static str| {
        let mut params = good.clone();
        params.retain(|(key, _)| *key != name);
        if !value.is_empty() {
            params.push((name, value));
        }
        params
    };
    for (params, error) in [
        (change("scope", "mcp:read mcp:admin"), "invalid_scope"),
        (change("code_challenge_method", "plain"), "invalid_request"),
        (change("code_challenge_method", ""), "invalid_request"),
        (change("code_challenge", ""), "invalid_request"),
        (
            change("response_type", "token"),
            "unsupported_response_type",
        ),
        (
            change("resource", "https://other.example/mcp"),
            "invalid_target",
        ),
    ] {
        let response = get(&server, &format!("/authorize?{}", query(&params))).await;
        let (base, redirect) = location_params(&response);
        assert_eq!(base, REDIRECT);
        assert_eq!(redirect["error"], error, "{params:?}");
        assert_eq!(redirect["state"], STATE);
        assert_eq!(redirect["iss"], origin);
        assert_eq!(redirect.get("code"), None);
    }
    let response = get(
        &server,
        &format!("/authorize?{}", query(&change("state", ""))),
    )
    .await;
    let (_, redirect) = location_params(&response);
    assert_eq!(redirect["error"], "invalid_request");
    assert_eq!(redirect.get("state"), None);
}

#[tokio::test]
async fn deny_redirects_with_access_denied() {
    let server = Server::start(&["--https", "--auth", "--deny"]).await;
    let (_, challenge) = pkce("deny");
    let params = authorize(
        &server,
        &authorize_params(&server.url, PUBLIC, &challenge, "mcp:read"),
    )
    .await;
    assert_eq!(params["error"], "access_denied");
    assert_eq!(params["state"], STATE);
    assert_eq!(params.get("code"), None);
}

#[tokio::test]
async fn the_token_endpoint_answers_bad_input_with_json_errors() {
    let server = Server::start(&["--https", "--auth"]).await;
    let (status, body) = token(&server, &[("client_id", PUBLIC)]).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );
    let (status, body) = token(
        &server,
        &[("grant_type", "password"), ("client_id", PUBLIC)],
    )
    .await;
    assert_eq!(body["error"], "unsupported_grant_type");
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = token(
        &server,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", PUBLIC),
            ("code", "x"),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );
    let (status, body) = token(&server, &[("grant_type", "refresh_token")]).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client"))
    );
    let response = server
        .send_to(
            "/token",
            "POST",
            &[("content-type".into(), "application/json".into())],
            b"{}".to_vec(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let response = get(&server, "/token").await;
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    let response = get(&server, "/authorize/approve?request=forged").await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(header(&response, "location"), None);
}

#[tokio::test]
async fn an_authorize_request_without_the_query_of_the_endpoint_gets_a_page() {
    let server =
        Server::start(&["--https", "--auth", "--authorization-query", "tenant=blue"]).await;
    let (_, challenge) = pkce("tenant");
    let mut params = authorize_params(&server.url, PUBLIC, &challenge, "mcp:read");
    let page = error_page(&server, &params).await;
    assert!(
        page.contains("The request lost the parameter tenant of the authorization endpoint."),
        "{page}"
    );
    params.push(("tenant", "green"));
    let page = error_page(&server, &params).await;
    assert!(page.contains("parameter tenant"), "{page}");
}
