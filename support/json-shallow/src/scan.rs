//! The one-pass scanner: it checks JSON text exactly as serde_json's `ignore_value`
//! does (the reader behind `&RawValue`) and moves a cursor past it.
//!
//! Every method that can fail returns `Option` and leaves the cursor somewhere
//! in the text; a failure ends the whole scan, so where the cursor stops on
//! failure does not matter. The cursor never passes the end of the text: it only
//! moves past bytes that were read with `get` (or, for `+ n` moves, past bytes
//! that a `get` of that length returned).

use crate::open::OpenContainers;

/// How many words (8 bytes) of a string `string_rest` checks inline before it
/// calls the general loop: two cover most keys and short values.
const INLINE_STRING_WORDS: usize = 2;

/// The first bytes of a string are checked a word (8 bytes) at a time, with
/// arithmetic on a `u64`: most keys and values of a JSON-RPC line end within
/// them, and the words beat memchr's set-up on short strings.
const SHORT_STRING: usize = 64;

/// Longer strings are searched in blocks of this many bytes, so that the check
/// for control bytes reads what memchr has just brought into the L1 cache
/// instead of a second trip through a 64 MiB string in memory.
const STRING_BLOCK: usize = 16 * 1024;

/// The letters of the escapes that take no digits: `\" \\ \/ \b \f \n \r \t`.
static SIMPLE_ESCAPES: [bool; 256] = {
    let mut table = [false; 256];
    let letters = *b"\"\\/bfnrt";
    let mut index = 0;
    // In bounds: `index` stays under the length, and a `u8` indexes a table of 256.
    while index < letters.len() {
        table[letters[index] as usize] = true;
        index += 1;
    }
    table
};

/// Where a string ended, once the scanner has moved past its closing quote.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScannedString {
    /// The index of the closing quote: the end of the string's raw content.
    pub(crate) content_end: usize,
    /// Whether the content holds a backslash escape (and so needs decoding).
    pub(crate) escaped: bool,
}

/// A cursor over the bytes of a JSON text.
///
/// `Copy`, and the functions that are not inlined take it by value: a cursor
/// whose address never escapes stays in registers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scanner<'a> {
    bytes: &'a [u8],
    /// The index of the next byte to read; at most `bytes.len()`.
    at: usize,
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            at: 0,
        }
    }

    /// The index of the next byte to read.
    #[inline]
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    /// Whether the whole text has been read.
    #[inline]
    pub(crate) fn at_end(&self) -> bool {
        self.at >= self.bytes.len()
    }

    /// The next byte, or 0 at the end of the text. A 0 byte is refused wherever
    /// the scanner looks at a single byte (outside strings it is no JSON token,
    /// inside one it is a control byte), so the end needs no branch of its own.
    #[inline(always)]
    fn peek(&self) -> u8 {
        self.bytes.get(self.at).copied().unwrap_or(0)
    }

    /// Whether the next byte is `byte` (never 0).
    #[inline(always)]
    pub(crate) fn next_is(&self, byte: u8) -> bool {
        self.peek() == byte
    }

    /// Moves past the next byte when it is `byte`; whether it was.
    #[inline(always)]
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        // `byte` is never 0 here, so a match means the byte exists and `at < len`.
        if self.peek() == byte {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// Moves past JSON whitespace: space, tab, line feed and carriage return
    /// (not the other Unicode spaces, which serde_json refuses too).
    #[inline(always)]
    pub(crate) fn skip_whitespace(&mut self) {
        while matches!(self.peek(), b' ' | b'\n' | b'\r' | b'\t') {
            self.at += 1;
        }
    }

    /// Moves past one JSON value that starts at the cursor (the caller has
    /// skipped the whitespace before it) and nests at most `max_depth` levels.
    /// `None` when the text there is no JSON value or nests deeper.
    ///
    /// Scalars, most member values of a JSON-RPC line, are read inline; only
    /// containers pay for the call into the loop of `value_end`.
    #[inline(always)]
    pub(crate) fn value(&mut self, max_depth: usize) -> Option<()> {
        match self.peek() {
            b'{' | b'[' => self.at = self.value_end(max_depth)?,
            first => self.scalar(first)?,
        }
        Some(())
    }

    /// Moves past a string, number or literal whose first byte, `first`, is at
    /// the cursor; `None` for anything else.
    #[inline(always)]
    fn scalar(&mut self, first: u8) -> Option<()> {
        match first {
            b'"' => {
                self.at += 1;
                self.string_rest()?;
            }
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        }
        Some(())
    }

    /// `value` on a copy of the cursor: the index just past the value.
    ///
    /// A loop with an explicit stack instead of recursion, so that a deep text
    /// cannot overflow the call stack (serde_json sets no depth limit on
    /// `ignore_value` either, so `max_depth` may be huge).
    #[inline(never)]
    fn value_end(mut self, max_depth: usize) -> Option<usize> {
        let mut open = OpenContainers::new();
        // The kind of the innermost open container, kept at hand because every
        // comma and close asks for it (meaningless while none is open).
        let mut in_array = false;
        'value: loop {
            // A value must start here.
            self.skip_whitespace();
            match self.peek() {
                opening @ (b'{' | b'[') => {
                    if open.depth() >= max_depth {
                        return None;
                    }
                    self.at += 1;
                    let is_array = opening == b'[';
                    self.skip_whitespace();
                    // An empty container is a whole value at once; only a
                    // container with members or items goes on the stack.
                    if !self.eat(if is_array { b']' } else { b'}' }) {
                        open.push(is_array);
                        in_array = is_array;
                        if !is_array {
                            self.member_key()?;
                        }
                        continue 'value;
                    }
                }
                first => self.scalar(first)?,
            }
            // A value has ended: a comma or the close of the innermost container
            // follows, or the value was the outermost one.
            loop {
                if open.depth() == 0 {
                    return Some(self.at);
                }
                self.skip_whitespace();
                if self.eat(b',') {
                    if !in_array {
                        self.skip_whitespace();
                        self.member_key()?;
                    }
                    continue 'value;
                }
                if !self.eat(if in_array { b']' } else { b'}' }) {
                    return None;
                }
                open.pop();
                in_array = open.innermost_is_array().unwrap_or(false);
            }
        }
    }

    /// Moves past a key and its colon inside a nested object: the cursor is on
    /// the key's opening quote. Nested keys are not decoded, so, as in
    /// serde_json's `ignore_str`, a lone surrogate escape is fine here.
    #[inline(always)]
    fn member_key(&mut self) -> Option<()> {
        if !self.eat(b'"') {
            return None;
        }
        self.string_rest()?;
        self.skip_whitespace();
        self.eat(b':').then_some(())
    }

    /// Moves past the rest of a string whose opening quote the cursor has passed,
    /// through its closing quote. `None` when the string does not end, holds a
    /// control byte (below 0x20), or holds an escape that JSON does not know.
    ///
    /// Inlined for the common case, a short string with no escape, that a few
    /// words settle: most keys and many values of a JSON-RPC line.
    #[inline(always)]
    pub(crate) fn string_rest(&mut self) -> Option<ScannedString> {
        let mut word_start = self.at;
        for _ in 0..INLINE_STRING_WORDS {
            let Some(word) = self.bytes.get(word_start..).and_then(<[u8]>::first_chunk) else {
                break;
            };
            let stops = stop_bytes(u64::from_le_bytes(*word));
            if stops != 0 {
                let stop = word_start + (stops.trailing_zeros() / 8) as usize;
                if self.bytes.get(stop) == Some(&b'"') {
                    self.at = stop + 1;
                    return Some(ScannedString {
                        content_end: stop,
                        escaped: false,
                    });
                }
                break;
            }
            word_start += 8;
        }
        // The bytes before `word_start` are plain: the slow path goes on from there.
        let string = Scanner {
            bytes: self.bytes,
            at: word_start,
        }
        .string_rest_slow()?;
        self.at = string.content_end + 1;
        Some(string)
    }

    /// `string_rest` for strings that are long or hold escapes, on a copy of
    /// the cursor (the closing quote is at `content_end`).
    #[inline(never)]
    fn string_rest_slow(mut self) -> Option<ScannedString> {
        let mut escaped = false;
        loop {
            // Escapes often follow each other (`\n\t\"`): a backslash right here
            // needs no search.
            if self.peek() != b'\\' {
                let rest = self.bytes.get(self.at..)?;
                self.at += plain_run(rest)?;
            }
            // `plain_run` stopped on a quote or a backslash that exists.
            if self.peek() == b'"' {
                return Some(ScannedString {
                    content_end: self.at,
                    escaped,
                });
            }
            self.at += 1;
            escaped = true;
            self.escape()?;
        }
    }

    /// Moves past the rest of an escape whose backslash the cursor has passed.
    /// `\u` takes any four hex digits: a lone surrogate is checked only where a
    /// key is decoded (as serde_json's `ignore_escape` does).
    #[inline(always)]
    fn escape(&mut self) -> Option<()> {
        let letter = self.peek();
        // A table, not a `match`: the match compiles to an indirect jump, which
        // text with many different escapes (code in a tool result) mispredicts.
        // In bounds: a `u8` indexes a table of 256.
        if SIMPLE_ESCAPES[usize::from(letter)] {
            self.at += 1;
            return Some(());
        }
        if letter != b'u' {
            return None;
        }
        let digits = self.bytes.get(self.at + 1..self.at + 5)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        self.at += 5;
        Some(())
    }

    /// Moves past `word` (`true`, `false` or `null`) when the text has it here.
    #[inline(always)]
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.bytes.get(self.at..self.at + word.len()) != Some(word) {
            return None;
        }
        self.at += word.len();
        Some(())
    }

    /// Moves past a number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    /// No range check: serde_json's `ignore_integer` takes `1e400` too.
    #[inline(always)]
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        match self.peek() {
            b'0' => {
                self.at += 1;
                // There can be only one leading zero.
                if self.peek().is_ascii_digit() {
                    return None;
                }
            }
            b'1'..=b'9' => {
                self.at += 1;
                self.digits();
            }
            _ => return None,
        }
        if self.eat(b'.') && !self.digits() {
            return None;
        }
        if matches!(self.peek(), b'e' | b'E') {
            self.at += 1;
            if matches!(self.peek(), b'+' | b'-') {
                self.at += 1;
            }
            if !self.digits() {
                return None;
            }
        }
        Some(())
    }

    /// Moves past decimal digits; whether there was at least one.
    #[inline(always)]
    fn digits(&mut self) -> bool {
        let rest = self.bytes.get(self.at..).unwrap_or_default();
        let count = rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
        self.at += count;
        count > 0
    }
}

/// The length of the run at the start of `rest` (the inside of a string) that
/// needs no attention: the index of the first quote or backslash. `None` when a
/// control byte comes first or neither comes at all.
#[inline]
fn plain_run(rest: &[u8]) -> Option<usize> {
    let mut word_start = 0;
    while word_start < SHORT_STRING {
        let stops = stop_bytes(word_at(rest, word_start));
        if stops != 0 {
            // The lowest flagged byte is the first stop (see `stop_bytes`).
            let stop = word_start + (stops.trailing_zeros() / 8) as usize;
            // A control byte, or the padding past the end: the string does not go on.
            return matches!(rest.get(stop), Some(b'"' | b'\\')).then_some(stop);
        }
        word_start += 8;
    }
    let tail = rest.get(SHORT_STRING..)?;
    long_plain_run(tail).map(|run| SHORT_STRING + run)
}

/// The 8 bytes of `bytes` from `start` as a little-endian word (the first byte
/// lowest), padded with 0 bytes past the end: a 0 is a stop byte, so a string
/// cut by the end of the text stops in the padding.
#[inline(always)]
fn word_at(bytes: &[u8], start: usize) -> u64 {
    let rest = bytes.get(start..).unwrap_or_default();
    if let Some(word) = rest.first_chunk::<8>() {
        return u64::from_le_bytes(*word);
    }
    padded_word(rest)
}

/// `rest` (under 8 bytes) padded with 0 bytes into a word: only at the end of the text.
#[cold]
fn padded_word(rest: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    for (to, from) in word.iter_mut().zip(rest) {
        *to = *from;
    }
    u64::from_le_bytes(word)
}

/// The high bit of every byte of `word` that a string scan must stop at: a
/// quote, a backslash, or a control byte (below 0x20). The classic "has zero
/// byte" trick: a flag can also appear in a byte above a flagged one (a borrow
/// runs upward), never below, so the lowest flag is always right.
#[inline(always)]
fn stop_bytes(word: u64) -> u64 {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH_BITS: u64 = ONES << 7;
    let controls = word.wrapping_sub(ONES * 0x20) & !word;
    let quotes = word ^ (ONES * u64::from(b'"'));
    let quotes = quotes.wrapping_sub(ONES) & !quotes;
    let backslashes = word ^ (ONES * u64::from(b'\\'));
    let backslashes = backslashes.wrapping_sub(ONES) & !backslashes;
    (controls | quotes | backslashes) & HIGH_BITS
}

/// `plain_run` past the first bytes: memchr finds the quote or backslash at its
/// vector speed, then one branch-free pass (which LLVM vectorizes) checks the
/// bytes before it for control bytes, a block at a time.
#[inline(never)]
fn long_plain_run(tail: &[u8]) -> Option<usize> {
    let mut block_start = 0;
    for block in tail.chunks(STRING_BLOCK) {
        let stop = memchr::memchr2(b'"', b'\\', block);
        let plain = block.get(..stop.unwrap_or(block.len()))?;
        if has_control_byte(plain) {
            return None;
        }
        if let Some(stop) = stop {
            return Some(block_start + stop);
        }
        block_start += block.len();
    }
    None
}

/// Whether `bytes` holds a byte below 0x20, which a JSON string must escape.
/// A fold with no early exit, so that it compiles to vector minimums.
#[inline]
fn has_control_byte(bytes: &[u8]) -> bool {
    bytes.iter().fold(u8::MAX, |lowest, &byte| lowest.min(byte)) < 0x20
}

#[cfg(test)]
mod tests {
    use super::{STRING_BLOCK, Scanner, plain_run, stop_bytes};

    /// The length of the value at the start of `text`, when it is one.
    fn value_len(text: &str, max_depth: usize) -> Option<usize> {
        let mut scan = Scanner::new(text);
        scan.skip_whitespace();
        scan.value(max_depth).map(|()| scan.at())
    }

    #[test]
    fn values_end_where_the_value_ends() {
        assert_eq!(value_len("1,", 0), Some(1));
        assert_eq!(value_len("-0.5e+7]", 0), Some(7));
        assert_eq!(value_len("\"a\\\"b\" ", 0), Some(6));
        assert_eq!(value_len("[1, {\"k\": [] } ] x", 3), Some(16));
        assert_eq!(value_len("[1, {\"k\": [] } ] x", 2), None);
        assert_eq!(value_len("  true", 0), Some(6));
        assert_eq!(value_len("", 5), None);
    }

    /// A control byte, a quote and a backslash are found wherever they fall:
    /// in the short loop, in the first block, across a block boundary.
    #[test]
    fn plain_runs_of_every_length() {
        for len in [
            0,
            1,
            7,
            8,
            9,
            15,
            16,
            17,
            63,
            64,
            65,
            100,
            STRING_BLOCK - 1,
            STRING_BLOCK,
            STRING_BLOCK + 17,
            STRING_BLOCK + 64,
            STRING_BLOCK + 65,
        ] {
            for (stop, expected) in [(b'"', Some(len)), (b'\\', Some(len)), (b'\n', None)] {
                let mut bytes = vec![b'x'; len];
                bytes.push(stop);
                bytes.push(b'"');
                assert_eq!(plain_run(&bytes), expected, "len {len} stop {stop}");
                // A control byte before the stop is found, however far in.
                if len > 0 {
                    let mut with_control = bytes.clone();
                    with_control[len - 1] = 0x1f;
                    assert_eq!(plain_run(&with_control), None, "len {len}");
                }
            }
            // No end at all.
            assert_eq!(plain_run(&vec![b'x'; len]), None, "len {len}");
        }
        // 0x7f and non-ASCII bytes need no escape.
        assert_eq!(plain_run("\u{7f}é😀\"".as_bytes()), Some(7));
    }

    /// Every byte value at every place of a word, among plain bytes of every
    /// kind, with and without a later stop: the lowest flag is the first stop.
    #[test]
    fn stop_bytes_flags_the_first_stop() {
        for position in 0..8 {
            for byte in 0..=u8::MAX {
                for filler in [b'a', b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff] {
                    for later_stop in [None, Some(0u8), Some(b'"'), Some(b'\\')] {
                        let mut word = [filler; 8];
                        word[position] = byte;
                        let mut expected = None;
                        if let Some(stop) = later_stop
                            && position < 7
                        {
                            word[7] = stop;
                            expected = Some(7);
                        }
                        if byte < 0x20 || byte == b'"' || byte == b'\\' {
                            expected = Some(position);
                        }
                        let flags = stop_bytes(u64::from_le_bytes(word));
                        let first = (flags != 0).then(|| (flags.trailing_zeros() / 8) as usize);
                        assert_eq!(first, expected, "{word:?}");
                    }
                }
            }
        }
    }
}
