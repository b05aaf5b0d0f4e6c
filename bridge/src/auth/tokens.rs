//! The token endpoint (RFC 6749 §4.1.3, §6): the code of a redirect, or a refresh
//! token, for an access token.

use super::client_id::Client;
use super::errors::SignInError;
use super::http::{HttpError, post_form};
use super::secret_string::SecretString;
use serde::Deserialize;
use std::fmt;
use url::Url;

/// A token response (RFC 6749 §5.1).
#[derive(Clone, Deserialize)]
pub struct TokenResponse {
    pub access_token: SecretString,
    #[serde(default)]
    pub token_type: Option<String>,
    #[serde(default)]
    pub expires_in: Option<u64>,
    #[serde(default)]
    pub refresh_token: Option<SecretString>,
    #[serde(default)]
    pub scope: Option<String>,
}

impl fmt::Debug for TokenResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenResponse")
            .field("access_token", &"[REDACTED]")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[REDACTED]"),
            )
            .field("scope", &self.scope)
            .finish()
    }
}

/// What a refresh gave: new tokens, or a refresh token that the server no
/// longer takes (`invalid_grant`: a new sign-in follows).
#[derive(Debug)]
pub enum Refreshed {
    Tokens(TokenResponse),
    Refused,
}

/// The code of the redirect for tokens, with the PKCE verifier and the resource.
pub async fn exchange_code(
    http: &reqwest::Client,
    token_endpoint: &Url,
    client: &Client,
    code: &str,
    redirect_uri: &str,
    verifier: &str,
    resource: &str,
) -> Result<TokenResponse, SignInError> {
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier),
        ("resource", resource),
    ];
    request(http, token_endpoint, client, &form)
        .await
        .map_err(|error| match error {
            HttpError::Status {
                error: Some(code), ..
            } => SignInError::AuthorizationError(format!(
                "the token endpoint answered the code with the error {code}"
            )),
            other => SignInError::Failed(format!("the token endpoint: {other}")),
        })
        .and_then(checked)
}

/// A refresh token for new tokens (RFC 6749 §6), with the resource (RFC 8707).
pub async fn refresh(
    http: &reqwest::Client,
    token_endpoint: &Url,
    client: &Client,
    refresh_token: &str,
    resource: &str,
) -> Result<Refreshed, SignInError> {
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("resource", resource),
    ];
    match request(http, token_endpoint, client, &form).await {
        Ok(tokens) => checked(tokens).map(Refreshed::Tokens),
        // A refresh token that is spent, or a client that the server forgot.
        Err(HttpError::Status {
            error: Some(code), ..
        }) if code == "invalid_grant" || code == "invalid_client" => Ok(Refreshed::Refused),
        Err(other) => Err(SignInError::Failed(format!(
            "the token endpoint refused the refresh: {other}"
        ))),
    }
}

/// One token request with the client's authentication: HTTP Basic for a client
/// with a secret (or in the form body when the server takes only that), else its
/// `client_id` in the form (a public client).
async fn request(
    http: &reqwest::Client,
    token_endpoint: &Url,
    client: &Client,
    form: &[(&str, &str)],
) -> Result<TokenResponse, HttpError> {
    let mut fields: Vec<(&str, &str)> = form.to_vec();
    let mut basic = None;
    match client.secret.as_ref().map(SecretString::expose) {
        Some(secret) if client.secret_in_body => {
            fields.push(("client_id", &client.id));
            fields.push(("client_secret", secret));
        }
        Some(secret) => basic = Some((client.id.as_str(), secret)),
        None => fields.push(("client_id", &client.id)),
    }
    post_form(http, token_endpoint, &fields, basic).await
}

/// A bearer token with something in it.
fn checked(tokens: TokenResponse) -> Result<TokenResponse, SignInError> {
    let bearer = tokens
        .token_type
        .as_deref()
        .is_none_or(|kind| kind.eq_ignore_ascii_case("bearer"));
    if tokens.access_token.is_empty() || !bearer {
        return Err(SignInError::Failed(
            "the token endpoint sent no bearer access token".into(),
        ));
    }
    Ok(tokens)
}
