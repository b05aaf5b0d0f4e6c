//! The command line of `bridge-fixture-server`, with clap as the other executables of
//! the workspace: the options in groups of the help text, each value checked by its
//! parser, and the rules between options checked after the parse ([`Misuse`]). Values
//! come as `--name VALUE` or `--name=VALUE`; the last occurrence wins, and
//! `--tls-name` and `--fail-status` may be repeated.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser};

use crate::auth::options::{
    AuthOptions, HostileEndpoint, HostileRedirect, LoopbackRole, MAX_CODE_BYTES,
    MAX_METADATA_BYTES, MAX_TOKEN_LIFETIME, MOVED_PREFIX,
};
use crate::browse::BrowseOptions;
use crate::config::{Config, Profile};
use crate::https::options::{
    HttpOptions, MAX_EVENT_BYTES, MAX_MILLIS, MAX_STREAM_EVENTS, TlsCase, Transport,
    parse_fail_status,
};

/// What the command line asks for (`--help` and `--version` are clap's errors of
/// their kinds, printed with exit code 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// The options of a server (boxed: they are large, and the other command small).
    Serve(Box<Options>),
    /// `--browse URL`: the test browser, no server.
    Browse(BrowseOptions),
}

/// The options of a serving process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub config: Config,
    /// Misbehave: close stdout at once, then sleep without reading stdin.
    pub close_stdout: bool,
    /// stdio, or Streamable HTTP with or without TLS.
    pub transport: Transport,
    /// The options of the HTTP modes (defaults on stdio).
    pub http: HttpOptions,
    /// The authorization server of `--auth` (off by default).
    pub auth: AuthOptions,
}

/// The largest N of `--many-tools`.
pub const MAX_MANY_TOOLS: usize = 100_000;

const ABOUT: &str = "\
The upstream MCP server of the mcp-bridge-rs tests: MCP revision 2026-07-28 on stdio,
or over Streamable HTTP with --https or --http.
On stdio it reads one JSON-RPC message per line on stdin, writes one per line on
stdout, and writes log lines that start with \"bridge-fixture-server: \" on stderr. Every
request needs params._meta with io.modelcontextprotocol/protocolVersion \"2026-07-28\"
and io.modelcontextprotocol/clientCapabilities. The lists have pages of 100 items.";

const AFTER_HELP: &str = "\
Streamable HTTP (the same tools, prompts, resources and profiles): one POST per
JSON-RPC message at /mcp, answered with JSON or SSE, 202 for a notification, 405 for
GET and DELETE; a missing or mismatched MCP-Protocol-Version, Mcp-Method or Mcp-Name
header gets 400 with the JSON-RPC error -32020. With --auth the issuer is the origin
https://127.0.0.1:PORT (the stdout lines stay the same). The faults of the HTTP modes
(all but --fail-status act on SSE streams only; --always-sse gives every request one)
are for the tests of clients.

Exit codes: 0 at the end of stdin, on SIGTERM (HTTP) and after the tool shutdown,
1 when stdout fails or the HTTP server cannot start, 2 for a bad command line, 3 after
the tool crash.";

#[derive(Debug, Parser)]
#[command(
    name = "bridge-fixture-server",
    version,
    about = ABOUT,
    after_help = AFTER_HELP,
    args_override_self = true
)]
struct Args {
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    http: HttpArgs,
    #[command(flatten)]
    auth: AuthArgs,
    #[command(flatten)]
    browse: BrowseArgs,
    #[command(flatten)]
    faults: FaultArgs,
}

#[derive(Debug, clap::Args)]
struct ServerArgs {
    /// The tool surface: fixture (default: 21 tools, 3 prompts) or conformance (the
    /// "everything" server of the MCP conformance suite)
    #[arg(long, value_name = "NAME", value_parser = profile)]
    profile: Option<Profile>,
    /// Adds the tools tool_0 .. tool_<N-1> (N from 0 to 100000)
    #[arg(long, value_name = "N", value_parser = many_tools)]
    many_tools: Option<usize>,
    /// Adds the MCP Apps parts: the extension io.modelcontextprotocol/ui, the tool show
    /// and the resources ui://fixture/view and file:///fixture/readme.txt
    #[arg(long)]
    apps: bool,
    /// Adds the tool array_output (an outputSchema of type array)
    #[arg(long)]
    array_output: bool,
    /// Adds the tools stray_param_header, whose x-mcp-header is on the items of an
    /// array, and stray_param_header_in_any_of, whose x-mcp-header is in an anyOf
    /// (neither reachable through properties alone)
    #[arg(long)]
    stray_param_header: bool,
    /// Adds the tool param_header_echo: its parameter text is mirrored in the header
    /// Mcp-Param-Text until a call with mark false takes the x-mcp-header out of the list
    /// (mark true puts it back)
    #[arg(long)]
    param_header_echo: bool,
    /// Adds the tool param_header_not_a_token, whose x-mcp-header "Re gion" has a
    /// space, which the name of an HTTP header cannot have
    #[arg(long)]
    param_header_not_a_token: bool,
    /// Declares no completions; completion/complete gets -32601
    #[arg(long)]
    no_completions: bool,
    /// Names no serverInfo in any result (a server that does not name itself)
    #[arg(long)]
    anonymous: bool,
    /// The serverInfo, the tool echo and each prompt, resource and resource template
    /// carry three icons: data:, https: and file:; the tool link and the prompt link
    /// give a resource_link with them
    #[arg(long)]
    icons: bool,
    /// Leaves logging out of the capabilities and still sends the log messages of the
    /// tool log (a server of revision 2026-07-28 may: the Python SDK deprecates the
    /// capability)
    #[arg(long)]
    log_undeclared: bool,
    /// Sends the list changes of toggle and the updates of touch in the response stream
    /// of the call (an SSE stream over HTTP, untagged frames on stdio) and not on the
    /// listen streams, as FastMCP does; touch then reports any uri, subscribed or not
    #[arg(long)]
    list_change_in_response: bool,
    /// Misbehaves: closes stdout at once, then sleeps 120 s without reading stdin
    #[arg(long)]
    close_stdout: bool,
}

#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Streamable HTTP")]
struct HttpArgs {
    /// Serves https://127.0.0.1:PORT/mcp. Stdout gets two lines: the URL, then
    /// "ca-file: PATH", the CA certificate (PEM) that a client must trust. The server
    /// stops at the end of stdin or on SIGTERM
    #[arg(long)]
    https: bool,
    /// Serves http://127.0.0.1:PORT/mcp without TLS (one line: the URL)
    #[arg(long)]
    http: bool,
    /// The port on 127.0.0.1 (default 0: an ephemeral port)
    #[arg(long, value_name = "N", value_parser = port)]
    port: Option<u16>,
    /// The host of the announced URL (and of the issuer and the resource of --auth) in
    /// place of 127.0.0.1; the server still listens on 127.0.0.1, and the certificate
    /// made in memory names NAME: a "remote" server that a client reaches through a
    /// proxy
    #[arg(long, value_name = "NAME", value_parser = host)]
    host: Option<String>,
    /// Loads DIR/server.crt and DIR/server.key (as written by `tls-fixtures generate
    /// DIR`); ca-file is DIR/ca.crt. Without it the certificates are made in memory and
    /// the CA is written to a new folder under the temporary directory (removed at the
    /// end; the folders of killed servers go at the next start)
    #[arg(long, value_name = "DIR")]
    tls_dir: Option<PathBuf>,
    /// The certificate the server presents: good (default), or a case that a client
    /// trusting ca-file must refuse: expired, wrong-host (for wrong.example only) or
    /// unknown-ca (issued by an untrusted CA)
    #[arg(long, value_name = "CASE", value_parser = tls_case)]
    tls_case: Option<TlsCase>,
    /// The certificate made in memory also names NAME (may be repeated), for a client
    /// that reaches the server through a proxy by a name
    #[arg(long, value_name = "NAME", value_parser = dns_name)]
    tls_name: Vec<String>,
    /// The interval of ": keep-alive" comment lines on SSE streams (default 15000)
    #[arg(long, value_name = "MS", value_parser = keep_alive_ms)]
    keep_alive_ms: Option<Duration>,
    /// Answers every request with an SSE stream (default: JSON when the response is the
    /// only frame of the request)
    #[arg(long)]
    always_sse: bool,
    /// Every POST needs "Authorization: Bearer <the value of VAR>", else 401 with
    /// "WWW-Authenticate: Bearer" (a server with a static token)
    #[arg(long, value_name = "VAR")]
    bearer_env: Option<String>,
    /// After the lines above, writes each POST to stdout as a line "exchange:
    /// {"post":N,"headers":{...},"body":...}" (the credential of Authorization
    /// redacted), for a runner that checks what a client sent
    #[arg(long)]
    print_exchanges: bool,
}

#[derive(Debug, clap::Args)]
#[command(
    next_help_heading = "OAuth (RFC 9728, RFC 8414, RFC 7591, PKCE), for the tests of sign-in clients"
)]
struct AuthArgs {
    /// POST /mcp needs "Authorization: Bearer <access token>" of the authorization
    /// server of this process (audience: the MCP URL, scope mcp:read), else 401 with
    /// "WWW-Authenticate: Bearer resource_metadata=..."; tools/call of the tool guarded
    /// (added) also needs mcp:write (403 insufficient_scope). Serves the metadata
    /// documents, /authorize (a consent page that approves by itself), /token,
    /// /register, /fixture/client.json[?port=N], and POST /fixture/forget-clients and
    /// /fixture/expire-tokens (204), GET /fixture/secrets (every state, verifier,
    /// code, token and client secret seen, and the count of code exchanges), and POST
    /// /fixture/resource (204: the body, an absolute URL, becomes the resource of the
    /// protected resource metadata). Clients:
    /// bridge-fixture-confidential (secret bridge-fixture-secret-0123456789) and
    /// bridge-fixture-public, redirect URI http://127.0.0.1/callback (any port)
    #[arg(long, visible_alias = "oauth")]
    auth: bool,
    /// No dynamic client registration (no /register)
    #[arg(long)]
    no_registration: bool,
    /// Accepts client IDs that are https URLs of client ID metadata documents (fetched
    /// trusting ca-file and --auth-ca-file)
    #[arg(long)]
    cimd: bool,
    /// Also trusts this CA (PEM) when a document is fetched
    #[arg(long, value_name = "PATH")]
    auth_ca_file: Option<PathBuf>,
    /// Denies every authorization: error=access_denied
    #[arg(long)]
    deny: bool,
    /// Denies every authorization with error=ERROR (another code than access_denied,
    /// or a text that is not a plain code)
    #[arg(long, value_name = "ERROR")]
    deny_with: Option<String>,
    /// No iss parameter in redirects (RFC 9207)
    #[arg(long)]
    no_iss: bool,
    /// Forgets every dynamically registered client each time it issues the tokens of a
    /// code: a refresh then gets invalid_client, and /authorize an error page without
    /// a redirect
    #[arg(long)]
    forget_clients: bool,
    /// The lifetime of access tokens in seconds (default 900)
    #[arg(long, value_name = "S", value_parser = token_lifetime)]
    token_lifetime: Option<Duration>,
    /// Issues no refresh tokens
    #[arg(long)]
    no_refresh_tokens: bool,
    /// Every refresh gets invalid_grant
    #[arg(long)]
    invalid_grant: bool,
    /// Every refresh gets 400 with error=ERROR (such as invalid_scope or
    /// temporarily_unavailable: not a refresh token or a client that is gone)
    #[arg(long, value_name = "ERROR")]
    refresh_error: Option<String>,
    /// The token_type of every token response, in place of Bearer (such as DPoP or
    /// mac: a token that a client must not send as a bearer token)
    #[arg(long, value_name = "TYPE")]
    token_type: Option<String>,
    /// The metadata names an authorization_endpoint that no client may open: shell
    /// (shell metacharacters that would create /tmp/bridge-fixture-pwned-PORT),
    /// javascript (javascript:alert(1)), file (file:///etc/passwd), too-long (an
    /// https endpoint of 8 KiB and one byte), loopback (https://127.0.0.1:PORT,
    /// for a server reached by another name), fragment (#top) or bad-percent (a
    /// valid escape, then %zz)
    #[arg(long, value_name = "KIND", value_parser = hostile_endpoint)]
    hostile_authorization_endpoint: Option<HostileEndpoint>,
    /// The approval redirects with another issuer's iss (wrong-iss; also with
    /// --no-iss, which then only leaves out the announcement), with the issuer and a
    /// slash more (slash-iss), without the iss that the metadata announces (no-iss),
    /// with another state (wrong-state), or with a code that was already redeemed
    /// (replayed-code); with wrong-iss, slash-iss or no-iss, an error redirect has
    /// that iss too
    #[arg(long, value_name = "KIND", value_parser = hostile_redirect)]
    hostile_redirect: Option<HostileRedirect>,
    /// The first N approvals redirect as they should; --hostile-redirect applies to
    /// the later ones only (the step-up after a sign-in)
    #[arg(long, value_name = "N", value_parser = hostile_redirect_after, requires = "hostile_redirect")]
    hostile_redirect_after: Option<u64>,
    /// The URL of ROLE names 127.0.0.1 (this server by its address) in place of the
    /// server's host, which a client that reached the server by the name of --host
    /// must refuse: resource-metadata (of each 401's challenge), authorization-server
    /// (of the protected resource metadata), token-endpoint, refresh-token-endpoint
    /// (the token endpoint once a code was redeemed: only a refresh sees it) or
    /// registration-endpoint (may be repeated)
    #[arg(long, value_name = "ROLE", value_parser = loopback_role)]
    loopback_url: Vec<LoopbackRole>,
    /// A request of PATH (such as /token) gets 307 with Location /moved<PATH>, which
    /// serves what PATH would: a redirect that a client of the sign-in must not follow
    /// (may be repeated)
    #[arg(long, value_name = "PATH", value_parser = moved_path)]
    moved: Vec<String>,
    /// The protected resource metadata names URL as the authorization server, in place
    /// of this server
    #[arg(long, value_name = "URL", value_parser = prm_authorization_server)]
    prm_authorization_server: Option<String>,
    /// The resource of the protected resource metadata is the MCP URL on HOST, the
    /// same port and path (the metadata of a server on another host)
    #[arg(long, value_name = "HOST", value_parser = prm_resource_host)]
    prm_resource_host: Option<String>,
    /// The resource of the protected resource metadata is the MCP URL on PORT, the
    /// same host and path (the metadata of another server of the same host)
    #[arg(long, value_name = "PORT", value_parser = prm_resource_port)]
    prm_resource_port: Option<u16>,
    /// The protected resource metadata is only at a path of its own, which the
    /// challenges name, not at the well-known URLs
    #[arg(long)]
    prm_elsewhere: bool,
    /// The 401's challenge starts with an error_description that holds an escaped
    /// quote
    #[arg(long)]
    quoted_description: bool,
    /// With --cimd: the document of the client ID URL is the file PATH, read in place of
    /// a fetch (may be repeated)
    #[arg(long, value_name = "URL=PATH", value_parser = cimd_document)]
    cimd_document: Vec<(String, PathBuf)>,
    /// The authorization server listens on a second port of 127.0.0.1 (its own origin
    /// and issuer; with --print-exchanges its requests are printed too); the origin of
    /// /mcp serves only the protected resource metadata besides /mcp. Stdout gets the
    /// line "authorization-server: URL" after the lines of the server
    #[arg(long)]
    separate_authorization_server: bool,
    /// The challenge of the step-up names only mcp:write (not mcp:read too)
    #[arg(long)]
    step_up_new_scope_only: bool,
    /// The 401 names no scope: a client asks for the scopes_supported of the protected
    /// resource metadata (mcp:read and mcp:write)
    #[arg(long)]
    challenge_without_scope: bool,
    /// The resource of the protected resource metadata, and the audience of each
    /// token, is the MCP URL with ?QUERY (the bridge must be given that URL)
    #[arg(long, value_name = "QUERY")]
    resource_query: Option<String>,
    /// The authorization_endpoint carries ?QUERY of its own, which /authorize
    /// requires back (a client must keep it)
    #[arg(long, value_name = "QUERY")]
    authorization_query: Option<String>,
    /// The token endpoint takes a client secret only in the form body
    /// (client_secret_post, the only method its metadata names); HTTP Basic gets
    /// invalid_client
    #[arg(long)]
    client_secret_post_only: bool,
    /// subscriptions/listen also needs mcp:write (403 insufficient_scope)
    #[arg(long)]
    listen_needs_write: bool,
    /// /register refuses every registration (invalid_client_metadata)
    #[arg(long)]
    refuse_registration: bool,
    /// /register refuses every registration with the error ERROR (400)
    #[arg(long, value_name = "ERROR")]
    refuse_registration_with: Option<String>,
    /// POST /mcp answers 401 invalid_token to every access token, its own included
    #[arg(long)]
    refuse_access_tokens: bool,
    /// /register gives every client a client_secret, even one that asks for
    /// token_endpoint_auth_method none; /token then requires it (HTTP Basic)
    #[arg(long)]
    registration_secret: bool,
    /// The authorization server metadata is N bytes of JSON, padded with a member
    /// x_padding (a client's limit on the documents of a sign-in)
    #[arg(long, value_name = "N", value_parser = metadata_bytes)]
    metadata_bytes: Option<usize>,
    /// Each authorization code is N characters long (random, then x's), as the long
    /// codes of some identity providers
    #[arg(long, value_name = "N", value_parser = code_bytes)]
    code_bytes: Option<usize>,
}

#[derive(Debug, clap::Args)]
#[command(next_help_heading = "The test browser (no server)")]
struct BrowseArgs {
    /// GETs URL, follows redirects and <meta http-equiv="refresh"> (up to 10), prints
    /// "<status> <URL without query>" for each hop on stderr and the final body on
    /// stdout; exit 0 for a final 2xx, else 1. http only to loopback hosts
    #[arg(long, value_name = "URL")]
    browse: Option<String>,
    /// The CA (PEM) that --browse trusts (default: the ca.crt of each fixture server
    /// running on this host)
    #[arg(long, value_name = "PATH")]
    ca_file: Option<PathBuf>,
    /// With --browse: one GET, no redirect followed; prints "<status> <body>" on stdout;
    /// exit 0 for any answer
    #[arg(long)]
    no_follow: bool,
    /// With --browse: connects to ADDR for the host NAME (TLS still checks NAME), as a
    /// browser whose resolver knows a name that this machine's does not
    #[arg(long, value_name = "NAME:ADDR", value_parser = resolve)]
    resolve: Option<(String, std::net::IpAddr)>,
    /// With --browse: before it follows a redirect to a loopback /callback, GETs it
    /// with another state, without a state and with an empty code; exit 1 unless
    /// each of these gets 400 (a redirect receiver takes only its state and a code)
    #[arg(long)]
    forged_redirects: bool,
}

#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Faults of the HTTP modes")]
struct FaultArgs {
    /// The Nth POST (from 1) gets the HTTP status STATUS (200-599) and a text body, and
    /// is not served; may be repeated
    #[arg(long, value_name = "N:STATUS", value_parser = fail_status)]
    fail_status: Vec<(u64, u16)>,
    /// The bodies of --fail-status are JSON that is no JSON-RPC message
    /// ({"error": "<text>"}), as from a gateway or a web framework
    #[arg(long, requires = "fail_status")]
    fail_status_json: bool,
    /// The answers of --fail-status carry "Location: URL" (a path: relative to the MCP
    /// URL); with a 3xx status, a redirect that a client of the MCP URL must not follow
    #[arg(long, value_name = "URL", requires = "fail_status")]
    fail_location: Option<String>,
    /// Waits MS milliseconds before each SSE event
    #[arg(long, value_name = "MS", value_parser = slow_stream_ms)]
    slow_stream_ms: Option<Duration>,
    /// Closes each SSE stream after N events, without the response (the request is
    /// cancelled)
    #[arg(long, value_name = "N", value_parser = break_stream_after)]
    break_stream_after: Option<usize>,
    /// Starts each SSE stream with one notifications/message event whose data is BYTES
    /// bytes long
    #[arg(long, value_name = "BYTES", value_parser = oversized_event)]
    oversized_event: Option<usize>,
    /// Sends each JSON response without Content-Length (chunked transfer coding)
    #[arg(long)]
    chunked_json: bool,
    /// The JSON response of each request of METHOD has no Content-Type header
    #[arg(long, value_name = "METHOD")]
    no_content_type_method: Option<String>,
    /// Writes each SSE event in two data lines: the first character of its frame, then
    /// the rest
    #[arg(long)]
    split_sse_data: bool,
    /// Writes each SSE event in pieces of at most BYTES bytes, each a chunk of its own
    #[arg(long, value_name = "BYTES", value_parser = sse_piece_bytes)]
    sse_piece_bytes: Option<usize>,
    /// The first POST of a request of METHOD gets 400 with the -32022 error (supported:
    /// 2026-07-28, the version it named) and is not served
    #[arg(long, value_name = "METHOD")]
    version_error_method: Option<String>,
    /// The -32022 of --version-error-method names only 2025-11-25 as supported, not the
    /// version of the request (a client must not send the request again)
    #[arg(long)]
    version_error_without_own_version: bool,
    /// The JSON response of each request of METHOD carries its result and an error at
    /// once (not a valid JSON-RPC response), with the request's id
    #[arg(long, value_name = "METHOD")]
    invalid_response_method: Option<String>,
    /// The JSON response of each request of METHOD carries the id 9999999 in place of
    /// the request's (the answer of another request)
    #[arg(long, value_name = "METHOD")]
    misaddressed_response_method: Option<String>,
}

/// A value that its option does not take; the message names both.
#[derive(Debug, thiserror::Error)]
#[error("the value '{value}' of {option} is not {expected}")]
pub struct InvalidValue {
    value: String,
    option: &'static str,
    expected: String,
}

fn invalid(value: &str, option: &'static str, expected: impl Into<String>) -> InvalidValue {
    InvalidValue {
        value: value.to_owned(),
        option,
        expected: expected.into(),
    }
}

/// A decimal number from `min` to `max` (no sign), in the type of the option.
fn number<T: TryFrom<u64>>(
    value: &str,
    option: &'static str,
    min: u64,
    max: u64,
) -> Result<T, InvalidValue> {
    value
        .parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n) && !value.starts_with('+'))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| invalid(value, option, format!("a number from {min} to {max}")))
}

fn profile(value: &str) -> Result<Profile, InvalidValue> {
    Profile::parse(value)
        .ok_or_else(|| invalid(value, "--profile", "a profile (fixture, conformance)"))
}

fn many_tools(value: &str) -> Result<usize, InvalidValue> {
    number(value, "--many-tools", 0, MAX_MANY_TOOLS as u64)
}

fn port(value: &str) -> Result<u16, InvalidValue> {
    number(value, "--port", 0, u64::from(u16::MAX))
}

fn tls_case(value: &str) -> Result<TlsCase, InvalidValue> {
    TlsCase::parse(value).ok_or_else(|| {
        invalid(
            value,
            "--tls-case",
            "a case (good, expired, wrong-host, unknown-ca)",
        )
    })
}

/// Letters, digits, dots and hyphens: a name for a certificate and a URL.
fn is_dns_name(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
}

fn dns_name(value: &str) -> Result<String, InvalidValue> {
    is_dns_name(value)
        .then(|| value.to_owned())
        .ok_or_else(|| invalid(value, "--tls-name", "a DNS name"))
}

fn host(value: &str) -> Result<String, InvalidValue> {
    is_dns_name(value)
        .then(|| value.to_owned())
        .ok_or_else(|| invalid(value, "--host", "a DNS name"))
}

fn prm_resource_host(value: &str) -> Result<String, InvalidValue> {
    is_dns_name(value)
        .then(|| value.to_owned())
        .ok_or_else(|| invalid(value, "--prm-resource-host", "a DNS name"))
}

fn prm_resource_port(value: &str) -> Result<u16, InvalidValue> {
    number::<u16>(value, "--prm-resource-port", 1, u64::from(u16::MAX))
}

fn prm_authorization_server(value: &str) -> Result<String, InvalidValue> {
    let valid = url::Url::parse(value)
        .is_ok_and(|url| url.has_host() && matches!(url.scheme(), "http" | "https"));
    valid
        .then(|| value.to_owned())
        .ok_or_else(|| invalid(value, "--prm-authorization-server", "an http or https URL"))
}

fn cimd_document(value: &str) -> Result<(String, PathBuf), InvalidValue> {
    value
        .split_once('=')
        .filter(|(url, path)| url.starts_with("https://") && !path.is_empty())
        .map(|(url, path)| (url.to_owned(), PathBuf::from(path)))
        .ok_or_else(|| invalid(value, "--cimd-document", "URL=PATH (an https URL)"))
}

fn millis(value: &str, option: &'static str) -> Result<Duration, InvalidValue> {
    number::<u64>(value, option, 1, MAX_MILLIS).map(Duration::from_millis)
}

fn keep_alive_ms(value: &str) -> Result<Duration, InvalidValue> {
    millis(value, "--keep-alive-ms")
}

fn slow_stream_ms(value: &str) -> Result<Duration, InvalidValue> {
    millis(value, "--slow-stream-ms")
}

fn break_stream_after(value: &str) -> Result<usize, InvalidValue> {
    number(value, "--break-stream-after", 0, MAX_STREAM_EVENTS)
}

fn oversized_event(value: &str) -> Result<usize, InvalidValue> {
    number(value, "--oversized-event", 1, MAX_EVENT_BYTES)
}

fn sse_piece_bytes(value: &str) -> Result<usize, InvalidValue> {
    number(value, "--sse-piece-bytes", 1, MAX_EVENT_BYTES)
}

fn fail_status(value: &str) -> Result<(u64, u16), InvalidValue> {
    parse_fail_status(value).ok_or_else(|| {
        invalid(
            value,
            "--fail-status",
            "N:STATUS (N from 1, STATUS from 200 to 599)",
        )
    })
}

/// `NAME:ADDR` of `--resolve`: a host name and the IP address it stands for.
fn resolve(value: &str) -> Result<(String, std::net::IpAddr), InvalidValue> {
    value
        .rsplit_once(':')
        .filter(|(name, _)| !name.is_empty())
        .and_then(|(name, address)| Some((name.to_owned(), address.parse().ok()?)))
        .ok_or_else(|| invalid(value, "--resolve", "NAME:ADDR"))
}

fn token_lifetime(value: &str) -> Result<Duration, InvalidValue> {
    number::<u64>(value, "--token-lifetime", 1, MAX_TOKEN_LIFETIME).map(Duration::from_secs)
}

fn metadata_bytes(value: &str) -> Result<usize, InvalidValue> {
    number::<usize>(value, "--metadata-bytes", 1, MAX_METADATA_BYTES)
}

fn code_bytes(value: &str) -> Result<usize, InvalidValue> {
    number::<usize>(value, "--code-bytes", 1, MAX_CODE_BYTES)
}

fn hostile_endpoint(value: &str) -> Result<HostileEndpoint, InvalidValue> {
    match value {
        "shell" => Ok(HostileEndpoint::Shell),
        "javascript" => Ok(HostileEndpoint::Javascript),
        "file" => Ok(HostileEndpoint::File),
        "too-long" => Ok(HostileEndpoint::TooLong),
        "loopback" => Ok(HostileEndpoint::Loopback),
        "fragment" => Ok(HostileEndpoint::Fragment),
        "bad-percent" => Ok(HostileEndpoint::BadPercent),
        _ => Err(invalid(
            value,
            "--hostile-authorization-endpoint",
            "shell, javascript, file, too-long, loopback, fragment or bad-percent",
        )),
    }
}

fn hostile_redirect_after(value: &str) -> Result<u64, InvalidValue> {
    number::<u64>(value, "--hostile-redirect-after", 1, 1000)
}

fn loopback_role(value: &str) -> Result<LoopbackRole, InvalidValue> {
    match value {
        "resource-metadata" => Ok(LoopbackRole::ResourceMetadata),
        "authorization-server" => Ok(LoopbackRole::AuthorizationServer),
        "token-endpoint" => Ok(LoopbackRole::TokenEndpoint),
        "refresh-token-endpoint" => Ok(LoopbackRole::RefreshTokenEndpoint),
        "registration-endpoint" => Ok(LoopbackRole::RegistrationEndpoint),
        _ => Err(invalid(
            value,
            "--loopback-url",
            "resource-metadata, authorization-server, token-endpoint, refresh-token-endpoint or registration-endpoint",
        )),
    }
}

fn moved_path(value: &str) -> Result<String, InvalidValue> {
    let valid = value.starts_with('/')
        && !value.starts_with(MOVED_PREFIX)
        && value
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'?' && b != b'#');
    valid
        .then(|| value.to_owned())
        .ok_or_else(|| invalid(value, "--moved", "a path without a query, not under /moved"))
}

fn hostile_redirect(value: &str) -> Result<HostileRedirect, InvalidValue> {
    match value {
        "wrong-iss" => Ok(HostileRedirect::WrongIss),
        "slash-iss" => Ok(HostileRedirect::SlashIss),
        "no-iss" => Ok(HostileRedirect::NoIss),
        "wrong-state" => Ok(HostileRedirect::WrongState),
        "replayed-code" => Ok(HostileRedirect::ReplayedCode),
        _ => Err(invalid(
            value,
            "--hostile-redirect",
            "wrong-iss, slash-iss, no-iss, wrong-state or replayed-code",
        )),
    }
}

/// Options that do not go together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Misuse {
    #[error(
        "--browse runs no server: it takes only --ca-file, --no-follow, --resolve and --forged-redirects"
    )]
    BrowseServes,
    #[error("--https and --http exclude each other")]
    BothHttpModes,
    #[error("--ca-file needs --browse")]
    CaFileWithoutBrowse,
    #[error("--no-follow needs --browse")]
    NoFollowWithoutBrowse,
    #[error("--resolve needs --browse")]
    ResolveWithoutBrowse,
    #[error("--forged-redirects needs --browse")]
    ForgedRedirectsWithoutBrowse,
    #[error("--forged-redirects and --no-follow exclude each other")]
    ForgedRedirectsWithoutFollow,
    #[error(
        "the options of the authorization server (--no-registration, --cimd, --auth-ca-file, --deny, --deny-with, --no-iss, --forget-clients, --token-lifetime, --no-refresh-tokens, --invalid-grant, --refresh-error, --token-type, --hostile-authorization-endpoint, --hostile-redirect, --prm-authorization-server, --prm-resource-host, --prm-resource-port, --prm-elsewhere, --quoted-description, --cimd-document, --separate-authorization-server, --step-up-new-scope-only, --challenge-without-scope, --resource-query, --authorization-query, --listen-needs-write, --refuse-registration, --refuse-registration-with, --refuse-access-tokens, --metadata-bytes, --code-bytes, --hostile-redirect-after, --loopback-url, --moved) need --auth"
    )]
    AuthOptionsWithoutAuth,
    #[error("--auth needs --https or --http")]
    AuthOnStdio,
    #[error("--auth and --bearer-env exclude each other")]
    AuthWithBearer,
    #[error(
        "the options of Streamable HTTP (--port, --tls-dir, --keep-alive-ms, --always-sse and the faults) need --https or --http"
    )]
    HttpOptionsOnStdio,
    #[error("--tls-dir needs --https")]
    TlsDirOnHttp,
    #[error("--tls-case needs --https")]
    TlsCaseOnHttp,
    #[error("--tls-name needs --https")]
    TlsNameOnHttp,
    #[error("--tls-name names the certificate made in memory; it does not go with --tls-dir")]
    TlsNameWithTlsDir,
    #[error("--close-stdout is a fault of stdio; it does not go with --https or --http")]
    CloseStdoutOnHttp,
}

/// Parses the command line (the program name first). `--help`, `--version` and a bad
/// command line are clap errors: `exit()` prints each where it belongs, with exit code 0
/// or 2.
pub fn parse<I>(args: I) -> Result<Command, clap::Error>
where
    I: IntoIterator<Item = OsString>,
{
    let mut command = Args::command();
    let matches = command.try_get_matches_from_mut(args)?;
    let args = Args::from_arg_matches(&matches)?;
    command_of(args).map_err(|misuse| command.error(ErrorKind::ArgumentConflict, misuse))
}

/// What the parsed options ask for, when they go together. The executable always has
/// the tools `crash` and `shutdown`.
fn command_of(args: Args) -> Result<Command, Misuse> {
    let Args {
        server,
        http,
        auth,
        browse,
        faults,
    } = args;
    if http.https && http.http {
        return Err(Misuse::BothHttpModes);
    }
    let defaults = Config::default();
    let mut options = Options {
        config: Config {
            process_tools: true,
            profile: server.profile.unwrap_or(defaults.profile),
            many_tools: server.many_tools.unwrap_or(defaults.many_tools),
            apps: server.apps,
            array_output: server.array_output,
            stray_param_header: server.stray_param_header,
            param_header_echo: server.param_header_echo,
            param_header_not_a_token: server.param_header_not_a_token,
            completions: !server.no_completions,
            anonymous: server.anonymous,
            icons: server.icons,
            log_undeclared: server.log_undeclared,
            list_change_in_response: server.list_change_in_response,
            // The tool of the step-up.
            guarded: auth.auth,
        },
        close_stdout: server.close_stdout,
        transport: if http.https {
            Transport::Https
        } else if http.http {
            Transport::Http
        } else {
            Transport::Stdio
        },
        http: HttpOptions::default(),
        auth: AuthOptions::default(),
    };
    let http_options = &mut options.http;
    http_options.port = http.port.unwrap_or(http_options.port);
    http_options.host = http.host;
    http_options.tls_dir = http.tls_dir;
    http_options.tls_case = http.tls_case.unwrap_or(http_options.tls_case);
    http_options.tls_names = http.tls_name;
    http_options.keep_alive = http.keep_alive_ms.unwrap_or(http_options.keep_alive);
    http_options.always_sse = http.always_sse;
    http_options.bearer_env = http.bearer_env;
    http_options.print_exchanges = http.print_exchanges;
    http_options.faults.fail_status = faults.fail_status;
    http_options.faults.fail_status_json = faults.fail_status_json;
    http_options.faults.fail_location = faults.fail_location;
    http_options.faults.slow_stream = faults.slow_stream_ms;
    http_options.faults.break_stream_after = faults.break_stream_after;
    http_options.faults.oversized_event = faults.oversized_event;
    http_options.faults.chunked_json = faults.chunked_json;
    http_options.faults.no_content_type_method = faults.no_content_type_method;
    http_options.faults.split_sse_data = faults.split_sse_data;
    http_options.faults.sse_piece_bytes = faults.sse_piece_bytes;
    http_options.faults.version_error_method = faults.version_error_method;
    http_options.faults.invalid_response_method = faults.invalid_response_method;
    http_options.faults.misaddressed_response_method = faults.misaddressed_response_method;
    http_options.faults.version_error_without_own_version =
        faults.version_error_without_own_version;
    let auth_options = &mut options.auth;
    auth_options.enabled = auth.auth;
    auth_options.registration = !auth.no_registration;
    auth_options.cimd = auth.cimd;
    auth_options.ca_file = auth.auth_ca_file;
    auth_options.deny = auth.deny;
    auth_options.deny_with = auth.deny_with;
    auth_options.iss = !auth.no_iss;
    auth_options.forget_clients = auth.forget_clients;
    auth_options.token_lifetime = auth.token_lifetime.unwrap_or(auth_options.token_lifetime);
    auth_options.refresh_tokens = !auth.no_refresh_tokens;
    auth_options.refresh_error = auth.refresh_error;
    if let Some(token_type) = auth.token_type {
        auth_options.token_type = token_type;
    }
    auth_options.invalid_grant = auth.invalid_grant;
    auth_options.hostile_endpoint = auth.hostile_authorization_endpoint;
    auth_options.hostile_redirect = auth.hostile_redirect;
    auth_options.prm_authorization_server = auth.prm_authorization_server;
    auth_options.prm_resource_host = auth.prm_resource_host;
    auth_options.prm_resource_port = auth.prm_resource_port;
    auth_options.prm_elsewhere = auth.prm_elsewhere;
    auth_options.quoted_description = auth.quoted_description;
    auth_options.cimd_documents = auth.cimd_document;
    auth_options.separate_origin = auth.separate_authorization_server;
    auth_options.step_up_new_scope_only = auth.step_up_new_scope_only;
    auth_options.challenge_without_scope = auth.challenge_without_scope;
    auth_options.resource_query = auth.resource_query;
    auth_options.authorization_query = auth.authorization_query;
    auth_options.client_secret_post_only = auth.client_secret_post_only;
    auth_options.listen_needs_write = auth.listen_needs_write;
    auth_options.refuse_registration = auth.refuse_registration;
    auth_options.refuse_registration_with = auth.refuse_registration_with;
    auth_options.refuse_access_tokens = auth.refuse_access_tokens;
    auth_options.metadata_bytes = auth.metadata_bytes;
    auth_options.code_bytes = auth.code_bytes;
    auth_options.registration_secret = auth.registration_secret;
    auth_options.loopback_urls = auth.loopback_url;
    auth_options.moved = auth.moved;
    auth_options.hostile_redirect_after = auth.hostile_redirect_after.unwrap_or(0);
    if let Some(url) = browse.browse {
        check_browse(&options)?;
        if browse.forged_redirects && browse.no_follow {
            return Err(Misuse::ForgedRedirectsWithoutFollow);
        }
        return Ok(Command::Browse(BrowseOptions {
            url,
            ca_file: browse.ca_file,
            follow: !browse.no_follow,
            resolve: browse.resolve,
            forged_redirects: browse.forged_redirects,
        }));
    }
    if browse.forged_redirects {
        return Err(Misuse::ForgedRedirectsWithoutBrowse);
    }
    if browse.resolve.is_some() {
        return Err(Misuse::ResolveWithoutBrowse);
    }
    if browse.ca_file.is_some() {
        return Err(Misuse::CaFileWithoutBrowse);
    }
    if browse.no_follow {
        return Err(Misuse::NoFollowWithoutBrowse);
    }
    check_transport(&options)?;
    Ok(Command::Serve(Box::new(options)))
}

/// `--browse` runs no server: it takes only the options of the test browser.
fn check_browse(options: &Options) -> Result<(), Misuse> {
    let plain = Options {
        config: Config {
            process_tools: true,
            ..Config::default()
        },
        close_stdout: false,
        transport: Transport::Stdio,
        http: HttpOptions::default(),
        auth: AuthOptions::default(),
    };
    if *options != plain {
        return Err(Misuse::BrowseServes);
    }
    Ok(())
}

/// The HTTP options need an HTTP mode; --tls-dir needs TLS; --close-stdout is stdio's;
/// the options of the authorization server need --auth, which needs an HTTP mode.
fn check_transport(options: &Options) -> Result<(), Misuse> {
    if options.auth.has_sub_options() && !options.auth.enabled {
        return Err(Misuse::AuthOptionsWithoutAuth);
    }
    if options.auth.enabled && options.transport == Transport::Stdio {
        return Err(Misuse::AuthOnStdio);
    }
    if options.auth.enabled && options.http.bearer_env.is_some() {
        return Err(Misuse::AuthWithBearer);
    }
    let http = &options.http;
    match options.transport {
        Transport::Stdio if !http.is_default() => Err(Misuse::HttpOptionsOnStdio),
        Transport::Http if http.tls_dir.is_some() => Err(Misuse::TlsDirOnHttp),
        Transport::Http if http.tls_case != TlsCase::Good => Err(Misuse::TlsCaseOnHttp),
        Transport::Http if !http.tls_names.is_empty() => Err(Misuse::TlsNameOnHttp),
        Transport::Https if http.tls_dir.is_some() && !http.tls_names.is_empty() => {
            Err(Misuse::TlsNameWithTlsDir)
        }
        Transport::Https | Transport::Http if options.close_stdout => {
            Err(Misuse::CloseStdoutOnHttp)
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, clap::Error> {
        parse(
            std::iter::once("bridge-fixture-server")
                .chain(args.iter().copied())
                .map(OsString::from),
        )
    }

    fn serve(args: &[&str]) -> Options {
        match parse_strs(args) {
            Ok(Command::Serve(options)) => *options,
            other => panic!("{args:?} gave {other:?}"),
        }
    }

    /// The message of a bad command line.
    fn error(args: &[&str]) -> String {
        parse_strs(args).unwrap_err().to_string()
    }

    #[test]
    fn no_arguments_serve_the_fixture_with_process_tools() {
        let options = serve(&[]);
        assert_eq!(options.config.profile, Profile::Fixture);
        assert!(options.config.process_tools && options.config.completions);
        assert!(!options.close_stdout && !options.config.apps);
    }

    #[test]
    fn values_come_after_a_space_or_an_equal_sign() {
        let options = serve(&["--many-tools", "150", "--profile=conformance", "--apps"]);
        assert_eq!(options.config.many_tools, 150);
        assert_eq!(options.config.profile, Profile::Conformance);
        assert!(options.config.apps);
        assert_eq!(
            serve(&["--many-tools=3", "--many-tools=4"])
                .config
                .many_tools,
            4
        );
        let options = serve(&["--no-completions", "--array-output", "--close-stdout"]);
        assert!(!options.config.completions && options.config.array_output && options.close_stdout);
    }

    #[test]
    fn log_undeclared_and_list_change_in_response_are_off_by_default() {
        let plain = serve(&[]).config;
        assert!(!plain.log_undeclared && !plain.list_change_in_response);
        let options = serve(&["--log-undeclared", "--list-change-in-response"]);
        assert!(options.config.log_undeclared && options.config.list_change_in_response);
    }

    #[test]
    fn anonymous_and_icons_change_the_server_information() {
        let plain = serve(&[]).config;
        assert!(!plain.anonymous && !plain.icons);
        let options = serve(&["--anonymous", "--icons"]);
        assert!(options.config.anonymous && options.config.icons);
        assert_eq!(crate::session::server_info(&options.config), None);
        let info = crate::session::server_info(&serve(&["--icons"]).config).unwrap();
        let sources: Vec<&str> = info["icons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|icon| icon["src"].as_str().unwrap())
            .collect();
        assert_eq!(
            sources,
            [
                "data:image/png;base64,iVBORw0KGgo=",
                "https://icons.example/server.png",
                "file:///icons/server.svg"
            ]
        );
    }

    #[test]
    fn errors_name_the_argument() {
        assert!(error(&["--nope"]).contains("'--nope'"));
        assert!(error(&["stray"]).contains("'stray'"));
        assert!(error(&["--many-tools"]).contains("--many-tools"));
        assert!(
            error(&["--many-tools", "x"])
                .contains("the value 'x' of --many-tools is not a number from 0 to 100000")
        );
        assert!(error(&["--many-tools", "100001"]).contains("--many-tools"));
        assert!(error(&["--profile", "everything"]).contains(
            "the value 'everything' of --profile is not a profile (fixture, conformance)"
        ));
        assert!(error(&["--apps=yes"]).contains("--apps"));
    }

    #[test]
    fn the_http_modes_take_their_options() {
        let options = serve(&["--https", "--port=8443", "--fail-status", "1:503", "--apps"]);
        assert_eq!(options.transport, Transport::Https);
        assert_eq!(options.http.port, 8443);
        assert_eq!(options.http.faults.fail_status, [(1, 503)]);
        assert!(options.config.apps);
        assert_eq!(serve(&["--http"]).transport, Transport::Http);
        assert_eq!(serve(&[]).transport, Transport::Stdio);
        let named = serve(&[
            "--https",
            "--tls-name",
            "fixture.mcp-bridge.test",
            "--tls-name=b.test",
        ]);
        assert_eq!(named.http.tls_names, ["fixture.mcp-bridge.test", "b.test"]);
    }

    #[test]
    fn every_http_option_fills_its_field() {
        let http = serve(&[
            "--https",
            "--port",
            "8443",
            "--tls-dir",
            "/tmp/certs",
            "--tls-case",
            "wrong-host",
            "--keep-alive-ms",
            "250",
            "--always-sse",
            "--fail-status",
            "1:503",
            "--fail-status",
            "3:500",
            "--fail-status-json",
            "--slow-stream-ms",
            "20",
            "--break-stream-after",
            "0",
            "--oversized-event",
            "70000",
            "--sse-piece-bytes",
            "100",
            "--invalid-response-method",
            "tools/call",
            "--misaddressed-response-method",
            "prompts/get",
            "--host",
            "remote.mcp-bridge.test",
        ])
        .http;
        assert_eq!(http.port, 8443);
        assert_eq!(
            http.tls_dir.as_deref(),
            Some(std::path::Path::new("/tmp/certs"))
        );
        assert_eq!(http.tls_case, TlsCase::WrongHost);
        assert_eq!(http.keep_alive, Duration::from_millis(250));
        assert!(http.always_sse);
        assert_eq!(http.faults.fail_status, [(1, 503), (3, 500)]);
        assert!(http.faults.fail_status_json);
        assert_eq!(http.faults.slow_stream, Some(Duration::from_millis(20)));
        assert_eq!(http.faults.break_stream_after, Some(0));
        assert_eq!(http.faults.oversized_event, Some(70000));
        assert_eq!(http.faults.sse_piece_bytes, Some(100));
        assert_eq!(
            http.faults.invalid_response_method.as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            http.faults.misaddressed_response_method.as_deref(),
            Some("prompts/get")
        );
        assert_eq!(http.host.as_deref(), Some("remote.mcp-bridge.test"));
    }

    #[test]
    fn bad_values_name_the_option() {
        assert!(
            error(&["--https", "--port", "65536"])
                .contains("the value '65536' of --port is not a number from 0 to 65535")
        );
        assert!(error(&["--https", "--keep-alive-ms", "0"]).contains("--keep-alive-ms"));
        assert!(error(&["--https", "--oversized-event", "+5"]).contains("--oversized-event"));
        assert!(error(&["--https", "--sse-piece-bytes", "0"]).contains("--sse-piece-bytes"));
        assert!(error(&["--https", "--fail-status", "0:500"]).contains("N:STATUS"));
        assert!(error(&["--https", "--fail-status-json"]).contains("--fail-status <N:STATUS>"));
        assert!(error(&["--https", "--tls-case", "bad"]).contains("--tls-case"));
        assert!(
            error(&["--https", "--host", "a/b"])
                .contains("the value 'a/b' of --host is not a DNS name")
        );
    }

    #[test]
    fn http_options_need_an_http_mode() {
        assert!(error(&["--port", "1"]).contains("need --https or --http"));
        assert!(error(&["--slow-stream-ms", "5"]).contains("need --https or --http"));
        assert!(error(&["--http", "--tls-dir", "x"]).contains("--tls-dir needs --https"));
        assert!(error(&["--http", "--https"]).contains("--https and --http exclude each other"));
        assert!(error(&["--https", "--close-stdout"]).contains("--close-stdout"));
        assert!(error(&["--http", "--tls-name", "a.test"]).contains("--tls-name needs --https"));
        assert!(
            error(&["--https", "--tls-dir", "x", "--tls-name", "a.test"]).contains("--tls-dir")
        );
        assert!(error(&["--https", "--tls-name", "a b"]).contains("not a DNS name"));
    }

    #[test]
    fn every_auth_option_fills_its_field() {
        let auth = serve(&[
            "--https",
            "--oauth",
            "--no-registration",
            "--cimd",
            "--auth-ca-file",
            "/tmp/ca.crt",
            "--deny",
            "--no-iss",
            "--forget-clients",
            "--token-lifetime",
            "5",
            "--no-refresh-tokens",
            "--invalid-grant",
            "--hostile-authorization-endpoint",
            "javascript",
            "--hostile-redirect",
            "wrong-state",
            "--prm-authorization-server",
            "http://127.0.0.1:9",
            "--cimd-document",
            "https://d.example/c.json=/tmp/c.json",
        ])
        .auth;
        assert!(auth.enabled && !auth.registration && auth.cimd && auth.deny);
        assert!(!auth.iss && auth.forget_clients && !auth.refresh_tokens && auth.invalid_grant);
        assert_eq!(auth.ca_file, Some(PathBuf::from("/tmp/ca.crt")));
        assert_eq!(auth.token_lifetime, Duration::from_secs(5));
        assert_eq!(auth.hostile_endpoint, Some(HostileEndpoint::Javascript));
        assert_eq!(auth.hostile_redirect, Some(HostileRedirect::WrongState));
        assert_eq!(
            auth.prm_authorization_server.as_deref(),
            Some("http://127.0.0.1:9")
        );
        assert_eq!(
            auth.cimd_documents,
            [(
                "https://d.example/c.json".to_owned(),
                PathBuf::from("/tmp/c.json")
            )]
        );
        assert!(auth.has_sub_options());
    }

    #[test]
    fn the_options_of_the_sign_in_urls_fill_their_fields() {
        let auth = serve(&[
            "--https",
            "--auth",
            "--loopback-url",
            "token-endpoint",
            "--loopback-url",
            "resource-metadata",
            "--moved",
            "/token",
            "--hostile-redirect",
            "slash-iss",
            "--hostile-redirect-after",
            "1",
        ])
        .auth;
        assert_eq!(
            auth.loopback_urls,
            [LoopbackRole::TokenEndpoint, LoopbackRole::ResourceMetadata]
        );
        assert_eq!(auth.moved, ["/token"]);
        assert_eq!(auth.hostile_redirect, Some(HostileRedirect::SlashIss));
        assert_eq!(auth.hostile_redirect_after, 1);
        assert!(error(&["--https", "--auth", "--loopback-url", "issuer"]).contains(
            "the value 'issuer' of --loopback-url is not resource-metadata, authorization-server"
        ));
        for path in ["token", "/moved/token", "/token?x=1"] {
            assert!(
                error(&["--https", "--auth", "--moved", path]).contains("--moved"),
                "{path}"
            );
        }
        assert!(
            error(&["--https", "--auth", "--hostile-redirect-after", "1"])
                .contains("--hostile-redirect")
        );
        assert!(error(&["--https", "--moved", "/token"]).contains("need --auth"));
    }

    #[test]
    fn a_bad_token_lifetime_names_the_option() {
        assert!(
            error(&["--https", "--auth", "--token-lifetime", "0"])
                .contains("the value '0' of --token-lifetime is not a number from 1 to 31536000")
        );
        assert!(
            error(&["--https", "--auth", "--token-lifetime", "+5"]).contains("--token-lifetime")
        );
        assert!(
            error(&["--https", "--auth", "--hostile-redirect", "x"]).contains(
                "the value 'x' of --hostile-redirect is not wrong-iss, slash-iss, no-iss, wrong-state or replayed-code"
            )
        );
        assert!(
            error(&["--https", "--auth", "--hostile-authorization-endpoint", ""]).contains(
                "the value '' of --hostile-authorization-endpoint is not shell, javascript, file, too-long, loopback, fragment or bad-percent"
            )
        );
        let auth = ["--https", "--auth"];
        assert!(
            error(&[&auth[..], &["--prm-authorization-server", "javascript:x"]].concat())
                .contains("--prm-authorization-server")
        );
        assert!(
            error(&[&auth[..], &["--cimd-document", "http://d/c.json=/x"]].concat())
                .contains("--cimd-document")
        );
        assert!(
            error(&[&auth[..], &["--cimd-document", "https://d/c.json"]].concat())
                .contains("--cimd-document")
        );
        assert!(!serve(&auth).auth.has_sub_options());
    }

    #[test]
    fn auth_and_its_options_fill_the_auth_options() {
        let options = serve(&[
            "--https",
            "--oauth",
            "--cimd",
            "--token-lifetime=60",
            "--deny",
        ]);
        assert!(options.auth.enabled && options.auth.cimd && options.auth.deny);
        assert!(options.config.guarded);
        assert_eq!(options.auth.token_lifetime.as_secs(), 60);
        assert!(serve(&["--http", "--auth"]).auth.enabled);
        assert!(!serve(&["--https"]).config.guarded);
        assert!(error(&["--https", "--cimd"]).contains("need --auth"));
        assert!(error(&["--auth"]).contains("--auth needs --https or --http"));
        assert!(
            error(&["--https", "--auth", "--bearer-env", "X"])
                .contains("--auth and --bearer-env exclude each other")
        );
    }

    #[test]
    fn browse_takes_a_url_and_a_ca_file_only() {
        assert_eq!(
            parse_strs(&["--browse", "https://127.0.0.1:1/a", "--ca-file=/tmp/ca.crt"]).unwrap(),
            Command::Browse(BrowseOptions {
                url: "https://127.0.0.1:1/a".into(),
                ca_file: Some("/tmp/ca.crt".into()),
                follow: true,
                resolve: None,
                forged_redirects: false,
            })
        );
        assert_eq!(
            parse_strs(&["--browse", "http://127.0.0.1:1/start/x", "--no-follow"]).unwrap(),
            Command::Browse(BrowseOptions {
                url: "http://127.0.0.1:1/start/x".into(),
                ca_file: None,
                follow: false,
                resolve: None,
                forged_redirects: false,
            })
        );
        assert_eq!(
            parse_strs(&[
                "--browse",
                "https://a.test:1/",
                "--resolve",
                "a.test:127.0.0.1"
            ])
            .unwrap(),
            Command::Browse(BrowseOptions {
                url: "https://a.test:1/".into(),
                ca_file: None,
                follow: true,
                resolve: Some(("a.test".into(), [127, 0, 0, 1].into())),
                forged_redirects: false,
            })
        );
        assert_eq!(
            parse_strs(&["--browse", "https://127.0.0.1:1/a", "--forged-redirects"]).unwrap(),
            Command::Browse(BrowseOptions {
                url: "https://127.0.0.1:1/a".into(),
                ca_file: None,
                follow: true,
                resolve: None,
                forged_redirects: true,
            })
        );
        assert!(
            error(&["--browse", "x", "--forged-redirects", "--no-follow"])
                .contains("--forged-redirects and --no-follow exclude each other")
        );
        assert!(error(&["--forged-redirects"]).contains("--forged-redirects needs --browse"));
        assert!(error(&["--resolve", "a.test:127.0.0.1"]).contains("--resolve needs --browse"));
        assert!(error(&["--browse", "x", "--resolve", "a.test"]).contains("NAME:ADDR"));
        assert!(error(&["--browse", "x", "--https"]).contains(
            "--browse runs no server: it takes only --ca-file, --no-follow, --resolve and --forged-redirects"
        ));
        assert!(error(&["--ca-file", "x"]).contains("--ca-file needs --browse"));
        assert!(error(&["--no-follow"]).contains("--no-follow needs --browse"));
    }

    #[test]
    fn help_and_version_win_over_other_options() {
        let kind = |args: &[&str]| parse_strs(args).unwrap_err().kind();
        assert_eq!(kind(&["--apps", "-h"]), ErrorKind::DisplayHelp);
        assert_eq!(kind(&["--version"]), ErrorKind::DisplayVersion);
        assert_eq!(kind(&["-V"]), ErrorKind::DisplayVersion);
    }

    #[test]
    fn the_usage_names_every_option_and_the_page_size() {
        let help = Args::command().render_long_help().to_string();
        for option in Args::command().get_arguments() {
            if let Some(long) = option.get_long() {
                assert!(
                    help.contains(&format!("--{long}")),
                    "--{long} is not in the usage"
                );
            }
        }
        assert!(help.contains(&format!("pages of {}", crate::pagination::PAGE_SIZE)));
    }

    #[test]
    fn the_command_line_is_consistent() {
        Args::command().debug_assert();
    }
}
