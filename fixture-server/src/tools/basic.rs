//! The plain tools: echo, add, slow, progress, bare_array, structured, and the optional
//! array_output, stray_param_header and param_header_not_a_token.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ErrorData};
use serde_json::{Value, json};

use super::args::Args;
use super::text;
use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments, read_only, tool};

/// echo, add, slow, progress, bare_array, structured (the order of `tools/list`).
pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            tool: read_only(tool(
                "echo",
                "Sends back the text.",
                json!({
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "The text to send back."}},
                    "required": ["text"],
                }),
            )),
            handler: |call| Box::pin(echo(call)),
            switch: None,
        },
        ToolSpec {
            tool: read_only(tool(
                "add",
                "Adds two integers.",
                json!({
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "description": "Left operand"},
                        "b": {"type": "integer", "description": "Right operand"},
                    },
                    "required": ["a", "b"],
                }),
            )),
            handler: |call| Box::pin(add(call)),
            switch: None,
        },
        ToolSpec {
            tool: read_only(tool(
                "slow",
                "Sleeps for ms milliseconds; a cancellation stops it.",
                json!({
                    "type": "object",
                    "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": u32::MAX, "description": "How long to sleep, in milliseconds"}},
                    "required": ["ms"],
                }),
            )),
            handler: |call| Box::pin(slow(call)),
            switch: None,
        },
        ToolSpec {
            tool: read_only(tool(
                "progress",
                "Sends count progress notifications (only for a request with a progress token), ms milliseconds apart.",
                json!({
                    "type": "object",
                    "properties": {
                        "count": {"type": "integer", "minimum": 0, "maximum": u32::MAX, "description": "How many notifications"},
                        "ms": {"type": "integer", "minimum": 0, "maximum": u32::MAX, "default": 0, "description": "Milliseconds between two notifications"},
                    },
                    "required": ["count"],
                }),
            )),
            handler: |call| Box::pin(progress(call)),
            switch: None,
        },
        ToolSpec {
            tool: read_only(tool(
                "bare_array",
                "Counts the values: its schema has arrays without an items schema.",
                bare_array_schema(),
            )),
            handler: |call| Box::pin(bare_array(call)),
            switch: None,
        },
        ToolSpec {
            tool: read_only(tool(
                "structured",
                "Gives the text and its length in bytes as structured content.",
                json!({
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "Any text"}},
                    "required": ["text"],
                }),
            ))
            .with_raw_output_schema(Arc::new(object(json!({
                "type": "object",
                "properties": {"text": {"type": "string"}, "length": {"type": "integer"}},
                "required": ["text", "length"],
            })))),
            handler: |call| Box::pin(structured(call)),
            switch: None,
        },
    ]
}

/// `array_output`: an `outputSchema` of type array (in-process tests only: the
/// TypeScript SDK 1.x refuses it).
pub fn array_output() -> ToolSpec {
    ToolSpec {
        tool: read_only(tool(
            "array_output",
            "Gives the structured content [1,2,3]: its outputSchema is an array.",
            no_arguments(),
        ))
        .with_raw_output_schema(Arc::new(object(json!({
            "type": "array",
            "items": {"type": "integer"},
        })))),
        handler: |call| Box::pin(array_output_call(call)),
        switch: None,
    }
}

/// `stray_param_header`: an `x-mcp-header` on the `items` of an array, which no
/// client can mirror (SEP-2243: a tool with such an annotation is not valid).
pub fn stray_param_header() -> ToolSpec {
    ToolSpec {
        tool: read_only(tool(
            "stray_param_header",
            "Has an x-mcp-header on the items of an array.",
            json!({
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}},
                },
            }),
        )),
        handler: |call| Box::pin(stray_param_header_call(call)),
        switch: None,
    }
}

async fn stray_param_header_call(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&["tags"])?;
    Ok(text("stray_param_header"))
}

/// `stray_param_header_in_any_of`: an `x-mcp-header` in a branch of `anyOf`, which a
/// client cannot know to apply (SEP-2243: a tool with such an annotation is not
/// valid).
pub fn stray_param_header_in_any_of() -> ToolSpec {
    ToolSpec {
        tool: read_only(tool(
            "stray_param_header_in_any_of",
            "Has an x-mcp-header in a branch of anyOf.",
            json!({
                "type": "object",
                "properties": {
                    "label": {"anyOf": [{"type": "string", "x-mcp-header": "Label"}, {"type": "integer"}]},
                },
            }),
        )),
        handler: |call| Box::pin(stray_param_header_in_any_of_call(call)),
        switch: None,
    }
}

async fn stray_param_header_in_any_of_call(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&["label"])?;
    Ok(text("stray_param_header_in_any_of"))
}

fn object(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// The schema of bare_array, exactly as the study gives it.
fn bare_array_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "values": {"type": "array"},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
            "choice": {"anyOf": [{"type": "array"}, {"type": "string"}]},
        },
        "required": ["values"],
        "additionalProperties": false,
    })
}

async fn echo(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Ok(text(Args::of(&call).string("text")?))
}

async fn add(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let args = Args::of(&call);
    let (a, b) = (args.int("a")?, args.int("b")?);
    let sum = a.checked_add(b).ok_or_else(|| {
        ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            "The sum of a and b does not fit in a 64-bit integer.",
            None,
        )
    })?;
    Ok(text(sum.to_string()))
}

async fn slow(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let ms = Args::of(&call).int_in("ms", 0, u32::MAX.into())?;
    call.call
        .sleep(Duration::from_millis(ms.unsigned_abs()))
        .await
        .map_err(|_| cancelled())?;
    Ok(text(format!("slept {ms} ms")))
}

async fn progress(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let args = Args::of(&call);
    let count = args.int_in("count", 0, u32::MAX.into())?;
    let ms = args.opt_int_in("ms", 0, u32::MAX.into())?.unwrap_or(0);
    // Without a progress token there is nothing to send, and nothing to wait between.
    let steps = if call.call.meta.progress_token.is_some() {
        count
    } else {
        0
    };
    for step in 1..=steps {
        if call.call.token.is_cancelled() {
            return Err(cancelled());
        }
        call.call.progress(
            step as f64,
            Some(count as f64),
            Some(format!("Step {step} of {count}")),
        );
        if step < count && ms > 0 {
            call.call
                .sleep(Duration::from_millis(ms.unsigned_abs()))
                .await
                .map_err(|_| cancelled())?;
        }
    }
    Ok(text(format!("sent {count} progress notifications")))
}

async fn bare_array(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let args = Args::of(&call);
    args.only(&["values", "pair", "choice"])?;
    let wrong = |name: &str, expected: &str| {
        ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!("The argument '{name}' of the tool bare_array must be {expected}."),
            None,
        )
    };
    let count = match args.get("values") {
        None => 0,
        Some(Value::Array(values)) => values.len(),
        Some(_) => return Err(wrong("values", "an array")),
    };
    if let Some(pair) = args.get("pair") {
        let valid = pair.as_array().is_some_and(|pair| {
            pair.len() <= 2
                && pair.first().is_none_or(Value::is_string)
                && pair.get(1).is_none_or(|n| n.as_i64().is_some())
        });
        if !valid {
            return Err(wrong("pair", "an array of a string and an integer"));
        }
    }
    if let Some(choice) = args.get("choice")
        && !(choice.is_array() || choice.is_string())
    {
        return Err(wrong("choice", "an array or a string"));
    }
    Ok(text(format!("{count} values")))
}

async fn structured(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let value = Args::of(&call).string("text")?;
    let mut result =
        CallToolResult::success(vec![ContentBlock::text(format!("{} bytes", value.len()))]);
    result.structured_content = Some(json!({"text": value, "length": value.len()}));
    Ok(ToolReply::new(result))
}

async fn array_output_call(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    let mut result = CallToolResult::success(vec![ContentBlock::text("[1,2,3]")]);
    result.structured_content = Some(json!([1, 2, 3]));
    Ok(ToolReply::new(result))
}

/// The error of a cancelled call; `Session::finish` drops it, the client sees nothing.
pub fn cancelled() -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        "The request was cancelled.",
        None,
    )
}

/// `param_header_not_a_token`: an `x-mcp-header` with a space, which no header
/// name can have (SEP-2243: a tool with such an annotation is not valid).
pub fn param_header_not_a_token() -> ToolSpec {
    ToolSpec {
        tool: read_only(tool(
            "param_header_not_a_token",
            "Has an x-mcp-header that is not the name of an HTTP header.",
            json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Re gion"},
                },
            }),
        )),
        handler: |call| Box::pin(param_header_not_a_token_call(call)),
        switch: None,
    }
}

async fn param_header_not_a_token_call(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&["region"])?;
    Ok(text("param_header_not_a_token"))
}
