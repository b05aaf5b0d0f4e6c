//! The protected resource: the 401 challenge, the metadata documents, and the 403
//! step-up of `guarded`.

use hyper::StatusCode;
use serde_json::json;

use super::super::client::{Server, body_json, header};
use super::*;

#[tokio::test]
async fn a_post_without_a_token_gets_the_challenge_of_the_metadata() {
    let server = Server::start(&["--https", "--auth"]).await;
    let origin = issuer(&server);
    let response = call_with_token(&server, None, "echo", json!({"text": "x"})).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        header(&response, "www-authenticate").unwrap(),
        format!(
            "Bearer resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:read\""
        )
    );
    assert_eq!(
        super::super::client::body_text(response).await,
        "Unauthorized: the request needs an access token of the authorization server.\n"
    );
    let response = call_with_token(&server, Some("not-a-token"), "echo", json!({})).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        header(&response, "www-authenticate").unwrap(),
        format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:read\""
        )
    );
    assert_eq!(
        body_json(response).await,
        json!({"error": "invalid_token", "error_description": "The access token is expired or unknown."})
    );
    let response = server.send("GET", &[], Vec::new()).await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(&response, "www-authenticate"), None);
    assert_eq!(
        get(&server, "/nothing/here").await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn challenge_without_scope_leaves_the_scope_to_the_metadata() {
    let server = Server::start(&["--https", "--auth", "--challenge-without-scope"]).await;
    let prm = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        issuer(&server)
    );
    let response = call_with_token(&server, None, "echo", json!({"text": "x"})).await;
    assert_eq!(
        header(&response, "www-authenticate").unwrap(),
        format!("Bearer resource_metadata=\"{prm}\"")
    );
    let response = call_with_token(&server, Some("not-a-token"), "echo", json!({})).await;
    assert_eq!(
        header(&response, "www-authenticate").unwrap(),
        format!("Bearer error=\"invalid_token\", resource_metadata=\"{prm}\"")
    );
    let metadata = body_json(get(&server, "/.well-known/oauth-protected-resource/mcp").await).await;
    assert_eq!(
        metadata["scopes_supported"],
        json!(["mcp:read", "mcp:write"])
    );
}

#[tokio::test]
async fn the_metadata_documents_name_the_resource_and_the_issuer() {
    let server = Server::start(&["--https", "--auth"]).await;
    let origin = issuer(&server);
    let prm = json!({
        "resource": server.url,
        "authorization_servers": [origin],
        "scopes_supported": ["mcp:read", "mcp:write"],
        "bearer_methods_supported": ["header"],
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = get(&server, path).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header(&response, "content-type"), Some("application/json"));
        assert_eq!(body_json(response).await, prm);
    }
    let metadata = json!({
        "issuer": origin,
        "authorization_endpoint": format!("{origin}/authorize"),
        "token_endpoint": format!("{origin}/token"),
        "scopes_supported": ["mcp:read", "mcp:write"],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": false,
        "registration_endpoint": format!("{origin}/register"),
    });
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        assert_eq!(body_json(get(&server, path).await).await, metadata);
    }
}

#[tokio::test]
async fn the_resource_switch_changes_the_metadata_but_not_the_audience() {
    let server = Server::start(&["--https", "--auth"]).await;
    let tokens = sign_in(&server, "mcp:read").await;
    let other = format!("{}/other", issuer(&server));
    let response = server
        .send_to(
            "/fixture/resource",
            "POST",
            &[],
            format!("{other}\n").into_bytes(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata = body_json(get(&server, path).await).await;
        assert_eq!(metadata["resource"], json!(other));
    }
    // A token issued for the MCP URL still opens it.
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(
        call_text(&server, access, "echo", json!({"text": "a"})).await,
        "a"
    );
    let refused = server
        .send_to("/fixture/resource", "POST", &[], b"/not-absolute".to_vec())
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let metadata = body_json(get(&server, "/.well-known/oauth-protected-resource/mcp").await).await;
    assert_eq!(metadata["resource"], json!(other));
    let wrong_method = get(&server, "/fixture/resource").await;
    assert_eq!(wrong_method.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn guarded_needs_mcp_write_and_answers_with_both_scopes() {
    let server = Server::start(&["--https", "--auth"]).await;
    let read = sign_in(&server, "mcp:read").await;
    let response =
        call_with_token(&server, read["access_token"].as_str(), "guarded", json!({})).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        header(&response, "www-authenticate").unwrap(),
        format!(
            "Bearer error=\"insufficient_scope\", error_description=\"The tool needs the scope mcp:write\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:read mcp:write\"",
            issuer(&server)
        )
    );
    assert_eq!(
        body_json(response).await,
        json!({"error": "insufficient_scope", "error_description": "The tool needs the scope mcp:write"})
    );
    // Other tools still work with mcp:read alone.
    let access = read["access_token"].as_str().unwrap();
    assert_eq!(
        call_text(&server, access, "echo", json!({"text": "r"})).await,
        "r"
    );
    let both = sign_in(&server, "mcp:read mcp:write").await;
    assert_eq!(both["scope"], "mcp:read mcp:write");
    assert_eq!(
        call_text(
            &server,
            both["access_token"].as_str().unwrap(),
            "guarded",
            json!({})
        )
        .await,
        "guarded: allowed"
    );
}
