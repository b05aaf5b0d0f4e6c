//! The lines that the bridge writes while doctor runs its code: kept for the
//! findings (the lines of the Output channel that VS Code would show), and not
//! written to stderr, except the sign-in line (the user needs its URL when no
//! browser opens) and, with `--log-level`, the lines at that level.
//!
//! The sign-in line is never kept: its URL has the state of the sign-in, which
//! belongs in no report.

use crate::catalogue::Scope;
use crate::log::{LogLevel, event_line};
use std::sync::{Arc, Mutex};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;

/// One line of the bridge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub level: Level,
    /// The whole line, as the Output channel shows it.
    pub text: String,
}

impl Captured {
    /// A warning or an error: what VS Code's Output channel shows at every level
    /// of the bridge's `--log-level` but `err`.
    pub fn is_warning_or_worse(&self) -> bool {
        self.level <= Level::WARN
    }
}

/// The lines kept so far. A mark is an index: the lines of one step are those
/// after the mark taken before it.
#[derive(Debug, Default, Clone)]
pub struct Lines(Arc<Mutex<Vec<Captured>>>);

impl Lines {
    pub fn mark(&self) -> usize {
        self.lock().len()
    }

    /// The lines after `mark`.
    pub fn since(&self, mark: usize) -> Vec<Captured> {
        self.lock()
            .get(mark..)
            .map(<[_]>::to_vec)
            .unwrap_or_default()
    }

    /// The warnings and errors after `mark`, as text.
    pub fn warnings_since(&self, mark: usize) -> Vec<String> {
        self.since(mark)
            .into_iter()
            .filter(Captured::is_warning_or_worse)
            .map(|line| line.text)
            .collect()
    }

    /// The lines from the mark `start` to the mark `end`.
    pub fn between(&self, (start, end): (usize, usize)) -> Vec<Captured> {
        self.lock()
            .get(start..end)
            .map(<[_]>::to_vec)
            .unwrap_or_default()
    }

    /// The warnings and errors from the mark `start` to the mark `end`, as text.
    pub fn warnings_between(&self, range: (usize, usize)) -> Vec<String> {
        self.between(range)
            .into_iter()
            .filter(Captured::is_warning_or_worse)
            .map(|line| line.text)
            .collect()
    }

    /// The lines after `mark` that `wanted` accepts, as text.
    pub fn matching_since(&self, mark: usize, wanted: impl Fn(&str) -> bool) -> Vec<String> {
        self.since(mark)
            .into_iter()
            .map(|line| line.text)
            .filter(|text| wanted(text))
            .collect()
    }

    fn push(&self, line: Captured) {
        self.lock().push(line);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Captured>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Installs the layer for the rest of the process: the lines are kept in the
/// returned [`Lines`]; `echo` also writes the lines at that level to stderr.
pub fn install(echo: Option<LogLevel>) -> Lines {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let lines = Lines::default();
    let layer = Capture {
        lines: lines.clone(),
        echo,
    };
    let _ = tracing_subscriber::registry().with(layer).try_init();
    lines
}

struct Capture {
    lines: Lines,
    echo: Option<LogLevel>,
}

impl<S: Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let metadata = event.metadata();
        let scope = metadata.target();
        let level = *metadata.level();
        if scope == Scope::SignIn.target() {
            eprintln!("{}", event_line(event));
            return;
        }
        if !Scope::FILTERED
            .iter()
            .any(|filtered| filtered.target() == scope)
        {
            return;
        }
        let text = event_line(event);
        if self.echo.is_some_and(|echo| echo.admits(&level)) {
            eprintln!("{text}");
        }
        self.lines.push(Captured { level, text });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{RouterWarning, SignInLine, StartInfo};
    use crate::log::emit;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn the_lines_of_the_bridge_are_kept_and_the_sign_in_line_is_not() {
        let lines = Lines::default();
        let subscriber = tracing_subscriber::registry().with(Capture {
            lines: lines.clone(),
            echo: None,
        });
        tracing::subscriber::with_default(subscriber, || {
            let mark = lines.mark();
            emit!(StartInfo::Ready);
            emit!(RouterWarning::Dropped {
                frame: &"x",
                reason: &"y"
            });
            emit!(SignInLine::At {
                url: &"https://as.example/authorize?state=s"
            });
            tracing::info!(target: "other", "not a line of the bridge");
            assert_eq!(
                lines
                    .since(mark)
                    .iter()
                    .map(|l| l.text.as_str())
                    .collect::<Vec<_>>(),
                vec![
                    "mcp-bridge-vscode: bridge: info: the upstream server is ready",
                    "mcp-bridge-vscode: mcp_router: warning: dropped x: y"
                ]
            );
            assert_eq!(
                lines.warnings_since(mark),
                vec!["mcp-bridge-vscode: mcp_router: warning: dropped x: y"]
            );
            assert!(lines.since(lines.mark()).is_empty());
        });
    }
}
