//! The answers of each client to the server's requests (and to the input
//! requests of an MRTR round), chosen by the [`AnswerPolicy`].
//!
//! Local (mcpServerRequestHandler.ts `handleServerRequest`): ping `{}`, roots
//! from the policy, sampling `{model, content, role}` or -32000 on a refusal,
//! elicitation `{action[, content]}`, anything else -32601
//! `Method not found: <method>`. Its task manager (`tasks/*`, and a `params.task`
//! on sampling or elicitation) is in `task_manager`.
//! Copilot (observed, copilot-cli 1.0.92): ping `{}`, roots/list `{roots: []}`
//! although it declares no roots, elicitation by the policy (in VS Code a
//! person answers), sampling answered after consent or with the cancelled
//! result seen in VS Code 1.141 (`stopReason: cancelled`), or no answer.

use serde_json::{Value, json};

use crate::answers::{
    AnswerPolicy, DEFAULT_COPILOT_MODEL, DEFAULT_LOCAL_MODEL, FormAnswer, SamplingAnswer,
    UrlAnswer, content_from_schema,
};
use crate::profile::Harness;

/// The code of the Local harness's sampling refusal (seed O2; not verified in source).
pub const SAMPLING_REFUSED_CODE: i64 = -32000;
/// Its message (frame file local-sampling.jsonl).
pub const SAMPLING_REFUSED_MESSAGE: &str = "Sampling not allowed";
/// The text of copilot-cli's cancelled sampling result (seed, VS Code 1.141).
pub const COPILOT_SAMPLING_CANCELLED: &str = "The user cancelled the request.";

/// How many questions of each kind were answered so far (for answer lists).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    form: usize,
    url: usize,
    sampling: usize,
}

/// One answer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Answer {
    /// A result object.
    Result(Value),
    /// An error response.
    Error { code: i64, message: String },
    /// No answer; the reason is logged.
    None(String),
}

/// A short description of a question for the log.
pub(crate) fn summary(method: &str, params: &Value) -> String {
    let text = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or_default();
    match method {
        "elicitation/create" if text("mode") == "url" => {
            format!("url: {} ({})", text("url"), text("message"))
        }
        "elicitation/create" => format!("form: {}", text("message")),
        "sampling/createMessage" => {
            let first = params
                .pointer("/messages/0/content/text")
                .and_then(Value::as_str)
                .unwrap_or_default();
            format!("sampling: {first}")
        }
        _ => String::new(),
    }
}

/// The answer of `harness` to `method` with `params`.
pub(crate) fn answer(
    harness: Harness,
    policy: &AnswerPolicy,
    counts: &mut Counts,
    method: &str,
    params: &Value,
) -> Answer {
    match method {
        "ping" => Answer::Result(json!({})),
        "roots/list" => match harness {
            Harness::Local => Answer::Result(json!({"roots": policy.roots})),
            Harness::Copilot => Answer::Result(json!({"roots": []})),
        },
        "elicitation/create" => {
            if params.get("mode").and_then(Value::as_str) == Some("url") {
                let answer = policy.url.nth(counts.url).unwrap_or(UrlAnswer::Decline);
                counts.url += 1;
                Answer::Result(json!({"action": answer.action()}))
            } else {
                let answer = policy.form.nth(counts.form).unwrap_or(FormAnswer::Cancel);
                counts.form += 1;
                Answer::Result(match answer {
                    FormAnswer::Accept(content) => {
                        let content = content.unwrap_or_else(|| {
                            content_from_schema(
                                params.get("requestedSchema").unwrap_or(&Value::Null),
                            )
                        });
                        json!({"action": "accept", "content": content})
                    }
                    FormAnswer::Decline => json!({"action": "decline"}),
                    FormAnswer::Cancel => json!({"action": "cancel"}),
                })
            }
        }
        "sampling/createMessage" => {
            let answer = policy
                .sampling
                .nth(counts.sampling)
                .unwrap_or(SamplingAnswer::Refuse);
            counts.sampling += 1;
            sampling(harness, answer)
        }
        _ => match harness {
            Harness::Local => Answer::Error {
                code: -32601,
                message: format!("Method not found: {method}"),
            },
            Harness::Copilot => Answer::Error {
                code: -32601,
                message: format!("Method not found: {method}"),
            },
        },
    }
}

fn sampling(harness: Harness, answer: SamplingAnswer) -> Answer {
    match (harness, answer) {
        (_, SamplingAnswer::Ignore) => {
            Answer::None("the sampling request waits for an approval that never comes".into())
        }
        (Harness::Local, SamplingAnswer::Refuse) => Answer::Error {
            code: SAMPLING_REFUSED_CODE,
            message: SAMPLING_REFUSED_MESSAGE.into(),
        },
        (Harness::Local, SamplingAnswer::Text { text, model }) => Answer::Result(json!({
            "model": model.unwrap_or_else(|| DEFAULT_LOCAL_MODEL.into()),
            "content": {"type": "text", "text": text},
            "role": "assistant"
        })),
        (Harness::Copilot, SamplingAnswer::Refuse) => Answer::Result(json!({
            "model": DEFAULT_COPILOT_MODEL,
            "stopReason": "cancelled",
            "role": "assistant",
            "content": {"type": "text", "text": COPILOT_SAMPLING_CANCELLED}
        })),
        (Harness::Copilot, SamplingAnswer::Text { text, model }) => Answer::Result(json!({
            "model": model.unwrap_or_else(|| DEFAULT_COPILOT_MODEL.into()),
            "stopReason": "endTurn",
            "role": "assistant",
            "content": {"type": "text", "text": text}
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_and_copilot_answers() {
        let policy = AnswerPolicy::new().root("ws", "file:///ws");
        let mut counts = Counts::default();
        assert_eq!(
            answer(
                Harness::Local,
                &policy,
                &mut counts,
                "roots/list",
                &json!({})
            ),
            Answer::Result(json!({"roots": [{"name": "ws", "uri": "file:///ws"}]}))
        );
        assert_eq!(
            answer(
                Harness::Copilot,
                &policy,
                &mut counts,
                "roots/list",
                &json!({})
            ),
            Answer::Result(json!({"roots": []}))
        );
        assert_eq!(
            answer(
                Harness::Local,
                &policy,
                &mut counts,
                "sampling/createMessage",
                &json!({})
            ),
            Answer::Error {
                code: -32000,
                message: "Sampling not allowed".into()
            }
        );
        assert_eq!(
            answer(
                Harness::Local,
                &policy,
                &mut counts,
                "resources/list",
                &json!({})
            ),
            Answer::Error {
                code: -32601,
                message: "Method not found: resources/list".into()
            }
        );
        assert_eq!(
            answer(
                Harness::Local,
                &policy,
                &mut counts,
                "elicitation/create",
                &json!({"mode": "url"})
            ),
            Answer::Result(json!({"action": "decline"}))
        );
    }
}
