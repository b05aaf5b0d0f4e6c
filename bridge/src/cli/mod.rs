//! The command line: `mcp-bridge-vscode [options] -- <command> [args...]` and
//! `mcp-bridge-vscode [options] <url>`.
//!
//! clap parses; this file turns its errors into the lines of the contract
//! (`mcp-bridge-vscode: vscode: error: the option <option> is not known`, then the
//! usage, exit code 2), whose texts are the catalogue's. An error line names the
//! option, never its value. The checks of the URL form are in [`url_form`].

pub mod doctor;
pub mod logout;
pub mod url_form;

use crate::catalogue::cli::{CliError, CliWarning, Usage, ValueRule};
use crate::catalogue::{Line as _, Prefix};
use crate::config::{
    Config, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_REDIRECT_PORT, HttpTarget,
    Limits, MAX_MAX_LINE_BYTES, SignInOptions, StaticHeader, UpstreamTarget,
};
use crate::log::LogLevel;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use std::ffi::OsString;
use std::time::Duration;

pub use crate::catalogue::cli::USAGE;

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Serve VS Code; the warnings go to the log once it is open.
    Run {
        config: Box<Config>,
        warnings: Vec<CliWarning>,
    },
    /// `--help` or `--version`: print the text on stdout and exit 0.
    Print(String),
    /// `logout`: delete stored sign-ins ([`logout::run`]).
    Logout(logout::LogoutArgs),
    /// `doctor`: check a server for VS Code ([`doctor::run`]).
    Doctor(Box<crate::config::DoctorOptions>),
}

/// Why the bridge does not start: exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgsError {
    /// The arguments are not valid: the line, then the usage.
    Usage(UsageError),
    /// The file of `--ca-file` cannot be used (why): the line alone.
    CaFile(String),
    /// The arguments of `logout` are not valid: the line, then its usage.
    Logout(UsageError),
    /// The arguments of `doctor` are not valid: the line, then its usage.
    Doctor(UsageError),
}

impl ArgsError {
    /// The lines for stderr.
    pub fn report(&self) -> String {
        match self {
            Self::Usage(error) => error.report(),
            Self::Logout(error) => error.report_with(Usage::Logout),
            Self::Doctor(error) => error.report_with(Usage::Doctor),
            Self::CaFile(error) => {
                let line = CliError::CaFileUnusable {
                    error: error.clone(),
                };
                format!("{}{line}\n", line.prefix())
            }
        }
    }
}

impl From<UsageError> for ArgsError {
    fn from(error: UsageError) -> Self {
        Self::Usage(error)
    }
}

/// A command line that is not valid: the error line, for stderr with the usage,
/// and exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub CliError);

impl UsageError {
    /// The lines for stderr: the error line, then the usage.
    pub fn report(&self) -> String {
        self.report_with(Usage::Serving)
    }

    fn report_with(&self, usage: Usage) -> String {
        let prefix: Prefix = self.0.prefix();
        format!("{prefix}{}\n{usage}", self.0)
    }
}

impl From<CliError> for UsageError {
    fn from(error: CliError) -> Self {
        Self(error)
    }
}

impl From<CliError> for ArgsError {
    fn from(error: CliError) -> Self {
        Self::Usage(UsageError(error))
    }
}

/// The serving command: its options are the options table of docs/configuration.md.
#[doc(hidden)]
pub fn command() -> Command {
    Command::new("mcp-bridge-vscode")
        .version(env!("CARGO_PKG_VERSION"))
        .about("A stdio MCP server of revision 2025-11-25 for the two MCP clients of VS Code, in front of an MCP server of revision 2026-07-28.")
        .override_usage(USAGE)
        .args_override_self(true)
        .disable_help_subcommand(true)
        .after_help("The bridge starts <command> at the first initialize of VS Code and speaks revision 2026-07-28 to it over stdio, or it connects to the server at <url> over Streamable HTTP. Write absolute paths. Never write a secret in the arguments: give it in an environment variable and name the variable with --header-env. Exit codes: 0 at the end of stdin, 1 when the upstream command stops or at an internal error, 2 for arguments that are not valid, a missing variable of --header-env or a --ca-file that the bridge cannot use.\n\nSubcommands:\n  mcp-bridge-vscode doctor [options] <url> | -- <command> [args...]\n      Check a server before you add it to VS Code: give the options of its entry (mcp-bridge-vscode doctor --help).\n  mcp-bridge-vscode logout [--account <label>] [options] <url> | --all\n      Delete a stored sign-in (mcp-bridge-vscode logout --help).")
        .arg(
            Arg::new("name")
                .long("name")
                .value_name("name")
                .help("The server name for VS Code when the upstream server sends no name [default: the file name of <command> without its extension, or the host of <url>]"),
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
        .args(url_form_args())
        .arg(
            Arg::new("target")
                .value_name("url")
                .value_parser(value_parser!(OsString))
                .help("The upstream server at a URL: https, or http to a loopback host"),
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

/// The options of the URL form (M4), with their value names and help.
fn url_form_args() -> Vec<Arg> {
    let valued = |id: &'static str, value: &'static str, help: &'static str| {
        Arg::new(id).long(id).value_name(value).help(help)
    };
    vec![
        valued("header-env", "name>=<var", "Send the header <name> with the value of the environment variable <var>; for a secret. Each one adds a header")
            .action(ArgAction::Append),
        valued("header", "name>:<value", "Send the header <name> with <value>. VS Code writes the command line to its log: never use it for a secret. Each one adds a header")
            .action(ArgAction::Append),
        valued("max-response-bytes", "n", "The maximum length of one JSON response or one event of a stream, from 1 to 1073741824 (1 GiB)")
            .value_parser(value_parser!(u64).range(1..=MAX_MAX_LINE_BYTES as u64))
            .default_value("67108864"),
        valued("ca-file", "path", "Also trust the CA certificates of this PEM file (besides those of the system)")
            .value_parser(value_parser!(std::path::PathBuf)),
        valued("client-id", "id", "Use this client ID, issued by the authorization server; its secret comes from MCP_BRIDGE_CLIENT_SECRET"),
        valued("client-issuer", "url", "The issuer of --client-id; a client with a secret needs it"),
        valued("client-metadata-url", "url", "Use the client ID metadata document at this URL [default: the document of the bridge, with the default --redirect-port]"),
        valued("redirect-port", "port", "The port of the redirect URI http://127.0.0.1:<port>/callback [default: 41894]")
            .value_parser(value_parser!(u16).range(1..)),
        valued("account", "label", "The account of the stored sign-in: 1 to 64 letters, digits, -, ., _, @ or + [default: default]"),
        valued("token-store", "store", "Where the bridge keeps the tokens: auto, keychain, file or memory [default: auto]"),
        valued("token-key-file", "path", "The file with the key of the file store; only your account may read it")
            .value_parser(value_parser!(std::path::PathBuf)),
        Arg::new("no-browser")
            .long("no-browser")
            .action(ArgAction::SetTrue)
            .help("Do not open a browser: write the URL of the sign-in to stderr"),
        valued("sign-in-timeout", "s", "The time in seconds for the sign-in in the browser [default: 300]")
            .value_parser(value_parser!(u64).range(1..=86_400)),
    ]
}

/// The ids of the options of the URL form's connection.
const HTTP_OPTIONS: [&str; 4] = ["header-env", "header", "max-response-bytes", "ca-file"];

/// The ids of the options that only the URL form takes: those of its connection
/// and those of the sign-in.
fn url_form_options() -> impl Iterator<Item = &'static str> {
    HTTP_OPTIONS.into_iter().chain(SIGN_IN_OPTIONS)
}

/// The options of the sign-in, which a static Authorization header excludes.
const SIGN_IN_OPTIONS: [&str; 9] = [
    "client-id",
    "client-issuer",
    "client-metadata-url",
    "redirect-port",
    "account",
    "token-store",
    "token-key-file",
    "no-browser",
    "sign-in-timeout",
];

/// Parses the arguments (the first one is the program name), with the
/// environment of the process.
pub fn parse<I, T>(args: I) -> Result<Parsed, ArgsError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    parse_with_env(args, &|name| std::env::var(name).ok())
}

/// [`parse`], with the variables from `env`.
pub fn parse_with_env<I, T>(
    args: I,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Parsed, ArgsError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if args.get(1).is_some_and(|word| word == "doctor") {
        return doctor::parse(args.get(2..).unwrap_or_default(), env);
    }
    if args.get(1).is_some_and(|word| word == "logout") {
        return match logout::parse(args.get(2..).unwrap_or_default())? {
            logout::ParsedLogout::Run(logout) => Ok(Parsed::Logout(logout)),
            logout::ParsedLogout::Print(text) => Ok(Parsed::Print(text)),
        };
    }
    let matches = match command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(error) => {
            return match error.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    Ok(Parsed::Print(error.render().to_string()))
                }
                _ => Err(usage_error(&error).into()),
            };
        }
    };
    let mut warnings = Vec::new();
    let config = config(&matches, env, &mut warnings)?;
    Ok(Parsed::Run {
        config: Box::new(config),
        warnings,
    })
}

/// Whether the user wrote the option (not its default).
fn given(matches: &ArgMatches, id: &str) -> bool {
    matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
}

fn config(
    matches: &ArgMatches,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<CliWarning>,
) -> Result<Config, ArgsError> {
    let command: Vec<OsString> = matches
        .get_many::<OsString>("command")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    let target = matches.get_one::<OsString>("target");
    let upstream = match (target, command.split_first()) {
        (Some(_), Some(_)) => {
            return Err(CliError::UrlAndCommand.into());
        }
        (Some(target), None) => url_target(target, matches, env, warnings)?,
        (None, Some(_)) if url_form_options().any(|id| given(matches, id)) => {
            let option = url_form_options()
                .find(|id| given(matches, id))
                .unwrap_or_default();
            return Err(CliError::OnlyForUrlForm { option }.into());
        }
        (None, Some((program, _))) if program.is_empty() => {
            return Err(CliError::CommandEmpty.into());
        }
        (None, Some((program, args))) => UpstreamTarget::Command {
            program: program.clone(),
            args: args.to_vec(),
        },
        (None, None) => {
            return Err(CliError::CommandMissing.into());
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

/// The URL form: the URL, the headers, the CA certificates, the sign-in options.
fn url_target(
    target: &OsString,
    matches: &ArgMatches,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<CliWarning>,
) -> Result<UpstreamTarget, ArgsError> {
    let text = target.to_string_lossy();
    if !text.contains("://") {
        return Err(target_error(target).into());
    }
    let url = url_form::check_url(&text).map_err(UsageError)?;
    let mut headers: Vec<(usize, StaticHeader)> = Vec::new();
    if let (Some(specs), Some(indices)) = (
        matches.get_many::<String>("header"),
        matches.indices_of("header"),
    ) {
        for (spec, index) in specs.zip(indices) {
            let (header, secret) = url_form::header(spec).map_err(UsageError)?;
            if secret {
                warnings.push(CliWarning::HeaderOnCommandLine {
                    name: spec.split(':').next().unwrap_or_default().trim().to_owned(),
                });
            }
            headers.push((index, header));
        }
    }
    if let (Some(specs), Some(indices)) = (
        matches.get_many::<String>("header-env"),
        matches.indices_of("header-env"),
    ) {
        for (spec, index) in specs.zip(indices) {
            headers.push((index, url_form::header_env(spec, env).map_err(UsageError)?));
        }
    }
    // In the order of the command line.
    headers.sort_by_key(|(index, _)| *index);
    let headers: Vec<StaticHeader> = headers.into_iter().map(|(_, header)| header).collect();
    let sign_in = sign_in_options(matches, env)?;
    if headers.iter().any(|header| header.name == "authorization")
        && let Some(option) = SIGN_IN_OPTIONS.iter().find(|id| given(matches, id))
    {
        return Err(CliError::AuthorizationExcludesSignIn { option }.into());
    }
    let extra_roots = match matches.get_one::<std::path::PathBuf>("ca-file") {
        Some(path) => url_form::ca_file(path).map_err(ArgsError::CaFile)?,
        None => Vec::new(),
    };
    let max_response_bytes = matches
        .get_one::<u64>("max-response-bytes")
        .and_then(|bytes| usize::try_from(*bytes).ok())
        .unwrap_or(DEFAULT_MAX_RESPONSE_BYTES);
    Ok(UpstreamTarget::Url(Box::new(HttpTarget {
        url,
        headers,
        max_response_bytes,
        extra_roots,
        sign_in,
    })))
}

/// The sign-in options, checked now (the sign-in uses them).
fn sign_in_options(
    matches: &ArgMatches,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<SignInOptions, ArgsError> {
    let text = |id: &str| matches.get_one::<String>(id).cloned();
    let client_issuer = text("client-issuer")
        .map(|url| url_form::https_url(&url, "--client-issuer", false))
        .transpose()
        .map_err(UsageError)?;
    let client_id = text("client-id");
    // An empty secret is no secret, as for the sign-in (an input left empty).
    let has_secret = env("MCP_BRIDGE_CLIENT_SECRET").is_some_and(|secret| !secret.is_empty());
    if client_id.is_some() && has_secret && client_issuer.is_none() {
        return Err(CliError::SecretNeedsIssuer.into());
    }
    let defaults = SignInOptions::default();
    Ok(SignInOptions {
        client_id,
        client_issuer,
        client_metadata_url: text("client-metadata-url")
            .map(|url| url_form::https_url(&url, "--client-metadata-url", true))
            .transpose()
            .map_err(UsageError)?,
        redirect_port: matches
            .get_one::<u16>("redirect-port")
            .copied()
            .unwrap_or(DEFAULT_REDIRECT_PORT),
        account: match text("account") {
            Some(label) => url_form::account(&label).map_err(UsageError)?,
            None => defaults.account,
        },
        token_store: match text("token-store") {
            Some(store) => url_form::token_store(&store).map_err(UsageError)?,
            None => defaults.token_store,
        },
        token_key_file: matches
            .get_one::<std::path::PathBuf>("token-key-file")
            .cloned(),
        no_browser: matches.get_flag("no-browser"),
        sign_in_timeout: matches
            .get_one::<u64>("sign-in-timeout")
            .map_or(defaults.sign_in_timeout, |seconds| {
                Duration::from_secs(*seconds)
            }),
    })
}

/// A word before `--` that is not an option: a URL, `logout` or `doctor` after an
/// option, or a command without `--`.
fn target_error(target: &OsString) -> CliError {
    if target == "logout" {
        CliError::LogoutFirst
    } else if target == "doctor" {
        CliError::DoctorFirst
    } else {
        CliError::NotAnOption
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
    let error = match error.kind() {
        ErrorKind::UnknownArgument if option.starts_with('-') => {
            CliError::OptionNotKnown { option }
        }
        ErrorKind::UnknownArgument => CliError::NotAnOption,
        ErrorKind::InvalidValue
            if context(ContextKind::InvalidValue).is_some_and(|value| value.is_empty()) =>
        {
            CliError::OptionHasNoValue { option }
        }
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => CliError::ValueNotValid {
            rule: value_rule(&option),
            option,
        },
        ErrorKind::NoEquals | ErrorKind::TooFewValues => CliError::OptionHasNoValue { option },
        // No option takes several values: only a flag with `=` gets here.
        ErrorKind::TooManyValues => CliError::OptionTakesNoValue { option },
        _ => CliError::ArgumentsNotValid,
    };
    UsageError(error)
}

/// `--name <name>` → `--name`; `--x=secret` → `--x`.
fn option_name(arg: &str) -> String {
    let name = arg.split_whitespace().next().unwrap_or(arg);
    name.split('=').next().unwrap_or(name).to_owned()
}

fn value_rule(option: &str) -> ValueRule {
    match option {
        "--log-level" => ValueRule::LogLevel,
        "--discover-timeout" | "--sign-in-timeout" => ValueRule::Seconds,
        "--max-line-bytes" | "--max-response-bytes" => ValueRule::Bytes,
        "--redirect-port" => ValueRule::Port,
        _ => ValueRule::SeeHelp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "API_AUTH").then(|| "Bearer s3cr3t".to_owned())
    }

    fn run(args: &[&str]) -> Result<Config, ArgsError> {
        run_with(args).map(|(config, _)| config)
    }

    fn run_with(args: &[&str]) -> Result<(Config, Vec<String>), ArgsError> {
        let mut all = vec!["mcp-bridge-vscode"];
        all.extend_from_slice(args);
        match parse_with_env(all, &env)? {
            Parsed::Run { config, warnings } => {
                Ok((*config, warnings.iter().map(ToString::to_string).collect()))
            }
            Parsed::Print(text) => panic!("printed {text}"),
            Parsed::Logout(args) => panic!("logout {args:?}"),
            Parsed::Doctor(options) => panic!("doctor {options:?}"),
        }
    }

    fn error(args: &[&str]) -> String {
        match run(args).unwrap_err() {
            ArgsError::Usage(error) => error.0.to_string(),
            ArgsError::CaFile(error) => panic!("a CA file error: {error}"),
            ArgsError::Logout(error) => panic!("a logout error: {error:?}"),
            ArgsError::Doctor(error) => panic!("a doctor error: {error:?}"),
        }
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
    fn logout_and_a_command_without_dashes_are_refused() {
        assert!(error(&["--name", "x", "logout", "--", "y"]).starts_with("write either"));
        assert_eq!(
            error(&["--name", "x", "logout"]),
            "write logout first, before its options"
        );
        assert_eq!(
            error(&["--name", "x", "doctor"]),
            "write doctor first, before its options"
        );
        assert!(matches!(
            parse(["mcp-bridge-vscode", "doctor", "--", "/abs/server"]),
            Ok(Parsed::Doctor(_))
        ));
        assert!(matches!(
            parse(["mcp-bridge-vscode", "logout", "--all"]),
            Ok(Parsed::Logout(_))
        ));
        assert!(error(&["/abs/server"]).contains("write -- before the upstream command"));
    }

    fn target(config: &Config) -> &HttpTarget {
        match &config.upstream {
            UpstreamTarget::Url(target) => target,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn m4_the_url_form_with_defaults() {
        let config = run(&["https://mcp.example.com/mcp"]).unwrap();
        let target = target(&config);
        assert_eq!(target.url.as_str(), "https://mcp.example.com/mcp");
        assert!(target.headers.is_empty() && target.extra_roots.is_empty());
        assert_eq!(target.max_response_bytes, 64 * 1024 * 1024);
        assert_eq!(target.sign_in, SignInOptions::default());
        assert_eq!(config.fallback_identity().name, "mcp.example.com");
    }

    #[test]
    fn m4_headers_come_in_the_order_of_the_command_line_and_a_secret_name_warns() {
        let (config, warnings) = run_with(&[
            "--header",
            "X-Tenant: acme",
            "--header-env",
            "Authorization=API_AUTH",
            "--header=X-Api-Key:abc",
            "http://127.0.0.1:3000/mcp",
        ])
        .unwrap();
        let names: Vec<_> = target(&config)
            .headers
            .iter()
            .map(|header| (header.name.clone(), header.value().to_owned()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("x-tenant".into(), "acme".into()),
                ("authorization".into(), "Bearer s3cr3t".into()),
                ("x-api-key".into(), "abc".into())
            ]
        );
        assert_eq!(
            warnings,
            vec![
                "the value of the header X-Api-Key is on the command line. VS Code writes the command line to its log, and the process list shows it: give a secret with --header-env"
            ]
        );
    }

    #[test]
    fn m4_the_url_form_refuses_what_the_contract_refuses() {
        let url = "https://mcp.example.com/mcp";
        let cases: [(&[&str], &str); 9] = [
            (
                &["http://mcp.example.com/mcp"],
                "uses http to a host that is not a loopback host",
            ),
            (
                &["--header-env", "Authorization=MISSING", url],
                "the variable MISSING of --header-env is not set",
            ),
            (&["--header", "Host: x", url], "is refused"),
            (&["--header", "Mcp-Method: x", url], "is refused"),
            (
                &[
                    "--header-env",
                    "Authorization=API_AUTH",
                    "--account",
                    "work",
                    url,
                ],
                "a static Authorization header and --account exclude each other",
            ),
            (
                &["--header", "Authorization: Bearer x", "--no-browser", url],
                "exclude each other",
            ),
            (
                &["--header", "X: y", "--", "server"],
                "the option --header is for the URL form",
            ),
            (
                &["--no-browser", "--", "server"],
                "the option --no-browser is for the URL form",
            ),
            (&["--account", "two words", url], "--account is not valid"),
        ];
        for (args, text) in cases {
            let error = error(args);
            assert!(error.contains(text), "{args:?}: {error}");
            assert!(!error.contains("s3cr3t"));
        }
        assert!(
            error(&["--max-response-bytes", "0", url])
                .contains("--max-response-bytes is not valid")
        );
        assert!(error(&["--redirect-port", "0", url]).contains("--redirect-port is not valid"));
        assert!(error(&[url, "--", "server"]).starts_with("write either"));
    }

    #[test]
    fn m4_sign_in_options_are_parsed_and_checked() {
        let config = run(&[
            "--client-id",
            "my-client",
            "--client-issuer",
            "https://auth.example.com",
            "--redirect-port",
            "41895",
            "--account",
            "work@example.com",
            "--token-store",
            "memory",
            "--no-browser",
            "--sign-in-timeout",
            "60",
            "https://mcp.example.com/mcp",
        ])
        .unwrap();
        let sign_in = &target(&config).sign_in;
        assert_eq!(sign_in.client_id.as_deref(), Some("my-client"));
        assert_eq!(sign_in.redirect_port, 41895);
        assert_eq!(sign_in.account, "work@example.com");
        assert_eq!(sign_in.token_store, crate::config::TokenStoreChoice::Memory);
        assert!(sign_in.no_browser);
        assert_eq!(sign_in.sign_in_timeout, Duration::from_secs(60));
        let secret = |name: &str| (name == "MCP_BRIDGE_CLIENT_SECRET").then(|| "x".to_owned());
        let without_issuer = parse_with_env(
            [
                "mcp-bridge-vscode",
                "--client-id",
                "c",
                "https://mcp.example.com/mcp",
            ],
            &secret,
        );
        assert!(
            matches!(without_issuer, Err(ArgsError::Usage(error)) if error.0 == CliError::SecretNeedsIssuer)
        );
        let empty_secret = |name: &str| (name == "MCP_BRIDGE_CLIENT_SECRET").then(String::new);
        let public = parse_with_env(
            [
                "mcp-bridge-vscode",
                "--client-id",
                "c",
                "https://mcp.example.com/mcp",
            ],
            &empty_secret,
        );
        assert!(public.is_ok(), "an empty secret is no secret");
    }

    #[test]
    fn m4_a_ca_file_that_cannot_be_used_is_its_own_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "no certificate").unwrap();
        let path = path.to_string_lossy().into_owned();
        let error = run(&["--ca-file", &path, "https://mcp.example.com/mcp"]).unwrap_err();
        let ArgsError::CaFile(text) = &error else {
            panic!("{error:?}")
        };
        assert!(text.ends_with("has no PEM certificate"));
        assert_eq!(
            error.report(),
            format!(
                "mcp-bridge-vscode: vscode: error: cannot use the CA certificates of --ca-file: {text}\n"
            )
        );
    }

    #[test]
    fn help_and_version_go_to_stdout() {
        let Ok(Parsed::Print(help)) = parse(["mcp-bridge-vscode", "--help"]) else {
            panic!()
        };
        assert!(help.contains(USAGE) && help.contains("--max-line-bytes"));
        assert!(help.contains("mcp-bridge-vscode doctor [options] <url>"));
        for option in url_form_options() {
            assert!(help.contains(&format!("--{option}")), "{option}");
        }
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
            UsageError(CliError::OptionNotKnown {
                option: "--x".into()
            })
            .report(),
            "mcp-bridge-vscode: vscode: error: the option --x is not known\nUsage: mcp-bridge-vscode [options] -- <command> [args...]\n       mcp-bridge-vscode [options] <url>\nRun mcp-bridge-vscode --help for the options.\n"
        );
    }
}
