//! The bridge inside an rmcp server (M5): one executable serves the Local harness
//! and the Copilot harness of VS Code, and every client of revision 2026-07-28, on
//! stdio, without `mcp-bridge-vscode`.
//!
//! Call [`serve_stdio`] in place of rmcp's stdio serve. The first line of the
//! client selects the path of the connection:
//!
//! - `initialize` selects the bridge. Its upstream is your server in the same
//!   process ([`RmcpConnector`]): no second process, no pipe.
//! - Every other message selects rmcp's own stdio transport, without the bridge.
//!   A line that is not valid JSON-RPC also selects it, and rmcp answers it as it
//!   answers such a line (nothing for a line that is not JSON, -32600 for JSON
//!   that is not a message).
//! - A `server/discover` before that selects no path. [`Discover`] tells who
//!   answers it: your server ([`Discover::Answer`], the default; the Copilot
//!   harness then takes the modern path), or -32601 ([`Discover::Refuse`]; an
//!   older Copilot harness then sends `initialize` and the bridge does the input
//!   rounds for it).
//!
//! # Limits in the process
//!
//! Both paths take their limits from [`EmbedOptions`], not from the defaults of
//! `mcp-bridge-vscode`:
//!
//! - A line longer than [`EmbedOptions::max_line_bytes`] gets -32600 on the
//!   legacy path; on the first line and on the modern path it is dropped
//!   without a response.
//! - A request above [`EmbedOptions::max_in_flight`] gets -32603
//!   (`too_many_requests`) at once, on both paths.
//! - On the legacy path a request has no time limit in the process; the wait for
//!   VS Code's answers to an input request keeps [`EmbedOptions::input_timeout`]
//!   (1 h). A list change that a handler sends before it returns reaches VS Code
//!   before the result.
//!
//! # The end of stdin
//!
//! On the legacy path the bridge cancels the requests in flight at once, as
//! `mcp-bridge-vscode` does. On the modern path the listen streams end at once,
//! the other requests get at most [`EmbedOptions::shutdown_grace`] (2 s), and
//! then their cancel tokens fire. Then the function returns.
//!
//! There is no watchdog: `mcp-bridge-vscode` stops a stuck upstream process
//! after 8 s, but here the upstream is your own code in your own process. Only
//! a handler that never looks at its cancel token and never reaches an `.await`
//! can keep the process alive, and no task of the runtime could stop it either.
//!
//! A client that reads no more of stdout does not hold the end: on both paths,
//! what it has not read when the requests are done (on the legacy path at the
//! end of stdin, on the modern path after their grace) gets at most
//! `shutdown_grace` more, then it is dropped with a warning line and the
//! function returns.
//!
//! # Example
//!
//! ```no_run
//! use mcp_bridge_vscode::embed::{self, EmbedOptions};
//! use rmcp::ServerHandler;
//! use rmcp::model::{ServerCapabilities, ServerConfig};
//!
//! struct MyServer;
//!
//! impl ServerHandler for MyServer {
//!     fn get_info(&self) -> ServerConfig {
//!         ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
//!     }
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), embed::EmbedError> {
//!     embed::serve_stdio(MyServer, EmbedOptions::default()).await?;
//!     Ok(())
//! }
//! ```
//!
//! The entry of `.vscode/mcp.json` has no arguments for the bridge: the absolute
//! path of your executable is the command.
//!
//! ```json
//! {
//!   "servers": {
//!     "demo": { "type": "stdio", "command": "/abs/path/your-server" }
//!   }
//! }
//! ```

mod first_line;
mod link;
mod modern;

pub use link::{LinkClosed, RmcpConnector};

use crate::catalogue::EmbedWarning;
use crate::client::stdio as client_stdio;
use crate::config::{
    Config, DEFAULT_DISCOVER_TIMEOUT, DEFAULT_MAX_LINE_BYTES, Limits, UpstreamTarget,
};
use crate::log::{LogLevel, emit};
use crate::serve::Serve;
use crate::session::Exit;
use first_line::First;
use rmcp::ServerHandler;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RoleServer, ServerInitializeError, serve_server_with_ct};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Value, json};
use std::future::Future;
use std::io::Cursor;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Who answers a `server/discover` that comes before the path is chosen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Discover {
    /// Your server answers it; the Copilot harness then speaks revision
    /// 2026-07-28 on the modern path (input rounds from Copilot runtime 1.0.95).
    #[default]
    Answer,
    /// -32601, so that the Copilot harness sends `initialize` and the bridge does
    /// the input rounds for it (a harness older than 1.0.95). A client that needs
    /// a discover result cannot use the server then.
    Refuse,
}

/// The options of [`serve_stdio`]. The defaults are the contract's.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EmbedOptions {
    /// Who answers a `server/discover` before the path is chosen.
    pub discover: Discover,
    /// The longest line of the client, on both paths (64 MiB).
    pub max_line_bytes: usize,
    /// Requests of the client in flight, on both paths (256).
    pub max_in_flight: usize,
    /// How long the requests in flight of the modern path may take after the end
    /// of stdin, and the output that the client has not read yet after them, on
    /// both paths (2 s). On the legacy path the bridge cancels its requests at
    /// once, and the in-process server's loop ends with the link.
    pub shutdown_grace: Duration,
    /// How long VS Code may take to answer the input requests of one round on the
    /// legacy path (1 h).
    pub input_timeout: Duration,
    /// The server name for VS Code when your server's discover result has none.
    pub name: Option<String>,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        let limits = Limits::default();
        Self {
            discover: Discover::Answer,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_in_flight: limits.max_in_flight,
            shutdown_grace: limits.shutdown_grace,
            input_timeout: limits.input_timeout,
            name: None,
        }
    }
}

impl EmbedOptions {
    /// Sets [`EmbedOptions::discover`].
    pub fn discover(mut self, discover: Discover) -> Self {
        self.discover = discover;
        self
    }

    /// Sets [`EmbedOptions::max_line_bytes`].
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// Sets [`EmbedOptions::max_in_flight`].
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests;
        self
    }

    /// Sets [`EmbedOptions::shutdown_grace`].
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Sets [`EmbedOptions::input_timeout`].
    pub fn input_timeout(mut self, limit: Duration) -> Self {
        self.input_timeout = limit;
        self
    }

    /// Sets [`EmbedOptions::name`].
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The configuration of the bridge on the legacy path.
    fn bridge_config(&self) -> Config {
        let limits = Limits {
            max_in_flight: self.max_in_flight,
            // No time limit in the process: a request ends when the handler ends,
            // VS Code cancels it, or stdin ends.
            list_timeout: NO_LIMIT,
            call_timeout: NO_LIMIT,
            shutdown_grace: self.shutdown_grace,
            // Not the executable's watchdog (see the module's documentation): the
            // bound of the stop when the client reads no more of stdout.
            watchdog: self.shutdown_grace,
            input_timeout: self.input_timeout,
            ..Limits::default()
        };
        let program = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.file_name().map(|name| name.to_os_string()))
            .unwrap_or_else(|| "mcp-server".into());
        Config {
            name: self.name.clone(),
            log_level: LogLevel::Info,
            discover_timeout: DEFAULT_DISCOVER_TIMEOUT,
            max_line_bytes: self.max_line_bytes,
            upstream: UpstreamTarget::Command {
                program,
                args: Vec::new(),
            },
            limits,
        }
    }
}

/// A time that never comes in the life of a connection (about 100 years), for
/// the limits that the embedded bridge does not have. Finite, so that adding it to
/// an instant cannot overflow.
const NO_LIMIT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// Which path served the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Served {
    /// `initialize` came first: the bridge served it, until the end of stdin.
    Bridge,
    /// Another message came first: rmcp's stdio transport served it.
    Direct,
    /// Stdin ended before a path was chosen.
    Nothing,
}

/// Why [`serve_stdio`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// Stdin could not be read before the path was chosen.
    #[error("cannot read stdin: {0}")]
    Input(std::io::Error),
    /// Stdout could not be written before the path was chosen.
    #[error("cannot write stdout: {0}")]
    Output(std::io::Error),
    /// The in-process server stopped while the bridge served VS Code.
    #[error("the in-process server stopped")]
    ServerStopped,
    /// rmcp's stdio service failed.
    #[error("the server failed: {0}")]
    Server(String),
}

/// Serves `server` on stdin and stdout until the end of stdin; the first line
/// selects the path (see the [module documentation](self)).
///
/// ```no_run
/// # use mcp_bridge_vscode::embed::{self, Discover, EmbedOptions};
/// # use rmcp::ServerHandler;
/// # struct MyServer;
/// # impl ServerHandler for MyServer {}
/// # async fn example() -> Result<(), embed::EmbedError> {
/// // For a Copilot harness older than runtime 1.0.95: the bridge does the input rounds.
/// let options = EmbedOptions::default().discover(Discover::Refuse);
/// embed::serve_stdio(MyServer, options).await?;
/// # Ok(())
/// # }
/// ```
pub async fn serve_stdio<S: ServerHandler>(
    server: S,
    options: EmbedOptions,
) -> Result<Served, EmbedError> {
    serve_with(
        Arc::new(server),
        options,
        client_stdio::input(),
        client_stdio::output(),
        Box::pin(client_stdio::input_hangup()),
    )
    .await
}

/// [`serve_stdio`] on any input and output (a socket, a pair of pipes in a test).
pub async fn serve<S, R, W>(
    server: S,
    options: EmbedOptions,
    input: R,
    output: W,
) -> Result<Served, EmbedError>
where
    S: ServerHandler,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    serve_with(
        Arc::new(server),
        options,
        Box::new(input),
        Box::new(output),
        Box::pin(std::future::pending()),
    )
    .await
}

type Input = Box<dyn AsyncRead + Send + Unpin>;
type Output = Box<dyn AsyncWrite + Send + Unpin>;

async fn serve_with<S: ServerHandler>(
    server: Arc<S>,
    options: EmbedOptions,
    input: Input,
    mut output: Output,
    hangup: Pin<Box<dyn Future<Output = ()> + Send>>,
) -> Result<Served, EmbedError> {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    loop {
        let Some(line) = first_line::read(&mut reader, options.max_line_bytes)
            .await
            .map_err(EmbedError::Input)?
        else {
            return Ok(Served::Nothing);
        };
        let first = first_line::classify(&line);
        if let First::Discover(id) = &first {
            let answer = match options.discover {
                Discover::Answer => answer_discover(&server, &line, id).await,
                Discover::Refuse => refuse_discover(id),
            };
            output
                .write_all(&answer)
                .await
                .map_err(EmbedError::Output)?;
            output.flush().await.map_err(EmbedError::Output)?;
            continue;
        }
        // The lines already read go to the path first: this one, then what the
        // reader holds beyond it.
        let mut replay = line;
        replay.push(b'\n');
        replay.extend_from_slice(reader.buffer());
        let input: Input = Box::new(Cursor::new(replay).chain(reader.into_inner()));
        return match first {
            First::Initialize => legacy(server, &options, input, output, hangup).await,
            _ => modern(server, &options, input, output).await,
        };
    }
}

/// The bridge, with the server in the same process as its upstream.
async fn legacy<S: ServerHandler>(
    server: Arc<S>,
    options: &EmbedOptions,
    input: Input,
    output: Output,
    hangup: Pin<Box<dyn Future<Output = ()> + Send>>,
) -> Result<Served, EmbedError> {
    let config = options.bridge_config();
    let connector = Arc::new(RmcpConnector::new(server));
    match Serve::new(&config, connector)
        .input_hangup(hangup)
        .watchdog_line(|limit| {
            emit!(EmbedWarning::OutputLeft {
                n: limit.as_millis()
            })
        })
        .run(input, output)
        .await
    {
        Exit::EndOfInput => Ok(Served::Bridge),
        Exit::Failure => Err(EmbedError::ServerStopped),
    }
}

/// rmcp's own stdio transport, with the contract's limits.
async fn modern<S: ServerHandler>(
    server: Arc<S>,
    options: &EmbedOptions,
    input: Input,
    output: Output,
) -> Result<Served, EmbedError> {
    // rmcp counts the newline in its line length; the bridge does not.
    let transport = AsyncRwTransport::<RoleServer, _, _>::new(input, output)
        .with_max_line_length(options.max_line_bytes.saturating_add(1));
    let service = CancellationToken::new();
    let transport = modern::Limited::new(
        transport,
        options.max_in_flight,
        options.shutdown_grace,
        service.clone(),
    );
    match serve_server_with_ct(server, transport, service).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| Served::Direct)
            .map_err(|error| EmbedError::Server(error.to_string())),
        // Stdin ended before a request that opens the service: a normal end.
        // `Limited` ends rmcp's loop with the service's token, which rmcp reports
        // as `Cancelled` while it still waits for that request.
        Err(ServerInitializeError::ConnectionClosed(_) | ServerInitializeError::Cancelled) => {
            Ok(Served::Direct)
        }
        Err(error) => Err(EmbedError::Server(error.to_string())),
    }
}

/// -32601 for `server/discover`: the Copilot harness then sends `initialize`.
fn refuse_discover(id: &Value) -> Vec<u8> {
    line_of(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32601, "message": "Method not found"},
    }))
}

/// The server's own answer to `server/discover`, from rmcp's handling of a first
/// discover (its metadata checks included), on a transport that ends after it.
async fn answer_discover<S: ServerHandler>(server: &Arc<S>, line: &[u8], id: &Value) -> Vec<u8> {
    let Ok(request) = serde_json::from_slice::<ClientJsonRpcMessage>(line) else {
        return line_of(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32600, "message": "Invalid request"},
        }));
    };
    let (sent, mut answers) = mpsc::unbounded_channel();
    let transport = OneRequest {
        request: Some(request),
        sent,
    };
    // rmcp answers the discover and then finds the transport closed.
    let _ = serve_server_with_ct(server.clone(), transport, CancellationToken::new()).await;
    let mut out = Vec::new();
    while let Ok(answer) = answers.try_recv() {
        if let Ok(line) = serde_json::to_vec(&answer) {
            out.extend_from_slice(&line);
            out.push(b'\n');
        }
    }
    out
}

fn line_of(frame: &Value) -> Vec<u8> {
    let mut line = frame.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// A transport that gives one request and then ends.
struct OneRequest {
    request: Option<ClientJsonRpcMessage>,
    sent: mpsc::UnboundedSender<ServerJsonRpcMessage>,
}

impl Transport<RoleServer> for OneRequest {
    type Error = LinkClosed;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), LinkClosed>> + Send + 'static {
        std::future::ready(self.sent.send(item).map_err(|_| LinkClosed))
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.request.take()
    }

    async fn close(&mut self) -> Result<(), LinkClosed> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
        ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    };
    use rmcp::service::{RequestContext, RoleServer};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    /// A server whose tools/list takes five minutes and whose tools/call takes two
    /// hours: longer than the bridge's time limits of a list (120 s) and of a call
    /// (1 h), which the process has not.
    struct Slow;

    impl ServerHandler for Slow {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            tokio::time::sleep(Duration::from_secs(300)).await;
            Ok(ListToolsResult::with_all_items(Vec::new()))
        }

        async fn call_tool(
            &self,
            _request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            tokio::time::sleep(Duration::from_secs(2 * 3600)).await;
            Ok(CallToolResult::success(vec![ContentBlock::text("done")]).into())
        }
    }

    #[test]
    fn the_limits_the_process_has_not_outlast_any_connection_and_fit_any_instant() {
        const CENTURY_LESS_A_YEAR: Duration = Duration::from_secs(99 * 365 * 24 * 3600);
        assert!(NO_LIMIT >= CENTURY_LESS_A_YEAR, "{NO_LIMIT:?}");
        assert!(tokio::time::Instant::now().checked_add(NO_LIMIT).is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_on_the_legacy_path_has_no_time_limit_in_the_process() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_in, server_out) = tokio::io::split(server);
        let (client_in, mut client_out) = tokio::io::split(client);
        let client = async move {
            let mut lines = tokio::io::BufReader::new(client_in).lines();
            let mut answer_to = async |id: u64| {
                while let Some(line) = lines.next_line().await.unwrap() {
                    let frame: serde_json::Value = serde_json::from_str(&line).unwrap();
                    if frame["id"] == id {
                        return Some(frame);
                    }
                }
                None
            };
            let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;
            client_out.write_all(initialize.as_bytes()).await.unwrap();
            client_out.write_all(b"\n").await.unwrap();
            answer_to(1).await.unwrap();
            for line in [
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"work","arguments":{}}}"#,
            ] {
                client_out.write_all(line.as_bytes()).await.unwrap();
                client_out.write_all(b"\n").await.unwrap();
            }
            let answers = (answer_to(2).await, answer_to(3).await);
            client_out.shutdown().await.unwrap();
            answers
        };
        let (served, (list, call)) = tokio::join!(
            serve(Slow, EmbedOptions::default(), server_in, server_out),
            client
        );
        let (list, call) = (list.unwrap(), call.unwrap());
        assert_eq!(list["result"]["tools"], serde_json::json!([]), "{list}");
        assert_eq!(call["result"]["content"][0]["text"], "done", "{call}");
        assert_eq!(served.unwrap(), Served::Bridge);
    }
}
