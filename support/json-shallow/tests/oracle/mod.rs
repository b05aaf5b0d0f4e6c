//! serde_json's answer to the questions that json-shallow answers: the reference
//! of every test. (Shared by the unit tests in `src/tests.rs` and the
//! property tests.)

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

/// The members of a JSON object in order, duplicates kept (serde_json's `Map`
/// would keep one of each key): what `object_members` must return.
struct InOrder<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for InOrder<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;

        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = InOrder<'de>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(InOrder(members))
            }
        }

        deserializer.deserialize_map(MembersVisitor)
    }
}

/// What `object_members(text, usize::MAX)` must return according to serde_json:
/// `Some` when `text` is a `&RawValue`, starts with `{` after whitespace, and its
/// keys decode into `String`s; then the keys and the values' text, in order.
pub fn serde_members(text: &str) -> Option<Vec<(String, String)>> {
    let is_raw_value = serde_json::from_str::<&RawValue>(text).is_ok();
    let is_object = text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{');
    let members = serde_json::from_str::<InOrder<'_>>(text).ok();
    // The visitor reads through other code paths of serde_json than RawValue's
    // `ignore_value`: they must not accept more than the raw value does.
    assert!(
        members.is_none() || (is_raw_value && is_object),
        "serde_json reads members from a text it refuses as a raw value: {text:?}"
    );
    let members = members?;
    Some(
        members
            .0
            .into_iter()
            .map(|(key, value)| (key, value.get().to_owned()))
            .collect(),
    )
}

/// What `array_items(text, usize::MAX)` must return according to serde_json:
/// `Some` when `text` is a `&RawValue` that starts with `[` after whitespace;
/// then the text of each item, in order.
pub fn serde_items(text: &str) -> Option<Vec<String>> {
    let is_raw_value = serde_json::from_str::<&RawValue>(text).is_ok();
    let is_array = text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('[');
    let items = serde_json::from_str::<Vec<&RawValue>>(text).ok();
    assert!(
        items.is_none() || (is_raw_value && is_array),
        "serde_json reads items from a text it refuses as a raw value: {text:?}"
    );
    if !(is_raw_value && is_array) {
        return None;
    }
    // A raw value whose items a `Vec` cannot hold has none here either.
    Some(items?.iter().map(|item| item.get().to_owned()).collect())
}

/// The levels of nesting of a value: 0 for a scalar, 1 for `[]` or `{}`.
pub fn value_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(value_depth).max().unwrap_or(0),
        _ => 0,
    }
}
