//! The form of a line on stderr, which VS Code shows in the Output channel:
//! `mcp-bridge-vscode: <scope>: <level>: <text>`, or `mcp-bridge-vscode: <text>` for
//! the sign-in line.

use std::fmt;

/// Who writes a line: the contract's scopes, and the sign-in line, which has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The core of the bridge.
    Bridge,
    /// The executable: arguments, the watchdog, internal errors, `logout`, `doctor`.
    Vscode,
    /// The stdio link to the upstream server.
    McpStdio,
    /// The routing of upstream frames.
    McpRouter,
    /// `mcp-bridge-vscode: sign in at <url>`: no scope and no level, and written at
    /// every `--log-level`, since the user needs it to sign in.
    SignIn,
}

impl Scope {
    /// The scopes that `--log-level` filters (the sign-in line it never hides).
    pub const FILTERED: [Scope; 4] = [Self::Bridge, Self::Vscode, Self::McpStdio, Self::McpRouter];

    /// The name of the scope in a line, and the `tracing` target that carries it.
    pub const fn target(self) -> &'static str {
        match self {
            Self::Bridge => "bridge",
            Self::Vscode => "vscode",
            Self::McpStdio => "mcp_stdio",
            Self::McpRouter => "mcp_router",
            Self::SignIn => "sign_in",
        }
    }
}

/// The level of a line, as its word names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Error,
    Warning,
    Info,
    Debug,
}

impl Level {
    /// The `tracing` level that carries it, so that `--log-level` filters it.
    pub const fn tracing(self) -> tracing::Level {
        match self {
            Self::Error => tracing::Level::ERROR,
            Self::Warning => tracing::Level::WARN,
            Self::Info => tracing::Level::INFO,
            Self::Debug => tracing::Level::DEBUG,
        }
    }

    /// The level of a `tracing` level (TRACE is never written, and reads as debug).
    pub fn of_tracing(level: &tracing::Level) -> Level {
        match *level {
            tracing::Level::ERROR => Self::Error,
            tracing::Level::WARN => Self::Warning,
            tracing::Level::INFO => Self::Info,
            _ => Self::Debug,
        }
    }

    /// The word of the level in a line.
    pub const fn word(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Info => "info",
            Self::Debug => "debug",
        }
    }
}

/// The start of every line of the bridge, up to its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    /// The name of the scope: [`Scope::target`] (an event of another crate that
    /// a test's logger lets through shows its own target here).
    pub scope: &'static str,
    pub level: Level,
}

impl Prefix {
    pub const fn of(scope: Scope, level: Level) -> Prefix {
        Prefix {
            scope: scope.target(),
            level,
        }
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("mcp-bridge-vscode: ")?;
        if self.scope != Scope::SignIn.target() {
            write!(f, "{}: {}: ", self.scope, self.level.word())?;
        }
        Ok(())
    }
}

/// A line of the catalogue: its text (`Display`), and its scope and level, which
/// are the same for every line of its type, so that a line's call site in the
/// `tracing` macros is static and a disabled level costs nothing there.
pub trait Line: fmt::Display {
    const SCOPE: Scope;
    const LEVEL: Level;

    /// The start of the line.
    fn prefix(&self) -> Prefix {
        Prefix::of(Self::SCOPE, Self::LEVEL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_has_the_form_of_the_contract() {
        let prefix = |scope, level| Prefix::of(scope, level).to_string();
        assert_eq!(
            prefix(Scope::McpRouter, Level::Warning),
            "mcp-bridge-vscode: mcp_router: warning: "
        );
        assert_eq!(prefix(Scope::SignIn, Level::Info), "mcp-bridge-vscode: ");
    }
}
