//! The input requests of revision 2026-07-28 as requests of revision 2025-11-25
//! (R8, O1-O3, C2, and the quirks of the elicitation forms and URLs).
//!
//! An upstream result `input_required` carries `inputRequests` (key → request) and
//! a `requestState`. These functions check a round before VS Code sees any of it,
//! turn each input into the request that VS Code gets, and shape VS Code's answers
//! for the next round.

use super::capabilities::InputKinds;
use crate::net::url::url_is_safe;
use serde_json::{Map, Value, json};
use std::collections::HashSet;

type Object = Map<String, Value>;

/// What VS Code is asked for one input.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// A form of the upstream, validated on accept.
    Form {
        schema: Value,
    },
    /// A form without properties, shown as the Continue choice (quirk table).
    ContinueForm,
    /// A URL that VS Code already accepted in an earlier round, asked again:
    /// the Continue choice in place of the URL (O1).
    ContinueUrl {
        url: String,
    },
    /// A URL elicitation; the session adds its `elicitationId` (O1).
    Url {
        url: String,
    },
    Sampling,
    Roots,
}

/// One input of a round.
#[derive(Debug, Clone, PartialEq)]
pub enum Planned {
    /// Ask VS Code with `method` and `params`.
    Ask {
        key: String,
        method: &'static str,
        params: Object,
        ask: Ask,
    },
    /// Answer at once, without VS Code: a URL that the bridge refuses gets `decline`.
    Refused { key: String, answer: Value },
}

/// A round that the bridge can do.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundPlan {
    pub inputs: Vec<Planned>,
    /// Echoed unchanged in the next round, when the upstream gave one.
    pub request_state: Option<Value>,
}

/// Why a round cannot be done; the request of VS Code fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoundError {
    /// The result breaks revision 2026-07-28 (`invalid_response`).
    InvalidResult(String),
    /// More inputs than the limit (`too_many_input_requests`).
    TooMany { count: usize, limit: usize },
    /// VS Code did not declare this kind (`undeclared_input_request`).
    Undeclared { key: String, what: String },
    /// Not a valid input request for VS Code (`invalid_input_request`).
    Invalid { key: String, why: String },
}

impl RoundError {
    /// The text for `data.detail` and the warning line; it names the input key.
    pub fn detail(&self) -> String {
        match self {
            Self::InvalidResult(why) => why.clone(),
            Self::TooMany { count, limit } => {
                format!("{count} input requests in one round, and the limit is {limit}")
            }
            Self::Undeclared { key, what } => {
                format!("input request '{key}': the client did not declare {what}")
            }
            Self::Invalid { key, why } => format!("input request '{key}': {why}"),
        }
    }
}

/// The schema of the Continue form: the message of the server and one choice.
pub fn continue_schema() -> Value {
    json!({"type":"object","properties":{"choice":{"type":"string","title":"Continue","enum":["Continue"],"default":"Continue"}},"required":["choice"]})
}

/// Checks one `input_required` result and plans its round (R8, O1-O3, C2).
/// `accepted_urls` are the URLs that VS Code accepted in earlier rounds of the
/// same request.
pub fn plan_round(
    result: &Object,
    declared: InputKinds,
    accepted_urls: &HashSet<String>,
    max_inputs: usize,
) -> Result<RoundPlan, RoundError> {
    let request_state = result.get("requestState").cloned();
    if request_state
        .as_ref()
        .is_some_and(|state| !state.is_string())
    {
        return Err(RoundError::InvalidResult(
            "the requestState is not a string".into(),
        ));
    }
    let inputs = match result.get("inputRequests") {
        None => Object::new(),
        Some(Value::Object(inputs)) => inputs.clone(),
        Some(_) => {
            return Err(RoundError::InvalidResult(
                "the inputRequests are not an object".into(),
            ));
        }
    };
    if inputs.is_empty() && request_state.is_none() {
        return Err(RoundError::InvalidResult(
            "the input_required result has neither inputRequests nor a requestState".into(),
        ));
    }
    if inputs.len() > max_inputs {
        return Err(RoundError::TooMany {
            count: inputs.len(),
            limit: max_inputs,
        });
    }
    let planned = inputs
        .into_iter()
        .map(|(key, request)| plan_input(key, request, declared, accepted_urls))
        .collect::<Result<_, _>>()?;
    Ok(RoundPlan {
        inputs: planned,
        request_state,
    })
}

fn plan_input(
    key: String,
    request: Value,
    declared: InputKinds,
    accepted_urls: &HashSet<String>,
) -> Result<Planned, RoundError> {
    let invalid = |why: &str| RoundError::Invalid {
        key: key.clone(),
        why: why.to_owned(),
    };
    let undeclared = |what: &str| RoundError::Undeclared {
        key: key.clone(),
        what: what.to_owned(),
    };
    let Value::Object(mut request) = request else {
        return Err(invalid("the input request is not an object"));
    };
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let params = match request.shift_remove("params") {
        None => Object::new(),
        Some(Value::Object(params)) => params,
        Some(_) => return Err(invalid("the params are not an object")),
    };
    match method.as_str() {
        "elicitation/create" => plan_elicitation(key.clone(), params, declared, accepted_urls)
            .map_err(|error| match error {
                ElicitationError::Undeclared(what) => undeclared(what),
                ElicitationError::Invalid(why) => invalid(why),
            }),
        "sampling/createMessage" => {
            if !declared.sampling {
                return Err(undeclared("sampling"));
            }
            if !params.get("messages").is_some_and(Value::is_array)
                || !params.get("maxTokens").is_some_and(Value::is_number)
            {
                return Err(invalid("a sampling request needs messages and maxTokens"));
            }
            // O2: VS Code declares no sampling.tools, so it gets no tools.
            if !declared.sampling_tools && uses_sampling_tools(&params) {
                return Err(undeclared("sampling.tools"));
            }
            Ok(Planned::Ask {
                key,
                method: "sampling/createMessage",
                params,
                ask: Ask::Sampling,
            })
        }
        "roots/list" => {
            if !declared.roots {
                return Err(undeclared("roots"));
            }
            Ok(Planned::Ask {
                key,
                method: "roots/list",
                params,
                ask: Ask::Roots,
            })
        }
        "" => Err(invalid("the input request has no method")),
        _ => Err(invalid(&format!(
            "the method {method} is not an input request"
        ))),
    }
}

enum ElicitationError {
    Undeclared(&'static str),
    Invalid(&'static str),
}

fn plan_elicitation(
    key: String,
    mut params: Object,
    declared: InputKinds,
    accepted_urls: &HashSet<String>,
) -> Result<Planned, ElicitationError> {
    if !params.get("message").is_some_and(Value::is_string) {
        return Err(ElicitationError::Invalid("an elicitation needs a message"));
    }
    let method = "elicitation/create";
    match params.get("mode").and_then(Value::as_str) {
        Some("url") => {
            if !declared.elicitation_url {
                return Err(ElicitationError::Undeclared("elicitation.url"));
            }
            let Some(url) = params.get("url").and_then(Value::as_str).map(str::to_owned) else {
                return Err(ElicitationError::Invalid("a URL elicitation needs a url"));
            };
            if !url_is_safe(&url) {
                return Ok(Planned::Refused {
                    key,
                    answer: json!({"action": "decline"}),
                });
            }
            if accepted_urls.contains(&url) {
                if !declared.elicitation_form {
                    return Err(ElicitationError::Undeclared("elicitation.form"));
                }
                let message = params.get("message").cloned().unwrap_or_default();
                let params = continue_form(message);
                return Ok(Planned::Ask {
                    key,
                    method,
                    params,
                    ask: Ask::ContinueUrl { url },
                });
            }
            params.shift_remove("elicitationId");
            Ok(Planned::Ask {
                key,
                method,
                params,
                ask: Ask::Url { url },
            })
        }
        None | Some("form") => {
            if !declared.elicitation_form {
                return Err(ElicitationError::Undeclared("elicitation.form"));
            }
            let Some(schema) = params
                .get("requestedSchema")
                .filter(|s| s.is_object())
                .cloned()
            else {
                return Err(ElicitationError::Invalid(
                    "a form elicitation needs a requestedSchema object",
                ));
            };
            let has_properties = schema
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|properties| !properties.is_empty());
            if !has_properties {
                let message = params.get("message").cloned().unwrap_or_default();
                return Ok(Planned::Ask {
                    key,
                    method,
                    params: continue_form(message),
                    ask: Ask::ContinueForm,
                });
            }
            Ok(Planned::Ask {
                key,
                method,
                params,
                ask: Ask::Form { schema },
            })
        }
        Some(_) => Err(ElicitationError::Invalid(
            "the elicitation mode is neither form nor url",
        )),
    }
}

fn continue_form(message: Value) -> Object {
    let mut params = Object::new();
    params.insert("mode".into(), "form".into());
    params.insert("message".into(), message);
    params.insert("requestedSchema".into(), continue_schema());
    params
}

/// A sampling request that needs `sampling.tools`: tools, a tool choice, or a
/// tool content block in a message.
fn uses_sampling_tools(params: &Object) -> bool {
    if params.contains_key("tools") || params.contains_key("toolChoice") {
        return true;
    }
    let is_tool_block = |block: &Value| {
        matches!(
            block.get("type").and_then(Value::as_str),
            Some("tool_use" | "tool_result")
        )
    };
    params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|message| message.get("content"))
        .any(|content| match content {
            Value::Array(blocks) => blocks.iter().any(is_tool_block),
            block => is_tool_block(block),
        })
}

/// VS Code's answer to one input, for the upstream's `inputResponses` (O1-O3).
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The answer for the upstream.
    Ready(Value),
    /// The answer does not fit the input request (`invalid_client_answer`).
    Invalid(String),
}

/// Shapes VS Code's result for an input.
pub fn answer_of(ask: &Ask, result: Value) -> Answer {
    match ask {
        Ask::Form { .. } | Ask::ContinueForm | Ask::ContinueUrl { .. } | Ask::Url { .. } => {
            elicitation_answer(ask, result)
        }
        Ask::Sampling => {
            let valid = result.get("role").is_some_and(Value::is_string)
                && result.get("model").is_some_and(Value::is_string)
                && result
                    .get("content")
                    .is_some_and(|c| c.is_object() || c.is_array());
            if valid {
                Answer::Ready(result)
            } else {
                Answer::Invalid("the sampling result needs role, content and model".into())
            }
        }
        Ask::Roots => roots_answer(result),
    }
}

/// VS Code's error to an elicitation: the upstream gets `cancel` (O1).
pub fn elicitation_error_answer() -> Value {
    json!({"action": "cancel"})
}

fn elicitation_answer(ask: &Ask, result: Value) -> Answer {
    let action = result
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match action {
        "decline" | "cancel" => Answer::Ready(json!({ "action": action })),
        "accept" => match ask {
            Ask::Form { schema } => {
                let content = result.get("content").cloned().unwrap_or_else(|| json!({}));
                match form_content_error(schema, &content) {
                    None => Answer::Ready(json!({"action": "accept", "content": content})),
                    Some(error) => Answer::Invalid(error),
                }
            }
            Ask::ContinueForm => Answer::Ready(json!({"action": "accept", "content": {}})),
            // URL answers never carry content.
            _ => Answer::Ready(json!({"action": "accept"})),
        },
        _ => {
            Answer::Invalid("the elicitation result has no action accept, decline or cancel".into())
        }
    }
}

/// Why accepted form content does not fit the requested schema, if it does not
/// (quirk table: VS Code does not check it).
pub fn form_content_error(schema: &Value, content: &Value) -> Option<String> {
    if !content.is_object() {
        return Some("the accepted content is not an object".into());
    }
    let validator = match jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
    {
        Ok(validator) => validator,
        Err(_) => {
            return Some(
                "the requested schema of the form cannot be used to check the answer".into(),
            );
        }
    };
    let error = validator.iter_errors(content).next()?;
    let at = error.instance_path().to_string();
    let at = if at.is_empty() {
        "the content".to_owned()
    } else {
        format!("'{at}'")
    };
    Some(format!(
        "the accepted content does not fit the requested schema at {at}"
    ))
}

/// O3: the upstream gets only the roots with a `file://` URI.
fn roots_answer(result: Value) -> Answer {
    let Some(roots) = result.get("roots").and_then(Value::as_array) else {
        return Answer::Invalid("the roots result has no roots array".into());
    };
    let kept: Vec<Value> = roots
        .iter()
        .filter(|root| {
            root.get("uri")
                .and_then(Value::as_str)
                .is_some_and(|uri| uri.starts_with("file://"))
        })
        .map(|root| {
            let mut kept = Object::new();
            for member in ["uri", "name"] {
                if let Some(value) = root.get(member) {
                    kept.insert(member.into(), value.clone());
                }
            }
            Value::Object(kept)
        })
        .collect();
    Answer::Ready(json!({ "roots": kept }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vscode() -> InputKinds {
        InputKinds {
            elicitation_form: true,
            elicitation_url: true,
            sampling: true,
            sampling_tools: false,
            roots: true,
        }
    }

    fn plan(result: Value, declared: InputKinds) -> Result<RoundPlan, RoundError> {
        plan_round(result.as_object().unwrap(), declared, &HashSet::new(), 16)
    }

    fn ask_form_schema() -> Value {
        json!({"type":"object","properties":{"name":{"type":"string","title":"Name","minLength":1},
            "age":{"type":"integer","title":"Age","minimum":0,"maximum":150},"subscribe":{"type":"boolean","title":"Subscribe"},
            "color":{"type":"string","title":"Color","enum":["red","green","blue"]}},"required":["name"]})
    }

    #[test]
    fn r8_o1_a_form_round_keeps_the_state_and_the_form() {
        let result = json!({"resultType":"input_required","requestState":"s1","inputRequests":{"profile":{
            "method":"elicitation/create","params":{"mode":"form","message":"Tell us about you.","requestedSchema":ask_form_schema()}}}});
        let plan = plan(result, vscode()).unwrap();
        assert_eq!(plan.request_state, Some(json!("s1")));
        let Planned::Ask {
            key,
            method,
            params,
            ask,
        } = &plan.inputs[0]
        else {
            panic!()
        };
        assert_eq!((key.as_str(), *method), ("profile", "elicitation/create"));
        assert_eq!(params["message"], "Tell us about you.");
        assert_eq!(
            *ask,
            Ask::Form {
                schema: ask_form_schema()
            }
        );
    }

    #[test]
    fn quirk_an_empty_form_becomes_the_continue_choice() {
        let result = json!({"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create",
            "params":{"message":"Proceed?","requestedSchema":{"type":"object","properties":{}}}}}});
        let plan = plan(result, vscode()).unwrap();
        let Planned::Ask { params, ask, .. } = &plan.inputs[0] else {
            panic!()
        };
        assert_eq!(*ask, Ask::ContinueForm);
        assert_eq!(
            Value::Object(params.clone()),
            json!({"mode":"form","message":"Proceed?","requestedSchema":continue_schema()})
        );
        assert_eq!(
            answer_of(
                ask,
                json!({"action":"accept","content":{"choice":"Continue"}})
            ),
            Answer::Ready(json!({"action":"accept","content":{}}))
        );
    }

    #[test]
    fn o1_a_url_accepted_before_becomes_the_continue_choice() {
        let result = json!({"resultType":"input_required","requestState":"r2","inputRequests":{"auth":{"method":"elicitation/create",
            "params":{"mode":"url","message":"Sign in to continue.","url":"https://example.com/auth"}}}});
        let accepted: HashSet<String> = ["https://example.com/auth".to_owned()].into();
        let plan = plan_round(result.as_object().unwrap(), vscode(), &accepted, 16).unwrap();
        let Planned::Ask { params, ask, .. } = &plan.inputs[0] else {
            panic!()
        };
        assert_eq!(
            *ask,
            Ask::ContinueUrl {
                url: "https://example.com/auth".into()
            }
        );
        assert_eq!(params["message"], "Sign in to continue.");
        assert_eq!(
            answer_of(
                ask,
                json!({"action":"accept","content":{"choice":"Continue"}})
            ),
            Answer::Ready(json!({"action":"accept"}))
        );
    }

    #[test]
    fn quirk_unsafe_urls_are_declined_by_the_bridge() {
        for url in [
            "file://localhost/etc/passwd",
            "http://example.com/x",
            "https://user@example.com/",
            "https://example.com\\@evil.com",
            "vscode://x",
            "command:workbench.action.quit",
            "https://a b.com",
            "http://user:pw@127.0.0.1/",
        ] {
            let result = json!({"resultType":"input_required","inputRequests":{"file":{"method":"elicitation/create",
                "params":{"mode":"url","message":"Open the file.","url":url}}}});
            let plan = plan(result, vscode()).unwrap();
            assert_eq!(
                plan.inputs[0],
                Planned::Refused {
                    key: "file".into(),
                    answer: json!({"action":"decline"})
                },
                "{url}"
            );
        }
    }

    #[test]
    fn quirk_safe_urls_pass() {
        for url in [
            "https://example.com/auth",
            "http://localhost:41894/callback",
            "http://127.0.0.1/x",
            "http://127.5.6.7:8/",
            "http://[::1]:3000/",
            "http://app.localhost/",
            "HTTPS://EXAMPLE.COM/",
        ] {
            assert!(url_is_safe(url), "{url}");
        }
    }

    #[test]
    fn c2_o2_undeclared_kinds_fail_before_vscode_sees_anything() {
        let copilot = InputKinds {
            roots: false,
            ..vscode()
        };
        let roots = json!({"resultType":"input_required","inputRequests":{"roots":{"method":"roots/list"}}});
        assert_eq!(
            plan(roots, copilot),
            Err(RoundError::Undeclared {
                key: "roots".into(),
                what: "roots".into()
            })
        );
        let tools = json!({"resultType":"input_required","inputRequests":{"model":{"method":"sampling/createMessage","params":{
            "messages":[{"role":"user","content":{"type":"text","text":"Look up the weather."}}],"maxTokens":50,
            "tools":[{"name":"lookup","inputSchema":{"type":"object"}}]}}}});
        assert_eq!(
            plan(tools, vscode()).unwrap_err().detail(),
            "input request 'model': the client did not declare sampling.tools"
        );
        let tool_block = json!({"resultType":"input_required","inputRequests":{"m":{"method":"sampling/createMessage","params":{
            "messages":[{"role":"user","content":[{"type":"tool_result","toolUseId":"1","content":[]}]}],"maxTokens":5}}}});
        assert!(matches!(
            plan(tool_block, vscode()),
            Err(RoundError::Undeclared { .. })
        ));
        let url_only = InputKinds {
            elicitation_form: false,
            ..vscode()
        };
        let form = json!({"resultType":"input_required","inputRequests":{"f":{"method":"elicitation/create",
            "params":{"message":"m","requestedSchema":ask_form_schema()}}}});
        assert!(matches!(
            plan(form, url_only),
            Err(RoundError::Undeclared { .. })
        ));
    }

    #[test]
    fn rounds_that_are_not_valid_are_refused() {
        let cases = [
            (
                json!({"resultType":"input_required"}),
                "neither inputRequests nor a requestState",
            ),
            (
                json!({"resultType":"input_required","inputRequests":[]}),
                "not an object",
            ),
            (
                json!({"resultType":"input_required","requestState":5}),
                "not a string",
            ),
            (
                json!({"resultType":"input_required","inputRequests":{"k":{"method":"tools/call"}}}),
                "is not an input request",
            ),
            (
                json!({"resultType":"input_required","inputRequests":{"k":{"method":"sampling/createMessage","params":{}}}}),
                "needs messages",
            ),
            (
                json!({"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"m","mode":"x"}}}}),
                "neither form nor url",
            ),
        ];
        for (result, text) in cases {
            let error = plan(result.clone(), vscode()).unwrap_err();
            assert!(
                error.detail().contains(text),
                "{result}: {}",
                error.detail()
            );
        }
        let many: Map<String, Value> = (0..17)
            .map(|i| (format!("r{i}"), json!({"method":"roots/list"})))
            .collect();
        let result = json!({"resultType":"input_required","inputRequests":many});
        assert_eq!(
            plan(result, vscode()),
            Err(RoundError::TooMany {
                count: 17,
                limit: 16
            })
        );
    }

    #[test]
    fn a_state_alone_is_a_round_without_questions() {
        let plan = plan(
            json!({"resultType":"input_required","requestState":"poll"}),
            vscode(),
        )
        .unwrap();
        assert!(plan.inputs.is_empty());
    }

    #[test]
    fn quirk_accepted_form_content_is_checked_against_the_schema() {
        let ask = Ask::Form {
            schema: ask_form_schema(),
        };
        let good = json!({"action":"accept","content":{"name":"Ada","age":36,"subscribe":true,"color":"red"}});
        assert_eq!(answer_of(&ask, good.clone()), Answer::Ready(good));
        for content in [
            json!({"age":36}),
            json!({"name":""}),
            json!({"name":"Ada","age":200}),
            json!({"name":"Ada","color":"pink"}),
            json!("x"),
        ] {
            let answer = answer_of(&ask, json!({"action":"accept","content":content}));
            assert!(matches!(answer, Answer::Invalid(_)), "{content}");
        }
        assert_eq!(
            answer_of(&ask, json!({"action":"decline","content":{"x":1}})),
            Answer::Ready(json!({"action":"decline"}))
        );
        assert_eq!(
            answer_of(&ask, json!({"action":"cancel"})),
            Answer::Ready(json!({"action":"cancel"}))
        );
        assert!(matches!(
            answer_of(&ask, json!({"action":"maybe"})),
            Answer::Invalid(_)
        ));
    }

    #[test]
    fn o1_url_answers_lose_their_content() {
        let ask = Ask::Url {
            url: "https://example.com/auth".into(),
        };
        assert_eq!(
            answer_of(
                &ask,
                json!({"action":"accept","content":{"a":1},"_meta":{}})
            ),
            Answer::Ready(json!({"action":"accept"}))
        );
    }

    #[test]
    fn o3_only_file_roots_reach_the_upstream() {
        let answer = answer_of(
            &Ask::Roots,
            json!({"roots":[{"name":"ws","uri":"file:///home/me/ws","x":1},
            {"uri":"vscode-remote://ssh/home"},{"uri":"https://x"}],"_meta":{}}),
        );
        assert_eq!(
            answer,
            Answer::Ready(json!({"roots":[{"uri":"file:///home/me/ws","name":"ws"}]}))
        );
        assert!(matches!(
            answer_of(&Ask::Roots, json!({})),
            Answer::Invalid(_)
        ));
    }

    #[test]
    fn o2_sampling_results_pass_when_they_have_the_members() {
        let result = json!({"model":"copilot/gpt-4.1","content":{"type":"text","text":"Hello!"},"role":"assistant"});
        assert_eq!(
            answer_of(&Ask::Sampling, result.clone()),
            Answer::Ready(result)
        );
        assert!(matches!(
            answer_of(&Ask::Sampling, json!({"content":"x"})),
            Answer::Invalid(_)
        ));
    }
}
