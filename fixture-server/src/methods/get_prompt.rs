//! `prompts/get` (server/prompts.mdx). An unknown (or switched-off) prompt gets -32602.

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Value, json};

use super::{invalid_params, required_string};
use crate::catalog::PromptCall;
use crate::context::Call;
use crate::input::Prior;
use crate::session::Session;

pub async fn get(session: &Session, call: Call) -> Result<Value, ErrorData> {
    let name = required_string(&call.params, "name")?.to_owned();
    let arguments = match call.params.get("arguments") {
        None => Default::default(),
        Some(Value::Object(arguments)) if arguments.values().all(Value::is_string) => {
            arguments.clone()
        }
        Some(_) => {
            return Err(invalid_params(
                "The arguments of the prompt must be an object of strings.",
            ));
        }
    };
    let spec = session
        .catalog
        .prompts
        .iter()
        .find(|spec| spec.prompt.name == name)
        .filter(|spec| spec.switch.is_none_or(|switch| session.enabled(switch)))
        .ok_or_else(|| {
            ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!("Unknown prompt: {name}"),
                Some(json!({"name": name})),
            )
        })?;
    let handler = spec.handler;
    let prior = Prior::read(&call, &name)?;
    handler(PromptCall {
        call,
        name,
        arguments,
        prior,
    })
    .await
}
