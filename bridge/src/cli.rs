//! The command line: `mcp-bridge-vscode [options] -- <command> [args...]`.
//!
//! clap parses; this file turns its errors into the lines of the contract
//! (`mcp-bridge-vscode: vscode: error: the option <option> is not known`, then the
//! usage, exit code 2). An error line names the option, never its value.

use crate::config::{Config, DEFAULT_MAX_LINE_BYTES, Limits, MAX_MAX_LINE_BYTES, UpstreamTarget};
use crate::log::LogLevel;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use std::ffi::OsString;
use std::time::Duration;

/// The forms of the command line that this version serves.
pub const USAGE: &str = "mcp-bridge-vscode [options] -- <command> [args...]";

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    Run(Box<Config>),
    /// `--help` or `--version`: print the text on stdout and exit 0.
    Print(String),
}

/// A command line that is not valid: the text of the error line (without its
/// prefix), for stderr with the usage, and exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl UsageError {
    /// The lines for stderr: the error line, then the usage.
    pub fn report(&self) -> String {
        format!(
            "mcp-bridge-vscode: vscode: error: {}\nUsage: {USAGE}\nRun mcp-bridge-vscode --help for the options.\n",
            self.0
        )
    }
}

fn command() -> Command {
    Command::new("mcp-bridge-vscode")
        .version(env!("CARGO_PKG_VERSION"))
        .about("A stdio MCP server of revision 2025-11-25 for the two MCP clients of VS Code, in front of an MCP server of revision 2026-07-28.")
        .override_usage(USAGE)
        .args_override_self(true)
        .disable_help_subcommand(true)
        .after_help("The bridge starts <command> at the first initialize of VS Code and speaks revision 2026-07-28 to it over stdio. Write absolute paths. Exit codes: 0 at the end of stdin, 1 when the upstream command stops or at an internal error, 2 for arguments that are not valid.")
        .arg(
            Arg::new("name")
                .long("name")
                .value_name("name")
                .help("The server name for VS Code when the upstream server sends no name [default: the file name of <command> without its extension]"),
        )
        .arg(
            Arg::new("log-level")
                .long("log-level")
                .value_name("level")
                .value_parser(value_parser!(LogLevel))
                .default_value("info")
                .help("The level of the log lines on stderr: err, warn, info or debug"),
        )
        .arg(
            Arg::new("discover-timeout")
                .long("discover-timeout")
                .value_name("s")
                .value_parser(value_parser!(u64).range(1..=86_400))
                .default_value("60")
                .help("The time in seconds for the answer of the upstream server to server/discover"),
        )
        .arg(
            Arg::new("max-line-bytes")
                .long("max-line-bytes")
                .value_name("n")
                .value_parser(value_parser!(u64).range(1..=MAX_MAX_LINE_BYTES as u64))
                .default_value("67108864")
                .help("The maximum length of one message in bytes, from 1 to 1073741824 (1 GiB), for the messages of VS Code and of the upstream server"),
        )
        .arg(
            Arg::new("target")
                .value_name("url")
                .value_parser(value_parser!(OsString))
                .hide(true),
        )
        .arg(
            Arg::new("command")
                .value_name("command")
                .value_parser(value_parser!(OsString))
                .action(ArgAction::Append)
                .last(true)
                .help("The upstream server: a command and its arguments, after --"),
        )
}

/// Parses the arguments (the first one is the program name).
pub fn parse<I, T>(args: I) -> Result<Parsed, UsageError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = match command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(error) => {
            return match error.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    Ok(Parsed::Print(error.render().to_string()))
                }
                _ => Err(usage_error(&error)),
            };
        }
    };
    Ok(Parsed::Run(Box::new(config(&matches)?)))
}

fn config(matches: &ArgMatches) -> Result<Config, UsageError> {
    let command: Vec<OsString> = matches
        .get_many::<OsString>("command")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let target = matches.get_one::<OsString>("target");
    let upstream = match (target, command.split_first()) {
        (Some(_), Some(_)) => {
            return Err(UsageError(
                "write either a URL or -- and a command, not both".into(),
            ));
        }
        (Some(target), None) => return Err(target_error(target)),
        (None, Some((program, _))) if program.is_empty() => {
            return Err(UsageError("the upstream command after -- is empty".into()));
        }
        (None, Some((program, args))) => UpstreamTarget::Command {
            program: program.clone(),
            args: args.to_vec(),
        },
        (None, None) => {
            return Err(UsageError(
                "the upstream command is missing: write -- and the command of the server".into(),
            ));
        }
    };
    let seconds = |id: &str| matches.get_one::<u64>(id).copied().unwrap_or_default();
    Ok(Config {
        name: matches.get_one::<String>("name").cloned(),
        log_level: matches
            .get_one::<LogLevel>("log-level")
            .copied()
            .unwrap_or(LogLevel::Info),
        discover_timeout: Duration::from_secs(seconds("discover-timeout")),
        max_line_bytes: usize::try_from(seconds("max-line-bytes"))
            .unwrap_or(DEFAULT_MAX_LINE_BYTES),
        upstream,
        limits: Limits::default(),
    })
}

/// A word before `--` that is not an option: a URL, `logout`, or a command without `--`.
fn target_error(target: &OsString) -> UsageError {
    let text = target.to_string_lossy();
    if text == "logout" {
        UsageError("logout is not available in this version: it comes with the URL form".into())
    } else if text.starts_with("https://") || text.starts_with("http://") {
        UsageError(
            "the URL form is not available in this version: write -- and the command of a stdio server".into(),
        )
    } else {
        UsageError(
            "an argument before -- is not an option: write -- before the upstream command".into(),
        )
    }
}

/// The error line for a clap error. It names the option, never a value.
fn usage_error(error: &clap::Error) -> UsageError {
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(text)) => Some(text.clone()),
        _ => None,
    };
    let option = context(ContextKind::InvalidArg)
        .map(|arg| option_name(&arg))
        .unwrap_or_else(|| "?".into());
    let text = match error.kind() {
        ErrorKind::UnknownArgument if option.starts_with('-') => {
            format!("the option {option} is not known")
        }
        ErrorKind::UnknownArgument => {
            "an argument before -- is not an option: write -- before the upstream command".into()
        }
        ErrorKind::InvalidValue
            if context(ContextKind::InvalidValue).is_some_and(|value| value.is_empty()) =>
        {
            format!("the option {option} has no value")
        }
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            format!(
                "the value of the option {option} is not valid: {}",
                value_rule(&option)
            )
        }
        ErrorKind::NoEquals | ErrorKind::TooFewValues => {
            format!("the option {option} has no value")
        }
        ErrorKind::TooManyValues => {
            format!("the option {option} takes one value")
        }
        _ => "the arguments are not valid".into(),
    };
    UsageError(text)
}

/// `--name <name>` → `--name`; `--x=secret` → `--x`.
fn option_name(arg: &str) -> String {
    let name = arg.split_whitespace().next().unwrap_or(arg);
    name.split('=').next().unwrap_or(name).to_owned()
}

fn value_rule(option: &str) -> &'static str {
    match option {
        "--log-level" => "use err, warn, info or debug",
        "--discover-timeout" => "use a whole number of seconds from 1 to 86400",
        "--max-line-bytes" => "use a whole number from 1 to 1073741824",
        _ => "see --help",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Config, UsageError> {
        let mut all = vec!["mcp-bridge-vscode"];
        all.extend_from_slice(args);
        match parse(all)? {
            Parsed::Run(config) => Ok(*config),
            Parsed::Print(text) => panic!("printed {text}"),
        }
    }

    fn error(args: &[&str]) -> String {
        run(args).unwrap_err().0
    }

    #[test]
    fn the_command_form_with_defaults() {
        let config = run(&["--", "/abs/server", "--its-args", "x"]).unwrap();
        assert_eq!(
            config.upstream,
            UpstreamTarget::Command {
                program: "/abs/server".into(),
                args: vec!["--its-args".into(), "x".into()]
            }
        );
        assert_eq!(config.name, None);
        assert_eq!(config.log_level, LogLevel::Info);
        assert_eq!(config.discover_timeout, Duration::from_secs(60));
        assert_eq!(config.max_line_bytes, 64 * 1024 * 1024);
    }

    #[test]
    fn values_after_equals_or_as_the_next_argument_and_the_last_one_wins() {
        let config = run(&[
            "--name=a",
            "--name",
            "b",
            "--log-level",
            "debug",
            "--log-level=warn",
            "--discover-timeout",
            "5",
            "--max-line-bytes=1",
            "--",
            "srv",
        ])
        .unwrap();
        assert_eq!(config.name.as_deref(), Some("b"));
        assert_eq!(config.log_level, LogLevel::Warn);
        assert_eq!(config.discover_timeout, Duration::from_secs(5));
        assert_eq!(config.max_line_bytes, 1);
    }

    #[test]
    fn unknown_options_are_named_without_their_value() {
        assert_eq!(
            error(&["--frobnicate", "--", "x"]),
            "the option --frobnicate is not known"
        );
        assert_eq!(
            error(&["--client-secret=abc123", "--", "x"]),
            "the option --client-secret is not known"
        );
        assert_eq!(
            error(&["--allow-http", "--", "x"]),
            "the option --allow-http is not known"
        );
    }

    #[test]
    fn missing_values_and_commands_are_named() {
        assert_eq!(error(&["--name"]), "the option --name has no value");
        assert_eq!(
            error(&[]),
            "the upstream command is missing: write -- and the command of the server"
        );
        assert_eq!(
            error(&["--"]),
            "the upstream command is missing: write -- and the command of the server"
        );
        assert_eq!(error(&["--", ""]), "the upstream command after -- is empty");
    }

    #[test]
    fn values_out_of_range_are_refused() {
        assert_eq!(
            error(&["--max-line-bytes", "0", "--", "x"]),
            "the value of the option --max-line-bytes is not valid: use a whole number from 1 to 1073741824"
        );
        assert!(
            error(&["--max-line-bytes", "1073741825", "--", "x"])
                .starts_with("the value of the option --max-line-bytes")
        );
        assert_eq!(
            error(&["--log-level", "trace", "--", "x"]),
            "the value of the option --log-level is not valid: use err, warn, info or debug"
        );
    }

    #[test]
    fn the_url_form_and_logout_are_refused_until_they_exist() {
        assert!(
            error(&["https://mcp.example.com/mcp"]).starts_with("the URL form is not available")
        );
        assert!(error(&["logout", "--", "x"]).starts_with("write either"));
        assert!(error(&["logout"]).starts_with("logout is not available"));
        assert!(error(&["/abs/server"]).contains("write -- before the upstream command"));
    }

    #[test]
    fn help_and_version_go_to_stdout() {
        let Ok(Parsed::Print(help)) = parse(["mcp-bridge-vscode", "--help"]) else {
            panic!()
        };
        assert!(help.contains(USAGE) && help.contains("--max-line-bytes"));
        let Ok(Parsed::Print(version)) = parse(["mcp-bridge-vscode", "--version"]) else {
            panic!()
        };
        assert_eq!(
            version.trim(),
            format!("mcp-bridge-vscode {}", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn the_report_has_the_error_line_then_the_usage() {
        assert_eq!(
            UsageError("the option --x is not known".into()).report(),
            "mcp-bridge-vscode: vscode: error: the option --x is not known\nUsage: mcp-bridge-vscode [options] -- <command> [args...]\nRun mcp-bridge-vscode --help for the options.\n"
        );
    }
}
