//! The rewording rule of the tests: how another implementation of the contract
//! could word every text that the contract does not fix, keeping every name.
//!
//! The rewording relay of the tests applies it to what the bridge writes, and the
//! check of the marks applies it to every marked text of the transcripts: the
//! shape of a mark must accept the reworded text as it accepts the exact one, so
//! a shape never demands a word of this implementation's prose.
//!
//! [`reword`] splits a text on single spaces; a word that is only ASCII
//! lowercase letters, with at most one trailing `,` `.` `:` `;` `!` or `?`, has its
//! letters reversed (`the` becomes `eht`, `valid:` becomes `dilav:`). Every other
//! word stays as it is: options (`--log-level`), placeholders, paths and URLs,
//! numbers, quoted words, words with an uppercase letter, a digit, `_`, `-`, `=`,
//! `$`, `@` or a parenthesis. So the order of the words and every name stay, and
//! all the prose changes.

use crate::contract_texts::{ContractTexts, LINE_PREFIX};

/// The punctuation that may end a word of prose and stays at its end.
const TRAILING_PUNCTUATION: [char; 6] = [',', '.', ':', ';', '!', '?'];

/// The text with the letters of each word of prose reversed.
pub fn reword(text: &str) -> String {
    text.split(' ')
        .map(reword_word)
        .collect::<Vec<_>>()
        .join(" ")
}

fn reword_word(word: &str) -> String {
    let letters = word.strip_suffix(TRAILING_PUNCTUATION).unwrap_or(word);
    if letters.is_empty() || !letters.bytes().all(|byte| byte.is_ascii_lowercase()) {
        return word.to_owned();
    }
    let mut reworded: String = letters.chars().rev().collect();
    reworded.push_str(&word[letters.len()..]);
    reworded
}

/// A cause of an error (`data.cause`) that the contract does not name, its
/// letters reversed as a whole: `method_not_found` becomes `dnuof_ton_dohtem`.
pub fn reword_cause(cause: &str) -> String {
    cause.chars().rev().collect()
}

/// A stderr line of a bridge as another implementation could write it: a row of
/// the contract stays, a line `mcp-bridge-vscode: <scope>: <level>: <text>`
/// keeps its prefix, scope and level and rewords its text, and a line that is
/// not the bridge's (an upstream's) stays.
pub fn reword_stderr_line(line: &str, contract: &ContractTexts) -> String {
    if contract.fixes_line(line) {
        line.to_owned()
    } else {
        reword_bridge_line(line)
    }
}

/// A stderr line with its text reworded whether or not the contract fixes it
/// (a line of the bridge keeps its prefix, scope and level; another line stays):
/// what a bridge that breaks a row of the contract would write.
pub fn reword_bridge_line(line: &str) -> String {
    let Some(rest) = line.strip_prefix(LINE_PREFIX) else {
        return line.to_owned();
    };
    let mut parts = rest.splitn(3, ": ");
    match (parts.next(), parts.next(), parts.next()) {
        (Some(scope), Some(level), Some(text)) if is_name(scope) && is_name(level) => {
            format!("{LINE_PREFIX}{scope}: {level}: {}", reword(text))
        }
        _ => format!("{LINE_PREFIX}{}", reword(rest)),
    }
}

/// A scope or a level of a line: one lowercase word (`_` may join its parts).
fn is_name(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte == b'_')
}

/// An error message or detail as another implementation could write it, unless
/// the contract has it word for word.
pub fn reword_text(text: &str, contract: &ContractTexts) -> String {
    if contract.fixes_text(text) {
        text.to_owned()
    } else {
        reword(text)
    }
}

/// A cause as another implementation could name it, unless the contract names it.
pub fn reword_named_cause(cause: &str, contract: &ContractTexts) -> String {
    if contract.fixes_cause(cause) {
        cause.to_owned()
    } else {
        reword_cause(cause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract() -> &'static ContractTexts {
        ContractTexts::of_contract()
    }

    #[test]
    fn words_of_prose_are_reversed_and_their_punctuation_stays() {
        assert_eq!(reword("the"), "eht");
        assert_eq!(reword("valid:"), "dilav:");
        assert_eq!(
            reword(
                "the value of the option --log-level is not valid: use err, warn, info or debug"
            ),
            "eht eulav fo eht noitpo --log-level si ton dilav: esu rre, nraw, ofni ro gubed"
        );
    }

    #[test]
    fn names_numbers_paths_and_quotes_stay() {
        for word in [
            "--log-level",
            "<url>",
            "/tmp/x",
            "https://a.test/x",
            "42",
            "\"quoted\"",
            "'x'",
            "Authorization",
            "The",
            "tools/call",
            "method_not_found",
            "a-b",
            "x=1",
            "$RUN_DIR",
            "a@b",
            "(request",
            "3)",
            "ms)",
            "MCP_BRIDGE_ID",
            "v2",
            "x..",
            "",
        ] {
            assert_eq!(reword(word), word, "{word:?}");
        }
    }

    #[test]
    fn spaces_are_kept_as_they_are() {
        assert_eq!(reword("  an  indented line "), "  na  detnedni enil ");
    }

    #[test]
    fn a_cause_is_reversed_as_a_whole_unless_the_contract_names_it() {
        assert_eq!(reword_cause("method_not_found"), "dnuof_ton_dohtem");
        assert_eq!(
            reword_named_cause("method_not_found", contract()),
            "dnuof_ton_dohtem"
        );
        assert_eq!(
            reword_named_cause("upstream_exited", contract()),
            "upstream_exited"
        );
    }

    #[test]
    fn a_line_keeps_its_prefix_scope_and_level() {
        assert_eq!(
            reword_stderr_line(
                "mcp-bridge-vscode: vscode: error: the value of --log-level is not valid",
                contract()
            ),
            "mcp-bridge-vscode: vscode: error: eht eulav fo --log-level si ton dilav"
        );
        assert_eq!(
            reword_stderr_line(
                "mcp-bridge-vscode: mcp_router: warning: dropped a frame",
                contract()
            ),
            "mcp-bridge-vscode: mcp_router: warning: deppord a emarf"
        );
    }

    #[test]
    fn a_row_of_the_contract_and_a_line_of_the_upstream_stay() {
        for line in [
            "mcp-bridge-vscode: vscode: error: the option --loud is not known",
            "mcp-bridge-vscode: sign in at https://a.test/authorize?x=1",
            "the upstream says hello",
        ] {
            assert_eq!(reword_stderr_line(line, contract()), line);
        }
    }

    #[test]
    fn a_text_the_contract_has_word_for_word_stays() {
        assert_eq!(
            reword_text("Process exited with code", contract()),
            "Process exited with code"
        );
        assert_eq!(
            reword_text("The server does not have this method.", contract()),
            "The revres seod ton evah siht dohtem."
        );
    }
}
