//! The OAuth authorization server of `--auth` (alias `--oauth`), in the same process
//! and on the same origin as `/mcp`, which becomes its protected resource (RFC 9728).
//!
//! The issuer is the origin (`https://127.0.0.1:PORT`); tokens are opaque random
//! strings kept in memory ([`grants`]) with their scopes, audience (the MCP URL),
//! client and expiry. The consent page approves by itself (a meta refresh to the
//! approval step), so a headless browser or `--browse` completes a sign-in alone.
//!
//! Endpoints (every other path is 404):
//! - `GET /.well-known/oauth-protected-resource/mcp` (and without `/mcp`): RFC 9728;
//! - `GET /.well-known/oauth-authorization-server` and `/.well-known/openid-configuration`:
//!   RFC 8414;
//! - `GET /authorize`, then `GET /authorize/approve?request=HANDLE` ([`authorize`]);
//! - `POST /token` ([`token`]); `POST /register` ([`register`], not with
//!   `--no-registration`);
//! - `GET /fixture/client.json[?port=N]` ([`cimd`]), `POST /fixture/forget-clients`
//!   and `POST /fixture/expire-tokens` (204): switches for the tests of clients;
//! - `GET /fixture/secrets` ([`secrets`]): every secret the server saw or issued,
//!   so that a test can look for each in a client's log;
//! - `POST /fixture/resource` ([`resource_switch`], 204): the body, an absolute URL,
//!   becomes the `resource` of the protected resource metadata from then on.
//!
//! No log line carries a token, a code, a verifier, a state or a secret.

// The handlers refuse with the finished HTTP response (`Err(Response)`), one per
// request: boxing it would only add an allocation to the error path.
#![allow(clippy::result_large_err)]

pub mod authorize;
pub mod cimd;
pub mod clients;
pub mod grants;
pub mod metadata;
pub mod options;
pub mod random;
pub mod register;
pub mod resource_switch;
pub mod respond;
pub mod secrets;
pub mod token;

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, WWW_AUTHENTICATE};
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use tokio_rustls::TlsConnector;

use crate::http_body::ResponseBody;
use clients::Clients;
use grants::{Access, Grants};
pub use options::AuthOptions;

/// The scope that every MCP request needs.
pub const READ: &str = "mcp:read";
/// The scope that the tool `guarded` needs too.
pub const WRITE: &str = "mcp:write";
/// The scopes of the server, in the order of the metadata.
pub const SCOPES: [&str; 2] = [READ, WRITE];

/// The authorization server and the token check of the protected resource.
pub struct AuthServer {
    /// The origin, `https://127.0.0.1:PORT` (or `http://` with `--http`); with
    /// `--separate-authorization-server` the origin of its own port.
    pub issuer: String,
    /// The MCP URL: the resource and the audience of every token.
    pub resource: String,
    /// The origin of the MCP URL, which serves the protected resource metadata.
    pub resource_origin: String,
    pub options: AuthOptions,
    pub clients: Clients,
    pub grants: Grants,
    pub secrets: secrets::Secrets,
    /// The `resource` that `POST /fixture/resource` put in the metadata.
    pub resource_switch: resource_switch::ResourceSwitch,
    /// The TLS client of the fetch of client ID metadata documents.
    tls: TlsConnector,
    /// How many approvals the server gave (`--hostile-redirect-after`).
    approvals: AtomicU64,
}

impl AuthServer {
    /// The server of the MCP URL `resource`; documents are fetched trusting
    /// `ca_files` (the fixture's own CA and `--auth-ca-file`).
    pub fn new(
        resource: &str,
        options: AuthOptions,
        ca_files: &[PathBuf],
    ) -> Result<AuthServer, crate::fetch::TrustError> {
        let issuer = resource
            .strip_suffix(crate::http_body::PATH)
            .unwrap_or(resource)
            .to_owned();
        let tls = crate::fetch::connector(ca_files)?;
        let resource = match &options.resource_query {
            Some(query) => format!("{resource}?{query}"),
            None => resource.to_owned(),
        };
        Ok(AuthServer {
            resource_origin: issuer.clone(),
            issuer,
            resource,
            options,
            clients: Clients::default(),
            grants: Grants::default(),
            secrets: secrets::Secrets::default(),
            resource_switch: resource_switch::ResourceSwitch::default(),
            tls,
            approvals: AtomicU64::new(0),
        })
    }

    /// The server of `--separate-authorization-server`: its issuer is the origin of
    /// its own port.
    pub fn with_issuer(mut self, issuer: String) -> AuthServer {
        self.issuer = issuer;
        self
    }

    /// Answers a request to the origin of `/mcp`, but `/mcp` itself: every path of the
    /// server, or with `--separate-authorization-server` only the protected resource
    /// metadata (the rest is on the other origin).
    pub async fn handle_at_resource_origin(
        &self,
        request: Request<Incoming>,
    ) -> Response<ResponseBody> {
        let path = request.uri().path();
        if self.options.separate_origin && !self.serves_prm_at(path) {
            return respond::not_found();
        }
        self.handle(request).await
    }

    /// Answers a request to every path but `/mcp`; never panics on what a client sends.
    /// A path of `--moved` gets 307 to `/moved<path>`, which serves it.
    pub async fn handle(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        let asked = request.uri().path().to_owned();
        if self.options.moved.contains(&asked) {
            let mut location = format!("{}{asked}", options::MOVED_PREFIX);
            if let Some(query) = request.uri().query() {
                location = format!("{location}?{query}");
            }
            crate::info!("auth", "--moved: {asked} gets 307 to {location}");
            return respond::temporary_redirect(&location);
        }
        let path = asked
            .strip_prefix(options::MOVED_PREFIX)
            .filter(|path| self.options.moved.iter().any(|moved| moved == path))
            .unwrap_or(&asked)
            .to_owned();
        let get = request.method() == Method::GET;
        let post = request.method() == Method::POST;
        match path.as_str() {
            prm if self.serves_prm_at(prm) => {
                if !get {
                    return respond::method_not_allowed("GET");
                }
                respond::json(StatusCode::OK, &self.protected_resource_metadata())
            }
            "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration" => {
                if !get {
                    return respond::method_not_allowed("GET");
                }
                respond::json(StatusCode::OK, &self.authorization_server_metadata())
            }
            "/authorize" if get => self.authorize(request.uri().query().unwrap_or("")).await,
            "/authorize/approve" if get => self.approve(request.uri().query().unwrap_or("")),
            "/authorize" | "/authorize/approve" => respond::method_not_allowed("GET"),
            "/token" if post => self.token(request).await,
            "/token" => respond::method_not_allowed("POST"),
            "/register" if !self.options.registration => respond::not_found(),
            "/register" if post => self.register(request).await,
            "/register" => respond::method_not_allowed("POST"),
            "/fixture/client.json" if get => self.own_document(request.uri().query()),
            "/fixture/client.json" => respond::method_not_allowed("GET"),
            "/fixture/forget-clients" if post => {
                let forgotten = self.clients.forget_registered();
                crate::info!(
                    "auth",
                    "/fixture/forget-clients: the server forgot {forgotten} registered clients"
                );
                respond::empty(StatusCode::NO_CONTENT)
            }
            "/fixture/expire-tokens" if post => {
                let expired = self.grants.expire_access_tokens();
                crate::info!(
                    "auth",
                    "/fixture/expire-tokens: {expired} access tokens expired"
                );
                respond::empty(StatusCode::NO_CONTENT)
            }
            "/fixture/forget-clients" | "/fixture/expire-tokens" => {
                respond::method_not_allowed("POST")
            }
            "/fixture/secrets" if get => respond::json(StatusCode::OK, &self.secrets.to_json()),
            "/fixture/secrets" => respond::method_not_allowed("GET"),
            "/fixture/resource" if post => self.switch_resource(request).await,
            "/fixture/resource" => respond::method_not_allowed("POST"),
            _ => respond::not_found(),
        }
    }

    /// The check of the protected resource: a valid access token of this server for
    /// this resource with the scope `mcp:read`, else the challenge (401, or 403 for a
    /// token without `mcp:read`).
    pub fn check_bearer(&self, headers: &HeaderMap) -> Result<Access, Response<ResponseBody>> {
        let token = headers
            .get(hyper::header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                let (scheme, token) = value.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        let Some(token) = token else {
            crate::info!("auth", "a POST without an access token gets 401");
            return Err(self.unauthorized(None));
        };
        if self.options.refuse_access_tokens {
            crate::info!(
                "auth",
                "--refuse-access-tokens: a POST with an access token gets 401"
            );
            return Err(self.unauthorized(Some("invalid_token")));
        }
        let Some(access) = self.grants.access(token) else {
            crate::info!(
                "auth",
                "a POST with an expired or unknown access token gets 401"
            );
            return Err(self.unauthorized(Some("invalid_token")));
        };
        if access.audience != self.resource {
            crate::info!("auth", "a POST with a token for another resource gets 401");
            return Err(self.unauthorized(Some("invalid_token")));
        }
        if !access.scopes.iter().any(|scope| scope == READ) {
            crate::info!("auth", "a POST with a token without mcp:read gets 403");
            let mut response = respond::oauth_error(
                StatusCode::FORBIDDEN,
                "insufficient_scope",
                "The request needs the scope mcp:read",
            );
            let challenge = format!(
                "Bearer error=\"insufficient_scope\", resource_metadata=\"{}\", scope=\"{READ}\"",
                self.prm_url()
            );
            insert_challenge(&mut response, &challenge);
            return Err(response);
        }
        Ok(access)
    }

    /// 401 with the challenge; the body is the RFC 6750 error of a bad token, or (for a
    /// request without one, which RFC 6750 §3.1 gives no error code) a text.
    fn unauthorized(&self, error: Option<&str>) -> Response<ResponseBody> {
        let mut response = match error {
            Some(error) => respond::oauth_error(
                StatusCode::UNAUTHORIZED,
                error,
                "The access token is expired or unknown.",
            ),
            None => respond::text(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: the request needs an access token of the authorization server.",
            ),
        };
        insert_challenge(&mut response, &self.challenge(error));
        response
    }

    /// The 403 of a `tools/call` of `guarded` with a token without `mcp:write`.
    pub fn step_up(&self) -> Response<ResponseBody> {
        crate::info!(
            "auth",
            "a tools/call of guarded without the scope mcp:write gets 403 insufficient_scope"
        );
        let mut response = respond::oauth_error(
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            metadata::STEP_UP_DESCRIPTION,
        );
        insert_challenge(&mut response, &self.step_up_challenge());
        response
    }
}

fn insert_challenge(response: &mut Response<ResponseBody>, challenge: &str) {
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
}

/// The scopes of a `scope` parameter: `None` when one is not a scope of the server.
pub fn parse_scopes(scope: &str) -> Option<Vec<String>> {
    let mut scopes: Vec<String> = Vec::new();
    for scope in scope.split(' ').filter(|s| !s.is_empty()) {
        if !SCOPES.contains(&scope) {
            return None;
        }
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    Some(scopes)
}
