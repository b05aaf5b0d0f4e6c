//! The check of the marks: every exact text of a transcript that the contract
//! does not fix carries a mark `"ours"` ([`crate::format`]), and the shape of
//! each mark accepts the text as another implementation could word it
//! ([`crate::reword`]).
//!
//! What counts as an exact text of this implementation:
//! - an `expect_stderr` line that is not a row of the contract
//!   ([`ContractTexts::fixes_line`]), and each such line of `run_bridge`;
//! - at `error.message`, `error.data.cause` and `error.data.detail` of an
//!   `expect`, `expect_unordered` or `expect_report` frame, a literal string
//!   that the contract does not have (a message or detail word for word, a cause
//!   by name); a matcher (`$any`, `$string`) is not exact, and a `$regex:` is
//!   exact when it holds prose of ours (below);
//! - an `expect_stderr_match`, an `expect_raw` and each line of an
//!   `expect_raw_block` whose regex holds prose of ours: a run of literal
//!   characters of the regex (after the line form `mcp-bridge-vscode: <scope>:
//!   <level>: `) that has a word the rewording changes and that the contract's
//!   text does not have word for word;
//! - anywhere in a step, this project's name as a folder of a path
//!   (`mcp-bridge-rs/`): the paths of the token directory and the keychain
//!   service come from `$TOKEN_DIR` and `$KEYCHAIN_SERVICE`.
//!
//! A shape of a mark must demand no word of prose (no literal run of it that
//! the rewording changes, after the line form), and must accept the rewording
//! of the exact text it relaxes.

use crate::contract_texts::{ContractTexts, LINE_PREFIX};
use crate::matchers::literal;
use crate::regex_sample::sample_of;
use crate::reword::{reword, reword_named_cause, reword_stderr_line, reword_text};
use regex::Regex;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::OnceLock;

/// This project's name, which a path of a transcript names only through a
/// placeholder.
pub const PRODUCT_PATH: &str = "mcp-bridge-rs/";

/// One finding of the check: where, what and the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub line: usize,
    pub what: String,
    pub text: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.line, self.what, self.text)
    }
}

/// The findings of a transcript's text: each exact text of ours without a
/// mark, each literal path with this project's name, and each shape that
/// demands prose or refuses the rewording of its text.
pub fn check(transcript: &str, contract: &ContractTexts) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (index, line) in transcript.lines().enumerate().skip(1) {
        let Ok(Value::Object(step)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let mut found = |what: &str, text: &str| {
            findings.push(Finding {
                line: index + 1,
                what: what.to_owned(),
                text: text.to_owned(),
            })
        };
        check_step(&step, contract, &mut found);
    }
    findings
}

fn check_step(
    step: &Map<String, Value>,
    contract: &ContractTexts,
    found: &mut dyn FnMut(&str, &str),
) {
    for text in strings_of_step(step) {
        if text.contains(PRODUCT_PATH) {
            found(
                "this project's name in a path (use $TOKEN_DIR or $KEYCHAIN_SERVICE)",
                text,
            );
        }
    }
    let ours = step.get("ours");
    if let Some(Value::String(line)) = step.get("expect_stderr") {
        check_line(line, ours, contract, found);
    }
    if let Some(Value::String(pattern)) = step.get("expect_stderr_match") {
        check_line_regex(pattern, ours, contract, found, "expect_stderr_match");
    }
    if let Some(Value::String(pattern)) = step.get("expect_raw") {
        check_line_regex(pattern, ours, contract, found, "expect_raw");
    }
    if let Some(Value::Array(patterns)) = step.get("expect_raw_block") {
        check_block(patterns, ours, contract, found);
    }
    if let Some(run) = step.get("run_bridge") {
        check_run_bridge(run, ours, contract, found);
    }
    for kind in ["expect", "expect_report"] {
        if let Some(frame) = step.get(kind) {
            check_frame(frame, "", ours, contract, found);
        }
    }
    if let Some(Value::Array(frames)) = step.get("expect_unordered") {
        for (at, frame) in frames.iter().enumerate() {
            check_frame(frame, &format!("/{at}"), ours, contract, found);
        }
    }
}

/// Whether a stderr line is the bridge's (and not a line of the upstream that
/// the bridge passes on, which the relay keeps as it is).
fn is_the_bridges(line: &str) -> bool {
    line.starts_with(LINE_PREFIX)
}

/// Every string of a step but its comments.
fn strings_of_step(step: &Map<String, Value>) -> Vec<&str> {
    fn walk<'a>(value: &'a Value, into: &mut Vec<&'a str>) {
        match value {
            Value::String(text) => into.push(text),
            Value::Array(items) => items.iter().for_each(|item| walk(item, into)),
            Value::Object(members) => members
                .iter()
                .filter(|(key, _)| key.as_str() != "//")
                .for_each(|(_, value)| walk(value, into)),
            _ => {}
        }
    }
    let mut strings = Vec::new();
    for (key, value) in step {
        if key != "//" {
            walk(value, &mut strings);
        }
    }
    strings
}

fn check_line(
    line: &str,
    ours: Option<&Value>,
    contract: &ContractTexts,
    found: &mut dyn FnMut(&str, &str),
) {
    if contract.fixes_line(line) || !is_the_bridges(line) {
        return;
    }
    match ours.and_then(Value::as_str) {
        None => found("a stderr line of ours without \"ours\"", line),
        Some(shape) => check_shape(shape, &reword_stderr_line(line, contract), contract, found),
    }
}

fn check_line_regex(
    pattern: &str,
    ours: Option<&Value>,
    contract: &ContractTexts,
    found: &mut dyn FnMut(&str, &str),
    kind: &str,
) {
    let anchored_elsewhere = pattern.starts_with('^')
        && literal_fragments(pattern).first().is_some_and(|start| {
            !LINE_PREFIX.starts_with(start.as_str()) && !is_the_bridges(start)
        });
    let reword_line = |line: &str| match kind {
        "expect_stderr_match" => reword_stderr_line(line, contract),
        _ => reword(line),
    };
    let reworded = reworded_sample(pattern, reword_line);
    match ours.and_then(Value::as_str) {
        Some(shape) => match reworded {
            Some(Some(reworded)) => check_shape(shape, &reworded, contract, found),
            _ => check_shape_demands_no_prose(shape, contract, found),
        },
        None if kind == "expect_stderr_match" && anchored_elsewhere => {}
        None if reworded
            .map_or_else(|| holds_prose_of_ours(pattern, contract), |r| r.is_some()) =>
        {
            found(
                &format!("a regex of {kind} with prose of ours without \"ours\""),
                pattern,
            )
        }
        None => {}
    }
}

/// Whether a regex still matches once the rewording relay has worded a text it
/// matches: `None` when the regex has no sample ([`sample_of`]), `Some(None)`
/// when it still matches (it holds no prose of ours), and `Some(Some(text))`
/// with the reworded text that it refuses.
fn reworded_sample(pattern: &str, reword: impl Fn(&str) -> String) -> Option<Option<String>> {
    // A placeholder of the run (`$FREE_PORT`, `$RUN_DIR`) is text by the time the
    // regex is matched.
    static PLACEHOLDER: OnceLock<Regex> = OnceLock::new();
    let placeholder =
        PLACEHOLDER.get_or_init(|| Regex::new(r"\$[A-Z][A-Z_]*").expect("a valid regex"));
    let pattern = placeholder.replace_all(pattern, "1");
    let sample = sample_of(&pattern)?;
    let regex = Regex::new(&pattern).ok()?;
    let reworded = reword(&sample);
    Some((!regex.is_match(&reworded)).then_some(reworded))
}

fn check_block(
    patterns: &[Value],
    ours: Option<&Value>,
    contract: &ContractTexts,
    found: &mut dyn FnMut(&str, &str),
) {
    let patterns: Vec<&str> = patterns.iter().filter_map(Value::as_str).collect();
    let Some(names) = ours
        .and_then(|ours| ours.get("names"))
        .and_then(Value::as_array)
    else {
        if let Some(pattern) = patterns.iter().find(|pattern| {
            reworded_sample(pattern, reword)
                .map_or_else(|| holds_prose_of_ours(pattern, contract), |r| r.is_some())
        }) {
            found(
                "a line of expect_raw_block with prose of ours without \"ours\"",
                pattern,
            );
        }
        return;
    };
    let reworded: Vec<String> = patterns
        .iter()
        .filter_map(|pattern| literal_line(pattern))
        .map(|line| reword(&line))
        .collect();
    for name in names.iter().filter_map(Value::as_str) {
        if reword(name) != name {
            found(
                "a name of expect_raw_block's \"ours\" that the rewording changes",
                name,
            );
        } else if !reworded.iter().any(|line| line.contains(name)) {
            found(
                "a name of expect_raw_block's \"ours\" that its lines do not have",
                name,
            );
        }
    }
}

fn check_run_bridge(
    run: &Value,
    ours: Option<&Value>,
    contract: &ContractTexts,
    found: &mut dyn FnMut(&str, &str),
) {
    let lines = run.get("stderr").and_then(Value::as_array);
    let shapes = ours.and_then(Value::as_array);
    for (at, line) in lines.into_iter().flatten().enumerate() {
        let Some(line) = line.as_str() else { continue };
        if contract.fixes_line(line) || !is_the_bridges(line) {
            continue;
        }
        match shapes
            .and_then(|shapes| shapes.get(at))
            .and_then(Value::as_str)
        {
            None => found(
                "a stderr line of ours of run_bridge without its shape in \"ours\"",
                line,
            ),
            Some(shape) => check_shape(shape, &reword_stderr_line(line, contract), contract, found),
        }
    }
}

/// The marked strings of a frame (`prefix` is the frame's pointer in the step's
/// list): `error.message`, `error.data.cause`, `error.data.detail`.
fn check_frame(
    frame: &Value,
    prefix: &str,
    ours: Option<&Value>,
    contract: &ContractTexts,
    found: &mut dyn FnMut(&str, &str),
) {
    for (pointer, is_cause) in [
        ("/error/message", false),
        ("/error/data/cause", true),
        ("/error/data/detail", false),
    ] {
        let Some(Value::String(expected)) = frame.pointer(pointer) else {
            continue;
        };
        let pointer = format!("{prefix}{pointer}");
        let shape = ours
            .and_then(|ours| ours.get(&pointer))
            .and_then(Value::as_str);
        let exact = match literal(expected) {
            Some(text) if is_cause => {
                (!contract.fixes_cause(text)).then(|| reword_named_cause(text, contract))
            }
            Some(text) => (!contract.fixes_text(text)).then(|| reword_text(text, contract)),
            None => match expected.strip_prefix("$regex:") {
                Some(pattern) => {
                    let reworded = if is_cause {
                        reworded_sample(pattern, |cause| reword_named_cause(cause, contract))
                    } else {
                        reworded_sample(pattern, |text| reword_text(text, contract))
                    };
                    match reworded {
                        Some(reworded) => reworded,
                        None if is_cause => literal_fragments(pattern)
                            .iter()
                            .any(|fragment| !contract.fixes_cause(fragment.trim()))
                            .then(String::new),
                        None => holds_prose_of_ours(pattern, contract).then(String::new),
                    }
                }
                None => None,
            },
        };
        match (exact, shape) {
            (None, _) => {}
            (Some(_), None) => found(&format!("{pointer} of ours without \"ours\""), expected),
            (Some(reworded), Some(shape)) if reworded.is_empty() => {
                check_shape_demands_no_prose(shape, contract, found)
            }
            (Some(reworded), Some(shape)) => check_shape(shape, &reworded, contract, found),
        }
    }
}

/// A shape demands no prose and accepts the reworded text.
fn check_shape(
    shape: &str,
    reworded: &str,
    contract: &ContractTexts,
    found: &mut dyn FnMut(&str, &str),
) {
    check_shape_demands_no_prose(shape, contract, found);
    match Regex::new(shape) {
        Ok(regex) if regex.is_match(reworded) => {}
        Ok(_) => found(
            &format!("the shape {shape:?} refuses the reworded text"),
            reworded,
        ),
        Err(_) => found("a shape that is not a regex", shape),
    }
}

fn check_shape_demands_no_prose(
    shape: &str,
    contract: &ContractTexts,
    found: &mut dyn FnMut(&str, &str),
) {
    if let Some(run) = literal_fragments(shape)
        .iter()
        .flat_map(|fragment| prose_runs(without_line_form(fragment)))
        .find(|run| !contract.fixes_text(run))
    {
        found(&format!("the shape {shape:?} demands words of prose"), &run);
    }
}

/// Whether a regex holds prose of ours: in a literal run of it (after the line
/// form), a run of words that the rewording changes which the contract's text
/// does not have word for word.
pub fn holds_prose_of_ours(pattern: &str, contract: &ContractTexts) -> bool {
    literal_fragments(pattern).iter().any(|fragment| {
        prose_runs(without_line_form(fragment))
            .iter()
            .any(|run| !contract.fixes_text(run))
    })
}

/// The runs of consecutive words of prose of a text (the words that the
/// rewording changes), without the punctuation at the end of a run.
fn prose_runs(text: &str) -> Vec<String> {
    let mut runs = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for word in text.split(' ').chain([""]) {
        if !word.is_empty() && reword(word) != word {
            run.push(word);
        } else if !run.is_empty() {
            let joined = run.join(" ");
            runs.push(
                joined
                    .trim_end_matches([',', '.', ':', ';', '!', '?'])
                    .to_owned(),
            );
            run.clear();
        }
    }
    runs
}

/// A run of literal characters without the line form `mcp-bridge-vscode:
/// <scope>: <level>: ` at its start.
fn without_line_form(fragment: &str) -> &str {
    static FORM: OnceLock<Regex> = OnceLock::new();
    let form = FORM.get_or_init(|| {
        Regex::new(&format!(
            "^{}(?: [a-z_]+: (?:error|warning|info|debug):)? ?",
            regex::escape(LINE_PREFIX.trim_end())
        ))
        .expect("a valid regex")
    });
    match form.find(fragment) {
        Some(found) => &fragment[found.end()..],
        None => fragment,
    }
}

/// The runs of literal characters of a regex: its escaped characters are
/// literal, and a class, a group, an anchor, `.` or a quantifier ends a run (`?`
/// and `*` take back the character they make optional).
pub fn literal_fragments(pattern: &str) -> Vec<String> {
    let mut fragments = Vec::new();
    let mut current = String::new();
    let mut chars = pattern.chars().peekable();
    let end = |current: &mut String, fragments: &mut Vec<String>| {
        if !current.is_empty() {
            fragments.push(std::mem::take(current));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) if escaped.is_ascii_alphanumeric() => {
                    end(&mut current, &mut fragments)
                }
                Some(escaped) => current.push(escaped),
                None => {}
            },
            '[' => {
                end(&mut current, &mut fragments);
                let mut escaped = false;
                for inner in chars.by_ref() {
                    match inner {
                        '\\' if !escaped => escaped = true,
                        ']' if !escaped => break,
                        _ => escaped = false,
                    }
                }
            }
            '{' => {
                end(&mut current, &mut fragments);
                for inner in chars.by_ref() {
                    if inner == '}' {
                        break;
                    }
                }
            }
            '?' | '*' => {
                current.pop();
                end(&mut current, &mut fragments);
            }
            '.' | '^' | '$' | '|' | '(' | ')' | '+' => end(&mut current, &mut fragments),
            _ => current.push(c),
        }
    }
    end(&mut current, &mut fragments);
    fragments
}

/// The line that a regex `^<literal>$` of a whole line matches, when it is one:
/// each character as itself or escaped, no class, group or quantifier.
pub fn literal_line(pattern: &str) -> Option<String> {
    let inner = pattern.strip_prefix('^')?.strip_suffix('$')?;
    let mut line = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) if !escaped.is_ascii_alphanumeric() => line.push(escaped),
                _ => return None,
            },
            '.' | '^' | '$' | '|' | '(' | ')' | '+' | '?' | '*' | '[' | '{' => return None,
            _ => line.push(c),
        }
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"transcript":1,"name":"t","items":["CLI"],"milestone":"M1","description":"d","upstream":"none"}"#;

    fn findings(steps: &str) -> Vec<Finding> {
        check(&format!("{HEADER}\n{steps}"), ContractTexts::of_contract())
    }

    #[test]
    fn an_unmarked_stderr_line_of_ours_is_found_with_its_line() {
        let found = findings(
            r#"{"expect_stderr":"mcp-bridge-vscode: vscode: error: the value of the option --log-level is not valid"}"#,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].line, 2);
        assert!(found[0].what.contains("without \"ours\""), "{}", found[0]);
    }

    #[test]
    fn a_row_of_the_contract_needs_no_mark() {
        assert!(findings(r#"{"expect_stderr":"mcp-bridge-vscode: vscode: error: the option --loud is not known"}"#).is_empty());
        assert!(findings(r#"{"expect_stderr_match":"^mcp-bridge-vscode: bridge: info: the upstream server is ready$"}"#).is_empty());
    }

    #[test]
    fn a_line_of_the_upstream_is_not_ours() {
        assert!(findings(r#"{"expect_stderr":"upstream helper: cleaned up"}"#).is_empty());
        assert!(
            findings(r#"{"expect_stderr_match":"^upstream helper: cleaned up .+$"}"#).is_empty()
        );
    }

    #[test]
    fn a_marked_line_with_a_fair_shape_passes() {
        assert!(findings(r#"{"expect_stderr":"mcp-bridge-vscode: vscode: error: the value of the option --log-level is not valid","ours":"^mcp-bridge-vscode: vscode: error: .*--log-level"}"#).is_empty());
    }

    #[test]
    fn a_shape_with_prose_of_ours_is_found() {
        let found = findings(
            r#"{"expect_stderr":"mcp-bridge-vscode: vscode: error: the value of --log-level is not valid","ours":"^mcp-bridge-vscode: vscode: error: the worth"}"#,
        );
        assert!(
            found
                .iter()
                .any(|f| f.what.contains("demands words of prose")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|f| f.what.contains("refuses the reworded text")),
            "{found:?}"
        );
    }

    #[test]
    fn texts_of_an_error_frame_need_their_marks() {
        let found = findings(
            r#"{"expect":{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"The server does not have this method.","data":{"cause":"method_not_found","detail":"$string"}}}}"#,
        );
        let what: Vec<&str> = found.iter().map(|f| f.what.as_str()).collect();
        assert_eq!(
            what,
            [
                "/error/message of ours without \"ours\"",
                "/error/data/cause of ours without \"ours\""
            ]
        );
        assert!(findings(r#"{"expect":{"id":1,"error":{"code":-32603,"message":"$regex:^.+$","data":{"cause":"upstream_exited"}}}}"#).is_empty());
        assert!(findings(r#"{"expect":{"id":1,"error":{"code":-32601,"message":"The server does not have this method.","data":{"cause":"method_not_found"}}},"ours":{"/error/message":"^.+$","/error/data/cause":"^[a-z][a-z0-9_]*$"}}"#).is_empty());
    }

    #[test]
    fn a_regex_with_prose_of_ours_is_exact() {
        let found = findings(
            r#"{"expect":{"id":1,"error":{"code":-32603,"message":"$string","data":{"detail":"$regex:^the line has [0-9]+ bytes$"}}}}"#,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        let found = findings(
            r#"{"expect_stderr_match":"^mcp-bridge-vscode: bridge: warning: the token file \\S+ is not valid"}"#,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(findings(r#"{"expect_raw":"^mcp-bridge-vscode [0-9]+\\.[0-9]+"}"#).is_empty());
    }

    #[test]
    fn a_regex_is_exact_when_it_refuses_the_rewording_of_a_text_it_matches() {
        // Each word is in the contract's text, and "sign-in" splits the prose,
        // but the line is no row: the relay rewords it, and the regex refuses that.
        let line = r#"{"expect_stderr_match":"^mcp-bridge-vscode: bridge: warning: the sign-in failed: .+$"}"#;
        assert_eq!(findings(line).len(), 1, "{:?}", findings(line));
        let detail = r#"{"expect":{"id":1,"error":{"code":-32603,"message":"$string","data":{"detail":"$regex:^port [0-9]+$"}}}}"#;
        assert_eq!(findings(detail).len(), 1, "{:?}", findings(detail));
        // A placeholder of the run is a name, which the relay keeps.
        let row = r#"{"expect_stderr_match":"^mcp-bridge-vscode: bridge: warning: Another program uses the redirect port $FREE_PORT\\. .*$"}"#;
        assert!(findings(row).is_empty(), "{:?}", findings(row));
        // A shape must accept the rewording of a text that the regex it relaxes matches.
        let shape = r#"{"expect_stderr_match":"^mcp-bridge-vscode: bridge: warning: the sign-in failed: .+$","ours":"^mcp-bridge-vscode: bridge: warning: the sign-in failed: .+$"}"#;
        assert!(
            findings(shape)
                .iter()
                .any(|f| f.what.contains("refuses the reworded text"))
        );
    }

    #[test]
    fn run_bridge_lines_need_a_shape_each_unless_the_contract_fixes_them() {
        let run = r#"{"run_bridge":{"args":["logout","--all"],"code":0,"stderr":["mcp-bridge-vscode: vscode: info: logout --all deleted 0 stored sign-ins","mcp-bridge-vscode: vscode: info: logout found no stored sign-in of the account \"x\" for the URL"]}"#;
        assert_eq!(findings(&format!("{run}}}")).len(), 1);
        assert!(
            findings(&format!(
                r#"{run},"ours":["^mcp-bridge-vscode: vscode: info: .*--all",null]}}"#
            ))
            .is_empty()
        );
    }

    #[test]
    fn this_projects_name_in_a_path_is_found() {
        let found =
            findings(r#"{"run":{"command":["ls","$XDG_STATE_HOME/mcp-bridge-rs/vscode/tokens"]}}"#);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(findings(r#"{"run":{"command":["ls","$XDG_STATE_HOME/$TOKEN_DIR"]},"//":"not mcp-bridge-rs/x"}"#).is_empty());
    }

    #[test]
    fn a_block_names_only_what_the_rewording_keeps() {
        let block = r#"{"expect_raw_block":["^Usage:\\ mcp\\-bridge\\-vscode\\ \\[options\\]\\ <url>$","^\\ \\ \\-\\-name\\ <name>\\ \\ Ours\\ alone\\ says\\ it\\ thus$"]"#;
        assert_eq!(findings(&format!("{block}}}")).len(), 1);
        assert!(
            findings(&format!(
                r#"{block},"ours":{{"names":["mcp-bridge-vscode","--name"]}}}}"#
            ))
            .is_empty()
        );
        let found = findings(&format!(
            r#"{block},"ours":{{"names":["server","--log-level"]}}}}"#
        ));
        assert_eq!(found.len(), 2, "{found:?}");
    }

    #[test]
    fn a_regex_of_a_row_of_the_contract_holds_no_prose_of_ours() {
        let contract = ContractTexts::of_contract();
        assert!(!holds_prose_of_ours(
            r"^mcp-bridge-vscode: sign in at https://127\.0\.0\.1:[0-9]+/authorize\?response_type=code&.*$",
            contract
        ));
        assert!(holds_prose_of_ours(
            r"^mcp-bridge-vscode: bridge: info: the tokens are in encrypted files in $RUN_DIR/x$",
            contract
        ));
        assert_eq!(
            prose_runs("the a-b of xy, yz zq: 3"),
            ["the", "of xy, yz zq"]
        );
    }

    #[test]
    fn the_literal_runs_of_a_regex() {
        assert_eq!(
            literal_fragments(r"^a\ b\.c [0-9]+ d(?:e|f)?g$"),
            ["a b.c ", " d", ":e", "f", "g"]
        );
        assert_eq!(
            literal_line(r"^Usage:\ x\-y\ \[options\]$").as_deref(),
            Some("Usage: x-y [options]")
        );
        assert_eq!(literal_line("^$").as_deref(), Some(""));
        assert_eq!(literal_line("^a.b$"), None);
    }
}
