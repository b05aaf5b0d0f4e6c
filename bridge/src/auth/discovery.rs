//! Where to sign in: the protected resource metadata of the upstream (RFC 9728),
//! then the metadata of its authorization server (RFC 8414, OpenID Connect
//! Discovery), in the order of the 2026-07-28 authorization pages.

use super::challenge::Challenge;
use super::errors::SignInError;
use super::http::{HttpError, get_json};
use super::sign_in_url::{self, RefusedUrl, Role};
use serde::Deserialize;
use url::Url;

/// The protected resource metadata that the sign-in needs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ProtectedResource {
    pub resource: String,
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// The authorization server metadata that the sign-in needs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AuthorizationServer {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

/// The URLs of the protected resource metadata, in the order to try: the
/// challenge's `resource_metadata`, which must pass the rule of
/// [`sign_in_url`] (that document chooses the authorization server), else the
/// well-known URI at the path of the endpoint, then at the root.
pub fn resource_metadata_urls(
    server_url: &Url,
    challenge: &Challenge,
) -> Result<Vec<Url>, RefusedUrl> {
    if let Some(text) = challenge.resource_metadata.as_deref() {
        return sign_in_url::check(text, Role::ResourceMetadata, server_url).map(|url| vec![url]);
    }
    Ok(well_known(server_url, "oauth-protected-resource"))
}

/// `<origin>/.well-known/<suffix><path>` (when the path is not `/`), then
/// `<origin>/.well-known/<suffix>`.
fn well_known(base: &Url, suffix: &str) -> Vec<Url> {
    let path = base.path().trim_end_matches('/');
    let mut urls = Vec::new();
    let mut at = |path: &str| {
        let mut url = base.clone();
        url.set_query(None);
        url.set_fragment(None);
        url.set_path(path);
        urls.push(url);
    };
    if !path.is_empty() {
        at(&format!("/.well-known/{suffix}{path}"));
    }
    at(&format!("/.well-known/{suffix}"));
    urls
}

/// The URLs of the authorization server metadata of `issuer`, in the order of
/// "Authorization Server Metadata Discovery": with a path, OAuth then OpenID
/// Connect with the path inserted, then OpenID Connect with the path appended;
/// without a path, OAuth then OpenID Connect.
pub fn authorization_server_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |path: String| {
        let mut url = issuer.clone();
        url.set_query(None);
        url.set_fragment(None);
        url.set_path(&path);
        url
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// Whether the `resource` of the metadata covers the URL of the upstream: the
/// same scheme, host and port, and a path that is the URL's path or a parent of
/// it on a segment boundary (RFC 9728 §3.3, RFC 8707 §2). A resource with a query
/// covers only the same URL. The sign-in and `logout` use this one rule.
pub fn resource_covers(resource: &str, server_url: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.scheme() != server_url.scheme()
        || resource.host_str().map(str::to_ascii_lowercase)
            != server_url.host_str().map(str::to_ascii_lowercase)
        || resource.port_or_known_default() != server_url.port_or_known_default()
        || resource.fragment().is_some()
    {
        return false;
    }
    if resource.query().is_some() {
        return resource.path() == server_url.path() && resource.query() == server_url.query();
    }
    let covering = resource.path().trim_end_matches('/');
    let path = server_url.path();
    covering.is_empty()
        || path == covering
        || path
            .strip_prefix(covering)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The protected resource metadata of the upstream at `server_url`.
pub async fn protected_resource(
    client: &reqwest::Client,
    server_url: &Url,
    challenge: &Challenge,
) -> Result<ProtectedResource, SignInError> {
    protected_resource_found_at(client, server_url, challenge)
        .await
        .map(|(metadata, _)| metadata)
}

/// [`protected_resource`], with the URL where it was found (`doctor` tells it).
pub async fn protected_resource_found_at(
    client: &reqwest::Client,
    server_url: &Url,
    challenge: &Challenge,
) -> Result<(ProtectedResource, Url), SignInError> {
    let urls = resource_metadata_urls(server_url, challenge)
        .map_err(|refused| SignInError::Discovery(refused.to_string()))?;
    let mut last = None;
    for url in urls {
        match get_json::<ProtectedResource>(client, &url).await {
            Ok(metadata) => {
                if !resource_covers(&metadata.resource, server_url) {
                    return Err(SignInError::Discovery(format!(
                        "the resource {} of the protected resource metadata does not cover the URL of the upstream server",
                        metadata.resource
                    )));
                }
                if metadata.authorization_servers.is_empty() {
                    return Err(SignInError::Discovery(
                        "the protected resource metadata names no authorization server".into(),
                    ));
                }
                return Ok((metadata, url));
            }
            Err(error) => last = Some(error),
        }
    }
    Err(SignInError::Discovery(format!(
        "no protected resource metadata: {}",
        last.map_or_else(|| "no URL to ask".to_owned(), |e| e.to_string())
    )))
}

/// The metadata of the authorization server `issuer` of the upstream server at
/// `server_url`: the issuer passes the rule of [`sign_in_url`], the metadata's
/// `issuer` is the one the URL was made from (RFC 8414 §3.3), with PKCE S256.
pub async fn authorization_server(
    client: &reqwest::Client,
    issuer: &str,
    server_url: &Url,
) -> Result<AuthorizationServer, SignInError> {
    let issuer_url = sign_in_url::check(issuer, Role::AuthorizationServer, server_url)
        .map_err(|refused| SignInError::Discovery(refused.to_string()))?;
    let mut last: Option<HttpError> = None;
    for url in authorization_server_urls(&issuer_url) {
        match get_json::<AuthorizationServer>(client, &url).await {
            Ok(metadata) => {
                if metadata.issuer != issuer {
                    return Err(SignInError::Discovery(format!(
                        "the metadata of the authorization server {issuer} names the issuer {}",
                        metadata.issuer
                    )));
                }
                let s256 = metadata
                    .code_challenge_methods_supported
                    .as_ref()
                    .is_some_and(|methods| methods.iter().any(|m| m == "S256"));
                if !s256 {
                    return Err(SignInError::Discovery(format!(
                        "the authorization server {issuer} does not support PKCE with S256"
                    )));
                }
                return Ok(metadata);
            }
            Err(error) => last = Some(error),
        }
    }
    Err(SignInError::Discovery(format!(
        "no metadata of the authorization server {issuer}: {}",
        last.map_or_else(|| "no URL to ask".to_owned(), |e| e.to_string())
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn the_resource_metadata_comes_from_the_challenge_else_the_well_known_uris() {
        let server = url("https://mcp.example.com/public/mcp?x=1");
        let challenge = Challenge {
            resource_metadata: Some("https://mcp.example.com/prm".into()),
            ..Challenge::default()
        };
        assert_eq!(
            resource_metadata_urls(&server, &challenge),
            Ok(vec![url("https://mcp.example.com/prm")])
        );
        assert_eq!(
            resource_metadata_urls(&server, &Challenge::default()),
            Ok(vec![
                url("https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp"),
                url("https://mcp.example.com/.well-known/oauth-protected-resource"),
            ])
        );
        assert_eq!(
            resource_metadata_urls(&url("https://mcp.example.com/"), &Challenge::default()),
            Ok(vec![url(
                "https://mcp.example.com/.well-known/oauth-protected-resource"
            )])
        );
    }

    #[test]
    fn a_resource_metadata_url_that_breaks_the_rule_is_refused_not_replaced() {
        let server = url("https://mcp.example.com/mcp");
        for (text, detail) in [
            (
                "javascript:x",
                "the resource_metadata of the challenge (javascript:) does not use https",
            ),
            (
                "http://mcp.example.com/prm",
                "the resource_metadata of the challenge (http://mcp.example.com) does not use https",
            ),
            (
                "https://127.0.0.1:8/prm",
                "the resource_metadata of the challenge (https://127.0.0.1:8) is on a loopback host, but the upstream server is not",
            ),
        ] {
            let challenge = Challenge {
                resource_metadata: Some(text.into()),
                ..Challenge::default()
            };
            assert_eq!(
                resource_metadata_urls(&server, &challenge).map_err(|e| e.to_string()),
                Err(detail.to_owned()),
                "{text}"
            );
        }
    }

    #[test]
    fn the_authorization_server_metadata_urls_follow_the_order_of_the_revision() {
        assert_eq!(
            authorization_server_urls(&url("https://auth.example.com/tenant1")),
            vec![
                url("https://auth.example.com/.well-known/oauth-authorization-server/tenant1"),
                url("https://auth.example.com/.well-known/openid-configuration/tenant1"),
                url("https://auth.example.com/tenant1/.well-known/openid-configuration"),
            ]
        );
        assert_eq!(
            authorization_server_urls(&url("https://auth.example.com")),
            vec![
                url("https://auth.example.com/.well-known/oauth-authorization-server"),
                url("https://auth.example.com/.well-known/openid-configuration"),
            ]
        );
    }

    #[test]
    fn a_resource_covers_its_url_and_the_urls_below_it_only() {
        let server = url("https://mcp.example.com/server/mcp");
        for covering in [
            "https://mcp.example.com/server/mcp",
            "https://mcp.example.com/server",
            "https://mcp.example.com/server/",
            "https://MCP.example.com",
            "https://mcp.example.com:443/",
        ] {
            assert!(resource_covers(covering, &server), "{covering}");
        }
        for other in [
            "https://mcp.example.com/serv",
            "https://mcp.example.com/server/mcp/deeper",
            "https://other.example.com/server/mcp",
            "http://mcp.example.com/server/mcp",
            "https://mcp.example.com:8443/server/mcp",
            "https://mcp.example.com/server/mcp#x",
            "not a url",
        ] {
            assert!(!resource_covers(other, &server), "{other}");
        }
    }
}
