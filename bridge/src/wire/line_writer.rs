//! Writing frames as newline-delimited lines over a byte stream: buffered, flushed
//! when no more frames wait, each frame encoded once. The reader, with the limit on
//! the length of a line, is `line_reader`; the parse of a line is `frame`.

use super::pieces::{self, Encode, Pieces, Sink};
use serde_json::Value;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};

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

    #[test]
    fn encoded_frames_are_one_line() {
        let mut out = Vec::new();
        json!({"text": "a\nb\r\u{2028}"}).encode(&mut out);
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(out.last(), Some(&b'\n'));
    }
}
