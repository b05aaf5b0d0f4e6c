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
//! `--input-timeout-ms <n>`.
#![forbid(unsafe_code)]

mod tools;

use mcp_bridge_vscode::embed::{self, Discover, EmbedOptions};
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage: bridge-embedded-server [--refuse-discover] [--max-line-bytes <n>] [--max-in-flight <n>] [--shutdown-grace-ms <n>] [--input-timeout-ms <n>]\n";

fn options(args: impl Iterator<Item = String>) -> Result<EmbedOptions, String> {
    let mut options = EmbedOptions::default();
    let mut args = args;
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            args.next()
                .and_then(|value| value.parse().ok())
                .ok_or_else(|| format!("{name} needs a number"))
        };
        options = match arg.as_str() {
            "--refuse-discover" => options.discover(Discover::Refuse),
            "--max-line-bytes" => options.max_line_bytes(number(&arg)? as usize),
            "--max-in-flight" => options.max_in_flight(number(&arg)? as usize),
            "--shutdown-grace-ms" => options.shutdown_grace(Duration::from_millis(number(&arg)?)),
            "--input-timeout-ms" => options.input_timeout(Duration::from_millis(number(&arg)?)),
            other => return Err(format!("unknown argument {other}")),
        };
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match options(std::env::args().skip(1)) {
        Ok(options) => options,
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
    let outcome = runtime.block_on(embed::serve_stdio(tools::Reference::default(), options));
    // A handler that ignores its cancel token is not waited for.
    runtime.shutdown_background();
    match outcome {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bridge-embedded-server: {error}");
            ExitCode::FAILURE
        }
    }
}
