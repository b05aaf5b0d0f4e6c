//! `completion/complete` (server/utilities/completion.mdx). Only served when the server
//! declares `completions`; otherwise the method is unknown (-32601).

use rmcp::model::ErrorData;
use serde_json::Value;

use super::invalid_params;
use crate::context::Call;
use crate::session::Session;

pub fn complete(session: &Session, call: &Call) -> Result<Value, ErrorData> {
    let params = &call.params;
    let reference = params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid_params("The request has no ref object."))?;
    let valid_ref = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => reference.get("name").is_some_and(Value::is_string),
        Some("ref/resource") => reference.get("uri").is_some_and(Value::is_string),
        _ => false,
    };
    if !valid_ref {
        return Err(invalid_params(
            "The ref must be {type: \"ref/prompt\", name} or {type: \"ref/resource\", uri}.",
        ));
    }
    let argument = params.get("argument").and_then(Value::as_object);
    let valid_argument = argument.is_some_and(|argument| {
        argument.get("name").is_some_and(Value::is_string)
            && argument.get("value").is_some_and(Value::is_string)
    });
    if !valid_argument {
        return Err(invalid_params(
            "The argument must be {name, value} with two strings.",
        ));
    }
    let handler = session
        .catalog
        .completion
        .ok_or_else(|| invalid_params("The server has no completions."))?;
    Ok(handler(params))
}
