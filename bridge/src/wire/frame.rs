//! JSON-RPC 2.0 messages over `serde_json::Value`.
//!
//! A line is parsed here (with the nesting limit), and a frame is classified by
//! taking its object apart, so that large `params` and `result` values move into
//! the message without a copy.

use super::id::is_valid_id;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// The maximum nesting of a frame: the recursion limit of serde_json, which refuses
/// deeper frames without using the stack.
pub const MAX_DEPTH: usize = 127;

/// The levels of nesting of a value: 0 for a scalar, 1 for `[]` or `{}`. The
/// recursion is bounded: every value of a peer was parsed within [`MAX_DEPTH`].
pub fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Why a line is not a frame.
#[derive(Debug, PartialEq, Eq)]
pub enum ParseFailure {
    /// Not JSON (also invalid UTF-8).
    NotJson,
    /// JSON nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

/// Parses one line. Blank lines are `Ok(None)`.
pub fn parse(line: &[u8]) -> Result<Option<Value>, ParseFailure> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(line)
        .map(Some)
        .map_err(|error| failure_of(&error).unwrap_or(ParseFailure::NotJson))
}

/// The failure of a parse that is not about the shape of the value: `None` for a
/// JSON text that parsed but did not fit (a member twice).
pub fn failure_of(error: &serde_json::Error) -> Option<ParseFailure> {
    if error.to_string().starts_with("recursion limit exceeded") {
        Some(ParseFailure::TooDeep)
    } else if error.is_data() {
        None
    } else {
        Some(ParseFailure::NotJson)
    }
}

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

/// The members of a JSON-RPC frame. A line parses straight into this, which skips
/// the map of the top level; unknown members are left out. The one-level reading
/// of `raw` builds it from the text of the members.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Envelope {
    #[serde(default, deserialize_with = "present")]
    pub(super) jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(super) id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(super) method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(super) params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(super) result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(super) error: Option<Value>,
}

/// A member that is present, `null` too (an `Option` alone reads `null` as absent).
pub(super) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Why a line is not a message.
#[derive(Debug, PartialEq)]
pub enum LineFailure {
    /// Not JSON, or too deep.
    Parse(ParseFailure),
    /// JSON, but not a JSON-RPC message that MCP accepts.
    Invalid(Invalid),
}

impl Message {
    /// Parses one line into a message; blank lines are `Ok(None)`.
    pub fn parse(line: &[u8]) -> Result<Option<Self>, LineFailure> {
        match line.iter().find(|byte| !byte.is_ascii_whitespace()) {
            None => return Ok(None),
            Some(b'{') => {}
            // A batch or a scalar is JSON, but not a message of MCP.
            Some(_) => {
                return Err(match parse(line) {
                    Ok(_) => LineFailure::Invalid(Invalid {
                        id: None,
                        kind: InvalidKind::Shape,
                    }),
                    Err(failure) => LineFailure::Parse(failure),
                });
            }
        }
        // JSON is UTF-8 throughout, unknown members too, which the envelope skips
        // without reading: the whole line is checked first (and parses faster as text).
        let Ok(text) = std::str::from_utf8(line) else {
            return Err(LineFailure::Parse(ParseFailure::NotJson));
        };
        match serde_json::from_str::<Envelope>(text) {
            Ok(envelope) => envelope.classify().map(Some).map_err(LineFailure::Invalid),
            Err(error) => Err(match failure_of(&error) {
                Some(failure) => LineFailure::Parse(failure),
                // A member twice: an object, but not a frame.
                None => LineFailure::Invalid(Invalid {
                    id: None,
                    kind: InvalidKind::Shape,
                }),
            }),
        }
    }

    /// Classifies one parsed frame.
    pub fn classify(frame: Value) -> Result<Self, Invalid> {
        let Value::Object(mut object) = frame else {
            return Err(Invalid {
                id: None,
                kind: InvalidKind::Shape,
            });
        };
        let mut take = |name: &str| object.remove(name);
        Envelope {
            jsonrpc: take("jsonrpc"),
            id: take("id"),
            method: take("method"),
            params: take("params"),
            result: take("result"),
            error: take("error"),
        }
        .classify()
    }
}

impl Envelope {
    pub(super) fn classify(self) -> Result<Message, Invalid> {
        let Envelope {
            jsonrpc,
            id,
            method,
            params,
            result,
            error,
        } = self;
        let usable_id = id.as_ref().filter(|id| is_valid_id(id)).cloned();
        let invalid = |kind| {
            Err(Invalid {
                id: usable_id.clone(),
                kind,
            })
        };
        let notification = id.is_none() && method.as_ref().is_some_and(Value::is_string);
        if jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
            return invalid(if notification {
                InvalidKind::Notification
            } else {
                InvalidKind::Shape
            });
        }
        match method {
            Some(Value::String(method)) => {
                let params = match params {
                    None => None,
                    Some(Value::Object(params)) => Some(params),
                    Some(_) if notification => return invalid(InvalidKind::Notification),
                    Some(_) => return invalid(InvalidKind::Params),
                };
                match id {
                    None => Ok(Message::Notification(Notification { method, params })),
                    Some(id) if is_valid_id(&id) => {
                        Ok(Message::Request(Request { id, method, params }))
                    }
                    Some(_) => invalid(InvalidKind::Shape),
                }
            }
            Some(_) => invalid(InvalidKind::Shape),
            None => {
                let Some(id) = id else {
                    return invalid(InvalidKind::Shape);
                };
                let outcome = match (result, error) {
                    (Some(result), None) => Outcome::Result(result),
                    (None, Some(error)) => Outcome::Error(error),
                    _ => return invalid(InvalidKind::Shape),
                };
                Ok(Message::Response(Response { id, outcome }))
            }
        }
    }
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

    #[test]
    fn parse_tells_deep_frames_from_broken_ones() {
        assert_eq!(parse(b"  "), Ok(None));
        assert_eq!(parse(b"{\"a\":"), Err(ParseFailure::NotJson));
        assert_eq!(parse(b"\xff\xfe"), Err(ParseFailure::NotJson));
        assert_eq!(parse(br#"{"a":"\xff"}"#), Err(ParseFailure::NotJson));
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(parse(deep.as_bytes()), Err(ParseFailure::TooDeep));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(ok.as_bytes()).is_ok());
    }

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

    #[test]
    fn lines_parse_straight_into_messages() {
        assert_eq!(Message::parse(b" \t"), Ok(None));
        let ping = Message::parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping","x":[1]}"#);
        assert_eq!(
            ping,
            Ok(Some(Message::Request(Request {
                id: json!(1),
                method: "ping".into(),
                params: None
            })))
        );
        let shape = Err(LineFailure::Invalid(Invalid {
            id: None,
            kind: InvalidKind::Shape,
        }));
        assert_eq!(Message::parse(b"[1,2]"), shape);
        assert_eq!(Message::parse(b"7"), shape);
        assert_eq!(
            Message::parse(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#),
            shape
        );
        let not_json = Err(LineFailure::Parse(ParseFailure::NotJson));
        assert_eq!(Message::parse(b"[1,"), not_json);
        assert_eq!(
            Message::parse(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}"),
            not_json
        );
        assert_eq!(Message::parse(br#"{"jsonrpc":"2.0"} x"#), not_json);
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{{\"a\":{}{}}}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(
            Message::parse(deep.as_bytes()),
            Err(LineFailure::Parse(ParseFailure::TooDeep))
        );
    }
}
