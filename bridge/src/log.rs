//! The log lines on stderr: `mcp-bridge-vscode: <scope>: <level>: <text>`.
//!
//! VS Code shows stderr in the Output channel of the server. Stdout carries only
//! JSON-RPC (R7), so every line of the bridge goes here, one event per line. Every
//! line is an entry of the catalogue ([`crate::catalogue`]), written with
//! [`emit!`]; its type gives the scope (the contract's `bridge`, `vscode`,
//! `mcp_stdio`, `mcp_router`, or the sign-in line) and the level. No line holds a
//! secret or the content of a frame.

use crate::catalogue::{Level, Line, Prefix, Scope};
use std::fmt::{self, Write as _};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Writes a line of the catalogue, with the scope and the level of its type:
///
/// ```ignore
/// emit!(RequestWarning::NoResponse { id: &key, method, limit: &limit });
/// emit!(StartInfo::Ready);
/// emit!(ListenWarning: line); // a line made elsewhere
/// ```
///
/// The type is named at the call site so that the `tracing` call site is static:
/// a level that `--log-level` hides costs a check there, and the line (with its
/// parameters) is only made when its level is written.
macro_rules! emit {
    ($kind:ident :: $variant:ident { $($fields:tt)* }) => {
        $crate::log::emit!($kind: $kind::$variant { $($fields)* })
    };
    ($kind:ident :: $variant:ident) => {
        $crate::log::emit!($kind: $kind::$variant)
    };
    ($kind:ident : $line:expr) => {
        ::tracing::event!(
            target: $kind::SCOPE.target(),
            $kind::LEVEL.tracing(),
            "{}",
            $kind::checked(&$line)
        )
    };
}
pub(crate) use emit;

/// The value of `--log-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum LogLevel {
    Err,
    Warn,
    Info,
    Debug,
}

impl LogLevel {
    /// Whether this `--log-level` writes a line of `level`.
    pub fn admits(self, level: &tracing::Level) -> bool {
        let needed = match *level {
            tracing::Level::ERROR => LogLevel::Err,
            tracing::Level::WARN => LogLevel::Warn,
            tracing::Level::INFO => LogLevel::Info,
            _ => LogLevel::Debug,
        };
        needed <= self
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
        .with_targets(Scope::FILTERED.map(|scope| (scope.target(), level)))
        .with_target(
            Scope::SignIn.target(),
            tracing::level_filters::LevelFilter::INFO,
        );
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
        writeln!(writer, "{}", event_line(event))
    }
}

/// The whole line of an event, as the Output channel shows it (also for the
/// lines that `doctor` keeps for its findings).
pub(crate) fn event_line(event: &Event<'_>) -> String {
    let metadata = event.metadata();
    let mut text = MessageText::default();
    event.record(&mut text);
    let prefix = Prefix {
        scope: metadata.target(),
        level: Level::of_tracing(metadata.level()),
    };
    line(prefix, &text.0)
}

/// The whole line of a line of the catalogue, for the lines written outside the
/// logger (the last-resort watchdog, a panic).
pub fn line_of<L: Line>(line: &L) -> String {
    self::line(line.prefix(), &line.to_string())
}

/// One log line: the text loses its line breaks, so that one event is one line.
fn line(prefix: Prefix, text: &str) -> String {
    let mut out = prefix.to_string();
    push_printable(&mut out, text);
    out
}

/// `text` as a log line carries it: a line break becomes a space, and every
/// other control character (C0, DEL, C1) is written as `\u{..}`, so that no text
/// of a server rewrites a terminal (also in the report of `doctor`).
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_printable(&mut out, text);
    out
}

fn push_printable(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
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
    use crate::catalogue::{ExecutableError, SignInLine, StartInfo};

    #[test]
    fn lines_have_the_form_of_the_contract() {
        assert_eq!(
            line_of(&StartInfo::Ready),
            "mcp-bridge-vscode: bridge: info: the upstream server is ready"
        );
        assert_eq!(
            line(Prefix::of(Scope::Vscode, Level::Warning), "a\nb"),
            "mcp-bridge-vscode: vscode: warning: a b"
        );
        assert_eq!(
            line(Prefix::of(Scope::McpRouter, Level::Error), "x\u{7}"),
            "mcp-bridge-vscode: mcp_router: error: x\\u{7}"
        );
        assert_eq!(
            line_of(&SignInLine::At {
                url: &"https://as/authorize?x=1"
            }),
            "mcp-bridge-vscode: sign in at https://as/authorize?x=1"
        );
        assert_eq!(
            line_of(&ExecutableError::InternalError { error: &"a\nb" }),
            "mcp-bridge-vscode: vscode: error: the bridge stopped because of an internal error: a b"
        );
    }

    #[test]
    fn a_line_of_a_hidden_level_is_never_made() {
        use crate::catalogue::{BridgeDebug, RequestInfo};
        use std::cell::Cell;
        let made = Cell::new(0);
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_writer(std::io::sink)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            emit!(BridgeDebug::LateCancel {
                id: &made.replace(made.get() + 1)
            });
            assert_eq!(made.get(), 0, "a debug line at info made its parameters");
            emit!(RequestInfo::StillWaiting {
                method: "tools/call",
                id: &made.replace(made.get() + 1),
                n: 10,
            });
            assert_eq!(made.get(), 1);
        });
    }

    #[test]
    fn levels_admit_what_is_at_or_above_them() {
        assert!(LogLevel::Info.admits(&tracing::Level::WARN));
        assert!(LogLevel::Info.admits(&tracing::Level::INFO));
        assert!(!LogLevel::Info.admits(&tracing::Level::DEBUG));
        assert!(!LogLevel::Err.admits(&tracing::Level::WARN));
        assert!(LogLevel::Debug.admits(&tracing::Level::TRACE));
    }
}
