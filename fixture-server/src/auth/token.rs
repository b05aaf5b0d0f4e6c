//! `POST /token` (RFC 6749 §3.2): the grants `authorization_code` (with the PKCE check
//! of RFC 7636 §4.6) and `refresh_token` (rotated at every use), the client
//! authentication `client_secret_basic`, `client_secret_post` or none (a public client
//! names itself with `client_id`).

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE};
use hyper::{HeaderMap, Request, Response, StatusCode};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::clients::{Client, Origin};
use super::grants::{CodeRefusal, Issued};
use super::respond::{self, invalid_client, oauth_error};
use super::secrets::Kind;
use super::{AuthServer, parse_scopes, random};
use crate::http_body::ResponseBody;

type Answer = Result<Response<ResponseBody>, Response<ResponseBody>>;

fn bad(error: &str, description: &str) -> Response<ResponseBody> {
    oauth_error(StatusCode::BAD_REQUEST, error, description)
}

impl AuthServer {
    pub(super) async fn token(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        match self.token_answer(request).await {
            Ok(answer) | Err(answer) => answer,
        }
    }

    async fn token_answer(&self, request: Request<Incoming>) -> Answer {
        let (parts, body) = request.into_parts();
        let form = parts
            .headers
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .is_some_and(|value| {
                value
                    .trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            });
        if !form {
            return Err(bad(
                "invalid_request",
                "The body must be application/x-www-form-urlencoded.",
            ));
        }
        let body = respond::body(body)
            .await
            .ok_or_else(|| bad("invalid_request", "The body is too large or unreadable."))?;
        let text = std::str::from_utf8(&body)
            .map_err(|_| bad("invalid_request", "The body is not UTF-8."))?;
        let params = respond::parameters(text)
            .map_err(|twice| bad("invalid_request", &twice.to_string()))?;
        let client = self.authenticate(&parts.headers, &params)?;
        if params
            .get("resource")
            .is_some_and(|resource| *resource != self.resource)
        {
            return Err(bad(
                "invalid_target",
                "The resource is not the MCP endpoint of this server.",
            ));
        }
        match params.get("grant_type").map(String::as_str) {
            Some("authorization_code") => self.code_grant(&client, &params),
            Some("refresh_token") => self.refresh_grant(&client, &params),
            None => Err(bad("invalid_request", "The request has no grant_type.")),
            Some(_) => Err(bad(
                "unsupported_grant_type",
                "The server supports the grants authorization_code and refresh_token.",
            )),
        }
    }

    /// The client of the request, authenticated when it is confidential.
    fn authenticate(
        &self,
        headers: &HeaderMap,
        params: &HashMap<String, String>,
    ) -> Result<Client, Response<ResponseBody>> {
        let basic = match headers.get(AUTHORIZATION) {
            Some(_) if self.options.client_secret_post_only => {
                crate::info!(
                    "auth",
                    "/token: HTTP Basic, which --client-secret-post-only refuses: invalid_client"
                );
                return Err(invalid_client(
                    "The server takes a client secret only in the form body (client_secret_post).",
                ));
            }
            Some(value) => Some(basic_credentials(value.as_bytes()).ok_or_else(|| {
                invalid_client("The Authorization header is not client_secret_basic.")
            })?),
            None => None,
        };
        let (id, secret) = match (basic, params.get("client_secret")) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "invalid_request",
                    "The client authenticates with more than one method.",
                ));
            }
            (Some((id, secret)), None) => {
                if params.get("client_id").is_some_and(|given| *given != id) {
                    return Err(bad(
                        "invalid_request",
                        "The client_id differs from the client of the Authorization header.",
                    ));
                }
                (id, Some(secret))
            }
            (None, secret) => {
                let id = params
                    .get("client_id")
                    .cloned()
                    .ok_or_else(|| invalid_client("The request names no client."))?;
                (id, secret.cloned())
            }
        };
        if let Some(secret) = &secret {
            self.secrets.keep(Kind::ClientSecret, secret);
        }
        let client = self
            .clients
            .get(&id)
            .or_else(|| self.document_client(&id))
            .ok_or_else(|| {
                crate::info!(
                    "auth",
                    "/token: the client {id} is not known: invalid_client"
                );
                invalid_client("The client is not known.")
            })?;
        match (&client.secret, &secret) {
            (None, None) => Ok(client),
            (Some(expected), Some(given)) if random::same(expected, given) => Ok(client),
            (None, Some(_)) => Err(invalid_client(
                "The client is public: it has no secret to send.",
            )),
            (Some(_), _) => {
                crate::info!(
                    "auth",
                    "/token: the client {} did not authenticate: invalid_client",
                    client.id
                );
                Err(invalid_client("The client authentication failed."))
            }
        }
    }

    /// A client of a document fetched at `/authorize` (`--cimd`): public.
    fn document_client(&self, id: &str) -> Option<Client> {
        (self.options.cimd && id.starts_with("https://")).then(|| Client {
            id: id.to_owned(),
            secret: None,
            name: None,
            redirect_uris: Vec::new(),
            origin: Origin::MetadataDocument,
        })
    }

    fn code_grant(&self, client: &Client, params: &HashMap<String, String>) -> Answer {
        let needed = |name: &str| {
            params
                .get(name)
                .ok_or_else(|| bad("invalid_request", &format!("The request has no {name}.")))
        };
        self.secrets.count_code_exchange();
        let code = needed("code")?;
        let redirect_uri = needed("redirect_uri")?;
        let verifier = needed("code_verifier")?;
        self.secrets.keep(Kind::CodeVerifier, verifier);
        let grant = self.grants.use_code(code).map_err(|refusal| {
            let description = match refusal {
                CodeRefusal::Unknown => "The code is not known.",
                CodeRefusal::Expired => "The code expired.",
                CodeRefusal::Replayed => {
                    "The code was already used: the tokens issued for it are revoked."
                }
            };
            crate::info!(
                "auth",
                "/token for the client {}: invalid_grant ({description})",
                client.id
            );
            bad("invalid_grant", description)
        })?;
        if grant.client_id != client.id {
            return Err(bad(
                "invalid_grant",
                "The code was issued to another client.",
            ));
        }
        if grant.redirect_uri != *redirect_uri {
            crate::info!(
                "auth",
                "/token for the client {}: invalid_grant (another redirect_uri)",
                client.id
            );
            return Err(bad(
                "invalid_grant",
                "The redirect_uri differs from the one of the authorization request.",
            ));
        }
        if !verifier_matches(verifier, &grant.code_challenge) {
            crate::info!(
                "auth",
                "/token for the client {}: invalid_grant (the code_verifier does not match)",
                client.id
            );
            return Err(bad(
                "invalid_grant",
                "The code_verifier does not match the code_challenge.",
            ));
        }
        let issued = self
            .grants
            .issue_for_code(
                &grant,
                &self.resource,
                self.options.token_lifetime,
                self.options.refresh_tokens,
            )
            .ok_or_else(no_random)?;
        crate::info!(
            "auth",
            "/token: tokens for the client {} (scope {})",
            client.id,
            issued.scopes.join(" ")
        );
        if self.options.forget_clients {
            let forgotten = self.clients.forget_registered();
            crate::info!(
                "auth",
                "--forget-clients: after the tokens of a code, the server forgot {forgotten} registered clients"
            );
        }
        Ok(self.token_response(&issued))
    }

    fn refresh_grant(&self, client: &Client, params: &HashMap<String, String>) -> Answer {
        let token = params
            .get("refresh_token")
            .ok_or_else(|| bad("invalid_request", "The request has no refresh_token."))?;
        if self.options.invalid_grant {
            crate::info!(
                "auth",
                "--invalid-grant: the refresh of the client {} gets invalid_grant",
                client.id
            );
            return Err(bad("invalid_grant", "The refresh token is not valid."));
        }
        if let Some(error) = &self.options.refresh_error {
            crate::info!(
                "auth",
                "--refresh-error: the refresh of the client {} gets {error}",
                client.id
            );
            return Err(bad(error, "The refresh failed."));
        }
        let grant = self
            .grants
            .refresh(token)
            .filter(|grant| grant.client_id == client.id)
            .ok_or_else(|| {
                crate::info!(
                    "auth",
                    "/token for the client {}: invalid_grant (an unknown refresh token)",
                    client.id
                );
                bad("invalid_grant", "The refresh token is not valid.")
            })?;
        let scopes = match params.get("scope") {
            None => grant.scopes.clone(),
            Some(scope) => parse_scopes(scope)
                .filter(|asked| !asked.is_empty() && asked.iter().all(|s| grant.scopes.contains(s)))
                .ok_or_else(|| {
                    bad(
                        "invalid_scope",
                        "The scope is not a subset of the scopes of the grant.",
                    )
                })?,
        };
        let issued = self
            .grants
            .rotate(token, &scopes, &self.resource, self.options.token_lifetime)
            .ok_or_else(|| bad("invalid_grant", "The refresh token is not valid."))?;
        crate::info!(
            "auth",
            "/token: refreshed the tokens of the client {} (scope {})",
            client.id,
            issued.scopes.join(" ")
        );
        Ok(self.token_response(&issued))
    }

    fn token_response(&self, issued: &Issued) -> Response<ResponseBody> {
        self.secrets.keep(Kind::AccessToken, &issued.access_token);
        if let Some(refresh) = &issued.refresh_token {
            self.secrets.keep(Kind::RefreshToken, refresh);
        }
        let mut body = json!({
            "access_token": issued.access_token,
            "token_type": self.options.token_type,
            "expires_in": self.options.token_lifetime.as_secs(),
        });
        if let Some(refresh) = &issued.refresh_token {
            body["refresh_token"] = json!(refresh);
        }
        body["scope"] = json!(issued.scopes.join(" "));
        respond::json(StatusCode::OK, &body)
    }
}

fn no_random() -> Response<ResponseBody> {
    oauth_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        "The server has no random data.",
    )
}

/// The client ID and secret of `Authorization: Basic`, each form-urlencoded (RFC 6749
/// §2.3.1).
fn basic_credentials(value: &[u8]) -> Option<(String, String)> {
    let value = std::str::from_utf8(value).ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = STANDARD.decode(encoded.trim()).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    let unescape = |text: &str| {
        url::form_urlencoded::parse(format!("v={text}").as_bytes())
            .next()
            .map(|(_, value)| value.into_owned())
    };
    Some((unescape(id)?, unescape(secret)?))
}

/// RFC 7636 §4.6: BASE64URL(SHA256(verifier)) equals the challenge; the verifier has
/// 43 to 128 unreserved characters.
fn verifier_matches(verifier: &str, challenge: &str) -> bool {
    let shaped = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-._~".contains(&c));
    shaped && random::same(&URL_SAFE_NO_PAD.encode(Sha256::digest(verifier)), challenge)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verifier_of_rfc_7636_appendix_b_matches_its_challenge() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(verifier_matches(verifier, challenge));
        assert!(!verifier_matches(&verifier.replace('d', "e"), challenge));
        assert!(!verifier_matches("short", challenge));
    }

    #[test]
    fn basic_credentials_are_form_decoded() {
        let header = format!("Basic {}", STANDARD.encode("my%20id:s%3Acret"));
        assert_eq!(
            basic_credentials(header.as_bytes()),
            Some(("my id".to_owned(), "s:cret".to_owned()))
        );
        assert_eq!(basic_credentials(b"Bearer abc"), None);
        assert_eq!(basic_credentials(b"Basic !!!"), None);
    }
}
