//! Responses read one level deep, for the hot path of results that the bridge
//! passes through: their members stay JSON text, borrowed from the line, and are
//! written out again as they came. A tree of `Value`s for a result that only loses
//! a few top-level members costs most of a call's time in the bridge.
//!
//! Only a clean frame takes this path; anything else is parsed whole, so that
//! every error stays that of [`super::frame::Message::parse`].

use super::frame::present;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A response of the upstream with an integer id and an object result, nothing else.
#[derive(Debug)]
pub struct RawResponse<'a> {
    pub id: u64,
    pub result: ShallowObject<'a>,
}

/// `text` as a clean response: `jsonrpc` `"2.0"`, an integer `id`, an object
/// `result`, and no other member of JSON-RPC. `None` for any other frame (a
/// request, an error, a member twice, a frame nested deeper than the full parse
/// allows, ...). One pass: the result is read one level deep as it comes.
pub fn clean_response(text: &str) -> Option<RawResponse<'_>> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow, default, deserialize_with = "present")]
        jsonrpc: Option<&'a RawValue>,
        #[serde(borrow, default, deserialize_with = "present")]
        id: Option<&'a RawValue>,
        #[serde(borrow, default, deserialize_with = "present")]
        method: Option<&'a RawValue>,
        #[serde(borrow, default, deserialize_with = "present")]
        params: Option<&'a RawValue>,
        #[serde(borrow, default)]
        result: Option<ShallowObject<'a>>,
        #[serde(borrow, default, deserialize_with = "present")]
        error: Option<&'a RawValue>,
    }
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    let clean = envelope.jsonrpc?.get() == "\"2.0\""
        && envelope.method.is_none()
        && envelope.params.is_none()
        && envelope.error.is_none();
    let result = envelope.result?;
    // Skipped JSON is not depth-checked; the full parse refuses more than this.
    if !clean || result.nesting() > RESULT_DEPTH_LIMIT {
        return None;
    }
    let id = serde_json::from_str(envelope.id?.get()).ok()?;
    Some(RawResponse { id, result })
}

/// The deepest `result` that a full parse of a response accepts: the envelope
/// takes one level of serde_json's limit.
const RESULT_DEPTH_LIMIT: usize = super::codec::MAX_DEPTH - 1;

/// The levels of nesting of valid JSON text: 0 for a scalar, 1 for `[]` or `{}`.
fn nesting(json: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for byte in json.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A JSON object whose member values stay JSON text. Members keep their order; a
/// member given twice keeps its first place and its last value, as a parsed map does.
#[derive(Debug, Default)]
pub struct ShallowObject<'a> {
    members: Vec<(Cow<'a, str>, Cow<'a, RawValue>)>,
}

impl<'a> ShallowObject<'a> {
    /// `json` as an object; `None` when it is another kind of value.
    pub fn parse(json: &'a RawValue) -> Option<Self> {
        serde_json::from_str(json.get()).ok()
    }

    /// The levels of nesting of the object: 1 and the deepest member.
    fn nesting(&self) -> usize {
        1 + self
            .members
            .iter()
            .map(|(_, value)| nesting(value.get()))
            .max()
            .unwrap_or(0)
    }

    pub fn get(&self, name: &str) -> Option<&RawValue> {
        self.members
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_ref())
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.members.retain(|(key, _)| keep(key));
    }

    /// Sets `name`: in its place when it is there, else at the end.
    pub fn insert(&mut self, name: &'a str, value: Cow<'a, RawValue>) {
        self.set(Cow::Borrowed(name), value);
    }

    fn set(&mut self, name: Cow<'a, str>, value: Cow<'a, RawValue>) {
        match self.members.iter_mut().find(|(key, _)| *key == name) {
            Some((_, old)) => *old = value,
            None => self.members.push((name, value)),
        }
    }

    /// The object as JSON text (`None` cannot happen: the members are JSON, and
    /// serde_json escapes the names).
    pub fn to_raw(&self) -> Option<Box<RawValue>> {
        let mut out = Vec::new();
        self.write_into(&mut out);
        RawValue::from_string(String::from_utf8(out).ok()?).ok()
    }

    /// Appends the object as JSON text.
    pub fn write_into(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (index, (key, value)) in self.members.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            // A string always serializes into a Vec.
            let _ = serde_json::to_writer(&mut *out, key.as_ref());
            out.push(b':');
            out.extend_from_slice(value.get().as_bytes());
        }
        out.push(b'}');
    }
}

/// Appends `{"jsonrpc":"2.0","id":<id>,"result":<result>}` and its newline.
pub fn encode_result_line(id: &serde_json::Value, result: &ShallowObject<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // An id always serializes into a Vec.
    let _ = id.serialize(&mut serde_json::Serializer::new(&mut *out));
    out.extend_from_slice(br#","result":"#);
    result.write_into(out);
    out.extend_from_slice(b"}\n");
}

impl<'de: 'a, 'a> Deserialize<'de> for ShallowObject<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ShallowVisitor(std::marker::PhantomData))
    }
}

struct ShallowVisitor<'a>(std::marker::PhantomData<ShallowObject<'a>>);

impl<'de: 'a, 'a> Visitor<'de> for ShallowVisitor<'a> {
    type Value = ShallowObject<'a>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = ShallowObject::default();
        while let Some(Key(key)) = map.next_key()? {
            let value: &'de RawValue = map.next_value()?;
            object.set(key, Cow::Borrowed(value));
        }
        Ok(object)
    }
}

/// A member name, borrowed from the line unless it has escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, name: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(name)))
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(name.to_owned())))
            }
            fn visit_string<E: de::Error>(self, name: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(name)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::frame::{Message, Outcome};
    use serde_json::{Value, json};

    fn round_trip(json: &str) -> String {
        let raw: &RawValue = serde_json::from_str(json).unwrap();
        let object = ShallowObject::parse(raw).unwrap();
        object.to_raw().unwrap().get().to_owned()
    }

    #[test]
    fn members_keep_their_text_and_order() {
        let text = r#"{"z":1,"a":{"b":[1,2.50,"x\u0041"]},"k\"ey":null}"#;
        assert_eq!(round_trip(text), text);
    }

    #[test]
    fn a_member_twice_keeps_its_first_place_and_its_last_value_as_a_parsed_map_does() {
        let text = r#"{"a":1,"b":2,"a":3}"#;
        let tree: Value = serde_json::from_str(text).unwrap();
        assert_eq!(round_trip(text), serde_json::to_string(&tree).unwrap());
    }

    #[test]
    fn only_clean_responses_are_read_raw() {
        let clean = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        let response = clean_response(clean).unwrap();
        assert_eq!(response.id, 7);
        assert_eq!(response.result.to_raw().unwrap().get(), r#"{"content":[]}"#);
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
        ] {
            assert!(clean_response(other).is_none(), "{other}");
        }
    }

    #[test]
    fn the_raw_path_takes_exactly_the_depths_that_the_full_parse_takes() {
        for levels in 120..=130 {
            let inner = format!("{}{}", "[".repeat(levels - 1), "]".repeat(levels - 1));
            let result = format!(r#"{{"a":{inner}}}"#);
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
            let full = matches!(
                Message::parse(line.as_bytes()),
                Ok(Some(Message::Response(response))) if matches!(response.outcome, Outcome::Result(_))
            );
            assert_eq!(clean_response(&line).is_some(), full, "{levels} levels");
        }
    }

    #[test]
    fn nesting_ignores_brackets_in_strings() {
        assert_eq!(nesting(r#"{"a":"[[[{{","b":["\"]"]}"#), 2);
        assert_eq!(nesting("5"), 0);
    }

    #[test]
    fn a_result_line_is_one_json_rpc_frame() {
        let raw: &RawValue =
            serde_json::from_str(r#"{"content":[{"type":"text","text":"a\nb"}]}"#).unwrap();
        let mut out = Vec::new();
        encode_result_line(&json!("x-1"), &ShallowObject::parse(raw).unwrap(), &mut out);
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        let frame: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            frame,
            json!({"jsonrpc":"2.0","id":"x-1","result":{"content":[{"type":"text","text":"a\nb"}]}})
        );
    }
}
