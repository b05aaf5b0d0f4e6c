//! `mcp-conformance [run] [--milestone M] [--item ID] [--json|--markdown] [FILES]`,
//! `mcp-conformance replay FILE`, and the relay mode that the bridge starts.
#![forbid(unsafe_code)]

fn main() {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp-conformance: cannot start the runtime: {error}");
            std::process::exit(2);
        }
    };
    let code = runtime.block_on(mcp_conformance::cli::main(std::env::args_os().collect()));
    // The relay may still wait in a blocking read of stdin: exit without waiting.
    std::process::exit(code)
}
