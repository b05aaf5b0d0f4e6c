//! The tools that change what a listen stream sees: `toggle` switches the tool (or the
//! prompt) `toggled` on and off, `touch` reports an update of a resource, and the
//! optional `param_header_echo` takes its own `x-mcp-header` out of the list and puts
//! it back. Each writes its notifications to the listen streams before its own result
//! (the bridge relies on this order on stdio); with `--list-change-in-response`, to
//! its own response stream instead, as FastMCP does.

use std::borrow::Cow;

use rmcp::model::{ErrorData, Tool};
use serde_json::{Value, json};

use super::args::Args;
use super::text;
use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments, read_only, tool};
use crate::switch::Switch;

/// toggle, toggled, touch.
pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            tool: tool(
                "toggle",
                "Switches the tool toggled (or the prompt toggled) on or off; listen streams get the list change before the result.",
                json!({
                    "type": "object",
                    "properties": {
                        "enabled": {"type": "boolean", "description": "Whether the tool or prompt is listed"},
                        "target": {"type": "string", "enum": ["tool", "prompt"], "description": "tool (the default) or prompt"},
                    },
                    "required": ["enabled"],
                    "additionalProperties": false,
                }),
            ),
            handler: |call| Box::pin(toggle(call)),
            switch: None,
        },
        ToolSpec {
            tool: read_only(tool(
                "toggled",
                "Gives toggled; the tool toggle switches it on and off.",
                no_arguments(),
            )),
            handler: |call| Box::pin(toggled(call)),
            switch: Some(Switch::Tool),
        },
        ToolSpec {
            tool: tool(
                "touch",
                "Reports an update of the resource uri to the listen streams subscribed to it.",
                json!({
                    "type": "object",
                    "properties": {"uri": {"type": "string", "description": "The URI of the resource"}},
                    "required": ["uri"],
                }),
            ),
            handler: |call| Box::pin(touch(call)),
            switch: None,
        },
    ]
}

async fn toggle(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let args = Args::of(&call);
    args.only(&["enabled", "target"])?;
    let enabled = args.bool("enabled")?;
    let (switch, target) = match args.get("target").map(|t| t.as_str()) {
        None | Some(Some("tool")) => (Switch::Tool, "tool"),
        Some(Some("prompt")) => (Switch::Prompt, "prompt"),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "The argument 'target' of the tool toggle must be tool or prompt.",
                None,
            ));
        }
    };
    let changed = call.call.host.set_enabled(&call.call.id, switch, enabled);
    let state = if enabled { "enabled" } else { "disabled" };
    let suffix = if changed { "" } else { " (no change)" };
    Ok(text(format!("{target} toggled: {state}{suffix}")))
}

async fn toggled(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(text("toggled"))
}

async fn touch(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let uri = Args::of(&call).string("uri")?;
    call.call.host.resource_updated(&call.call.id, uri);
    Ok(text(format!("touched {uri}")))
}

/// The name of the tool whose `x-mcp-header` comes and goes.
const PARAM_HEADER_ECHO: &str = "param_header_echo";

/// `param_header_echo`: sends back `text`, which is mirrored in `Mcp-Param-Text` while
/// the switch [`Switch::ParamHeader`] is on; `mark` sets the switch first. Neither
/// description spells the annotation's name: a list without it must not name it at
/// all, or a bridge that looks at such a list only when it names it passes.
pub fn param_header_echo() -> ToolSpec {
    ToolSpec {
        tool: tool(
            PARAM_HEADER_ECHO,
            "Sends back the text, mirrored in the header Mcp-Param-Text; mark false takes the header annotation of text out of the list, mark true puts it back (listen streams get the list change before the result).",
            json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "The text to send back", "x-mcp-header": "Text"},
                    "mark": {"type": "boolean", "description": "Whether the next tools/list marks text for a header"},
                },
                "required": ["text"],
            }),
        ),
        handler: |call| Box::pin(param_header_echo_call(call)),
        switch: None,
    }
}

async fn param_header_echo_call(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let args = Args::of(&call);
    args.only(&["text", "mark"])?;
    let text_back = args.string("text")?.to_owned();
    if args.get("mark").is_some() {
        call.call
            .host
            .set_enabled(&call.call.id, Switch::ParamHeader, args.bool("mark")?);
    }
    Ok(text(text_back))
}

/// A tool as `tools/list` shows it now, and as the checks of its headers read it:
/// `param_header_echo` without its `x-mcp-header` while its switch is off.
pub fn as_listed(tool: &Tool, param_header_marked: bool) -> Cow<'_, Tool> {
    if param_header_marked || tool.name != PARAM_HEADER_ECHO {
        return Cow::Borrowed(tool);
    }
    let mut schema = (*tool.input_schema).clone();
    if let Some(Value::Object(text)) = schema
        .get_mut("properties")
        .and_then(|properties| properties.get_mut("text"))
    {
        text.remove("x-mcp-header");
    }
    let mut unmarked = tool.clone();
    unmarked.input_schema = std::sync::Arc::new(schema);
    Cow::Owned(unmarked)
}
