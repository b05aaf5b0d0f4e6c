//! One request to the upstream at a URL: a POST with the headers of the revision,
//! and its answer, a JSON body or an SSE stream, as events of the link.

use super::Shared;
use super::headers::{self, ParamHeader};
use super::sse::SseReader;
use crate::auth::challenge::Challenge;
use crate::auth::errors::SignInError;
use crate::auth::sign_in::Refusal;
use crate::catalogue::SignInWarning;
use crate::log::emit;
use crate::net::describe;
use crate::upstream::{Outgoing, RequestFailure, UpstreamEvent, event_of_line};
use crate::wire::frame::Message;
use crate::wire::line_reader::Line;
use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc;

/// What the session gets for one request; every request ends in exactly one
/// answer (a response line, or a failure).
pub(super) async fn exchange(
    shared: &Shared,
    frame: Outgoing,
    events: mpsc::Sender<UpstreamEvent>,
) {
    let Outgoing::Request {
        id, method, params, ..
    } = &frame
    else {
        return;
    };
    let (id, method) = (*id, method.clone());
    let name = headers::name_member(&method)
        .and_then(|member| params.get(member))
        .and_then(|text| serde_json::from_str::<String>(text).ok());
    let params_headers = match (&name, method.as_str()) {
        (Some(tool), "tools/call") => shared.param_headers(tool),
        _ => Vec::new(),
    };
    let arguments = (!params_headers.is_empty())
        .then(|| params.get("arguments"))
        .flatten()
        .and_then(|text| serde_json::from_str::<serde_json::Map<String, Value>>(text).ok());
    let mut body = Vec::new();
    frame.encode_into(&mut body);
    let mut request_headers = shared.request_headers(&method);
    if let Some(name) = &name {
        insert(
            &mut request_headers,
            headers::NAME_HEADER,
            &headers::encode_value(name),
        );
    }
    if let Some(arguments) = &arguments {
        for (header, value) in headers::param_values(&params_headers, arguments) {
            insert(&mut request_headers, &header, &value);
        }
    }
    let answer = Answer {
        id,
        learns_tools: method == "tools/list",
        shared,
        events: &events,
    };
    let body = Bytes::from(body);
    // One sign-in after a 401 and one step-up after a 403 per request, never a loop;
    // and one retry after a -32022 that offers the bridge's own version.
    let (mut signed_in, mut stepped_up, mut version_retried) = (false, false, false);
    let failure = loop {
        let mut headers = request_headers.clone();
        let bearer = shared.auth.as_ref().and_then(|auth| auth.bearer());
        if let Some(bearer) = &bearer
            && let Ok(mut value) =
                HeaderValue::from_str(&format!("Bearer {}", bearer.token.expose()))
        {
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let response = shared
            .client
            .post(shared.url.clone())
            .headers(headers)
            .body(body.clone())
            .send()
            .await;
        let mut response = match response {
            Ok(response) => response,
            Err(error) => break Err(RequestFailure::Transport(describe(error))),
        };
        let status = response.status().as_u16();
        if status == 400 && !version_retried && content_type(&response) == ContentKind::Json {
            let code = response.status();
            let body = read_body(&mut response, shared.max_response_bytes)
                .await
                .ok();
            if body
                .as_deref()
                .is_some_and(|body| offers_own_version(body, id))
            {
                version_retried = true;
                continue;
            }
            break answer.error_body(code, ContentKind::Json, body).await;
        }
        let Some(auth) = shared.auth.as_ref().filter(|_| matches!(status, 401 | 403)) else {
            break answer.read(response).await;
        };
        let challenge = Challenge::of_headers(response.headers());
        let step_up = status == 403 && challenge.is_insufficient_scope();
        if status == 403 && !step_up {
            // A 403 that asks for no scope is the server's answer.
            break answer.read(response).await;
        }
        let tried = if step_up {
            &mut stepped_up
        } else {
            &mut signed_in
        };
        if std::mem::replace(tried, true) {
            // Refused with the token of the sign-in: no second one (never a loop),
            // and the line of this failure, as every sign-in failure has one.
            let error = SignInError::RefusedAfterSignIn(status);
            if let Some(line) = error.log_line() {
                emit!(SignInWarning: line);
            }
            break Err(RequestFailure::SignIn { status, error });
        }
        drop(response);
        let refusal = Refusal {
            challenge,
            used: bearer.map(|bearer| bearer.generation),
        };
        match auth.on_refused(refusal, &shared.user_side(&events)).await {
            Ok(()) => continue,
            // The bridge stops: the request gets no answer.
            Err(SignInError::Canceled) => return,
            Err(error) => {
                if let Some(line) = error.log_line() {
                    emit!(SignInWarning: line);
                }
                break Err(RequestFailure::SignIn { status, error });
            }
        }
    };
    if let Err(failure) = failure {
        let _ = events
            .send(UpstreamEvent::RequestFailed { id, failure })
            .await;
    }
}

fn insert(map: &mut HeaderMap, name: &str, value: &str) {
    if let (Ok(name), Ok(value)) = (
        HeaderName::from_bytes(name.as_bytes()),
        HeaderValue::from_str(value),
    ) {
        map.insert(name, value);
    }
}

/// Where the answer of one request goes.
struct Answer<'a> {
    id: u64,
    /// A tools/list result teaches the link the `x-mcp-header`s of the tools.
    learns_tools: bool,
    shared: &'a Shared,
    events: &'a mpsc::Sender<UpstreamEvent>,
}

impl Answer<'_> {
    /// Reads the response; `Ok` once the response line went to the session.
    async fn read(&self, mut response: reqwest::Response) -> Result<(), RequestFailure> {
        let status = response.status();
        let kind = content_type(&response);
        if !status.is_success() {
            let body = read_body(&mut response, self.shared.max_response_bytes)
                .await
                .ok();
            return self.error_body(status, kind, body).await;
        }
        match kind {
            ContentKind::Json => {
                let body = read_body(&mut response, self.shared.max_response_bytes).await?;
                if !self.line(body).await {
                    return Err(RequestFailure::Unreadable(
                        "the JSON body is not the response to the request".into(),
                    ));
                }
                Ok(())
            }
            ContentKind::EventStream => self.stream(response).await,
            ContentKind::Other(kind) => Err(RequestFailure::Unreadable(format!(
                "the response has the content type {kind}, not application/json or text/event-stream"
            ))),
        }
    }

    /// The answer of an error status: a JSON-RPC error with the request's id is the
    /// answer (400 for a header mismatch, 404 for a method the server does not have).
    async fn error_body(
        &self,
        status: StatusCode,
        kind: ContentKind,
        body: Option<Vec<u8>>,
    ) -> Result<(), RequestFailure> {
        if kind == ContentKind::Json
            && let Some(body) = body.filter(|body| is_error_for(body, self.id))
        {
            self.line(body).await;
            return Ok(());
        }
        Err(status_failure(status))
    }

    /// The events of an SSE response, until the response (or the end of the stream).
    async fn stream(&self, mut response: reqwest::Response) -> Result<(), RequestFailure> {
        let mut reader = SseReader::new(self.shared.max_response_bytes);
        let mut answered = false;
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(error) => return Err(RequestFailure::Transport(describe(error))),
            };
            let mut data = Vec::new();
            reader
                .feed(&chunk, |event| data.push(event))
                .map_err(|error| RequestFailure::Unreadable(error.to_string()))?;
            for event in data {
                answered |= self.line(event).await;
            }
            // The response ends the exchange: the stream after it carries nothing
            // for this request.
            if answered {
                return Ok(());
            }
        }
        if answered {
            Ok(())
        } else {
            Err(RequestFailure::Transport(
                "the stream of the response ended before the response".into(),
            ))
        }
    }

    /// One line for the session, read once by the reading function of every link;
    /// `true` when it is the response to this request.
    async fn line(&self, line: Vec<u8>) -> bool {
        let line = if self.learns_tools {
            self.shared.learn_tools(line, self.id)
        } else {
            line
        };
        let Some(event) = event_of_line(Line::Complete(line)) else {
            return false;
        };
        let answers = match &event {
            UpstreamEvent::Result(result) => result.id() == self.id,
            UpstreamEvent::Message(Message::Response(response)) => {
                response.id.as_u64() == Some(self.id)
            }
            UpstreamEvent::Unreadable { id, .. } => {
                id.as_ref().and_then(Value::as_u64) == Some(self.id)
            }
            _ => false,
        };
        // A session that is gone needs nothing more.
        let _ = self.events.send(event).await;
        answers
    }
}

#[derive(Debug, PartialEq, Eq)]
enum ContentKind {
    Json,
    EventStream,
    Other(String),
}

fn content_type(response: &reqwest::Response) -> ContentKind {
    let kind = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let essence = kind
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "application/json" => ContentKind::Json,
        "text/event-stream" => ContentKind::EventStream,
        "" => ContentKind::Other("(none)".into()),
        _ => ContentKind::Other(essence),
    }
}

/// The body, up to `limit` bytes, in the buffer that becomes the session's line.
async fn read_body(
    response: &mut reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, RequestFailure> {
    let too_large = || {
        RequestFailure::Unreadable(format!(
            "the response is longer than --max-response-bytes ({limit} bytes)"
        ))
    };
    let length = response.content_length().unwrap_or(0);
    if length > limit as u64 {
        return Err(too_large());
    }
    // The announced length, at most the limit, is the buffer's first size: a large
    // body grows it no more (untouched pages of a length that was not sent cost
    // no memory).
    let mut body = Vec::with_capacity(length as usize);
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > limit {
                    return Err(too_large());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(error) => return Err(RequestFailure::Transport(describe(error))),
        }
    }
}

/// Whether the body of an error status is a JSON-RPC error for the request `id`
/// (a header mismatch, a method the server does not have): then it is the answer.
/// Read only for a status that is not a success, which is rare.
fn is_error_for(text: &[u8], id: u64) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Value>,
        error: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Head>(text)
        .is_ok_and(|head| head.error.is_some() && head.id.and_then(|id| id.as_u64()) == Some(id))
}

/// Whether the body is the error -32022 (UnsupportedProtocolVersion) for the request
/// `id` whose `data.supported` lists the version the bridge speaks: the schema of
/// 2026-07-28 says "The client should choose a mutually supported version from this
/// list and retry", and that version is the only one the bridge has.
fn offers_own_version(text: &[u8], id: u64) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Value>,
        error: Option<Error>,
    }
    #[derive(serde::Deserialize)]
    struct Error {
        code: i64,
        data: Option<Data>,
    }
    #[derive(serde::Deserialize)]
    struct Data {
        supported: Vec<String>,
    }
    serde_json::from_slice::<Head>(text).is_ok_and(|head| {
        head.id.and_then(|id| id.as_u64()) == Some(id)
            && head.error.is_some_and(|error| {
                error.code == -32022
                    && error.data.is_some_and(|data| {
                        data.supported
                            .iter()
                            .any(|version| version == crate::rules::UPSTREAM_PROTOCOL_VERSION)
                    })
            })
    })
}

fn status_failure(status: StatusCode) -> RequestFailure {
    RequestFailure::Status {
        status: status.as_u16(),
        detail: status
            .canonical_reason()
            .unwrap_or("the upstream server answered with an error status")
            .to_owned(),
    }
}

/// The headers of every POST (Streamable HTTP, "Sending Messages").
pub fn base_headers(method: &str) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    insert(
        &mut map,
        headers::PROTOCOL_VERSION_HEADER,
        crate::rules::UPSTREAM_PROTOCOL_VERSION,
    );
    insert(&mut map, headers::METHOD_HEADER, method);
    map
}

/// The `x-mcp-header`s of the tools, as the last tools/list taught them.
pub(super) type ToolHeaders = std::collections::HashMap<String, Vec<ParamHeader>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_error_with_the_id_answers_a_request_with_an_error_status() {
        let error = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32020,"message":"x"}}"#;
        assert!(is_error_for(error, 3));
        assert!(!is_error_for(error, 4));
        assert!(!is_error_for(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#, 3));
        assert!(!is_error_for(
            br#"{"jsonrpc":"2.0","method":"x","params":{}}"#,
            3
        ));
        assert!(!is_error_for(b"not json", 3));
    }

    #[test]
    fn only_a_32022_that_offers_2026_07_28_for_the_request_is_retried() {
        let offer = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}"#;
        assert!(offers_own_version(offer, 3));
        assert!(!offers_own_version(offer, 4));
        let other = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"x","data":{"supported":["2027-01-01"],"requested":"2026-07-28"}}}"#;
        assert!(!offers_own_version(other, 3));
        let no_data = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"x"}}"#;
        assert!(!offers_own_version(no_data, 3));
        let mismatch = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32020,"message":"x","data":{"supported":["2026-07-28"]}}}"#;
        assert!(!offers_own_version(mismatch, 3));
        assert!(!offers_own_version(b"not json", 3));
    }

    #[test]
    fn every_post_says_what_it_carries() {
        let map = base_headers("tools/call");
        assert_eq!(map["accept"], "application/json, text/event-stream");
        assert_eq!(map["content-type"], "application/json");
        assert_eq!(map["mcp-protocol-version"], "2026-07-28");
        assert_eq!(map["mcp-method"], "tools/call");
    }
}
