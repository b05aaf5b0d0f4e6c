//! JSON-RPC 2.0 messages over `serde_json::Value`.
//!
//! A frame is classified by taking its object apart, so that large `params` and
//! `result` values move into the message without a copy.

use serde_json::{Map, Value};

/// One JSON-RPC message, taken apart.
#[derive(Debug, PartialEq)]
pub enum Message {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

#[derive(Debug, PartialEq)]
pub struct Request {
    /// A string or a number.
    pub id: Value,
    pub method: String,
    /// An object, when the frame had `params`.
    pub params: Option<Map<String, Value>>,
}

#[derive(Debug, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Option<Map<String, Value>>,
}

#[derive(Debug, PartialEq)]
pub struct Response {
    /// The id as the peer wrote it (any JSON value; a valid one is a string or a number).
    pub id: Value,
    pub outcome: Outcome,
}

#[derive(Debug, PartialEq)]
pub enum Outcome {
    Result(Value),
    /// The error object as the peer wrote it.
    Error(Value),
}

/// Why a frame is not a JSON-RPC message that MCP accepts.
#[derive(Debug, PartialEq)]
pub struct Invalid {
    /// The id of the frame when it has a usable one, for the error response.
    pub id: Option<Value>,
    pub kind: InvalidKind,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum InvalidKind {
    /// Not an object with `jsonrpc: "2.0"` and a valid combination of members.
    Shape,
    /// A request whose `params` is not an object.
    Params,
    /// A notification (a string `method` and no `id`) that is not valid: JSON-RPC
    /// forbids any answer to a notification, so it is dropped.
    Notification,
}

impl Message {
    /// Classifies one parsed frame.
    pub fn classify(frame: Value) -> Result<Self, Invalid> {
        let Value::Object(mut object) = frame else {
            return Err(Invalid {
                id: None,
                kind: InvalidKind::Shape,
            });
        };
        let id = object.remove("id");
        let usable_id = id.as_ref().filter(|id| is_valid_id(id)).cloned();
        let invalid = |kind| {
            Err(Invalid {
                id: usable_id.clone(),
                kind,
            })
        };
        let notification = id.is_none() && object.get("method").is_some_and(Value::is_string);
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return invalid(if notification {
                InvalidKind::Notification
            } else {
                InvalidKind::Shape
            });
        }
        match object.remove("method") {
            Some(Value::String(method)) => {
                let params = match object.remove("params") {
                    None => None,
                    Some(Value::Object(params)) => Some(params),
                    Some(_) if notification => return invalid(InvalidKind::Notification),
                    Some(_) => return invalid(InvalidKind::Params),
                };
                match id {
                    None => Ok(Self::Notification(Notification { method, params })),
                    Some(id) if is_valid_id(&id) => {
                        Ok(Self::Request(Request { id, method, params }))
                    }
                    Some(_) => invalid(InvalidKind::Shape),
                }
            }
            Some(_) => invalid(InvalidKind::Shape),
            None => {
                let Some(id) = id else {
                    return invalid(InvalidKind::Shape);
                };
                let outcome = match (object.remove("result"), object.remove("error")) {
                    (Some(result), None) => Outcome::Result(result),
                    (None, Some(error)) => Outcome::Error(error),
                    _ => return invalid(InvalidKind::Shape),
                };
                Ok(Self::Response(Response { id, outcome }))
            }
        }
    }
}

/// MCP ids are strings or numbers, never null.
pub fn is_valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_))
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`
pub fn result_frame(id: Value, result: Value) -> Value {
    envelope(Some(id), [("result", result)])
}

/// `{"jsonrpc":"2.0","id":…,"error":…}`
pub fn error_frame(id: Value, error: Value) -> Value {
    envelope(Some(id), [("error", error)])
}

/// `{"jsonrpc":"2.0","method":…,"params":…}`, without `params` when there are none.
pub fn notification_frame(method: &str, params: Option<Map<String, Value>>) -> Value {
    match params {
        Some(params) => envelope(
            None,
            [("method", method.into()), ("params", Value::Object(params))],
        ),
        None => envelope(None, [("method", method.into())]),
    }
}

/// `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`
pub fn request_frame(id: Value, method: &str, params: Map<String, Value>) -> Value {
    envelope(
        Some(id),
        [("method", method.into()), ("params", Value::Object(params))],
    )
}

/// A frame built by moving its members in: `json!` would copy every value, a
/// 64 MiB result too.
fn envelope<const N: usize>(id: Option<Value>, members: [(&str, Value); N]) -> Value {
    let mut frame = Map::with_capacity(N + 2);
    frame.insert("jsonrpc".into(), Value::String("2.0".into()));
    if let Some(id) = id {
        frame.insert("id".into(), id);
    }
    for (name, value) in members {
        frame.insert(name.into(), value);
    }
    Value::Object(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn classify(frame: Value) -> Result<Message, Invalid> {
        Message::classify(frame)
    }

    #[test]
    fn requests_notifications_and_responses() {
        let request = classify(json!({"jsonrpc":"2.0","id":0,"method":"ping"})).unwrap();
        assert_eq!(
            request,
            Message::Request(Request {
                id: json!(0),
                method: "ping".into(),
                params: None
            })
        );
        let note = classify(json!({"method":"notifications/initialized","jsonrpc":"2.0"}));
        assert!(
            matches!(note, Ok(Message::Notification(n)) if n.method == "notifications/initialized")
        );
        let response = classify(json!({"jsonrpc":"2.0","id":"b-1","result":{}})).unwrap();
        assert!(matches!(
            response,
            Message::Response(Response {
                outcome: Outcome::Result(_),
                ..
            })
        ));
        let error = classify(json!({"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}));
        assert!(matches!(
            error,
            Ok(Message::Response(Response {
                outcome: Outcome::Error(_),
                ..
            }))
        ));
    }

    #[test]
    fn invalid_shapes_keep_a_usable_id() {
        let cases = [
            (json!([1, 2]), None, InvalidKind::Shape),
            (json!("x"), None, InvalidKind::Shape),
            (
                json!({"id":5,"method":"ping"}),
                Some(json!(5)),
                InvalidKind::Shape,
            ),
            (
                json!({"jsonrpc":"1.0","id":5,"method":"ping"}),
                Some(json!(5)),
                InvalidKind::Shape,
            ),
            (
                json!({"jsonrpc":"2.0","id":{"a":1},"method":"ping"}),
                None,
                InvalidKind::Shape,
            ),
            (
                json!({"jsonrpc":"2.0","id":null,"method":"ping"}),
                None,
                InvalidKind::Shape,
            ),
            (
                json!({"jsonrpc":"2.0","id":6,"method":7}),
                Some(json!(6)),
                InvalidKind::Shape,
            ),
            (
                json!({"jsonrpc":"2.0","id":6,"method":"x","params":[1]}),
                Some(json!(6)),
                InvalidKind::Params,
            ),
            (
                json!({"jsonrpc":"2.0","id":6,"result":1,"error":{}}),
                Some(json!(6)),
                InvalidKind::Shape,
            ),
            (
                json!({"jsonrpc":"2.0","result":1}),
                None,
                InvalidKind::Shape,
            ),
            (
                json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":null}),
                None,
                InvalidKind::Notification,
            ),
            (
                json!({"method":"notifications/initialized"}),
                None,
                InvalidKind::Notification,
            ),
            (
                json!({"jsonrpc":"2.0","method":5}),
                None,
                InvalidKind::Shape,
            ),
        ];
        for (frame, id, kind) in cases {
            assert_eq!(
                classify(frame.clone()),
                Err(Invalid { id, kind }),
                "{frame}"
            );
        }
    }
}
