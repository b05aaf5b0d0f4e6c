//! The MCP endpoint `/mcp`: one POST per JSON-RPC message, answered with JSON, an SSE
//! stream, or 202 for a notification (streamable-http.mdx §Sending Messages). The body
//! goes through the same parse and dispatch as a line of stdio (`wire`, `methods`);
//! only the checks of HTTP and the choice of the response are here.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use rmcp::model::{ErrorCode, ErrorData};

use super::headers::{self, HEADER_MISMATCH, HeaderMismatch};
use super::options::MISADDRESSED_ID;
use super::sse::{self, StreamSettings};
use crate::auth::grants::Access;
use crate::auth::{self, AuthServer};
use crate::outbox::{Routed, Routes};
use crate::session::Session;
use crate::switch::Switch;
use crate::tools::lists::as_listed;
use crate::wire::{self, Message, RequestId};
use crate::{meta, methods};

pub use crate::http_body::{PATH, ResponseBody};

/// The largest body of a POST, as the largest line of stdio: 64 MiB.
pub const MAX_BODY: usize = 64 << 20;

/// What every POST needs: the one session of the server and the routes of its
/// responses.
pub struct Endpoint {
    pub session: Arc<Session>,
    pub routes: Arc<Routes>,
    pub settings: StreamSettings,
    pub always_sse: bool,
    /// The token every POST must carry (`--bearer-env`).
    bearer: Option<String>,
    /// The authorization server of `--auth`: it serves every other path, and POSTs
    /// need one of its access tokens.
    auth: Option<Arc<AuthServer>>,
    /// `--print-exchanges`: each POST read goes to stdout too.
    print_exchanges: bool,
    posts: AtomicU64,
    /// `--version-error-method`: the one -32022 went out.
    version_error_sent: AtomicBool,
}

impl Endpoint {
    pub fn new(
        session: Arc<Session>,
        routes: Arc<Routes>,
        settings: StreamSettings,
        always_sse: bool,
    ) -> Endpoint {
        Endpoint {
            session,
            routes,
            settings,
            always_sse,
            bearer: None,
            auth: None,
            print_exchanges: false,
            posts: AtomicU64::new(0),
            version_error_sent: AtomicBool::new(false),
        }
    }

    /// Every POST needs `Authorization: Bearer <token>`.
    pub fn with_bearer(mut self, token: Option<String>) -> Endpoint {
        self.bearer = token;
        self
    }

    /// Each POST read also goes to stdout (`--print-exchanges`).
    pub fn with_printed_exchanges(mut self, print: bool) -> Endpoint {
        self.print_exchanges = print;
        self
    }

    /// The authorization server of `--auth`.
    pub fn with_auth(mut self, auth: Option<Arc<AuthServer>>) -> Endpoint {
        self.auth = auth;
        self
    }

    /// The authorization server of `--auth`, which a separate origin serves too.
    pub fn auth(&self) -> Option<&Arc<AuthServer>> {
        self.auth.as_ref()
    }

    /// Whether the request carries the token, when one is needed. Compared in
    /// constant time, as a server should.
    fn authorized(&self, headers: &hyper::HeaderMap) -> bool {
        let Some(token) = &self.bearer else {
            return true;
        };
        let expected = format!("Bearer {token}");
        let given = headers
            .get(hyper::header::AUTHORIZATION)
            .map(|value| value.as_bytes())
            .unwrap_or_default();
        given.len() == expected.len()
            && given
                .iter()
                .zip(expected.as_bytes())
                .fold(0u8, |diff, (a, b)| diff | (a ^ b))
                == 0
    }

    /// Answers one HTTP request; never fails, never panics on what the client sends.
    /// With `--print-exchanges` each request of any path also gets its `http:` line.
    pub async fn handle(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        if !self.print_exchanges {
            return self.answer(request).await;
        }
        let seen = super::exchanges::Seen::of(super::exchanges::Origin::Resource, &request);
        let response = self.answer(request).await;
        seen.print(response.status());
        response
    }

    async fn answer(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        if request.uri().path() != PATH {
            if let Some(auth) = &self.auth {
                return auth.handle_at_resource_origin(request).await;
            }
            return text(
                StatusCode::NOT_FOUND,
                "Not found: the MCP endpoint is /mcp.",
            );
        }
        if !headers::origin_allowed(request.headers()) {
            return error(
                StatusCode::FORBIDDEN,
                None,
                invalid("Forbidden: the Origin header does not name a loopback page."),
            );
        }
        if request.method() != Method::POST {
            // No GET stream and no sessions to DELETE in 2026-07-28 (§Backward Compatibility).
            let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("POST"));
            return response;
        }
        if !self.authorized(request.headers()) {
            crate::info!("http", "--bearer-env: a POST without the token gets 401");
            let mut response = text(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: the request needs the bearer token of --bearer-env.",
            );
            response.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer"),
            );
            return response;
        }
        let access = match &self.auth {
            Some(auth) => match auth.check_bearer(request.headers()) {
                Ok(access) => Some(access),
                Err(challenge) => return challenge,
            },
            None => None,
        };
        let post = self.posts.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(status) = self.settings.faults.status_of_post(post) {
            crate::info!("http", "--fail-status: the POST {post} gets {status}");
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let message = format!("--fail-status: the POST {post} gets {status}.");
            let response = if self.settings.faults.fail_status_json {
                json(status, serde_json::json!({ "error": message }).to_string())
            } else {
                text(status, &message)
            };
            return with_location(response, self.settings.faults.fail_location.as_deref());
        }
        self.post(post, request, access.as_ref()).await
    }

    async fn post(
        &self,
        post: u64,
        request: Request<Incoming>,
        access: Option<&Access>,
    ) -> Response<ResponseBody> {
        let (parts, body) = request.into_parts();
        if !headers::accepts_both(&parts.headers) {
            return error(
                StatusCode::NOT_ACCEPTABLE,
                None,
                invalid("The Accept header must list both application/json and text/event-stream."),
            );
        }
        if !headers::content_type_allowed(&parts.headers) {
            return error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                None,
                invalid("The body must be application/json."),
            );
        }
        let body = match Limited::new(body, MAX_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    None,
                    invalid(format!("The body is over {MAX_BODY} bytes.")),
                );
            }
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    None,
                    invalid(format!("The body could not be read: {e}.")),
                );
            }
        };
        let message = wire::parse(&body);
        // A step-up refuses the POST before it is served: like a POST without a token,
        // it is no exchange (its request goes again with a new token), only its
        // `http:` line.
        if let Ok(Message::Request(request)) = &message
            && let (Some(auth), Some(access)) = (&self.auth, access)
            && self.needs_write(auth, request)
            && !access.scopes.iter().any(|scope| scope == auth::WRITE)
        {
            return auth.step_up();
        }
        // Refused before it is served, as a step-up: no exchange, the request goes again.
        if let Ok(Message::Request(request)) = &message
            && self.settings.faults.version_error_method.as_deref() == Some(&request.method)
            && !self.version_error_sent.swap(true, Ordering::Relaxed)
        {
            crate::info!(
                "http",
                "--version-error-method: the first {} gets -32022",
                request.method
            );
            let (message, supported): (&str, &[&str]) = if self
                .settings
                .faults
                .version_error_without_own_version
            {
                (
                    "--version-error-without-own-version: the server does not take 2026-07-28 for this request; it supports 2025-11-25.",
                    &["2025-11-25"],
                )
            } else {
                (
                    "--version-error-method: the server lost the protocol version of the request; it supports 2026-07-28.",
                    meta::SUPPORTED_VERSIONS,
                )
            };
            let refused = ErrorData::new(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                message,
                Some(
                    serde_json::json!({"supported": supported, "requested": meta::PROTOCOL_VERSION}),
                ),
            );
            return error(StatusCode::BAD_REQUEST, Some(&request.id), refused);
        }
        if self.print_exchanges {
            super::exchanges::print(post, &parts.headers, &body);
        }
        match message {
            Err(refusal) => error(StatusCode::BAD_REQUEST, refusal.id.as_ref(), refusal.error),
            Ok(Message::Response) => error(
                StatusCode::BAD_REQUEST,
                None,
                invalid(
                    "The body is a JSON-RPC response: the server sends no requests, so the client must not send responses.",
                ),
            ),
            Ok(Message::BadNotification(reason)) => error(
                StatusCode::BAD_REQUEST,
                None,
                invalid(format!("The notification is not valid: {reason}.")),
            ),
            Ok(Message::Notification(notification)) => {
                methods::notification(&self.session, notification);
                empty(StatusCode::ACCEPTED)
            }
            Ok(Message::Request(request)) => self.request(&parts.headers, request).await,
        }
    }

    /// The `Mcp-Param-*` headers of a `tools/call` of a known tool.
    fn check_tool_headers(
        &self,
        headers: &hyper::HeaderMap,
        request: &wire::Request,
    ) -> Result<(), HeaderMismatch> {
        if request.method != "tools/call" {
            return Ok(());
        }
        let params = request.params.as_ref();
        let name = params.and_then(|p| p.get("name")).and_then(|n| n.as_str());
        let Some(spec) = name.and_then(|name| self.session.catalog.tool(name)) else {
            return Ok(());
        };
        let arguments = params
            .and_then(|p| p.get("arguments"))
            .and_then(|a| a.as_object());
        let marked = self.session.enabled(Switch::ParamHeader);
        let tool = as_listed(&spec.tool, marked);
        headers::check_params(headers, &tool.input_schema, arguments)
    }

    /// The checks of a request in the order of the spec's table (WIRE-DIFF §8.2):
    /// headers (400, -32020), the method (404, -32601), `_meta` (400); then the dispatch.
    async fn request(
        &self,
        headers: &hyper::HeaderMap,
        request: wire::Request,
    ) -> Response<ResponseBody> {
        let id = request.id.clone();
        if let Err(message) =
            headers::check_request(headers, &request.method, request.params.as_ref())
                .and_then(|()| self.check_tool_headers(headers, &request))
        {
            let mismatch = ErrorData::new(ErrorCode(HEADER_MISMATCH), message.to_string(), None);
            return error(StatusCode::BAD_REQUEST, Some(&id), mismatch);
        }
        if !methods::serves(&self.session, &request.method) {
            let missing = methods::method_not_found(&request.method);
            return error(StatusCode::NOT_FOUND, Some(&id), missing);
        }
        if let Err(refused) = meta::check(request.params.as_ref()) {
            return error(StatusCode::BAD_REQUEST, Some(&id), refused);
        }
        let Some(route) = self.routes.open(&id) else {
            return error(
                StatusCode::BAD_REQUEST,
                Some(&id),
                invalid(format!(
                    "The request id {id} is already in use by a request in flight."
                )),
            );
        };
        let guard = RouteGuard {
            session: Arc::clone(&self.session),
            routes: Arc::clone(&self.routes),
            id,
            generation: route.generation,
        };
        let mut frames = route.frames;
        let invalid_response =
            self.settings.faults.invalid_response_method.as_deref() == Some(&request.method);
        let no_content_type =
            self.settings.faults.no_content_type_method.as_deref() == Some(&request.method);
        let misaddressed =
            self.settings.faults.misaddressed_response_method.as_deref() == Some(&request.method);
        methods::request(&self.session, request);
        let Some(first) = frames.recv().await else {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                Some(&guard.id),
                ErrorData::internal_error("The server is stopping.", None),
            );
        };
        match first {
            Routed::Final(frame) if !self.always_sse => {
                let status = status_of(&frame);
                let frame = if invalid_response {
                    with_an_error_too(frame)
                } else if misaddressed {
                    with_another_id(frame)
                } else {
                    frame
                };
                let mut response = if self.settings.faults.chunked_json {
                    json_without_length(status, frame)
                } else {
                    json(status, frame)
                };
                if no_content_type {
                    response.headers_mut().remove(CONTENT_TYPE);
                }
                response
            }
            first => {
                let body = sse::start(first, frames, self.settings.clone(), guard);
                let mut response = Response::new(body.boxed());
                let headers = response.headers_mut();
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
                headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
                // Proxies must not hold the events back (§Receiving Messages).
                headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
                response
            }
        }
    }
}

impl Endpoint {
    /// Whether a request needs `mcp:write`: a `tools/call` of `guarded` (study §1.5:
    /// the resource decides, not the tool), and with `--listen-needs-write` a
    /// `subscriptions/listen`.
    fn needs_write(&self, auth: &AuthServer, request: &wire::Request) -> bool {
        let guarded = request.method == "tools/call"
            && request
                .params
                .as_ref()
                .and_then(|params| params.get("name"))
                .and_then(|name| name.as_str())
                == Some(crate::tools::guarded::NAME);
        let listen = auth.options.listen_needs_write && request.method == "subscriptions/listen";
        guarded || listen
    }
}

/// Closing the response stream before the response cancels the request
/// (streamable-http.mdx §Cancellation): the guard lives as long as the response.
struct RouteGuard {
    session: Arc<Session>,
    routes: Arc<Routes>,
    id: RequestId,
    generation: u64,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        if self.routes.close(&self.id, self.generation) && self.session.cancel(&self.id) {
            crate::info!(
                "http",
                "the response stream of the request {} closed before its response: cancelled",
                self.id
            );
        }
    }
}

/// The status of a response sent as JSON: 400 for the protocol errors that the spec's
/// table gives 400 (a missing client capability, -32021), 200 for every other answer.
fn status_of(frame: &str) -> StatusCode {
    if !frame.contains("\"error\"") {
        return StatusCode::OK;
    }
    let code = serde_json::from_str::<serde_json::Value>(frame)
        .ok()
        .and_then(|frame| frame.get("error")?.get("code")?.as_i64());
    if code == Some(i64::from(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0)) {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    }
}

fn invalid(message: impl Into<String>) -> ErrorData {
    wire::invalid_request(message)
}

/// The frame of `--misaddressed-response-method`: the answer of no request of the client.
fn with_another_id(frame: String) -> String {
    crate::info!(
        "http",
        "--misaddressed-response-method: the response has the id {MISADDRESSED_ID}"
    );
    with_member(frame, "id", MISADDRESSED_ID.into())
}

/// The frame of `--invalid-response-method`: its `result` and an `error` at once.
fn with_an_error_too(frame: String) -> String {
    crate::info!(
        "http",
        "--invalid-response-method: a result with an error too"
    );
    let error = serde_json::json!({"code": -32603, "message": "--invalid-response-method"});
    with_member(frame, "error", error)
}

/// The frame with the member `name` set to `value` (a frame that is no JSON object
/// as it is).
fn with_member(frame: String, name: &str, value: serde_json::Value) -> String {
    let Ok(serde_json::Value::Object(mut object)) = serde_json::from_str(&frame) else {
        return frame;
    };
    object.insert(name.into(), value);
    serde_json::Value::Object(object).to_string()
}

fn json(status: StatusCode, frame: String) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(frame)).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// [`json`] without Content-Length (`--chunked-json`): one chunk of a body whose
/// length the client learns only at its end.
fn json_without_length(status: StatusCode, frame: String) -> Response<ResponseBody> {
    let mut response = Response::new(UnsizedBody(Some(Bytes::from(frame))).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A body of one chunk that tells no size.
struct UnsizedBody(Option<Bytes>);

impl hyper::body::Body for UnsizedBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        std::task::Poll::Ready(self.0.take().map(|data| Ok(hyper::body::Frame::data(data))))
    }
}

/// A JSON-RPC error response with an HTTP status; without `id` when there is none.
fn error(status: StatusCode, id: Option<&RequestId>, error: ErrorData) -> Response<ResponseBody> {
    json(status, wire::error(id, &error))
}

fn empty(status: StatusCode) -> Response<ResponseBody> {
    let mut response = Response::new(Empty::new().boxed());
    *response.status_mut() = status;
    response
}

fn text(status: StatusCode, message: &str) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{message}\n"))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// `--fail-location`: the answer of a `--fail-status` with `Location` (a redirect).
fn with_location(
    mut response: Response<ResponseBody>,
    location: Option<&str>,
) -> Response<ResponseBody> {
    if let Some(value) = location.and_then(|location| HeaderValue::from_str(location).ok()) {
        response
            .headers_mut()
            .insert(hyper::header::LOCATION, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_with_an_error_too_keeps_its_id_and_its_result() {
        let frame = with_an_error_too(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#.into());
        let value: serde_json::Value = serde_json::from_str(&frame).unwrap();
        assert_eq!(value["id"], 7);
        assert_eq!(value["result"], serde_json::json!({"content": []}));
        assert_eq!(value["error"]["code"], -32603);
    }
}
