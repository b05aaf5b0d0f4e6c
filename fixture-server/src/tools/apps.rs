//! The MCP Apps parts of `--apps`: the extension `io.modelcontextprotocol/ui` and the
//! tool `show`, whose `_meta.ui.resourceUri` points to the view `ui://fixture/view`.

use rmcp::model::{ErrorData, MetaObject};
use serde_json::{Value, json};

use super::args::Args;
use super::text;
use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments, read_only, tool};

/// The URI of the view of `show`.
pub const VIEW_URI: &str = "ui://fixture/view";
/// The MIME type of an MCP App view.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The `extensions` capability of the server.
pub fn extension() -> Value {
    json!({"io.modelcontextprotocol/ui": {"mimeTypes": [APP_MIME_TYPE]}})
}

pub fn show() -> ToolSpec {
    let mut meta = MetaObject::new();
    meta.insert("ui".into(), json!({"resourceUri": VIEW_URI}));
    ToolSpec {
        tool: read_only(tool(
            "show",
            "Shows the view of the fixture.",
            no_arguments(),
        ))
        .with_meta(meta),
        handler: |call| Box::pin(show_call(call)),
        switch: None,
    }
}

async fn show_call(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    Ok(text("shown"))
}
