//! The executable `bridge-fixture-server`: parses the command line and runs the library.
#![forbid(unsafe_code)]

use bridge_fixture_server::cli::{self, Command};
use bridge_fixture_server::{SERVER_NAME, SERVER_VERSION, browse, error, stdio};

fn main() {
    let command = match cli::parse(std::env::args_os().skip(1)) {
        Ok(command) => command,
        Err(e) => {
            error!("cli", "{e}");
            eprint!("\n{}", cli::USAGE);
            std::process::exit(2);
        }
    };
    let options = match command {
        Command::Help => {
            print!("{}", cli::USAGE);
            return;
        }
        Command::Version => {
            println!("{SERVER_NAME} {SERVER_VERSION}");
            return;
        }
        Command::Serve(options) => Ok(*options),
        Command::Browse(options) => Err(options),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            error!("main", "the async runtime did not start: {e}");
            std::process::exit(1);
        }
    };
    let code = match options {
        Ok(options) => runtime.block_on(stdio::run(options)),
        Err(browse) => runtime.block_on(browse::run(browse)),
    };
    // Exit without dropping the runtime: tokio reads stdin on a blocking thread that
    // cannot be cancelled, and dropping the runtime would wait for that read.
    std::process::exit(code);
}
