//! `tool_0` .. `tool_<n-1>` of `--many-tools n`: enough tools for several pages of
//! `tools/list`.

use rmcp::model::ErrorData;

use super::args::Args;
use super::text;
use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments, read_only, tool};

/// The tool `tool_<index>`; its result is its own name.
pub fn numbered_tool(index: usize) -> ToolSpec {
    ToolSpec {
        tool: read_only(tool(
            format!("tool_{index}"),
            "A tool of --many-tools: it gives its own name.",
            no_arguments(),
        )),
        handler: |call| Box::pin(own_name(call)),
        switch: None,
    }
}

async fn own_name(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(text(call.name.clone()))
}
