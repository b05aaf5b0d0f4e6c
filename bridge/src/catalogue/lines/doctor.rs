//! `mcp-bridge-vscode doctor` (docs/troubleshooting.md, "`doctor`"). Its findings
//! are its own text; the lines of the bridge that they show are the other files'.

use std::fmt::Display;

lines! {
    group DOCTOR;

    /// doctor cannot run its checks: exit code 1.
    pub enum DoctorError<'a>: Vscode Error {
        /// No runtime for the checks.
        CannotStart { error: &'a dyn Display } => "doctor cannot start: {error}",
    }
}
