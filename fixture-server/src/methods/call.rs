//! `tools/call` (server/tools.mdx): finds the tool, reads the state of an earlier
//! round, and runs the handler. An unknown (or switched-off) tool gets -32602.

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Value, json};

use super::{invalid_params, required_string};
use crate::catalog::{ToolCall, ToolReply};
use crate::context::Call;
use crate::input::Prior;
use crate::session::Session;

pub async fn call(session: &Session, call: Call) -> Result<ToolReply, ErrorData> {
    let name = required_string(&call.params, "name")?.to_owned();
    let args = match call.params.get("arguments") {
        None => Default::default(),
        Some(Value::Object(args)) => args.clone(),
        Some(_) => {
            return Err(invalid_params(
                "The arguments of the tool must be an object.",
            ));
        }
    };
    let spec = session
        .catalog
        .tool(&name)
        .filter(|spec| spec.switch.is_none_or(|switch| session.enabled(switch)))
        .ok_or_else(|| {
            ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!("Unknown tool: {name}"),
                Some(json!({"name": name})),
            )
        })?;
    let handler = spec.handler;
    let prior = Prior::read(&call, &name)?;
    handler(ToolCall {
        call,
        name,
        args,
        prior,
    })
    .await
}
