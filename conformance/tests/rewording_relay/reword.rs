//! The rewording rule of the relay (docs/implementers.md, "The rewording relay"):
//! every all-lowercase prose word has its letters reversed, every other word (an
//! option, a name, a path, a number) stays, in its place.
//!
//! A private copy of the rule until the library has its own `reword`; the relay
//! and the marks must agree on it word for word.

/// The punctuation that may end a prose word, and that stays at its end.
const TRAILING: [char; 6] = [',', '.', ':', ';', '!', '?'];

/// `text` with each prose word's letters reversed: words are split on single
/// spaces, so runs of spaces and leading spaces stay as they were.
pub fn reword(text: &str) -> String {
    text.split(' ')
        .map(reword_word)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A word of ASCII lowercase letters, with at most one trailing punctuation
/// character, reversed; any other word as it is.
fn reword_word(word: &str) -> String {
    let (letters, end) = match word.strip_suffix(TRAILING) {
        Some(letters) => (letters, &word[letters.len()..]),
        None => (word, ""),
    };
    if letters.is_empty() || !letters.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.to_owned();
    }
    letters.chars().rev().chain(end.chars()).collect()
}

/// A cause that the contract does not name, reversed as a whole
/// (`method_not_found` -> `dnuof_ton_dohtem`): still a cause by its shape.
pub fn reverse_cause(cause: &str) -> String {
    cause.chars().rev().collect()
}

/// The unit tests of the rule, as trials of this harness.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    use libtest_mimic::Trial;
    vec![
        Trial::test(
            "reword: prose words are reversed, punctuation stays last",
            || {
                crate::check_eq(
                    reword("the value is not valid: use err"),
                    "eht eulav si ton dilav: esu rre",
                )
            },
        ),
        Trial::test(
            "reword: options, names, paths, numbers and quotes stay",
            || {
                crate::check_eq(
                    reword("the option --log-level of MCP_X at /a/b is 3 \"quoted\" (x) a=b"),
                    "eht noitpo --log-level fo MCP_X ta /a/b si 3 \"quoted\" (x) a=b",
                )
            },
        ),
        Trial::test(
            "reword: spaces and two punctuation marks stay as they are",
            || crate::check_eq(reword("  two  spaces ok.. end!"), "  owt  secaps ok.. dne!"),
        ),
        Trial::test("reword: a cause is reversed as a whole", || {
            crate::check_eq(reverse_cause("method_not_found"), "dnuof_ton_dohtem")
        }),
    ]
}
