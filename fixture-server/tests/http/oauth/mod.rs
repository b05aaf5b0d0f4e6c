//! `--auth`: the authorization server of the fixture and its protected resource, driven
//! over real TLS by the test client, as a sign-in client would.

mod browse;
mod clients;
mod errors;
mod flow;
mod resource;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hyper::StatusCode;
use hyper::body::Incoming;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use url::Url;

use super::client::{Server, body_json, body_text, header, mcp_headers, request};

pub const PUBLIC: &str = "bridge-fixture-public";
pub const CONFIDENTIAL: &str = "bridge-fixture-confidential";
pub const SECRET: &str = "bridge-fixture-secret-0123456789";
pub const REDIRECT: &str = "http://127.0.0.1:41894/callback";
pub const STATE: &str = "the-state-0123456789";

/// A PKCE pair: a verifier of 43 characters and its S256 challenge.
pub fn pkce(seed: &str) -> (String, String) {
    let verifier = URL_SAFE_NO_PAD.encode(Sha256::digest(seed));
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(&verifier));
    (verifier, challenge)
}

/// The origin of the server (its issuer).
pub fn issuer(server: &Server) -> String {
    server.url.trim_end_matches("/mcp").to_owned()
}

/// A query string of pairs.
pub fn query(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// The parameters of an authorization request of `client_id` for `scope`.
pub fn authorize_params<'a>(
    server_url: &'a str,
    client_id: &'a str,
    challenge: &'a str,
    scope: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", STATE),
        ("resource", server_url),
        ("scope", scope),
    ]
}

pub async fn get(server: &Server, path: &str) -> hyper::Response<Incoming> {
    server.send_to(path, "GET", &[], Vec::new()).await.unwrap()
}

/// The query parameters of the `Location` of a 302.
pub fn location_params(response: &hyper::Response<Incoming>) -> (String, HashMap<String, String>) {
    assert_eq!(response.status(), StatusCode::FOUND);
    let location = Url::parse(header(response, "location").expect("a Location")).unwrap();
    let params = location.query_pairs().into_owned().collect();
    let mut base = location.clone();
    base.set_query(None);
    (base.to_string(), params)
}

/// GETs the authorization URL, checks the consent page, follows its meta refresh;
/// returns the redirect's parameters.
pub async fn authorize(server: &Server, params: &[(&str, &str)]) -> HashMap<String, String> {
    let page = get(server, &format!("/authorize?{}", query(params))).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(
        header(&page, "content-type"),
        Some("text/html; charset=utf-8")
    );
    let page = body_text(page).await;
    let approve = bridge_fixture_server::browse::meta_refresh(&page).expect("a meta refresh");
    let approve = Url::parse(&approve).unwrap();
    assert_eq!(approve.origin().ascii_serialization(), issuer(server));
    let path = format!("{}?{}", approve.path(), approve.query().unwrap());
    let (base, params) = location_params(&get(server, &path).await);
    assert_eq!(base, REDIRECT);
    params
}

/// POSTs a form to `/token` with extra headers; returns the status and the JSON.
pub async fn token_with(
    server: &Server,
    form: &[(&str, &str)],
    headers: &[(String, String)],
) -> (StatusCode, Value) {
    let mut all = vec![(
        "content-type".to_owned(),
        "application/x-www-form-urlencoded".to_owned(),
    )];
    all.extend_from_slice(headers);
    let response = server
        .send_to("/token", "POST", &all, query(form).into_bytes())
        .await
        .unwrap();
    let status = response.status();
    if status == StatusCode::OK {
        assert_eq!(header(&response, "cache-control"), Some("no-store"));
    }
    (status, body_json(response).await)
}

pub async fn token(server: &Server, form: &[(&str, &str)]) -> (StatusCode, Value) {
    token_with(server, form, &[]).await
}

/// A whole sign-in of the public client: the token response.
pub async fn sign_in(server: &Server, scope: &str) -> Value {
    let (verifier, challenge) = pkce(scope);
    let params = authorize(
        server,
        &authorize_params(&server.url, PUBLIC, &challenge, scope),
    )
    .await;
    let (status, body) = token(
        server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &params["code"]),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &verifier),
            ("client_id", PUBLIC),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// POSTs a `tools/call` with the bearer token; returns the response.
pub async fn call_with_token(
    server: &Server,
    token: Option<&str>,
    tool: &str,
    arguments: Value,
) -> hyper::Response<Incoming> {
    let frame = request(
        json!(1),
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        json!({}),
    );
    let mut headers = mcp_headers(&frame);
    if let Some(token) = token {
        headers.push(("authorization".into(), format!("Bearer {token}")));
    }
    server.post_with(&frame, &headers).await
}

/// The text of the first content block of a successful `tools/call`.
pub async fn call_text(server: &Server, token: &str, tool: &str, arguments: Value) -> String {
    let response = call_with_token(server, Some(token), tool, arguments).await;
    assert_eq!(response.status(), StatusCode::OK);
    let frame = body_json(response).await;
    frame["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {frame}"))
        .to_owned()
}
