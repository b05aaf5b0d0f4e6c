//! The log lines on stderr: `mcp-bridge-vscode: <scope>: <level>: <text>`.
//!
//! VS Code shows stderr in the Output channel of the server. Stdout carries only
//! JSON-RPC (R7), so every line of the bridge goes here, one event per line. The
//! scopes are the contract's: `bridge` (the core), `vscode` (the executable), and
//! `mcp_stdio`/`mcp_router` (the upstream link). No line holds a secret or the
//! content of a frame.

use std::fmt::{self, Write as _};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The core of the bridge.
pub const BRIDGE: &str = "bridge";
/// The executable: arguments, the watchdog, internal errors.
pub const VSCODE: &str = "vscode";
/// The stdio link to the upstream server.
pub const MCP_STDIO: &str = "mcp_stdio";
/// The routing of upstream frames.
pub const MCP_ROUTER: &str = "mcp_router";

/// The sign-in line, `mcp-bridge-vscode: sign in at <url>`: no scope and no
/// level, and written at every `--log-level`, since the user needs it to sign in.
pub const SIGN_IN: &str = "sign_in";

const SCOPES: [&str; 4] = [BRIDGE, VSCODE, MCP_STDIO, MCP_ROUTER];

/// The value of `--log-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum LogLevel {
    Err,
    Warn,
    Info,
    Debug,
}

impl LogLevel {
    #[cfg(test)]
    fn admits(self, level: &Level) -> bool {
        let needed = match *level {
            Level::ERROR => LogLevel::Err,
            Level::WARN => LogLevel::Warn,
            Level::INFO => LogLevel::Info,
            _ => LogLevel::Debug,
        };
        needed <= self
    }
}

/// The level word of a line.
fn level_word(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warning",
        Level::INFO => "info",
        _ => "debug",
    }
}

/// Installs the stderr logger of the executable. The filter names its scopes and
/// level statically, so a disabled line costs nothing where it is written.
pub fn init(level: LogLevel) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let level = match level {
        LogLevel::Err => tracing::level_filters::LevelFilter::ERROR,
        LogLevel::Warn => tracing::level_filters::LevelFilter::WARN,
        LogLevel::Info => tracing::level_filters::LevelFilter::INFO,
        LogLevel::Debug => tracing::level_filters::LevelFilter::DEBUG,
    };
    let filter = tracing_subscriber::filter::Targets::new()
        .with_targets(SCOPES.map(|scope| (scope, level)))
        .with_target(SIGN_IN, tracing::level_filters::LevelFilter::INFO);
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .event_format(LineFormat)
        .with_filter(filter);
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

use tracing_subscriber::Layer as _;

/// Formats one event as one line of the contract.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineFormat;

impl<S, N> FormatEvent<S, N> for LineFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        let mut text = MessageText::default();
        event.record(&mut text);
        writeln!(
            writer,
            "{}",
            line(metadata.target(), metadata.level(), &text.0)
        )
    }
}

/// One log line: the text loses its line breaks, so that one event is one line.
pub fn line(scope: &str, level: &Level, text: &str) -> String {
    let mut out = if scope == SIGN_IN {
        "mcp-bridge-vscode: ".to_owned()
    } else {
        format!("mcp-bridge-vscode: {scope}: {}: ", level_word(level))
    };
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[derive(Default)]
struct MessageText(String);

impl Visit for MessageText {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_have_the_form_of_the_contract() {
        assert_eq!(
            line(BRIDGE, &Level::INFO, "the upstream server is ready"),
            "mcp-bridge-vscode: bridge: info: the upstream server is ready"
        );
        assert_eq!(
            line(VSCODE, &Level::WARN, "a\nb"),
            "mcp-bridge-vscode: vscode: warning: a b"
        );
        assert_eq!(
            line(MCP_ROUTER, &Level::ERROR, "x\u{7}"),
            "mcp-bridge-vscode: mcp_router: error: x\\u{7}"
        );
        assert_eq!(
            line(SIGN_IN, &Level::INFO, "sign in at https://as/authorize?x=1"),
            "mcp-bridge-vscode: sign in at https://as/authorize?x=1"
        );
        assert_eq!(
            line(BRIDGE, &Level::DEBUG, ""),
            "mcp-bridge-vscode: bridge: debug: "
        );
    }

    #[test]
    fn levels_admit_what_is_at_or_above_them() {
        assert!(LogLevel::Info.admits(&Level::WARN));
        assert!(LogLevel::Info.admits(&Level::INFO));
        assert!(!LogLevel::Info.admits(&Level::DEBUG));
        assert!(!LogLevel::Err.admits(&Level::WARN));
        assert!(LogLevel::Debug.admits(&Level::TRACE));
    }
}
