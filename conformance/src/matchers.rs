//! Matchers: expected frames with placeholders for what varies (ids, tokens,
//! times), and the captures that tie a value seen once to a later frame.
//!
//! A string that starts with `$` is a matcher:
//!
//! | matcher | matches |
//! |---|---|
//! | `$any` | any value (the member must be present) |
//! | `$absent` | the member must not be present |
//! | `$string`, `$number`, `$integer`, `$bool`, `$object`, `$array`, `$null` | a value of that JSON type |
//! | `$uuid` | a string in the 8-4-4-4-12 hex form |
//! | `$regex:RE` | a string that RE matches (anchor it yourself) |
//! | `$capture:NAME` | any value, remembered as NAME |
//! | `$ref:NAME` | the value remembered as NAME (also in frames to send) |
//! | `$after:NAME` | in frames to send only: the integer after the one remembered as NAME (an id the peer has not used yet) |
//! | `$repeat:N:TEXT` | the string of N times TEXT (also in frames to send: a large message) |
//! | `$$text` | the literal string `$text` |
//!
//! An object matches an object with exactly the same members, unless it has
//! `"$partial": true`: then members it does not name may be present. An object
//! with a single member `$len` (a number), `$each` (a matcher for every element)
//! or `$contains` (matchers that each match some element, in any order) matches
//! an array. Arrays otherwise match element by element, with equal lengths.
//! Numbers compare as JSON numbers (`1` equals `1.0`).

use regex::Regex;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Values captured by `$capture:NAME`, for `$ref:NAME`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Captures(BTreeMap<String, Value>);

impl Captures {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// The value captured as `name`, for a frame to send: a transcript that names
    /// no capture of that name is wrong.
    fn require(&self, name: &str) -> Result<&Value, SubstituteError> {
        self.get(name)
            .ok_or_else(|| SubstituteError::NotCaptured(name.to_owned()))
    }

    pub fn set(&mut self, name: &str, value: Value) {
        self.0.insert(name.to_owned(), value);
    }
}

/// Why a frame or a line to send cannot be made from its transcript step.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SubstituteError {
    /// `$ref:NAME` or `${NAME}` of a name that no step captured.
    #[error("nothing was captured as {0}")]
    NotCaptured(String),
    /// `$after:NAME` of a value that has no integer after it.
    #[error(
        "$after:{name}: the value captured as {name} is {captured}, not an integer from 0 to 2^64-2"
    )]
    NotAnInteger { name: String, captured: Value },
    /// `$repeat:` without a count and a text.
    #[error("$repeat:{0} is not $repeat:N:TEXT")]
    Repeat(String),
}

/// The first place where a frame differs from its expectation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// A JSON pointer into the frame (`""` for the whole frame).
    pub path: String,
    /// What was wrong, for a person.
    pub message: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at {}: {}", self.path, self.message)
        }
    }
}

fn mismatch(path: &str, message: impl Into<String>) -> Mismatch {
    Mismatch {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// Whether `actual` (`None`: the member is absent) matches `expected`. Captures
/// are only kept when the whole value matches.
pub fn check(expected: &Value, actual: &Value, captures: &mut Captures) -> Result<(), Mismatch> {
    let mut trial = captures.clone();
    match_at(expected, Some(actual), &mut trial, "")?;
    *captures = trial;
    Ok(())
}

fn match_at(
    expected: &Value,
    actual: Option<&Value>,
    captures: &mut Captures,
    path: &str,
) -> Result<(), Mismatch> {
    if let Value::String(text) = expected
        && let Some(matcher) = text.strip_prefix('$')
        && !matcher.starts_with('$')
    {
        return match_matcher(matcher, actual, captures, path);
    }
    let Some(actual) = actual else {
        return Err(mismatch(path, format!("missing, expected {expected}")));
    };
    match expected {
        Value::String(text) => {
            let literal = text.strip_prefix('$').filter(|t| t.starts_with('$'));
            let want = literal.unwrap_or(text);
            if actual.as_str() == Some(want) {
                Ok(())
            } else {
                Err(mismatch(
                    path,
                    format!("expected {}, got {actual}", Value::String(want.into())),
                ))
            }
        }
        Value::Object(object) => match value_matcher(object) {
            Some(("$not", inner)) => {
                let mut trial = captures.clone();
                match match_at(inner, Some(actual), &mut trial, path) {
                    Ok(()) => Err(mismatch(
                        path,
                        format!("expected a value that does not match {inner}, got {actual}"),
                    )),
                    Err(_) => Ok(()),
                }
            }
            Some((_, Value::Array(all))) => {
                for want in all {
                    match_at(want, Some(actual), captures, path)?;
                }
                Ok(())
            }
            Some((kind, _)) => Err(mismatch(path, format!("{kind} takes an array of matchers"))),
            None => match_object(object, actual, captures, path),
        },
        Value::Array(items) => {
            let Value::Array(got) = actual else {
                return Err(mismatch(path, format!("expected an array, got {actual}")));
            };
            if got.len() != items.len() {
                return Err(mismatch(
                    path,
                    format!(
                        "expected an array of {} elements, got {} elements",
                        items.len(),
                        got.len()
                    ),
                ));
            }
            for (index, (want, got)) in items.iter().zip(got).enumerate() {
                match_at(want, Some(got), captures, &format!("{path}/{index}"))?;
            }
            Ok(())
        }
        Value::Number(want) => match actual {
            Value::Number(got) if numbers_equal(want, got) => Ok(()),
            _ => Err(mismatch(path, format!("expected {want}, got {actual}"))),
        },
        _ if expected == actual => Ok(()),
        _ => Err(mismatch(path, format!("expected {expected}, got {actual}"))),
    }
}

fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if let (Some(a), Some(b)) = (a.as_i64(), b.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (a.as_u64(), b.as_u64()) {
        return a == b;
    }
    a.as_f64() == b.as_f64()
}

fn match_matcher(
    matcher: &str,
    actual: Option<&Value>,
    captures: &mut Captures,
    path: &str,
) -> Result<(), Mismatch> {
    if matcher == "absent" {
        return match actual {
            None => Ok(()),
            Some(value) => Err(mismatch(path, format!("must be absent, got {value}"))),
        };
    }
    let Some(actual) = actual else {
        return Err(mismatch(path, format!("missing, expected ${matcher}")));
    };
    let type_ok = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(mismatch(path, format!("expected {what}, got {actual}")))
        }
    };
    if let Some(name) = matcher.strip_prefix("capture:") {
        captures.set(name, actual.clone());
        return Ok(());
    }
    if let Some(name) = matcher.strip_prefix("ref:") {
        return match captures.get(name) {
            Some(value) if value == actual => Ok(()),
            Some(value) => Err(mismatch(
                path,
                format!("expected the value captured as {name} ({value}), got {actual}"),
            )),
            None => Err(mismatch(path, format!("nothing was captured as {name}"))),
        };
    }
    if let Some(spec) = matcher.strip_prefix("repeat:") {
        let (count, text) = repeat_spec(spec).map_err(|error| mismatch(path, error.to_string()))?;
        // A wrong string of megabytes is told by its length, not shown.
        let got = match actual.as_str() {
            Some(actual) if is_repeat(actual, text, count) => return Ok(()),
            Some(actual) => format!("a string of {} bytes", actual.len()),
            None => actual.to_string(),
        };
        return Err(mismatch(
            path,
            format!("expected {count} times {text:?}, got {got}"),
        ));
    }
    if let Some(pattern) = matcher.strip_prefix("regex:") {
        let regex = Regex::new(pattern).map_err(|error| {
            mismatch(
                path,
                format!("the matcher $regex:{pattern} is not valid: {error}"),
            )
        })?;
        return type_ok(
            actual.as_str().is_some_and(|text| regex.is_match(text)),
            &format!("a string that matches /{pattern}/"),
        );
    }
    match matcher {
        "any" => Ok(()),
        "string" => type_ok(actual.is_string(), "a string"),
        "number" => type_ok(actual.is_number(), "a number"),
        "integer" => type_ok(actual.is_i64() || actual.is_u64(), "an integer"),
        "bool" => type_ok(actual.is_boolean(), "a boolean"),
        "object" => type_ok(actual.is_object(), "an object"),
        "array" => type_ok(actual.is_array(), "an array"),
        "null" => type_ok(actual.is_null(), "null"),
        "uuid" => type_ok(actual.as_str().is_some_and(is_uuid), "a UUID"),
        _ => Err(mismatch(path, format!("${matcher} is not a known matcher"))),
    }
}

/// `N:TEXT` of `$repeat:N:TEXT`.
fn repeat_spec(spec: &str) -> Result<(usize, &str), SubstituteError> {
    spec.split_once(':')
        .and_then(|(count, text)| Some((count.parse().ok()?, text)))
        .filter(|(_, text)| !text.is_empty())
        .ok_or_else(|| SubstituteError::Repeat(spec.to_owned()))
}

/// Whether `actual` is `count` times `text`, without building it.
fn is_repeat(actual: &str, text: &str, count: usize) -> bool {
    actual.len() == text.len() * count
        && actual
            .as_bytes()
            .chunks(text.len())
            .all(|chunk| chunk == text.as_bytes())
}

/// The text that an expected string matches exactly, when it is no matcher
/// (`$$` is a literal `$`).
pub fn literal(expected: &str) -> Option<&str> {
    match expected.strip_prefix('$') {
        None => Some(expected),
        Some(rest) if rest.starts_with('$') => Some(rest),
        Some(_) => None,
    }
}

/// `8-4-4-4-12` hexadecimal digits.
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The single `$not` (the value does not match) or `$all` (the value matches
/// each of an array of expectations) member of a value matcher.
fn value_matcher(object: &Map<String, Value>) -> Option<(&str, &Value)> {
    if object.len() != 1 {
        return None;
    }
    let (key, value) = object.iter().next()?;
    matches!(key.as_str(), "$not" | "$all").then_some((key.as_str(), value))
}

/// The single `$len`, `$each` or `$contains` member of an array matcher.
fn array_matcher(object: &Map<String, Value>) -> Option<(&str, &Value)> {
    if object.len() != 1 {
        return None;
    }
    let (key, value) = object.iter().next()?;
    matches!(key.as_str(), "$len" | "$each" | "$contains").then_some((key.as_str(), value))
}

fn match_object(
    object: &Map<String, Value>,
    actual: &Value,
    captures: &mut Captures,
    path: &str,
) -> Result<(), Mismatch> {
    if let Some((kind, arg)) = array_matcher(object) {
        let Value::Array(items) = actual else {
            return Err(mismatch(path, format!("expected an array, got {actual}")));
        };
        return match kind {
            "$len" => {
                if arg.as_u64() == Some(items.len() as u64) {
                    Ok(())
                } else {
                    Err(mismatch(
                        path,
                        format!("expected an array of {arg} elements, got {}", items.len()),
                    ))
                }
            }
            "$each" => {
                for (index, item) in items.iter().enumerate() {
                    match_at(arg, Some(item), captures, &format!("{path}/{index}"))?;
                }
                Ok(())
            }
            _ => {
                let wanted = arg.as_array().cloned().unwrap_or_else(|| vec![arg.clone()]);
                for want in &wanted {
                    let found = items.iter().any(|item| {
                        let mut trial = captures.clone();
                        if match_at(want, Some(item), &mut trial, path).is_ok() {
                            *captures = trial;
                            true
                        } else {
                            false
                        }
                    });
                    if !found {
                        return Err(mismatch(path, format!("no element matches {want}")));
                    }
                }
                Ok(())
            }
        };
    }
    let Value::Object(got) = actual else {
        return Err(mismatch(path, format!("expected an object, got {actual}")));
    };
    let partial = object.get("$partial").and_then(Value::as_bool) == Some(true);
    for (key, want) in object {
        if key == "$partial" {
            continue;
        }
        let child = format!("{path}/{}", escape_pointer(key));
        match_at(want, got.get(key), captures, &child)?;
    }
    if !partial {
        for (key, value) in got {
            if !object.contains_key(key) {
                return Err(mismatch(
                    &format!("{path}/{}", escape_pointer(key)),
                    format!("unexpected member {key:?} with the value {value}"),
                ));
            }
        }
    }
    Ok(())
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The expectation as it would look if it matched `actual` wherever it could:
/// matchers that match become the actual value, and the members a partial
/// object does not name are copied. A diff of this against `actual` shows only
/// the real differences.
pub fn render(expected: &Value, actual: Option<&Value>, captures: &Captures) -> Option<Value> {
    if let Value::String(text) = expected
        && let Some(matcher) = text.strip_prefix('$')
        && !matcher.starts_with('$')
    {
        let mut trial = captures.clone();
        if match_matcher(matcher, actual, &mut trial, "").is_ok() {
            return actual.cloned();
        }
        return match matcher.strip_prefix("ref:").and_then(|n| captures.get(n)) {
            Some(value) => Some(value.clone()),
            None if matcher == "absent" => None,
            None => Some(expected.clone()),
        };
    }
    match (expected, actual) {
        (Value::String(text), _) => {
            let literal = text.strip_prefix('$').filter(|t| t.starts_with('$'));
            Some(Value::String(literal.unwrap_or(text).to_owned()))
        }
        (Value::Object(object), Some(actual))
            if array_matcher(object).is_some() || value_matcher(object).is_some() =>
        {
            let mut trial = captures.clone();
            if match_at(expected, Some(actual), &mut trial, "").is_ok() {
                Some(actual.clone())
            } else {
                Some(expected.clone())
            }
        }
        (Value::Object(object), Some(Value::Object(got))) => {
            let partial = object.get("$partial").and_then(Value::as_bool) == Some(true);
            let mut out = Map::new();
            // The actual order first, so that a diff lines up.
            for (key, value) in got {
                match object.get(key) {
                    Some(want) => {
                        if let Some(rendered) = render(want, Some(value), captures) {
                            out.insert(key.clone(), rendered);
                        }
                    }
                    None if partial => {
                        out.insert(key.clone(), value.clone());
                    }
                    None => {}
                }
            }
            for (key, want) in object {
                if key == "$partial" || got.contains_key(key) {
                    continue;
                }
                if let Some(rendered) = render(want, None, captures) {
                    out.insert(key.clone(), rendered);
                }
            }
            Some(Value::Object(out))
        }
        (Value::Array(items), Some(Value::Array(got))) => Some(Value::Array(
            items
                .iter()
                .enumerate()
                .filter_map(|(index, want)| render(want, got.get(index), captures))
                .collect(),
        )),
        (Value::Object(object), _) => Some(Value::Object(
            object
                .iter()
                .filter(|(key, _)| key.as_str() != "$partial")
                .filter_map(|(key, want)| render(want, None, captures).map(|v| (key.clone(), v)))
                .collect(),
        )),
        (Value::Array(items), _) => Some(Value::Array(
            items
                .iter()
                .filter_map(|want| render(want, None, captures))
                .collect(),
        )),
        _ => Some(expected.clone()),
    }
}

/// A frame to send: `$ref:NAME` becomes the captured value, `$after:NAME` the
/// integer after it, `$repeat:N:TEXT` the string of N times TEXT and `$$text` the
/// string `$text`; every other value stays.
pub fn substitute(value: &Value, captures: &Captures) -> Result<Value, SubstituteError> {
    Ok(match value {
        Value::String(text) => {
            if let Some(name) = text.strip_prefix("$ref:") {
                captures.require(name)?.clone()
            } else if let Some(name) = text.strip_prefix("$after:") {
                integer_after(name, captures)?
            } else if let Some(spec) = text.strip_prefix("$repeat:") {
                let (count, text) = repeat_spec(spec)?;
                Value::String(text.repeat(count))
            } else if let Some(literal) = text.strip_prefix('$').filter(|t| t.starts_with('$')) {
                Value::String(literal.to_owned())
            } else {
                value.clone()
            }
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| substitute(item, captures))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, item)| Ok((key.clone(), substitute(item, captures)?)))
                .collect::<Result<_, SubstituteError>>()?,
        ),
        _ => value.clone(),
    })
}

/// `$after:NAME`: the captured integer plus one.
fn integer_after(name: &str, captures: &Captures) -> Result<Value, SubstituteError> {
    let captured = captures.require(name)?;
    captured
        .as_u64()
        .and_then(|n| n.checked_add(1))
        .map(Value::from)
        .ok_or_else(|| SubstituteError::NotAnInteger {
            name: name.to_owned(),
            captured: captured.clone(),
        })
}

/// A raw line to send: each `${NAME}` becomes the JSON text of the value
/// captured as NAME.
pub fn substitute_text(text: &str, captures: &Captures) -> Result<String, SubstituteError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = &after[..end];
        let value = captures.require(name)?;
        out.push_str(&value.to_string());
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(expected: Value, actual: Value) -> Captures {
        let mut captures = Captures::default();
        check(&expected, &actual, &mut captures).unwrap_or_else(|m| panic!("{m}"));
        captures
    }

    fn fails(expected: Value, actual: Value) -> Mismatch {
        check(&expected, &actual, &mut Captures::default()).unwrap_err()
    }

    #[test]
    fn objects_match_exactly_unless_partial() {
        ok(json!({"a": 1, "b": "x"}), json!({"b": "x", "a": 1.0}));
        let m = fails(json!({"a": 1}), json!({"a": 1, "nextCursor": null}));
        assert_eq!(m.path, "/nextCursor");
        assert!(m.message.contains("unexpected member"), "{m}");
        ok(json!({"a": 1, "$partial": true}), json!({"a": 1, "b": 2}));
        assert_eq!(
            fails(json!({"a": {"b": 2}}), json!({"a": {"b": 3}})).path,
            "/a/b"
        );
    }

    #[test]
    fn type_matchers_and_absent() {
        ok(
            json!({"s": "$string", "n": "$number", "i": "$integer", "b": "$bool", "u": "$uuid", "x": "$absent", "a": "$any"}),
            json!({"s": "t", "n": 1.5, "i": 3, "b": false, "u": "0b9f2c1e-6a57-4c1d-9a3e-5d7f0c2b8a41", "a": null}),
        );
        assert!(
            fails(json!({"x": "$absent"}), json!({"x": null}))
                .message
                .contains("absent")
        );
        assert!(
            fails(json!({"a": "$any"}), json!({}))
                .message
                .contains("missing")
        );
        assert!(
            fails(json!("$integer"), json!(1.5))
                .message
                .contains("integer")
        );
        assert!(fails(json!("$uuid"), json!("b-1")).message.contains("UUID"));
        ok(json!("$regex:^b-[0-9]+$"), json!("b-12"));
        ok(json!("$$literal"), json!("$literal"));
    }

    #[test]
    fn captures_and_refs() {
        let captures = ok(json!({"id": "$capture:up"}), json!({"id": 7}));
        assert_eq!(captures.get("up"), Some(&json!(7)));
        let mut captures = captures;
        check(
            &json!({"requestId": "$ref:up"}),
            &json!({"requestId": 7}),
            &mut captures,
        )
        .unwrap();
        let m = check(
            &json!({"requestId": "$ref:up"}),
            &json!({"requestId": 8}),
            &mut captures,
        )
        .unwrap_err();
        assert!(m.message.contains("captured as up"), "{m}");
        // A failed match keeps no capture.
        let mut captures = Captures::default();
        assert!(check(&json!(["$capture:a", 2]), &json!([1, 3]), &mut captures).is_err());
        assert_eq!(captures.get("a"), None);
    }

    #[test]
    fn array_matchers() {
        ok(json!({"$not": 0}), json!(7));
        fails(json!({"$not": 0}), json!(0));
        ok(json!({"$all": ["$integer", {"$not": 0}]}), json!(3));
        fails(json!({"$all": ["$integer", {"$not": 0}]}), json!("3"));
        ok(json!({"$len": 2}), json!([1, 2]));
        ok(
            json!({"$each": {"type": "text", "$partial": true}}),
            json!([{"type": "text", "text": "a"}]),
        );
        ok(
            json!({"$contains": [{"name": "b", "$partial": true}]}),
            json!([{"name": "a"}, {"name": "b", "x": 1}]),
        );
        assert!(
            fails(json!({"$len": 1}), json!([]))
                .message
                .contains("1 elements")
        );
        assert!(
            fails(json!([1]), json!([1, 2]))
                .message
                .contains("1 elements")
        );
    }

    #[test]
    fn render_shows_only_real_differences() {
        let expected = json!({"jsonrpc": "2.0", "id": "$any", "result": {"tools": "$any"}});
        let actual =
            json!({"jsonrpc": "2.0", "id": 4, "result": {"tools": [], "nextCursor": null}});
        let rendered = render(&expected, Some(&actual), &Captures::default()).unwrap();
        assert_eq!(
            rendered,
            json!({"jsonrpc": "2.0", "id": 4, "result": {"tools": []}})
        );
    }

    #[test]
    fn substitute_refs_in_frames_to_send() {
        let mut captures = Captures::default();
        captures.set("up", json!(3));
        assert_eq!(
            substitute(
                &json!({"id": "$ref:up", "x": "$$y", "z": "$any"}),
                &captures
            )
            .unwrap(),
            json!({"id": 3, "x": "$y", "z": "$any"})
        );
        assert!(substitute(&json!("$ref:none"), &captures).is_err());
        assert_eq!(
            substitute(&json!({"id": "$after:up"}), &captures).unwrap(),
            json!({"id": 4})
        );
        assert!(substitute(&json!("$after:none"), &captures).is_err());
        captures.set("text", json!("b-1"));
        assert_eq!(
            substitute(&json!("$after:text"), &captures)
                .unwrap_err()
                .to_string(),
            "$after:text: the value captured as text is \"b-1\", not an integer from 0 to 2^64-2"
        );
        assert_eq!(
            substitute_text("{\"id\":${up},\"x\":\"${none\"}", &captures),
            Err(SubstituteError::NotCaptured("none\"".into()))
        );
        assert_eq!(
            substitute_text("{\"id\":${up}}", &captures).unwrap(),
            "{\"id\":3}"
        );
    }

    #[test]
    fn repeat_builds_a_large_string_to_send_and_matches_only_that_string() {
        let captures = Captures::default();
        assert_eq!(
            substitute(&json!({"text": "$repeat:3:ab"}), &captures).unwrap(),
            json!({"text": "ababab"})
        );
        assert!(substitute(&json!("$repeat:x:ab"), &captures).is_err());
        assert!(substitute(&json!("$repeat:3:"), &captures).is_err());
        ok(json!({"text": "$repeat:3:ab"}), json!({"text": "ababab"}));
        for wrong in [json!("ababa"), json!("abababab"), json!("abbbab"), json!(6)] {
            let m = fails(json!({"text": "$repeat:3:ab"}), json!({"text": wrong}));
            assert_eq!(m.path, "/text");
            assert!(m.message.contains("expected 3 times \"ab\""), "{m}");
        }
    }
}
