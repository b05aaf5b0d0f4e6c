//! `bridge-embedded-server`: an rmcp server that serves stdio through
//! [`mcp_bridge_vscode::embed::serve_stdio`], with a few reference tools of the
//! fixture: `echo`, `add`, `slow`, `toggle` (a list change on the listen streams
//! before its result) and `toggled`, and `ask_name` (a tool that asks for input).
//!
//! `initialize` as the first line selects the bridge in this process (the Local
//! harness, and the Copilot harness after -32601); any other first message selects
//! rmcp's own stdio transport (revision 2026-07-28).
//!
//! Why a crate of its own and not a bin of the fixture: the fixture is the strict
//! 2026-07-28 upstream of the tests and drives its own loop, without rmcp's runtime
//! or the bridge; this executable needs both. A crate of its own keeps the fixture
//! free of the bridge and the bridge free of the fixture, and its dependency on the
//! bridge with the feature `rmcp` turns the feature on for `cargo test --workspace`.
//!
//! Options: `--refuse-discover` (answer `server/discover` with -32601),
//! `--max-line-bytes <n>`, `--max-in-flight <n>`, `--shutdown-grace-ms <n>`,
//! `--input-timeout-ms <n>`, `--name <name>` (the name for VS Code when the discover
//! result has none) and `--without-server-info` (a discover result without
//! `serverInfo`).
//!
//! At the end it writes on stderr which path served the connection (the
//! [`Served`] of `serve_stdio`).
#![forbid(unsafe_code)]

mod tools;

use mcp_bridge_vscode::embed::{self, Discover, EmbedOptions, Served};
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage: bridge-embedded-server [--refuse-discover] [--max-line-bytes <n>] [--max-in-flight <n>] [--shutdown-grace-ms <n>] [--input-timeout-ms <n>] [--name <name>] [--without-server-info]\n";

/// What the command line asks for: the options of the embedding, and whether the
/// discover result names the server.
struct Args {
    options: EmbedOptions,
    without_server_info: bool,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut options = EmbedOptions::default();
    let mut without_server_info = false;
    let mut args = args;
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        let number = |value: String| -> Result<u64, String> {
            value.parse().map_err(|_| format!("{arg} needs a number"))
        };
        options = match arg.as_str() {
            "--refuse-discover" => options.discover(Discover::Refuse),
            "--max-line-bytes" => options.max_line_bytes(number(value(&arg)?)? as usize),
            "--max-in-flight" => options.max_in_flight(number(value(&arg)?)? as usize),
            "--shutdown-grace-ms" => {
                options.shutdown_grace(Duration::from_millis(number(value(&arg)?)?))
            }
            "--input-timeout-ms" => {
                options.input_timeout(Duration::from_millis(number(value(&arg)?)?))
            }
            "--name" => options.name(value(&arg)?),
            "--without-server-info" => {
                without_server_info = true;
                options
            }
            other => return Err(format!("unknown argument {other}")),
        };
    }
    Ok(Args {
        options,
        without_server_info,
    })
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(error) => {
            eprint!("bridge-embedded-server: {error}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    mcp_bridge_vscode::log::init(mcp_bridge_vscode::log::LogLevel::Info);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("bridge-embedded-server: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let server = if args.without_server_info {
        tools::Reference::without_server_info()
    } else {
        tools::Reference::default()
    };
    let outcome = runtime.block_on(embed::serve_stdio(server, args.options));
    // A handler that ignores its cancel token is not waited for.
    runtime.shutdown_background();
    match outcome {
        Ok(served) => {
            eprintln!("bridge-embedded-server: {}", served_line(served));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bridge-embedded-server: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The last line on stderr: which path served the connection, for whoever reads
/// the server's output (VS Code's Output channel, a transcript).
fn served_line(served: Served) -> &'static str {
    match served {
        Served::Bridge => "served by the bridge (initialize came first)",
        Served::Direct => "served by rmcp's stdio transport (another message came first)",
        Served::Nothing => "stdin ended before a first message",
        _ => "the connection ended",
    }
}
