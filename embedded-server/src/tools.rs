//! The reference tools, on rmcp's `ServerHandler`. Their definitions (names,
//! descriptions, input schemas) are the fixture's; the handlers are small, since the
//! fixture's own handlers run on its own loop, not on rmcp's.

use bridge_fixture_server::catalog::{no_arguments, tool};
use bridge_fixture_server::tools::{basic, input::name_schema, lists};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    ErrorCode, ErrorData, Implementation, InputRequiredResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext, SubscriptionSink};
use serde_json::{Map, Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::watch;

/// The server of `bridge-embedded-server`.
#[derive(Default)]
pub struct Reference {
    /// `--without-server-info`: the discover result names no server, as that of a
    /// handler that writes its own (the bridge then takes `EmbedOptions::name`).
    without_server_info: bool,
    /// Whether the tool `toggled` is listed.
    toggled: AtomicBool,
    /// The listen streams that want the list changes of the tools.
    listeners: Mutex<Vec<SubscriptionSink>>,
    /// The streams accepted for the list changes of the tools, and those of them
    /// that reached `listen`. rmcp acknowledges a stream before it calls `listen`,
    /// so a client that calls `toggle` right after the acknowledgment could
    /// otherwise find no listener yet and get the result without its list change.
    accepted_listens: AtomicUsize,
    registered_listens: watch::Sender<usize>,
}

impl Reference {
    /// A server whose discover result has no `serverInfo`.
    pub fn without_server_info() -> Self {
        Self {
            without_server_info: true,
            ..Self::default()
        }
    }
}

/// How long `toggle` waits for an acknowledged stream to reach `listen`; a stream
/// whose acknowledgment never went out (the client left) does not hold it longer.
const LISTENER_WAIT: Duration = Duration::from_secs(1);

/// echo, add, slow, toggle and toggled while it is on (the fixture's), then ask_name.
fn tools(toggled: bool) -> Vec<Tool> {
    let mut tools: Vec<Tool> = basic::tools()
        .into_iter()
        .chain(lists::tools())
        .map(|spec| spec.tool)
        .filter(|tool| match tool.name.as_ref() {
            "echo" | "add" | "slow" | "toggle" => true,
            "toggled" => toggled,
            _ => false,
        })
        .collect();
    tools.push(tool(
        "ask_name",
        "Asks for your name (an elicitation through input_required) and greets you.",
        no_arguments(),
    ));
    tools
}

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

fn invalid(message: String) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_PARAMS, message, None)
}

fn argument<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a Value, ErrorData> {
    args.get(name)
        .ok_or_else(|| invalid(format!("The argument '{name}' is missing.")))
}

fn int(args: &Map<String, Value>, name: &str) -> Result<i64, ErrorData> {
    argument(args, name)?
        .as_i64()
        .ok_or_else(|| invalid(format!("The argument '{name}' must be an integer.")))
}

/// The first round of ask_name: one form elicitation, "Your name?".
fn ask_for_name() -> Result<CallToolResponse, ErrorData> {
    let result: InputRequiredResult = serde_json::from_value(json!({
        "resultType": "input_required",
        "inputRequests": {"name": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Your name?", "requestedSchema": name_schema(),
        }}},
        "requestState": "ask_name",
    }))
    .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    Ok(result.into())
}

impl ServerHandler for Reference {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            "bridge-embedded-server",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions("The embedded server of the mcp-bridge-rs tests.")
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let versions = self.supported_protocol_versions().into_owned();
        let info = self.get_info();
        if !self.without_server_info {
            return Ok(DiscoverResult::from_server_info(versions, info));
        }
        let mut result = DiscoverResult::new(versions, info.capabilities);
        result.instructions = info.instructions;
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools(
            self.toggled.load(Ordering::SeqCst),
        )))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp asks this before it sends the acknowledgment.
        if requested.tools_list_changed == Some(true) {
            self.accepted_listens.fetch_add(1, Ordering::SeqCst);
        }
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        if context.accepted().tools_list_changed == Some(true) {
            if let Ok(mut listeners) = self.listeners.lock() {
                listeners.push(context.sink().clone());
            }
            self.registered_listens.send_modify(|count| *count += 1);
        }
        context.cancelled().await;
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        match request.name.as_ref() {
            "echo" => match argument(&args, "text")?.as_str() {
                Some(echoed) => Ok(text(echoed)),
                None => Err(invalid("The argument 'text' must be a string.".into())),
            },
            "add" => {
                let sum = int(&args, "a")?
                    .checked_add(int(&args, "b")?)
                    .ok_or_else(|| invalid("The sum does not fit in 64 bits.".into()))?;
                Ok(text(sum.to_string()))
            }
            "slow" => {
                let ms = int(&args, "ms")?.max(0).unsigned_abs();
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(text(format!("slept {ms} ms"))),
                    _ = context.ct.cancelled() => Err(ErrorData::internal_error("cancelled", None)),
                }
            }
            "toggle" => {
                let enabled = argument(&args, "enabled")?
                    .as_bool()
                    .ok_or_else(|| invalid("The argument 'enabled' must be a boolean.".into()))?;
                if args.get("target").is_some_and(|target| target != "tool") {
                    return Err(invalid("This server has no prompts to toggle.".into()));
                }
                if self.toggled.swap(enabled, Ordering::SeqCst) != enabled {
                    // The list change goes out before the result, to every stream
                    // acknowledged so far.
                    let accepted = self.accepted_listens.load(Ordering::SeqCst);
                    let mut registered = self.registered_listens.subscribe();
                    let _ = tokio::time::timeout(
                        LISTENER_WAIT,
                        registered.wait_for(|count| *count >= accepted),
                    )
                    .await;
                    let listeners = match self.listeners.lock() {
                        Ok(listeners) => listeners.clone(),
                        Err(_) => Vec::new(),
                    };
                    for listener in listeners {
                        let _ = listener.notify_tool_list_changed().await;
                    }
                }
                Ok(text(format!(
                    "toggled is {}",
                    if enabled { "on" } else { "off" }
                )))
            }
            "toggled" if self.toggled.load(Ordering::SeqCst) => Ok(text("toggled")),
            "ask_name" => {
                let answer = request
                    .input_responses
                    .as_ref()
                    .and_then(|responses| responses.get("name"));
                let Some(answer) = answer else {
                    return ask_for_name();
                };
                match (
                    answer["action"].as_str(),
                    answer["content"]["name"].as_str(),
                ) {
                    (Some("accept"), Some(name)) => Ok(text(format!("Hello, {name}."))),
                    _ => Ok(text("No name was given.")),
                }
            }
            other => Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!("Unknown tool: {other}"),
                None,
            )),
        }
    }
}
