//! JSON text read without a tree.
//!
//! Three readers: [`object_members`] reads a whole JSON object one level deep in
//! one pass, [`array_items`] does the same for an array, and [`head`] reads the ends of an object whose text is cut (the
//! id of a line over a size limit).
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

pub mod head;

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

/// `text` as one JSON object read one level deep: its members in order (a key
/// given twice appears twice; the caller decides). `None` unless (1) `text` is one
/// JSON value with only JSON whitespace (space, \t, \n, \r) around it, exactly as
/// `serde_json::from_str::<&RawValue>` accepts it, (2) that value is an object,
/// and (3) it nests at most `max_depth` levels, where `{}` and `[]` are one level,
/// `{"a":[1]}` is two, and a scalar is zero.
///
/// A key with a lone surrogate escape (`"\ud800"`) also gives `None`: a `String`
/// cannot hold it (serde_json refuses it too when it decodes the key). Inside
/// values lone surrogates are fine, as they are in a `RawValue`.
pub fn object_members(text: &str, max_depth: usize) -> Option<Vec<Member<'_>>> {
    whole_object(text, max_depth, None).map(|(members, _)| members)
}

/// [`object_members`], and in the same pass the members of the member named
/// `inner` when its value is an object (the last such member, when the name comes
/// twice): the `params` or the `result` of a JSON-RPC frame, read without a
/// second scan of its text. The inner keys are decoded as the outer ones are, so
/// a lone surrogate escape in one gives `None` for the whole text.
pub fn object_members_with_inner<'a>(
    text: &'a str,
    max_depth: usize,
    inner: &str,
) -> Option<(Vec<Member<'a>>, Option<Vec<Member<'a>>>)> {
    whole_object(text, max_depth, Some(inner))
}

/// The members of the object that is the whole of `text`, and those of its
/// member `inner` when that is an object.
fn whole_object<'a>(
    text: &'a str,
    max_depth: usize,
    inner: Option<&str>,
) -> Option<(Vec<Member<'a>>, Option<Vec<Member<'a>>>)> {
    let mut scan = Scanner::new(text);
    scan.skip_whitespace();
    let mut inner_members = None;
    let members = object(&mut scan, text, max_depth, inner, &mut inner_members)?;
    scan.skip_whitespace();
    scan.at_end().then_some((members, inner_members))
}

/// The members of the object at the cursor, which ends past its closing brace.
/// When a member is named `inner` and its value is an object, that object's
/// members go to `inner_members` (read the same way, one level only).
fn object<'a>(
    scan: &mut Scanner<'a>,
    text: &'a str,
    max_depth: usize,
    inner: Option<&str>,
    inner_members: &mut Option<Vec<Member<'a>>>,
) -> Option<Vec<Member<'a>>> {
    if !scan.eat(b'{') {
        return None;
    }
    // The object itself is the first level; its values get the rest.
    let value_depth = max_depth.checked_sub(1)?;
    let mut members = Vec::new();
    scan.skip_whitespace();
    if scan.eat(b'}') {
        return Some(members);
    }
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
        let key = key::decode(raw_key, key_end.escaped)?;
        scan.skip_whitespace();
        if !scan.eat(b':') {
            return None;
        }
        scan.skip_whitespace();
        let value_start = scan.at();
        if inner.is_some_and(|inner| key == inner) && scan.next_is(b'{') {
            *inner_members = Some(object(scan, text, value_depth, None, &mut None)?);
        } else {
            scan.value(value_depth)?;
        }
        // Both ends sit next to ASCII bytes, so they are char boundaries.
        let value = text.get(value_start..scan.at())?;
        members.push(Member { key, value });
        scan.skip_whitespace();
        if scan.eat(b',') {
            scan.skip_whitespace();
        } else if scan.eat(b'}') {
            return Some(members);
        } else {
            return None;
        }
    }
}

/// `text` as one JSON array read one level deep: the JSON text of each item in
/// order (sub-slices of the input, no surrounding whitespace). `None` unless
/// `text` is one JSON array, with only JSON whitespace around it, that
/// `serde_json::from_str::<&RawValue>` accepts and that nests at most
/// `max_depth` levels (`[]` is one level, `[{}]` two).
pub fn array_items(text: &str, max_depth: usize) -> Option<Vec<&str>> {
    let mut scan = Scanner::new(text);
    scan.skip_whitespace();
    if !scan.eat(b'[') {
        return None;
    }
    let item_depth = max_depth.checked_sub(1)?;
    let mut items = Vec::new();
    scan.skip_whitespace();
    if !scan.eat(b']') {
        loop {
            let item_start = scan.at();
            scan.value(item_depth)?;
            // Both ends sit next to ASCII bytes, so they are char boundaries.
            items.push(text.get(item_start..scan.at())?);
            scan.skip_whitespace();
            if scan.eat(b',') {
                scan.skip_whitespace();
            } else if scan.eat(b']') {
                break;
            } else {
                return None;
            }
        }
    }
    scan.skip_whitespace();
    scan.at_end().then_some(items)
}

/// Whether the JSON text `json` may hold one of `words` in a string or a key once
/// its escapes are undone: only when the text has the word as it is, or has a
/// `\u` escape, which can write any character. Each word must hold none of the
/// characters that the other escapes write (`"`, `\`, `/` and the control
/// characters), so that nothing else could spell it. For a caller that edits a
/// few members of large texts and can leave most of them unread. A memchr search
/// per word, and one for the escape.
pub fn may_spell(json: &[u8], words: &[&str]) -> bool {
    debug_assert!(
        words.iter().all(|word| !word
            .bytes()
            .any(|byte| matches!(byte, b'"' | b'\\' | b'/' | ..=0x1f))),
        "a word that a simple escape can write: {words:?}"
    );
    words
        .iter()
        .any(|word| memchr::memmem::find(json, word.as_bytes()).is_some())
        || memchr::memmem::find(json, b"\\u").is_some()
}

/// The levels of nesting of `text`, which must be valid JSON (as returned in
/// `Member::value`): 0 for a scalar. Cheap: it skips strings with memchr, for a
/// caller that already checked the text.
///
/// Invalid text gives some number, never a panic.
pub fn nesting(json: &str) -> usize {
    nesting::deepest(json.as_bytes())
}

#[cfg(test)]
mod tests;
