//! Reading newline-delimited lines with a limit on their length, into buffers that
//! become the lines themselves: a 64 MiB line is read straight into the memory that
//! the session then keeps, never copied out of a read buffer.
//!
//! A line over the limit is not kept: the reader keeps only its first and last
//! bytes, so that the id of the request can still be recovered for the error
//! response (`line_too_long`), and skips the rest up to the next newline.

use tokio::io::{AsyncRead, AsyncReadExt};

/// How many bytes of a too-long line are kept at each end to recover its id.
pub const KEPT_BYTES: usize = 4096;

/// The room of each read: large enough that a 64 MiB line takes few system calls.
const READ_BYTES: usize = 256 * 1024;

/// An empty read buffer above this size is released.
const KEEP_BYTES: usize = 4 * READ_BYTES;

/// One line of input.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A line within the limit, without its newline.
    Complete(Vec<u8>),
    /// A line over the limit: its length and the bytes kept at both ends.
    TooLong {
        length: usize,
        head: Vec<u8>,
        tail: Vec<u8>,
    },
}

/// Reads lines of at most `max_line_bytes` bytes (the newline not counted).
#[derive(Debug)]
pub struct LineReader<R> {
    reader: R,
    /// Bytes read and not yet returned: `buffer[start..]`.
    buffer: Vec<u8>,
    start: usize,
    /// Up to here, `buffer` holds no newline after `start`.
    searched: usize,
    at_end: bool,
    max_line_bytes: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(reader: R, max_line_bytes: usize) -> Self {
        Self {
            reader,
            buffer: Vec::new(),
            start: 0,
            searched: 0,
            at_end: false,
            max_line_bytes,
        }
    }

    /// The next line, or `None` at the end of the stream. A last line without a
    /// newline counts as a line.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut overflow: Option<Overflow> = None;
        loop {
            let unsearched = self.buffer.get(self.searched..).unwrap_or_default();
            if let Some(at) = memchr::memchr(b'\n', unsearched) {
                let end = self.searched + at;
                if let Some(over) = &mut overflow {
                    over.push(self.buffer.get(self.start..end).unwrap_or_default());
                    self.consume_to(end + 1);
                    return Ok(finish(Vec::new(), overflow, false, self.max_line_bytes));
                }
                let line = self.take_line(end);
                return Ok(finish(line, None, false, self.max_line_bytes));
            }
            self.searched = self.buffer.len();
            // One byte of room for the CR of a CRLF ending, which is not part of
            // the line; `finish` checks the limit without it.
            let pending = self.buffer.get(self.start..).unwrap_or_default();
            if overflow.is_some() || pending.len() > self.max_line_bytes.saturating_add(1) {
                match &mut overflow {
                    Some(over) => over.push(pending),
                    None => overflow = Some(Overflow::of(pending)),
                }
                self.consume_to(self.buffer.len());
            }
            if self.at_end {
                let rest = self.take_line(self.buffer.len());
                return Ok(finish(rest, overflow, true, self.max_line_bytes));
            }
            self.read_more().await?;
        }
    }

    /// Reads what the stream has into the room after the pending bytes, which
    /// move to the front first: a long line grows in place, in one buffer.
    async fn read_more(&mut self) -> std::io::Result<()> {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.searched -= self.start;
            self.start = 0;
        }
        self.buffer.reserve(READ_BYTES);
        if self.reader.read_buf(&mut self.buffer).await? == 0 {
            self.at_end = true;
        }
        Ok(())
    }

    /// The pending bytes up to `end` (the newline, not part of the line), and the
    /// reader past that newline. A line that fills most of the buffer takes the
    /// buffer itself and leaves the few bytes after it in a new one; a short line
    /// is copied out, and the buffer stays for the next reads.
    fn take_line(&mut self, end: usize) -> Vec<u8> {
        let after = (end + 1).min(self.buffer.len());
        let rest = self.buffer.len() - after;
        if self.start == 0 && end >= READ_BYTES && rest < end {
            let rest = self.buffer.get(after..).unwrap_or_default().to_vec();
            let mut line = std::mem::replace(&mut self.buffer, rest);
            line.truncate(end);
            self.searched = 0;
            return line;
        }
        let line = self
            .buffer
            .get(self.start..end)
            .unwrap_or_default()
            .to_vec();
        self.consume_to(after);
        line
    }

    /// Forgets the pending bytes before `at`. An empty buffer that grew for a
    /// long line (one over the limit, or one that was copied out) is released,
    /// so that one large line does not keep its memory for the rest of the session.
    fn consume_to(&mut self, at: usize) {
        if at >= self.buffer.len() {
            if self.buffer.capacity() > KEEP_BYTES {
                self.buffer = Vec::new();
            }
            self.buffer.clear();
            self.start = 0;
            self.searched = 0;
        } else {
            self.start = at;
            self.searched = self.searched.max(at);
        }
    }
}

fn finish(
    mut line: Vec<u8>,
    overflow: Option<Overflow>,
    at_end: bool,
    max_line_bytes: usize,
) -> Option<Line> {
    if let Some(over) = overflow {
        return Some(over.into_line());
    }
    if at_end && line.is_empty() {
        return None;
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.len() > max_line_bytes {
        return Some(Overflow::start(line).into_line());
    }
    Some(Line::Complete(line))
}

/// The ends of a line that went over the limit.
struct Overflow {
    length: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl Overflow {
    /// The ends of `first`, the start of a line that went over the limit.
    fn of(first: &[u8]) -> Self {
        let kept = first.len().min(KEPT_BYTES);
        Self {
            length: first.len(),
            head: first.get(..kept).unwrap_or_default().to_vec(),
            tail: first.get(first.len() - kept..).unwrap_or_default().to_vec(),
        }
    }

    fn start(mut first: Vec<u8>) -> Self {
        let length = first.len();
        let tail = first
            .get(first.len().saturating_sub(KEPT_BYTES)..)
            .unwrap_or_default()
            .to_vec();
        first.truncate(KEPT_BYTES);
        first.shrink_to_fit();
        Self {
            length,
            head: first,
            tail,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        self.length += chunk.len();
        if self.head.len() < KEPT_BYTES {
            let room = KEPT_BYTES - self.head.len();
            self.head
                .extend_from_slice(chunk.get(..chunk.len().min(room)).unwrap_or(chunk));
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > 2 * KEPT_BYTES {
            self.tail.drain(..self.tail.len() - KEPT_BYTES);
        }
    }

    fn into_line(mut self) -> Line {
        // The CR of a CRLF ending is not part of the line.
        if self.tail.last() == Some(&b'\r') {
            self.tail.pop();
            // A head that holds the whole line holds the CR too.
            if self.head.len() == self.length {
                self.head.pop();
            }
            self.length = self.length.saturating_sub(1);
        }
        if self.tail.len() > KEPT_BYTES {
            self.tail.drain(..self.tail.len() - KEPT_BYTES);
        }
        Line::TooLong {
            length: self.length,
            head: self.head,
            tail: self.tail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::ReadBuf;

    /// A stream that gives at most `chunk` bytes a read, as a pipe does.
    struct Chunked {
        bytes: Vec<u8>,
        at: usize,
        chunk: usize,
    }

    impl AsyncRead for Chunked {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            out: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let end = (self.at + self.chunk)
                .min(self.bytes.len())
                .min(self.at + out.remaining());
            let part = self.bytes[self.at..end].to_vec();
            out.put_slice(&part);
            self.at = end;
            Poll::Ready(Ok(()))
        }
    }

    async fn read_all(bytes: &[u8], chunk: usize, max: usize) -> Vec<Line> {
        let stream = Chunked {
            bytes: bytes.to_vec(),
            at: 0,
            chunk,
        };
        let mut reader = LineReader::new(stream, max);
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            lines.push(line);
        }
        lines
    }

    /// Short lines, a line of `long` bytes, one of `too_long` bytes, and a last
    /// line without a newline.
    fn input_of(long: usize, too_long: usize) -> Vec<u8> {
        let mut input = b"{\"a\":1}\r\n\n".to_vec();
        input.extend(std::iter::repeat_n(b'l', long));
        input.extend_from_slice(b"\nshort\n");
        input.extend(std::iter::repeat_n(b't', too_long));
        input.extend_from_slice(b"\nlast");
        input
    }

    #[tokio::test]
    async fn a_line_over_the_limit_leaves_no_large_buffer_behind() {
        let mut input = vec![b'x'; 12 * READ_BYTES];
        input.extend_from_slice(b"\nok\n");
        let stream = Chunked {
            bytes: input,
            at: 0,
            chunk: READ_BYTES,
        };
        let mut reader = LineReader::new(stream, 6 * READ_BYTES);
        let first = reader.next_line().await.unwrap();
        assert!(matches!(first, Some(Line::TooLong { length, .. }) if length == 12 * READ_BYTES));
        assert!(reader.buffer.capacity() <= KEEP_BYTES);
        assert_eq!(
            reader.next_line().await.unwrap(),
            Some(Line::Complete(b"ok".to_vec()))
        );
    }

    /// The lines come out the same whatever the reads give, from 1 byte on. One
    /// byte a read through megabytes is slow: the small reads get a smaller input
    /// of the same shape, whose long line fits one read.
    #[tokio::test]
    async fn lines_come_out_the_same_whatever_the_reads() {
        for chunk in [
            1_usize,
            7,
            4096,
            READ_BYTES - 1,
            READ_BYTES + 1,
            10 * READ_BYTES,
        ] {
            let (long, too_long, max) = if chunk < 4096 {
                (3000, 5000, 4000)
            } else {
                (3 * READ_BYTES + 17, 5 * READ_BYTES, 4 * READ_BYTES)
            };
            let got = read_all(&input_of(long, too_long), chunk, max).await;
            assert_eq!(got.len(), 6, "chunk {chunk}");
            assert_eq!(
                got[0],
                Line::Complete(b"{\"a\":1}".to_vec()),
                "chunk {chunk}"
            );
            assert_eq!(got[1], Line::Complete(Vec::new()), "chunk {chunk}");
            assert_eq!(got[2], Line::Complete(vec![b'l'; long]), "chunk {chunk}");
            assert_eq!(got[3], Line::Complete(b"short".to_vec()), "chunk {chunk}");
            let Line::TooLong { length, head, tail } = &got[4] else {
                panic!("chunk {chunk}: {:?}", got[4]);
            };
            assert_eq!(*length, too_long, "chunk {chunk}");
            assert_eq!(
                (head.len(), tail.len()),
                (KEPT_BYTES, KEPT_BYTES),
                "chunk {chunk}"
            );
            assert_eq!(got[5], Line::Complete(b"last".to_vec()), "chunk {chunk}");
        }
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
}
