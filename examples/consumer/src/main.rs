//! A complete server with the bridge inside: one tool, `greet`, asks for the user's
//! name through input (`input_required`) and answers `Hello, <name>.`.
//!
//! VS Code's Local harness gets the question as `elicitation/create` from the
//! bridge in this process; a client of revision 2026-07-28 gets the
//! `input_required` result itself. The entry of `.vscode/mcp.json`:
//!
//! ```json
//! {"servers": {"demo": {"type": "stdio", "command": "/abs/path/consumer"}}}
//! ```

use mcp_bridge_vscode::embed::{self, EmbedOptions};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    ElicitRequestParams, ErrorData, InputRequest, InputRequests, InputRequiredResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;
use std::sync::Arc;

struct Greeter;

fn greet_tool() -> Tool {
    let schema = json!({"type": "object", "additionalProperties": false});
    let schema = schema.as_object().cloned().unwrap_or_default();
    Tool::new(
        "greet",
        "Asks for your name and greets you.",
        Arc::new(schema),
    )
}

/// The first round: ask for the name with a form.
fn ask_name() -> Result<CallToolResponse, ErrorData> {
    let requested_schema = serde_json::from_value(json!({
        "type": "object",
        "properties": {"name": {"type": "string", "title": "Name"}},
        "required": ["name"],
    }))
    .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    let mut requests = InputRequests::new();
    requests.insert(
        "name".to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: "What is your name?".to_owned(),
                requested_schema,
            },
        )),
    );
    Ok(InputRequiredResult::from_input_requests(requests).into())
}

impl ServerHandler for Greeter {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![greet_tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "greet" {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let answer = request.input_responses.as_ref().and_then(|r| r.get("name"));
        let Some(answer) = answer else {
            return ask_name();
        };
        let text = match (
            answer["action"].as_str(),
            answer["content"]["name"].as_str(),
        ) {
            (Some("accept"), Some(name)) => format!("Hello, {name}."),
            _ => "Hello, stranger.".to_owned(),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

#[tokio::main]
async fn main() -> Result<(), embed::EmbedError> {
    embed::serve_stdio(Greeter, EmbedOptions::default()).await?;
    Ok(())
}
