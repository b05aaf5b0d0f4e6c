//! What the bench reads of a server's line: its id and its kind, from the first
//! bytes (and the last ones), without parsing the line.
//!
//! The benchmarks must measure the servers, not the client: a 64 MiB response is
//! never parsed or even kept, only its ends. Responses of both servers put `id`
//! before `result`, so the first bytes name the response; an id after a large
//! result is found at the end of the line (`…,"id":5}`).

/// What a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A response with a result.
    Result,
    /// A response with an error.
    Error,
    /// A request or a notification of the server.
    Message,
    /// Neither could be told from the kept bytes.
    Unknown,
}

/// The id and kind of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// The integer id, when the line has one.
    pub id: Option<i64>,
    pub kind: Kind,
}

/// The head of a line from its first bytes `head` (possibly cut anywhere) and its
/// last bytes `tail`.
pub fn head(head: &[u8], tail: &[u8]) -> Head {
    let mut found = Head {
        id: None,
        kind: Kind::Unknown,
    };
    scan_members(head, &mut found);
    if found.id.is_none() && matches!(found.kind, Kind::Result | Kind::Error | Kind::Unknown) {
        found.id = id_at_end(tail);
    }
    found
}

/// Reads the top-level members in order until the id and the kind are known or
/// the bytes end.
fn scan_members(bytes: &[u8], found: &mut Head) -> Option<()> {
    let mut scan = Scanner { bytes, at: 0 };
    scan.skip_ws();
    scan.expect(b'{')?;
    loop {
        scan.skip_ws();
        let key = scan.string()?;
        scan.skip_ws();
        scan.expect(b':')?;
        scan.skip_ws();
        match key {
            b"method" => {
                found.kind = Kind::Message;
                return Some(());
            }
            b"result" | b"error" => {
                found.kind = if key == b"result" {
                    Kind::Result
                } else {
                    Kind::Error
                };
                if found.id.is_some() {
                    return Some(());
                }
                scan.skip_value()?;
            }
            b"id" => {
                let start = scan.at;
                scan.skip_value()?;
                found.id = std::str::from_utf8(&bytes[start..scan.at])
                    .ok()
                    .and_then(|text| text.parse().ok());
                if found.kind != Kind::Unknown {
                    return Some(());
                }
            }
            _ => scan.skip_value()?,
        }
        scan.skip_ws();
        if scan.expect(b',').is_none() {
            return Some(());
        }
    }
}

/// `"id":<integer>}` at the very end of a line.
fn id_at_end(bytes: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(bytes).ok()?.trim_end();
    let text = text.strip_suffix('}')?.trim_end();
    let digits_start = text
        .rfind(|c: char| !(c.is_ascii_digit() || c == '-'))
        .map_or(0, |i| i + 1);
    let id = text[digits_start..].parse().ok()?;
    let before = text[..digits_start]
        .trim_end()
        .strip_suffix(':')?
        .trim_end();
    before.ends_with("\"id\"").then_some(id)
}

/// A forward scanner over bytes that may be cut anywhere: each step answers `None`
/// when the bytes end first.
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

    /// The raw content of a string (not unescaped).
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
                            depth = depth.checked_sub(1)?;
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
                // A scalar that reaches the end of the kept bytes may be cut.
                (self.at > start && self.at < self.bytes.len()).then_some(())
            }
        }
    }
}

/// The index of the first newline in `bytes`. The fixed-size blocks let the
/// compiler compare many bytes at once: 64 MiB lines are searched at memory speed.
pub fn find_newline(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 64;
    let mut blocks = bytes.chunks_exact(BLOCK);
    let mut offset = 0;
    for block in &mut blocks {
        if block.iter().fold(false, |any, &b| any | (b == b'\n')) {
            return block.iter().position(|&b| b == b'\n').map(|i| offset + i);
        }
        offset += BLOCK;
    }
    blocks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| offset + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str) -> Head {
        head(line.as_bytes(), line.as_bytes())
    }

    #[test]
    fn responses_and_messages() {
        assert_eq!(
            of(r#"{"jsonrpc":"2.0","id":12,"result":{"content":[]}}"#),
            Head {
                id: Some(12),
                kind: Kind::Result
            }
        );
        assert_eq!(
            of(r#"{"jsonrpc":"2.0","id":-3,"error":{"code":-32601,"message":"x"}}"#),
            Head {
                id: Some(-3),
                kind: Kind::Error
            }
        );
        assert_eq!(
            of(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#).kind,
            Kind::Message
        );
        assert_eq!(
            of(r#"{"jsonrpc":"2.0","id":"b-1","method":"elicitation/create"}"#).kind,
            Kind::Message
        );
    }

    #[test]
    fn an_id_after_a_long_result_is_read_from_the_end() {
        let cut = br#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"aaaa"#;
        let tail = br#"aaaa"}]},"id":77}"#;
        assert_eq!(
            head(cut, tail),
            Head {
                id: Some(77),
                kind: Kind::Result
            }
        );
        assert_eq!(head(cut, br#"aaa","xid":77}"#).id, None);
        assert_eq!(head(b"{\"jsonrpc\":\"2.0\",\"id\":7", b"").id, None);
    }

    #[test]
    fn escaped_quotes_and_nested_values_are_skipped() {
        let line = r#"{"x":{"id":9,"s":"\"}{"},"id":4,"result":{}}"#;
        assert_eq!(of(line).id, Some(4));
    }

    #[test]
    fn finds_newlines_in_blocks_and_remainders() {
        let mut bytes = vec![b'a'; 1000];
        assert_eq!(find_newline(&bytes), None);
        bytes[999] = b'\n';
        assert_eq!(find_newline(&bytes), Some(999));
        bytes[130] = b'\n';
        assert_eq!(find_newline(&bytes), Some(130));
        assert_eq!(find_newline(b"\n"), Some(0));
        assert_eq!(find_newline(b""), None);
    }
}
