//! The two hot paths of the bridge, read one level deep: the requests of VS Code
//! that go upstream, and the tools/call results that come back. Members stay JSON
//! text (see [`ShallowObject`]).
//!
//! Only a clean frame takes these paths; anything else is parsed whole, so that
//! every error stays that of [`super::frame::Message::parse`].

use super::codec::MAX_DEPTH;
use super::frame::is_valid_id;
use super::shallow::ShallowObject;
use serde_json::Value;
use std::borrow::Cow;

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
    id: Option<&'a str>,
    method: Option<&'a str>,
    params: Option<&'a str>,
    result: Option<&'a str>,
    error: Option<&'a str>,
    inner: Option<ShallowObject<'a>>,
}

/// `text` as a JSON-RPC frame of version 2.0, read one level deep in one pass, and
/// its member `inner` too when that is an object. `None` for anything else: not
/// JSON, nested deeper than the full parse allows, a member of JSON-RPC twice
/// (which the full parse refuses), another version.
fn envelope<'a>(text: &'a str, inner: &str) -> Option<Envelope<'a>> {
    let (members, inner) = json_shallow::object_members_with_inner(text, MAX_DEPTH, inner)?;
    let mut envelope = Envelope {
        inner: inner.map(ShallowObject::of_members),
        ..Envelope::default()
    };
    let mut jsonrpc = None;
    for member in members {
        let slot = match member.key.as_ref() {
            "jsonrpc" => &mut jsonrpc,
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
    (jsonrpc? == "\"2.0\"").then_some(envelope)
}

/// `text` as a clean response: `jsonrpc` `"2.0"`, an integer `id`, an object
/// `result`, and no other member of JSON-RPC. `None` for any other frame.
pub fn clean_response(text: &str) -> Option<RawResponse<'_>> {
    let envelope = envelope(text, "result")?;
    if envelope.method.is_some() || envelope.params.is_some() || envelope.error.is_some() {
        return None;
    }
    let id = envelope.id?.parse().ok()?;
    // No inner members: the result is not an object.
    let result = envelope.inner?;
    Some(RawResponse { id, result })
}

/// `text` as a clean request: `jsonrpc` `"2.0"`, a string or number `id`, a string
/// `method`, an object `params` or none, and no other member of JSON-RPC. `None`
/// for any other frame.
pub fn clean_request(text: &str) -> Option<RawRequest<'_>> {
    let envelope = envelope(text, "params")?;
    if envelope.result.is_some() || envelope.error.is_some() {
        return None;
    }
    let id: Value = serde_json::from_str(envelope.id?).ok()?;
    let method = string_of(envelope.method?)?;
    let params = match envelope.params {
        None => None,
        // No inner members: the params are not an object.
        Some(_) => Some(envelope.inner?),
    };
    is_valid_id(&id).then_some(RawRequest { id, method, params })
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":<result>}` and its newline.
pub fn encode_result_line(id: &Value, result: &ShallowObject<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // An id always serializes into a Vec.
    let _ = serde_json::to_writer(&mut *out, id);
    out.extend_from_slice(br#","result":"#);
    result.write_into(out);
    out.extend_from_slice(b"}\n");
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
