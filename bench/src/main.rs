//! The `harness-bench` executable: see `harness_bench::cli`.
#![forbid(unsafe_code)]

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The floor of the URL form runs on one thread, as the bridge does.
    if args.get(1).is_some_and(|a| a == "url-relay") {
        let rest: Vec<String> = args[2..]
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        std::process::exit(harness_bench::url_relay::run(&rest));
    }
    // So do the relays that are built as the bridge is.
    let reactor_mode = args
        .get(2)
        .filter(|_| args.get(1).is_some_and(|a| a == "relay"));
    if let Some(tasks) = reactor_mode.and_then(|mode| match mode.to_str() {
        Some("--reactor") => Some(false),
        Some("--tasks") => Some(true),
        _ => None,
    }) {
        let command: Vec<String> = args[3..]
            .iter()
            .skip_while(|a| *a == "--")
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        std::process::exit(harness_bench::reactor_relay::run(&command, tasks));
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("harness-bench: no runtime: {error}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(harness_bench::cli::run(args));
    // exit() with the runtime alive, never its drop: the drop would wait for a
    // blocked read of stdin (the relay).
    std::process::exit(code);
}
