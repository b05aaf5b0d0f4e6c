//! The options of the Streamable HTTP mode (`--https`, `--http`) and its fault options,
//! as the command line gives them.

use std::path::PathBuf;
use std::time::Duration;

/// How often a quiet SSE stream gets a `: keep-alive` comment line by default.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How the server is reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// One connection on stdin and stdout.
    #[default]
    Stdio,
    /// Streamable HTTP with TLS (`--https`).
    Https,
    /// Streamable HTTP without TLS, on loopback only (`--http`).
    Http,
}

/// The options of the HTTP modes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpOptions {
    /// The port on 127.0.0.1; 0: an ephemeral port.
    pub port: u16,
    /// Where `server.crt` and `server.key` are; `None`: certificates made in memory.
    pub tls_dir: Option<PathBuf>,
    /// Which certificate the server presents: the good one, or a negative case.
    pub tls_case: TlsCase,
    /// `--tls-name NAME`: more DNS names of the good certificate made in memory, for
    /// a client that reaches the server by a name through a proxy (Q10).
    pub tls_names: Vec<String>,
    /// `--host NAME`: the host of the announced URL, and so of the issuer and the
    /// resource of `--auth`, in place of 127.0.0.1 (the listener stays on
    /// 127.0.0.1): a server that a client reaches through a proxy by a name that is
    /// not loopback by its spelling, a "remote" server on this machine.
    pub host: Option<String>,
    /// The interval of the `: keep-alive` comment lines of SSE streams.
    pub keep_alive: Duration,
    /// Answer every request with an SSE stream, even when its response is its only frame.
    pub always_sse: bool,
    /// `--bearer-env VAR`: every POST needs `Authorization: Bearer <the value of VAR>`,
    /// else 401: a server that takes a static token (the bridge's `--header-env`).
    pub bearer_env: Option<String>,
    /// `--print-exchanges`: each POST to the endpoint also goes to stdout as an
    /// `exchange:` line, for a runner that checks what a client sent.
    pub print_exchanges: bool,
    pub faults: Faults,
}

impl Default for HttpOptions {
    fn default() -> HttpOptions {
        HttpOptions {
            port: 0,
            tls_dir: None,
            tls_case: TlsCase::Good,
            tls_names: Vec::new(),
            host: None,
            keep_alive: DEFAULT_KEEP_ALIVE,
            always_sse: false,
            bearer_env: None,
            print_exchanges: false,
            faults: Faults::default(),
        }
    }
}

/// The certificate of `--tls-case`: the negative cases let a client's tests prove that
/// it refuses a bad server while it trusts the announced CA.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsCase {
    #[default]
    Good,
    /// Issued by the trusted CA, expired.
    Expired,
    /// Issued by the trusted CA, for `wrong.example` only.
    WrongHost,
    /// Issued by a CA that the client does not trust.
    UnknownCa,
}

impl TlsCase {
    pub fn parse(text: &str) -> Option<TlsCase> {
        match text {
            "good" => Some(TlsCase::Good),
            "expired" => Some(TlsCase::Expired),
            "wrong-host" => Some(TlsCase::WrongHost),
            "unknown-ca" => Some(TlsCase::UnknownCa),
            _ => None,
        }
    }
}

/// Deliberate misbehaviour for the tests of HTTP clients.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// `--fail-status N:STATUS`: the Nth POST (from 1) gets STATUS and is not served.
    pub fail_status: Vec<(u64, u16)>,
    /// `--fail-status-json`: the body of a `--fail-status` answer is JSON that is no
    /// JSON-RPC message, `{"error": "<text>"}`, as from a gateway or a web framework.
    pub fail_status_json: bool,
    /// `--fail-location URL`: a `--fail-status` answer carries `Location: URL` (with a
    /// 3xx status, a redirect of the MCP URL that a client must not follow).
    pub fail_location: Option<String>,
    /// `--slow-stream-ms MS`: each SSE event waits this long before it goes out.
    pub slow_stream: Option<Duration>,
    /// `--break-stream-after N`: an SSE stream closes after N events, before any further
    /// event (the response included); the request is cancelled.
    pub break_stream_after: Option<usize>,
    /// `--oversized-event BYTES`: every SSE stream starts with one `notifications/message`
    /// event whose data is BYTES bytes long.
    pub oversized_event: Option<usize>,
    /// `--chunked-json`: a JSON response goes without Content-Length, its body in
    /// chunked transfer coding, so that a client learns its length only by reading it.
    pub chunked_json: bool,
    /// `--no-content-type-method METHOD`: the JSON response of each request of
    /// METHOD has no `Content-Type`, which a client cannot read as JSON-RPC.
    pub no_content_type_method: Option<String>,
    /// `--split-sse-data`: each SSE event carries its frame in two `data:` lines, the
    /// first character and the rest.
    pub split_sse_data: bool,
    /// `--sse-piece-bytes BYTES`: each SSE event goes out in pieces of at most BYTES
    /// bytes, each a chunk of its own, as from a server or a proxy that flushes small
    /// writes: a client sees a line arrive in several reads.
    pub sse_piece_bytes: Option<usize>,
    /// `--version-error-method METHOD`: the first POST of a request of METHOD gets 400
    /// with the -32022 error of its id whose `supported` names the version it had
    /// (a server that lost it), and is not served; the client may send it again.
    pub version_error_method: Option<String>,
    /// `--version-error-without-own-version`: that -32022 names only 2025-11-25 in
    /// `supported`: a server that does not take the client's version for the
    /// request, which the client must not send again.
    pub version_error_without_own_version: bool,
    /// `--invalid-response-method METHOD`: the JSON response of each request of
    /// METHOD carries its `result` and an `error` at once, which is no valid
    /// JSON-RPC response, with the request's id.
    pub invalid_response_method: Option<String>,
    /// `--misaddressed-response-method METHOD`: the JSON response of each request of
    /// METHOD carries the id [`MISADDRESSED_ID`] in place of the request's.
    pub misaddressed_response_method: Option<String>,
}

/// The id of the responses of `--misaddressed-response-method`: no client's.
pub const MISADDRESSED_ID: u64 = 9_999_999;

impl Faults {
    /// The status that the POST number `n` (from 1) must get, if any.
    pub fn status_of_post(&self, n: u64) -> Option<u16> {
        self.fail_status
            .iter()
            .rev()
            .find(|(post, _)| *post == n)
            .map(|(_, status)| *status)
    }
}

/// The largest N of `--break-stream-after`.
pub const MAX_STREAM_EVENTS: u64 = 1_000_000;
/// The largest event of `--oversized-event`: 1 GiB.
pub const MAX_EVENT_BYTES: u64 = 1 << 30;
/// The longest interval or delay in milliseconds: one day.
pub const MAX_MILLIS: u64 = 86_400_000;

/// Parses `N:STATUS` of `--fail-status`: N from 1, STATUS from 200 to 599.
pub fn parse_fail_status(value: &str) -> Option<(u64, u16)> {
    let (post, status) = value.split_once(':')?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if !digits(post) || !digits(status) {
        return None;
    }
    let post = post.parse::<u64>().ok().filter(|post| *post >= 1)?;
    let status = status
        .parse::<u16>()
        .ok()
        .filter(|status| (200..=599).contains(status))?;
    Some((post, status))
}

impl HttpOptions {
    /// Whether no HTTP option was given (they make no sense on stdio).
    pub fn is_default(&self) -> bool {
        *self == HttpOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_status_takes_a_post_number_and_a_status() {
        assert_eq!(parse_fail_status("1:503"), Some((1, 503)));
        assert_eq!(parse_fail_status("12:200"), Some((12, 200)));
        for bad in [
            "0:503", "1:199", "1:600", "1", ":503", "1:", "+1:503", "1:5x3",
        ] {
            assert_eq!(parse_fail_status(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_last_fail_status_of_a_post_wins() {
        let faults = Faults {
            fail_status: vec![(2, 500), (3, 429), (2, 503)],
            ..Faults::default()
        };
        assert_eq!(faults.status_of_post(2), Some(503));
        assert_eq!(faults.status_of_post(3), Some(429));
        assert_eq!(faults.status_of_post(1), None);
    }
}
