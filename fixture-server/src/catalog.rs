//! The tools, prompts and resources of a server, and its capabilities.
//!
//! The definitions are rmcp model types (`Tool`, `Prompt`, `Resource`,
//! `ResourceTemplate`); each has a plain function as handler, so the catalog of a
//! profile is data built once at start.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ErrorData, Prompt, Resource, ResourceContents, ResourceTemplate, Tool, ToolAnnotations,
};
use serde_json::{Map, Value, json};

use crate::context::Call;
use crate::input::Prior;
use crate::switch::Switch;

/// A boxed future that a handler returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A `tools/call` being handled.
pub struct ToolCall {
    pub call: Call,
    pub name: String,
    pub args: Map<String, Value>,
    pub prior: Prior,
}

impl ToolCall {
    /// The answers of a retry of round `round`, or `None` for a first call (or a
    /// state of another round): every tool that asks for input reads them so.
    pub fn answers(&self, round: u32) -> Option<&Map<String, Value>> {
        match &self.prior {
            Prior::Retry {
                round: r,
                responses,
                ..
            } if *r == round => Some(responses),
            _ => None,
        }
    }
}

/// What happens after the response of a tool is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// The process exits with `code` after `delay`.
    Exit { code: i32, delay: Duration },
}

/// The result of a tool (a `CallToolResult` or an `InputRequiredResult`), and what
/// follows its response.
pub struct ToolReply {
    pub result: Value,
    pub then: Option<After>,
}

impl ToolReply {
    pub fn new(result: impl serde::Serialize) -> ToolReply {
        ToolReply {
            result: serde_json::to_value(result).unwrap_or(Value::Null),
            then: None,
        }
    }
}

pub type ToolHandler = fn(ToolCall) -> BoxFuture<Result<ToolReply, ErrorData>>;

/// A tool and its handler.
pub struct ToolSpec {
    pub tool: Tool,
    pub handler: ToolHandler,
    /// Listed and callable only while this switch of `toggle` is on.
    pub switch: Option<Switch>,
}

impl ToolSpec {
    /// A tool that is always listed, with a raw input schema (an object schema).
    pub fn new(name: &str, description: &str, schema: Value, handler: ToolHandler) -> ToolSpec {
        ToolSpec {
            tool: tool(name, description, schema),
            handler,
            switch: None,
        }
    }
}

/// A `prompts/get` being handled.
pub struct PromptCall {
    pub call: Call,
    pub name: String,
    /// The string arguments of the request.
    pub arguments: Map<String, Value>,
    pub prior: Prior,
}

/// Returns a `GetPromptResult` or an `InputRequiredResult`.
pub type PromptHandler = fn(PromptCall) -> BoxFuture<Result<Value, ErrorData>>;

/// A prompt and its handler.
pub struct PromptSpec {
    pub prompt: Prompt,
    pub handler: PromptHandler,
    pub switch: Option<Switch>,
}

/// A resource with fixed contents.
pub struct ResourceSpec {
    pub resource: Resource,
    pub contents: fn() -> Vec<ResourceContents>,
}

/// A resource template; `read` gives the contents of a URI that matches it.
pub struct TemplateSpec {
    pub template: ResourceTemplate,
    pub read: fn(&str) -> Option<Vec<ResourceContents>>,
}

/// Answers `completion/complete` with a `CompleteResult`.
pub type CompletionHandler = fn(&Map<String, Value>) -> Value;

/// Everything a server offers.
pub struct Catalog {
    pub tools: Vec<ToolSpec>,
    pub prompts: Vec<PromptSpec>,
    pub resources: Vec<ResourceSpec>,
    pub templates: Vec<TemplateSpec>,
    /// `None`: no `completions` capability, and `completion/complete` is unknown.
    pub completion: Option<CompletionHandler>,
    pub instructions: &'static str,
    /// The `extensions` capability, when the server declares extensions.
    pub extensions: Option<Value>,
}

/// The instructions of `server/discover`.
pub const INSTRUCTIONS: &str = "The upstream server of the mcp-bridge-rs tests.";

impl Catalog {
    /// The tool named `name`, enabled or not.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|spec| spec.tool.name == name)
    }

    /// The `capabilities` of `server/discover`.
    pub fn capabilities(&self) -> Value {
        let mut capabilities = json!({
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "logging": {},
        });
        if self.completion.is_some() {
            capabilities["completions"] = json!({});
        }
        if let Some(extensions) = &self.extensions {
            capabilities["extensions"] = extensions.clone();
        }
        capabilities
    }
}

/// Icons of `name` in three schemes, `data:` first: a client of a remote server
/// keeps only the first (O10).
pub fn three_scheme_icons(name: &str) -> Vec<rmcp::model::Icon> {
    let icons = json!([
        {"src": "data:image/png;base64,iVBORw0KGgo=", "mimeType": "image/png"},
        {"src": format!("https://icons.example/{name}.png"), "mimeType": "image/png"},
        {"src": format!("file:///icons/{name}.svg"), "mimeType": "image/svg+xml"},
    ]);
    serde_json::from_value(icons).unwrap_or_default()
}

/// A tool with a description and a raw input schema (an object schema).
pub fn tool(name: impl Into<String>, description: &str, input_schema: Value) -> Tool {
    let schema = match input_schema {
        Value::Object(schema) => schema,
        _ => Map::new(),
    };
    Tool::new(name.into(), description.to_owned(), Arc::new(schema))
}

/// The input schema of a tool without arguments: only an empty object
/// (server/tools.mdx recommends it).
pub fn no_arguments() -> Value {
    json!({"type": "object", "additionalProperties": false})
}

/// `annotations: {readOnlyHint: true}`, the only annotation of the fixture.
pub fn read_only(tool: Tool) -> Tool {
    tool.with_annotations(ToolAnnotations::new().read_only(true))
}
