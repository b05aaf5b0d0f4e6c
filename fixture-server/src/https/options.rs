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
    /// `--slow-stream-ms MS`: each SSE event waits this long before it goes out.
    pub slow_stream: Option<Duration>,
    /// `--break-stream-after N`: an SSE stream closes after N events, before any further
    /// event (the response included); the request is cancelled.
    pub break_stream_after: Option<usize>,
    /// `--oversized-event BYTES`: every SSE stream starts with one `notifications/message`
    /// event whose data is BYTES bytes long.
    pub oversized_event: Option<usize>,
}

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

/// The options that only the HTTP modes take (besides `--https` and `--http`).
pub const HTTP_OPTIONS: &[&str] = &[
    "--port",
    "--tls-dir",
    "--tls-case",
    "--tls-name",
    "--host",
    "--keep-alive-ms",
    "--always-sse",
    "--bearer-env",
    "--print-exchanges",
    "--fail-status",
    "--slow-stream-ms",
    "--break-stream-after",
    "--oversized-event",
];

/// The largest N of `--break-stream-after`.
const MAX_STREAM_EVENTS: u64 = 1_000_000;
/// The largest event of `--oversized-event`: 1 GiB.
const MAX_EVENT_BYTES: u64 = 1 << 30;
/// The longest interval or delay in milliseconds: one day.
const MAX_MILLIS: u64 = 86_400_000;

/// Applies one option of [`HTTP_OPTIONS`] with its value (empty for a flag); the error
/// names the option.
pub fn apply(http: &mut HttpOptions, name: &str, value: &str) -> Result<(), String> {
    match name {
        "--port" => http.port = number(name, value, 0, u64::from(u16::MAX))?,
        "--tls-dir" => http.tls_dir = Some(value.into()),
        "--tls-case" => {
            http.tls_case = TlsCase::parse(value).ok_or_else(|| {
                format!(
                    "the value '{value}' of --tls-case is not a case (good, expired, wrong-host, unknown-ca)"
                )
            })?;
        }
        "--tls-name" => {
            if !is_dns_name(value) {
                return Err(format!(
                    "the value '{value}' of --tls-name is not a DNS name"
                ));
            }
            http.tls_names.push(value.to_owned());
        }
        "--host" => {
            if !is_dns_name(value) {
                return Err(format!("the value '{value}' of --host is not a DNS name"));
            }
            http.host = Some(value.to_owned());
        }
        "--keep-alive-ms" => http.keep_alive = millis(name, value)?,
        "--always-sse" => http.always_sse = true,
        "--bearer-env" => http.bearer_env = Some(value.to_owned()),
        "--print-exchanges" => http.print_exchanges = true,
        "--fail-status" => {
            let fault = parse_fail_status(value).ok_or_else(|| {
                format!(
                    "the value '{value}' of --fail-status is not N:STATUS (N from 1, STATUS from 200 to 599)"
                )
            })?;
            http.faults.fail_status.push(fault);
        }
        "--slow-stream-ms" => http.faults.slow_stream = Some(millis(name, value)?),
        "--break-stream-after" => {
            http.faults.break_stream_after = Some(number(name, value, 0, MAX_STREAM_EVENTS)?);
        }
        "--oversized-event" => {
            http.faults.oversized_event = Some(number(name, value, 1, MAX_EVENT_BYTES)?);
        }
        other => return Err(format!("unknown argument '{other}'")),
    }
    Ok(())
}

/// Letters, digits, dots and hyphens: a name for a certificate and a URL.
fn is_dns_name(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
}

/// A decimal number from `min` to `max` (no sign), in the type of the option.
fn number<T: TryFrom<u64>>(name: &str, value: &str, min: u64, max: u64) -> Result<T, String> {
    value
        .parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n) && !value.starts_with('+'))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| format!("the value '{value}' of {name} is not a number from {min} to {max}"))
}

/// Milliseconds from 1 to one day.
fn millis(name: &str, value: &str) -> Result<Duration, String> {
    number::<u64>(name, value, 1, MAX_MILLIS).map(Duration::from_millis)
}

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

    fn parsed(args: &[(&str, &str)]) -> Result<HttpOptions, String> {
        let mut http = HttpOptions::default();
        for (name, value) in args {
            apply(&mut http, name, value)?;
        }
        Ok(http)
    }

    #[test]
    fn every_http_option_fills_its_field() {
        let http = parsed(&[
            ("--port", "8443"),
            ("--tls-dir", "/tmp/certs"),
            ("--tls-case", "wrong-host"),
            ("--host", "remote.mcp-bridge.test"),
            ("--keep-alive-ms", "250"),
            ("--always-sse", ""),
            ("--fail-status", "1:503"),
            ("--fail-status", "3:500"),
            ("--slow-stream-ms", "20"),
            ("--break-stream-after", "0"),
            ("--oversized-event", "70000"),
        ])
        .unwrap();
        assert_eq!(http.port, 8443);
        assert_eq!(
            http.tls_dir.as_deref(),
            Some(std::path::Path::new("/tmp/certs"))
        );
        assert_eq!(http.tls_case, TlsCase::WrongHost);
        assert_eq!(http.host.as_deref(), Some("remote.mcp-bridge.test"));
        assert_eq!(http.keep_alive, Duration::from_millis(250));
        assert!(http.always_sse);
        assert_eq!(http.faults.fail_status, [(1, 503), (3, 500)]);
        assert_eq!(http.faults.slow_stream, Some(Duration::from_millis(20)));
        assert_eq!(http.faults.break_stream_after, Some(0));
        assert_eq!(http.faults.oversized_event, Some(70000));
    }

    #[test]
    fn bad_values_name_the_option() {
        let error = |name, value| parsed(&[(name, value)]).unwrap_err();
        assert_eq!(
            error("--port", "65536"),
            "the value '65536' of --port is not a number from 0 to 65535"
        );
        assert!(error("--keep-alive-ms", "0").contains("--keep-alive-ms"));
        assert!(error("--oversized-event", "+5").contains("--oversized-event"));
        assert!(error("--fail-status", "0:500").contains("N:STATUS"));
        assert!(error("--tls-case", "bad").contains("--tls-case"));
        assert_eq!(
            error("--host", "a/b"),
            "the value 'a/b' of --host is not a DNS name"
        );
    }

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
