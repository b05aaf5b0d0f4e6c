//! [`AnswerPolicy`]: what the simulated user answers to the server's questions.
//!
//! In VS Code a person answers each form, URL, sampling consent and the roots
//! come from the workspace folders. The simulators take those answers from a
//! policy: a JSON file (`--answers FILE`), command-line flags, or builders in tests.
//!
//! ```json
//! {
//!   "form": [{"accept": {"name": "Ada", "age": 36}}, "cancel"],
//!   "url": "accept",
//!   "sampling": {"text": "Hello!", "model": "copilot/gpt-4.1"},
//!   "roots": [{"name": "ws", "uri": "file:///home/me/ws"}]
//! }
//! ```
//!
//! Each of `form`, `url` and `sampling` is one answer or a list used in order
//! (the last one repeats). `form`: `"accept"` (content made from the schema),
//! `{"accept": {...}}`, `"decline"`, `"cancel"`. `url`: `"accept"`, `"decline"`,
//! `"cancel"`. `sampling`: `{"text": .., "model"?: ..}`, `"refuse"` (the Local
//! harness answers -32000, copilot-cli a cancelled result), or `"ignore"` (no
//! answer, as copilot-cli waiting for an approval). Defaults: form `cancel`,
//! url `decline`, sampling `refuse`, roots none.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The model name the Local harness reports when the policy names none
/// (the frame file's example).
pub const DEFAULT_LOCAL_MODEL: &str = "copilot/gpt-4.1";
/// The model name copilot-cli reports when the policy names none (inferred).
pub const DEFAULT_COPILOT_MODEL: &str = "gpt-5.6-sol";

/// The answer to a form elicitation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "Value")]
pub enum FormAnswer {
    /// Accept; `None` makes the content from the requested schema.
    Accept(Option<Map<String, Value>>),
    /// Decline.
    Decline,
    /// Cancel (close the form).
    Cancel,
}

/// The answer to a URL elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UrlAnswer {
    /// Open the URL.
    Accept,
    /// Decline.
    Decline,
    /// Cancel.
    Cancel,
}

impl UrlAnswer {
    /// The `action` value.
    pub fn action(self) -> &'static str {
        match self {
            UrlAnswer::Accept => "accept",
            UrlAnswer::Decline => "decline",
            UrlAnswer::Cancel => "cancel",
        }
    }
}

/// The answer to `sampling/createMessage`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "Value")]
pub enum SamplingAnswer {
    /// The user consents and the model answers `text`.
    Text {
        /// The text of the reply.
        text: String,
        /// The model name, or the harness's default.
        model: Option<String>,
    },
    /// The user refuses.
    Refuse,
    /// No answer at all (copilot-cli waits for a host approval).
    Ignore,
}

/// One root (workspace folder).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The folder name.
    pub name: String,
    /// A `file://` URI.
    pub uri: String,
}

/// One answer or a list of answers used in order, the last repeating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Sequence<T> {
    /// The same answer every time.
    One(T),
    /// Answers in order; the last one repeats.
    Many(Vec<T>),
}

impl<T: Clone> Sequence<T> {
    /// The answer for the `n`-th question (0-based).
    pub fn nth(&self, n: usize) -> Option<T> {
        match self {
            Sequence::One(answer) => Some(answer.clone()),
            Sequence::Many(answers) => answers.get(n).or_else(|| answers.last()).cloned(),
        }
    }
}

/// What the simulated user answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnswerPolicy {
    /// Form elicitations.
    pub form: Sequence<FormAnswer>,
    /// URL elicitations.
    pub url: Sequence<UrlAnswer>,
    /// Sampling requests.
    pub sampling: Sequence<SamplingAnswer>,
    /// The roots (Local harness; copilot-cli always answers an empty list).
    pub roots: Vec<Root>,
}

impl Default for AnswerPolicy {
    fn default() -> Self {
        Self {
            form: Sequence::One(FormAnswer::Cancel),
            url: Sequence::One(UrlAnswer::Decline),
            sampling: Sequence::One(SamplingAnswer::Refuse),
            roots: Vec::new(),
        }
    }
}

impl AnswerPolicy {
    /// The defaults: cancel forms, decline URLs, refuse sampling, no roots.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads a policy from JSON text.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Answers every form with `answer`.
    pub fn form(mut self, answer: FormAnswer) -> Self {
        self.form = Sequence::One(answer);
        self
    }

    /// Answers the forms in order.
    pub fn forms(mut self, answers: Vec<FormAnswer>) -> Self {
        self.form = Sequence::Many(answers);
        self
    }

    /// Accepts every form with `content`.
    pub fn accept_form(self, content: Value) -> Self {
        let content = match content {
            Value::Object(map) => Some(map),
            _ => None,
        };
        self.form(FormAnswer::Accept(content))
    }

    /// Answers every URL elicitation with `answer`.
    pub fn url(mut self, answer: UrlAnswer) -> Self {
        self.url = Sequence::One(answer);
        self
    }

    /// Answers every sampling request with `answer`.
    pub fn sampling(mut self, answer: SamplingAnswer) -> Self {
        self.sampling = Sequence::One(answer);
        self
    }

    /// Answers the sampling requests in order.
    pub fn samplings(mut self, answers: Vec<SamplingAnswer>) -> Self {
        self.sampling = Sequence::Many(answers);
        self
    }

    /// The model answers `text` to every sampling request.
    pub fn sampling_text(self, text: &str) -> Self {
        self.sampling(SamplingAnswer::Text {
            text: text.to_owned(),
            model: None,
        })
    }

    /// Adds a root.
    pub fn root(mut self, name: &str, uri: &str) -> Self {
        self.roots.push(Root {
            name: name.to_owned(),
            uri: uri.to_owned(),
        });
        self
    }
}

/// Content for an accepted form without given content: a value for each
/// required property (its `default`, the first `enum` value, `minimum`, or a
/// plain value of its type), as a person filling only the required fields.
pub fn content_from_schema(requested_schema: &Value) -> Map<String, Value> {
    let mut content = Map::new();
    let properties = requested_schema
        .get("properties")
        .and_then(Value::as_object);
    let required: Vec<&str> = requested_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = properties else {
        return content;
    };
    for (name, schema) in properties {
        if !required.contains(&name.as_str()) {
            continue;
        }
        let value = if let Some(default) = schema.get("default") {
            default.clone()
        } else if let Some(first) = schema
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            first.clone()
        } else {
            match schema.get("type").and_then(Value::as_str) {
                Some("integer") | Some("number") => {
                    schema.get("minimum").cloned().unwrap_or(json!(0))
                }
                Some("boolean") => json!(false),
                Some("array") => json!([]),
                _ => json!("text"),
            }
        };
        content.insert(name.clone(), value);
    }
    content
}

impl TryFrom<Value> for FormAnswer {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        match &value {
            Value::String(s) if s == "accept" => Ok(FormAnswer::Accept(None)),
            Value::String(s) if s == "decline" => Ok(FormAnswer::Decline),
            Value::String(s) if s == "cancel" => Ok(FormAnswer::Cancel),
            Value::Object(map) if map.len() == 1 => match map.get("accept") {
                Some(Value::Object(content)) => Ok(FormAnswer::Accept(Some(content.clone()))),
                Some(Value::Null) => Ok(FormAnswer::Accept(None)),
                _ => Err(format!("a form answer is not valid: {value}")),
            },
            _ => Err(format!(
                "a form answer is \"accept\", {{\"accept\": {{..}}}}, \"decline\" or \"cancel\", not {value}"
            )),
        }
    }
}

impl From<FormAnswer> for Value {
    fn from(answer: FormAnswer) -> Self {
        match answer {
            FormAnswer::Accept(None) => json!("accept"),
            FormAnswer::Accept(Some(content)) => json!({"accept": content}),
            FormAnswer::Decline => json!("decline"),
            FormAnswer::Cancel => json!("cancel"),
        }
    }
}

impl TryFrom<Value> for SamplingAnswer {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        match &value {
            Value::String(s) if s == "refuse" => Ok(SamplingAnswer::Refuse),
            Value::String(s) if s == "ignore" => Ok(SamplingAnswer::Ignore),
            Value::Object(map) => {
                let text = map
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("a sampling answer needs a text: {value}"))?;
                let model = map.get("model").and_then(Value::as_str).map(str::to_owned);
                Ok(SamplingAnswer::Text {
                    text: text.to_owned(),
                    model,
                })
            }
            _ => Err(format!(
                "a sampling answer is {{\"text\": ..}}, \"refuse\" or \"ignore\", not {value}"
            )),
        }
    }
}

impl From<SamplingAnswer> for Value {
    fn from(answer: SamplingAnswer) -> Self {
        match answer {
            SamplingAnswer::Text { text, model: None } => json!({"text": text}),
            SamplingAnswer::Text {
                text,
                model: Some(model),
            } => json!({"text": text, "model": model}),
            SamplingAnswer::Refuse => json!("refuse"),
            SamplingAnswer::Ignore => json!("ignore"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_policy_file() {
        let policy = AnswerPolicy::from_json(
            r#"{"form": [{"accept": {"name": "Ada"}}, "cancel"], "url": "accept",
                "sampling": {"text": "Hello!"}, "roots": [{"name": "ws", "uri": "file:///ws"}]}"#,
        )
        .unwrap();
        assert_eq!(
            policy.form.nth(0),
            Some(FormAnswer::Accept(Some(
                json!({"name": "Ada"}).as_object().unwrap().clone()
            )))
        );
        assert_eq!(policy.form.nth(5), Some(FormAnswer::Cancel));
        assert_eq!(policy.url.nth(0), Some(UrlAnswer::Accept));
        assert_eq!(policy.roots.len(), 1);
        assert!(AnswerPolicy::from_json(r#"{"frm": "cancel"}"#).is_err());
        assert!(AnswerPolicy::from_json(r#"{"form": "maybe"}"#).is_err());
    }

    #[test]
    fn fills_required_fields() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1}, "age": {"type": "integer"},
            "color": {"type": "string", "enum": ["red", "green"]}, "opt": {"type": "string"}},
            "required": ["name", "age", "color"]});
        assert_eq!(
            Value::Object(content_from_schema(&schema)),
            json!({"name": "text", "age": 0, "color": "red"})
        );
    }
}
