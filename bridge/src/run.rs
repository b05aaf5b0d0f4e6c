//! The executable around a session: stdin and stdout, the connector of the
//! configured upstream, and the handling of an internal error.

use crate::config::{Config, UpstreamTarget};
use crate::log::VSCODE;
use crate::session::{Exit, serve};
use crate::upstream::Connector;
use crate::upstream::stdio::{StdioConnector, kill_all_groups};
use std::sync::Arc;

/// The connector of the configured upstream.
pub fn connector(config: &Config) -> Arc<dyn Connector> {
    match &config.upstream {
        UpstreamTarget::Command { program, args } => Arc::new(StdioConnector {
            program: program.clone(),
            args: args.clone(),
            max_line_bytes: config.max_line_bytes,
            grace: config.limits.shutdown_grace,
        }),
    }
}

/// Serves VS Code on stdin and stdout.
pub async fn run_stdio(config: &Config) -> Exit {
    serve(
        config,
        connector(config),
        tokio::io::stdin(),
        tokio::io::stdout(),
    )
    .await
}

/// A panic in any task is an internal error: one line, the upstream stops, exit 1.
/// Without this, a panicked task could leave the session waiting forever.
pub fn exit_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "{}",
            crate::log::line(
                VSCODE,
                &tracing::Level::ERROR,
                &format!("the bridge stopped because of an internal error: {message}{location}")
            )
        );
        kill_all_groups();
        std::process::exit(1);
    }));
}
