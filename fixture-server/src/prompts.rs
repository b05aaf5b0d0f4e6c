//! The prompts of the fixture profile (study section 1.3): greet, ask_name, toggled.

use rmcp::model::{ErrorData, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};

use crate::catalog::{PromptCall, PromptSpec};
use crate::input::{self, Prior, elicited};
use crate::meta::Need;
use crate::switch::Switch;
use crate::tools::input::name_schema;

/// greet, ask_name, toggled.
pub fn prompts() -> Vec<PromptSpec> {
    vec![
        PromptSpec {
            prompt: Prompt::new(
                "greet",
                Some("A greeting for a person."),
                Some(vec![
                    PromptArgument::new("name")
                        .with_description("The name of the person")
                        .with_required(true),
                ]),
            ),
            handler: |call| Box::pin(greet(call)),
            switch: None,
        },
        PromptSpec {
            prompt: Prompt::new(
                "ask_name",
                Some("Asks for a name with a form, then greets."),
                None,
            ),
            handler: |call| Box::pin(ask_name(call)),
            switch: None,
        },
        PromptSpec {
            prompt: Prompt::new(
                "toggled",
                Some("The prompt that the tool toggle switches on and off."),
                None,
            ),
            handler: |call| Box::pin(toggled(call)),
            switch: Some(Switch::Prompt),
        },
    ]
}

fn greeting(description: &str, name: &str) -> Value {
    let result = GetPromptResult::new(vec![PromptMessage::new_text(
        Role::User,
        format!("Hello, {name}."),
    )])
    .with_description(description);
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// Follows the study: a missing name greets "nobody" (the specification only says
/// SHOULD -32602 for missing required arguments).
async fn greet(call: PromptCall) -> Result<Value, ErrorData> {
    let name = call
        .arguments
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("nobody");
    Ok(greeting("A greeting", name))
}

async fn ask_name(call: PromptCall) -> Result<Value, ErrorData> {
    if let Prior::Retry {
        round: 1,
        responses,
        ..
    } = &call.prior
        && let Some(answer) = elicited(responses, "name")?
    {
        let name = answer.string("name").unwrap_or("nobody");
        return Ok(greeting("A greeting after a form", name));
    }
    call.call.require(&[Need::ElicitationForm])?;
    let mut requests = Map::new();
    requests.insert("name".into(), input::form("Your name?", name_schema()));
    Ok(input::input_required(
        &call.call,
        &call.name,
        1,
        Value::Null,
        requests,
    ))
}

async fn toggled(_call: PromptCall) -> Result<Value, ErrorData> {
    let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, "toggled")]);
    Ok(serde_json::to_value(result).unwrap_or(Value::Null))
}
