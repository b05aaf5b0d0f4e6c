//! The text of a key with its escapes undone.
//!
//! Only keys of the outermost object are decoded: the caller compares them with
//! names like `id` or `method`. The scanner has already checked the escapes'
//! syntax; this module still returns `None` rather than panic on anything else,
//! so that it stands on its own.

use std::borrow::Cow;

/// The key whose raw JSON text (between the quotes) is `raw`; `escaped` says
/// whether it holds a backslash (the scanner knows, so the text is not searched
/// again). `None` for a lone surrogate escape: a Rust string cannot hold one, and
/// serde_json refuses such a key when it makes a `String` of it.
#[inline]
pub(crate) fn decode(raw: &str, escaped: bool) -> Option<Cow<'_, str>> {
    if escaped {
        decode_escapes(raw).map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(raw))
    }
}

/// `raw` with every escape replaced by the character it stands for.
fn decode_escapes(raw: &str) -> Option<String> {
    let mut decoded = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(backslash) = memchr::memchr(b'\\', rest.as_bytes()) {
        decoded.push_str(rest.get(..backslash)?);
        let escape = rest.get(backslash + 1..)?;
        let (character, escape_len) = match escape.as_bytes().first()? {
            b'"' => ('"', 1),
            b'\\' => ('\\', 1),
            b'/' => ('/', 1),
            b'b' => ('\u{8}', 1),
            b'f' => ('\u{c}', 1),
            b'n' => ('\n', 1),
            b'r' => ('\r', 1),
            b't' => ('\t', 1),
            b'u' => unicode_escape(escape.as_bytes())?,
            _ => return None,
        };
        decoded.push(character);
        rest = escape.get(escape_len..)?;
    }
    decoded.push_str(rest);
    Some(decoded)
}

/// The character of the `\u` escape that `escape` starts with (just after the
/// backslash), and how many bytes it takes: `uXXXX`, or `uXXXX\uXXXX` for a
/// surrogate pair. `None` for a lone surrogate, high or low.
fn unicode_escape(escape: &[u8]) -> Option<(char, usize)> {
    let unit = hex_unit(escape.get(1..5)?)?;
    match unit {
        0xD800..=0xDBFF => {
            if escape.get(5..7)? != b"\\u" {
                return None;
            }
            let low = hex_unit(escape.get(7..11)?)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return None;
            }
            let code = 0x1_0000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
            Some((char::from_u32(code)?, 11))
        }
        0xDC00..=0xDFFF => None,
        _ => Some((char::from_u32(u32::from(unit))?, 5)),
    }
}

/// The UTF-16 code unit that four hex digits spell (either case); `None` for
/// anything else (`u16::from_str_radix` would also take a leading `+`).
fn hex_unit(digits: &[u8]) -> Option<u16> {
    digits.iter().try_fold(0u16, |unit, &digit| {
        let value = char::from(digit).to_digit(16)?;
        // Four digits of at most 15 fit in 16 bits: no overflow.
        Some((unit << 4) | value as u16)
    })
}

#[cfg(test)]
mod tests {
    use super::decode;
    use std::borrow::Cow;

    #[test]
    fn plain_keys_are_borrowed() {
        assert!(matches!(
            decode("method", false),
            Some(Cow::Borrowed("method"))
        ));
        assert!(matches!(decode("", false), Some(Cow::Borrowed(""))));
    }

    #[test]
    fn every_escape_is_decoded() {
        let decoded = decode(r#"a\"b\\c\/d\be\ff\ng\rh\ti\u00e9\u20AC\ud83d\ude00"#, true);
        assert_eq!(
            decoded.as_deref(),
            Some("a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti\u{e9}\u{20ac}\u{1f600}")
        );
        assert_eq!(decode(r"\u0000", true).as_deref(), Some("\0"));
        assert_eq!(decode(r"\uDBFF\uDFFF", true).as_deref(), Some("\u{10ffff}"));
    }

    #[test]
    fn lone_surrogates_are_refused() {
        for raw in [
            r"\ud800",
            r"\ud800x",
            r"\ud800\n",
            r"\ud800\u0041",
            r"\ud800\ud800",
            r"\udc00",
            r"x\udfff",
            r"\ude00\ud83d",
        ] {
            assert_eq!(decode(raw, true), None, "{raw}");
        }
    }

    /// Text the scanner would refuse is refused, not a panic.
    #[test]
    fn broken_escapes_are_refused() {
        for raw in [
            r"\",
            r"\x",
            r"\u12",
            r"\u12G4",
            r"\u+123",
            r"\ud83d\u",
            r"é\",
        ] {
            assert_eq!(decode(raw, true), None, "{raw}");
        }
    }
}
