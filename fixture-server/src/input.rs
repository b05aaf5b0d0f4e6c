//! Multi round-trip requests (basic/patterns/mrtr.mdx): how a tool, a prompt or a
//! resource asks the client for input with an `InputRequiredResult`, and reads the
//! answers of the retry.
//!
//! Every `InputRequiredResult` of the fixture has `inputRequests` and a sealed
//! `requestState` (see `state`), which tells the retry which round it answers. A retry
//! without `requestState` starts again at the first round; a retry whose state is
//! refused gets -32602. The input requests are built as JSON and not with rmcp's typed
//! `ElicitRequest`: rmcp's elicitation schema types would rewrite the exact
//! `requestedSchema` of the study (titles, `minLength`, enums) and refuse some
//! conformance schemas.

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Map, Value, json};

use crate::context::Call;

/// What the request says about earlier rounds.
#[derive(Clone, Debug)]
pub enum Prior {
    /// No `requestState`: the first round (any `inputResponses` are ignored).
    First,
    /// A retry with a valid state of this method and target.
    Retry {
        /// The round whose input requests the client answered.
        round: u32,
        data: Value,
        responses: Map<String, Value>,
    },
}

impl Prior {
    /// Reads `requestState` and `inputResponses` of a `tools/call`, `prompts/get` or
    /// `resources/read` on `target`.
    pub fn read(call: &Call, target: &str) -> Result<Prior, ErrorData> {
        let responses = match call.params.get("inputResponses") {
            None => Map::new(),
            Some(Value::Object(responses)) => responses.clone(),
            Some(_) => {
                return Err(invalid(
                    "The inputResponses of the request must be an object.",
                ));
            }
        };
        let sealed = match call.params.get("requestState") {
            None => return Ok(Prior::First),
            Some(Value::String(sealed)) => sealed,
            Some(_) => return Err(invalid("The requestState of the request must be a string.")),
        };
        let saved = call.host.states().open(call.method, target, sealed)?;
        Ok(Prior::Retry {
            round: saved.round,
            data: saved.data,
            responses,
        })
    }
}

/// An `InputRequiredResult` for `round`, with a state bound to the method and `target`.
pub fn input_required(
    call: &Call,
    target: &str,
    round: u32,
    data: Value,
    requests: Map<String, Value>,
) -> Value {
    let state = call.host.states().seal(call.method, target, round, data);
    json!({
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": state,
    })
}

/// A form elicitation.
pub fn form(message: &str, requested_schema: Value) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": requested_schema},
    })
}

/// A URL elicitation.
pub fn url(message: &str, url: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {"mode": "url", "message": message, "url": url},
    })
}

/// A sampling request with these `CreateMessageRequestParams`.
pub fn sampling(params: Value) -> Value {
    json!({"method": "sampling/createMessage", "params": params})
}

/// A `roots/list` request.
pub fn roots() -> Value {
    json!({"method": "roots/list"})
}

/// The `action` of an `ElicitResult`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Accept,
    Decline,
    Cancel,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Decline => "decline",
            Action::Cancel => "cancel",
        }
    }
}

/// An `ElicitResult`.
#[derive(Clone, Debug)]
pub struct Elicited {
    pub action: Action,
    pub content: Option<Map<String, Value>>,
}

impl Elicited {
    /// The string member `name` of accepted content.
    pub fn string(&self, name: &str) -> Option<&str> {
        if self.action != Action::Accept {
            return None;
        }
        self.content.as_ref()?.get(name)?.as_str()
    }
}

fn invalid(message: impl Into<String>) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_PARAMS, message.into(), None)
}

fn malformed(key: &str, kind: &str) -> ErrorData {
    invalid(format!(
        "The input response \"{key}\" is not a valid {kind}."
    ))
}

/// The `ElicitResult` under `key`; `None` when the retry has no answer for it.
pub fn elicited(responses: &Map<String, Value>, key: &str) -> Result<Option<Elicited>, ErrorData> {
    let Some(answer) = responses.get(key) else {
        return Ok(None);
    };
    let bad = || malformed(key, "ElicitResult");
    let answer = answer.as_object().ok_or_else(bad)?;
    let action = match answer.get("action").and_then(Value::as_str) {
        Some("accept") => Action::Accept,
        Some("decline") => Action::Decline,
        Some("cancel") => Action::Cancel,
        _ => return Err(bad()),
    };
    let content = match answer.get("content") {
        None => None,
        Some(Value::Object(content)) => Some(content.clone()),
        Some(_) => return Err(bad()),
    };
    Ok(Some(Elicited { action, content }))
}

/// The first text of the `CreateMessageResult` under `key`: `Some(None)` when it has no
/// text block, `None` when the retry has no answer for it.
pub fn sampled_text(
    responses: &Map<String, Value>,
    key: &str,
) -> Result<Option<Option<String>>, ErrorData> {
    let Some(answer) = responses.get(key) else {
        return Ok(None);
    };
    let bad = || malformed(key, "CreateMessageResult");
    let answer = answer.as_object().ok_or_else(bad)?;
    if !answer.get("role").is_some_and(Value::is_string)
        || !answer.get("model").is_some_and(Value::is_string)
    {
        return Err(bad());
    }
    let blocks: Vec<&Value> = match answer.get("content") {
        Some(Value::Array(blocks)) => blocks.iter().collect(),
        Some(block @ Value::Object(_)) => vec![block],
        _ => return Err(bad()),
    };
    let text = blocks.into_iter().find_map(|block| {
        (block.get("type")? == "text")
            .then(|| block.get("text")?.as_str().map(str::to_owned))
            .flatten()
    });
    Ok(Some(text))
}

/// The root URIs of the `ListRootsResult` under `key`; `None` when the retry has no
/// answer for it.
pub fn root_uris(
    responses: &Map<String, Value>,
    key: &str,
) -> Result<Option<Vec<String>>, ErrorData> {
    let Some(answer) = responses.get(key) else {
        return Ok(None);
    };
    let bad = || malformed(key, "ListRootsResult");
    let roots = answer
        .get("roots")
        .and_then(Value::as_array)
        .ok_or_else(bad)?;
    roots
        .iter()
        .map(|root| {
            root.get("uri")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(bad)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn answers_are_read_or_refused() {
        let responses = map(json!({
            "f": {"action": "accept", "content": {"name": "Ada"}},
            "s": {"role": "assistant", "model": "m", "content": [{"type": "image", "data": "", "mimeType": "image/png"}, {"type": "text", "text": "hi"}]},
            "r": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]},
            "bad": {"action": "maybe"},
        }));
        assert_eq!(
            elicited(&responses, "f").unwrap().unwrap().string("name"),
            Some("Ada")
        );
        assert!(elicited(&responses, "missing").unwrap().is_none());
        assert!(elicited(&responses, "bad").is_err());
        assert_eq!(
            sampled_text(&responses, "s").unwrap(),
            Some(Some("hi".into()))
        );
        assert!(sampled_text(&responses, "f").is_err());
        assert_eq!(
            root_uris(&responses, "r").unwrap(),
            Some(vec!["file:///a".to_string(), "file:///b".to_string()])
        );
        assert!(root_uris(&responses, "f").is_err());
    }
}
