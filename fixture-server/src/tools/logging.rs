//! `log`: one log message at each of the levels debug, info, warning and error, sent
//! only at or above the request's `io.modelcontextprotocol/logLevel`, and none without
//! it (server/utilities/logging.mdx).

use rmcp::model::ErrorData;
use serde_json::Value;

use super::args::Args;
use super::text;
use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments, read_only, tool};
use crate::meta::LogLevel;

pub fn log() -> ToolSpec {
    ToolSpec {
        tool: read_only(tool(
            "log",
            "Sends log messages at the levels debug, info, warning and error, filtered by the log level of the request.",
            no_arguments(),
        )),
        handler: |call| Box::pin(log_call(call)),
        switch: None,
    }
}

/// The result counts the levels tried (always 4), as in the study; the messages sent
/// depend on the request's level.
async fn log_call(call: ToolCall) -> Result<ToolReply, ErrorData> {
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
            Some("fixture"),
            Value::String(format!("a message at the level {}", level.as_str())),
        );
    }
    Ok(text(format!("logged {} messages", levels.len())))
}
