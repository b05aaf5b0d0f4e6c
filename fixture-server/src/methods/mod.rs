//! The requests and notifications of MCP 2026-07-28 (schema.json `ClientRequest`,
//! `ClientNotification`), one file per method group.

mod call;
mod complete;
mod discover;
mod get_prompt;
mod listen;
mod lists;
mod read;

use std::sync::Arc;

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::catalog::{After, ToolReply};
use crate::context::{Call, Host};
use crate::meta::{self, SUPPORTED_VERSIONS};
use crate::session::Session;
use crate::wire::{self, Notification, Request, RequestId};

/// The requests of a 2026-07-28 client that the fixture serves besides the feature
/// requests of `mcp_names::FEATURE_REQUESTS`.
const SESSION_METHODS: [&str; 2] = ["server/discover", "subscriptions/listen"];

/// Handles one request: `subscriptions/listen` at once (its acknowledgment must come
/// before the effects of any later request), every other request on a task of its own.
pub fn request(session: &Arc<Session>, request: Request) {
    let Request { id, method, params } = request;
    let Some(method) = known(session, &method) else {
        session
            .outbox
            .answer(&id, wire::error(Some(&id), &method_not_found(&method)));
        return;
    };
    if method == "subscriptions/listen" {
        if let Err(error) = listen::open(session, &id, params.as_ref()) {
            session.outbox.answer(&id, wire::error(Some(&id), &error));
        }
        return;
    }
    let token = match session.begin(&id) {
        Ok(token) => token,
        Err(error) => {
            session.outbox.answer(&id, wire::error(Some(&id), &error));
            return;
        }
    };
    let session = Arc::clone(session);
    tokio::spawn(async move {
        let outcome = run(&session, id.clone(), method, params, token).await;
        let then = outcome.as_ref().ok().and_then(|reply| reply.then);
        session.finish(&id, outcome.map(|reply| reply.result));
        if let Some(After::Exit { code, delay }) = then {
            tokio::time::sleep(delay).await;
            session.exit(code);
        }
    });
}

/// Whether the server serves `method` (Streamable HTTP answers 404 before the dispatch
/// when it does not).
pub fn serves(session: &Session, method: &str) -> bool {
    known(session, method).is_some()
}

/// The name of a method the server serves, as a `'static` str.
fn known(session: &Session, method: &str) -> Option<&'static str> {
    let method = SESSION_METHODS
        .iter()
        .chain(&mcp_names::FEATURE_REQUESTS)
        .copied()
        .find(|known| *known == method)?;
    if method == "completion/complete" && session.catalog.completion.is_none() {
        return None;
    }
    Some(method)
}

/// The -32601 error of a method the server does not serve.
pub fn method_not_found(method: &str) -> ErrorData {
    if method == "initialize" {
        // A legacy client: name the supported versions (basic/versioning.mdx).
        return ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "The server does not have the method initialize: it speaks MCP {} only, \
                 where every request carries params._meta and server/discover replaces \
                 initialize.",
                SUPPORTED_VERSIONS.join(", ")
            ),
            Some(json!({"supported": SUPPORTED_VERSIONS})),
        );
    }
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("The server does not have the method {method}."),
        None,
    )
}

async fn run(
    session: &Arc<Session>,
    id: RequestId,
    method: &'static str,
    params: Option<Map<String, Value>>,
    token: CancellationToken,
) -> Result<ToolReply, ErrorData> {
    let meta = meta::check(params.as_ref())?;
    let call = Call {
        host: Arc::clone(session) as Arc<dyn Host>,
        id,
        method,
        params: params.unwrap_or_default(),
        meta,
        token,
    };
    let result = match method {
        "server/discover" => discover::discover(session),
        "tools/list" => lists::tools(session, &call)?,
        "prompts/list" => lists::prompts(session, &call)?,
        "resources/list" => lists::resources(session, &call)?,
        "resources/templates/list" => lists::templates(session, &call)?,
        "resources/read" => read::read(session, &call)?,
        "prompts/get" => get_prompt::get(session, call).await?,
        "completion/complete" => complete::complete(session, &call)?,
        "tools/call" => return call::call(session, call).await,
        _ => return Err(method_not_found(method)),
    };
    Ok(ToolReply { result, then: None })
}

/// Handles one notification. 2026-07-28 clients send only `notifications/cancelled`.
pub fn notification(session: &Session, notification: Notification) {
    match notification.method.as_str() {
        "notifications/cancelled" => {
            let id = notification
                .params
                .as_ref()
                .and_then(|params| params.get("requestId"))
                .and_then(RequestId::from_value);
            // Unknown, finished or malformed: ignored (cancellation.mdx §Error Handling).
            if let Some(id) = id {
                session.cancel(&id);
            }
        }
        other => crate::warning!(
            "stdio",
            "ignored the notification {other}: a client of MCP 2026-07-28 sends only notifications/cancelled"
        ),
    }
}

/// A -32602 error.
pub fn invalid_params(message: impl Into<String>) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_PARAMS, message.into(), None)
}

/// The required string member `name` of the params.
pub fn required_string<'a>(
    params: &'a Map<String, Value>,
    name: &str,
) -> Result<&'a str, ErrorData> {
    match params.get(name) {
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(invalid_params(format!(
            "The {name} of the request must be a string."
        ))),
        None => Err(invalid_params(format!("The request has no {name}."))),
    }
}
