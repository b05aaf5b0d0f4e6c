//! The tools that end the process (executable only): `crash` exits with code 3, at once
//! or after a delay; `shutdown` ends every listen stream, answers, then exits with 0.

use std::time::Duration;

use rmcp::model::ErrorData;
use serde_json::json;

use super::args::Args;
use super::text;
use crate::catalog::{After, ToolCall, ToolReply, ToolSpec, tool};

/// The exit code after `crash`.
pub const CRASH_EXIT_CODE: i32 = 3;
const MAX_DELAY_MS: i64 = 60_000;

/// crash, shutdown.
pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            tool: tool(
                "crash",
                "Ends the process with exit code 3: at once without a response, or after_ms milliseconds after its result.",
                json!({
                    "type": "object",
                    "properties": {"after_ms": {"type": "integer", "minimum": 1, "maximum": MAX_DELAY_MS, "description": "Milliseconds between the result and the exit"}},
                }),
            ),
            handler: |call| Box::pin(crash(call)),
            switch: None,
        },
        ToolSpec {
            tool: tool(
                "shutdown",
                "Ends every listen stream, then ends the process with exit code 0 after_ms milliseconds after its result.",
                json!({
                    "type": "object",
                    "properties": {"after_ms": {"type": "integer", "minimum": 1, "maximum": MAX_DELAY_MS, "description": "Milliseconds between the result and the exit"}},
                    "required": ["after_ms"],
                }),
            ),
            handler: |call| Box::pin(shutdown(call)),
            switch: None,
        },
    ]
}

async fn crash(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let Some(ms) = Args::of(&call).opt_int_in("after_ms", 1, MAX_DELAY_MS)? else {
        call.call.host.exit(CRASH_EXIT_CODE);
        // No response: the process ends before this call could answer.
        let never: std::convert::Infallible = std::future::pending().await;
        match never {}
    };
    let mut reply = text(format!("the server stops in {ms} ms"));
    reply.then = Some(After::Exit {
        code: CRASH_EXIT_CODE,
        delay: Duration::from_millis(ms.unsigned_abs()),
    });
    Ok(reply)
}

async fn shutdown(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let ms = Args::of(&call).int_in("after_ms", 1, MAX_DELAY_MS)?;
    call.call.host.end_listens("the server shuts down");
    let mut reply = text(format!(
        "the server ended its listen streams and stops in {ms} ms"
    ));
    reply.then = Some(After::Exit {
        code: 0,
        delay: Duration::from_millis(ms.unsigned_abs()),
    });
    Ok(reply)
}
