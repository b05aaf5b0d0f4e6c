//! The tools that ask the client for input with `InputRequiredResult`
//! (basic/patterns/mrtr.mdx): ask_form, ask_url, ask_url_twice, ask_bad_url, sample,
//! sample_tools, list_roots, multi, many_inputs.
//!
//! Each tool asks only for input kinds that the request declared, else -32021. A retry
//! that lacks an answer the tool needs gets the same input requests again (a new round
//! with a new state), not an error.

use rmcp::model::ErrorData;
use serde_json::{Map, Value, json};

use super::args::Args;
use super::text;
use crate::catalog::{ToolCall, ToolReply, ToolSpec, no_arguments};
use crate::input::{self, Elicited, Prior, elicited, root_uris, sampled_text};
use crate::meta::Need;

/// The URL of ask_url and ask_url_twice.
pub const AUTH_URL: &str = "https://example.com/auth";
/// The URL of ask_bad_url: a `file:` URL, which the bridge must not show.
pub const BAD_URL: &str = "file://localhost/etc/passwd";

/// The form of ask_form, exactly as the study gives it.
pub fn profile_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1},
            "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
            "subscribe": {"type": "boolean", "title": "Subscribe"},
            "color": {"type": "string", "title": "Color", "enum": ["red", "green", "blue"]},
        },
        "required": ["name"],
    })
}

/// The form "Your name?" of multi and of the prompt ask_name.
pub fn name_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    })
}

/// ask_form .. many_inputs, in the order of `tools/list`.
pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "ask_form",
            "Asks for a form (name, age, subscribe, color) and gives the answer.",
            no_arguments(),
            |c| Box::pin(ask_form(c)),
        ),
        ToolSpec::new(
            "ask_url",
            "Asks the client to open https://example.com/auth and gives the answer.",
            no_arguments(),
            |c| Box::pin(ask_url(c)),
        ),
        ToolSpec::new(
            "ask_url_twice",
            "Asks two rounds for the same URL, then gives the answer of the second.",
            json!({
                "type": "object",
                "properties": {"complete": {"type": "boolean", "description": "Give the result in round 2"}},
                "additionalProperties": false,
            }),
            |c| Box::pin(ask_url_twice(c)),
        ),
        ToolSpec::new(
            "ask_bad_url",
            "Asks the client to open a file: URL and gives the answer.",
            no_arguments(),
            |c| Box::pin(ask_bad_url(c)),
        ),
        ToolSpec::new(
            "sample",
            "Asks the client's model to say hello and gives its text.",
            no_arguments(),
            |c| Box::pin(sample(c)),
        ),
        ToolSpec::new(
            "sample_tools",
            "Asks the client's model, with a tool, to look up the weather.",
            no_arguments(),
            |c| Box::pin(sample_tools(c)),
        ),
        ToolSpec::new(
            "list_roots",
            "Asks the client for its roots and gives their URIs.",
            no_arguments(),
            |c| Box::pin(list_roots(c)),
        ),
        ToolSpec::new(
            "multi",
            "Asks for a name and for the roots in one round.",
            no_arguments(),
            |c| Box::pin(multi(c)),
        ),
        ToolSpec::new(
            "many_inputs",
            "Asks for the roots 17 times in one round and counts the answers.",
            no_arguments(),
            |c| Box::pin(many_inputs(c)),
        ),
    ]
}

/// Asks `requests` as round `round`.
fn ask(call: &ToolCall, round: u32, data: Value, requests: Vec<(String, Value)>) -> ToolReply {
    let requests: Map<String, Value> = requests.into_iter().collect();
    ToolReply::new(input::input_required(
        &call.call, &call.name, round, data, requests,
    ))
}

fn action_text(prefix: &str, answer: &Elicited) -> String {
    format!("{prefix}: {}", answer.action.as_str())
}

async fn ask_form(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "profile"))
        .transpose()?
        .flatten()
    {
        let mut result = action_text("form", &answer);
        if answer.action == input::Action::Accept {
            let content = Value::Object(answer.content.clone().unwrap_or_default());
            result = format!("{result} {content}");
        }
        return Ok(text(result));
    }
    call.call.require(&[Need::ElicitationForm])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![(
            "profile".into(),
            input::form("Tell us about you.", profile_schema()),
        )],
    ))
}

async fn ask_url(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "auth"))
        .transpose()?
        .flatten()
    {
        return Ok(text(action_text("url", &answer)));
    }
    call.call.require(&[Need::ElicitationUrl])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("auth".into(), input::url("Sign in to continue.", AUTH_URL))],
    ))
}

/// Round 1 and round 2 ask for the same URL; the answer of round 2 is the result (with
/// `complete: true`, the answer of round 1). The state carries the round.
async fn ask_url_twice(call: ToolCall) -> Result<ToolReply, ErrorData> {
    let args = Args::of(&call);
    args.only(&["complete"])?;
    let complete = args.opt_bool("complete")?.unwrap_or(false);
    let (round, answer) = match &call.prior {
        Prior::Retry {
            round, responses, ..
        } if *round <= 2 => (*round, elicited(responses, "auth")?),
        _ => (0, None),
    };
    let next_round = match (round, answer) {
        (1, Some(answer)) if complete => return Ok(text(action_text("url twice", &answer))),
        (2, Some(answer)) => return Ok(text(action_text("url twice", &answer))),
        (1, Some(_)) => 2,
        // No answer (or no earlier round): the same round again.
        (1 | 2, None) => round,
        _ => 1,
    };
    call.call.require(&[Need::ElicitationUrl])?;
    Ok(ask(
        &call,
        next_round,
        Value::Null,
        vec![("auth".into(), input::url("Sign in to continue.", AUTH_URL))],
    ))
}

async fn ask_bad_url(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| elicited(a, "file"))
        .transpose()?
        .flatten()
    {
        return Ok(text(action_text("url", &answer)));
    }
    call.call.require(&[Need::ElicitationUrl])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("file".into(), input::url("Open the file.", BAD_URL))],
    ))
}

fn model_text(text: Option<String>) -> String {
    match text {
        Some(text) => format!("model: {text}"),
        None => "model: no text".into(),
    }
}

async fn sample(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| sampled_text(a, "model"))
        .transpose()?
        .flatten()
    {
        return Ok(text(model_text(answer)));
    }
    call.call.require(&[Need::Sampling])?;
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}],
        "maxTokens": 50,
    });
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("model".into(), input::sampling(params))],
    ))
}

async fn sample_tools(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(answer) = call
        .answers(1)
        .map(|a| sampled_text(a, "model"))
        .transpose()?
        .flatten()
    {
        return Ok(text(model_text(answer)));
    }
    call.call.require(&[Need::Sampling, Need::SamplingTools])?;
    let params = json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Look up the weather."}}],
        "maxTokens": 50,
        "tools": [{"name": "lookup", "inputSchema": {"type": "object"}}],
    });
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("model".into(), input::sampling(params))],
    ))
}

async fn list_roots(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(uris) = call
        .answers(1)
        .map(|a| root_uris(a, "roots"))
        .transpose()?
        .flatten()
    {
        return Ok(text(format!("roots: {}", uris.join("\n"))));
    }
    call.call.require(&[Need::Roots])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![("roots".into(), input::roots())],
    ))
}

/// One round with two input requests; both answers are needed.
async fn multi(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(responses) = call.answers(1)
        && let (Some(name), Some(roots)) =
            (elicited(responses, "name")?, root_uris(responses, "roots")?)
    {
        let who = name.string("name").unwrap_or("nobody");
        return Ok(text(format!(
            "name: {who} ({}); roots: {}",
            name.action.as_str(),
            roots.len()
        )));
    }
    call.call.require(&[Need::ElicitationForm, Need::Roots])?;
    Ok(ask(
        &call,
        1,
        Value::Null,
        vec![
            ("name".into(), input::form("Your name?", name_schema())),
            ("roots".into(), input::roots()),
        ],
    ))
}

/// The number of `roots/list` inputs of many_inputs: one more than the bridge's limit
/// of 16 per round.
pub const MANY_INPUTS: usize = 17;

/// 17 `roots/list` requests `r0` .. `r16` in one round; the retry counts the answers it
/// got (it does not ask again).
async fn many_inputs(call: ToolCall) -> Result<ToolReply, ErrorData> {
    Args::of(&call).only(&[])?;
    if let Some(responses) = call.answers(1) {
        let mut count = 0;
        for index in 0..MANY_INPUTS {
            if root_uris(responses, &format!("r{index}"))?.is_some() {
                count += 1;
            }
        }
        return Ok(text(format!("answers: {count}")));
    }
    call.call.require(&[Need::Roots])?;
    let requests = (0..MANY_INPUTS)
        .map(|index| (format!("r{index}"), input::roots()))
        .collect();
    Ok(ask(&call, 1, Value::Null, requests))
}
