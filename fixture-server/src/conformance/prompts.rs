//! The conformance prompts. A missing required argument gets -32602
//! (server/prompts.mdx §Error Handling).

use rmcp::model::{ContentBlock, ResourceContents};
use rmcp::model::{ErrorData, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};

use super::media::PNG;
use crate::catalog::{PromptCall, PromptSpec};
use crate::input::{self, Prior, elicited};
use crate::meta::Need;

fn spec(prompt: Prompt, handler: crate::catalog::PromptHandler) -> PromptSpec {
    PromptSpec {
        prompt,
        handler,
        switch: None,
    }
}

fn argument(name: &str, description: &str) -> PromptArgument {
    PromptArgument::new(name)
        .with_description(description)
        .with_required(true)
}

pub fn prompts() -> Vec<PromptSpec> {
    vec![
        spec(
            Prompt::new(
                "test_simple_prompt",
                Some("A simple prompt without arguments"),
                None,
            )
            .with_title("Simple Test Prompt"),
            |c| Box::pin(simple(c)),
        ),
        spec(
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt with required arguments"),
                Some(vec![
                    argument("arg1", "First test argument"),
                    argument("arg2", "Second test argument"),
                ]),
            )
            .with_title("Prompt With Arguments"),
            |c| Box::pin(with_arguments(c)),
        ),
        spec(
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt that includes an embedded resource"),
                Some(vec![argument(
                    "resourceUri",
                    "URI of the resource to embed",
                )]),
            )
            .with_title("Prompt With Embedded Resource"),
            |c| Box::pin(with_resource(c)),
        ),
        spec(
            Prompt::new(
                "test_prompt_with_image",
                Some("A prompt that includes image content"),
                None,
            )
            .with_title("Prompt With Image"),
            |c| Box::pin(with_image(c)),
        ),
        spec(
            Prompt::new(
                "test_input_required_result_prompt",
                Some("A prompt that asks for its context with an elicitation (SEP-2322)"),
                None,
            ),
            |c| Box::pin(input_required(c)),
        ),
        // Listed while the switch of test_trigger_prompt_change is on (stateless.rs).
        PromptSpec {
            prompt: Prompt::new(
                "test_toggled_prompt",
                Some("Listed or not: test_trigger_prompt_change switches it"),
                None,
            ),
            handler: |c| Box::pin(toggled(c)),
            switch: Some(crate::switch::Switch::Prompt),
        },
    ]
}

fn result(messages: Vec<PromptMessage>) -> Value {
    serde_json::to_value(GetPromptResult::new(messages)).unwrap_or(Value::Null)
}

fn required<'a>(call: &'a PromptCall, name: &str) -> Result<&'a str, ErrorData> {
    call.arguments
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!("The prompt {} needs the argument {name}.", call.name),
                None,
            )
        })
}

async fn simple(_call: PromptCall) -> Result<Value, ErrorData> {
    Ok(result(vec![PromptMessage::new_text(
        Role::User,
        "This is a simple prompt for testing.",
    )]))
}

async fn toggled(_call: PromptCall) -> Result<Value, ErrorData> {
    Ok(result(vec![PromptMessage::new_text(
        Role::User,
        "This prompt is listed while its switch is on.",
    )]))
}

async fn with_arguments(call: PromptCall) -> Result<Value, ErrorData> {
    let (arg1, arg2) = (required(&call, "arg1")?, required(&call, "arg2")?);
    Ok(result(vec![PromptMessage::new_text(
        Role::User,
        format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"),
    )]))
}

async fn with_resource(call: PromptCall) -> Result<Value, ErrorData> {
    let uri = required(&call, "resourceUri")?;
    Ok(result(vec![
        PromptMessage::new(
            Role::User,
            ContentBlock::resource(ResourceContents::text(
                "Embedded resource content for testing.",
                uri,
            )),
        ),
        PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
    ]))
}

async fn with_image(_call: PromptCall) -> Result<Value, ErrorData> {
    Ok(result(vec![
        PromptMessage::new(Role::User, ContentBlock::image(PNG, "image/png")),
        PromptMessage::new_text(Role::User, "Please analyze the image above."),
    ]))
}

async fn input_required(call: PromptCall) -> Result<Value, ErrorData> {
    if let Prior::Retry {
        round: 1,
        responses,
        ..
    } = &call.prior
        && let Some(answer) = elicited(responses, "user_context")?
    {
        let context = answer.string("context").unwrap_or("no context");
        return Ok(result(vec![PromptMessage::new_text(
            Role::User,
            format!("Use this context: {context}"),
        )]));
    }
    call.call.require(&[Need::ElicitationForm])?;
    let mut requests = Map::new();
    requests.insert(
        "user_context".into(),
        input::form(
            "What context should the prompt use?",
            serde_json::json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}),
        ),
    );
    Ok(input::input_required(
        &call.call,
        &call.name,
        1,
        Value::Null,
        requests,
    ))
}
