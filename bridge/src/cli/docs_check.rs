//! docs/configuration.md stays true: every `.vscode/mcp.json` block of the page is
//! given to the bridge's own parser, and the options table has every option of
//! the clap commands and no other (issue 19). A page that a user pastes from
//! must not drift from the executable.

use super::{ArgsError, Parsed, parse_with_env};
use serde_json::Value;
use std::collections::BTreeSet;

const PAGE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../docs/configuration.md"
));

/// The other pages with `.vscode/mcp.json` entries for the bridge.
const OTHER_PAGES: [(&str, &str); 2] = [
    (
        "README.md",
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")),
    ),
    (
        "docs/toolkit.md",
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/toolkit.md")),
    ),
];

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
            Err(error.0)
        }
    }
}

#[test]
fn every_bridge_entry_of_the_page_is_accepted_by_the_parser() {
    let mut checked = 0;
    for block in blocks(PAGE, "json") {
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
fn secrets_of_the_page_come_only_from_password_inputs_through_env() {
    for block in blocks(PAGE, "json") {
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

#[test]
fn the_logout_commands_of_the_page_are_accepted_by_the_parser() {
    let mut checked = 0;
    for block in blocks(PAGE, "sh") {
        for line in block.lines() {
            let Some(rest) = line.strip_prefix("mcp-bridge-vscode logout") else {
                continue;
            };
            let mut args = vec!["logout".to_owned()];
            args.extend(rest.split_whitespace().map(str::to_owned));
            accepts(&args, &[]).unwrap_or_else(|error| panic!("{line}: {error}"));
            checked += 1;
        }
    }
    assert_eq!(checked, 3);
}

#[test]
fn the_doctor_commands_of_the_page_are_accepted_by_the_parser() {
    let mut checked = 0;
    for block in blocks(PAGE, "sh") {
        for line in block.lines() {
            let Some(rest) = line.strip_prefix("mcp-bridge-vscode doctor") else {
                continue;
            };
            let mut args = vec!["doctor".to_owned()];
            args.extend(rest.split_whitespace().map(str::to_owned));
            accepts(&args, &[]).unwrap_or_else(|error| panic!("{line}: {error}"));
            checked += 1;
        }
    }
    assert_eq!(checked, 4);
}

/// The options of the table: the first cell of each row that starts with `| \`--`.
fn table_options() -> BTreeSet<String> {
    PAGE.lines()
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

/// Every long option of the serving command, of `logout` and of `doctor`, from clap itself,
/// with the `--help` and `--version` that clap adds.
fn parser_options() -> BTreeSet<String> {
    let mut serving = super::command();
    let mut logout = super::logout::command();
    let mut doctor = super::doctor::command();
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
