//! The first line of the client, which selects the path of the connection.

use crate::catalogue::EmbedRouterWarning;
use crate::log::emit;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// What the first line asks for.
#[derive(Debug, PartialEq)]
pub(crate) enum First {
    /// `initialize`: the bridge.
    Initialize,
    /// `server/discover` with this id: no path yet.
    Discover(Value),
    /// Anything else, also a line that is not JSON-RPC: the server's own stdio.
    Other,
}

/// Classifies one line. Only the members that decide are read; the rest is skipped.
pub(crate) fn classify(line: &[u8]) -> First {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow, default)]
        method: Option<Cow<'a, str>>,
        #[serde(default)]
        id: Option<Value>,
    }
    let Ok(head) = serde_json::from_slice::<Head<'_>>(line) else {
        return First::Other;
    };
    let id = head
        .id
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64());
    match (head.method.as_deref(), id) {
        (Some("initialize"), Some(_)) => First::Initialize,
        (Some("server/discover"), Some(id)) => First::Discover(id),
        _ => First::Other,
    }
}

/// Reads the next line that is not blank, without its end of line. A line longer
/// than `max` bytes is dropped without a response (the contract: "On the first
/// line ... serveStdio drops it"). `None` at the end of input; a last line without
/// a newline counts as a line.
pub(crate) async fn read<R>(reader: &mut R, max: usize) -> std::io::Result<Option<Vec<u8>>>
where
    R: AsyncBufRead + Unpin,
{
    let mut line = Vec::new();
    let mut discarding = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            let blank = line.iter().all(u8::is_ascii_whitespace);
            return Ok((!discarding && !blank).then_some(line));
        }
        let newline = memchr::memchr(b'\n', available);
        let (take, ends) = match newline {
            Some(at) => (at, true),
            None => (available.len(), false),
        };
        if !discarding {
            if line.len().saturating_add(take) > max {
                discarding = true;
                line = Vec::new();
                // The form of the contract's `mcp_router` line for a dropped frame.
                emit!(EmbedRouterWarning::FirstLineTooLong { n: max });
            } else {
                line.extend_from_slice(available.get(..take).unwrap_or_default());
            }
        }
        reader.consume(if ends { take + 1 } else { take });
        if ends {
            if !discarding && !line.iter().all(u8::is_ascii_whitespace) {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(line));
            }
            discarding = false;
            line.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_line_selects_the_path() {
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            First::Initialize
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":"d","method":"server/discover"}"#),
            First::Discover(json!("d"))
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#),
            First::Other
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"initialize"}"#),
            First::Other
        );
        assert_eq!(classify(b"garbage"), First::Other);
        assert_eq!(classify(br#"[1,2]"#), First::Other);
    }

    #[tokio::test]
    async fn a_first_line_that_is_too_long_or_blank_is_dropped() {
        let input = b"\n  \r\n0123456789ABC\n{\"id\":1}\r\nrest".to_vec();
        let mut reader = tokio::io::BufReader::with_capacity(4, &input[..]);
        let line = read(&mut reader, 10).await.unwrap();
        assert_eq!(line.as_deref(), Some(&b"{\"id\":1}"[..]));
        let line = read(&mut reader, 10).await.unwrap();
        assert_eq!(line.as_deref(), Some(&b"rest"[..]));
        assert_eq!(read(&mut reader, 10).await.unwrap(), None);
    }
}
