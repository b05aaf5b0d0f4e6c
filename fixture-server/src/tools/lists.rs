//! The tools that change what a listen stream sees: `toggle` switches the tool (or the
//! prompt) `toggled` on and off, `touch` reports an update of a resource. Both write
//! their notifications to the listen streams before their own result (the bridge relies
//! on this order on stdio).

use rmcp::model::ErrorData;
use serde_json::json;

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
    let changed = call.call.host.set_enabled(switch, enabled);
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
    call.call.host.resource_updated(uri);
    Ok(text(format!("touched {uri}")))
}
