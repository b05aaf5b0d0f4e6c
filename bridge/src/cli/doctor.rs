//! `mcp-bridge-vscode doctor [options] <url>` and `mcp-bridge-vscode doctor
//! [options] -- <command> [args...]`: the options of a server entry (a user pastes
//! the entry's `args` after `doctor`), and doctor's own: `--json`, `--sign-in`,
//! `--call <name>` with `--arguments <json>`. Exit codes: 0 when VS Code will
//! work, 1 when a check failed, 2 for arguments that are not valid.

use super::{ArgsError, Parsed, UsageError, config, given, usage_error};
use crate::catalogue::cli::CliError;
use crate::config::{DoctorOptions, UpstreamTarget};
use crate::log::LogLevel;
use clap::{Arg, ArgAction, Command};
use serde_json::{Map, Value};
use std::ffi::OsString;

pub use crate::catalogue::cli::DOCTOR_USAGE;

/// The command of doctor: the options of a server entry and doctor's own, which
/// are in the options table of docs/configuration.md.
#[doc(hidden)]
pub fn command() -> Command {
    super::command()
        .name("mcp-bridge-vscode doctor")
        .bin_name("mcp-bridge-vscode doctor")
        .override_usage(DOCTOR_USAGE)
        .disable_version_flag(true)
        .about("Check whether VS Code will be able to use a server through the bridge: one finding per check, with the line of the Output channel and what to do. Give the options of the server entry.")
        .after_help("doctor runs the bridge's own code against the server: its start, its sign-in (without a browser unless --sign-in), and what VS Code gets. It writes no token store unless --sign-in completes a sign-in, and calls no tool unless --call names it. Exit codes: 0 when VS Code will work, 1 when a check failed, 2 for arguments that are not valid.")
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("Print one JSON object in place of the text"),
        )
        .arg(
            Arg::new("sign-in")
                .long("sign-in")
                .action(ArgAction::SetTrue)
                .help("Sign in when the server asks for it, as a start of the bridge does (opens the browser unless --no-browser), and keep the sign-in in the token store"),
        )
        .arg(
            Arg::new("call")
                .long("call")
                .value_name("name")
                .help("Call this tool, as VS Code calls it (no tool is called without it)"),
        )
        .arg(
            Arg::new("arguments")
                .long("arguments")
                .value_name("json")
                .help("The arguments of the tool of --call: a JSON object [default: {}]"),
        )
}

/// Parses the arguments after `doctor`.
pub(super) fn parse(
    args: &[OsString],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Parsed, ArgsError> {
    let all_args = std::iter::once(OsString::from("doctor")).chain(args.iter().cloned());
    let matches = match command().try_get_matches_from(all_args) {
        Ok(matches) => matches,
        Err(error) => {
            return match error.kind() {
                clap::error::ErrorKind::DisplayHelp => {
                    Ok(Parsed::Print(error.render().to_string()))
                }
                _ => Err(ArgsError::Doctor(usage_error(&error))),
            };
        }
    };
    let usage = |error: CliError| ArgsError::Doctor(UsageError(error));
    let mut warnings = Vec::new();
    let config = config(&matches, env, &mut warnings).map_err(|error| match error {
        ArgsError::Usage(error) => ArgsError::Doctor(error),
        other => other,
    })?;
    let sign_in = matches.get_flag("sign-in");
    if let UpstreamTarget::Url(target) = &config.upstream {
        if sign_in
            && target
                .headers
                .iter()
                .any(|header| header.name == "authorization")
        {
            return Err(usage(CliError::AuthorizationExcludesSignIn {
                option: "sign-in",
            }));
        }
    } else if sign_in {
        return Err(usage(CliError::OnlyForUrlForm { option: "sign-in" }));
    }
    let arguments = match matches.get_one::<String>("arguments") {
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(arguments)) => Some(arguments),
            _ => return Err(usage(CliError::ArgumentsNotAnObject)),
        },
        None => None,
    };
    let call = match (matches.get_one::<String>("call"), arguments) {
        (Some(name), arguments) => Some((name.clone(), arguments.unwrap_or_else(Map::new))),
        (None, Some(_)) => return Err(usage(CliError::ArgumentsWithoutCall)),
        (None, None) => None,
    };
    let echo = given(&matches, "log-level")
        .then(|| matches.get_one::<LogLevel>("log-level").copied())
        .flatten();
    Ok(Parsed::Doctor(Box::new(DoctorOptions {
        config,
        json: matches.get_flag("json"),
        sign_in,
        call,
        echo,
        warnings,
    })))
}

/// Runs doctor; the exit code.
pub fn run(options: &DoctorOptions) -> u8 {
    crate::doctor::run(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_doctor(args: &[&str]) -> Result<DoctorOptions, ArgsError> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        match parse(&args, &|name| {
            (name == "API_AUTH").then(|| "Bearer t".to_owned())
        })? {
            Parsed::Doctor(options) => Ok(*options),
            other => panic!("{other:?}"),
        }
    }

    fn error(args: &[&str]) -> String {
        match parse_doctor(args) {
            Err(ArgsError::Doctor(UsageError(error))) => error.to_string(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn doctor_takes_the_options_of_a_server_entry_and_its_own() {
        let options = parse_doctor(&[
            "--json",
            "--sign-in",
            "--call",
            "echo",
            "--arguments",
            r#"{"text":"hi"}"#,
            "--redirect-port",
            "41895",
            "https://mcp.example.com/mcp",
        ])
        .unwrap();
        assert!(options.json && options.sign_in);
        let (name, arguments) = options.call.unwrap();
        assert_eq!(
            (name.as_str(), arguments["text"].as_str()),
            ("echo", Some("hi"))
        );
        assert_eq!(options.echo, None);
        let UpstreamTarget::Url(target) = &options.config.upstream else {
            panic!()
        };
        assert_eq!(target.sign_in.redirect_port, 41895);
        let stdio = parse_doctor(&["--log-level", "debug", "--", "/abs/server", "-v"]).unwrap();
        assert_eq!(stdio.echo, Some(LogLevel::Debug));
        assert!(!stdio.json && !stdio.sign_in && stdio.call.is_none());
    }

    #[test]
    fn doctor_refuses_what_does_not_fit_and_names_the_option() {
        assert_eq!(
            error(&["--sign-in", "--", "/abs/server"]),
            "the option --sign-in is for the URL form, not for -- and a command"
        );
        assert_eq!(
            error(&[
                "--sign-in",
                "--header-env",
                "Authorization=API_AUTH",
                "https://x.example/mcp"
            ]),
            "a static Authorization header and --sign-in exclude each other: the header disables the sign-in"
        );
        assert_eq!(
            error(&["--arguments", "{}", "--", "/abs/server"]),
            "the option --arguments needs --call"
        );
        assert_eq!(
            error(&["--call", "x", "--arguments", "[1]", "--", "/abs/server"]),
            "the value of the option --arguments is not valid: use a JSON object"
        );
        assert_eq!(
            error(&["--frobnicate", "--", "x"]),
            "the option --frobnicate is not known"
        );
        assert_eq!(
            error(&[]),
            "the upstream command is missing: write -- and the command of the server"
        );
        assert!(error(&["http://example.com/mcp"]).contains("not a loopback host"));
    }

    #[test]
    fn the_report_of_an_error_has_the_usage_of_doctor() {
        let report = ArgsError::Doctor(UsageError(CliError::OptionNotKnown {
            option: "--x".into(),
        }))
        .report();
        assert!(report.starts_with("mcp-bridge-vscode: vscode: error: the option --x is not known\nUsage: mcp-bridge-vscode doctor [options] <url>\n"));
        assert!(report.ends_with("Run mcp-bridge-vscode doctor --help for the options.\n"));
    }
}
