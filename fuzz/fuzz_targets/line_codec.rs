//! The line codec: lines, the limit, the kept ends of a long line, the parse, and
//! the recovery of the id from the ends of a line.
//!
//! The lines must equal a split at each newline (less one CR at the end), a line
//! over the limit must keep its true ends, and an id recovered from a JSON object
//! must be that object's id. A line that the one-level reading takes for a clean
//! response or request must be one for the full parse too, with the same id, or
//! JSON text that only serde_json's tree refuses (a number out of range, a lone
//! surrogate), which the one-level reading passes on as it came. The reading
//! functions of both directions, which read each line once, must give what the
//! full parse gives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_bridge_vscode::internals::wire::frame::{self, LineFailure, Message, Outcome, ParseFailure};
use mcp_bridge_vscode::internals::wire::id::recover_id;
use mcp_bridge_vscode::internals::wire::line_reader::{Line, LineReader};
use mcp_bridge_vscode::internals::wire::raw::{self, ClientLine, UpstreamLine};
use serde_json::Value;

/// Whether the full parse refused a line that is JSON text all the same.
fn only_the_tree_refuses(text: &str, full: &Result<Option<Message>, LineFailure>) -> bool {
    matches!(full, Err(LineFailure::Parse(ParseFailure::NotJson)))
        && serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok()
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Some(response) = raw::clean_response(text)
    {
        match Message::parse(data) {
            Ok(Some(Message::Response(full))) => {
                assert_eq!(full.id.as_u64(), Some(response.id));
                assert!(matches!(full.outcome, Outcome::Result(Value::Object(_))));
            }
            other if only_the_tree_refuses(text, &other) => {}
            other => panic!("read as a clean response, parsed as {other:?}"),
        }
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Some(request) = raw::clean_request(text)
    {
        match Message::parse(data) {
            Ok(Some(Message::Request(full))) => {
                assert_eq!(full.id, request.id);
                assert_eq!(full.method, request.method);
                let params = request
                    .params
                    .map(|params| params.to_map().expect("the full parse took these params"));
                assert_eq!(full.params, params);
            }
            other if only_the_tree_refuses(text, &other) => {}
            other => panic!("read as a clean request, parsed as {other:?}"),
        }
    }
    check_read_once(data);
    let Some((&first, input)) = data.split_first() else {
        return;
    };
    // Small limits reach the overflow path; 4096 is the size of the kept ends.
    let max = if first == 255 {
        4096
    } else {
        usize::from(first % 64) + 1
    };
    let lines = futures::executor::block_on(async {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.expect("a slice never fails") {
            out.push(line);
        }
        out
    });
    let mut expected: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if input.is_empty() || input.ends_with(b"\n") {
        expected.pop();
    }
    assert_eq!(lines.len(), expected.len(), "the number of lines");
    for (line, raw) in lines.iter().zip(expected) {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        match line {
            Line::Complete(bytes) => {
                assert!(bytes.len() <= max);
                assert_eq!(bytes.as_slice(), raw);
            }
            Line::TooLong { length, head, tail } => {
                assert!(raw.len() > max, "a line within the limit is too long");
                assert_eq!(*length, raw.len());
                assert!(raw.starts_with(head) && raw.ends_with(tail));
                assert!(head.len() <= 4096 && tail.len() <= 4096);
                check_recovered_id(raw, recover_id(head, tail));
            }
        }
        let _ = frame::parse(raw);
    }
    // The whole input as one line, as the reader of the client recovers it.
    let kept = input.len().min(4096);
    let recovered = recover_id(&input[..kept], &input[input.len() - kept..]);
    check_recovered_id(input, recovered);
});

/// An id recovered from a JSON object with one `"id"` key is that object's id.
fn check_recovered_id(raw: &[u8], recovered: Option<Value>) {
    let Some(recovered) = recovered else {
        return;
    };
    assert!(recovered.is_string() || recovered.is_number());
    let once = raw.windows(4).filter(|w| w == b"\"id\"").count() == 1;
    if let (true, Ok(Value::Object(object))) = (once, serde_json::from_slice::<Value>(raw)) {
        assert_eq!(
            object.get("id"),
            Some(&recovered),
            "a wrong id was recovered"
        );
    }
}

/// The one reading of each direction gives what the full parse gives: the same
/// message, or the same failure.
fn check_read_once(line: &[u8]) {
    let full = Message::parse(line);
    let client = raw::read_client_line(line, |_| false).map(|read| {
        read.map(|read| match read {
            ClientLine::Message(message) => message,
            ClientLine::Forward(request) => panic!("forwarded no method: {request:?}"),
        })
    });
    assert_eq!(client, full, "the client's reading");
    let upstream = match raw::read_upstream_line(line.to_vec()) {
        Ok(Some(UpstreamLine::Result(result))) => result.into_message().map(Some),
        Ok(Some(UpstreamLine::Message(message))) => Ok(Some(message)),
        Ok(None) => Ok(None),
        Err(failure) => Err(failure),
    };
    let upstream = upstream.map_err(|(bytes, failure)| {
        assert_eq!(bytes, line, "the bytes of an unreadable line");
        failure
    });
    assert_eq!(upstream, full, "the upstream's reading");
}
