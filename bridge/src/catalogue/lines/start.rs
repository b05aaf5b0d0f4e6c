//! The start and the upstream server (docs/troubleshooting.md, "The start and the
//! upstream server").

use std::fmt::Display;

lines! {
    group START;

    /// The start of a session.
    pub enum StartInfo<'a>: Bridge Info {
        /// VS Code sent `initialize`.
        InitializeFrom { name: &'a str, version: &'a str } => "initialize from {name} {version}",
        /// The same, from a client that did not name itself.
        InitializeWithoutClientInfo => "initialize from a client without clientInfo",
        /// The upstream answered `server/discover`.
        Ready => "the upstream server is ready",
    }

    /// An upstream that does not start, and one that stops serving.
    pub enum StartWarning<'a>: Bridge Warning {
        CannotStartCommand { error: &'a dyn Display } => "cannot start the upstream command: {error}",
        /// Reaching the upstream is the first step of `server/discover`.
        DiscoverFailed { error: &'a dyn Display } => "server/discover failed: {error}",
        CannotMakeHttpClient { error: &'a dyn Display }
            => "cannot make the HTTP client for the upstream server: {error}",
        StdoutClosed
            => "the upstream server closed its stdout but did not exit, thus the bridge stops it",
    }

    /// The upstream stopped while VS Code is connected: the session ends with it
    /// (exit code 1). The text is also the `data.detail` of the requests in flight.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum UpstreamStopped: Bridge Error {
        Exited { exit as "code n or signal n": String } => "the upstream server exited with {exit}",
        /// The link's events ended without its last event.
        LinkClosed => "the upstream link closed",
        InProcessDidNotStart { error: String } => "the in-process server did not start: {error}",
        InProcessStopped { error: String } => "the in-process server stopped: {error}",
    }

    /// The connection to the upstream ended and the bridge serves on (no link of
    /// this version ends so; the interface of a link allows it).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum UpstreamLost: Bridge Warning {
        ConnectionClosed => "the connection to the upstream server closed",
    }

    /// The stdio link's line for the exit of its process; the bridge's own line
    /// ([`UpstreamStopped::Exited`]) follows.
    pub enum StdioExit<'a>: McpStdio Warning {
        Exited { exit as "exit code n or signal n": &'a str }
            => "stdio server exited ({exit}); no restart is left",
    }

    /// The watchdog after the end of stdin.
    pub enum ExecutableWarning: Vscode Warning {
        WatchdogStops { n: u64 }
            => "the bridge did not stop in {n} s after the end of stdin, thus it stops now",
    }

    /// A bug of the bridge: it exits with code 1.
    pub enum ExecutableError<'a>: Vscode Error {
        InternalError { error: &'a dyn Display }
            => "the bridge stopped because of an internal error: {error}",
    }
}
