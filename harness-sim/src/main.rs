//! The `harness-sim` executable: see `harness_sim::cli`.
#![forbid(unsafe_code)]

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("harness-sim: no runtime: {error}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(harness_sim::cli::run(args));
    // exit() with the runtime alive, never its drop: the drop would wait for a
    // blocked read of stdin (the tap).
    std::process::exit(code);
}
