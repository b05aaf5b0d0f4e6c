//! The documents of discovery: the protected resource metadata (RFC 9728) of `/mcp`,
//! the authorization server metadata (RFC 8414), and the `WWW-Authenticate` challenges
//! that point a client to them.

use serde_json::{Value, json};

use super::options::LoopbackRole;
use super::{AuthServer, READ, SCOPES, WRITE};

/// The path of the protected resource metadata of `/mcp` (RFC 9728 §3.1: the
/// well-known prefix before the resource's path).
pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The path of the protected resource metadata with `--prm-elsewhere`: no
/// well-known URL, so only the challenge's `resource_metadata` leads to it.
pub const PRM_ELSEWHERE_PATH: &str = "/metadata/mcp-resource";

/// The description of the step-up, in the challenge and in the body (study §1.5).
pub const STEP_UP_DESCRIPTION: &str = "The tool needs the scope mcp:write";

impl AuthServer {
    /// The URL of the protected resource metadata, at the origin of the resource.
    pub fn prm_url(&self) -> String {
        let path = if self.options.prm_elsewhere {
            PRM_ELSEWHERE_PATH
        } else {
            PRM_PATH
        };
        format!("{}{path}", self.resource_origin)
    }

    /// Whether `path` serves the protected resource metadata: the well-known
    /// paths, or with `--prm-elsewhere` only its own.
    pub fn serves_prm_at(&self, path: &str) -> bool {
        if self.options.prm_elsewhere {
            path == PRM_ELSEWHERE_PATH
        } else {
            is_prm_path(path)
        }
    }

    /// `url` on `127.0.0.1` when `--loopback-url` names `role`: this server by its
    /// address, which a client that reached it by a name must refuse.
    fn maybe_loopback(&self, role: LoopbackRole, url: String) -> String {
        if !self.options.loopback_urls.contains(&role) {
            return url;
        }
        let Ok(mut moved) = url::Url::parse(&url) else {
            return url;
        };
        if moved.set_host(Some("127.0.0.1")).is_err() {
            return url;
        }
        let text = moved.to_string();
        // An issuer names no path: no slash of the parser's at its end.
        if url.ends_with('/') {
            text
        } else {
            text.strip_suffix('/').map(str::to_owned).unwrap_or(text)
        }
    }

    /// The token endpoint of the metadata: with `--loopback-url
    /// refresh-token-endpoint`, on `127.0.0.1` once a code was redeemed.
    fn token_endpoint(&self) -> String {
        let endpoint = self.maybe_loopback(
            LoopbackRole::TokenEndpoint,
            format!("{}/token", self.issuer),
        );
        if self.secrets.code_exchanges() == 0 {
            return endpoint;
        }
        self.maybe_loopback(LoopbackRole::RefreshTokenEndpoint, endpoint)
    }

    /// The port of the issuer.
    pub fn port(&self) -> u16 {
        url::Url::parse(&self.issuer)
            .ok()
            .and_then(|url| url.port_or_known_default())
            .unwrap_or_default()
    }

    pub fn protected_resource_metadata(&self) -> Value {
        let authorization_server = self
            .options
            .prm_authorization_server
            .clone()
            .unwrap_or_else(|| {
                self.maybe_loopback(LoopbackRole::AuthorizationServer, self.issuer.clone())
            });
        let mut resource = self.resource.clone();
        if let Ok(mut url) = url::Url::parse(&self.resource) {
            let host = self.options.prm_resource_host.as_deref();
            let moved_host = host.is_some_and(|host| url.set_host(Some(host)).is_ok());
            let port = self.options.prm_resource_port;
            let moved_port = port.is_some_and(|port| url.set_port(Some(port)).is_ok());
            if moved_host || moved_port {
                resource = url.to_string();
            }
        }
        if let Some(switched) = self.resource_switch.get() {
            resource = switched;
        }
        json!({
            "resource": resource,
            "authorization_servers": [authorization_server],
            "scopes_supported": SCOPES,
            "bearer_methods_supported": ["header"],
        })
    }

    pub fn authorization_server_metadata(&self) -> Value {
        let issuer = &self.issuer;
        let authorization_endpoint = match self.options.hostile_endpoint {
            Some(hostile) => hostile.url(self.port()),
            None => match &self.options.authorization_query {
                Some(query) => format!("{issuer}/authorize?{query}"),
                None => format!("{issuer}/authorize"),
            },
        };
        let mut metadata = json!({
            "issuer": issuer,
            "authorization_endpoint": authorization_endpoint,
            "token_endpoint": self.token_endpoint(),
            "scopes_supported": SCOPES,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            // Post-only names that method alone, as a server for pre-registered
            // confidential clients does: a client that reads "not Basic" from any
            // other method listed would send the secret in the wrong place.
            "token_endpoint_auth_methods_supported": if self.options.client_secret_post_only {
                json!(["client_secret_post"])
            } else {
                json!(["none", "client_secret_basic", "client_secret_post"])
            },
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": self.options.iss,
            "client_id_metadata_document_supported": self.options.cimd,
        });
        if self.options.registration {
            metadata["registration_endpoint"] = json!(self.maybe_loopback(
                LoopbackRole::RegistrationEndpoint,
                format!("{issuer}/register")
            ));
        }
        match self.options.metadata_bytes {
            Some(bytes) => padded(metadata, bytes),
            None => metadata,
        }
    }

    /// The challenge of a POST without a usable token: `error` is `None` for a request
    /// without one, `invalid_token` for an expired or unknown one.
    pub fn challenge(&self, error: Option<&str>) -> String {
        let prm = self.maybe_loopback(LoopbackRole::ResourceMetadata, self.prm_url());
        let scope = if self.options.challenge_without_scope {
            String::new()
        } else {
            format!(", scope=\"{READ}\"")
        };
        // A description with an escaped quote first (RFC 9110 §5.6.4): a client
        // that does not unescape ends the string early and loses what follows.
        let description = if self.options.quoted_description {
            "error_description=\"Sign in at \\\"the\\\" authorization server\", "
        } else {
            ""
        };
        match error {
            Some(error) => {
                format!("Bearer {description}error=\"{error}\", resource_metadata=\"{prm}\"{scope}")
            }
            None => format!("Bearer {description}resource_metadata=\"{prm}\"{scope}"),
        }
    }

    /// The challenge of the step-up to `mcp:write` (RFC 6750 §3.1 `insufficient_scope`):
    /// the scopes the request needs, or with `--step-up-new-scope-only` the new one
    /// alone, which a client must add to those it has.
    pub fn step_up_challenge(&self) -> String {
        let scope = if self.options.step_up_new_scope_only {
            WRITE.to_owned()
        } else {
            format!("{READ} {WRITE}")
        };
        format!(
            "Bearer error=\"insufficient_scope\", error_description=\"{STEP_UP_DESCRIPTION}\", resource_metadata=\"{}\", scope=\"{scope}\"",
            self.prm_url()
        )
    }
}

/// `document` with a member `x_padding` of `x`s that makes its JSON text `bytes`
/// long (or the shortest such document when `bytes` is smaller).
fn padded(mut document: Value, bytes: usize) -> Value {
    document["x_padding"] = json!("");
    let empty = document.to_string().len();
    document["x_padding"] = json!("x".repeat(bytes.saturating_sub(empty)));
    document
}

/// Whether `path` is one of the paths of the protected resource metadata.
pub fn is_prm_path(path: &str) -> bool {
    path == PRM_PATH || path == "/.well-known/oauth-protected-resource"
}

#[cfg(test)]
mod prm_tests {
    use super::*;

    #[test]
    fn a_padded_document_has_the_asked_length_and_keeps_its_members() {
        let document = json!({"issuer": "https://127.0.0.1:1", "scopes_supported": SCOPES});
        for bytes in [1, 200, 1 << 20] {
            let padded = padded(document.clone(), bytes);
            assert_eq!(padded["issuer"], document["issuer"]);
            let length = padded.to_string().len();
            if bytes == 1 {
                assert!(padded["x_padding"].as_str().is_some_and(str::is_empty));
            } else {
                assert_eq!(length, bytes);
            }
        }
    }

    #[test]
    fn both_paths_of_the_protected_resource_metadata_are_known() {
        assert!(is_prm_path(PRM_PATH));
        assert!(is_prm_path("/.well-known/oauth-protected-resource"));
        assert!(!is_prm_path("/.well-known/oauth-authorization-server"));
    }
}
