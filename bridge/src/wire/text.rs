//! The JSON text of a member that the bridge passes through: borrowed from the line
//! it was read in, owned, or a range of a line that several owners share. The
//! shared form lets a request or a result outlive the function that read its line
//! without a copy of its members (a 64 MiB argument stays where it was read).

use std::borrow::Cow;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// A line of a peer, shared by the members read from it.
pub type SharedLine = Arc<String>;

#[derive(Debug, Clone)]
pub enum Text<'a> {
    Borrowed(&'a str),
    Owned(String),
    /// A range of a shared line, on a char boundary at both ends (it was cut from
    /// the line's own text).
    Shared(SharedLine, Range<usize>),
}

impl<'a> Text<'a> {
    /// The text with an owner of its own: a borrowed text that is part of `line`
    /// becomes a range of it, any other is copied.
    pub fn into_shared(self, line: &SharedLine) -> Text<'static> {
        match self {
            Self::Borrowed(text) => match place_in(line, text) {
                Some(range) => Text::Shared(line.clone(), range),
                None => Text::Owned(text.to_owned()),
            },
            Self::Owned(text) => Text::Owned(text),
            Self::Shared(line, range) => Text::Shared(line, range),
        }
    }
}

/// The range of `part` in `line` when `part` is a slice of it.
fn place_in(line: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    // `get` checks the bounds and the char boundaries: a slice of another string
    // that happens to lie after `line` in memory is not taken for a part of it.
    (end <= line.len() && line.get(start..end).is_some()).then_some(start..end)
}

impl Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Self::Borrowed(text) => text,
            Self::Owned(text) => text,
            // The range was cut from the line's text: `get` finds it.
            Self::Shared(line, range) => line.get(range.clone()).unwrap_or_default(),
        }
    }
}

impl PartialEq for Text<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Text<'_> {}

impl<'a> From<&'a str> for Text<'a> {
    fn from(text: &'a str) -> Self {
        Self::Borrowed(text)
    }
}

impl From<String> for Text<'_> {
    fn from(text: String) -> Self {
        Self::Owned(text)
    }
}

impl<'a> From<Cow<'a, str>> for Text<'a> {
    fn from(text: Cow<'a, str>) -> Self {
        match text {
            Cow::Borrowed(text) => Self::Borrowed(text),
            Cow::Owned(text) => Self::Owned(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_of_the_line_is_shared_and_anything_else_copied() {
        let line: SharedLine = Arc::new(r#"{"a":"hello","b":1}"#.to_owned());
        let part = line.get(5..12).unwrap();
        let shared = Text::Borrowed(part).into_shared(&line);
        assert!(matches!(shared, Text::Shared(_, ref range) if *range == (5..12)));
        assert_eq!(&*shared, "\"hello\"");
        let other = String::from("\"other\"");
        let copied = Text::Borrowed(&other).into_shared(&line);
        assert!(matches!(copied, Text::Owned(ref text) if text == "\"other\""));
    }

    #[test]
    fn texts_are_equal_by_their_content() {
        let line: SharedLine = Arc::new("xx1".to_owned());
        assert_eq!(Text::Shared(line, 2..3), Text::Owned("1".into()));
        assert_eq!(Text::Borrowed("1"), Text::Owned("1".into()));
    }
}
