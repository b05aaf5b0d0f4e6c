//! The log lines of the fixture on stderr.
//!
//! Stdout carries JSON-RPC frames only (stdio transport rule). Every stderr line starts with
//! `bridge-fixture-server: <level>(<scope>): `, so that a test or the Output channel of
//! VS Code tells the lines of the fixture from those of the bridge
//! (`mcp-bridge-vscode: <scope>: <level>: ...`).

use std::fmt;
use std::io::Write;

/// The prefix of every stderr line; also the name of the executable.
pub const PREFIX: &str = "bridge-fixture-server";

/// The severity of a stderr line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        })
    }
}

/// Writes one line. Control characters in the text (for example a newline that came
/// from a peer) become spaces, so that one call always gives exactly one line.
pub fn line(level: Level, scope: &str, text: fmt::Arguments<'_>) {
    let text: String = text
        .to_string()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut stderr = std::io::stderr().lock();
    // A closed stderr must not stop the server: the line is lost, nothing else.
    let _ = writeln!(stderr, "{PREFIX}: {level}({scope}): {text}");
}

/// `info!("scope", "format", args...)`: an info line on stderr.
#[macro_export]
macro_rules! info {
    ($scope:expr, $($arg:tt)*) => {
        $crate::diag::line($crate::diag::Level::Info, $scope, format_args!($($arg)*))
    };
}

/// `warning!("scope", "format", args...)`: a warning line on stderr.
#[macro_export]
macro_rules! warning {
    ($scope:expr, $($arg:tt)*) => {
        $crate::diag::line($crate::diag::Level::Warning, $scope, format_args!($($arg)*))
    };
}

/// `error!("scope", "format", args...)`: an error line on stderr.
#[macro_export]
macro_rules! error {
    ($scope:expr, $($arg:tt)*) => {
        $crate::diag::line($crate::diag::Level::Error, $scope, format_args!($($arg)*))
    };
}
