//! `GET /authorize` (RFC 6749 §4.1.1 with PKCE, RFC 7636, and `resource`, RFC 8707),
//! the consent page, and the approval step `GET /authorize/approve?request=HANDLE`.
//!
//! Until the client and its redirect URI are known to be good, an error is an HTML
//! page and never a redirect (RFC 6749 §4.1.2.1): an open redirector must not come out
//! of a bad request. After that, errors go back to the client's redirect URI with the
//! `state`. The consent page approves by itself: a meta refresh to the approval step,
//! which carries only an opaque handle of the checked request.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use hyper::{Response, StatusCode};
use url::Url;

use super::clients::Client;
use super::options::{HostileRedirect, WRONG_ISSUER};
use super::respond::{self, escape};
use super::secrets::Kind;
use super::{AuthServer, READ, parse_scopes};
use crate::http_body::ResponseBody;

/// The length of a code challenge of S256: base64url of 32 bytes.
const S256_CHALLENGE_LENGTH: usize = 43;

impl AuthServer {
    /// A parameter of `--authorization-query` that the request does not carry with
    /// its value.
    fn lost_endpoint_parameter(&self, params: &HashMap<String, String>) -> Option<String> {
        let query = self.options.authorization_query.as_deref()?;
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(name, value)| params.get(name.as_ref()) != Some(&value.to_string()))
            .map(|(name, _)| name.into_owned())
    }

    pub(super) async fn authorize(&self, query: &str) -> Response<ResponseBody> {
        let params = match respond::parameters(query) {
            Ok(params) => params,
            Err(twice) => return respond::error_page(&twice.to_string()),
        };
        if let Some(lost) = self.lost_endpoint_parameter(&params) {
            crate::info!(
                "auth",
                "/authorize: the request lost the endpoint's own parameter {lost}: an error page"
            );
            return respond::error_page(&format!(
                "The request lost the parameter {lost} of the authorization endpoint."
            ));
        }
        let Some(client_id) = params.get("client_id").filter(|id| !id.is_empty()) else {
            return respond::error_page("The request has no client_id.");
        };
        let Some(redirect_uri) = params.get("redirect_uri").filter(|uri| !uri.is_empty()) else {
            return respond::error_page("The request has no redirect_uri.");
        };
        let client = match self.client_for_authorize(client_id, redirect_uri).await {
            Ok(client) => client,
            Err(page) => return page,
        };
        if !client.allows_redirect(redirect_uri) {
            crate::info!(
                "auth",
                "/authorize: the redirect URI is not one of the client {}: an error page",
                client.id
            );
            return respond::error_page("The redirect_uri is not one that the client registered.");
        }
        let state = params.get("state").filter(|state| !state.is_empty());
        let fail = |error: &str, description: &str| {
            crate::info!(
                "auth",
                "/authorize for the client {}: {error} ({description})",
                client.id
            );
            self.error_redirect(
                redirect_uri,
                error,
                description,
                state.map(String::as_str),
                self.options.hostile_redirect,
            )
        };
        match params.get("response_type").map(String::as_str) {
            Some("code") => {}
            None => return fail("invalid_request", "The request has no response_type."),
            Some(_) => {
                return fail(
                    "unsupported_response_type",
                    "The server supports only the response type code.",
                );
            }
        }
        let Some(state) = state else {
            return fail("invalid_request", "The request has no state.");
        };
        self.secrets.keep(Kind::State, state);
        let Some(challenge) = params.get("code_challenge") else {
            return fail(
                "invalid_request",
                "The request has no code_challenge (PKCE is required).",
            );
        };
        if params.get("code_challenge_method").map(String::as_str) != Some("S256") {
            return fail("invalid_request", "The code_challenge_method must be S256.");
        }
        if !is_s256_challenge(challenge) {
            return fail(
                "invalid_request",
                "The code_challenge is not the base64url of a SHA-256 hash.",
            );
        }
        if params
            .get("resource")
            .is_some_and(|resource| *resource != self.resource)
        {
            return fail(
                "invalid_target",
                "The resource is not the MCP endpoint of this server.",
            );
        }
        let scopes = match params.get("scope").map(|scope| parse_scopes(scope)) {
            None => vec![READ.to_owned()],
            Some(Some(scopes)) if scopes.is_empty() => vec![READ.to_owned()],
            Some(Some(scopes)) => scopes,
            Some(None) => return fail("invalid_scope", "The scope names an unknown scope."),
        };
        let Some(handle) = self.grants.add_pending(
            client.id.clone(),
            redirect_uri.clone(),
            state.clone(),
            challenge.clone(),
            scopes.clone(),
        ) else {
            return fail("server_error", "The server has no random data.");
        };
        crate::info!(
            "auth",
            "/authorize: the consent page for the client {} (scope {})",
            client.id,
            scopes.join(" ")
        );
        self.consent_page(&client, &scopes, &handle)
    }

    /// The client of `client_id`: a known one, or with `--cimd` the document at an
    /// https URL; else the error page.
    async fn client_for_authorize(
        &self,
        client_id: &str,
        redirect_uri: &str,
    ) -> Result<Client, Response<ResponseBody>> {
        if let Some(client) = self.clients.get(client_id) {
            return Ok(client);
        }
        if self.options.cimd && client_id.starts_with("https://") {
            return self
                .fetch_document(client_id, redirect_uri)
                .await
                .map_err(|cause| {
                    crate::info!(
                        "auth",
                        "/authorize: the client ID metadata document at {client_id} is not usable: {cause}"
                    );
                    respond::error_page(&format!(
                        "The client ID metadata document at {client_id} is not usable: {cause}"
                    ))
                });
        }
        crate::info!(
            "auth",
            "/authorize: the client {client_id} is not known: an error page without a redirect"
        );
        Err(respond::error_page(&format!(
            "The client {client_id} is not known to this authorization server. When it was registered before, the server forgot it: sign out and sign in again."
        )))
    }

    fn consent_page(
        &self,
        client: &Client,
        scopes: &[String],
        handle: &str,
    ) -> Response<ResponseBody> {
        let approve = format!("{}/authorize/approve?request={handle}", self.issuer);
        let approve = escape(&approve);
        let name = escape(client.display_name());
        let scopes = escape(&scopes.join(" "));
        respond::html(
            StatusCode::OK,
            format!(
                "<!doctype html>\n<html><head><meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"0;url={approve}\">\n<title>Allow {name}</title></head>\n<body><h1>Allow <span id=\"client\">{name}</span></h1>\n<p>The client <b>{name}</b> asks for the scopes <span id=\"scopes\">{scopes}</span> at {}.</p>\n<p>This test server approves by itself. <a href=\"{approve}\">Continue</a></p>\n</body></html>\n",
                escape(&self.issuer)
            ),
        )
    }

    /// The approval step: the code (or `access_denied` with `--deny`) goes to the
    /// redirect URI of the request.
    pub(super) fn approve(&self, query: &str) -> Response<ResponseBody> {
        let params: HashMap<String, String> = respond::parameters(query).unwrap_or_default();
        let Some(pending) = params
            .get("request")
            .and_then(|handle| self.grants.take_pending(handle))
        else {
            return respond::error_page(
                "The authorization request is unknown, expired or already used: start the sign-in again.",
            );
        };
        let hostile = self.hostile_redirect_of_this_approval();
        if self.options.deny || self.options.deny_with.is_some() {
            crate::info!(
                "auth",
                "--deny: the authorization of the client {} is denied",
                pending.client_id
            );
            return self.error_redirect(
                &pending.redirect_uri,
                self.options.deny_with.as_deref().unwrap_or("access_denied"),
                "The user denied the authorization.",
                Some(&pending.state),
                hostile,
            );
        }
        let Some(code) = self.grants.add_code(&pending, self.options.code_bytes) else {
            return self.error_redirect(
                &pending.redirect_uri,
                "server_error",
                "The server has no random data.",
                Some(&pending.state),
                hostile,
            );
        };
        self.secrets.keep(Kind::Code, &code);
        crate::info!(
            "auth",
            "approved: a code for the client {} (scope {})",
            pending.client_id,
            pending.scopes.join(" ")
        );
        let mut state = pending.state.clone();
        let mut issuer = self.issuer.clone();
        match hostile {
            Some(HostileRedirect::WrongIss) => {
                crate::info!(
                    "auth",
                    "--hostile-redirect wrong-iss: the redirect names the issuer {WRONG_ISSUER}"
                );
                issuer = WRONG_ISSUER.to_owned();
            }
            Some(HostileRedirect::SlashIss) => {
                crate::info!(
                    "auth",
                    "--hostile-redirect slash-iss: the redirect names the issuer with a slash more"
                );
                issuer.push('/');
            }
            Some(HostileRedirect::NoIss) => {
                crate::info!(
                    "auth",
                    "--hostile-redirect no-iss: the redirect has no iss, which the metadata announces"
                );
            }
            Some(HostileRedirect::WrongState) => {
                crate::info!(
                    "auth",
                    "--hostile-redirect wrong-state: the redirect has another state"
                );
                state = super::random::token().unwrap_or_else(|| "another-state".into());
                self.secrets.keep(Kind::State, &state);
            }
            Some(HostileRedirect::ReplayedCode) => {
                // As another program that got the code first would have done.
                crate::info!(
                    "auth",
                    "--hostile-redirect replayed-code: the code is redeemed before the redirect"
                );
                let _ = self.grants.use_code(&code);
            }
            None => {}
        }
        let mut pairs = vec![("code", code.as_str()), ("state", state.as_str())];
        if self.sends_iss(hostile) {
            pairs.push(("iss", issuer.as_str()));
        }
        respond::redirect(&with_query(&pending.redirect_uri, &pairs))
    }

    /// The `--hostile-redirect` of the approval that asks now: none for the first
    /// `--hostile-redirect-after` approvals.
    fn hostile_redirect_of_this_approval(&self) -> Option<HostileRedirect> {
        let earlier = self.approvals.fetch_add(1, Ordering::SeqCst);
        if earlier < self.options.hostile_redirect_after {
            return None;
        }
        self.options.hostile_redirect
    }

    /// Whether a redirect names the issuer: as the metadata announces, unless
    /// `--hostile-redirect no-iss`; `wrong-iss` names one even with `--no-iss` (a
    /// server that sends what its metadata does not announce).
    fn sends_iss(&self, hostile: Option<HostileRedirect>) -> bool {
        match hostile {
            Some(HostileRedirect::NoIss) => false,
            Some(HostileRedirect::WrongIss) => true,
            _ => self.options.iss,
        }
    }

    /// An error of RFC 6749 §4.1.2.1 at the redirect URI, with `state` and `iss`.
    fn error_redirect(
        &self,
        redirect_uri: &str,
        error: &str,
        description: &str,
        state: Option<&str>,
        hostile: Option<HostileRedirect>,
    ) -> Response<ResponseBody> {
        let mut pairs = vec![("error", error), ("error_description", description)];
        if let Some(state) = state {
            pairs.push(("state", state));
        }
        let slash_issuer = format!("{}/", self.issuer);
        if self.sends_iss(hostile) {
            // An error redirect carries the iss too (RFC 9207 §2), and so does the
            // wrong one of `--hostile-redirect wrong-iss` or `slash-iss`.
            let issuer = match hostile {
                Some(HostileRedirect::WrongIss) => WRONG_ISSUER,
                Some(HostileRedirect::SlashIss) => slash_issuer.as_str(),
                _ => self.issuer.as_str(),
            };
            pairs.push(("iss", issuer));
        }
        respond::redirect(&with_query(redirect_uri, &pairs))
    }
}

/// `uri` with the pairs appended to its query.
fn with_query(uri: &str, pairs: &[(&str, &str)]) -> String {
    match Url::parse(uri) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(pairs);
            url.to_string()
        }
        // Checked as a registered redirect URI before; kept for the type's sake.
        Err(_) => uri.to_owned(),
    }
}

fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == S256_CHALLENGE_LENGTH
        && challenge
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_of_a_redirect_keeps_what_the_uri_had() {
        assert_eq!(
            with_query(
                "http://127.0.0.1:5/callback",
                &[("code", "a b"), ("state", "x")]
            ),
            "http://127.0.0.1:5/callback?code=a+b&state=x"
        );
        assert_eq!(
            with_query("https://app.example/cb?k=v", &[("error", "access_denied")]),
            "https://app.example/cb?k=v&error=access_denied"
        );
    }
}
