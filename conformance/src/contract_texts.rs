//! The texts that the contract fixes, read from the contract itself
//! (`conformance/contract/vscode-bridge.txt`, the page every item of the catalog
//! comes from): the rows of its Output-channel table, the two debug lines its
//! troubleshooting steps spell out, the causes it names, the options of its
//! option tables, and its text as a whole.
//!
//! Everything else that a bridge writes (the message of an error, a cause the
//! contract does not name, a line that is not a row) is the wording of one
//! implementation. A transcript marks such a text with `"ours"`
//! ([`crate::format::marks`]); the check of the marks and the rewording relay of
//! the tests both ask this module what the contract fixes, so that the two agree.

use regex::Regex;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The contract, as the suite checks it.
pub const CONTRACT: &str = include_str!("../contract/vscode-bridge.txt");

/// Every stderr line of a bridge starts with this.
pub const LINE_PREFIX: &str = "mcp-bridge-vscode: ";

/// The texts that the contract fixes.
#[derive(Debug)]
pub struct ContractTexts {
    rows: Vec<Regex>,
    causes: BTreeSet<String>,
    options: BTreeSet<String>,
    text: String,
}

impl ContractTexts {
    /// The texts of the contract this suite carries, read once.
    pub fn of_contract() -> &'static ContractTexts {
        static TEXTS: OnceLock<ContractTexts> = OnceLock::new();
        TEXTS.get_or_init(|| ContractTexts::parse(CONTRACT))
    }

    /// The texts of a contract page.
    pub fn parse(contract: &str) -> ContractTexts {
        let mut rows: Vec<Regex> = output_channel_rows(contract)
            .map(|row| row_regex(&row))
            .collect();
        rows.extend(debug_lines(contract).map(|text| row_regex(&format!("bridge: debug: {text}"))));
        ContractTexts {
            rows,
            causes: named_causes(contract),
            options: option_names(contract),
            text: contract.to_owned(),
        }
    }

    /// Whether a whole stderr line is a row of the Output-channel table (or one of
    /// the debug lines the contract spells out), its placeholders filled in.
    pub fn fixes_line(&self, line: &str) -> bool {
        self.rows.iter().any(|row| row.is_match(line))
    }

    /// Whether the contract names this cause of an error (`data.cause`).
    pub fn fixes_cause(&self, cause: &str) -> bool {
        self.causes.contains(cause)
    }

    /// Whether a text (an error message, a detail) is written in the contract word
    /// for word.
    pub fn fixes_text(&self, text: &str) -> bool {
        !text.is_empty() && self.text.contains(text)
    }

    /// The causes the contract names.
    pub fn causes(&self) -> impl Iterator<Item = &str> {
        self.causes.iter().map(String::as_str)
    }

    /// The options of the contract's option tables (`--name`, ..., `--help`), each
    /// of which a `--help` of the bridge names.
    pub fn options(&self) -> impl Iterator<Item = &str> {
        self.options.iter().map(String::as_str)
    }

    /// The options that the contract gives logout ("logout takes --account, ...
    /// and --log-level."), each of which `logout --help` names.
    pub fn logout_options(&self) -> Vec<&str> {
        let Some(start) = self.text.find("logout takes ") else {
            return Vec::new();
        };
        let sentence = self.text[start..].split(". ").next().unwrap_or_default();
        sentence
            .split([' ', ','])
            .map(|word| word.trim_end_matches('.'))
            .filter(|word| word.starts_with("--"))
            .collect()
    }
}

/// The first cells of the table under "Messages in the Output channel" that are
/// lines of the bridge, without the prefix `mcp-bridge-vscode: `.
fn output_channel_rows(contract: &str) -> impl Iterator<Item = String> + '_ {
    section(contract, "Messages in the Output channel").filter_map(|line| {
        let first_cell = line.split('\t').next()?;
        first_cell.strip_prefix(LINE_PREFIX).map(str::to_owned)
    })
}

/// The lines of the section under `heading`, up to the next blank-line-separated
/// paragraph that is not a table row or the table's own heading row.
fn section<'a>(contract: &'a str, heading: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    contract
        .lines()
        .skip_while(move |line| line.trim() != heading)
        .skip(1)
        .skip_while(|line| line.trim().is_empty())
        .take_while(|line| line.contains('\t'))
}

/// The debug lines that "Steps to see more lines" spells out: "the bridge writes
/// one line for each upstream exchange: <line>." and "such as <line>.".
fn debug_lines(contract: &str) -> impl Iterator<Item = String> + '_ {
    let exchange = Regex::new(r"for each upstream exchange: (upstream request [^.]+ ms)\.")
        .expect("a valid regex");
    let request = Regex::new(r#"such as (request <id> \(<method>\): sent [^.]+ as request "b-1")"#)
        .expect("a valid regex");
    [exchange, request]
        .into_iter()
        .filter_map(move |pattern| Some(pattern.captures(contract)?[1].to_owned()))
        .map(|line| line.replace("\"b-1\"", "\"<id>\""))
}

/// A row as a regex of the whole line: `<...>` is any text, and a row that ends
/// with `...` goes on with any text.
fn row_regex(row: &str) -> Regex {
    let (row, open_end) = match row.strip_suffix("...") {
        Some(start) => (start, true),
        None => (row, false),
    };
    let placeholder = Regex::new(r"<[^<>]+>").expect("a valid regex");
    let mut pattern = format!("^{}", regex::escape(LINE_PREFIX));
    let mut rest = 0;
    for found in placeholder.find_iter(row) {
        pattern.push_str(&regex::escape(&row[rest..found.start()]));
        pattern.push_str(".+");
        rest = found.end();
    }
    pattern.push_str(&regex::escape(&row[rest..]));
    pattern.push_str(if open_end { ".*$" } else { "$" });
    Regex::new(&pattern).expect("an escaped row is a valid regex")
}

/// The causes that the contract names: "the cause upstream_exited".
fn named_causes(contract: &str) -> BTreeSet<String> {
    let cause = Regex::new(r"\bcause ([a-z]+(?:_[a-z]+)+)\b").expect("a valid regex");
    cause
        .captures_iter(contract)
        .map(|found| found[1].to_owned())
        .collect()
}

/// The options of the option tables: the first cell of a row that starts with `--`.
fn option_names(contract: &str) -> BTreeSet<String> {
    contract
        .lines()
        .filter_map(|line| line.split('\t').next())
        .filter(|cell| cell.starts_with("--"))
        .filter_map(|cell| cell.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts() -> &'static ContractTexts {
        ContractTexts::of_contract()
    }

    #[test]
    fn every_row_of_the_output_channel_table_is_read() {
        let rows = output_channel_rows(CONTRACT).count();
        // 49 rows name a line of the bridge; the table's other rows are VS Code's.
        assert_eq!(rows, 49);
        assert_eq!(texts().rows.len(), 51, "and the two debug lines");
    }

    #[test]
    fn a_row_takes_any_text_at_its_placeholders() {
        assert!(texts().fixes_line(
            "mcp-bridge-vscode: bridge: info: initialize from Visual Studio Code 1.141.0"
        ));
        assert!(texts().fixes_line(
            "mcp-bridge-vscode: bridge: info: still waiting for the upstream server: tools/call (request 3, 10 s)"
        ));
        assert!(texts().fixes_line("mcp-bridge-vscode: sign in at https://a.test/authorize?x=1"));
        assert!(
            texts().fixes_line("mcp-bridge-vscode: vscode: error: the option --loud is not known")
        );
    }

    #[test]
    fn a_row_that_ends_with_dots_goes_on_with_any_text() {
        assert!(texts().fixes_line(
            "mcp-bridge-vscode: vscode: warning: the value of the header Authorization is on the command line. Use --header-env."
        ));
    }

    #[test]
    fn a_line_the_table_does_not_have_is_not_fixed() {
        // The wording of this implementation for a value that is not valid.
        assert!(!texts().fixes_line(
            "mcp-bridge-vscode: vscode: error: the value of the option --log-level is not valid: use err, warn, info or debug"
        ));
        // A row's text with something more after it.
        assert!(
            !texts().fixes_line(
                "mcp-bridge-vscode: bridge: info: the upstream server is ready, at last"
            )
        );
        // A row's text at another level.
        assert!(
            !texts().fixes_line("mcp-bridge-vscode: bridge: warning: the upstream server is ready")
        );
    }

    #[test]
    fn the_debug_lines_of_the_troubleshooting_steps_are_fixed() {
        assert!(texts().fixes_line(
            "mcp-bridge-vscode: bridge: debug: upstream request 4 (tools/call, round 1 of client request 2): result after 3 ms"
        ));
        assert!(texts().fixes_line(
            "mcp-bridge-vscode: bridge: debug: request 2 (tools/call): sent elicitation/create to the client as request \"b-1\""
        ));
    }

    #[test]
    fn the_contract_names_two_causes() {
        assert_eq!(
            texts().causes().collect::<Vec<_>>(),
            ["sign_in_start_reused", "upstream_exited"]
        );
        assert!(!texts().fixes_cause("method_not_found"));
    }

    #[test]
    fn the_options_are_those_of_the_option_tables() {
        let options: Vec<&str> = texts().options().collect();
        for option in [
            "--name",
            "--log-level",
            "--help",
            "--version",
            "--header-env",
            "--sign-in-timeout",
        ] {
            assert!(options.contains(&option), "{option} in {options:?}");
        }
        assert_eq!(options.len(), 19, "{options:?}");
    }

    #[test]
    fn logout_takes_the_options_the_contract_gives_it() {
        assert_eq!(
            texts().logout_options(),
            [
                "--account",
                "--all",
                "--redirect-port",
                "--token-store",
                "--token-key-file",
                "--ca-file",
                "--log-level"
            ]
        );
    }

    #[test]
    fn a_text_is_fixed_only_when_the_contract_has_it_word_for_word() {
        assert!(texts().fixes_text("Process exited with code"));
        assert!(!texts().fixes_text("The server does not have this method."));
        assert!(!texts().fixes_text(""));
    }
}
