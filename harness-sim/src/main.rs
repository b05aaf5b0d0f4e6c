//! The `harness-sim` executable: see `harness_sim::cli`.
#![forbid(unsafe_code)]

#[tokio::main]
async fn main() {
    let code = harness_sim::cli::run(std::env::args_os().collect()).await;
    // exit() rather than a return: a blocked read of stdin (the tap) must not
    // hold the runtime open.
    std::process::exit(code);
}
