//! What one run of the bridge needs to know: the options and the limits.

use crate::log::LogLevel;
use crate::rules::initialize::{FallbackIdentity, fallback_name};
use std::ffi::OsString;
use std::time::Duration;

/// The upstream server of the bridge.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamTarget {
    /// `-- <command> [args...]`: a child process over stdio.
    Command {
        program: OsString,
        args: Vec<OsString>,
    },
    /// `<url>`: a server at a URL over Streamable HTTP (M4).
    Url(Box<HttpTarget>),
}

/// The URL form: where the upstream is, and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// https, or http to a loopback host; no user information, no fragment.
    pub url: url::Url,
    /// `--header` and `--header-env`, in the order of the command line.
    pub headers: Vec<StaticHeader>,
    /// `--max-response-bytes`: one JSON response or one event of a stream.
    pub max_response_bytes: usize,
    /// The certificates of `--ca-file`, trusted besides the system's.
    pub extra_roots: Vec<rustls_pki_types::CertificateDer<'static>>,
    /// The options of the sign-in (M4, M6).
    pub sign_in: SignInOptions,
}

/// A header that every request to the upstream carries. Its value can be a secret
/// (`--header-env Authorization=...`): it never reaches a log line, an error or a
/// `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct StaticHeader {
    /// The name in lower case.
    pub name: String,
    value: String,
    /// The environment variable of `--header-env`, which a browser opener of
    /// the sign-in never inherits.
    pub variable: Option<String>,
}

impl StaticHeader {
    pub fn new(name: &str, value: String) -> Self {
        Self {
            name: name.to_ascii_lowercase(),
            value,
            variable: None,
        }
    }

    /// The header of `--header-env`, from `variable`.
    pub fn from_variable(mut self, variable: &str) -> Self {
        self.variable = Some(variable.to_owned());
        self
    }

    /// The value, for the request only.
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl std::fmt::Debug for StaticHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticHeader")
            .field("name", &self.name)
            .field("value", &"[REDACTED]")
            .field("variable", &self.variable)
            .finish()
    }
}

/// The options of the sign-in, checked at the start (the sign-in itself comes
/// with its own milestone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInOptions {
    pub client_id: Option<String>,
    pub client_issuer: Option<url::Url>,
    pub client_metadata_url: Option<url::Url>,
    pub redirect_port: u16,
    pub account: String,
    pub token_store: TokenStoreChoice,
    pub token_key_file: Option<std::path::PathBuf>,
    pub no_browser: bool,
    pub sign_in_timeout: Duration,
}

impl Default for SignInOptions {
    fn default() -> Self {
        Self {
            client_id: None,
            client_issuer: None,
            client_metadata_url: None,
            redirect_port: DEFAULT_REDIRECT_PORT,
            account: "default".into(),
            token_store: TokenStoreChoice::Auto,
            token_key_file: None,
            no_browser: false,
            sign_in_timeout: Duration::from_secs(300),
        }
    }
}

/// `--token-store`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenStoreChoice {
    Auto,
    Keychain,
    File,
    Memory,
}

/// The default of `--redirect-port`.
pub const DEFAULT_REDIRECT_PORT: u16 = 41894;
/// The default of `--max-response-bytes`: 64 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

impl UpstreamTarget {
    /// The server name when neither the upstream nor `--name` gives one (R1): the
    /// file name of the command without its extension (the host of the URL, M4).
    pub fn default_name(&self) -> Option<String> {
        match self {
            Self::Command { program, .. } => std::path::Path::new(program)
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .filter(|stem| !stem.is_empty()),
            Self::Url(target) => target.url.host_str().map(|host| {
                host.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned()
            }),
        }
    }
}

/// The options of the command line.
#[derive(Debug, Clone)]
pub struct Config {
    /// `--name`: the server name for VS Code when the upstream sends none (R1).
    pub name: Option<String>,
    pub log_level: LogLevel,
    /// `--discover-timeout`.
    pub discover_timeout: Duration,
    /// `--max-line-bytes`: for the lines of VS Code and of a stdio upstream.
    pub max_line_bytes: usize,
    pub upstream: UpstreamTarget,
    pub limits: Limits,
}

impl Config {
    /// Whether the upstream is at a URL: VS Code then gets only `data:` icons (O10, M4).
    pub fn remote_upstream(&self) -> bool {
        matches!(self.upstream, UpstreamTarget::Url(_))
    }

    /// The server information when the upstream sends none (R1).
    pub fn fallback_identity(&self) -> FallbackIdentity {
        FallbackIdentity {
            name: fallback_name(self.name.as_deref(), self.upstream.default_name()),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// `mcp-bridge-vscode doctor`: the options of a server entry, and doctor's own.
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// The server entry's options, as a start of the bridge takes them.
    pub config: Config,
    /// `--json`: one JSON object on stdout in place of the text.
    pub json: bool,
    /// `--sign-in`: sign in when the server asks, as a start does (the URL form).
    pub sign_in: bool,
    /// `--call <name>` with the object of `--arguments` (`{}` by default).
    pub call: Option<(String, serde_json::Map<String, serde_json::Value>)>,
    /// `--log-level` when the command line gives it: the lines of the bridge at
    /// that level go to stderr too.
    pub echo: Option<LogLevel>,
    /// The warnings of the command line (a secret in `--header`), which a start
    /// writes to the Output channel.
    pub warnings: Vec<crate::catalogue::cli::CliWarning>,
}

/// The limits of the bridge. The defaults are the contract's; tests shorten them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Requests of VS Code in flight; the next one gets `too_many_requests` at once.
    pub max_in_flight: usize,
    /// The time limit of list requests, completion, and the first round of
    /// prompts/get and resources/read.
    pub list_timeout: Duration,
    /// The time limit of tools/call, and of later rounds of prompts/get and resources/read.
    pub call_timeout: Duration,
    /// The first "still waiting" line comes after this time...
    pub still_waiting_after: Duration,
    /// ...and then again after each of these.
    pub still_waiting_every: Duration,
    /// How long the upstream may take to stop after each step of the stop sequence.
    pub shutdown_grace: Duration,
    /// The watchdog stops the bridge this long after the end of stdin.
    pub watchdog: Duration,
    /// How long VS Code may take to answer the input requests of one round (M2).
    pub input_timeout: Duration,
    /// Rounds of input requests for one request of VS Code (M2).
    pub max_rounds: u32,
    /// Input requests in one round (M2).
    pub max_inputs_per_round: usize,
    /// A request that may ask for input waits for its next round in a temporary
    /// file from this many bytes of params on, not in memory (M2; the peak memory of a large request).
    pub kept_in_file_from: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_in_flight: 256,
            list_timeout: Duration::from_secs(120),
            call_timeout: Duration::from_secs(3600),
            still_waiting_after: Duration::from_secs(10),
            still_waiting_every: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(2),
            watchdog: Duration::from_secs(8),
            input_timeout: Duration::from_secs(3600),
            max_rounds: 10,
            max_inputs_per_round: 16,
            kept_in_file_from: 4 << 20,
        }
    }
}

/// The default of `--max-line-bytes`: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// The largest `--max-line-bytes`: 1 GiB.
pub const MAX_MAX_LINE_BYTES: usize = 1024 * 1024 * 1024;
/// The default of `--discover-timeout`.
pub const DEFAULT_DISCOVER_TIMEOUT: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    fn command(program: &str) -> UpstreamTarget {
        UpstreamTarget::Command {
            program: program.into(),
            args: vec![],
        }
    }

    #[test]
    fn r1_m4_the_default_name_of_a_url_is_its_host() {
        let url = |text: &str| {
            UpstreamTarget::Url(Box::new(HttpTarget {
                url: url::Url::parse(text).unwrap(),
                headers: vec![],
                max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
                extra_roots: vec![],
                sign_in: SignInOptions::default(),
            }))
            .default_name()
        };
        assert_eq!(
            url("https://mcp.example.com:8443/mcp").as_deref(),
            Some("mcp.example.com")
        );
        assert_eq!(
            url("http://127.0.0.1:3000/mcp").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(url("http://[::1]:3000/mcp").as_deref(), Some("::1"));
    }

    #[test]
    fn a_header_value_never_shows_in_debug() {
        let header = StaticHeader::new("Authorization", "Bearer s3cr3t".into());
        let shown = format!("{header:?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert_eq!(header.name, "authorization");
    }

    #[test]
    fn r1_the_default_name_of_a_command_is_its_file_stem() {
        let name = |program: &str| command(program).default_name();
        assert_eq!(
            name("/abs/bridge-fixture-server").as_deref(),
            Some("bridge-fixture-server")
        );
        assert_eq!(name("C:/tools/server.exe").as_deref(), Some("server"));
        assert_eq!(name("node").as_deref(), Some("node"));
        assert_eq!(name(""), None);
    }
}
