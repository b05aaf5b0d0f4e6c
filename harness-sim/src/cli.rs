//! The command line of `harness-sim`.
//!
//! ```text
//! harness-sim <profile> [--call TOOL ARGS_JSON]... [--answers FILE] [--record FILE] [--json] [--no-delay] [--stdio KIND] -- <server command...>
//! harness-sim tap --out FILE [--stdio KIND] -- <server command...>
//! harness-sim replay FILE [--stdio KIND] -- <server command...>
//! ```
//!
//! Exit codes: 0 the session ran without a failure; 1 a failure (the opening,
//! a list, the R6 stop of all tools, or a call without a plain result); 2 the
//! arguments are not valid. The benchmarks of the bridge are `harness-bench`
//! (the crate `bench/`), which drives these clients.
//!
//! `--stdio socketpair|pipe` chooses what the server's stdin, stdout and stderr
//! are: Unix socket pairs by default, as VS Code gives them on POSIX (see
//! [`crate::server_stdio`]), or pipes, as a shell gives them.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgAction, Parser};
use serde_json::Value;
use tokio::time::Duration;

use crate::answers::{AnswerPolicy, FormAnswer, Root, SamplingAnswer, UrlAnswer};
use crate::client::{SimClient, SimOptions};
use crate::process::{PeerOptions, StdioPeer};
use crate::profile::Profile;
use crate::report::{CallRecord, Report};
use crate::server_stdio::StdioKind;

/// Runs one session of a simulated client against a stdio MCP server.
#[derive(Debug, Parser)]
#[command(
    name = "harness-sim",
    about = "Runs one session of a simulated VS Code MCP client against a stdio MCP server.",
    after_help = "Profiles: local-1.140, local-1.141, local-1.142, copilot-1.0.89, copilot-1.0.92, copilot-1.0.95.\n\
                  Other forms:\n  harness-sim tap --out FILE [--stdio KIND] -- <server command...>\n  harness-sim replay FILE [--stdio KIND] -- <server command...>\n\
                  The benchmarks of mcp-bridge-vscode are harness-bench (cargo run --profile dist -p harness-bench; see docs/benchmarks.md)."
)]
struct RunArgs {
    /// The client to simulate.
    profile: String,
    /// Call TOOL with the arguments ARGS_JSON (repeatable; in order).
    #[arg(long = "call", num_args = 2, value_names = ["TOOL", "ARGS_JSON"], action = ArgAction::Append)]
    call: Vec<String>,
    /// A JSON file with the answers to the server's questions.
    #[arg(long)]
    answers: Option<PathBuf>,
    /// Answer forms: accept, accept:{JSON content}, decline or cancel.
    #[arg(long)]
    form: Option<String>,
    /// Answer URL elicitations: accept, decline or cancel.
    #[arg(long)]
    url: Option<String>,
    /// Answer sampling requests with this text.
    #[arg(long)]
    sampling: Option<String>,
    /// Refuse sampling requests.
    #[arg(long, conflicts_with = "sampling")]
    sampling_refuse: bool,
    /// A root: URI or NAME=URI (repeatable; Local harness).
    #[arg(long = "root")]
    roots: Vec<String>,
    /// Write the session as a recording (JSON Lines).
    #[arg(long)]
    record: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Seconds to wait for late frames after the calls, before the stop.
    #[arg(long, default_value_t = 0.3)]
    settle: f64,
    /// Seconds to wait for each response.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// The time limit of server/discover in seconds (Copilot).
    #[arg(long, default_value_t = 10.0)]
    discover_timeout: f64,
    /// Send tools/list right after notifications/initialized (copilot-cli waits about 120 ms).
    #[arg(long)]
    no_delay: bool,
    /// The server's stdin, stdout and stderr: socketpair (as VS Code gives them on POSIX) or pipe.
    #[arg(long, value_name = "KIND", default_value_t = StdioKind::default())]
    stdio: StdioKind,
    /// The server command.
    #[arg(last = true, required = true, num_args = 1..)]
    command: Vec<String>,
}

#[derive(Debug, Parser)]
#[command(
    name = "harness-sim tap",
    about = "Passes a session through unchanged and records both directions."
)]
struct TapArgs {
    /// The recording to write.
    #[arg(long)]
    out: PathBuf,
    /// The server's stdin, stdout and stderr: socketpair (as VS Code gives them on POSIX) or pipe.
    #[arg(long, value_name = "KIND", default_value_t = StdioKind::default())]
    stdio: StdioKind,
    /// The server command.
    #[arg(last = true, required = true, num_args = 1..)]
    command: Vec<String>,
}

#[derive(Debug, Parser)]
#[command(
    name = "harness-sim replay",
    about = "Replays the client side of a recording against a server."
)]
struct ReplayArgs {
    /// The recording.
    file: PathBuf,
    /// Print the frames the server sent.
    #[arg(long)]
    json: bool,
    /// The server's stdin, stdout and stderr: socketpair (as VS Code gives them on POSIX) or pipe.
    #[arg(long, value_name = "KIND", default_value_t = StdioKind::default())]
    stdio: StdioKind,
    /// The server command.
    #[arg(last = true, required = true, num_args = 1..)]
    command: Vec<String>,
}

/// Runs the command line `args` (including the program name); returns the exit code.
pub async fn run(args: Vec<OsString>) -> i32 {
    match args.get(1).and_then(|a| a.to_str()) {
        Some("tap") => run_tap(&args).await,
        Some("replay") => run_replay(&args).await,
        Some("stdio-probe") => {
            let rest: Vec<String> = args
                .iter()
                .skip(2)
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect();
            crate::stdio_probe::run(&rest)
        }
        Some("scripted-upstream") => match args.get(2).and_then(|script| script.to_str()) {
            Some(script) => crate::scripted_upstream::run(script).await,
            None => usage_error("scripted-upstream takes its script as JSON"),
        },
        Some("script-server") => {
            let paths: Vec<PathBuf> = args.iter().skip(2).map(PathBuf::from).collect();
            crate::script::run_script_server(&paths).await
        }
        _ => run_profile(args).await,
    }
}

fn parse<T: Parser>(args: impl IntoIterator<Item = OsString>) -> Result<T, i32> {
    T::try_parse_from(args).map_err(|error| {
        let code = if error.use_stderr() { 2 } else { 0 };
        let _ = error.print();
        code
    })
}

async fn run_tap(args: &[OsString]) -> i32 {
    let args: TapArgs = match parse(args.iter().skip(1).cloned()) {
        Ok(a) => a,
        Err(code) => return code,
    };
    match crate::tap::run_tap(&args.out, &args.command, args.stdio).await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("harness-sim tap: {error}");
            1
        }
    }
}

async fn run_replay(args: &[OsString]) -> i32 {
    let args: ReplayArgs = match parse(args.iter().skip(1).cloned()) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let transcript = match crate::record::Transcript::read(&args.file) {
        Ok(t) => t,
        Err(error) => {
            eprintln!("harness-sim replay: {}: {error}", args.file.display());
            return 2;
        }
    };
    let options = crate::replay::ReplayOptions {
        stdio: args.stdio,
        ..Default::default()
    };
    match crate::replay::replay(&transcript, &args.command, &options).await {
        Ok(report) => {
            if args.json {
                for frame in &report.received {
                    println!("{frame}");
                }
            }
            println!(
                "sent {} client lines; the server sent {} lines ({} recorded)",
                report.sent,
                report.received.len(),
                report.expected
            );
            for mismatch in &report.mismatches {
                println!("MISMATCH: {mismatch}");
            }
            i32::from(!report.matches())
        }
        Err(error) => {
            eprintln!("harness-sim replay: {error}");
            1
        }
    }
}

fn usage_error(message: &str) -> i32 {
    eprintln!("harness-sim: error: {message}");
    2
}

/// The answer policy from `--answers` and the flags (the flags win).
fn policy_of(args: &RunArgs) -> Result<AnswerPolicy, String> {
    let mut policy = match &args.answers {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            AnswerPolicy::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => AnswerPolicy::new(),
    };
    if let Some(form) = &args.form {
        let answer = match form.as_str() {
            "accept" => FormAnswer::Accept(None),
            "decline" => FormAnswer::Decline,
            "cancel" => FormAnswer::Cancel,
            other => match other
                .strip_prefix("accept:")
                .map(serde_json::from_str::<Value>)
            {
                Some(Ok(Value::Object(content))) => FormAnswer::Accept(Some(content)),
                _ => {
                    return Err(format!(
                        "--form {other}: use accept, accept:{{JSON object}}, decline or cancel"
                    ));
                }
            },
        };
        policy = policy.form(answer);
    }
    if let Some(url) = &args.url {
        let answer = match url.as_str() {
            "accept" => UrlAnswer::Accept,
            "decline" => UrlAnswer::Decline,
            "cancel" => UrlAnswer::Cancel,
            other => return Err(format!("--url {other}: use accept, decline or cancel")),
        };
        policy = policy.url(answer);
    }
    if let Some(text) = &args.sampling {
        policy = policy.sampling_text(text);
    }
    if args.sampling_refuse {
        policy = policy.sampling(SamplingAnswer::Refuse);
    }
    for root in &args.roots {
        let (name, uri) = match root.split_once('=') {
            Some((name, uri)) if !uri.is_empty() => (name.to_owned(), uri.to_owned()),
            _ => {
                let name = root
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or(root)
                    .to_owned();
                (name, root.clone())
            }
        };
        policy.roots.push(Root { name, uri });
    }
    Ok(policy)
}

async fn run_profile(args: Vec<OsString>) -> i32 {
    let args: RunArgs = match parse(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let profile: Profile = match args.profile.parse() {
        Ok(p) => p,
        Err(error) => return usage_error(&error.to_string()),
    };
    let policy = match policy_of(&args) {
        Ok(p) => p,
        Err(message) => return usage_error(&message),
    };
    let mut calls = Vec::new();
    for pair in args.call.chunks(2) {
        let [tool, arguments] = pair else {
            return usage_error("--call needs TOOL and ARGS_JSON");
        };
        match serde_json::from_str::<Value>(arguments) {
            Ok(value @ Value::Object(_)) => calls.push((tool.clone(), value)),
            _ => {
                return usage_error(&format!(
                    "--call {tool}: ARGS_JSON is not a JSON object: {arguments}"
                ));
            }
        }
    }
    let peer_options = PeerOptions {
        stdio: args.stdio,
        ..PeerOptions::default()
    };
    let peer = match StdioPeer::spawn_with(&args.command, peer_options) {
        Ok(p) => p,
        Err(error) => {
            eprintln!("harness-sim: {error}");
            return 1;
        }
    };
    let mut options = SimOptions::for_profile(profile);
    options.request_timeout = seconds(args.timeout);
    options.initialize_timeout = seconds(args.timeout);
    options.discover_timeout = seconds(args.discover_timeout);
    if args.no_delay {
        options = options.no_delay();
    }
    let mut client = SimClient::with_options(profile, peer, policy, options);
    let (records, error) = session(&mut client, calls, seconds(args.settle)).await;
    client.stop().await;
    let report = Report::of(&client, records, error);
    if let Some(path) = &args.record
        && let Err(error) = client
            .peer()
            .write_transcript(path, &format!("harness-sim {}", profile.name()))
    {
        eprintln!("harness-sim: cannot write {}: {error}", path.display());
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()
        );
    } else {
        print!("{}", report.text());
    }
    i32::from(report.failed())
}

/// The opening, the calls in order, and a short wait for late frames.
async fn session(
    client: &mut SimClient,
    calls: Vec<(String, Value)>,
    settle: Duration,
) -> (Vec<CallRecord>, Option<String>) {
    let mut records = Vec::new();
    if let Err(error) = client.start().await {
        return (records, Some(error.to_string()));
    }
    for (tool, arguments) in calls {
        match client.call_tool(&tool, arguments.clone()).await {
            Ok(outcome) => records.push(CallRecord {
                tool,
                arguments,
                outcome,
            }),
            Err(error) => return (records, Some(format!("{tool}: {error}"))),
        }
    }
    if let Err(error) = client.settle(settle, settle * 10).await {
        return (records, Some(error.to_string()));
    }
    (records, None)
}

fn seconds(value: f64) -> Duration {
    Duration::from_secs_f64(value.clamp(0.0, 86_400.0))
}
