//! The catalogue of what the user sees: every line that the bridge writes to the
//! Output channel of VS Code (its scope, its level and its text), the errors and
//! the usage of the command line, and the causes of the errors that VS Code gets.
//! The contract fixes these texts; here they are data with `Display`, and
//! docs/troubleshooting.md and docs/configuration.md are checked against them
//! (bridge/tests/catalogue_pages.rs). A layer maps its own events to an entry of
//! the catalogue and writes it with `log::emit!`; no log call carries a text of
//! its own. The texts that fill a placeholder (an error of a library, a path, a
//! detail of the upstream) stay with whoever makes them.
//!
//! The catalogue imports nothing of the crate, and every layer may use it.

#[macro_use]
mod define;
mod cause;
pub mod cli;
mod form;
mod lines;
mod template;

pub use cause::{BridgeError, Cause};
pub use form::{Level, Line, Prefix, Scope};
pub use lines::*;
pub use template::Template;

/// Every group of lines, by the file that defines it (`lines/<name>.rs`, and the
/// command line's `cli.rs`).
pub const GROUPS: [(&str, &[Template]); 11] = [
    ("lines/debug", DEBUG),
    ("lines/doctor", DOCTOR),
    ("lines/embed", EMBED),
    ("lines/input", INPUT),
    ("lines/listen", LISTEN),
    ("lines/logout", LOGOUT),
    ("lines/requests", REQUESTS),
    ("lines/sign_in", SIGN_IN),
    ("lines/start", START),
    ("lines/token_store", TOKEN_STORE),
    ("cli", cli::CLI),
];

/// Every line of the catalogue, in its template form.
pub fn templates() -> impl Iterator<Item = &'static Template> {
    GROUPS.iter().flat_map(|(_, group)| group.iter())
}
