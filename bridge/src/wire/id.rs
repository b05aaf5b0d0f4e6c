//! JSON-RPC ids: which values are ids, ids as hashable keys, and the recovery of
//! the id of a line that is not a frame.

use super::line_reader::KEPT_BYTES;
use serde_json::Value;
use std::fmt;

/// MCP ids are strings or numbers, never null.
pub fn is_valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_))
}

/// A JSON-RPC id that can key a map. The number `1` and the string `"1"` are
/// different ids, so the key keeps the kind beside the text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IdKey {
    /// A number id (`7`, `-2`, `1.5`).
    Number(serde_json::Number),
    /// A string id, without quotes.
    String(String),
}

impl IdKey {
    /// The key of a request id, or `None` when the value is not a string or a number
    /// (MCP ids are never null, objects or arrays).
    pub fn of(id: &Value) -> Option<Self> {
        match id {
            Value::Number(number) => Some(Self::Number(number.clone())),
            Value::String(text) => Some(Self::String(text.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value again (the tests' check that a key keeps its id).
    #[cfg(test)]
    pub fn to_value(&self) -> Value {
        match self {
            Self::Number(number) => Value::Number(number.clone()),
            Self::String(text) => Value::String(text.clone()),
        }
    }
}

/// The id as it appears in a log line: numbers plain, strings in quotes
/// (`request 7`, `request "b-1"`).
impl fmt::Display for IdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(number) => write!(f, "{number}"),
            Self::String(text) => write!(f, "{}", Value::String(text.clone())),
        }
    }
}

/// The id of a whole line that is not a frame (not JSON, or too deep), from its
/// ends as a too-long line keeps them.
pub fn recover_id_of_line(line: &[u8]) -> Option<Value> {
    let kept = line.len().min(KEPT_BYTES);
    let head = line.get(..kept).unwrap_or_default();
    let tail = line.get(line.len() - kept..).unwrap_or_default();
    recover_id(head, tail)
}

/// Recovers the top-level `id` of a frame from the kept ends of a too-long line:
/// from its start when `id` comes early, else from its end when `id` is the last
/// member (`…,"id":5}`).
pub fn recover_id(head: &[u8], tail: &[u8]) -> Option<Value> {
    let valid_id = |raw: &[u8]| {
        serde_json::from_slice::<Value>(raw)
            .ok()
            .filter(is_valid_id)
    };
    let from_head = json_shallow::head::leading_members(head).find(|(key, _)| *key == b"id");
    match from_head {
        Some((_, value)) => value.and_then(valid_id),
        None => json_shallow::head::trailing_member(tail)
            .filter(|(key, _)| *key == b"id")
            .and_then(|(_, value)| valid_id(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::line_reader::{Line, LineReader};
    use super::*;
    use serde_json::json;

    #[test]
    fn number_and_string_ids_differ() {
        assert_ne!(IdKey::of(&json!(1)), IdKey::of(&json!("1")));
        assert_eq!(IdKey::of(&json!(0)), Some(IdKey::Number(0.into())));
    }

    #[test]
    fn null_object_and_array_are_not_ids() {
        for id in [json!(null), json!({}), json!([1]), json!(true)] {
            assert_eq!(IdKey::of(&id), None);
        }
    }

    #[test]
    fn round_trips_and_displays_as_json() {
        for id in [json!(7), json!(-3), json!("b-1"), json!("a\"b")] {
            let key = IdKey::of(&id).unwrap();
            assert_eq!(key.to_value(), id);
            assert_eq!(key.to_string(), id.to_string());
        }
    }

    #[tokio::test]
    async fn a_long_line_keeps_only_its_ends() {
        let mut input = br#"{"jsonrpc":"2.0","method":"x","params":{"t":""#.to_vec();
        input.extend(std::iter::repeat_n(b'a', 1_000_000));
        input.extend_from_slice(br#""},"id":42}"#);
        input.push(b'\n');
        input.extend_from_slice(b"{}\n");
        let mut reader = LineReader::new(&input[..], 1000);
        let mut got = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            got.push(line);
        }
        let Line::TooLong { length, head, tail } = &got[0] else {
            panic!("{got:?}")
        };
        assert_eq!(*length, input.len() - 4);
        assert!(head.len() <= KEPT_BYTES && tail.len() <= KEPT_BYTES);
        assert_eq!(recover_id(head, tail), Some(json!(42)));
        assert_eq!(got[1], Line::Complete(b"{}".to_vec()));
    }

    #[test]
    fn recovers_the_id_at_the_start() {
        let head = br#"{"jsonrpc":"2.0","id":"req-1","method":"tools/call","params":{"x":"aaaa"#;
        assert_eq!(recover_id(head, b""), Some(json!("req-1")));
        let head = br#" { "method" : "a", "params":{"id":9,"s":"}\"{"}, "id" : 7 , "x"#;
        assert_eq!(recover_id(head, b""), Some(json!(7)));
    }

    #[test]
    fn recovers_the_id_at_the_end_only_at_the_top_level() {
        assert_eq!(recover_id(b"", br#"aaaa"},"id":5}"#), Some(json!(5)));
        assert_eq!(
            recover_id(b"", br#"aa\"}", "id" : "b\"x" } "#),
            Some(json!("b\"x"))
        );
        assert_eq!(recover_id(b"", br#"aaaa","params":{"id":5}}"#), None);
        assert_eq!(recover_id(b"", br#"aaaa","xid":5}"#), None);
        assert_eq!(recover_id(b"", br#"aaaa","id":null}"#), None);
    }

    #[test]
    fn a_cut_scalar_is_not_an_id() {
        assert_eq!(recover_id(br#"{"id":12"#, b""), None);
        assert_eq!(recover_id(br#"{"params":{"a":"#, b""), None);
    }
}
