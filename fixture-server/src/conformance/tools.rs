//! The conformance tools that need no input from the client: content types, logging,
//! progress, errors, timing, JSON Schema 2020-12 and the loose output schemas of
//! SEP-2106.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, ResourceContents};
use serde_json::{Map, Value, json};

use super::media::{PNG, WAV};
use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments, tool};
use crate::meta::LogLevel;
use crate::tools::args::Args;
use crate::tools::basic::cancelled;
use crate::tools::text;

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "test_simple_text",
            "Tests simple text content response",
            no_arguments(),
            |c| Box::pin(simple_text(c)),
        ),
        ToolSpec::new(
            "test_image_content",
            "Tests image content response",
            no_arguments(),
            |c| Box::pin(image(c)),
        ),
        ToolSpec::new(
            "test_audio_content",
            "Tests audio content response",
            no_arguments(),
            |c| Box::pin(audio(c)),
        ),
        ToolSpec::new(
            "test_embedded_resource",
            "Tests embedded resource content response",
            no_arguments(),
            |c| Box::pin(embedded(c)),
        ),
        ToolSpec::new(
            "test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)",
            no_arguments(),
            |c| Box::pin(mixed(c)),
        ),
        ToolSpec::new(
            "test_tool_with_logging",
            "Tests tool that emits log messages during execution",
            no_arguments(),
            |c| Box::pin(with_logging(c)),
        ),
        ToolSpec::new(
            "test_tool_with_progress",
            "Tests tool that reports progress notifications",
            no_arguments(),
            |c| Box::pin(with_progress(c)),
        ),
        ToolSpec::new(
            "test_error_handling",
            "Tests error response handling",
            no_arguments(),
            |c| Box::pin(error_handling(c)),
        ),
        ToolSpec::new(
            "test_logging_tool",
            "Emits log messages at the levels debug, info, warning and error",
            no_arguments(),
            |c| Box::pin(logging_tool(c)),
        ),
        ToolSpec::new("test_tool_fast", "Completes at once", no_arguments(), |c| {
            Box::pin(fast(c))
        }),
        ToolSpec::new(
            "test_tool_slow",
            "Sleeps durationMs milliseconds; a cancellation stops it",
            json!({
                "type": "object",
                "properties": {"durationMs": {"type": "number", "minimum": 0, "description": "How long to sleep"}},
                "required": ["durationMs"],
            }),
            |c| Box::pin(slow(c)),
        ),
        ToolSpec::new(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            // The composition (allOf/anyOf), conditional (if/then/else) and anchor
            // keywords are those that SEP-2106 says a client must keep.
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "address": {"$anchor": "address", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}},
                },
                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                "allOf": [{"anyOf": [{"required": ["name"]}, {"required": ["address"]}]}],
                "if": {"properties": {"name": {"const": "headquarters"}}, "required": ["name"]},
                "then": {"required": ["address"]},
                "else": {},
                "additionalProperties": false,
            }),
            |c| Box::pin(json_schema(c)),
        ),
        ToolSpec {
            tool: tool(
                "sep_2106_array_output_tool",
                "Gives an array as structured content (SEP-2106)",
                no_arguments(),
            )
            .with_raw_output_schema(Arc::new(object(
                json!({"type": "array", "items": {"type": "integer"}}),
            ))),
            handler: |c| Box::pin(array_output(c)),
            switch: None,
        },
        ToolSpec {
            tool: tool(
                "sep_2106_primitive_output_tool",
                "Gives a number as structured content (SEP-2106)",
                no_arguments(),
            )
            .with_raw_output_schema(Arc::new(object(json!({"type": "number"})))),
            handler: |c| Box::pin(primitive_output(c)),
            switch: None,
        },
        ToolSpec::new(
            "test_custom_headers",
            "Tests the Mcp-Param headers of x-mcp-header parameters (SEP-2243)",
            json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "description": "Sent as Mcp-Param-Region", "x-mcp-header": "Region"},
                    "priority": {"type": "integer", "description": "Sent as Mcp-Param-Priority", "x-mcp-header": "Priority"},
                    "urgent": {"type": "boolean", "description": "Sent as Mcp-Param-Urgent", "x-mcp-header": "Urgent"},
                    "query": {"type": "string", "description": "Not sent as a header"},
                },
                "required": ["region"],
            }),
            |c| Box::pin(custom_headers(c)),
        ),
    ]
}

fn reply(content: Vec<ContentBlock>) -> ToolReply {
    ToolReply::new(CallToolResult::success(content))
}

/// The endpoint checked the `Mcp-Param-*` headers against these arguments before
/// the call (`https/headers.rs`); the text says what arrived.
async fn custom_headers(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let args = Args::of(&call);
    args.only(&["region", "priority", "urgent", "query"])?;
    let region = args.string("region")?;
    Ok(text(format!("region: {region}")))
}

async fn simple_text(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(text("This is a simple text response for testing."))
}

async fn image(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(reply(vec![ContentBlock::image(PNG, "image/png")]))
}

async fn audio(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(reply(vec![ContentBlock::audio(WAV, "audio/wav")]))
}

async fn embedded(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(reply(vec![ContentBlock::embedded_text(
        "test://embedded-resource",
        "This is an embedded resource content.",
    )]))
}

async fn mixed(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(reply(vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG, "image/png"),
        ContentBlock::resource(
            ResourceContents::text(
                r#"{"test":"data","value":123}"#,
                "test://mixed-content-resource",
            )
            .with_mime_type("application/json"),
        ),
    ]))
}

/// Three info messages 50 ms apart (when the request's log level lets them through).
async fn with_logging(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    let steps = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (index, step) in steps.iter().enumerate() {
        if index > 0 {
            call.call
                .sleep(Duration::from_millis(50))
                .await
                .map_err(|_| cancelled())?;
        }
        call.call
            .log(LogLevel::Info, None, Value::String((*step).into()));
    }
    Ok(text("Tool with logging executed successfully"))
}

/// Progress 0, 50 and 100 of 100, 50 ms apart (only with a progress token).
async fn with_progress(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    for (index, step) in [0u32, 50, 100].into_iter().enumerate() {
        if index > 0 {
            call.call
                .sleep(Duration::from_millis(50))
                .await
                .map_err(|_| cancelled())?;
        }
        call.call.progress(
            step.into(),
            Some(100.0),
            Some(format!("Completed step {step} of 100")),
        );
    }
    Ok(text(match &call.call.meta.progress_token {
        Some(Value::String(token)) => token.clone(),
        Some(token) => token.to_string(),
        None => "Tool with progress executed without a progress token".into(),
    }))
}

/// A tool execution error: a result with `isError: true`.
async fn error_handling(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(ToolReply::new(CallToolResult::error(vec![
        ContentBlock::text("This tool intentionally returns an error for testing"),
    ])))
}

async fn logging_tool(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    let levels = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
    ];
    for level in levels {
        call.call.log(
            level,
            Some("conformance-test-server"),
            Value::String(format!("A {} message of test_logging_tool", level.as_str())),
        );
    }
    Ok(text(
        "Logged messages at the levels debug, info, warning and error",
    ))
}

async fn fast(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(text("The fast tool completed."))
}

async fn slow(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let args = Args::of(&call);
    let ms = args
        .get("durationMs")
        .and_then(Value::as_f64)
        .filter(|ms| *ms >= 0.0 && ms.is_finite())
        .ok_or_else(|| {
            ErrorData::invalid_params(
                "The argument 'durationMs' of the tool test_tool_slow must be a number of milliseconds.",
                None,
            )
        })?;
    call.call
        .sleep(Duration::from_secs_f64(ms.min(3_600_000.0) / 1000.0))
        .await
        .map_err(|_| cancelled())?;
    Ok(text(format!("The slow tool completed after {ms} ms.")))
}

async fn json_schema(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let args = Args::of(&call);
    args.only(&["name", "address"])?;
    Ok(text(format!(
        "JSON Schema 2020-12 tool called with: {}",
        Value::Object(call.args.clone())
    )))
}

async fn array_output(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    let mut result = CallToolResult::success(vec![ContentBlock::text("[1,2,3]")]);
    result.structured_content = Some(json!([1, 2, 3]));
    Ok(ToolReply::new(result))
}

async fn primitive_output(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    let mut result = CallToolResult::success(vec![ContentBlock::text("42")]);
    result.structured_content = Some(json!(42));
    Ok(ToolReply::new(result))
}
