//! One text that a regex of a transcript matches, for the check of the marks:
//! whether a regex still matches a line once the rewording relay has worded it
//! its own way is known by rewording a line the regex matches.
//!
//! The regexes of the transcripts are simple (literals, `.+`, classes such as
//! `[0-9]+`, alternatives in groups); a regex with anything else has no sample,
//! and the caller falls back on a rule of its words.

use regex::Regex;
use std::iter::Peekable;
use std::str::Chars;

/// A text that `pattern` matches, made of its literal characters, the first
/// alternative of each group and one character of each class or `.` that must be
/// there; `None` when the pattern has a construct this does not know, or when
/// the text made does not match after all.
pub fn sample_of(pattern: &str) -> Option<String> {
    let mut chars = pattern.chars().peekable();
    let sample = sequence(&mut chars, false)?;
    if chars.next().is_some() {
        return None;
    }
    Regex::new(pattern)
        .ok()?
        .is_match(&sample)
        .then_some(sample)
}

/// The sample of a sequence up to the end, or up to the `)` of its group when
/// `in_group` (the first alternative only; the others are skipped).
fn sequence(chars: &mut Peekable<Chars<'_>>, in_group: bool) -> Option<String> {
    let mut sample = String::new();
    while let Some(&c) = chars.peek() {
        let atom = match c {
            ')' if in_group => {
                chars.next();
                return Some(sample);
            }
            ')' => return None,
            '|' => {
                chars.next();
                skip_alternatives(chars, in_group)?;
                return Some(sample);
            }
            '^' | '$' => {
                chars.next();
                continue;
            }
            '(' => {
                chars.next();
                if chars.peek() == Some(&'?') {
                    chars.next();
                    (chars.next()? == ':').then_some(())?;
                }
                sequence(chars, true)?
            }
            '[' => {
                chars.next();
                class(chars)?.to_string()
            }
            '.' => {
                chars.next();
                "x".to_owned()
            }
            '\\' => {
                chars.next();
                escaped(chars.next()?)?.to_string()
            }
            '*' | '+' | '?' | '{' => return None,
            _ => {
                chars.next();
                c.to_string()
            }
        };
        sample.push_str(&repeated(chars, atom)?);
    }
    (!in_group).then_some(sample)
}

/// The atom as many times as its quantifier needs at least (`*` and `?` none).
fn repeated(chars: &mut Peekable<Chars<'_>>, atom: String) -> Option<String> {
    let times = match chars.peek() {
        Some('*' | '?') => {
            chars.next();
            0
        }
        Some('+') => {
            chars.next();
            1
        }
        Some('{') => {
            chars.next();
            let bounds: String = chars.by_ref().take_while(|&c| c != '}').collect();
            bounds.split(',').next()?.trim().parse().ok()?
        }
        _ => 1,
    };
    // A lazy quantifier matches the same least text.
    if chars.peek() == Some(&'?') {
        chars.next();
    }
    Some(atom.repeat(times))
}

/// Past the other alternatives of a group (or of the whole pattern), to its `)`.
fn skip_alternatives(chars: &mut Peekable<Chars<'_>>, in_group: bool) -> Option<()> {
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next()?;
            }
            '[' => {
                class(chars)?;
            }
            '(' => depth += 1,
            ')' if depth == 0 => return in_group.then_some(()),
            ')' => depth -= 1,
            _ => {}
        }
    }
    (!in_group).then_some(())
}

/// One character that a class `[...]` (its `[` read) takes: a digit or a
/// letter where it has a range of them, else its first character.
fn class(chars: &mut Peekable<Chars<'_>>) -> Option<char> {
    let mut members = String::new();
    let mut escaped = false;
    loop {
        let c = chars.next()?;
        match c {
            '\\' if !escaped => escaped = true,
            ']' if !escaped && !members.is_empty() => break,
            _ => {
                escaped = false;
                members.push(c);
            }
        }
    }
    if members.starts_with('^') {
        return Some('x').filter(|_| !members.contains('x'));
    }
    ["0-9", "a-z", "A-Z"]
        .iter()
        .find(|range| members.contains(*range))
        .and_then(|range| range.chars().next())
        .or_else(|| members.chars().next())
}

/// The character of an escape: a literal punctuation, or one of `\d \s \w`.
fn escaped(c: char) -> Option<char> {
    match c {
        'd' => Some('1'),
        's' => Some(' '),
        'w' => Some('a'),
        c if c.is_ascii_alphanumeric() => None,
        c => Some(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_fills_each_part_with_the_least_it_needs() {
        assert_eq!(
            sample_of(r"^mcp-bridge-vscode: bridge: warning: the sign-in failed: .+$").as_deref(),
            Some("mcp-bridge-vscode: bridge: warning: the sign-in failed: x")
        );
        assert_eq!(
            sample_of(r"^port [0-9]+ in (?:use|wait)\.?$").as_deref(),
            Some("port 0 in use")
        );
        assert_eq!(sample_of(r"^a{3}b*c?$").as_deref(), Some("aaa"));
        assert_eq!(sample_of(r"^(x|y)z\d+$").as_deref(), Some("xz1"));
    }

    #[test]
    fn a_regex_with_a_construct_it_does_not_know_has_no_sample() {
        assert_eq!(sample_of(r"^a\bb$"), None);
        assert_eq!(sample_of(r"^(?i)abc$"), None);
        assert_eq!(sample_of(r"^+a$"), None);
    }
}
