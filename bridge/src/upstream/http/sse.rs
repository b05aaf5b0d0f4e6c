//! Server-Sent Events, read as they arrive (the response streams of Streamable HTTP).
//!
//! Only what MCP uses: `data:` lines make the event (several are joined with a
//! newline), a blank line ends it, comment lines (`:`) are keep-alives and are
//! ignored, and `event:`, `id:` and `retry:` carry nothing the bridge needs. The
//! size limit applies to one event (`--max-response-bytes`), so a stream can run
//! for hours while no event is ever held whole beyond the limit.

/// Why the stream cannot be read on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("an event of the stream is longer than --max-response-bytes ({limit} bytes)")]
    TooLarge { limit: usize },
}

/// Splits the bytes of a stream into the data of its events.
#[derive(Debug)]
pub struct SseReader {
    /// The bytes of the line that is not complete yet.
    line: Vec<u8>,
    /// The data of the event so far.
    data: Vec<u8>,
    /// Whether the event has a `data` field (an empty `data:` is an event too).
    has_data: bool,
    limit: usize,
    /// A CR ended the last chunk: an LF at the start of the next one belongs to it.
    after_cr: bool,
}

impl SseReader {
    pub fn new(limit: usize) -> Self {
        Self {
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            limit,
            after_cr: false,
        }
    }

    /// Reads one chunk and hands the data of each complete event to `event`.
    pub fn feed(&mut self, chunk: &[u8], mut event: impl FnMut(Vec<u8>)) -> Result<(), SseError> {
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(after) = rest.strip_prefix(b"\n") {
                rest = after;
            }
        }
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (line, tail) = rest.split_at(end);
            self.extend_line(line)?;
            let ending = tail.first().copied();
            rest = tail.get(1..).unwrap_or_default();
            if ending == Some(b'\r') {
                match rest.first() {
                    Some(b'\n') => rest = rest.get(1..).unwrap_or_default(),
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(data) = self.end_line(&line)? {
                event(data);
            }
        }
        self.extend_line(rest)
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > self.limit.saturating_add(b"data: ".len()) {
            return Err(SseError::TooLarge { limit: self.limit });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// One complete line; the data of the event when the line ends it.
    fn end_line(&mut self, line: &[u8]) -> Result<Option<Vec<u8>>, SseError> {
        if line.is_empty() {
            if !self.has_data {
                return Ok(None);
            }
            self.has_data = false;
            return Ok(Some(std::mem::take(&mut self.data)));
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            // A comment: a keep-alive.
            Some(0) => return Ok(None),
            Some(colon) => {
                let (field, value) = line.split_at(colon);
                let value = value.get(1..).unwrap_or_default();
                (field, value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if field == b"data" {
            let extra = usize::from(self.has_data);
            if self.data.len() + extra + value.len() > self.limit {
                return Err(SseError::TooLarge { limit: self.limit });
            }
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(limit: usize, chunks: &[&[u8]]) -> Result<Vec<String>, SseError> {
        let mut reader = SseReader::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            reader.feed(chunk, |data| out.push(String::from_utf8(data).unwrap()))?;
        }
        Ok(out)
    }

    #[test]
    fn events_end_at_a_blank_line_and_comments_are_keep_alives() {
        let stream: &[u8] = b": keep-alive\n\nevent: message\ndata: {\"a\":1}\n\n:\r\n\r\ndata: x\r\ndata: y\r\n\r\n";
        assert_eq!(events(1024, &[stream]).unwrap(), vec!["{\"a\":1}", "x\ny"]);
    }

    #[test]
    fn an_event_may_arrive_in_pieces_split_anywhere() {
        let stream: &[u8] = b"id: 1\r\ndata: {\"jsonrpc\":\"2.0\"}\r\n\r\ndata:second\n\n";
        let whole = events(1024, &[stream]).unwrap();
        for split in 0..stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(events(1024, &[a, b]).unwrap(), whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(1024, &bytes).unwrap(), whole);
        assert_eq!(whole, vec!["{\"jsonrpc\":\"2.0\"}", "second"]);
    }

    #[test]
    fn a_stream_without_a_blank_line_gives_no_event() {
        assert!(events(1024, &[b"data: not ended"]).unwrap().is_empty());
        assert!(events(1024, &[b"retry: 10\n\n"]).unwrap().is_empty());
    }

    #[test]
    fn an_event_over_the_limit_is_refused_however_it_arrives() {
        assert_eq!(
            events(4, &[b"data: 12345\n\n"]),
            Err(SseError::TooLarge { limit: 4 })
        );
        assert_eq!(events(5, &[b"data: 12345\n\n"]).unwrap(), vec!["12345"]);
        assert_eq!(
            events(4, &[b"data: 12\ndata: 34\n\n"]),
            Err(SseError::TooLarge { limit: 4 })
        );
        let long = vec![b'x'; 100];
        assert_eq!(
            events(10, &[b"data: ", &long]),
            Err(SseError::TooLarge { limit: 10 })
        );
    }
}
