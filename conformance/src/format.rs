//! The transcript format: JSON Lines that a person can read and edit.
//!
//! Line 1 is the header; each other line is one step. A `"//"` member on any line
//! is a comment. See `transcripts/README.md` for the whole format with examples.
//!
//! ```text
//! {"transcript":1,"name":"r4-null-cursor","items":["R4"],"milestone":"M1","description":"...","upstream":{"scripted":{}}}
//! {"handshake":{"profile":"local-1.141","discover":{"capabilities":{"tools":{}}}}}
//! {"send":{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}}
//! {"upstream_expect":{"jsonrpc":"2.0","id":"$capture:list","method":"tools/list","params":"$any"}}
//! {"upstream_send":{"jsonrpc":"2.0","id":"$ref:list","result":{"tools":[],"nextCursor":null}}}
//! {"expect":{"jsonrpc":"2.0","id":4,"result":{"tools":[]}}}
//! ```
//!
//! A file whose header has `source` instead of `name` is a recording of
//! `harness-sim` (its `tap` or `--record`); the runner replays it (see `replay`).

mod marks;

use harness_sim::Profile;
pub use marks::MarkError;
use regex::Regex;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The version of the format in the header's `transcript` member.
pub const FORMAT_VERSION: u64 = 1;

/// A transcript file, read and checked.
#[derive(Debug, Clone)]
pub struct Transcript {
    /// The file.
    pub path: PathBuf,
    /// The path relative to the transcripts folder: the name in the matrix and in
    /// `cargo test`.
    pub display: String,
    pub header: Header,
    pub body: Body,
}

/// What a transcript does.
#[derive(Debug, Clone)]
pub enum Body {
    /// Steps of this format.
    Steps(Vec<Step>),
    /// A recording of harness-sim, replayed against the bridge.
    Recording(harness_sim::record::Transcript),
}

/// The upstream side of a transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Upstream {
    /// The runner answers as the transcript says (`upstream_send`, `upstream_exit`, ...).
    /// At the end of its input the scripted server exits with code 0, as a
    /// 2026-07-28 server does, unless `{"scripted":{"exit_at_eof":false}}`; with
    /// `"ignore_sigterm":true` a termination signal does not end it (only a kill).
    Scripted {
        exit_at_eof: bool,
        ignore_sigterm: bool,
    },
    /// A real `bridge-fixture-server` with these arguments, behind the relay.
    Fixture(Vec<String>),
    /// A real `bridge-fixture-server --https` with these arguments, which the
    /// bridge reaches in the URL form (M4): the runner sees each POST of the
    /// bridge (`upstream_expect`, `upstream_expect_http`), not the answers.
    HttpsFixture(Vec<String>),
    /// No upstream: `bridge_args` is the whole command line of the bridge (for the
    /// options and exit codes).
    None,
    /// The process under test is `bridge-embedded-server` (M5), an rmcp server with
    /// the bridge inside, and `bridge_args` its whole command line: its upstream is
    /// in its own process, so the runner sees no upstream frame.
    Embedded,
}

impl Upstream {
    pub fn is_scripted(&self) -> bool {
        matches!(self, Self::Scripted { .. })
    }
}

/// Line 1 of a transcript.
#[derive(Debug, Clone)]
pub struct Header {
    pub name: String,
    /// The catalog ids this transcript covers.
    pub items: Vec<String>,
    pub milestone: String,
    pub description: String,
    pub upstream: Upstream,
    /// Options of the bridge before `--` (or its whole command line without upstream).
    pub bridge_args: Vec<String>,
    /// Environment variables of the bridge.
    pub env: Vec<(String, String)>,
    /// The client profile for `send_profile` and `handshake`.
    pub client: Option<Profile>,
    /// How long an expectation waits, unless its step says `within_ms`.
    pub timeout_ms: u64,
    /// Check that every stderr line of the bridge has the form of the contract.
    pub check_log_format: bool,
    /// Check that every stdout line is JSON-RPC (off for `--help` and `--version`).
    pub stdout_json: bool,
    /// Notifications to VS Code that the steps do not expect (they are still
    /// wire-checked): for example the list changes of the listen stream (M3) in
    /// a transcript of M1 with the fixture.
    pub ignore_notifications: Vec<String>,
    /// The transcript sets `MCP_BRIDGE_TEST_FAULT`, which only a debug build of
    /// the bridge has: it is skipped against a release build.
    pub needs_test_faults: bool,
    /// The host of the fixture's URL in place of 127.0.0.1 (`https_fixture` only):
    /// a name that is not loopback by its spelling, for the proxy of Q10.
    pub url_host: Option<String>,
    /// The query of the fixture's URL (`https_fixture` only), in place of the one
    /// that `--resource-query` gives it: a URL that the metadata's resource does
    /// not cover.
    pub url_query: Option<String>,
    /// The bridge gets a Secret Service of the run's own
    /// ([`crate::secret_service`]; `https_fixture` only).
    pub secret_service: bool,
}

/// One step, with its line number for messages.
#[derive(Debug, Clone)]
pub struct Step {
    pub line: usize,
    pub kind: StepKind,
    /// A time limit for this step, from the end of the previous one.
    pub within_ms: Option<u64>,
    /// A step whose exact text is this implementation's (`"ours"`, see
    /// `format/marks.rs`): the kind that checks only its shape, for `--contract`.
    pub contract_kind: Option<StepKind>,
    /// How many texts the mark relaxes (0 without a mark).
    pub marked_texts: usize,
}

impl Transcript {
    /// The transcript in the contract's terms: each marked step checks its shape
    /// in place of its exact text.
    pub fn relax_marks(&mut self) {
        if let Body::Steps(steps) = &mut self.body {
            for step in steps {
                if let Some(kind) = step.contract_kind.take() {
                    step.kind = kind;
                }
            }
        }
    }

    /// How many exact texts of the transcript are marked as this implementation's.
    pub fn marked_texts(&self) -> usize {
        match &self.body {
            Body::Steps(steps) => steps.iter().map(|step| step.marked_texts).sum(),
            Body::Recording(_) => 0,
        }
    }
}

/// What a step does.
#[derive(Debug, Clone)]
pub enum StepKind {
    /// Write a frame to the bridge's stdin (`$ref:` values substituted).
    Send(Value),
    /// Write a line as it is (`${NAME}` becomes the JSON of a capture), with its
    /// line end unless `line_end` is false (a last line without one, before the
    /// end of stdin).
    SendRaw {
        text: String,
        line_end: bool,
    },
    /// Write a line `count` times; `${seq}` becomes 1, 2, ... (a flood of requests).
    SendRepeated {
        text: String,
        count: u64,
    },
    /// The client stops reading the bridge's stdout for the rest of the run (a
    /// client that hangs); the frames after it are never seen.
    StopReadingStdout,
    /// Write a frame of the header's client profile: `initialize`, `discover` or `initialized`.
    SendProfile {
        frame: String,
        id: Option<i64>,
    },
    /// initialize (of the profile), the upstream's server/discover answered with
    /// `discover` (scripted upstream), the initialize result, notifications/initialized.
    Handshake {
        profile: Option<Profile>,
        discover: Option<Value>,
        initialized: bool,
    },
    /// The next frame on the bridge's stdout matches.
    Expect(Value),
    /// The next frames match these, in any order.
    ExpectUnordered(Vec<Value>),
    /// The next stdout line is not JSON and matches the regex (`--help`, `--version`).
    ExpectRaw(Regex),
    /// The next stdout lines are not JSON and match these regexes, one each, in
    /// order (a whole text such as `--help`).
    ExpectRawBlock(Vec<Regex>),
    /// The rest of stdout, to its end, is lines that are not JSON and that name
    /// each of these (an `expect_raw_block` marked `"ours"` in `--contract`: the
    /// options of a `--help`, as another implementation lays them out).
    ExpectRawNames(Vec<String>),
    /// No frame on stdout for this long.
    ExpectSilence(u64),
    /// The next frame that the bridge writes to the upstream matches.
    UpstreamExpect(Value),
    /// The next POST of the bridge to the fixture over HTTPS that matches this
    /// record: `{"post":N,"headers":{...},"body":{frame}}`.
    UpstreamExpectHttp(Value),
    /// A line of the runner's proxy log matches (`CONNECT <host>:<port> as <user>`).
    ExpectProxy(Regex),
    /// The runner's proxy opened no tunnel so far.
    ExpectNoProxy,
    /// A second process of the bridge with these arguments (`$URL` and the other
    /// placeholders of the fixture over HTTPS replaced) and the transcript's
    /// environment runs to its end: its
    /// exit code and its whole stderr must be these (`mcp-bridge-vscode logout`
    /// after a sign-in, for example).
    RunBridge {
        args: Vec<String>,
        code: i32,
        stderr: Vec<String>,
        /// In `--contract`, the shape of each line that is this implementation's
        /// (`None`: the line stays exact), from the mark `"ours"`.
        shapes: Option<Vec<Option<Regex>>>,
    },
    /// What another program or the user does on the machine between two runs of
    /// the bridge (damage a token file, delete a keychain item): this command,
    /// with the transcript's environment and the run's Secret Service, runs to its
    /// end with exit code 0; its whole stdout must be `stdout` when that is given.
    Run {
        command: Vec<String>,
        stdout: Option<Vec<String>>,
    },
    /// The bridge stops at the end of its stdin (exit code 0), and a new one starts
    /// against the same fixture over HTTPS with these options before the URL and the
    /// transcript's environment with these variables over it (a restart of the server
    /// in VS Code: another account, the sandbox, a stored sign-in).
    RestartBridge {
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// The keyring's daemon of the run's Secret Service dies (the keychain stops to
    /// answer).
    StopSecretService,
    /// So many browser scripts have started in the run so far (waits for them until
    /// the step's time limit; more fail it at once).
    ExpectBrowserRuns(usize),
    /// Nothing listens on `$FREE_PORT` (the redirect port that the transcripts of
    /// the sign-in give) within so many milliseconds.
    ExpectFreePortClosed(u64),
    /// So many HTTP requests of the run so far, of either origin of the fixture over
    /// HTTPS, match `request` (a record `{"origin","method","path","headers",
    /// "status"}`), as `expect_browser_runs` counts.
    ExpectHttpRequests {
        request: Value,
        count: usize,
    },
    /// The bridge ends the upstream's input (closes the relay's stdin).
    UpstreamExpectEof,
    /// No process is left in the process group of any upstream that the bridge
    /// started (the relays lead their groups).
    ExpectUpstreamGone,
    /// The scripted upstream writes a frame to the bridge.
    UpstreamSend(Value),
    /// The scripted upstream writes a line as it is (`${NAME}` becomes the JSON of a capture).
    UpstreamRaw(String),
    /// The scripted upstream writes a line to its stderr (the bridge's stderr).
    UpstreamStderr(String),
    /// The scripted upstream process exits with this code.
    UpstreamExit(i32),
    /// The scripted upstream closes its stdout and keeps running.
    UpstreamCloseStdout,
    /// The scripted upstream starts a process in its process group that writes
    /// `stderr` (a line of the upstream's) `clean_up_ms` after a termination signal.
    UpstreamGrandchild {
        clean_up_ms: u64,
        stderr: String,
    },
    /// A stderr line equal to this comes (after the last matched stderr line).
    ExpectStderr(String),
    /// A stderr line that the regex matches comes (after the last matched one).
    ExpectStderrMatch(Regex),
    /// No stderr line of the whole run matches (checked at the end).
    ExpectNoStderrMatch(Regex),
    /// No stderr line of the whole run holds a secret of the run, or 16
    /// characters of one (checked at the end; [`crate::secrets_of_run`]).
    ExpectNoSecretInStderr,
    Sleep(u64),
    /// The user opens a URL (a capture, `$ref:NAME`) in the fixture's test browser,
    /// as VS Code does after the accept of a URL elicitation (URL form only).
    OpenUrl(Value),
    CloseStdin,
    /// The bridge exits with `code`, within `within_ms` of the previous step.
    ExpectExit {
        code: i32,
        within_ms: u64,
    },
    /// A whole session of a harness-sim client against the bridge.
    Harness(HarnessSpec),
    /// The JSON report of the harness session matches (usually `$partial`).
    ExpectReport(Value),
}

/// A session of a simulated VS Code client (harness-sim).
#[derive(Debug, Clone)]
pub struct HarnessSpec {
    pub profile: Profile,
    /// Tool calls in order: name and arguments.
    pub calls: Vec<(String, Value)>,
    /// The answers of the simulated user (harness-sim's answers JSON).
    pub answers: Option<Value>,
    /// How long to wait for late frames after the calls.
    pub settle_ms: u64,
}

/// A transcript that cannot be read: the file and line, and why.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {problem}")]
pub struct FormatError {
    pub file: String,
    pub line: usize,
    pub problem: Problem,
}

/// Why a transcript cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    #[error("cannot read the file: {0}")]
    Read(std::io::Error),
    #[error("the file is empty")]
    Empty,
    #[error("the header is not JSON: {0}")]
    HeaderNotJson(serde_json::Error),
    #[error("the header is not a JSON object")]
    HeaderNotObject,
    #[error("the step is not JSON: {0}")]
    StepNotJson(serde_json::Error),
    #[error("the step is not a JSON object")]
    StepNotObject,
    #[error(transparent)]
    Invalid(#[from] Invalid),
}

/// Why a header or a step that is JSON is not one of the format.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// A member that must have a shape of JSON, and has another.
    #[error("{what} is {shape}")]
    Shape {
        what: &'static str,
        shape: &'static str,
    },
    /// A member or a step that needs another part of the transcript.
    #[error("{what} needs {needs}")]
    Needs { what: String, needs: &'static str },
    #[error("{0} has an element that is not a string")]
    NotAStringElement(&'static str),
    #[error("{0} is not an array of strings")]
    NotStrings(&'static str),
    #[error(transparent)]
    Profile(#[from] harness_sim::profile::UnknownProfile),
    #[error("the header has the unknown member {0:?}")]
    UnknownHeaderMember(String),
    #[error("the header needs \"transcript\": {FORMAT_VERSION}")]
    Version,
    #[error("the header needs a string {0:?}")]
    HeaderString(&'static str),
    #[error("the header needs \"items\": the catalog ids it covers")]
    NoItems,
    #[error(
        "the header needs \"upstream\": {{\"scripted\":{{}}}}, {{\"fixture\":[args]}}, {{\"https_fixture\":[args]}}, \"embedded\" or \"none\""
    )]
    Upstream,
    #[error("env.{0} is not a string")]
    EnvValue(String),
    #[error("env is not an object of strings")]
    Env,
    #[error("the regex is not a string")]
    RegexNotAString,
    #[error("the regex {pattern:?} is not valid: {error}")]
    Regex {
        pattern: String,
        error: regex::Error,
    },
    #[error("the value is not a string")]
    NotAString,
    #[error("the value is not a number of milliseconds")]
    NotMillis,
    #[error("repeat goes only with send_raw")]
    RepeatWithoutSendRaw,
    #[error("line_end goes only with a send_raw that is not repeated")]
    LineEndWithoutSendRaw,
    #[error("a step has one kind, this one has {0:?}")]
    Kinds(Vec<String>),
    #[error("handshake has \"discover\" exactly when the upstream is scripted")]
    HandshakeDiscover,
    #[error("the step kind {0:?} is not known")]
    UnknownStep(String),
    #[error(transparent)]
    Recording(#[from] harness_sim::record::RecordError),
    #[error(transparent)]
    Mark(#[from] MarkError),
}

fn shape(what: &'static str, shape: &'static str) -> Invalid {
    Invalid::Shape { what, shape }
}

fn needs(what: impl Into<String>, needs: &'static str) -> Invalid {
    Invalid::Needs {
        what: what.into(),
        needs,
    }
}

/// Reads a transcript or a recording. `root` is the transcripts folder, for the
/// display name.
pub fn read(path: &Path, root: &Path) -> Result<Transcript, FormatError> {
    let display = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    let text = std::fs::read_to_string(path).map_err(|error| FormatError {
        file: display.clone(),
        line: 0,
        problem: Problem::Read(error),
    })?;
    parse(&text, path, &display)
}

/// Parses the text of a transcript.
pub fn parse(text: &str, path: &Path, display: &str) -> Result<Transcript, FormatError> {
    let error = |line: usize, problem: Problem| FormatError {
        file: display.to_owned(),
        line,
        problem,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line))
        .filter(|(_, line)| !line.trim().is_empty());
    let Some((first, header_line)) = lines.next() else {
        return Err(error(1, Problem::Empty));
    };
    let header: Value =
        serde_json::from_str(header_line).map_err(|e| error(first, Problem::HeaderNotJson(e)))?;
    let Value::Object(header) = header else {
        return Err(error(first, Problem::HeaderNotObject));
    };
    if header.contains_key("source") {
        return recording(text, &header, path, display).map_err(|m| error(first, m.into()));
    }
    let header = parse_header(&header).map_err(|m| error(first, m.into()))?;
    let mut steps = Vec::new();
    for (number, line) in lines {
        let value: Value =
            serde_json::from_str(line).map_err(|e| error(number, Problem::StepNotJson(e)))?;
        let Value::Object(object) = value else {
            return Err(error(number, Problem::StepNotObject));
        };
        if let Some(step) =
            parse_step(object, number, &header).map_err(|m| error(number, m.into()))?
        {
            steps.push(step);
        }
    }
    Ok(Transcript {
        path: path.to_owned(),
        display: display.to_owned(),
        header,
        body: Body::Steps(steps),
    })
}

/// An `env` object: the variables of a bridge process.
fn env_of(value: Option<&Value>) -> Result<Vec<(String, String)>, Invalid> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Object(env)) => env
            .iter()
            .map(|(key, value)| {
                value
                    .as_str()
                    .map(|v| (key.clone(), v.to_owned()))
                    .ok_or_else(|| Invalid::EnvValue(key.clone()))
            })
            .collect(),
        Some(_) => Err(Invalid::Env),
    }
}

fn string_list(value: Option<&Value>, what: &'static str) -> Result<Vec<String>, Invalid> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_owned)
                    .ok_or(Invalid::NotAStringElement(what))
            })
            .collect(),
        Some(_) => Err(Invalid::NotStrings(what)),
    }
}

fn profile_of(value: &Value) -> Result<Profile, Invalid> {
    let name = value
        .as_str()
        .ok_or_else(|| shape("a profile", "a string"))?;
    Ok(name.parse::<Profile>()?)
}

fn parse_header(header: &Map<String, Value>) -> Result<Header, Invalid> {
    const KEYS: [&str; 19] = [
        "//",
        "transcript",
        "name",
        "items",
        "milestone",
        "description",
        "upstream",
        "bridge_args",
        "env",
        "client",
        "timeout_ms",
        "check_log_format",
        "stdout_json",
        "ignore_notifications",
        "needs_test_faults",
        "notes",
        "url_host",
        "url_query",
        "secret_service",
    ];
    if let Some(key) = header.keys().find(|key| !KEYS.contains(&key.as_str())) {
        return Err(Invalid::UnknownHeaderMember(key.clone()));
    }
    if header.get("transcript").and_then(Value::as_u64) != Some(FORMAT_VERSION) {
        return Err(Invalid::Version);
    }
    let text = |key: &'static str| -> Result<String, Invalid> {
        header
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or(Invalid::HeaderString(key))
    };
    let items = string_list(header.get("items"), "items")?;
    if items.is_empty() {
        return Err(Invalid::NoItems);
    }
    let upstream = match header.get("upstream") {
        Some(Value::String(none)) if none == "none" => Upstream::None,
        Some(Value::String(embedded)) if embedded == "embedded" => Upstream::Embedded,
        Some(Value::Object(object)) if object.len() == 1 && object.contains_key("scripted") => {
            let flag = |name: &str, default: bool| {
                object
                    .get("scripted")
                    .and_then(|s| s.get(name))
                    .and_then(Value::as_bool)
                    .unwrap_or(default)
            };
            Upstream::Scripted {
                exit_at_eof: flag("exit_at_eof", true),
                ignore_sigterm: flag("ignore_sigterm", false),
            }
        }
        Some(Value::Object(object)) if object.len() == 1 && object.contains_key("fixture") => {
            Upstream::Fixture(string_list(object.get("fixture"), "upstream.fixture")?)
        }
        Some(Value::Object(object))
            if object.len() == 1 && object.contains_key("https_fixture") =>
        {
            Upstream::HttpsFixture(string_list(
                object.get("https_fixture"),
                "upstream.https_fixture",
            )?)
        }
        _ => {
            return Err(Invalid::Upstream);
        }
    };
    let env = env_of(header.get("env"))?;
    let url_host = header.get("url_host").map(text_of).transpose()?;
    if url_host.is_some() && !matches!(upstream, Upstream::HttpsFixture(_)) {
        return Err(needs("url_host", "the fixture over HTTPS"));
    }
    let url_query = header.get("url_query").map(text_of).transpose()?;
    if url_query.is_some() && !matches!(upstream, Upstream::HttpsFixture(_)) {
        return Err(needs("url_query", "the fixture over HTTPS"));
    }
    let secret_service = header
        .get("secret_service")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if secret_service && !matches!(upstream, Upstream::HttpsFixture(_)) {
        return Err(needs("secret_service", "the fixture over HTTPS"));
    }
    Ok(Header {
        url_host,
        url_query,
        secret_service,
        name: text("name")?,
        items,
        milestone: text("milestone")?,
        description: text("description")?,
        upstream,
        bridge_args: string_list(header.get("bridge_args"), "bridge_args")?,
        env,
        client: header.get("client").map(profile_of).transpose()?,
        timeout_ms: header
            .get("timeout_ms")
            .and_then(Value::as_u64)
            .unwrap_or(10_000),
        check_log_format: header
            .get("check_log_format")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        stdout_json: header
            .get("stdout_json")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        ignore_notifications: string_list(
            header.get("ignore_notifications"),
            "ignore_notifications",
        )?,
        needs_test_faults: header
            .get("needs_test_faults")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

fn regex_of(value: &Value) -> Result<Regex, Invalid> {
    let pattern = value.as_str().ok_or(Invalid::RegexNotAString)?;
    Regex::new(pattern).map_err(|error| Invalid::Regex {
        pattern: pattern.to_owned(),
        error,
    })
}

fn text_of(value: &Value) -> Result<String, Invalid> {
    value.as_str().map(str::to_owned).ok_or(Invalid::NotAString)
}

fn millis_of(value: &Value) -> Result<u64, Invalid> {
    value.as_u64().ok_or(Invalid::NotMillis)
}

fn parse_step(
    mut object: Map<String, Value>,
    line: usize,
    header: &Header,
) -> Result<Option<Step>, Invalid> {
    object.shift_remove("//");
    let ours = object.shift_remove("ours");
    let within_ms = match object.shift_remove("within_ms") {
        Some(value) => Some(millis_of(&value)?),
        None => None,
    };
    let repeat = match object.shift_remove("repeat") {
        Some(value) => Some(
            value
                .as_u64()
                .filter(|n| *n > 0)
                .ok_or_else(|| shape("repeat", "a count of 1 or more"))?,
        ),
        None => None,
    };
    if repeat.is_some() && !object.contains_key("send_raw") {
        return Err(Invalid::RepeatWithoutSendRaw);
    }
    let line_end = match object.shift_remove("line_end") {
        Some(value) => value
            .as_bool()
            .ok_or_else(|| shape("line_end", "a boolean"))?,
        None => true,
    };
    if !line_end && (repeat.is_some() || !object.contains_key("send_raw")) {
        return Err(Invalid::LineEndWithoutSendRaw);
    }
    if object.is_empty() && ours.is_none() {
        // A comment line.
        return Ok(None);
    }
    if object.is_empty() {
        return Err(MarkError::NotAnExpectation.into());
    }
    if object.len() != 1 {
        return Err(Invalid::Kinds(object.keys().cloned().collect()));
    }
    let Some((key, value)) = object.into_iter().next() else {
        return Ok(None);
    };
    let scripted = |kind: StepKind| {
        if header.upstream.is_scripted() {
            Ok(kind)
        } else {
            Err(needs(key.clone(), "a scripted upstream"))
        }
    };
    let kind = match key.as_str() {
        "send" => StepKind::Send(value),
        "send_raw" => match repeat {
            Some(count) => StepKind::SendRepeated {
                text: text_of(&value)?,
                count,
            },
            None => StepKind::SendRaw {
                text: text_of(&value)?,
                line_end,
            },
        },
        "stop_reading_stdout" => StepKind::StopReadingStdout,
        "send_profile" => {
            if header.client.is_none() {
                return Err(needs("send_profile", "\"client\" in the header"));
            }
            match value {
                Value::String(frame) => StepKind::SendProfile { frame, id: None },
                Value::Object(o) => StepKind::SendProfile {
                    frame: o
                        .get("frame")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .into(),
                    id: o.get("id").and_then(Value::as_i64),
                },
                _ => return Err(shape("send_profile", "a frame name or {frame, id}")),
            }
        }
        "handshake" => {
            let Value::Object(o) = value else {
                return Err(shape("handshake", "an object"));
            };
            let profile = o.get("profile").map(profile_of).transpose()?;
            if profile.is_none() && header.client.is_none() {
                return Err(needs("handshake", "a profile, in the step or the header"));
            }
            let discover = o.get("discover").cloned();
            if discover.is_some() != (header.upstream.is_scripted()) {
                return Err(Invalid::HandshakeDiscover);
            }
            StepKind::Handshake {
                profile,
                discover,
                initialized: o
                    .get("initialized")
                    .and_then(Value::as_bool)
                    .unwrap_or(true),
            }
        }
        "expect" => StepKind::Expect(value),
        "expect_unordered" => match value {
            Value::Array(frames) => StepKind::ExpectUnordered(frames),
            _ => return Err(shape("expect_unordered", "an array of frames")),
        },
        "expect_raw" => StepKind::ExpectRaw(regex_of(&value)?),
        "expect_raw_block" => StepKind::ExpectRawBlock(
            value
                .as_array()
                .filter(|lines| !lines.is_empty())
                .ok_or_else(|| shape("expect_raw_block", "an array of regexes"))?
                .iter()
                .map(regex_of)
                .collect::<Result<_, _>>()?,
        ),
        "expect_silence_ms" => StepKind::ExpectSilence(millis_of(&value)?),
        "upstream_expect" => {
            if matches!(header.upstream, Upstream::None | Upstream::Embedded) {
                return Err(needs("upstream_expect", "an upstream that the runner sees"));
            }
            StepKind::UpstreamExpect(value)
        }
        "upstream_expect_http" => {
            if !matches!(header.upstream, Upstream::HttpsFixture(_)) {
                return Err(needs("upstream_expect_http", "the fixture over HTTPS"));
            }
            StepKind::UpstreamExpectHttp(value)
        }
        "expect_proxy" | "expect_no_proxy" => {
            if !header.env.iter().any(|(_, value)| value.contains("$PROXY")) {
                return Err(needs(key.clone(), "$PROXY in the environment"));
            }
            if key == "expect_proxy" {
                StepKind::ExpectProxy(regex_of(&value)?)
            } else {
                StepKind::ExpectNoProxy
            }
        }
        "run_bridge" => {
            if !matches!(header.upstream, Upstream::HttpsFixture(_)) {
                return Err(needs("run_bridge", "the fixture over HTTPS"));
            }
            let object = value
                .as_object()
                .ok_or_else(|| shape("run_bridge", "an object"))?;
            StepKind::RunBridge {
                args: string_list(object.get("args"), "run_bridge.args")?,
                code: object
                    .get("code")
                    .and_then(Value::as_i64)
                    .and_then(|code| i32::try_from(code).ok())
                    .ok_or_else(|| needs("run_bridge", "an exit code \"code\""))?,
                stderr: string_list(object.get("stderr"), "run_bridge.stderr")?,
                shapes: None,
            }
        }
        "run" => {
            if !matches!(header.upstream, Upstream::HttpsFixture(_)) {
                return Err(needs("run", "the fixture over HTTPS"));
            }
            let object = value.as_object().ok_or_else(|| shape("run", "an object"))?;
            let command = string_list(object.get("command"), "run.command")?;
            if command.is_empty() {
                return Err(needs("run", "a program in \"command\""));
            }
            StepKind::Run {
                command,
                stdout: object
                    .get("stdout")
                    .map(|lines| string_list(Some(lines), "run.stdout"))
                    .transpose()?,
            }
        }
        "restart_bridge" => {
            if !matches!(header.upstream, Upstream::HttpsFixture(_)) {
                return Err(needs("restart_bridge", "the fixture over HTTPS"));
            }
            let object = value
                .as_object()
                .ok_or_else(|| shape("restart_bridge", "an object"))?;
            StepKind::RestartBridge {
                args: string_list(object.get("bridge_args"), "restart_bridge.bridge_args")?,
                env: env_of(object.get("env"))?,
            }
        }
        "stop_secret_service" => {
            if !header.secret_service {
                return Err(needs("stop_secret_service", "\"secret_service\": true"));
            }
            StepKind::StopSecretService
        }
        "expect_http_requests" => {
            if !matches!(header.upstream, Upstream::HttpsFixture(_)) {
                return Err(needs("expect_http_requests", "the fixture over HTTPS"));
            }
            let object = value
                .as_object()
                .ok_or_else(|| shape("expect_http_requests", "an object"))?;
            StepKind::ExpectHttpRequests {
                request: object
                    .get("request")
                    .cloned()
                    .ok_or_else(|| needs("expect_http_requests", "a request to match"))?,
                count: object
                    .get("count")
                    .and_then(Value::as_u64)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| needs("expect_http_requests", "a count"))?,
            }
        }
        "expect_browser_runs" => {
            if !matches!(header.upstream, Upstream::HttpsFixture(_)) {
                return Err(needs("expect_browser_runs", "the fixture over HTTPS"));
            }
            StepKind::ExpectBrowserRuns(
                value
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| shape("expect_browser_runs", "a count"))?,
            )
        }
        "expect_free_port_closed" => {
            if !matches!(header.upstream, Upstream::HttpsFixture(_)) {
                return Err(needs("expect_free_port_closed", "the fixture over HTTPS"));
            }
            StepKind::ExpectFreePortClosed(
                value
                    .get("within_ms")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| shape("expect_free_port_closed", "{\"within_ms\":N}"))?,
            )
        }
        "upstream_expect_eof" => StepKind::UpstreamExpectEof,
        "expect_upstream_gone" => {
            if matches!(header.upstream, Upstream::None | Upstream::Embedded) {
                return Err(needs("expect_upstream_gone", "an upstream process"));
            }
            StepKind::ExpectUpstreamGone
        }
        "upstream_send" => scripted(StepKind::UpstreamSend(value))?,
        "upstream_raw" => scripted(StepKind::UpstreamRaw(text_of(&value)?))?,
        "upstream_stderr" => scripted(StepKind::UpstreamStderr(text_of(&value)?))?,
        "upstream_exit" => scripted(StepKind::UpstreamExit(
            value
                .as_i64()
                .and_then(|c| i32::try_from(c).ok())
                .ok_or_else(|| shape("upstream_exit", "an exit code"))?,
        ))?,
        "upstream_close_stdout" => scripted(StepKind::UpstreamCloseStdout)?,
        "upstream_grandchild" => scripted(StepKind::UpstreamGrandchild {
            clean_up_ms: value
                .get("clean_up_ms")
                .map(millis_of)
                .transpose()?
                .ok_or_else(|| needs("upstream_grandchild", "clean_up_ms"))?,
            stderr: value
                .get("stderr")
                .map(text_of)
                .transpose()?
                .filter(|text| !text.is_empty() && !text.contains('\n'))
                .ok_or_else(|| needs("upstream_grandchild", "a stderr line"))?,
        })?,
        "expect_stderr" => StepKind::ExpectStderr(text_of(&value)?),
        "expect_stderr_match" => StepKind::ExpectStderrMatch(regex_of(&value)?),
        "expect_no_stderr_match" => StepKind::ExpectNoStderrMatch(regex_of(&value)?),
        "expect_no_secret_in_stderr" => crate::secrets_of_run::step_of(header, &value)?,
        "sleep_ms" => StepKind::Sleep(millis_of(&value)?),
        "open_url" => StepKind::OpenUrl(value.clone()),
        "close_stdin" => StepKind::CloseStdin,
        "expect_exit" => {
            let code = value
                .get("code")
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok())
                .ok_or_else(|| needs("expect_exit", "a code"))?;
            StepKind::ExpectExit {
                code,
                within_ms: value
                    .get("within_ms")
                    .and_then(Value::as_u64)
                    .unwrap_or(header.timeout_ms),
            }
        }
        "harness" => StepKind::Harness(harness_spec(&value)?),
        "expect_report" => StepKind::ExpectReport(value),
        other => return Err(Invalid::UnknownStep(other.to_owned())),
    };
    let contract_kind = ours
        .as_ref()
        .map(|ours| marks::relaxed(&kind, ours))
        .transpose()?;
    let marked_texts = ours.as_ref().map_or(0, |ours| marks::count(&kind, ours));
    Ok(Some(Step {
        line,
        kind,
        within_ms,
        contract_kind,
        marked_texts,
    }))
}

fn harness_spec(value: &Value) -> Result<HarnessSpec, Invalid> {
    let profile = profile_of(
        value
            .get("profile")
            .ok_or_else(|| needs("harness", "a profile"))?,
    )?;
    let mut calls = Vec::new();
    for call in value
        .get("calls")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        match call.as_array().map(Vec::as_slice) {
            Some([Value::String(name), arguments @ Value::Object(_)]) => {
                calls.push((name.clone(), arguments.clone()))
            }
            _ => return Err(shape("each call", "[\"tool\", {arguments}]")),
        }
    }
    Ok(HarnessSpec {
        profile,
        calls,
        answers: value.get("answers").cloned(),
        settle_ms: value
            .get("settle_ms")
            .and_then(Value::as_u64)
            .unwrap_or(300),
    })
}

/// A recording of harness-sim. Its header may carry the members of a transcript
/// header (`name`, `items`, `milestone`, `description`), added by hand when the
/// recording is kept as a regression transcript; the upstream is the fixture with
/// the arguments after `--` of the recorded command.
fn recording(
    text: &str,
    header: &Map<String, Value>,
    path: &Path,
    display: &str,
) -> Result<Transcript, Invalid> {
    let recorded = harness_sim::record::Transcript::parse(text)?;
    let command = string_list(header.get("command"), "command")?;
    let fixture_args = match command.iter().position(|arg| arg == "--") {
        Some(at) => command[at + 1..].iter().skip(1).cloned().collect(),
        None => Vec::new(),
    };
    let bridge_args = match command.iter().position(|arg| arg == "--") {
        Some(at) => command[1..at].to_vec(),
        None => Vec::new(),
    };
    let name = header
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| {
            Path::new(display)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let source = header
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let client = source
        .strip_prefix("harness-sim ")
        .and_then(|profile| profile.parse::<Profile>().ok());
    Ok(Transcript {
        path: path.to_owned(),
        display: display.to_owned(),
        header: Header {
            name,
            items: string_list(header.get("items"), "items")?,
            milestone: header
                .get("milestone")
                .and_then(Value::as_str)
                .unwrap_or("M1")
                .to_owned(),
            description: header
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("a recording of {source}")),
            upstream: Upstream::Fixture(fixture_args),
            bridge_args,
            env: Vec::new(),
            client,
            timeout_ms: 10_000,
            check_log_format: true,
            stdout_json: true,
            ignore_notifications: Vec::new(),
            needs_test_faults: false,
            url_host: None,
            url_query: None,
            secret_service: false,
        },
        body: Body::Recording(recorded),
    })
}

/// Every `.jsonl` file under `dir` (sorted), except the vendored schemas.
pub fn discover_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder)? {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|name| name != "schema") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Transcript, FormatError> {
        parse(text, Path::new("x.jsonl"), "m1/x.jsonl")
    }

    const HEADER: &str = r#"{"transcript":1,"name":"x","items":["R4"],"milestone":"M1","description":"d","upstream":{"scripted":{}},"client":"local-1.141"}"#;

    #[test]
    fn a_transcript_with_comments_and_steps() {
        let text = format!(
            "{HEADER}\n{{\"//\":\"a comment line\"}}\n\n{{\"send\":{{\"id\":1}},\"//\":\"why\"}}\n{{\"expect\":{{\"id\":1}},\"within_ms\":50}}\n{{\"upstream_exit\":3}}\n"
        );
        let transcript = parse_text(&text).unwrap();
        assert_eq!(transcript.header.items, ["R4"]);
        let Body::Steps(steps) = transcript.body else {
            panic!()
        };
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[0].line, 4);
        assert_eq!(steps[1].within_ms, Some(50));
        assert!(matches!(steps[2].kind, StepKind::UpstreamExit(3)));
    }

    #[test]
    fn errors_name_the_file_and_the_line() {
        let error = parse_text(&format!("{HEADER}\n{{\"sendd\":1}}")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "m1/x.jsonl:2: the step kind \"sendd\" is not known"
        );
        let error = parse_text(&format!("{HEADER}\nnot json")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("m1/x.jsonl:2: the step is not JSON")
        );
        let error = parse_text(
            r#"{"transcript":1,"name":"x","milestone":"M1","description":"d","upstream":"none"}"#,
        )
        .unwrap_err();
        assert!(error.problem.to_string().contains("items"), "{error}");
        let fixture = HEADER.replace(r#"{"scripted":{}}"#, r#"{"fixture":[]}"#);
        let error = parse_text(&format!("{fixture}\n{{\"upstream_exit\":1}}")).unwrap_err();
        assert!(
            error.problem.to_string().contains("scripted upstream"),
            "{error}"
        );
    }

    #[test]
    fn a_raw_line_may_go_without_its_line_end_but_only_once() {
        let transcript = parse_text(&format!(
            "{HEADER}\n{{\"send_raw\":\"x\",\"line_end\":false}}"
        ))
        .unwrap();
        let Body::Steps(steps) = transcript.body else {
            panic!()
        };
        assert!(matches!(
            &steps[0].kind,
            StepKind::SendRaw { text, line_end: false } if text == "x"
        ));
        for step in [
            r#"{"send_raw":"x","repeat":2,"line_end":false}"#,
            r#"{"send":{"id":1},"line_end":false}"#,
        ] {
            let error = parse_text(&format!("{HEADER}\n{step}")).unwrap_err();
            assert!(error.to_string().contains("line_end"), "{error}");
        }
    }

    #[test]
    fn the_messages_of_the_typed_problems_are_those_of_the_format() {
        let message = |text: &str| parse_text(text).unwrap_err().problem.to_string();
        assert_eq!(
            message(&HEADER.replace(r#"{"scripted":{}}"#, "3")),
            r#"the header needs "upstream": {"scripted":{}}, {"fixture":[args]}, {"https_fixture":[args]}, "embedded" or "none""#
        );
        assert_eq!(
            message(&HEADER.replace(r#""transcript":1"#, r#""transcript":2"#)),
            r#"the header needs "transcript": 1"#
        );
        assert_eq!(
            message(&format!("{HEADER}\n{{\"handshake\":1}}")),
            "handshake is an object"
        );
        assert_eq!(
            message(&format!(
                "{}\n{{\"send_profile\":\"initialize\"}}",
                HEADER.replace(r#","client":"local-1.141""#, "")
            )),
            r#"send_profile needs "client" in the header"#
        );
        assert_eq!(
            message(&format!("{HEADER}\n{{\"send\":1,\"expect\":1}}")),
            r#"a step has one kind, this one has ["send", "expect"]"#
        );
        assert_eq!(
            message(&format!(
                "{HEADER}\n{{\"upstream_grandchild\":{{\"clean_up_ms\":300}}}}"
            )),
            "upstream_grandchild needs a stderr line"
        );
        assert_eq!(
            message(&format!(
                "{HEADER}\n{{\"upstream_grandchild\":{{\"stderr\":\"a\\nb\",\"clean_up_ms\":1}}}}"
            )),
            "upstream_grandchild needs a stderr line"
        );
    }

    #[test]
    fn a_recording_of_harness_sim_is_read_as_a_replay() {
        let text = r#"{"transcript":1,"source":"harness-sim local-1.141","command":["/t/mcp-bridge-vscode","--log-level","debug","--","/t/bridge-fixture-server","--many-tools","3"],"recorded":"2026-11-29T10:00:00.000Z","items":["R1"],"milestone":"M1"}
{"t_ms":1.0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#;
        let transcript = parse_text(text).unwrap();
        assert_eq!(
            transcript.header.upstream,
            Upstream::Fixture(vec!["--many-tools".into(), "3".into()])
        );
        assert_eq!(transcript.header.bridge_args, ["--log-level", "debug"]);
        assert_eq!(transcript.header.client, Some(Profile::Local141));
        assert!(matches!(transcript.body, Body::Recording(_)));
    }
}
