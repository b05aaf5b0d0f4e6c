//! The recording format: both directions of a stdio MCP session, with times.
//!
//! A recording is a JSON Lines file. It mirrors the frame files of
//! `shared/reference/vscode/frames/` (which have `{"note":..}` first and entries
//! without `t_ms`), so one reader takes both, and the conformance runner's
//! `replay` reads what `harness-sim tap` and `harness-sim <profile> --record` write.
//!
//! ```text
//! {"transcript":1,"source":"harness-sim tap","command":["server","--flag"],"recorded":"2026-11-29T10:00:00.000Z"}
//! {"t_ms":0.412,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{..}}}
//! {"t_ms":3.977,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{..}}}
//! {"t_ms":4.100,"dir":"s2c","line":"a stdout line that is not JSON"}
//! {"t_ms":5.020,"dir":"stderr","line":"server: info: ready"}
//! ```
//!
//! - Line 1, the header: `transcript` (format version, 1), `source`
//!   (`"harness-sim tap"` or `"harness-sim <profile>"`), `command` (the server
//!   command, argv), `recorded` (RFC 3339 UTC time of the start).
//! - Each other line: `t_ms` (float milliseconds since the start), `dir`
//!   (`c2s` client to server, `s2c` server to client, `stderr` a stderr line of
//!   the server), and either `frame` (the line parsed as JSON, keys in their
//!   order) or `line` (the text of a line that is not JSON, without its line end).
//!
//! Redaction: in a recording only, the string values of secret-bearing keys
//! (`Authorization`-like header names, `access_token`, `refresh_token`,
//! `id_token`, `client_secret`, `code`, `code_verifier`, `token`, `password`,
//! `cookie`) become `"[REDACTED]"`, so that a user can share a recording of a
//! real session. The tap itself passes every line through unchanged. Numbers
//! stay: a JSON-RPC error `code` is an integer and is kept.
#![allow(clippy::module_name_repetitions)]

use std::io::{BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The version of the recording format written in the header.
pub const FORMAT_VERSION: u64 = 1;

/// The placeholder for a redacted secret.
pub const REDACTED: &str = "[REDACTED]";

/// The first line of a recording.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The format version, [`FORMAT_VERSION`].
    pub transcript: u64,
    /// Who recorded: `harness-sim tap` or `harness-sim <profile>`.
    pub source: String,
    /// The server command (argv) of the session.
    pub command: Vec<String>,
    /// RFC 3339 UTC time of the start of the session.
    pub recorded: String,
}

impl Header {
    /// A header for a recording that starts now.
    pub fn now(source: impl Into<String>, command: &[String]) -> Self {
        Self {
            transcript: FORMAT_VERSION,
            source: source.into(),
            command: command.to_vec(),
            recorded: rfc3339_utc_now(),
        }
    }
}

/// The direction of one recorded line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Client to server (stdin of the server).
    C2s,
    /// Server to client (stdout of the server).
    S2c,
    /// A stderr line of the server.
    Stderr,
}

impl Dir {
    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::C2s => "c2s",
            Dir::S2c => "s2c",
            Dir::Stderr => "stderr",
        }
    }
}

/// What one line held: a JSON frame, or text that is not JSON.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// The line parsed as JSON.
    Frame(Value),
    /// The line's text (lossy UTF-8, without the line end) when it is not JSON.
    Line(String),
}

impl Payload {
    /// Parses one line (with or without its line end) the way a recording stores it.
    pub fn from_line(bytes: &[u8]) -> Self {
        let trimmed = trim_line_end(bytes);
        match serde_json::from_slice::<Value>(trimmed) {
            Ok(value) => Payload::Frame(value),
            Err(_) => Payload::Line(String::from_utf8_lossy(trimmed).into_owned()),
        }
    }

    /// The JSON frame, when the line was JSON.
    pub fn frame(&self) -> Option<&Value> {
        match self {
            Payload::Frame(v) => Some(v),
            Payload::Line(_) => None,
        }
    }
}

/// One recorded line.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Milliseconds since the start of the session (0 for frame files without times).
    pub t_ms: f64,
    /// The direction.
    pub dir: Dir,
    /// The content.
    pub payload: Payload,
}

impl Entry {
    /// The JSON object of this entry, redacted when `redact` is set.
    pub fn to_json(&self, redact: bool) -> Value {
        let mut object = Map::new();
        // Three decimals: microsecond resolution is plenty and keeps files small.
        let t = (self.t_ms * 1000.0).round() / 1000.0;
        object.insert("t_ms".into(), json!(t));
        object.insert("dir".into(), json!(self.dir.as_str()));
        match &self.payload {
            Payload::Frame(frame) => {
                let mut frame = frame.clone();
                if redact {
                    redact_secrets(&mut frame);
                }
                object.insert("frame".into(), frame);
            }
            Payload::Line(line) => {
                object.insert("line".into(), json!(line));
            }
        }
        Value::Object(object)
    }

    /// Reads an entry of a recording or of a frame file. `Ok(None)` for a note line.
    pub fn from_json(value: &Value) -> Result<Option<Self>, RecordError> {
        let Some(object) = value.as_object() else {
            return Err(RecordError::Shape("an entry is not a JSON object".into()));
        };
        if object.contains_key("note") && !object.contains_key("dir") {
            return Ok(None);
        }
        let dir = match object.get("dir").and_then(Value::as_str) {
            Some("c2s") => Dir::C2s,
            Some("s2c") => Dir::S2c,
            Some("stderr") => Dir::Stderr,
            other => {
                return Err(RecordError::Shape(format!(
                    "an entry has no valid dir: {other:?}"
                )));
            }
        };
        let t_ms = object.get("t_ms").and_then(Value::as_f64).unwrap_or(0.0);
        let payload = if let Some(frame) = object.get("frame") {
            Payload::Frame(frame.clone())
        } else if let Some(line) = object.get("line").and_then(Value::as_str) {
            Payload::Line(line.to_owned())
        } else {
            return Err(RecordError::Shape(
                "an entry has neither frame nor line".into(),
            ));
        };
        Ok(Some(Entry { t_ms, dir, payload }))
    }
}

/// Why a recording could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file could not be read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A line is not JSON.
    #[error("line {line}: not JSON: {error}")]
    Json {
        /// 1-based line number.
        line: usize,
        /// The parse error.
        error: serde_json::Error,
    },
    /// A line has the wrong shape.
    #[error("{0}")]
    Shape(String),
}

/// A whole recording (or frame file) in memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transcript {
    /// The header, absent in a frame file.
    pub header: Option<Header>,
    /// The note of a frame file.
    pub note: Option<String>,
    /// The entries in file order.
    pub entries: Vec<Entry>,
}

impl Transcript {
    /// Parses the text of a recording or of a frame file.
    pub fn parse(text: &str) -> Result<Self, RecordError> {
        let mut transcript = Transcript::default();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(line).map_err(|error| RecordError::Json {
                line: index + 1,
                error,
            })?;
            if value.get("transcript").is_some() && value.get("dir").is_none() {
                let header: Header = serde_json::from_value(value)
                    .map_err(|e| RecordError::Shape(format!("header: {e}")))?;
                transcript.header = Some(header);
                continue;
            }
            if let Some(note) = value.get("note").and_then(Value::as_str)
                && value.get("dir").is_none()
            {
                transcript.note = Some(note.to_owned());
                continue;
            }
            if let Some(entry) = Entry::from_json(&value)? {
                transcript.entries.push(entry);
            }
        }
        Ok(transcript)
    }

    /// Reads a recording or a frame file.
    pub fn read(path: &Path) -> Result<Self, RecordError> {
        Self::parse(&std::fs::read_to_string(path)?)
    }

    /// The frames of one direction, in order (lines that are not JSON left out).
    pub fn frames(&self, dir: Dir) -> Vec<&Value> {
        self.entries
            .iter()
            .filter(|e| e.dir == dir)
            .filter_map(|e| e.payload.frame())
            .collect()
    }

    /// Writes the recording (header first when present), redacting secrets.
    pub fn write(&self, path: &Path) -> Result<(), RecordError> {
        let mut writer = Writer::create(path, self.header.as_ref())?;
        for entry in &self.entries {
            writer.write(entry)?;
        }
        writer.flush()
    }
}

/// Writes a recording line by line, flushing each line so that a killed
/// process still leaves a usable file.
pub struct Writer {
    out: std::io::BufWriter<std::fs::File>,
}

impl Writer {
    /// Creates the file and writes the header.
    pub fn create(path: &Path, header: Option<&Header>) -> Result<Self, RecordError> {
        let file = std::fs::File::create(path)?;
        let mut writer = Self {
            out: std::io::BufWriter::new(file),
        };
        if let Some(header) = header {
            let line = serde_json::to_string(header)
                .map_err(|e| RecordError::Shape(format!("header: {e}")))?;
            writer.out.write_all(line.as_bytes())?;
            writer.out.write_all(b"\n")?;
            writer.out.flush()?;
        }
        Ok(writer)
    }

    /// Appends one entry (redacted) and flushes.
    pub fn write(&mut self, entry: &Entry) -> Result<(), RecordError> {
        let line = serde_json::to_string(&entry.to_json(true))
            .map_err(|e| RecordError::Shape(format!("entry: {e}")))?;
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        Ok(())
    }

    /// Flushes the buffer.
    pub fn flush(&mut self) -> Result<(), RecordError> {
        self.out.flush()?;
        Ok(())
    }
}

/// Reads the lines of a file one by one (used by the script server).
pub fn read_lines(path: &Path) -> Result<Vec<String>, RecordError> {
    let file = std::fs::File::open(path)?;
    std::io::BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(RecordError::from)
}

/// Whether the string values of `key` are secrets in a recording.
pub fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    matches!(
        key.as_str(),
        "access_token"
            | "refresh_token"
            | "id_token"
            | "client_secret"
            | "code"
            | "code_verifier"
            | "token"
            | "password"
            | "cookie"
            | "set-cookie"
            | "x-api-key"
            | "api_key"
            | "apikey"
    ) || key.ends_with("authorization")
}

/// Replaces, everywhere in `value`, the string values of secret keys by
/// [`REDACTED`]. Non-string values stay (a JSON-RPC error code is a number).
pub fn redact_secrets(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, child) in object.iter_mut() {
                if child.is_string() && is_secret_key(key) {
                    *child = Value::String(REDACTED.into());
                } else {
                    redact_secrets(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_secrets),
        _ => {}
    }
}

/// The line without its `\n` or `\r\n` end.
pub fn trim_line_end(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

/// The current time as RFC 3339 UTC with milliseconds, e.g. `2026-11-29T10:00:00.000Z`.
///
/// Written here rather than with a date crate: the format needs only the civil
/// date of a Unix time.
pub fn rfc3339_utc_now() -> String {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339_utc(since_epoch.as_secs(), since_epoch.subsec_millis())
}

/// Formats a Unix time (seconds and milliseconds) as RFC 3339 UTC.
pub fn rfc3339_utc(secs: u64, millis: u32) -> String {
    let days = secs / 86_400;
    let rest = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rest / 3600,
        (rest % 3600) / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01
/// (H. Hinnant's `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_rfc3339() {
        assert_eq!(rfc3339_utc(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_utc(1_709_251_199, 5), "2024-02-29T23:59:59.005Z");
        assert_eq!(rfc3339_utc(1_798_761_600, 999), "2027-01-01T00:00:00.999Z");
    }

    #[test]
    fn redacts_secret_strings_but_keeps_error_codes() {
        let mut frame = json!({
            "jsonrpc": "2.0", "id": 1,
            "error": {"code": -32601, "message": "m"},
            "params": {"headers": {"Authorization": "Bearer abc", "Proxy-Authorization": "x"},
                       "access_token": "t1", "token": "t2", "code": "c", "progressToken": "keep"}
        });
        redact_secrets(&mut frame);
        assert_eq!(frame["error"]["code"], json!(-32601));
        assert_eq!(frame["params"]["headers"]["Authorization"], json!(REDACTED));
        assert_eq!(
            frame["params"]["headers"]["Proxy-Authorization"],
            json!(REDACTED)
        );
        assert_eq!(frame["params"]["access_token"], json!(REDACTED));
        assert_eq!(frame["params"]["token"], json!(REDACTED));
        assert_eq!(frame["params"]["code"], json!(REDACTED));
        assert_eq!(frame["params"]["progressToken"], json!("keep"));
    }

    #[test]
    fn reads_frame_files_and_recordings() {
        let text = r#"{"note": "n"}
{"dir": "c2s", "frame": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}
{"transcript":1,"source":"harness-sim tap","command":["x"],"recorded":"1970-01-01T00:00:00.000Z"}
{"t_ms":1.5,"dir":"s2c","line":"hello"}
{"t_ms":2,"dir":"stderr","line":"log"}"#;
        let t = Transcript::parse(text).unwrap();
        assert_eq!(t.note.as_deref(), Some("n"));
        assert_eq!(t.header.as_ref().unwrap().command, vec!["x".to_string()]);
        assert_eq!(t.entries.len(), 3);
        assert_eq!(t.entries[1].payload, Payload::Line("hello".into()));
        assert_eq!(t.frames(Dir::C2s).len(), 1);
    }

    #[test]
    fn payload_keeps_non_json_text() {
        assert_eq!(
            Payload::from_line(b"not json\r\n"),
            Payload::Line("not json".into())
        );
        assert_eq!(
            Payload::from_line(b"{\"a\":1}\n"),
            Payload::Frame(json!({"a": 1}))
        );
    }
}
