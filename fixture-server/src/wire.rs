//! JSON-RPC 2.0 frames as MCP 2026-07-28 uses them on stdio: parsing one input line,
//! and writing responses, errors and notifications as single lines.
//!
//! The fixture keeps frames as `serde_json::Value` here (not rmcp's typed messages): it
//! must answer malformed lines with the exact JSON-RPC errors, and echo request ids as
//! the client wrote them.

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Map, Value, json};

/// A request id as the client wrote it: a string or an integer, echoed verbatim.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestId(Value);

impl RequestId {
    /// Accepts the two id types of MCP: a string or an integer (never null, never a
    /// fraction).
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(_) => Some(Self(value.clone())),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(Self(value.clone())),
            _ => None,
        }
    }

    /// The id as JSON, for a response or for a `subscriptionId`.
    pub fn value(&self) -> &Value {
        &self.0
    }

    /// A key that tells `"1"` from `1`, for the table of requests in flight.
    pub fn key(&self) -> String {
        self.0.to_string()
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A request of the client.
#[derive(Debug)]
pub struct Request {
    pub id: RequestId,
    pub method: String,
    /// The `params` object; `None` when the request has none.
    pub params: Option<Map<String, Value>>,
}

/// A notification of the client.
#[derive(Debug)]
pub struct Notification {
    pub method: String,
    pub params: Option<Map<String, Value>>,
}

/// One parsed input line.
#[derive(Debug)]
pub enum Message {
    Request(Request),
    Notification(Notification),
    /// A JSON-RPC response. 2026-07-28 clients never send responses (the server sends
    /// no requests), so the caller only logs it.
    Response,
    /// A notification that is not valid (no `"jsonrpc": "2.0"`, or params that are not
    /// an object). A notification never gets a response, so the caller only logs it
    /// (cancellation.mdx: malformed notifications SHOULD be ignored).
    BadNotification(String),
}

/// A line that is not a valid message, with the error to answer. `id` is `None` when the
/// id could not be read; the error then has no `id` member (the 2026-07-28 schema types
/// `id` as a string or an integer, so `null` would not validate).
#[derive(Debug)]
pub struct Refusal {
    pub id: Option<RequestId>,
    pub error: ErrorData,
}

/// Parses one line (without its line end).
pub fn parse(line: &[u8]) -> Result<Message, Box<Refusal>> {
    let refuse = |id: Option<RequestId>, error: ErrorData| Box::new(Refusal { id, error });
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        refuse(
            None,
            ErrorData::new(
                ErrorCode::PARSE_ERROR,
                format!("The line is not valid JSON: {e}."),
                None,
            ),
        )
    })?;
    let mut object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(refuse(
                None,
                invalid_request("The message is a batch: MCP does not use JSON-RPC batches."),
            ));
        }
        _ => {
            return Err(refuse(
                None,
                invalid_request("The message is not a JSON-RPC object."),
            ));
        }
    };
    if !object.contains_key("id") && matches!(object.get("method"), Some(Value::String(_))) {
        return Ok(notification_message(object));
    }
    let id = match object.get("id") {
        None => None,
        Some(raw) => Some(RequestId::from_value(raw).ok_or_else(|| {
            refuse(
                None,
                invalid_request("The id of a request must be a string or an integer."),
            )
        })?),
    };
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(refuse(
            id,
            invalid_request("The message does not have \"jsonrpc\": \"2.0\"."),
        ));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(_) => {
            return Err(refuse(
                id,
                invalid_request("The method of the message must be a string."),
            ));
        }
        None if object.contains_key("result") || object.contains_key("error") => {
            return Ok(Message::Response);
        }
        None => {
            return Err(refuse(id, invalid_request("The message has no method.")));
        }
    };
    let params = match object.remove("params") {
        None => None,
        Some(Value::Object(params)) => Some(params),
        Some(_) => {
            return Err(refuse(
                id,
                invalid_request("The params of the message must be an object."),
            ));
        }
    };
    match id {
        Some(id) => Ok(Message::Request(Request { id, method, params })),
        None => Err(refuse(None, invalid_request("The message has no id."))),
    }
}

/// A message with a method and without id.
fn notification_message(mut object: Map<String, Value>) -> Message {
    let Some(Value::String(method)) = object.remove("method") else {
        return Message::BadNotification("a notification without method".into());
    };
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Message::BadNotification(format!(
            "the notification {method} does not have \"jsonrpc\": \"2.0\""
        ));
    }
    match object.remove("params") {
        None => Message::Notification(Notification {
            method,
            params: None,
        }),
        Some(Value::Object(params)) => Message::Notification(Notification {
            method,
            params: Some(params),
        }),
        Some(_) => Message::BadNotification(format!(
            "the params of the notification {method} are not an object"
        )),
    }
}

/// A `-32600` error.
pub fn invalid_request(message: impl Into<String>) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_REQUEST, message.into(), None)
}

/// A result response line.
pub fn response(id: &RequestId, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id.value(), "result": result}).to_string()
}

/// An error response line; without `id` when the id is unknown.
pub fn error(id: Option<&RequestId>, error: &ErrorData) -> String {
    let mut frame = Map::new();
    frame.insert("jsonrpc".into(), "2.0".into());
    if let Some(id) = id {
        frame.insert("id".into(), id.value().clone());
    }
    frame.insert(
        "error".into(),
        serde_json::to_value(error).unwrap_or_else(|_| json!({"code": -32603, "message": ""})),
    );
    Value::Object(frame).to_string()
}

/// A notification line; without `params` when `params` is `None`.
pub fn notification(method: &str, params: Option<Value>) -> String {
    match params {
        Some(params) => json!({"jsonrpc": "2.0", "method": method, "params": params}),
        None => json!({"jsonrpc": "2.0", "method": method}),
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(line: &str) -> Box<Refusal> {
        match parse(line.as_bytes()) {
            Err(refusal) => refusal,
            Ok(message) => panic!("{line} parsed as {message:?}"),
        }
    }

    #[test]
    fn a_request_keeps_its_id_as_written() {
        let Ok(Message::Request(request)) =
            parse(br#"{"jsonrpc":"2.0","id":"7","method":"tools/list","params":{}}"#)
        else {
            panic!("not a request");
        };
        assert_eq!(request.id.value(), &json!("7"));
        assert_ne!(request.id.key(), RequestId(json!(7)).key());
    }

    #[test]
    fn bad_lines_get_the_json_rpc_codes() {
        assert_eq!(refusal("{").error.code, ErrorCode::PARSE_ERROR);
        assert_eq!(refusal("[]").error.code, ErrorCode::INVALID_REQUEST);
        let null_id = refusal(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#);
        assert!(null_id.id.is_none());
        let no_version = refusal(r#"{"id":3,"method":"x"}"#);
        assert_eq!(no_version.id, Some(RequestId(json!(3))));
        assert_eq!(
            refusal(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#)
                .error
                .code,
            ErrorCode::INVALID_REQUEST
        );
    }

    #[test]
    fn a_malformed_notification_gets_no_error() {
        for line in [
            r#"{"method":"notifications/cancelled","params":{"requestId":1}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}"#,
        ] {
            assert!(matches!(
                parse(line.as_bytes()),
                Ok(Message::BadNotification(_))
            ));
        }
    }

    #[test]
    fn an_error_without_id_has_no_id_member() {
        let line = error(None, &invalid_request("x"));
        assert_eq!(
            line,
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}"#
        );
    }
}
