//! The command line of `harness-bench`.
//!
//! ```text
//! harness-bench [--json] [--quick] [--only NAME[,NAME...]] [--rounds N] [--floor [--whole-lines | --reactor | --tasks]] [--stdio KIND] [--bridge PATH] [--fixture PATH] [--embedded PATH] [--mcp-remote PATH]
//! harness-bench relay [--whole-lines | --reactor | --tasks] -- <server command...>
//! harness-bench url-relay CA-FILE URL
//! ```
//!
//! Exit codes: 0 when every measurement ran, whether or not the targets are met; 1
//! when one failed; 2 the arguments are not valid. The relays exit with 0 at the end
//! of their stdin.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;
use harness_sim::server_stdio::StdioKind;

use crate::RelayMode;

#[derive(Debug, Parser)]
#[command(
    name = "harness-bench",
    about = "Measures mcp-bridge-vscode against the physical floor: a 2026-07-28 client talking to bridge-fixture-server directly, in the same run.",
    after_help = "Measurements: latency (1), throughput (2), large (3), list (4), start (5 and 7: the start and the idle memory), stop (6), url (8: the URL form over HTTPS, direct, bridged and through mcp-remote, and the start of each), embedded (9: bridge-embedded-server on its modern path, on its legacy path and behind mcp-bridge-vscode); only when named: soak (10: 1,000,000 small calls, the memory after 10,000 and at the end; about a minute a side), url-soak (11: 100,000 calls over HTTPS through the bridge and through mcp-remote, the memory after 10,000 and at the end).\n\
                  Build in the profile of the distributed binary first: cargo build --profile dist -p mcp-bridge-vscode -p bridge-fixture-server -p bridge-embedded-server -p harness-bench -p workspace-hack\n\
                  url and url-soak run mcp-remote with node from PATH: npm ci --prefix interop installs it.\n\
                  Other forms:\n  harness-bench relay [--whole-lines | --reactor | --tasks] -- <server command...>\n    \
                  passes both directions through unchanged (each line whole, with --whole-lines; on a one-thread reactor, with --reactor; through the bridge's tasks on that reactor, with --tasks): the floor of --floor\n  \
                  harness-bench url-relay CA-FILE URL\n    \
                  POSTs each line of stdin to URL and writes each answer: the floor of the URL form\n\
                  See docs/benchmarks.md."
)]
struct BenchArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Fewer calls and one round: a check that the bench runs, not a measurement.
    #[arg(long)]
    quick: bool,
    /// Only these measurements (repeatable or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    only: Vec<String>,
    /// Rounds of each measurement, direct and bridged alternating (default 5; 1 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=100))]
    rounds: Option<u16>,
    /// Also run every measurement through `harness-bench relay`, a process that only
    /// passes bytes through: the floor of one more process on the path.
    #[arg(long)]
    floor: bool,
    /// With --floor: the relay holds each line whole before it writes it, as the
    /// bridge does (it never passes on half a frame): the floor of large messages.
    #[arg(long, requires = "floor", conflicts_with = "reactor")]
    whole_lines: bool,
    /// With --floor: the relay holds each line whole on a one-thread tokio runtime
    /// with every pipe in the reactor, as the bridge is built: the floor of its
    /// event loop.
    #[arg(long, requires = "floor", conflicts_with = "tasks")]
    reactor: bool,
    /// With --floor: as --reactor, each line handed through the bridge's tasks and
    /// channels (four hops a call): the floor of its shape.
    #[arg(long, requires = "floor", conflicts_with = "whole_lines")]
    tasks: bool,
    /// The stdin and stdout of the server on every side (direct, relay, bridged):
    /// socketpair (what VS Code users get on POSIX) or pipe.
    #[arg(long, value_name = "KIND", default_value_t = StdioKind::default())]
    stdio: StdioKind,
    /// The bridge executable (default: the workspace's, in the profile of harness-sim).
    #[arg(long, value_name = "PATH")]
    bridge: Option<PathBuf>,
    /// The fixture server executable (default: the workspace's).
    #[arg(long, value_name = "PATH")]
    fixture: Option<PathBuf>,
    /// The embedded server executable of `embedded` (default: the workspace's
    /// bridge-embedded-server).
    #[arg(long, value_name = "PATH")]
    embedded: Option<PathBuf>,
    /// mcp-remote's proxy.js of `url` and `url-soak`, run with node (default: the
    /// workspace's interop/node_modules/mcp-remote/dist/proxy.js).
    #[arg(long = "mcp-remote", value_name = "PATH")]
    mcp_remote: Option<PathBuf>,
}

/// Runs the command line `args` (including the program name); returns the exit
/// code. The relays that run on a runtime of their own start in `main.rs`.
pub async fn run(args: Vec<OsString>) -> i32 {
    match args.get(1).and_then(|a| a.to_str()) {
        Some("relay") => {
            let whole_lines = args.get(2).is_some_and(|a| a == "--whole-lines");
            let command: Vec<String> = args
                .iter()
                .skip(2 + usize::from(whole_lines))
                .skip_while(|a| *a == "--")
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            crate::relay::run(&command, whole_lines)
        }
        _ => run_bench(&args).await,
    }
}

fn parse<T: Parser>(args: impl IntoIterator<Item = OsString>) -> Result<T, i32> {
    T::try_parse_from(args).map_err(|error| {
        let code = if error.use_stderr() { 2 } else { 0 };
        let _ = error.print();
        code
    })
}

async fn run_bench(args: &[OsString]) -> i32 {
    let parsed: BenchArgs = match parse(args.iter().cloned()) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut only = Vec::new();
    for name in &parsed.only {
        match name.parse::<crate::Scenario>() {
            Ok(scenario) => only.push(scenario),
            Err(message) => return usage_error(&format!("--only: {message}")),
        }
    }
    let command = std::iter::once("harness-bench".to_owned())
        .chain(
            args.iter()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned()),
        )
        .collect::<Vec<_>>()
        .join(" ");
    let options = crate::Options {
        quick: parsed.quick,
        only,
        rounds: parsed.rounds.map(usize::from),
        bridge: parsed.bridge,
        fixture: parsed.fixture,
        embedded: parsed.embedded,
        mcp_remote: parsed.mcp_remote,
        floor: parsed.floor,
        relay_mode: if parsed.reactor {
            RelayMode::Reactor
        } else if parsed.tasks {
            RelayMode::Tasks
        } else if parsed.whole_lines {
            RelayMode::WholeLines
        } else {
            RelayMode::Plain
        },
        stdio: parsed.stdio,
        command,
    };
    match crate::run_on_own_thread(options).await {
        Ok(report) => {
            if parsed.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report.json()).unwrap_or_default()
                );
            } else {
                print!("{}", report.text());
            }
            0
        }
        Err(error) => {
            eprintln!("harness-bench: {error}");
            1
        }
    }
}

fn usage_error(message: &str) -> i32 {
    eprintln!("harness-bench: error: {message}");
    2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench_args(args: &[&str]) -> Result<BenchArgs, clap::Error> {
        BenchArgs::try_parse_from(std::iter::once("harness-bench").chain(args.iter().copied()))
    }

    #[test]
    fn the_bench_gives_socket_pairs_unless_told_pipe() {
        assert_eq!(bench_args(&[]).unwrap().stdio, StdioKind::default());
        assert_eq!(
            bench_args(&["--stdio", "pipe"]).unwrap().stdio,
            StdioKind::Pipe
        );
        assert_eq!(
            bench_args(&["--stdio", "socketpair", "--quick"])
                .unwrap()
                .stdio,
            StdioKind::SocketPair
        );
        let error = bench_args(&["--stdio", "fifo"]).unwrap_err().to_string();
        assert!(error.contains("use socketpair or pipe"), "{error}");
    }

    #[test]
    fn the_bench_takes_the_embedded_server_as_it_takes_the_bridge() {
        let parsed =
            bench_args(&["--only", "embedded", "--embedded", "/e", "--bridge", "/b"]).unwrap();
        assert_eq!(parsed.only, ["embedded"]);
        assert_eq!(parsed.embedded, Some(PathBuf::from("/e")));
        assert_eq!(parsed.bridge, Some(PathBuf::from("/b")));
        assert_eq!(bench_args(&[]).unwrap().embedded, None);
    }

    #[test]
    fn the_bench_takes_mcp_remote_as_it_takes_the_bridge() {
        let parsed =
            bench_args(&["--only", "url,url-soak", "--mcp-remote", "/r/proxy.js"]).unwrap();
        assert_eq!(parsed.only, ["url", "url-soak"]);
        assert_eq!(parsed.mcp_remote, Some(PathBuf::from("/r/proxy.js")));
        assert_eq!(bench_args(&[]).unwrap().mcp_remote, None);
    }
}
