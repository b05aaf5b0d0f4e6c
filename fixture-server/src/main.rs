//! The executable `bridge-fixture-server`: parses the command line and runs the library.
#![forbid(unsafe_code)]

use bridge_fixture_server::cli::{self, Command};
use bridge_fixture_server::{browse, error, stdio};

fn main() {
    // --help and --version print and exit 0; a bad command line exits 2.
    let command = cli::parse(std::env::args_os()).unwrap_or_else(|error| error.exit());
    let options = match command {
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
