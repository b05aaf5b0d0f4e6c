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
    for (key, value) in json_shallow::head::leading_members(head) {
        match key {
            b"method" => {
                found.kind = Kind::Message;
                break;
            }
            b"result" => found.kind = Kind::Result,
            b"error" => found.kind = Kind::Error,
            b"id" => found.id = value.and_then(integer),
            _ => {}
        }
        if found.id.is_some() && found.kind != Kind::Unknown {
            break;
        }
    }
    if found.id.is_none() && matches!(found.kind, Kind::Result | Kind::Error | Kind::Unknown) {
        found.id = json_shallow::head::trailing_member(tail)
            .filter(|(key, _)| *key == b"id")
            .and_then(|(_, value)| integer(value));
    }
    found
}

fn integer(raw: &[u8]) -> Option<i64> {
    std::str::from_utf8(raw).ok()?.parse().ok()
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
