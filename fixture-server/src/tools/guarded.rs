//! The tool `guarded` of `--auth` (study §1.5): the tool itself allows every call; the
//! endpoint of the protected resource demands the scope `mcp:write` for it (step-up),
//! so that a client's re-authorization with more scopes can be tested.

use rmcp::model::ErrorData;

use super::args::Args;
use super::text;
use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments, read_only, tool};

/// The name that the step-up check of the endpoint looks for.
pub const NAME: &str = "guarded";

pub fn guarded() -> ToolSpec {
    ToolSpec {
        tool: read_only(tool(
            NAME,
            "Gives guarded: allowed; with --auth the call needs the scope mcp:write.",
            no_arguments(),
        )),
        handler: |call| Box::pin(guarded_call(call)),
        switch: None,
    }
}

async fn guarded_call(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(text("guarded: allowed"))
}
