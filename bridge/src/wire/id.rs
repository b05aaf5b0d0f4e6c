//! JSON-RPC ids as hashable keys.

use serde_json::Value;
use std::fmt;

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

#[cfg(test)]
mod tests {
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
}
