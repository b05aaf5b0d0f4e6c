//! The command line of `bridge-fixture-server`.
//!
//! A small parser of its own, so that the error names the argument in the fixture's
//! stderr format and the usage text is exact. To add an option: one entry in
//! `OPTIONS`, one arm in `apply`, one line in `USAGE` (a test checks that every
//! option is in the usage). Values come as `--name VALUE` or `--name=VALUE`; the last
//! occurrence wins.

use std::ffi::OsString;

use crate::auth::options::{AUTH_OPTIONS, AuthOptions};
use crate::browse::BrowseOptions;
use crate::config::{Config, Profile};
use crate::https::options::{self, HttpOptions, TlsCase, Transport};

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// The options of a server (boxed: they are large, and the other commands small).
    Serve(Box<Options>),
    /// `--help`: the usage on stdout, exit 0.
    Help,
    /// `--version`: the version on stdout, exit 0.
    Version,
    /// `--browse URL`: the test browser, no server.
    Browse(BrowseOptions),
}

/// The options of a serving process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub config: Config,
    /// Misbehave: close stdout at once, then sleep without reading stdin.
    pub close_stdout: bool,
    /// stdio, or Streamable HTTP with or without TLS.
    pub transport: Transport,
    /// The options of the HTTP modes (defaults on stdio).
    pub http: HttpOptions,
    /// The authorization server of `--auth` (off by default).
    pub auth: AuthOptions,
}

/// A bad command line; the message names the argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CliError(pub String);

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The largest N of `--many-tools`.
pub const MAX_MANY_TOOLS: usize = 100_000;

/// The usage text of `--help` and of a bad command line.
pub const USAGE: &str = "\
Usage: bridge-fixture-server [OPTIONS]

The upstream MCP server of the mcp-bridge-rs tests: MCP revision 2026-07-28 on stdio,
or over Streamable HTTP with --https or --http.
On stdio it reads one JSON-RPC message per line on stdin, writes one per line on
stdout, and writes log lines that start with \"bridge-fixture-server: \" on stderr. Every
request needs params._meta with io.modelcontextprotocol/protocolVersion \"2026-07-28\"
and io.modelcontextprotocol/clientCapabilities. The lists have pages of 100 items.

Options:
  --profile NAME     The tool surface: fixture (default: 21 tools, 3 prompts) or
                     conformance (the \"everything\" server of the MCP conformance suite)
  --many-tools N     Adds the tools tool_0 .. tool_<N-1> (N from 0 to 100000)
  --apps             Adds the MCP Apps parts: the extension io.modelcontextprotocol/ui,
                     the tool show and the resources ui://fixture/view and
                     file:///fixture/readme.txt
  --array-output     Adds the tool array_output (an outputSchema of type array)
  --no-completions   Declares no completions; completion/complete gets -32601
  --anonymous        Names no serverInfo in any result (a server that does not name
                     itself)
  --icons            The serverInfo, the tool echo and each prompt, resource and
                     resource template carry three icons: data:, https: and file:;
                     the tool link and the prompt link give a resource_link with them
  --close-stdout     Misbehaves: closes stdout at once, then sleeps 120 s without
                     reading stdin
  -h, --help         Prints this help
  -V, --version      Prints the version

Streamable HTTP (the same tools, prompts, resources and profiles): one POST per
JSON-RPC message at /mcp, answered with JSON or SSE, 202 for a notification, 405 for
GET and DELETE; a missing or mismatched MCP-Protocol-Version, Mcp-Method or Mcp-Name
header gets 400 with the JSON-RPC error -32020.
  --https            Serves https://127.0.0.1:PORT/mcp. Stdout gets two lines: the URL,
                     then \"ca-file: PATH\", the CA certificate (PEM) that a client must
                     trust. The server stops at the end of stdin or on SIGTERM.
  --http             Serves http://127.0.0.1:PORT/mcp without TLS (one line: the URL)
  --port N           The port on 127.0.0.1 (default 0: an ephemeral port)
  --tls-dir DIR      Loads DIR/server.crt and DIR/server.key (as written by
                     `tls-fixtures generate DIR`); ca-file is DIR/ca.crt. Without it the
                     certificates are made in memory and the CA is written to a new
                     folder under the temporary directory (removed at the end; the
                     folders of killed servers go at the next start)
  --tls-case CASE    The certificate the server presents: good (default), or a case that
                     a client trusting ca-file must refuse: expired, wrong-host (for
                     wrong.example only) or unknown-ca (issued by an untrusted CA)
  --tls-name NAME    The certificate made in memory also names NAME (may be repeated),
                     for a client that reaches the server through a proxy by a name
  --host NAME        The host of the announced URL (and of the issuer and the resource
                     of --auth) in place of 127.0.0.1; the server still listens on
                     127.0.0.1, and the certificate made in memory names NAME: a
                     \"remote\" server that a client reaches through a proxy
  --keep-alive-ms MS The interval of \": keep-alive\" comment lines on SSE streams
                     (default 15000)
  --always-sse       Answers every request with an SSE stream (default: JSON when the
                     response is the only frame of the request)
  --bearer-env VAR   Every POST needs \"Authorization: Bearer <the value of VAR>\", else
                     401 with \"WWW-Authenticate: Bearer\" (a server with a static token)
  --print-exchanges  After the lines above, writes each POST to stdout as a line
                     \"exchange: {\"post\":N,\"headers\":{...},\"body\":...}\" (the
                     credential of Authorization redacted), for a runner that checks
                     what a client sent

OAuth (RFC 9728, RFC 8414, RFC 7591, PKCE) for the tests of sign-in clients; the issuer is
the origin https://127.0.0.1:PORT (the stdout lines stay the same):
  --auth, --oauth    POST /mcp needs \"Authorization: Bearer <access token>\" of the
                     authorization server of this process (audience: the MCP URL, scope
                     mcp:read), else 401 with \"WWW-Authenticate: Bearer
                     resource_metadata=...\"; tools/call of the tool guarded (added) also
                     needs mcp:write, else 403 insufficient_scope. Serves
                     /.well-known/oauth-protected-resource/mcp,
                     /.well-known/oauth-authorization-server (and openid-configuration),
                     /authorize (a consent page that approves by itself), /token,
                     /register, /fixture/client.json[?port=N], and POST
                     /fixture/forget-clients and /fixture/expire-tokens (204), and GET
                     /fixture/secrets (every state, verifier, code, token and client
                     secret seen, and the count of code exchanges). Clients:
                     bridge-fixture-confidential (secret bridge-fixture-secret-0123456789)
                     and bridge-fixture-public, redirect URI http://127.0.0.1/callback
                     (any port)
  --no-registration  No dynamic client registration (no /register)
  --cimd             Accepts client IDs that are https URLs of client ID metadata
                     documents (fetched trusting ca-file and --auth-ca-file)
  --auth-ca-file PATH  Also trusts this CA (PEM) when a document is fetched
  --deny             Denies every authorization: error=access_denied
  --no-iss           No iss parameter in redirects (RFC 9207)
  --forget-clients   Forgets every dynamically registered client each time it issues the
                     tokens of a code: a refresh then gets invalid_client, and /authorize
                     an error page without a redirect
  --token-lifetime S The lifetime of access tokens in seconds (default 900)
  --no-refresh-tokens  Issues no refresh tokens
  --invalid-grant    Every refresh gets invalid_grant
  --hostile-authorization-endpoint KIND  The metadata names an authorization_endpoint
                     that no client may open: shell (shell metacharacters that would
                     create /tmp/bridge-fixture-pwned-PORT), javascript
                     (javascript:alert(1)) or file (file:///etc/passwd)
  --hostile-redirect KIND  The approval redirects with another issuer's iss
                     (wrong-iss), another state (wrong-state), or a code that was
                     already redeemed (replayed-code); with wrong-iss, an error
                     redirect names the other issuer too
  --prm-authorization-server URL  The protected resource metadata names URL as the
                     authorization server, in place of this server
  --cimd-document URL=PATH  With --cimd: the document of the client ID URL is the
                     file PATH, read in place of a fetch (may be repeated)

The test browser (no server):
  --browse URL       GETs URL, follows redirects and <meta http-equiv=\"refresh\"> (up to
                     10), prints \"<status> <URL without query>\" for each hop on stderr and
                     the final body on stdout; exit 0 for a final 2xx, else 1. http only
                     to loopback hosts
  --ca-file PATH     The CA (PEM) that --browse trusts (default: the ca.crt of each
                     fixture server running on this host)
  --no-follow        With --browse: one GET, no redirect followed; prints \"<status> <body>\"
                     on stdout; exit 0 for any answer

Faults of the HTTP modes, for the tests of clients (all but --fail-status act on SSE
streams only; --always-sse gives every request one):
  --fail-status N:STATUS  The Nth POST (from 1) gets the HTTP status STATUS (200-599)
                     and a text body, and is not served; may be repeated
  --slow-stream-ms MS     Waits MS milliseconds before each SSE event
  --break-stream-after N  Closes each SSE stream after N events, without the response
                     (the request is cancelled)
  --oversized-event BYTES Starts each SSE stream with one notifications/message event
                     whose data is BYTES bytes long

Exit codes: 0 at the end of stdin, on SIGTERM (HTTP) and after the tool shutdown,
1 when stdout fails or the HTTP server cannot start, 2 for a bad command line, 3 after
the tool crash.
";

struct OptionSpec {
    name: &'static str,
    short: Option<&'static str>,
    takes_value: bool,
}

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--profile",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--many-tools",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--apps",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--array-output",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--no-completions",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--anonymous",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--icons",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--close-stdout",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--https",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--http",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--port",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--tls-dir",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--tls-case",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--tls-name",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--host",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--keep-alive-ms",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--always-sse",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--bearer-env",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--print-exchanges",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--fail-status",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--slow-stream-ms",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--break-stream-after",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--oversized-event",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--auth",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--oauth",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--no-registration",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--cimd",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--auth-ca-file",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--deny",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--no-iss",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--forget-clients",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--token-lifetime",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--no-refresh-tokens",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--invalid-grant",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--hostile-authorization-endpoint",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--hostile-redirect",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--prm-authorization-server",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--cimd-document",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--browse",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--ca-file",
        short: None,
        takes_value: true,
    },
    OptionSpec {
        name: "--no-follow",
        short: None,
        takes_value: false,
    },
    OptionSpec {
        name: "--help",
        short: Some("-h"),
        takes_value: false,
    },
    OptionSpec {
        name: "--version",
        short: Some("-V"),
        takes_value: false,
    },
];

/// Parses the arguments after the program name. The executable always has the tools
/// `crash` and `shutdown`.
pub fn parse<I>(args: I) -> Result<Command, CliError>
where
    I: IntoIterator<Item = OsString>,
{
    let mut options = Options {
        config: Config {
            process_tools: true,
            ..Config::default()
        },
        close_stdout: false,
        transport: Transport::Stdio,
        http: HttpOptions::default(),
        auth: AuthOptions::default(),
    };
    let mut browse = BrowseOptions {
        url: String::new(),
        ca_file: None,
        follow: true,
    };
    let mut browsing = false;
    let mut help = false;
    let mut version = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|arg| CliError(format!("the argument {arg:?} is not valid UTF-8")))?;
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let Some(spec) = OPTIONS
            .iter()
            .find(|spec| spec.name == name || spec.short == Some(name.as_str()))
        else {
            return Err(CliError(if arg.starts_with('-') {
                format!("unknown argument '{arg}'")
            } else {
                format!("unexpected argument '{arg}': the server takes options only")
            }));
        };
        let value = match (spec.takes_value, inline) {
            (true, Some(value)) => Some(value),
            (true, None) => Some(
                args.next()
                    .and_then(|value| value.into_string().ok())
                    .ok_or_else(|| CliError(format!("the option {} needs a value", spec.name)))?,
            ),
            (false, Some(_)) => {
                return Err(CliError(format!("the option {} takes no value", spec.name)));
            }
            (false, None) => None,
        };
        match spec.name {
            "--help" => help = true,
            "--version" => version = true,
            "--browse" => {
                browsing = true;
                browse.url = value.unwrap_or_default();
            }
            "--ca-file" => browse.ca_file = value.map(Into::into),
            "--no-follow" => browse.follow = false,
            name => apply(&mut options, name, value)?,
        }
    }
    if !help && !version {
        if browsing {
            check_browse(&options)?;
        } else if browse.ca_file.is_some() {
            return Err(CliError("--ca-file needs --browse".into()));
        } else if !browse.follow {
            return Err(CliError("--no-follow needs --browse".into()));
        } else {
            check_transport(&options)?;
        }
    }
    Ok(if help {
        Command::Help
    } else if version {
        Command::Version
    } else if browsing {
        Command::Browse(browse)
    } else {
        Command::Serve(Box::new(options))
    })
}

fn apply(options: &mut Options, name: &str, value: Option<String>) -> Result<(), CliError> {
    let value = value.unwrap_or_default();
    let config = &mut options.config;
    match name {
        "--profile" => {
            config.profile = Profile::parse(&value).ok_or_else(|| {
                CliError(format!(
                    "the value '{value}' of --profile is not a profile (fixture, conformance)"
                ))
            })?;
        }
        "--many-tools" => {
            config.many_tools = value
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= MAX_MANY_TOOLS && !value.starts_with('+'))
                .ok_or_else(|| {
                    CliError(format!(
                        "the value '{value}' of --many-tools is not a number from 0 to {MAX_MANY_TOOLS}"
                    ))
                })?;
        }
        "--apps" => config.apps = true,
        "--array-output" => config.array_output = true,
        "--no-completions" => config.completions = false,
        "--anonymous" => config.anonymous = true,
        "--icons" => config.icons = true,
        "--close-stdout" => options.close_stdout = true,
        "--https" | "--http" => {
            let transport = if name == "--https" {
                Transport::Https
            } else {
                Transport::Http
            };
            if options.transport != Transport::Stdio && options.transport != transport {
                return Err(CliError("--https and --http exclude each other".into()));
            }
            options.transport = transport;
        }
        "--auth" | "--oauth" => {
            options.auth.enabled = true;
            // The tool of the step-up (study §1.5).
            options.config.guarded = true;
        }
        name if AUTH_OPTIONS.contains(&name) => {
            options.auth.apply(name, &value).map_err(CliError)?;
        }
        name if options::HTTP_OPTIONS.contains(&name) => {
            options::apply(&mut options.http, name, &value).map_err(CliError)?;
        }
        other => return Err(CliError(format!("unknown argument '{other}'"))),
    }
    Ok(())
}

/// `--browse` runs no server: it takes `--ca-file` only.
fn check_browse(options: &Options) -> Result<(), CliError> {
    let plain = Options {
        config: Config {
            process_tools: true,
            ..Config::default()
        },
        close_stdout: false,
        transport: Transport::Stdio,
        http: HttpOptions::default(),
        auth: AuthOptions::default(),
    };
    if *options != plain {
        return Err(CliError(
            "--browse runs no server: it takes only --ca-file and --no-follow".into(),
        ));
    }
    Ok(())
}

/// The HTTP options need an HTTP mode; --tls-dir needs TLS; --close-stdout is stdio's;
/// the options of the authorization server need --auth, which needs an HTTP mode.
fn check_transport(options: &Options) -> Result<(), CliError> {
    if options.auth.has_sub_options() && !options.auth.enabled {
        return Err(CliError(
            "the options of the authorization server (--no-registration, --cimd, --auth-ca-file, --deny, --no-iss, --forget-clients, --token-lifetime, --no-refresh-tokens, --invalid-grant, --hostile-authorization-endpoint, --hostile-redirect, --prm-authorization-server, --cimd-document) need --auth".into(),
        ));
    }
    if options.auth.enabled && options.transport == Transport::Stdio {
        return Err(CliError("--auth needs --https or --http".into()));
    }
    if options.auth.enabled && options.http.bearer_env.is_some() {
        return Err(CliError(
            "--auth and --bearer-env exclude each other".into(),
        ));
    }
    match options.transport {
        Transport::Stdio if !options.http.is_default() => Err(CliError(
            "the options of Streamable HTTP (--port, --tls-dir, --keep-alive-ms, --always-sse and the faults) need --https or --http".into(),
        )),
        Transport::Http if options.http.tls_dir.is_some() => {
            Err(CliError("--tls-dir needs --https".into()))
        }
        Transport::Http if options.http.tls_case != TlsCase::Good => {
            Err(CliError("--tls-case needs --https".into()))
        }
        Transport::Http if !options.http.tls_names.is_empty() => {
            Err(CliError("--tls-name needs --https".into()))
        }
        Transport::Https if options.http.tls_dir.is_some() && !options.http.tls_names.is_empty() => {
            Err(CliError(
                "--tls-name names the certificate made in memory; it does not go with --tls-dir".into(),
            ))
        }
        Transport::Https | Transport::Http if options.close_stdout => Err(CliError(
            "--close-stdout is a fault of stdio; it does not go with --https or --http".into(),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, CliError> {
        parse(args.iter().map(OsString::from))
    }

    fn serve(args: &[&str]) -> Options {
        match parse_strs(args) {
            Ok(Command::Serve(options)) => *options,
            other => panic!("{args:?} gave {other:?}"),
        }
    }

    #[test]
    fn no_arguments_serve_the_fixture_with_process_tools() {
        let options = serve(&[]);
        assert_eq!(options.config.profile, Profile::Fixture);
        assert!(options.config.process_tools && options.config.completions);
        assert!(!options.close_stdout && !options.config.apps);
    }

    #[test]
    fn values_come_after_a_space_or_an_equal_sign() {
        let options = serve(&["--many-tools", "150", "--profile=conformance", "--apps"]);
        assert_eq!(options.config.many_tools, 150);
        assert_eq!(options.config.profile, Profile::Conformance);
        assert!(options.config.apps);
        assert_eq!(
            serve(&["--many-tools=3", "--many-tools=4"])
                .config
                .many_tools,
            4
        );
        let options = serve(&["--no-completions", "--array-output", "--close-stdout"]);
        assert!(!options.config.completions && options.config.array_output && options.close_stdout);
    }

    #[test]
    fn anonymous_and_icons_change_the_server_information() {
        let plain = serve(&[]).config;
        assert!(!plain.anonymous && !plain.icons);
        let options = serve(&["--anonymous", "--icons"]);
        assert!(options.config.anonymous && options.config.icons);
        assert_eq!(crate::session::server_info(&options.config), None);
        let info = crate::session::server_info(&serve(&["--icons"]).config).unwrap();
        let sources: Vec<&str> = info["icons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|icon| icon["src"].as_str().unwrap())
            .collect();
        assert_eq!(
            sources,
            [
                "data:image/png;base64,iVBORw0KGgo=",
                "https://icons.example/server.png",
                "file:///icons/server.svg"
            ]
        );
    }

    #[test]
    fn errors_name_the_argument() {
        let error = |args: &[&str]| parse_strs(args).unwrap_err().0;
        assert_eq!(error(&["--nope"]), "unknown argument '--nope'");
        assert!(error(&["stray"]).contains("'stray'"));
        assert_eq!(
            error(&["--many-tools"]),
            "the option --many-tools needs a value"
        );
        assert!(error(&["--many-tools", "x"]).contains("'x' of --many-tools"));
        assert!(error(&["--many-tools", "100001"]).contains("--many-tools"));
        assert!(error(&["--profile", "everything"]).contains("--profile"));
        assert_eq!(error(&["--apps=yes"]), "the option --apps takes no value");
    }

    #[test]
    fn the_http_modes_take_their_options() {
        let options = serve(&["--https", "--port=8443", "--fail-status", "1:503", "--apps"]);
        assert_eq!(options.transport, Transport::Https);
        assert_eq!(options.http.port, 8443);
        assert_eq!(options.http.faults.fail_status, [(1, 503)]);
        assert!(options.config.apps);
        assert_eq!(serve(&["--http"]).transport, Transport::Http);
        assert_eq!(serve(&[]).transport, Transport::Stdio);
        let named = serve(&[
            "--https",
            "--tls-name",
            "fixture.mcp-bridge.test",
            "--tls-name=b.test",
        ]);
        assert_eq!(named.http.tls_names, ["fixture.mcp-bridge.test", "b.test"]);
        for spec in OPTIONS
            .iter()
            .filter(|spec| options::HTTP_OPTIONS.contains(&spec.name))
        {
            assert!(
                spec.takes_value || ["--always-sse", "--print-exchanges"].contains(&spec.name),
                "{}",
                spec.name
            );
        }
    }

    #[test]
    fn http_options_need_an_http_mode() {
        let error = |args: &[&str]| parse_strs(args).unwrap_err().0;
        assert!(error(&["--port", "1"]).contains("need --https or --http"));
        assert!(error(&["--slow-stream-ms", "5"]).contains("need --https or --http"));
        assert_eq!(
            error(&["--http", "--tls-dir", "x"]),
            "--tls-dir needs --https"
        );
        assert_eq!(
            error(&["--http", "--https"]),
            "--https and --http exclude each other"
        );
        assert!(error(&["--https", "--close-stdout"]).contains("--close-stdout"));
        assert_eq!(
            error(&["--http", "--tls-name", "a.test"]),
            "--tls-name needs --https"
        );
        assert!(
            error(&["--https", "--tls-dir", "x", "--tls-name", "a.test"]).contains("--tls-dir")
        );
        assert!(error(&["--https", "--tls-name", "a b"]).contains("not a DNS name"));
        assert!(error(&["--https", "--port", "65536"]).contains("'65536' of --port"));
        assert!(error(&["--https", "--fail-status", "0:500"]).contains("N:STATUS"));
        assert!(error(&["--https", "--keep-alive-ms", "0"]).contains("--keep-alive-ms"));
    }

    #[test]
    fn auth_and_its_options_fill_the_auth_options() {
        let options = serve(&[
            "--https",
            "--oauth",
            "--cimd",
            "--token-lifetime=60",
            "--deny",
        ]);
        assert!(options.auth.enabled && options.auth.cimd && options.auth.deny);
        assert!(options.config.guarded);
        assert_eq!(options.auth.token_lifetime.as_secs(), 60);
        assert!(serve(&["--http", "--auth"]).auth.enabled);
        assert!(!serve(&["--https"]).config.guarded);
        let error = |args: &[&str]| parse_strs(args).unwrap_err().0;
        assert!(error(&["--https", "--cimd"]).ends_with("need --auth"));
        assert_eq!(error(&["--auth"]), "--auth needs --https or --http");
        assert_eq!(
            error(&["--https", "--auth", "--bearer-env", "X"]),
            "--auth and --bearer-env exclude each other"
        );
    }

    #[test]
    fn browse_takes_a_url_and_a_ca_file_only() {
        assert_eq!(
            parse_strs(&["--browse", "https://127.0.0.1:1/a", "--ca-file=/tmp/ca.crt"]),
            Ok(Command::Browse(BrowseOptions {
                url: "https://127.0.0.1:1/a".into(),
                ca_file: Some("/tmp/ca.crt".into()),
                follow: true,
            }))
        );
        assert_eq!(
            parse_strs(&["--browse", "http://127.0.0.1:1/start/x", "--no-follow"]),
            Ok(Command::Browse(BrowseOptions {
                url: "http://127.0.0.1:1/start/x".into(),
                ca_file: None,
                follow: false,
            }))
        );
        let error = |args: &[&str]| parse_strs(args).unwrap_err().0;
        assert_eq!(
            error(&["--browse", "x", "--https"]),
            "--browse runs no server: it takes only --ca-file and --no-follow"
        );
        assert_eq!(error(&["--ca-file", "x"]), "--ca-file needs --browse");
        assert_eq!(error(&["--no-follow"]), "--no-follow needs --browse");
    }

    #[test]
    fn help_and_version_win_over_other_options() {
        assert_eq!(parse_strs(&["--apps", "-h"]), Ok(Command::Help));
        assert_eq!(parse_strs(&["--version"]), Ok(Command::Version));
        assert_eq!(parse_strs(&["-V"]), Ok(Command::Version));
    }

    #[test]
    fn the_usage_names_every_option_and_the_page_size() {
        for spec in OPTIONS {
            assert!(
                USAGE.contains(spec.name),
                "{} is not in the usage",
                spec.name
            );
        }
        assert!(USAGE.contains(&format!("pages of {}", crate::pagination::PAGE_SIZE)));
    }
}
