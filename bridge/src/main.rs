//! `mcp-bridge-vscode [options] -- <command> [args...]`, `mcp-bridge-vscode [options] <url>`
//! `mcp-bridge-vscode logout ...` and `mcp-bridge-vscode doctor ...`

use mcp_bridge_vscode::cli::{self, Parsed};
use mcp_bridge_vscode::{log, run};
use std::process::ExitCode;

fn main() -> ExitCode {
    let (config, warnings) = match cli::parse(std::env::args_os()) {
        Ok(Parsed::Run { config, warnings }) => (config, warnings),
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Logout(args)) => {
            log::init(args.log_level);
            return ExitCode::from(cli::logout::run(&args));
        }
        // doctor keeps the lines of the bridge for its report: no stderr logger.
        Ok(Parsed::Doctor(options)) => return ExitCode::from(cli::doctor::run(&options)),
        Err(error) => {
            eprint!("{}", error.report());
            return ExitCode::from(2);
        }
    };
    log::init(config.log_level);
    run::log_warnings(&warnings);
    run::exit_on_panic();
    // The URL form opens its token store before it serves (the sign-in takes it).
    let token_store = match run::token_store(&config) {
        Ok(store) => store,
        Err(code) => return ExitCode::from(code),
    };
    // One thread: the bridge's work per frame is short, a hand-over between two
    // workers costs more than it saves on two shared cores, and one thread keeps one
    // allocator arena. The executable's last-resort watchdog is an OS thread.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            run::log_internal_error(&error);
            return ExitCode::from(1);
        }
    };
    let exit = runtime.block_on(run::run_stdio(&config, token_store));
    // The stdin reader may still wait in a blocking read (the upstream stopped while
    // stdin is open): exit without waiting for it.
    std::process::exit(i32::from(exit.code()))
}
