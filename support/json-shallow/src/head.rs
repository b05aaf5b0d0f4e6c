//! What the ends of a JSON object tell without a parse of the whole text (this
//! was the crate `json-head`).
//!
//! A line over a size limit is not kept, only its first and last bytes; a 64 MiB
//! response need not be parsed to learn its id. [`leading_members`] reads the
//! members at the start of an object whose text may be cut anywhere, and
//! [`trailing_member`] reads the last member from the end of the text
//! (`…,"id":5}`). Keys and values are raw JSON text: escapes are not undone, and
//! nothing is validated past what the answer needs (unlike
//! [`crate::object_members`], which checks the whole text).
#![deny(clippy::indexing_slicing)]

/// The members at the start of the object that `bytes` begins with, in order: the
/// raw key, and the raw value when it is whole within `bytes` (`None` when it runs
/// past the end, which ends the members).
pub fn leading_members(bytes: &[u8]) -> LeadingMembers<'_> {
    LeadingMembers {
        scan: Scanner { bytes, at: 0 },
        started: false,
        done: false,
    }
}

/// The iterator of [`leading_members`].
#[derive(Debug)]
pub struct LeadingMembers<'a> {
    scan: Scanner<'a>,
    started: bool,
    done: bool,
}

impl<'a> Iterator for LeadingMembers<'a> {
    type Item = (&'a [u8], Option<&'a [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let member = self.member();
        if !matches!(member, Some((_, Some(_)))) {
            self.done = true;
        }
        member
    }
}

impl<'a> LeadingMembers<'a> {
    fn member(&mut self) -> Option<(&'a [u8], Option<&'a [u8]>)> {
        let scan = &mut self.scan;
        scan.skip_ws();
        scan.expect(if self.started { b',' } else { b'{' })?;
        self.started = true;
        scan.skip_ws();
        let key = scan.string()?;
        scan.skip_ws();
        scan.expect(b':')?;
        scan.skip_ws();
        let start = scan.at;
        let value = scan
            .skip_value()
            .and_then(|()| scan.bytes.get(start..scan.at));
        Some((key, value))
    }
}

/// The last member of the object that `bytes` ends with, when its value is a
/// number or a string: the raw key and the raw value. The member before the
/// closing brace of the outermost object is one of its own members.
pub fn trailing_member(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = trim_end(bytes, bytes.len());
    if before(bytes, end)? != b'}' {
        return None;
    }
    let value_end = trim_end(bytes, end - 1);
    let value_start = if before(bytes, value_end) == Some(b'"') {
        string_start(bytes, value_end - 1)?
    } else {
        let mut start = value_end;
        while before(bytes, start)
            .is_some_and(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            start -= 1;
        }
        start
    };
    if value_start == value_end {
        return None;
    }
    let colon = trim_end(bytes, value_start);
    if before(bytes, colon)? != b':' {
        return None;
    }
    let key_end = trim_end(bytes, colon - 1);
    if before(bytes, key_end)? != b'"' {
        return None;
    }
    let key_start = string_start(bytes, key_end - 1)?;
    if !matches!(before(bytes, trim_end(bytes, key_start))?, b',' | b'{') {
        return None;
    }
    Some((
        bytes.get(key_start + 1..key_end - 1)?,
        bytes.get(value_start..value_end)?,
    ))
}

/// The byte before `end`, if there is one.
fn before(bytes: &[u8], end: usize) -> Option<u8> {
    bytes.get(end.checked_sub(1)?).copied()
}

fn trim_end(bytes: &[u8], mut end: usize) -> usize {
    while before(bytes, end).is_some_and(|b| b.is_ascii_whitespace()) {
        end -= 1;
    }
    end
}

/// The index of the opening quote of the string whose closing quote is at `close`.
fn string_start(bytes: &[u8], close: usize) -> Option<usize> {
    let mut at = close;
    while at > 0 {
        at -= 1;
        if bytes.get(at) == Some(&b'"') {
            let backslashes = bytes
                .get(..at)?
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            if backslashes % 2 == 0 {
                return Some(at);
            }
        }
    }
    None
}

/// A forward scanner over the start of a JSON text that may be cut anywhere:
/// every step answers `None` when the bytes end first.
#[derive(Debug)]
struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// The raw content of a string, without its quotes.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.at;
        loop {
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return self.bytes.get(start..self.at - 1);
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.at += 1;
                }
                // A scalar that reaches the end of the bytes may be cut.
                (self.at > start && self.at < self.bytes.len()).then_some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leading(bytes: &[u8]) -> Vec<(String, Option<String>)> {
        leading_members(bytes)
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(k).into_owned(),
                    v.map(|v| String::from_utf8_lossy(v).into_owned()),
                )
            })
            .collect()
    }

    #[test]
    fn leading_members_stop_where_the_text_is_cut() {
        let text = br#" { "jsonrpc" : "2.0", "params":{"id":9,"s":"}\"{"}, "id" : 7 , "result":{"a":"xxxx"#;
        assert_eq!(
            leading(text),
            vec![
                ("jsonrpc".into(), Some("\"2.0\"".into())),
                ("params".into(), Some(r#"{"id":9,"s":"}\"{"}"#.into())),
                ("id".into(), Some("7".into())),
                ("result".into(), None),
            ]
        );
        assert_eq!(leading(br#"{"id":12"#), vec![("id".into(), None)]);
        assert!(leading(b"[1,2]").is_empty());
        assert!(leading(b"").is_empty());
    }

    #[test]
    fn the_trailing_member_is_a_member_of_the_outermost_object() {
        assert_eq!(
            trailing_member(br#"aaaa"},"id":5}"#),
            Some((&b"id"[..], &b"5"[..]))
        );
        assert_eq!(
            trailing_member(br#"aa\"}", "id" : "b\"x" } "#),
            Some((&b"id"[..], &br#""b\"x""#[..]))
        );
        assert_eq!(
            trailing_member(br#"x","k\"ey":-1.5e3}"#),
            Some((&br#"k\"ey"#[..], &b"-1.5e3"[..]))
        );
        assert_eq!(trailing_member(br#"aaaa","params":{"id":5}}"#), None);
        assert_eq!(trailing_member(br#"aaaa","id":null}"#), None);
        assert_eq!(trailing_member(br#"aaaa","id":true}"#), None);
        assert_eq!(trailing_member(b"no brace"), None);
        assert_eq!(trailing_member(b""), None);
    }
}
