//! A JSON object read one level deep, in one pass.
//!
//! A bridge that passes JSON-RPC lines through looks only at the envelope (`id`,
//! `method`) and at the members of `params` or `result`. A full parse, or even
//! serde_json with `&RawValue` members, costs thousands of instructions for a
//! 200-byte line; [`object_members`] checks the whole text and returns the
//! members of the outermost object for a few instructions a byte, with no
//! allocation beyond the member vector (and the decoded keys that hold escapes).
//!
//! It accepts exactly the texts that `serde_json::from_str::<&RawValue>` accepts
//! (serde_json 1.0.154), when they are objects whose keys make Rust strings, and
//! adds a depth limit of its own: serde_json sets none for a raw value.
#![forbid(unsafe_code)]

mod key;
mod nesting;
mod open;
mod scan;

use scan::Scanner;
use std::borrow::Cow;

/// One member of an object: its key with escapes undone, and its value as JSON text
/// (a sub-slice of the input, no surrounding whitespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member<'a> {
    /// The key: borrowed from the input when it holds no escape, decoded otherwise.
    pub key: Cow<'a, str>,
    /// The value's JSON text, exactly as in the input (what `RawValue::get` gives).
    pub value: &'a str,
}

/// `text` as one JSON object read one level deep: its members in order (a key given twice appears twice; the caller decides).
/// `None` unless (1) `text` is one JSON value with only JSON whitespace (space, \t, \n, \r) around it, exactly as
/// `serde_json::from_str::<&RawValue>` accepts it, (2) that value is an object, and (3) it nests at most `max_depth`
/// levels, where `{}` and `[]` are one level, `{"a":[1]}` is two, and a scalar is zero.
///
/// A key with a lone surrogate escape (`"\ud800"`) also gives `None`: a `String`
/// cannot hold it (serde_json refuses it too when it decodes the key). Inside
/// values lone surrogates are fine, as they are in a `RawValue`.
pub fn object_members(text: &str, max_depth: usize) -> Option<Vec<Member<'_>>> {
    let mut scan = Scanner::new(text);
    scan.skip_whitespace();
    if !scan.eat(b'{') {
        return None;
    }
    // The object itself is the first level; its values get the rest.
    let value_depth = max_depth.checked_sub(1)?;
    let mut members = Vec::new();
    scan.skip_whitespace();
    if !scan.eat(b'}') {
        // Room for a JSON-RPC envelope (`jsonrpc`, `id`, `method`, `params`) at
        // once: one allocation, and none for `{}`.
        members.reserve_exact(4);
        loop {
            if !scan.eat(b'"') {
                return None;
            }
            let key_start = scan.at();
            let key_end = scan.string_rest()?;
            // The content ends before the closing quote, so the range is ordered.
            let raw_key = text.get(key_start..key_end.content_end)?;
            scan.skip_whitespace();
            if !scan.eat(b':') {
                return None;
            }
            scan.skip_whitespace();
            let value_start = scan.at();
            scan.value(value_depth)?;
            // Both ends sit next to ASCII bytes, so they are char boundaries.
            let value = text.get(value_start..scan.at())?;
            let key = key::decode(raw_key, key_end.escaped)?;
            members.push(Member { key, value });
            scan.skip_whitespace();
            if scan.eat(b',') {
                scan.skip_whitespace();
            } else if scan.eat(b'}') {
                break;
            } else {
                return None;
            }
        }
    }
    scan.skip_whitespace();
    scan.at_end().then_some(members)
}

/// The levels of nesting of `text`, which must be valid JSON (as returned in `Member::value`): 0 for a scalar.
/// Cheap: it may skip strings with memchr. (Used when a caller already validated the text.)
///
/// Invalid text gives some number, never a panic.
pub fn nesting(json: &str) -> usize {
    nesting::deepest(json.as_bytes())
}

#[cfg(test)]
mod tests;
