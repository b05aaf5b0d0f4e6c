//! Newline-delimited JSON over a byte stream: the line writer, the parse of a line,
//! and the recovery of the id of a line that is not a frame. The reader, with the
//! limit on the length of a line, is `line_reader`.

use super::pieces::{self, Encode, Pieces, Sink};
use serde_json::Value;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};

pub use super::line_reader::{KEPT_BYTES, Line, LineReader};

/// The maximum nesting of a frame: the recursion limit of serde_json, which refuses
/// deeper frames without using the stack.
pub const MAX_DEPTH: usize = 127;

/// The levels of nesting of a value: 0 for a scalar, 1 for `[]` or `{}`. The
/// recursion is bounded: every value of a peer was parsed within [`MAX_DEPTH`].
pub fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Why a line is not a frame.
#[derive(Debug, PartialEq, Eq)]
pub enum ParseFailure {
    /// Not JSON (also invalid UTF-8).
    NotJson,
    /// JSON nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

/// Parses one line. Blank lines are `Ok(None)`.
pub fn parse(line: &[u8]) -> Result<Option<Value>, ParseFailure> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(line)
        .map(Some)
        .map_err(|error| failure_of(&error).unwrap_or(ParseFailure::NotJson))
}

/// The failure of a parse that is not about the shape of the value: `None` for a
/// JSON text that parsed but did not fit (a member twice).
pub fn failure_of(error: &serde_json::Error) -> Option<ParseFailure> {
    if error.to_string().starts_with("recursion limit exceeded") {
        Some(ParseFailure::TooDeep)
    } else if error.is_data() {
        None
    } else {
        Some(ParseFailure::NotJson)
    }
}

/// A write buffer above this size is released after its frame, so that one large
/// frame does not keep its memory for the rest of the session.
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// The buffer between the frames and the output.
const OUTPUT_BUFFER_BYTES: usize = 64 * 1024;

/// What [`LineWriter::write_now`] did with a frame.
#[derive(Debug, PartialEq, Eq)]
pub enum WrittenNow {
    /// The frame is written and flushed.
    Done,
    /// The frame is encoded in the writer, and the output took only part of it or
    /// none: [`LineWriter::finish`] writes the rest, without the frame.
    Unfinished,
    /// Nothing was kept: the frame has a large member, which is written from the
    /// frame itself ([`LineWriter::write`]).
    NotNow,
}

/// Writes frames as lines: buffered, flushed when no more frames wait, through a
/// frame buffer that a large frame does not keep.
#[derive(Debug)]
pub struct LineWriter<W: AsyncWrite> {
    output: BufWriter<W>,
    buffer: Vec<u8>,
    /// `buffer` holds a frame of [`Self::write_now`] that is still to be written.
    unwritten: bool,
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    pub fn new(output: W) -> Self {
        Self {
            output: BufWriter::with_capacity(OUTPUT_BUFFER_BYTES, output),
            buffer: Vec::new(),
            unwritten: false,
        }
    }

    /// Writes and flushes `frame` without a wait, for a writer with nothing left
    /// to write: a frame that fits the output buffer goes into it whole, and the
    /// output takes what it can at once. A larger frame stays encoded for
    /// [`Self::finish`], so that it is encoded once; one with a large member is not
    /// kept (`NotNow`), so that the member is still written from where it is.
    pub fn write_now(&mut self, frame: &impl Encode) -> std::io::Result<WrittenNow> {
        self.buffer.clear();
        let mut pieces = Pieces::new(&mut self.buffer);
        frame.encode(&mut pieces);
        if !pieces.into_large().is_empty() {
            return Ok(WrittenNow::NotNow);
        }
        let room = OUTPUT_BUFFER_BYTES.saturating_sub(self.output.buffer().len());
        if self.buffer.len() > room {
            self.unwritten = true;
            return Ok(WrittenNow::Unfinished);
        }
        // A frame that fits is copied whole into the buffer, without a write;
        // the flush then writes what the output takes and keeps the rest.
        let mut context = Context::from_waker(Waker::noop());
        match Pin::new(&mut self.output).poll_write(&mut context, &self.buffer) {
            Poll::Ready(Ok(copied)) if copied == self.buffer.len() => {}
            Poll::Ready(Ok(_)) => return Err(std::io::ErrorKind::WriteZero.into()),
            Poll::Ready(Err(error)) => return Err(error),
            Poll::Pending => {
                self.unwritten = true;
                return Ok(WrittenNow::Unfinished);
            }
        }
        match Pin::new(&mut self.output).poll_flush(&mut context) {
            Poll::Ready(Ok(())) => Ok(WrittenNow::Done),
            Poll::Ready(Err(error)) => Err(error),
            Poll::Pending => Ok(WrittenNow::Unfinished),
        }
    }

    /// Writes what [`Self::write_now`] left, and flushes.
    pub async fn finish(&mut self) -> std::io::Result<()> {
        if std::mem::take(&mut self.unwritten) {
            self.output.write_all(&self.buffer).await?;
            if self.buffer.capacity() > KEEP_BUFFER_BYTES {
                self.buffer = Vec::new();
            }
        }
        self.output.flush().await
    }

    /// Writes `frame` as `encode` appends it. A frame whose encoding is all in the
    /// buffer goes before its bytes are written, so that the two are not in memory
    /// together for long; the large texts of a frame (a 64 MiB argument or result)
    /// are written from the frame itself, never copied. `flush` when no other frame
    /// waits.
    pub async fn write(&mut self, frame: impl Encode, flush: bool) -> std::io::Result<()> {
        self.buffer.clear();
        let mut pieces = Pieces::new(&mut self.buffer);
        frame.encode(&mut pieces);
        let large = pieces.into_large();
        if large.is_empty() {
            drop(large);
            drop(frame);
            self.output.write_all(&self.buffer).await?;
        } else {
            for part in pieces::in_order(&self.buffer, &large) {
                self.output.write_all(part).await?;
            }
            drop(large);
            drop(frame);
        }
        if flush {
            self.output.flush().await?;
        }
        if self.buffer.capacity() > KEEP_BUFFER_BYTES {
            self.buffer = Vec::new();
        }
        Ok(())
    }

    /// Writes what is buffered.
    pub async fn flush(&mut self) -> std::io::Result<()> {
        self.output.flush().await
    }

    /// Writes what is buffered and ends the output (the end of input for a peer).
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        self.output.shutdown().await
    }
}

/// One frame and its newline. serde_json escapes every control character inside
/// strings, so the frame never holds a newline of its own.
impl Encode for Value {
    fn encode<'f>(&'f self, out: &mut impl Sink<'f>) {
        // Writing into a buffer cannot fail, and a Value always serializes.
        if serde_json::to_writer(&mut *out, self).is_ok() {
            out.bytes(b"\n");
        }
    }
}

/// The id of a whole line that is not a frame (not JSON, or too deep), from its
/// ends as a too-long line keeps them.
pub fn recover_id_of_line(line: &[u8]) -> Option<Value> {
    let kept = line.len().min(KEPT_BYTES);
    let head = line.get(..kept).unwrap_or_default();
    let tail = line.get(line.len() - kept..).unwrap_or_default();
    recover_id(head, tail)
}

/// Recovers the top-level `id` of a frame from the kept ends of a too-long line:
/// from its start when `id` comes early, else from its end when `id` is the last
/// member (`…,"id":5}`).
pub fn recover_id(head: &[u8], tail: &[u8]) -> Option<Value> {
    let valid_id = |raw: &[u8]| {
        serde_json::from_slice::<Value>(raw)
            .ok()
            .filter(super::frame::is_valid_id)
    };
    let from_head = json_shallow::head::leading_members(head).find(|(key, _)| *key == b"id");
    match from_head {
        Some((_, value)) => value.and_then(valid_id),
        None => json_shallow::head::trailing_member(tail)
            .filter(|(key, _)| *key == b"id")
            .and_then(|(_, value)| valid_id(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_frame_larger_than_the_buffer_is_encoded_once_and_finished_whole() {
        let frame = json!({"id": 1, "text": "y".repeat(2 * OUTPUT_BUFFER_BYTES)});
        let mut writer = LineWriter::new(Vec::new());
        assert_eq!(writer.write_now(&frame).unwrap(), WrittenNow::Unfinished);
        assert!(writer.output.get_ref().is_empty());
        writer.finish().await.unwrap();
        // A second finish has nothing left to write.
        writer.finish().await.unwrap();
        let mut expected = serde_json::to_vec(&frame).unwrap();
        expected.push(b'\n');
        assert_eq!(writer.output.get_ref(), &expected);
    }

    #[tokio::test]
    async fn a_small_frame_is_written_and_flushed_at_once() {
        let frame = json!({"id": 2});
        let mut writer = LineWriter::new(Vec::new());
        assert_eq!(writer.write_now(&frame).unwrap(), WrittenNow::Done);
        assert_eq!(writer.output.get_ref(), b"{\"id\":2}\n");
    }

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_strips_carriage_returns() {
        let got = lines(b"{\"a\":1}\r\n\n{\"b\":2}", 100).await;
        assert_eq!(
            got,
            vec![
                Line::Complete(b"{\"a\":1}".to_vec()),
                Line::Complete(vec![]),
                Line::Complete(b"{\"b\":2}".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn a_line_at_the_limit_passes_and_one_byte_more_does_not() {
        let got = lines(b"12345\n123456\nok\n", 5).await;
        assert_eq!(got[0], Line::Complete(b"12345".to_vec()));
        assert!(matches!(&got[1], Line::TooLong { length: 6, .. }));
        assert_eq!(got[2], Line::Complete(b"ok".to_vec()));
    }

    #[tokio::test]
    async fn the_cr_of_a_crlf_ending_does_not_count_toward_the_limit() {
        let got = lines(b"12345\r\n123456\r\n12345\r", 5).await;
        assert_eq!(got[0], Line::Complete(b"12345".to_vec()));
        assert!(matches!(&got[1], Line::TooLong { length: 6, .. }));
        assert_eq!(got[2], Line::Complete(b"12345".to_vec()));
        // A CR that is not at the end counts.
        let got = lines(b"1234\r5\n", 5).await;
        assert!(matches!(&got[0], Line::TooLong { length: 6, .. }));
        // The kept ends of a short line over the limit leave the CR out too
        // (found by the fuzz target line_codec).
        let got = lines(b"0\r\r", 1).await;
        assert_eq!(
            got[0],
            Line::TooLong {
                length: 2,
                head: b"0\r".to_vec(),
                tail: b"0\r".to_vec()
            }
        );
    }

    #[tokio::test]
    async fn a_long_line_keeps_only_its_ends() {
        let mut input = br#"{"jsonrpc":"2.0","method":"x","params":{"t":""#.to_vec();
        input.extend(std::iter::repeat_n(b'a', 1_000_000));
        input.extend_from_slice(br#""},"id":42}"#);
        input.push(b'\n');
        input.extend_from_slice(b"{}\n");
        let got = lines(&input, 1000).await;
        let Line::TooLong { length, head, tail } = &got[0] else {
            panic!("{got:?}")
        };
        assert_eq!(*length, input.len() - 4);
        assert!(head.len() <= KEPT_BYTES && tail.len() <= KEPT_BYTES);
        assert_eq!(recover_id(head, tail), Some(json!(42)));
        assert_eq!(got[1], Line::Complete(b"{}".to_vec()));
    }

    #[test]
    fn recovers_the_id_at_the_start() {
        let head = br#"{"jsonrpc":"2.0","id":"req-1","method":"tools/call","params":{"x":"aaaa"#;
        assert_eq!(recover_id(head, b""), Some(json!("req-1")));
        let head = br#" { "method" : "a", "params":{"id":9,"s":"}\"{"}, "id" : 7 , "x"#;
        assert_eq!(recover_id(head, b""), Some(json!(7)));
    }

    #[test]
    fn recovers_the_id_at_the_end_only_at_the_top_level() {
        assert_eq!(recover_id(b"", br#"aaaa"},"id":5}"#), Some(json!(5)));
        assert_eq!(
            recover_id(b"", br#"aa\"}", "id" : "b\"x" } "#),
            Some(json!("b\"x"))
        );
        assert_eq!(recover_id(b"", br#"aaaa","params":{"id":5}}"#), None);
        assert_eq!(recover_id(b"", br#"aaaa","xid":5}"#), None);
        assert_eq!(recover_id(b"", br#"aaaa","id":null}"#), None);
    }

    #[test]
    fn a_cut_scalar_is_not_an_id() {
        assert_eq!(recover_id(br#"{"id":12"#, b""), None);
        assert_eq!(recover_id(br#"{"params":{"a":"#, b""), None);
    }

    #[test]
    fn parse_tells_deep_frames_from_broken_ones() {
        assert_eq!(parse(b"  "), Ok(None));
        assert_eq!(parse(b"{\"a\":"), Err(ParseFailure::NotJson));
        assert_eq!(parse(b"\xff\xfe"), Err(ParseFailure::NotJson));
        assert_eq!(parse(br#"{"a":"\xff"}"#), Err(ParseFailure::NotJson));
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(parse(deep.as_bytes()), Err(ParseFailure::TooDeep));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(ok.as_bytes()).is_ok());
    }

    #[test]
    fn encoded_frames_are_one_line() {
        let mut out = Vec::new();
        json!({"text": "a\nb\r\u{2028}"}).encode(&mut out);
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(out.last(), Some(&b'\n'));
    }
}
