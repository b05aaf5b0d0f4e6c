//! The client ID metadata document of the bridge, its default client ID
//! (contract, "Sign-in and accounts"): an authorization server that announces
//! `client_id_metadata_document_supported` fetches it from its stable URL and
//! knows the bridge without a registration.
//!
//! The repository holds it (`docs/site/vscode/client.json`), and the project's
//! pages publish `docs/site/` at `https://mcp-bridge-rs.github.io/mcp-bridge-rs/`.
//! It lists one redirect URI, that of the default redirect port: with another
//! `--redirect-port` it is not the bridge's client, and dynamic client
//! registration takes its place.

/// The stable https URL of the document, which is also its `client_id`.
pub const DOCUMENT_URL: &str = "https://mcp-bridge-rs.github.io/mcp-bridge-rs/vscode/client.json";

/// The one redirect port of the document's redirect URI.
pub const DOCUMENT_REDIRECT_PORT: u16 = 41894;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::client_id::CLIENT_NAME;
    use crate::auth::receiver::redirect_uri;
    use serde_json::{Value, json};

    /// The committed document, which the pages publish.
    const COMMITTED: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/site/vscode/client.json"
    ));

    #[test]
    fn the_committed_document_is_the_client_of_the_url_and_of_the_default_redirect_uri_only() {
        let document: Value = serde_json::from_str(COMMITTED).unwrap();
        assert_eq!(
            document,
            json!({
                "client_id": DOCUMENT_URL,
                "client_name": CLIENT_NAME,
                "redirect_uris": [redirect_uri(DOCUMENT_REDIRECT_PORT)],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "application_type": "native",
            })
        );
        assert_eq!(DOCUMENT_REDIRECT_PORT, crate::config::DEFAULT_REDIRECT_PORT);
        // The line of the other ports names it as the contract does.
        assert_eq!(DOCUMENT_REDIRECT_PORT, 41894);
    }
}
