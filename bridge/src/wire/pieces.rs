//! A frame written as pieces: its envelope and small members are copied into the
//! write buffer, and a large member is written from where it already is (the line
//! it was read in), so that a 64 MiB result or argument is never copied on its way
//! through the bridge (the peak memory of a large echo).

use std::io::Write;

/// From this length on, a member's text is written from its own place instead of
/// being copied into the write buffer: above the buffer of the writer, a copy only
/// costs time and memory.
pub const LARGE_PIECE_BYTES: usize = 64 * 1024;

/// Where a frame is encoded: bytes that are copied (`io::Write`, for serde_json and
/// `write!`), and texts of the frame, which live as long as it (`'f`).
pub trait Sink<'f>: Write {
    /// The text of a member of the frame.
    fn text(&mut self, text: &'f [u8]);

    /// Bytes that are copied.
    fn bytes(&mut self, bytes: &[u8]);
}

impl<'f> Sink<'f> for Vec<u8> {
    fn text(&mut self, text: &'f [u8]) {
        self.extend_from_slice(text);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// A frame that the line writers write: encoded once, into any sink.
pub trait Encode {
    /// Appends the frame and its newline.
    fn encode<'f>(&'f self, out: &mut impl Sink<'f>);
}

/// The encoding of one frame: the write buffer, and the large texts with the
/// places in the buffer where each goes.
#[derive(Debug)]
pub struct Pieces<'b, 'f> {
    small: &'b mut Vec<u8>,
    large: Vec<(usize, &'f [u8])>,
}

impl<'b, 'f> Pieces<'b, 'f> {
    pub fn new(buffer: &'b mut Vec<u8>) -> Self {
        Self {
            small: buffer,
            large: Vec::new(),
        }
    }

    /// The large texts in order, each with the length of the buffer before it.
    pub fn into_large(self) -> Vec<(usize, &'f [u8])> {
        self.large
    }
}

impl<'f> Sink<'f> for Pieces<'_, 'f> {
    fn text(&mut self, text: &'f [u8]) {
        if text.len() >= LARGE_PIECE_BYTES {
            self.large.push((self.small.len(), text));
        } else {
            self.small.extend_from_slice(text);
        }
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.small.extend_from_slice(bytes);
    }
}

impl Write for Pieces<'_, '_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.small.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The parts of an encoded frame in the order they are written: the buffer cut at
/// the place of each large text.
pub fn in_order<'a>(small: &'a [u8], large: &'a [(usize, &'a [u8])]) -> Vec<&'a [u8]> {
    let mut parts = Vec::with_capacity(2 * large.len() + 1);
    let mut from = 0;
    for (at, text) in large {
        parts.push(small.get(from..*at).unwrap_or_default());
        parts.push(*text);
        from = *at;
    }
    parts.push(small.get(from..).unwrap_or_default());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_texts_are_kept_in_place_and_come_out_in_order() {
        let large = vec![b'x'; LARGE_PIECE_BYTES];
        let mut buffer = Vec::new();
        let mut pieces = Pieces::new(&mut buffer);
        pieces.bytes(b"{\"a\":");
        pieces.text(&large);
        pieces.bytes(b",\"b\":");
        pieces.text(b"\"small\"");
        pieces.bytes(b"}");
        let kept = pieces.into_large();
        assert_eq!(kept.len(), 1);
        assert_eq!(buffer, b"{\"a\":,\"b\":\"small\"}".to_vec());
        let written: Vec<u8> = in_order(&buffer, &kept).concat();
        let mut expected = b"{\"a\":".to_vec();
        expected.extend_from_slice(&large);
        expected.extend_from_slice(b",\"b\":\"small\"}");
        assert_eq!(written, expected);
    }

    #[test]
    fn a_text_one_byte_under_the_limit_is_copied() {
        let text = vec![b'y'; LARGE_PIECE_BYTES - 1];
        let mut buffer = Vec::new();
        let mut pieces = Pieces::new(&mut buffer);
        pieces.text(&text);
        assert!(pieces.into_large().is_empty());
        assert_eq!(buffer, text);
    }
}
