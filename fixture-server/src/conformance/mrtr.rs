//! The conformance tools that ask the client for input. The 2025 tools `test_sampling`
//! and `test_elicitation*` sent requests to the client; here they return an
//! `InputRequiredResult` (the 2026-07-28 way) and complete on the retry. The
//! `test_input_required_result_*` tools are the SEP-2322 scenarios of the suite.

use rmcp::model::ErrorData;
use serde_json::{Value, json};

use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments};
use crate::input::{self, Elicited, Prior, elicited, root_uris, sampled_text};
use crate::meta::Need;
use crate::tools::args::Args;
use crate::tools::text;

fn string_argument(name: &str, description: &str) -> Value {
    json!({
        "type": "object",
        "properties": {name: {"type": "string", "description": description}},
        "required": [name],
    })
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "test_sampling",
            "Tests sampling (LLM completion request) through an InputRequiredResult",
            string_argument("prompt", "The prompt to send to the LLM"),
            |c| Box::pin(sampling(c)),
        ),
        ToolSpec::new(
            "test_elicitation",
            "Tests elicitation (user input request) through an InputRequiredResult",
            string_argument("message", "The message to show the user"),
            |c| Box::pin(elicitation(c)),
        ),
        ToolSpec::new(
            "test_elicitation_sep1034_defaults",
            "Tests elicitation with default values per SEP-1034",
            no_arguments(),
            |c| Box::pin(defaults(c)),
        ),
        ToolSpec::new(
            "test_elicitation_sep1330_enums",
            "Tests elicitation with enum schema improvements per SEP-1330",
            no_arguments(),
            |c| Box::pin(enums(c)),
        ),
        ToolSpec::new(
            "test_elicitation_sep1036_url",
            "Tests URL mode elicitation per SEP-1036",
            no_arguments(),
            |c| Box::pin(url(c)),
        ),
        ToolSpec::new(
            "test_input_required_result_elicitation",
            "SEP-2322: one elicitation round",
            no_arguments(),
            |c| Box::pin(irr_elicitation(c)),
        ),
        ToolSpec::new(
            "test_input_required_result_sampling",
            "SEP-2322: one sampling round",
            no_arguments(),
            |c| Box::pin(irr_sampling(c)),
        ),
        ToolSpec::new(
            "test_input_required_result_list_roots",
            "SEP-2322: one roots/list round",
            no_arguments(),
            |c| Box::pin(irr_roots(c)),
        ),
        ToolSpec::new(
            "test_input_required_result_request_state",
            "SEP-2322: a round whose requestState the server checks",
            no_arguments(),
            |c| Box::pin(irr_state(c)),
        ),
        ToolSpec::new(
            "test_input_required_result_multiple_inputs",
            "SEP-2322: elicitation, sampling and roots/list in one round",
            no_arguments(),
            |c| Box::pin(irr_multiple(c)),
        ),
        ToolSpec::new(
            "test_input_required_result_multi_round",
            "SEP-2322: two rounds of elicitation",
            no_arguments(),
            |c| Box::pin(irr_multi_round(c)),
        ),
        ToolSpec::new(
            "test_input_required_result_tampered_state",
            "SEP-2322: a round whose sealed requestState refuses any change (-32602)",
            no_arguments(),
            |c| Box::pin(irr_tampered_state(c)),
        ),
        ToolSpec::new(
            "test_input_required_result_capabilities",
            "SEP-2322: asks only for the input kinds that the request's client capabilities declare",
            no_arguments(),
            |c| Box::pin(irr_capabilities(c)),
        ),
    ]
}

pub(super) fn ask(
    call: &ToolCall,
    round: u32,
    data: Value,
    requests: Vec<(&str, Value)>,
) -> ToolReply {
    let requests = requests
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    ToolReply::new(input::input_required(
        &call.call, &call.name, round, data, requests,
    ))
}

fn described(answer: &Elicited) -> String {
    let content = Value::Object(answer.content.clone().unwrap_or_default());
    format!("action={}, content={content}", answer.action.as_str())
}

pub(super) fn simple_form(message: &str, property: &str, kind: &str) -> Value {
    input::form(
        message,
        json!({"type": "object", "properties": {property: {"type": kind}}, "required": [property]}),
    )
}

async fn sampling(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let prompt = Args::of(&call).string("prompt")?.to_owned();
    sampling_round(&call, "sampling", &prompt, 100, |reply| {
        format!(
            "LLM response: {}",
            reply.unwrap_or_else(|| "No response".into())
        )
    })
}

/// One round of sampling under the input key `key`: the text of `prompt` with
/// `max_tokens`, for a client that declared sampling; the answer's text (none
/// when the model sent none) becomes the result through `reply`.
pub(super) fn sampling_round(
    call: &ToolCall,
    key: &str,
    prompt: &str,
    max_tokens: u32,
    reply: impl FnOnce(Option<String>) -> String,
) -> Result<ToolReply, ErrorData> {
    if let Some(answer) = call
        .answers(1)
        .map(|a| sampled_text(a, key))
        .transpose()?
        .flatten()
    {
        return Ok(text(reply(answer)));
    }
    call.call.require(&[Need::Sampling])?;
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens,
    });
    Ok(ask(
        call,
        1,
        Value::Null,
        vec![(key, input::sampling(params))],
    ))
}

async fn elicitation(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let message = Args::of(&call).string("message")?.to_owned();
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "elicitation"))
        .transpose()?
        .flatten()
    {
        return Ok(text(format!("User response: {}", described(&answer))));
    }
    call.call.require(&[Need::ElicitationForm])?;
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("elicitation", input::form(&message, schema))],
    ))
}

async fn form_tool(call: ToolCall, message: &str, schema: Value) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "form"))
        .transpose()?
        .flatten()
    {
        return Ok(text(format!(
            "Elicitation completed: {}",
            described(&answer)
        )));
    }
    call.call.require(&[Need::ElicitationForm])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("form", input::form(message, schema))],
    ))
}

async fn defaults(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true},
        },
        "required": [],
    });
    form_tool(
        call,
        "Please review and update the form fields with defaults",
        schema,
    )
    .await
}

async fn enums(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ]},
            "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]}},
        },
        "required": [],
    });
    form_tool(call, "Please select options from the enum fields", schema).await
}

async fn url(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "authorization"))
        .transpose()?
        .flatten()
    {
        return Ok(text(format!(
            "URL elicitation completed: action={}",
            answer.action.as_str()
        )));
    }
    call.call.require(&[Need::ElicitationUrl])?;
    let request = input::url(
        "Please complete authorization to continue",
        "https://mcp.example.com/authorize",
    );
    Ok(ask(&call, 1, Value::Null, vec![("authorization", request)]))
}

/// One form round that asks for the user's name; also the stateless suite's
/// streaming elicitation, which asks the same.
pub(super) async fn irr_elicitation(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "user_name"))
        .transpose()?
        .flatten()
    {
        return Ok(text(format!(
            "Hello, {}!",
            answer.string("name").unwrap_or("nobody")
        )));
    }
    call.call.require(&[Need::ElicitationForm])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![(
            "user_name",
            simple_form("What is your name?", "name", "string"),
        )],
    ))
}

async fn irr_sampling(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    sampling_round(
        &call,
        "capital_question",
        "What is the capital of France?",
        100,
        said,
    )
}

/// The result of a sampling round of the suite's tools.
pub(super) fn said(reply: Option<String>) -> String {
    format!(
        "The model said: {}",
        reply.unwrap_or_else(|| "no text".into())
    )
}

fn roots_request() -> Value {
    json!({"method": "roots/list", "params": {}})
}

async fn irr_roots(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(uris) = call
        .answers(1)
        .map(|a| root_uris(a, "client_roots"))
        .transpose()?
        .flatten()
    {
        return Ok(text(format!(
            "The client has {} roots: {}",
            uris.len(),
            uris.join(", ")
        )));
    }
    call.call.require(&[Need::Roots])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("client_roots", roots_request())],
    ))
}

/// The text has "state-ok" only after the sealed state was opened and checked.
async fn irr_state(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "confirm"))
        .transpose()?
        .flatten()
    {
        let ok = answer
            .content
            .as_ref()
            .and_then(|c| c.get("ok"))
            .cloned()
            .unwrap_or(Value::Null);
        return Ok(text(format!(
            "state-ok: the request state was valid; ok={ok}"
        )));
    }
    call.call.require(&[Need::ElicitationForm])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("confirm", simple_form("Please confirm", "ok", "boolean"))],
    ))
}

async fn irr_multiple(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(responses) = call.answers(1) {
        let name = elicited(responses, "user_name")?;
        let greeting = sampled_text(responses, "greeting")?;
        let roots = root_uris(responses, "client_roots")?;
        if let (Some(name), Some(greeting), Some(roots)) = (name, greeting, roots) {
            return Ok(text(format!(
                "name={}, greeting={}, roots={}",
                name.string("name").unwrap_or("nobody"),
                greeting.unwrap_or_default(),
                roots.len()
            )));
        }
    }
    call.call
        .require(&[Need::ElicitationForm, Need::Sampling, Need::Roots])?;
    let greeting = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}],
        "maxTokens": 50,
    });
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![
            (
                "user_name",
                simple_form("What is your name?", "name", "string"),
            ),
            ("greeting", input::sampling(greeting)),
            ("client_roots", roots_request()),
        ],
    ))
}

/// Round 1 asks the name, round 2 the color (its state carries the name, so it differs
/// from the state of round 1), round 3 completes with both.
async fn irr_multi_round(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Prior::Retry {
        round: 2,
        data,
        responses,
    } = &call.prior
    {
        if let Some(color) = elicited(responses, "step2")? {
            let name = data.get("name").and_then(Value::as_str).unwrap_or("nobody");
            return Ok(text(format!(
                "name={name}, color={}",
                color.string("color").unwrap_or("none")
            )));
        }
        call.call.require(&[Need::ElicitationForm])?;
        let step2 = simple_form("Step 2: What is your favorite color?", "color", "string");
        return Ok(ask(&call, 2, data.clone(), vec![("step2", step2)]));
    }
    call.call.require(&[Need::ElicitationForm])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "step1"))
        .transpose()?
        .flatten()
    {
        let name = answer.string("name").unwrap_or("nobody");
        let step2 = simple_form("Step 2: What is your favorite color?", "color", "string");
        return Ok(ask(&call, 2, json!({"name": name}), vec![("step2", step2)]));
    }
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![(
            "step1",
            simple_form("Step 1: What is your name?", "name", "string"),
        )],
    ))
}

/// Round 1 seals its state like every round of the fixture; a retry with a state that
/// does not open (a changed byte) gets -32602 from `Prior::read` before this runs.
async fn irr_tampered_state(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "confirm"))
        .transpose()?
        .flatten()
    {
        return Ok(text(format!(
            "The request state was intact; action={}",
            answer.action.as_str()
        )));
    }
    call.call.require(&[Need::ElicitationForm])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("confirm", simple_form("Please confirm", "ok", "boolean"))],
    ))
}

/// One input request for each kind the client declared (form elicitation, sampling,
/// roots), none for the others; without any, the call completes at once.
async fn irr_capabilities(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(responses) = call.answers(1) {
        let mut keys: Vec<&str> = responses.keys().map(String::as_str).collect();
        keys.sort_unstable();
        return Ok(text(format!("answered: {}", keys.join(", "))));
    }
    let client = &call.call.meta.client;
    let mut requests = Vec::new();
    if client.elicitation_form {
        requests.push((
            "user_name",
            simple_form("What is your name?", "name", "string"),
        ));
    }
    if client.sampling {
        let params = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello"}}],
            "maxTokens": 50,
        });
        requests.push(("greeting", input::sampling(params)));
    }
    if client.roots {
        requests.push(("client_roots", roots_request()));
    }
    if requests.is_empty() {
        return Ok(text("The client declared no input capability."));
    }
    Ok(ask(&call, 1, Value::Null, requests))
}
