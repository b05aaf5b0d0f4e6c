//! docs/troubleshooting.md stays true (issue 19): the lines that the bridge can
//! write to stderr (VS Code's Output channel) are read out of the source, and the
//! causes out of [`Cause::ALL`]; the page must have each of them and no other.
//!
//! How a line is found in the source:
//! - a `tracing::{error,warn,info,debug}!(target: SCOPE, "text")` call, or a
//!   `log::line(SCOPE, &Level::X, &format!("text"))` outside the logger;
//! - a call whose text is only a placeholder (`"{line}"`, `"{}"`) relays texts
//!   made elsewhere: [`RELAYS`] names, for each such call, where its texts are
//!   made, and the test fails when a relay appears that the table does not know;
//! - the errors of the command line: the texts of `UsageError`s and the checks
//!   of the URL form in `cli/`.
//!
//! `{...}` in the source and `<...>` on the page are placeholders; two lines are
//! the same when they are equal with every placeholder made `<>`.

use crate::catalogue::Cause;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const PAGE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../docs/troubleshooting.md"
));

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The part of a source file before its unit tests.
fn non_test(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests")
        .map_or(text, |end| &text[..end])
}

fn read(relative: &str) -> String {
    let path = src().join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    non_test(&text).to_owned()
}

/// Every `.rs` file under `src/`, relative, sorted.
fn rust_files() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(root).unwrap();
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(&src(), &src(), &mut out);
    out.sort();
    out
}

/// The Rust string literal that starts at byte `start` (a `"`): its value and the
/// byte after it.
fn literal_at(text: &str, start: usize) -> (String, usize) {
    let mut out = String::new();
    let mut chars = text[start + 1..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (out, start + 1 + i + 1),
            '\\' => match chars.next().map(|(_, c)| c) {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                // A line continuation: the next line's indentation goes.
                Some('\n') => while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {},
                Some(other) => out.push(other),
                None => break,
            },
            other => out.push(other),
        }
    }
    (out, text.len())
}

/// The first string literal after `from`, when it starts within `within` bytes.
fn next_literal(text: &str, from: usize, within: usize) -> Option<(String, usize)> {
    let at = text[from..].find('"')?;
    (at < within).then(|| literal_at(text, from + at))
}

/// A format string or a page text with every placeholder made `<>`.
fn shape(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' | '<' => {
                let close = if c == '{' { '}' } else { '>' };
                for c in chars.by_ref() {
                    if c == close {
                        break;
                    }
                }
                // Two placeholders side by side read as one.
                if !out.ends_with("<>") {
                    out.push_str("<>");
                }
            }
            other => out.push(other),
        }
    }
    out
}

fn scope_of(target: &str) -> Option<&'static str> {
    let name = target.trim().rsplit("::").next()?;
    Some(match name {
        "BRIDGE" => "bridge",
        "VSCODE" => "vscode",
        "MCP_STDIO" => "mcp_stdio",
        "MCP_ROUTER" => "mcp_router",
        "SIGN_IN" => "sign_in",
        _ => return None,
    })
}

/// The line of the Output channel, as `crate::log::line` writes it.
fn full_line(scope: &str, level: &str, text: &str) -> String {
    if scope == "sign_in" {
        format!("mcp-bridge-vscode: {}", shape(text))
    } else {
        format!("mcp-bridge-vscode: {scope}: {level}: {}", shape(text))
    }
}

/// A call whose text is only placeholders: where it is, its scope and its level.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RelaySite {
    file: String,
    scope: &'static str,
    level: &'static str,
}

/// The lines of one source file, and its relays.
fn calls(file: &str, text: &str, lines: &mut BTreeSet<String>, relays: &mut Vec<RelaySite>) {
    let mut found = |scope: &'static str, level: &'static str, body: Option<String>| match body {
        Some(body) if shape(&body).replace("<>", "").trim().is_empty() => {
            relays.push(RelaySite {
                file: file.to_owned(),
                scope,
                level,
            });
        }
        Some(body) => {
            lines.insert(full_line(scope, level, &body));
        }
        None => relays.push(RelaySite {
            file: file.to_owned(),
            scope,
            level,
        }),
    };
    for (macro_name, level) in [
        ("error", "error"),
        ("warn", "warning"),
        ("info", "info"),
        ("debug", "debug"),
    ] {
        let needle = format!("tracing::{macro_name}!(");
        for (at, _) in text.match_indices(&needle) {
            let rest = &text[at + needle.len()..];
            let rest_trim = rest.trim_start();
            let Some(after_target) = rest_trim.strip_prefix("target:") else {
                panic!("{file}: a tracing call without target");
            };
            let comma = after_target.find(',').unwrap();
            let scope = scope_of(&after_target[..comma])
                .unwrap_or_else(|| panic!("{file}: unknown target {}", &after_target[..comma]));
            let from = text.len() - after_target.len() + comma + 1;
            found(
                scope,
                level,
                next_literal(text, from, 40).map(|(body, _)| body),
            );
        }
    }
    // The lines written outside the logger (the watchdog, a panic).
    for (at, _) in text.match_indices("crate::log::line(") {
        let rest = &text[at..];
        let scope = scope_of(rest["crate::log::line(".len()..].split(',').next().unwrap()).unwrap();
        let level = ["ERROR", "WARN", "INFO", "DEBUG"]
            .into_iter()
            .zip(["error", "warning", "info", "debug"])
            .find(|(word, _)| rest[..rest.len().min(120)].contains(&format!("Level::{word}")))
            .unwrap()
            .1;
        let args = &rest[..rest.find(";").unwrap()];
        let body = args
            .find("&format!(")
            .and_then(|f| next_literal(text, at + f, 20).map(|(body, _)| body));
        found(scope, level, body);
    }
}

/// Where the texts of a relay are made: the literal after each `marker` in
/// `file`, or every literal in the body of the function that `marker` starts.
#[derive(Debug, Clone, Copy)]
enum Source {
    After(&'static str, &'static str),
    Body(&'static str, &'static str),
}

struct Relay {
    file: &'static str,
    scope: &'static str,
    level: &'static str,
    sources: &'static [Source],
}

/// Each call of the bridge that writes a text made elsewhere.
const RELAYS: &[Relay] = &[
    Relay {
        file: "auth/store/fallback.rs",
        scope: "bridge",
        level: "warning",
        sources: &[Source::After(
            "auth/store/fallback.rs",
            "(self.warn)(&format!(",
        )],
    },
    Relay {
        file: "main.rs",
        scope: "vscode",
        level: "warning",
        sources: &[Source::After("cli/mod.rs", "warnings.push(format!(")],
    },
    Relay {
        file: "run.rs",
        scope: "bridge",
        level: "info",
        sources: &[
            Source::After("auth/store/open.rs", "pub const MEMORY_LINE: &str ="),
            Source::Body("auth/store/open.rs", "pub fn keychain_line()"),
            Source::Body("auth/store/open.rs", "pub fn file_line("),
            Source::After("auth/store/open.rs", "line: format!("),
        ],
    },
    Relay {
        file: "run.rs",
        scope: "vscode",
        level: "warning",
        sources: &[Source::Body("serve.rs", "pub fn watchdog_line(")],
    },
    Relay {
        file: "serve.rs",
        scope: "vscode",
        level: "warning",
        sources: &[Source::Body("serve.rs", "pub fn watchdog_line(")],
    },
    Relay {
        file: "session/forward.rs",
        scope: "bridge",
        level: "info",
        sources: &[Source::Body("rules/schema_repair.rs", "pub fn log_line(")],
    },
    Relay {
        file: "session/pass_through.rs",
        scope: "bridge",
        level: "info",
        sources: &[Source::Body("rules/schema_repair.rs", "pub fn log_line(")],
    },
    Relay {
        file: "session/lifecycle.rs",
        scope: "bridge",
        level: "warning",
        sources: &[Source::Body("upstream/mod.rs", "pub fn log_line(")],
    },
    Relay {
        file: "session/listen.rs",
        scope: "bridge",
        level: "warning",
        sources: &[Source::After("notify/listen.rs", "Action::Warn(")],
    },
    Relay {
        file: "session/listen.rs",
        scope: "bridge",
        level: "info",
        sources: &[Source::After("notify/listen.rs", "Action::Info(")],
    },
    Relay {
        file: "session/stop.rs",
        scope: "bridge",
        level: "error",
        sources: &[Source::After("upstream/stdio.rs", "detail: format!(")],
    },
    // A link that ends without ending the session: no link of this version
    // makes one with a text of its own (the embedded link's end ends the session).
    Relay {
        file: "session/stop.rs",
        scope: "bridge",
        level: "warning",
        sources: &[],
    },
    Relay {
        file: "upstream/http/exchange.rs",
        scope: "bridge",
        level: "warning",
        sources: &[Source::Body("auth/errors.rs", "pub fn log_line(")],
    },
    Relay {
        file: "upstream/http/mod.rs",
        scope: "bridge",
        level: "warning",
        sources: &[Source::After(
            "upstream/http/headers.rs",
            "warnings.push(format!(",
        )],
    },
];

/// The end of the block that starts at the first `{` after `from`.
fn block_end(text: &str, from: usize) -> usize {
    let open = from + text[from..].find('{').unwrap();
    let mut depth = 0;
    let mut i = open;
    while i < text.len() {
        match text.as_bytes()[i] {
            b'"' => {
                i = literal_at(text, i).1;
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    text.len()
}

fn source_texts(source: Source) -> Vec<String> {
    match source {
        Source::After(file, marker) => {
            let text = read(file);
            let found: Vec<String> = text
                .match_indices(marker)
                .filter_map(|(at, _)| next_literal(&text, at + marker.len(), 40))
                .map(|(body, _)| body)
                .collect();
            assert!(!found.is_empty(), "{file}: no text after {marker}");
            found
        }
        Source::Body(file, marker) => {
            let text = read(file);
            let start = text
                .find(marker)
                .unwrap_or_else(|| panic!("{file}: {marker}"));
            let end = block_end(&text, start);
            let mut out = Vec::new();
            let mut i = start + marker.len();
            while let Some((body, next)) = next_literal(&text, i, end.saturating_sub(i)) {
                if next > end {
                    break;
                }
                out.push(body);
                i = next;
            }
            assert!(!out.is_empty(), "{file}: no text in {marker}");
            out
        }
    }
}

/// The texts of the command line's errors: what `UsageError` and the checks of
/// the URL form say (the report adds `mcp-bridge-vscode: vscode: error: `).
fn argument_errors() -> BTreeSet<String> {
    let mut texts = BTreeSet::new();
    for file in ["cli/mod.rs", "cli/logout.rs"] {
        let text = read(file);
        for marker in ["UsageError(", "usage("] {
            for (at, _) in text.match_indices(marker) {
                let rest = text[at + marker.len()..].trim_start();
                let rest = rest.strip_prefix("format!(").unwrap_or(rest).trim_start();
                if rest.starts_with('"') {
                    let from = text.len() - rest.len();
                    texts.insert(literal_at(&text, from).0);
                }
            }
        }
    }
    // The clap errors, named by option.
    let cli = read("cli/mod.rs");
    let start = cli.find("fn usage_error(").unwrap();
    let end = block_end(&cli, start);
    for (at, _) in cli[start..end].match_indices("format!(") {
        if let Some((body, _)) = next_literal(&cli, start + at, 40) {
            texts.insert(body);
        }
    }
    // The checks of the URL form: each error text (they start in lower case and
    // are sentences; the header names and store names are single words).
    let url_form = read("cli/url_form.rs");
    let mut i = 0;
    while let Some(at) = url_form[i..].find('"') {
        let (body, next) = literal_at(&url_form, i + at);
        if body.contains(' ') && body.starts_with(|c: char| c.is_ascii_lowercase()) {
            texts.insert(body);
        }
        i = next;
    }
    // The report of a --ca-file that cannot be used.
    let start = cli.find("pub fn report(").unwrap();
    let end = block_end(&cli, start);
    let mut i = start;
    while let Some((body, next)) = next_literal(&cli, i, end.saturating_sub(i)) {
        let first = body.lines().next().unwrap_or_default();
        if let Some(text) = first.strip_prefix("mcp-bridge-vscode: vscode: error: ")
            && shape(text) != "<>"
        {
            texts.insert(text.to_owned());
        }
        i = next;
    }
    texts.into_iter().map(|text| shape(&text)).collect()
}

/// The full lines of the source, and its relay sites.
fn source_lines() -> (BTreeSet<String>, Vec<RelaySite>) {
    let mut lines = BTreeSet::new();
    let mut relays = Vec::new();
    for file in rust_files() {
        if file == "troubleshooting_check.rs" {
            continue;
        }
        calls(&file, &read(&file), &mut lines, &mut relays);
    }
    relays.sort();
    relays.dedup();
    for relay in RELAYS {
        for source in relay.sources {
            for text in source_texts(*source) {
                lines.insert(full_line(relay.scope, relay.level, &text));
            }
        }
    }
    (lines, relays)
}

/// The backticked first cell of each table row of the page that starts with `start`.
fn page_cells(start: &str) -> BTreeSet<String> {
    PAGE.lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter(|cell| cell.starts_with(start))
        .map(|cell| shape(&cell[..cell.find("` |").unwrap_or(cell.len())]))
        .collect()
}

#[test]
fn every_relay_of_the_source_is_in_the_relay_table() {
    let (_, sites) = source_lines();
    let known: Vec<RelaySite> = RELAYS
        .iter()
        .map(|relay| RelaySite {
            file: relay.file.to_owned(),
            scope: relay.scope,
            level: relay.level,
        })
        .collect();
    let mut known = known;
    known.sort();
    assert_eq!(sites, known);
}

#[test]
fn the_page_has_every_line_of_the_bridge_and_no_other() {
    let (code, _) = source_lines();
    let page: BTreeSet<String> = page_cells("mcp-bridge-vscode: ")
        .into_iter()
        .filter(|line| !line.starts_with("mcp-bridge-vscode: vscode: error: <>"))
        .collect();
    let arguments: BTreeSet<String> = argument_errors()
        .iter()
        .map(|text| format!("mcp-bridge-vscode: vscode: error: {text}"))
        .collect();
    let code: BTreeSet<String> = code.union(&arguments).cloned().collect();
    let missing: Vec<_> = code.difference(&page).collect();
    let gone: Vec<_> = page.difference(&code).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "lines of the bridge that docs/troubleshooting.md lacks:\n{}\nlines of the page that the bridge no longer writes:\n{}",
        missing
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        gone.iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_page_has_every_cause_with_its_code_and_message_and_no_other() {
    let rows: BTreeSet<String> = PAGE
        .lines()
        .filter(|line| line.starts_with("| `") && !line.starts_with("| `mcp-bridge-vscode"))
        .map(str::to_owned)
        .collect();
    let expected: BTreeSet<String> = Cause::ALL
        .iter()
        .map(|cause| {
            format!(
                "| `{}` | {} | {} |",
                cause.name(),
                cause.code(),
                cause.message()
            )
        })
        .collect();
    let missing: Vec<_> = expected.difference(&rows).collect();
    let gone: Vec<_> = rows.difference(&expected).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "causes missing from the page: {missing:#?}\nrows of the page that are no cause of the bridge: {gone:#?}"
    );
}

#[test]
fn the_page_names_every_rule_of_a_value_that_is_not_valid() {
    let cli = read("cli/mod.rs");
    let start = cli.find("fn value_rule(").unwrap();
    let end = block_end(&cli, start);
    let mut i = start;
    let mut rules = BTreeSet::new();
    while let Some((rule, next)) = next_literal(&cli, i, end.saturating_sub(i)) {
        if rule.starts_with("use ") || rule.starts_with("see ") {
            assert!(PAGE.contains(&format!("`{rule}`")), "the rule {rule}");
            rules.insert(rule);
        }
        i = next;
    }
    assert_eq!(rules.len(), 5);
}

#[test]
fn shapes_make_every_placeholder_the_same() {
    assert_eq!(
        shape("request {key} ({}): no response in {limit}"),
        "request <> (<>): no response in <>"
    );
    assert_eq!(
        shape("request <id> (<method>): no response in <limit>"),
        "request <> (<>): no response in <>"
    );
    assert_eq!(shape("a {{b}} c"), "a {b} c");
    assert_eq!(shape("error: {message}{location}"), "error: <>");
}
