//! A JSON object read one level deep: the members of `params` and `result` that the
//! bridge passes through. Their values stay JSON text, borrowed from the line, and
//! are written out again as they came; a tree of `Value`s for a frame that only
//! gains or loses a few top-level members costs most of a call's time in the bridge.

use super::pieces::Sink;
use super::text::{SharedLine, Text};
use foldhash::HashMapExt;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// A JSON object whose member values stay JSON text. Members keep their order; a
/// member given twice keeps its first place and its last value, as a parsed map does.
///
/// Every value is valid JSON: it was read by the scanner of `json_shallow`, or
/// written by serde_json.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShallowObject<'a> {
    members: Vec<(Cow<'a, str>, Text<'a>)>,
}

/// From this many members on, a member given twice is found with a map: a
/// hostile peer could otherwise make the reading quadratic.
const MEMBERS_SEARCHED_IN_ORDER: usize = 16;

impl<'a> ShallowObject<'a> {
    /// `json` as an object; `None` when it is not valid JSON or another kind of value.
    /// The depth is not limited here: the line that holds `json` was checked.
    pub fn parse(json: &'a str) -> Option<Self> {
        json_shallow::object_members(json, usize::MAX).map(Self::of_members)
    }

    /// Whole JSON lines are read by the scanner with their depth limit; this takes
    /// the members it found.
    pub(super) fn of_members(members: Vec<json_shallow::Member<'a>>) -> Self {
        let members: Vec<_> = members
            .into_iter()
            .map(|member| (member.key, Text::Borrowed(member.value)))
            .collect();
        Self {
            members: without_repeats(members),
        }
    }

    /// The object of members that are JSON text already (a name given twice is
    /// folded as [`Self::of_members`] folds it).
    pub(super) fn of_pairs(members: Vec<(Cow<'a, str>, Text<'a>)>) -> Self {
        Self {
            members: without_repeats(members),
        }
    }

    /// The object of a parsed map.
    pub fn from_map(map: &Map<String, Value>) -> ShallowObject<'static> {
        ShallowObject {
            members: map
                .iter()
                .map(|(name, value)| (Cow::Owned(name.clone()), Text::Owned(value.to_string())))
                .collect(),
        }
    }

    /// The object as a parsed map. Fails only where serde_json refuses what the
    /// scanner takes as JSON text: a number out of range, a lone surrogate.
    pub fn to_map(&self) -> serde_json::Result<Map<String, Value>> {
        self.members
            .iter()
            .map(|(name, value)| Ok((name.to_string(), serde_json::from_str(value)?)))
            .collect()
    }

    /// The object with an owner of its own: the values that are part of `line`
    /// become ranges of it, without a copy (a large argument or result stays where
    /// it was read); the names and any other value are copied, but for the names
    /// of MCP's params and results, which are constants.
    pub fn into_shared(self, line: &SharedLine) -> ShallowObject<'static> {
        ShallowObject {
            members: self
                .members
                .into_iter()
                .map(|(name, value)| (static_name(name), value.into_shared(line)))
                .collect(),
        }
    }

    /// The JSON text of member `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.members
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| &**value)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The members in order: names, and values as JSON text.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.members
            .iter()
            .map(|(name, value)| (name.as_ref(), &**value))
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.members.retain(|(key, _)| keep(key));
    }

    /// Takes member `name` out, with its JSON text.
    pub fn remove(&mut self, name: &str) -> Option<Text<'a>> {
        let index = self.members.iter().position(|(key, _)| key == name)?;
        Some(self.members.remove(index).1)
    }

    /// Sets `name` to `value`: in its place when it is there, else at the end.
    pub fn insert_value(&mut self, name: impl Into<Cow<'a, str>>, value: &Value) {
        self.set(name.into(), Text::Owned(value.to_string()));
    }

    /// Sets `name` to a value that is already JSON text: the text of a member of
    /// another `ShallowObject`, or a constant that is JSON.
    pub fn insert_json(&mut self, name: impl Into<Cow<'a, str>>, json: impl Into<Text<'a>>) {
        self.set(name.into(), json.into());
    }

    fn set(&mut self, name: Cow<'a, str>, value: Text<'a>) {
        match self.members.iter_mut().find(|(key, _)| *key == name) {
            Some((_, old)) => *old = value,
            None => self.members.push((name, value)),
        }
    }

    /// The object as JSON text.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        self.write_into(&mut out);
        // Names are written as JSON strings and values are JSON text: all UTF-8.
        String::from_utf8(out).unwrap_or_default()
    }

    /// Appends the object as JSON text.
    pub fn write_into<'f>(&'f self, out: &mut impl Sink<'f>) {
        out.bytes(b"{");
        self.write_members_into(out, |_| true);
        out.bytes(b"}");
    }

    /// Appends the members that `keep` keeps, separated by commas and without
    /// braces; whether any was written.
    pub fn write_members_into<'f>(
        &'f self,
        out: &mut impl Sink<'f>,
        mut keep: impl FnMut(&str) -> bool,
    ) -> bool {
        let mut written = false;
        for (name, value) in self.members.iter().filter(|(name, _)| keep(name)) {
            if written {
                out.bytes(b",");
            }
            written = true;
            write_json_string(name, out);
            out.bytes(b":");
            out.text(value.as_bytes());
        }
        written
    }
}

/// The member names of the params and results that a call passes through (those
/// of tools/call first): an object made to outlive its line keeps these as
/// constants, not as copies, a few allocations less per call.
const MEMBER_NAMES: [&str; 12] = [
    "content",
    "isError",
    "structuredContent",
    "_meta",
    "name",
    "arguments",
    "resultType",
    "uri",
    "contents",
    "cursor",
    "messages",
    "description",
];

/// `name` with an owner of its own: a constant when it is one of [`MEMBER_NAMES`].
fn static_name(name: Cow<'_, str>) -> Cow<'static, str> {
    match MEMBER_NAMES.iter().find(|known| **known == name) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(name.into_owned()),
    }
}

/// The members with a name given twice folded into its first place, with the
/// last value: what a parsed map keeps.
fn without_repeats<'a>(
    mut members: Vec<(Cow<'a, str>, Text<'a>)>,
) -> Vec<(Cow<'a, str>, Text<'a>)> {
    if members.len() <= MEMBERS_SEARCHED_IN_ORDER {
        let repeated = members.iter().enumerate().any(|(index, (name, _))| {
            members
                .iter()
                .skip(index + 1)
                .any(|(other, _)| other == name)
        });
        if !repeated {
            return members;
        }
    }
    let mut places = foldhash::HashMap::<Cow<'a, str>, usize>::with_capacity(members.len());
    let mut kept: Vec<(Cow<'a, str>, Text<'a>)> = Vec::with_capacity(members.len());
    for (name, value) in members.drain(..) {
        match places.get(&name) {
            Some(&place) => {
                if let Some((_, old)) = kept.get_mut(place) {
                    *old = value;
                }
            }
            None => {
                places.insert(name.clone(), kept.len());
                kept.push((name, value));
            }
        }
    }
    kept
}

/// Appends `text` as a JSON string: as it is when nothing in it needs an escape,
/// which is every name of MCP, else as serde_json escapes it.
pub fn write_json_string<W: std::io::Write + ?Sized>(text: &str, out: &mut W) {
    if text
        .bytes()
        .all(|byte| byte >= 0x20 && byte != b'"' && byte != b'\\')
    {
        // Writing into a buffer cannot fail.
        let _ = out.write_all(b"\"");
        let _ = out.write_all(text.as_bytes());
        let _ = out.write_all(b"\"");
    } else {
        // A string always serializes into a Vec.
        let _ = serde_json::to_writer(&mut *out, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(json: &str) -> String {
        ShallowObject::parse(json).unwrap().to_json()
    }

    #[test]
    fn members_keep_their_text_and_order() {
        let text = r#"{"z":1,"a":{"b":[1,2.50,"x\u0041"]},"k\"ey":null}"#;
        assert_eq!(round_trip(text), text);
    }

    #[test]
    fn a_member_twice_keeps_its_first_place_and_its_last_value_as_a_parsed_map_does() {
        let few = r#"{"a":1,"b":2,"a":3}"#;
        let many = format!(
            "{{{},\"m0\":\"again\"}}",
            (0..40)
                .map(|n| format!("\"m{n}\":{n}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        for text in [few, many.as_str()] {
            let tree: Value = serde_json::from_str(text).unwrap();
            assert_eq!(round_trip(text), serde_json::to_string(&tree).unwrap());
        }
    }

    /// A result of 100,000 members: the reading stays linear (each member was
    /// once looked up among all the earlier ones, some 5·10⁹ comparisons here).
    #[test]
    fn a_large_object_is_read_in_one_pass() {
        let members: Vec<String> = (0..100_000).map(|n| format!("\"m{n}\":{n}")).collect();
        let text = format!("{{{},\"m7\":\"last\"}}", members.join(","));
        let object = ShallowObject::parse(&text).unwrap();
        assert_eq!(object.iter().count(), 100_000);
        assert_eq!(object.get("m7"), Some("\"last\""));
        assert_eq!(object.get("m99999"), Some("99999"));
    }

    #[test]
    fn names_with_escapes_are_compared_decoded_and_written_escaped() {
        let object = ShallowObject::parse(r#"{"\u005fmeta":{},"a\nb":1}"#).unwrap();
        assert!(object.contains_key("_meta"));
        assert_eq!(object.to_json(), r#"{"_meta":{},"a\nb":1}"#);
    }

    #[test]
    fn maps_go_both_ways() {
        let map = json!({"name": "echo", "arguments": {"text": "a\"b"}, "n": 1.5})
            .as_object()
            .unwrap()
            .clone();
        let object = ShallowObject::from_map(&map);
        assert_eq!(object.to_map().unwrap(), map);
        assert_eq!(object.get("name"), Some("\"echo\""));
    }

    #[test]
    fn members_are_set_removed_and_filtered_in_place() {
        let mut object = ShallowObject::parse(r#"{"a":1,"b":2,"c":3}"#).unwrap();
        assert_eq!(object.remove("b").as_deref(), Some("2"));
        object.insert_value("a", &json!("one"));
        object.insert_json("d", Cow::Borrowed("[]"));
        let mut out = Vec::new();
        assert!(object.write_members_into(&mut out, |name| name != "c"));
        assert_eq!(String::from_utf8(out).unwrap(), r#""a":"one","d":[]"#);
    }

    #[test]
    fn only_objects_are_read() {
        for other in ["[]", "1", "\"x\"", "{", "{\"a\":}", ""] {
            assert!(ShallowObject::parse(other).is_none(), "{other}");
        }
    }
}
