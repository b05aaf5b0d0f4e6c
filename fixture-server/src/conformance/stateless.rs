//! The diagnostic tools of the suite's `server-stateless` scenario (SEP-2575): a tool
//! that needs a client capability, a tool whose response stream carries an
//! `InputRequiredResult`, and the hooks that change the tool and prompt lists while a
//! listen stream is open.

use rmcp::model::ErrorData;

use super::mrtr::{irr_elicitation, said, sampling_round};
use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments, tool};
use crate::switch::Switch;
use crate::tools::args::Args;
use crate::tools::text;

fn spec(
    name: &str,
    description: &str,
    handler: crate::catalog::ToolHandler,
    switch: Option<Switch>,
) -> ToolSpec {
    ToolSpec {
        tool: tool(name, description, no_arguments()),
        handler,
        switch,
    }
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        spec(
            "test_missing_capability",
            "Needs sampling: without it in the request's client capabilities, -32021 (HTTP 400)",
            |c| Box::pin(missing_capability(c)),
            None,
        ),
        spec(
            "test_streaming_elicitation",
            "Asks for input with an InputRequiredResult, never with a request of its own",
            |c| Box::pin(irr_elicitation(c)),
            None,
        ),
        spec(
            "test_trigger_tool_change",
            "Switches test_toggled_tool on or off: listen streams get the tools list change",
            |c| Box::pin(trigger(c, Switch::Tool)),
            None,
        ),
        spec(
            "test_trigger_prompt_change",
            "Switches test_toggled_prompt on or off: listen streams get the prompts list change",
            |c| Box::pin(trigger(c, Switch::Prompt)),
            None,
        ),
        spec(
            "test_toggled_tool",
            "Listed or not: test_trigger_tool_change switches it",
            |c| Box::pin(toggled(c)),
            Some(Switch::Tool),
        ),
    ]
}

/// One round of sampling, only for a client that declared it.
async fn missing_capability(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    sampling_round(&call, "sampling", "Say hello", 20, said)
}

/// Flips the switch, so that every call changes the list.
async fn trigger(call: ToolCall, switch: Switch) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    let session = &call.call.host;
    let enabled = !session.enabled(switch);
    session.set_enabled(&call.call.id, switch, enabled);
    let what = match switch {
        Switch::Tool => "test_toggled_tool",
        Switch::Prompt => "test_toggled_prompt",
        Switch::ParamHeader => "the x-mcp-header of param_header_echo",
    };
    let state = if enabled { "listed" } else { "not listed" };
    Ok(text(format!("{what} is {state} now")))
}

async fn toggled(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(text("This tool is listed while its switch is on."))
}
