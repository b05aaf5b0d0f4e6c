//! The depth of JSON text that is already known to be valid.
//!
//! Without validation only brackets and strings matter: a bracket inside a
//! string is text, and a string ends at the first quote that no backslash
//! escapes. Strings are skipped with memchr, so a long string costs little.

/// The deepest nesting of brackets in `json` outside strings (see [`crate::nesting()`]).
pub(crate) fn deepest(json: &[u8]) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut at = 0;
    while let Some(&byte) = json.get(at) {
        at += 1;
        match byte {
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            // Saturating: invalid text must not panic, whatever it returns.
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => at = string_end(json, at),
            _ => {}
        }
    }
    deepest
}

/// The index just past the closing quote of the string whose content starts at
/// `at`; the length of `json` when the string does not end.
fn string_end(json: &[u8], mut at: usize) -> usize {
    loop {
        let Some(stop) = json
            .get(at..)
            .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
        else {
            return json.len();
        };
        let stop = at + stop;
        if json.get(stop) == Some(&b'"') {
            return stop + 1;
        }
        // A backslash: the byte after it is escaped (in valid JSON an ASCII byte;
        // the hex digits of `\u` need no skipping, as they are no quote).
        at = stop + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::deepest;

    #[test]
    fn depths() {
        for (json, depth) in [
            ("0", 0),
            ("\"[{\"", 0),
            ("{}", 1),
            ("[]", 1),
            ("{\"a\":[1]}", 2),
            ("[[], [[]], {\"k\": {\"l\": []}}]", 4),
            (r#"{"a\"[[": "\\", "b": ["]]]", [ ]]}"#, 3),
            (" [ [ ] ] ", 2),
        ] {
            assert_eq!(deepest(json.as_bytes()), depth, "{json}");
        }
    }

    /// Invalid text gives some number, never a panic.
    #[test]
    fn invalid_text_does_not_panic() {
        for json in ["]]]", "\"", "\"\\", "[\"\\\"", "}{", "[[[", "\\"] {
            let _ = deepest(json.as_bytes());
        }
    }
}
