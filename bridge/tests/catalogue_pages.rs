//! The pages stay true to the catalogue of what the user sees
//! (`bridge/src/catalogue/`): docs/troubleshooting.md has every line of the
//! Output channel, every error of the command line and every cause of the
//! catalogue, and no other; docs/configuration.md has every option of the
//! executable and no other, and each `.vscode/mcp.json` entry and `logout` and
//! `doctor` command of the pages is one that the bridge's parser accepts. Two small reads of the
//! source keep the catalogue the only place of these texts: no log call writes a
//! text of its own, and every line of the catalogue is written somewhere.

use mcp_bridge_vscode::cli::{self, ArgsError, Parsed, parse_with_env};
use mcp_bridge_vscode::internals::catalogue::Cause;
use mcp_bridge_vscode::internals::catalogue::{GROUPS, ValueRule, templates};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const TROUBLESHOOTING: &str = include_str!("../../docs/troubleshooting.md");
const CONFIGURATION: &str = include_str!("../../docs/configuration.md");

/// The other pages with `.vscode/mcp.json` entries for the bridge.
const OTHER_PAGES: [(&str, &str); 2] = [
    ("README.md", include_str!("../../README.md")),
    ("docs/toolkit.md", include_str!("../../docs/toolkit.md")),
];

/// The lines of the catalogue that the bridge itself never writes, and why.
const NOT_WRITTEN_BY_THE_BRIDGE: &[(&str, &str)] = &[(
    "UpstreamLost::ConnectionClosed",
    "no link of this version ends without ending the session; the interface of a \
     link allows it, and a test's link does",
)];

fn sorted_lines(lines: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    lines
        .into_iter()
        .map(|line| format!("  {}", line.as_ref()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The backticked first cell of each table row of `page` that starts with `start`.
fn first_cells<'a>(page: &'a str, start: &str) -> BTreeSet<&'a str> {
    page.lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter(|cell| cell.starts_with(start))
        .map(|cell| &cell[..cell.find("` |").unwrap_or(cell.len())])
        .collect()
}

#[test]
fn the_troubleshooting_page_has_every_line_of_the_catalogue_and_no_other() {
    let catalogue: BTreeSet<String> = templates().map(|template| template.line()).collect();
    let page: BTreeSet<String> = first_cells(TROUBLESHOOTING, "mcp-bridge-vscode: ")
        .into_iter()
        .map(str::to_owned)
        .collect();
    let missing: Vec<_> = catalogue.difference(&page).collect();
    let gone: Vec<_> = page.difference(&catalogue).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "lines of the catalogue that docs/troubleshooting.md lacks:\n{}\nlines of the page that the catalogue does not have:\n{}",
        sorted_lines(missing),
        sorted_lines(gone)
    );
    // Each line once: two lines with one text would be one line for the reader.
    assert_eq!(catalogue.len(), templates().count(), "a line twice");
}

#[test]
fn the_troubleshooting_page_has_every_cause_with_its_code_and_message_and_no_other() {
    let rows: BTreeSet<String> = TROUBLESHOOTING
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
        "causes missing from the page:\n{}\nrows of the page that are no cause of the bridge:\n{}",
        sorted_lines(missing),
        sorted_lines(gone)
    );
}

#[test]
fn the_troubleshooting_page_names_every_rule_of_a_value_that_is_not_valid() {
    let row = TROUBLESHOOTING
        .lines()
        .find(|line| line.contains("is not valid: <rule>`"))
        .expect("the row of a value that is not valid");
    let (_, listed) = row
        .split_once("one of: ")
        .expect("the row lists the rules after \"one of: \"");
    let on_page: BTreeSet<&str> = listed.split('`').skip(1).step_by(2).collect();
    let rules: BTreeSet<&str> = ValueRule::ALL.iter().map(|rule| rule.text()).collect();
    assert_eq!(on_page, rules);
}

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file below `dir`, relative to it, with `/`.
fn rust_files(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(dir).unwrap();
                files.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files.sort();
    files
}

/// The source of a file without its unit tests, which may make any line.
fn without_unit_tests(source: &str) -> &str {
    source
        .find("#[cfg(test)]\nmod tests")
        .map_or(source, |end| &source[..end])
}

#[test]
fn every_file_of_lines_of_the_catalogue_is_one_of_its_groups() {
    let catalogue = source_root().join("catalogue");
    let mut files: Vec<String> = rust_files(&catalogue.join("lines"))
        .into_iter()
        .filter(|file| file != "mod.rs")
        .map(|file| format!("lines/{}", file.trim_end_matches(".rs")))
        .collect();
    files.push("cli".to_owned());
    files.sort();
    let mut groups: Vec<String> = GROUPS.iter().map(|(name, _)| name.to_string()).collect();
    groups.sort();
    assert_eq!(groups, files, "GROUPS of catalogue/mod.rs");
}

#[test]
fn every_line_of_the_catalogue_is_written_by_the_bridge() {
    let root = source_root();
    let mut source = String::new();
    for file in rust_files(&root) {
        if file.starts_with("catalogue/") {
            continue;
        }
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        source.push_str(without_unit_tests(&text));
    }
    let mut unwritten = BTreeSet::new();
    let mut written_exceptions = Vec::new();
    for template in templates() {
        let name = format!("{}::{}", template.kind, template.variant);
        let written = source.contains(&name);
        let excepted = NOT_WRITTEN_BY_THE_BRIDGE
            .iter()
            .any(|(line, _)| *line == name);
        match (written, excepted) {
            (false, false) => {
                unwritten.insert(format!("{name}: {}", template.line()));
            }
            (true, true) => written_exceptions.push(name),
            _ => {}
        }
    }
    assert!(
        unwritten.is_empty(),
        "lines of the catalogue that no code of bridge/src writes (remove them, with their rows of docs/troubleshooting.md):\n{}",
        sorted_lines(unwritten)
    );
    assert!(
        written_exceptions.is_empty(),
        "the bridge writes these lines now: take them out of NOT_WRITTEN_BY_THE_BRIDGE: {written_exceptions:?}"
    );
}

/// The macros of `tracing` that write an event with a text of their own.
const LOG_MACROS: [&str; 6] = [
    "error!(", "warn!(", "info!(", "debug!(", "trace!(", "event!(",
];

#[test]
fn no_log_call_has_a_text_of_its_own() {
    let root = source_root();
    let mut found = Vec::new();
    for file in rust_files(&root) {
        // `log::emit!` is the one call of `tracing` that writes an event.
        if file == "log.rs" {
            continue;
        }
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        for (number, line) in without_unit_tests(&text).lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            // With or without `tracing::` (a `use` of the macro), and the target on
            // this line or the next.
            let call =
                code.contains("!(target:") || LOG_MACROS.iter().any(|name| code.contains(name));
            if call {
                found.push(format!("{file}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "log calls that do not write a line of the catalogue (add the line to bridge/src/catalogue/ and write it with log::emit!):\n{}",
        sorted_lines(found)
    );
}

// docs/configuration.md: the pages that a user pastes from must not drift from
// the executable.

/// The fenced blocks of `page` whose info string is `lang`.
fn blocks<'a>(page: &'a str, lang: &str) -> Vec<&'a str> {
    let open = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find(&open) {
        let body = &rest[start + open.len()..];
        let end = body.find("```").unwrap_or(body.len());
        out.push(&body[..end]);
        rest = &body[end..];
    }
    out
}

/// The `${input:id}` references of a text.
fn input_refs(text: &str) -> Vec<String> {
    text.split("${input:")
        .skip(1)
        .map(|rest| rest.split('}').next().unwrap_or_default().to_owned())
        .collect()
}

/// Whether `command` names the bridge executable (any install path, `.exe` too).
fn is_bridge(command: &str) -> bool {
    let file = command.rsplit(['/', '\\']).next().unwrap_or(command);
    file == "mcp-bridge-vscode" || file == "mcp-bridge-vscode.exe"
}

/// One bridge entry of a block: its server name, its `args` and its `env`.
type Entry = (String, Vec<String>, Vec<(String, String)>);

/// The bridge entries of one JSON block.
fn bridge_entries(config: &Value) -> Vec<Entry> {
    let mut out = Vec::new();
    for key in ["servers", "mcpServers"] {
        let Some(servers) = config[key].as_object() else {
            continue;
        };
        for (name, entry) in servers {
            if !entry["command"].as_str().is_some_and(is_bridge) {
                continue;
            }
            let args = entry["args"]
                .as_array()
                .map(|args| {
                    args.iter()
                        .map(|arg| arg.as_str().unwrap_or_default().to_owned())
                        .collect()
                })
                .unwrap_or_default();
            let env = entry["env"]
                .as_object()
                .map(|env| {
                    env.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                        .collect()
                })
                .unwrap_or_default();
            out.push((name.clone(), args, env));
        }
    }
    out
}

/// Parses an entry as the bridge would at its start, with the entry's `env` as
/// the environment (VS Code fills `${input:...}` with what the user types). A
/// `--ca-file` of the page names a file of the reader's machine: its own error
/// means that the parser accepted the arguments.
fn accepts(args: &[String], env: &[(String, String)]) -> Result<(), String> {
    let lookup = |name: &str| {
        env.iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.replace("${input:", "typed-"))
    };
    let mut all = vec!["mcp-bridge-vscode".to_owned()];
    all.extend(args.iter().cloned());
    match parse_with_env(all, &lookup) {
        Ok(Parsed::Run { .. } | Parsed::Logout(_) | Parsed::Doctor(_))
        | Err(ArgsError::CaFile(_)) => Ok(()),
        Ok(Parsed::Print(_)) => Err("prints help instead of serving".into()),
        Err(ArgsError::Usage(error) | ArgsError::Logout(error) | ArgsError::Doctor(error)) => {
            Err(error.0.to_string())
        }
    }
}

#[test]
fn every_bridge_entry_of_the_configuration_page_is_accepted_by_the_parser() {
    let mut checked = 0;
    for block in blocks(CONFIGURATION, "json") {
        let config: Value = serde_json::from_str(block)
            .unwrap_or_else(|error| panic!("a json block is not JSON ({error}):\n{block}"));
        for (name, args, env) in bridge_entries(&config) {
            accepts(&args, &env).unwrap_or_else(|error| {
                panic!("the entry {name} of docs/configuration.md: {error}")
            });
            checked += 1;
        }
    }
    // The forms of the page: stdio (2), URL with sign-in, static header, client
    // with a secret, two redirect ports (2), two accounts (2), file store, proxy.
    assert_eq!(checked, 11);
}

#[test]
fn the_bridge_entries_of_the_readme_and_the_toolkit_are_accepted_by_the_parser() {
    let mut checked = 0;
    for (page, text) in OTHER_PAGES {
        for block in blocks(text, "json") {
            let Ok(config) = serde_json::from_str::<Value>(block) else {
                // The answer files and headers of the toolkit are no configuration.
                continue;
            };
            for (name, args, env) in bridge_entries(&config) {
                accepts(&args, &env)
                    .unwrap_or_else(|error| panic!("the entry {name} of {page}: {error}"));
                checked += 1;
            }
        }
    }
    // README: the first entry; toolkit: stdio, HTTPS, sign-in.
    assert_eq!(checked, 4);
}

#[test]
fn secrets_of_the_configuration_page_come_only_from_password_inputs_through_env() {
    for block in blocks(CONFIGURATION, "json") {
        let config: Value = serde_json::from_str(block).unwrap();
        let declared: BTreeSet<String> = config["inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .inspect(|input| assert_eq!(input["password"], true, "{input}"))
            .map(|input| input["id"].as_str().unwrap().to_owned())
            .collect();
        let mut used = BTreeSet::new();
        for (name, args, env) in bridge_entries(&config) {
            for arg in &args {
                assert!(!arg.contains("${input:"), "{name}: a secret in args: {arg}");
            }
            for (_, value) in &env {
                used.extend(input_refs(value));
            }
        }
        assert_eq!(used, declared, "the inputs of a block:\n{block}");
    }
}

/// The commands of `sh` blocks of `page` that start with `mcp-bridge-vscode
/// <subcommand>`, each checked by the parser; how many there were.
fn check_commands(page: &str, subcommand: &str) -> usize {
    let start = format!("mcp-bridge-vscode {subcommand}");
    let mut checked = 0;
    for block in blocks(page, "sh") {
        for line in block.lines() {
            let Some(rest) = line.strip_prefix(&start) else {
                continue;
            };
            let mut args = vec![subcommand.to_owned()];
            args.extend(rest.split_whitespace().map(str::to_owned));
            accepts(&args, &[]).unwrap_or_else(|error| panic!("{line}: {error}"));
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_logout_commands_of_the_configuration_page_are_accepted_by_the_parser() {
    assert_eq!(check_commands(CONFIGURATION, "logout"), 3);
}

#[test]
fn the_doctor_commands_of_the_configuration_page_are_accepted_by_the_parser() {
    assert_eq!(check_commands(CONFIGURATION, "doctor"), 4);
}

/// The options of the table: the first cell of each row that starts with `| \`--`.
fn table_options() -> BTreeSet<String> {
    CONFIGURATION
        .lines()
        .filter_map(|line| line.strip_prefix("| `--"))
        .map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            format!("--{name}")
        })
        .collect()
}

/// Every long option of the serving command, of `logout` and of `doctor`, from
/// clap itself, with the `--help` and `--version` that clap adds.
fn parser_options() -> BTreeSet<String> {
    let mut serving = cli::command();
    let mut logout = cli::logout::command();
    let mut doctor = cli::doctor::command();
    serving.build();
    logout.build();
    doctor.build();
    serving
        .get_arguments()
        .chain(logout.get_arguments())
        .chain(doctor.get_arguments())
        .filter_map(|arg| arg.get_long())
        .map(|long| format!("--{long}"))
        .collect()
}

#[test]
fn the_options_table_has_every_option_of_the_bridge_and_no_other() {
    let table = table_options();
    let parser = parser_options();
    let missing: Vec<_> = parser.difference(&table).collect();
    let unknown: Vec<_> = table.difference(&parser).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "options of the bridge missing from docs/configuration.md: {missing:?}; options of the page that the bridge does not have: {unknown:?}"
    );
    assert_eq!(table.len(), 24);
}

#[test]
fn the_checker_refuses_an_unknown_option_and_a_missing_variable() {
    assert_eq!(
        accepts(
            &["--allow-http".into(), "https://x.example/mcp".into()],
            &[]
        ),
        Err("the option --allow-http is not known".into())
    );
    assert_eq!(
        accepts(
            &[
                "--header-env".into(),
                "Authorization=API_AUTH".into(),
                "https://x.example/mcp".into()
            ],
            &[]
        ),
        Err("the variable API_AUTH of --header-env is not set".into())
    );
}
