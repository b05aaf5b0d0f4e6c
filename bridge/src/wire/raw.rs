//! Each line read once: one pass of the scanner of `json_shallow` checks the
//! whole line and reads its JSON-RPC members as JSON text, and the members of its
//! `params` or `result` in the same pass. What comes out is never parsed again:
//!
//! - the two hot paths stay JSON text: a clean request of VS Code that goes
//!   upstream ([`read_client_line`]), a clean response of the upstream
//!   ([`read_upstream_line`], kept as a [`ResultLine`]);
//! - every other frame becomes a [`Message`], its tree built from the text of
//!   the members that the scan has checked (`params`, `result`, `error`): only
//!   the members that the rules read as a tree are parsed, each once.
//!
//! serde_json's tree refuses some text that the scanner takes as JSON (a number
//! out of range, a lone surrogate in a string); where a tree is built of such
//! text, the line goes to [`Message::parse`], so that every error stays that of
//! the full parse. Those lines, and the lines that the scan refuses (not JSON,
//! too deep, a member of JSON-RPC twice), are the only ones read twice.

use super::frame::{
    self, Invalid, LineFailure, MAX_DEPTH, Message, Outcome, ParseFailure, Response,
};
use super::id::{self, is_valid_id};
use super::pieces::Sink;
use super::shallow::ShallowObject;
use super::text::{SharedLine, Text};
use json_shallow::Member;
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;

/// A response of the upstream with an integer id and an object result, nothing else.
#[derive(Debug)]
pub struct RawResponse<'a> {
    pub id: u64,
    pub result: ShallowObject<'a>,
}

/// A request of VS Code: a string or number id, a method, and an object or no params.
#[derive(Debug)]
pub struct RawRequest<'a> {
    pub id: Value,
    pub method: Cow<'a, str>,
    pub params: Option<ShallowObject<'a>>,
}

/// The members of JSON-RPC, each at most once, as JSON text, and the members of
/// `params` or `result` (the one asked for) when it is an object.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<&'a str>,
    method: Option<&'a str>,
    params: Option<&'a str>,
    result: Option<&'a str>,
    error: Option<&'a str>,
    inner: Option<Vec<Member<'a>>>,
}

/// `text` read one level deep in one pass, and its member `inner` too when that
/// is an object. `None` for anything but one JSON object within the depth of the
/// full parse whose members of JSON-RPC come at most once (the full parse
/// refuses a member twice).
fn envelope<'a>(text: &'a str, inner: &str) -> Option<Envelope<'a>> {
    let (members, inner) = json_shallow::object_members_with_inner(text, MAX_DEPTH, inner)?;
    let mut envelope = Envelope {
        inner,
        ..Envelope::default()
    };
    for member in members {
        let slot = match member.key.as_ref() {
            "jsonrpc" => &mut envelope.jsonrpc,
            "id" => &mut envelope.id,
            "method" => &mut envelope.method,
            "params" => &mut envelope.params,
            "result" => &mut envelope.result,
            "error" => &mut envelope.error,
            _ => continue,
        };
        if slot.replace(member.value).is_some() {
            return None;
        }
    }
    Some(envelope)
}

impl<'a> Envelope<'a> {
    fn is_version_2(&self) -> bool {
        self.jsonrpc == Some("\"2.0\"")
    }

    /// A clean response: `jsonrpc` `"2.0"`, an integer `id`, an object `result`
    /// (read with `inner` `"result"`), and no other member of JSON-RPC. Its id and
    /// the members of its result; the envelope is left as it was otherwise.
    fn take_response(&mut self) -> Option<(u64, Vec<Member<'a>>)> {
        if !self.is_version_2()
            || self.method.is_some()
            || self.params.is_some()
            || self.error.is_some()
            || self.result.is_none()
        {
            return None;
        }
        let id = self.id?.parse().ok()?;
        // No inner members: the result is not an object.
        let result = self.inner.take()?;
        Some((id, result))
    }

    /// A clean request: `jsonrpc` `"2.0"`, a string or number `id`, a string
    /// `method`, an object `params` (read with `inner` `"params"`) or none, and no
    /// other member of JSON-RPC, when `wanted` takes its method. The envelope is
    /// left as it was otherwise.
    fn take_request(&mut self, wanted: impl FnOnce(&str) -> bool) -> Option<RawRequest<'a>> {
        if !self.is_version_2() || self.result.is_some() || self.error.is_some() {
            return None;
        }
        let id = id_of(self.id?)?;
        let method = string_of(self.method?)?;
        if !is_valid_id(&id) || !wanted(&method) {
            return None;
        }
        let params = match self.params {
            None => None,
            // No inner members: the params are not an object.
            Some(_) => Some(ShallowObject::of_members(self.inner.take()?)),
        };
        Some(RawRequest { id, method, params })
    }

    /// The frame as a message, its members built into trees from their checked
    /// text. `None` when serde_json's tree refuses the text of one.
    fn into_message(self) -> Option<Result<Message, Invalid>> {
        let tree = |text: Option<&str>| match text {
            None => Some(None),
            Some(text) => serde_json::from_str::<Value>(text).ok().map(Some),
        };
        let members = frame::Envelope {
            jsonrpc: tree(self.jsonrpc)?,
            id: tree(self.id)?,
            method: tree(self.method)?,
            params: tree(self.params)?,
            result: tree(self.result)?,
            error: tree(self.error)?,
        };
        Some(members.classify())
    }
}

/// The message of a line that one pass read as `envelope`: the full parse
/// answers only where a tree refuses the text of a member.
fn message_of(envelope: Envelope<'_>, line: &[u8]) -> Result<Option<Message>, LineFailure> {
    match envelope.into_message() {
        Some(message) => message.map(Some).map_err(LineFailure::Invalid),
        None => Message::parse(line),
    }
}

/// What a line of VS Code is, read once.
#[derive(Debug)]
pub enum ClientLine<'a> {
    /// A clean request of a method that `forward` takes, its params as JSON text.
    Forward(RawRequest<'a>),
    Message(Message),
}

/// Reads one line of VS Code once (`Ok(None)` for a blank line): a clean request
/// of a method that `forward` takes stays JSON text, and any other frame is a
/// message. The errors are those of [`Message::parse`].
pub fn read_client_line(
    line: &[u8],
    forward: impl FnOnce(&str) -> bool,
) -> Result<Option<ClientLine<'_>>, LineFailure> {
    let Ok(text) = std::str::from_utf8(line) else {
        return Err(LineFailure::Parse(ParseFailure::NotJson));
    };
    read_client_text(text, forward)
}

/// [`read_client_line`] of a line that is known to be text.
pub fn read_client_text(
    text: &str,
    forward: impl FnOnce(&str) -> bool,
) -> Result<Option<ClientLine<'_>>, LineFailure> {
    let Some(mut envelope) = envelope(text, "params") else {
        return Message::parse(text.as_bytes()).map(|message| message.map(ClientLine::Message));
    };
    if let Some(request) = envelope.take_request(forward) {
        return Ok(Some(ClientLine::Forward(request)));
    }
    message_of(envelope, text.as_bytes()).map(|message| message.map(ClientLine::Message))
}

/// What a line of the upstream is, read once.
#[derive(Debug)]
pub enum UpstreamLine {
    /// A clean response: an integer id and an object result, read one level deep.
    Result(ResultLine),
    Message(Message),
}

/// Reads one line of the upstream once (`Ok(None)` for a blank line): a clean
/// response is kept as its line with the places of its result's members, and
/// any other frame is a message. The errors are those of [`Message::parse`].
/// Nothing here knows what the session waits for: content alone decides.
pub fn read_upstream_line(line: Vec<u8>) -> Result<Option<UpstreamLine>, (Vec<u8>, LineFailure)> {
    let text = match String::from_utf8(line) {
        Ok(text) => text,
        Err(error) => {
            return Err((
                error.into_bytes(),
                LineFailure::Parse(ParseFailure::NotJson),
            ));
        }
    };
    let read = match envelope(&text, "result") {
        None => Message::parse(text.as_bytes()),
        Some(mut envelope) => match envelope.take_response() {
            Some((id, members)) => {
                let members = members
                    .into_iter()
                    .map(|member| MemberPlace::of(&text, member))
                    .collect();
                return Ok(Some(UpstreamLine::Result(ResultLine {
                    line: SharedLine::new(text),
                    id,
                    members,
                })));
            }
            None => message_of(envelope, text.as_bytes()),
        },
    };
    match read {
        Ok(message) => Ok(message.map(UpstreamLine::Message)),
        Err(failure) => Err((text.into_bytes(), failure)),
    }
}

/// A clean response of the upstream, kept as its line: the session shapes a
/// tools/call result from the members' text without a tree, and builds the tree
/// of any other result from the same text (its members, each parsed once).
#[derive(Debug)]
pub struct ResultLine {
    line: SharedLine,
    id: u64,
    /// The members of the result, in order (a name given twice comes twice).
    members: Vec<MemberPlace>,
}

/// Where one member of the result is in the line.
#[derive(Debug)]
struct MemberPlace {
    key: KeyPlace,
    value: Range<usize>,
}

#[derive(Debug)]
enum KeyPlace {
    /// A key without escapes, as it is in the line.
    InLine(Range<usize>),
    /// A key with its escapes undone.
    Decoded(String),
}

impl MemberPlace {
    fn of(line: &str, member: Member<'_>) -> Self {
        let key = match member.key {
            Cow::Borrowed(key) => KeyPlace::InLine(place_in(line, key)),
            Cow::Owned(key) => KeyPlace::Decoded(key),
        };
        Self {
            key,
            value: place_in(line, member.value),
        }
    }
}

/// The range of `part`, a slice of `line`, in `line`: the scanner returns
/// slices of the line, and the frame keeps ranges so that it can own the line.
/// The ranges are only ever read with `str::get`: a wrong one could not panic.
fn place_in(line: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
    start..start.wrapping_add(part.len())
}

impl ResultLine {
    /// The upstream id that the response answers.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The length of the line in bytes.
    pub fn len(&self) -> usize {
        self.line.len()
    }

    /// Whether the line is empty (never: a response has members).
    pub fn is_empty(&self) -> bool {
        self.line.is_empty()
    }

    /// The result, its members borrowed from the line.
    pub fn result(&self) -> ShallowObject<'_> {
        // Every place was taken from this line, so every `get` finds its text.
        let members = self
            .members
            .iter()
            .filter_map(|member| {
                let key = match &member.key {
                    KeyPlace::InLine(place) => Cow::Borrowed(self.line.get(place.clone())?),
                    KeyPlace::Decoded(key) => Cow::Borrowed(key.as_str()),
                };
                Some((key, Text::Borrowed(self.line.get(member.value.clone())?)))
            })
            .collect();
        ShallowObject::of_pairs(members)
    }

    /// The line, for the members of a result that outlives this frame.
    pub fn shared_line(&self) -> &SharedLine {
        &self.line
    }

    /// Whether the result is complete: its `resultType` is `"complete"`, or it
    /// has none (a server of an older revision). Read from the text, no tree.
    pub fn is_complete(&self) -> bool {
        let result_type = self.members.iter().rev().find(|member| match &member.key {
            KeyPlace::InLine(place) => self.line.get(place.clone()) == Some("resultType"),
            KeyPlace::Decoded(key) => key == "resultType",
        });
        match result_type {
            None => true,
            Some(member) => matches!(
                self.line.get(member.value.clone()),
                Some("\"complete\"" | "null")
            ),
        }
    }

    /// The response as a message, its result a tree built from the members'
    /// text. A line whose text a tree refuses goes to [`Message::parse`], and
    /// comes back with the bytes for the error.
    pub fn into_message(self) -> Result<Message, (Vec<u8>, LineFailure)> {
        match self.result().to_map() {
            Ok(result) => Ok(Message::Response(Response {
                id: Value::from(self.id),
                outcome: Outcome::Result(Value::Object(result)),
            })),
            Err(_) => match Message::parse(self.line.as_bytes()) {
                Ok(Some(message)) => Ok(message),
                // A response is never blank: the parse refused it.
                Ok(None) => Err((
                    bytes_of(self.line),
                    LineFailure::Parse(ParseFailure::NotJson),
                )),
                Err(failure) => Err((bytes_of(self.line), failure)),
            },
        }
    }
}

/// The bytes of a line, without a copy when nothing else shares it.
fn bytes_of(line: SharedLine) -> Vec<u8> {
    SharedLine::try_unwrap(line)
        .map(String::into_bytes)
        .unwrap_or_else(|line| line.as_bytes().to_vec())
}

/// Why a line of the upstream cannot be read, in the words of the bridge's
/// warning line, and the id it names when one can be recovered.
#[derive(Debug, PartialEq)]
pub struct Unreadable {
    /// `a frame of 9 bytes`, `a frame`.
    pub frame: String,
    /// `it is not valid JSON`.
    pub reason: String,
    pub id: Option<Value>,
}

impl Unreadable {
    /// A whole line that is not a frame.
    pub fn of_line(line: &[u8], failure: LineFailure) -> Self {
        match failure {
            LineFailure::Invalid(invalid) => Self {
                frame: "a frame".into(),
                reason: "it is not a valid JSON-RPC message".into(),
                id: invalid.id.or_else(|| id::recover_id_of_line(line)),
            },
            LineFailure::Parse(failure) => Self {
                frame: format!("a frame of {} bytes", line.len()),
                reason: match failure {
                    ParseFailure::NotJson => "it is not valid JSON".into(),
                    ParseFailure::TooDeep => {
                        format!("it has more than {MAX_DEPTH} levels of nesting")
                    }
                },
                id: id::recover_id_of_line(line),
            },
        }
    }

    /// A line over the limit, from its kept ends.
    pub fn too_long(length: usize, head: &[u8], tail: &[u8]) -> Self {
        Self {
            frame: format!("a frame of {length} bytes"),
            reason: "it is longer than --max-line-bytes".into(),
            id: id::recover_id(head, tail),
        }
    }
}

/// `text` as a clean response: `jsonrpc` `"2.0"`, an integer `id`, an object
/// `result`, and no other member of JSON-RPC. `None` for any other frame.
pub fn clean_response(text: &str) -> Option<RawResponse<'_>> {
    let (id, result) = envelope(text, "result")?.take_response()?;
    Some(RawResponse {
        id,
        result: ShallowObject::of_members(result),
    })
}

/// `text` as a clean request: `jsonrpc` `"2.0"`, a string or number `id`, a string
/// `method`, an object `params` or none, and no other member of JSON-RPC. `None`
/// for any other frame.
pub fn clean_request(text: &str) -> Option<RawRequest<'_>> {
    envelope(text, "params")?.take_request(|_| true)
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":<result>}` and its newline.
pub fn encode_result_line<'f>(id: &Value, result: &'f ShallowObject<'_>, out: &mut impl Sink<'f>) {
    out.bytes(br#"{"jsonrpc":"2.0","id":"#);
    // An id always serializes into a buffer.
    let _ = serde_json::to_writer(&mut *out, id);
    out.bytes(br#","result":"#);
    result.write_into(out);
    out.bytes(b"}\n");
}

/// The tree of a request's id, checked JSON text. The ids that clients write, a
/// small integer or a plain string, are read without building serde_json's
/// parser for a few bytes; any other text goes to it.
fn id_of(json: &str) -> Option<Value> {
    let bytes = json.as_bytes();
    let plain_integer = matches!(bytes, [b'0'] | [b'1'..=b'9', ..])
        && bytes.len() < 20
        && bytes.iter().all(u8::is_ascii_digit);
    if plain_integer {
        return json.parse::<u64>().ok().map(Value::from);
    }
    match string_of(json) {
        Some(text) => Some(Value::String(text.into_owned())),
        None => serde_json::from_str(json).ok(),
    }
}

/// The text of a JSON string; `None` for another kind of value.
fn string_of(json: &str) -> Option<Cow<'_, str>> {
    let inner = json.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str(json).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::{Message, Outcome};
    use serde_json::json;

    #[test]
    fn an_id_reads_as_serde_json_reads_it() {
        for id in [
            "0",
            "7",
            "1234567890123456789",
            "12345678901234567890",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "1.5",
            "1e3",
            "\"a\"",
            "\"\"",
            "\"a\\\"b\\u00e9\"",
            "\"\\ud800\"",
            "null",
            "true",
            "[1]",
            "{}",
        ] {
            assert_eq!(
                id_of(id),
                serde_json::from_str::<Value>(id).ok(),
                "the id {id}"
            );
        }
    }

    /// Lines of every kind: clean and not, valid and not, and text that only
    /// serde_json's tree refuses (which the full parse must answer).
    fn lines() -> Vec<String> {
        let mut lines: Vec<String> = [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"a\u0062":1,"a":2,"ab":3}}"#,
            r#"{"id":7,"result":{"x":1},"jsonrpc":"2.0","extra":[1e400]}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"n":1e400}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"s":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":"7","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":[1]}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1e400}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{},"error":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\udc00"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":null}"#,
            r#"{"method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","result":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":"\ud800"}"#,
            r#"{"\ud800":1,"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0"} x"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\u{7}\"}",
            "[1,2]",
            "7",
            "",
            " \t",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        for levels in [125, 126, 127, 128] {
            let nested = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
            lines.push(format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":{nested}}}}}"#
            ));
            lines.push(format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"a":{nested}}}}}"#
            ));
        }
        lines
    }

    #[test]
    fn a_line_of_the_upstream_read_once_is_what_the_full_parse_reads() {
        for line in lines() {
            let full = Message::parse(line.as_bytes());
            let once = match read_upstream_line(line.clone().into_bytes()) {
                Ok(Some(UpstreamLine::Result(result))) => {
                    result.into_message().map(Some).map_err(|(bytes, failure)| {
                        assert_eq!(bytes, line.as_bytes());
                        failure
                    })
                }
                Ok(Some(UpstreamLine::Message(message))) => Ok(Some(message)),
                Ok(None) => Ok(None),
                Err((bytes, failure)) => {
                    assert_eq!(bytes, line.as_bytes());
                    Err(failure)
                }
            };
            assert_eq!(once, full, "{line}");
        }
    }

    #[test]
    fn a_line_of_vs_code_read_once_is_what_the_full_parse_reads() {
        for line in lines() {
            let full = Message::parse(line.as_bytes());
            let once = read_client_line(line.as_bytes(), |_| false).map(|read| {
                read.map(|read| match read {
                    ClientLine::Message(message) => message,
                    ClientLine::Forward(request) => panic!("{request:?}"),
                })
            });
            assert_eq!(once, full, "{line}");
            if let Ok(Some(ClientLine::Forward(request))) =
                read_client_line(line.as_bytes(), |method| method == "tools/call")
            {
                let Ok(Some(Message::Request(full))) = full else {
                    panic!("{line}");
                };
                assert_eq!(
                    (request.id, request.method.as_ref()),
                    (full.id, "tools/call")
                );
                assert_eq!(
                    request.params.map(|params| params.to_map().unwrap()),
                    full.params
                );
            }
        }
    }

    #[test]
    fn a_result_line_keeps_its_members_text_and_folds_a_name_given_twice() {
        let line = r#" {"jsonrpc":"2.0","id":3,"result":{"a\u0062":1, "a" : [ 2 ],"ab":"x","resultType":"complete"}} "#;
        let Ok(Some(UpstreamLine::Result(result))) = read_upstream_line(line.into()) else {
            panic!("not a clean response");
        };
        assert_eq!((result.id(), result.len()), (3, line.len()));
        assert!(result.is_complete());
        let object = result.result();
        assert_eq!(
            object.iter().collect::<Vec<_>>(),
            vec![
                ("ab", "\"x\""),
                ("a", "[ 2 ]"),
                ("resultType", "\"complete\"")
            ]
        );
        for (kind, complete) in [("\"input_required\"", false), ("null", true), ("1", false)] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"resultType":{kind}}}}}"#);
            let Ok(Some(UpstreamLine::Result(result))) = read_upstream_line(line.into()) else {
                panic!("not a clean response");
            };
            assert_eq!(result.is_complete(), complete, "{kind}");
        }
    }

    #[test]
    fn a_line_that_is_not_text_is_not_json() {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\"\xff\"}}".to_vec();
        let failure = LineFailure::Parse(ParseFailure::NotJson);
        assert_eq!(
            read_upstream_line(line.clone()).err(),
            Some((line.clone(), failure))
        );
        assert_eq!(
            read_client_line(&line, |_| true).err(),
            Some(LineFailure::Parse(ParseFailure::NotJson))
        );
    }

    #[test]
    fn only_clean_responses_are_read_raw() {
        let clean = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        let response = clean_response(clean).unwrap();
        assert_eq!(response.id, 7);
        assert_eq!(response.result.to_json(), r#"{"content":[]}"#);
        for other in [
            r#"{"jsonrpc":"2.0","id":7,"result":{},"error":null}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":"7","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"x","result":{}}"#,
            r#"{"jsonrpc":"1.0","id":7,"result":{}}"#,
            r#"{"id":7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{},"id":8}"#,
            r#"{"jsonrpc":"2.0","id":7}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"#,
            r#"{"jsonrpc":"2.0","id":7,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":[]}"#,
            r#"{"jsonrpc":"2.0","id":7.0,"result":{}}"#,
        ] {
            assert!(clean_response(other).is_none(), "{other}");
        }
    }

    #[test]
    fn only_clean_requests_are_read_raw() {
        let clean = r#"{"jsonrpc":"2.0","id":"r-1","method":"tools\/call","params":{"name":"echo","_meta":{"progressToken":1}},"x":[]}"#;
        let request = clean_request(clean).unwrap();
        assert_eq!(request.id, json!("r-1"));
        assert_eq!(request.method, "tools/call");
        let params = request.params.unwrap();
        assert_eq!(params.get("name"), Some("\"echo\""));
        assert_eq!(params.get("_meta"), Some(r#"{"progressToken":1}"#));
        let bare = clean_request(r#"{"method":"ping","id":0,"jsonrpc":"2.0"}"#).unwrap();
        assert_eq!((bare.id, bare.params), (json!(0), None));
        for other in [
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","method":"y"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x""#,
            r#"{"id":1,"method":"x"}"#,
        ] {
            assert!(clean_request(other).is_none(), "{other}");
        }
    }

    #[test]
    fn clean_requests_read_as_the_full_parse_reads_them() {
        let line = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"a":1,"b":{"c":[true,null,"\u00e9"]},"a":2}}"#;
        let raw = clean_request(line).unwrap();
        let Ok(Some(Message::Request(full))) = Message::parse(line.as_bytes()) else {
            panic!("not a request");
        };
        assert_eq!(raw.id, full.id);
        assert_eq!(raw.method, full.method);
        assert_eq!(raw.params.unwrap().to_map().unwrap(), full.params.unwrap());
    }

    #[test]
    fn the_raw_paths_take_exactly_the_depths_that_the_full_parse_takes() {
        for levels in 120..=130 {
            let inner = format!("{}{}", "[".repeat(levels - 1), "]".repeat(levels - 1));
            let object = format!(r#"{{"a":{inner}}}"#);
            let response = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{object}}}"#);
            let full = matches!(
                Message::parse(response.as_bytes()),
                Ok(Some(Message::Response(response))) if matches!(response.outcome, Outcome::Result(_))
            );
            assert_eq!(clean_response(&response).is_some(), full, "{levels} levels");
            let request = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{object}}}"#);
            let full = matches!(
                Message::parse(request.as_bytes()),
                Ok(Some(Message::Request(_)))
            );
            assert_eq!(clean_request(&request).is_some(), full, "{levels} levels");
        }
    }

    #[test]
    fn a_result_line_is_one_json_rpc_frame() {
        let result =
            ShallowObject::parse(r#"{"content":[{"type":"text","text":"a\nb"}]}"#).unwrap();
        let mut out = Vec::new();
        encode_result_line(&json!("x-1"), &result, &mut out);
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        let frame: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            frame,
            json!({"jsonrpc":"2.0","id":"x-1","result":{"content":[{"type":"text","text":"a\nb"}]}})
        );
    }
}
