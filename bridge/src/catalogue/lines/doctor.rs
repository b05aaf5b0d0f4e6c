//! `mcp-bridge-vscode doctor` (docs/troubleshooting.md, "`doctor`"). Its findings
//! are its own text; the lines of the bridge that they show are the other files'.

use std::fmt::Display;

lines! {
    group DOCTOR;

    /// What doctor asks of the user.
    pub enum DoctorInfo<'a>: Vscode Info {
        /// `--sign-in` where no browser opened the URL (none, or `--no-browser`).
        OpenSignInUrl { url: &'a str } => "doctor opened no browser: open this URL to sign in: {url}",
    }

    /// doctor cannot run its checks: exit code 1.
    pub enum DoctorError<'a>: Vscode Error {
        /// No runtime for the checks.
        CannotStart { error: &'a dyn Display } => "doctor cannot start: {error}",
    }
}
