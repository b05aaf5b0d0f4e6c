//! The one place of doctor that names texts of others: the lines of the Output
//! channel (entries of the bridge's catalogue, made by the functions of the
//! bridge that write them), the error that VS Code shows for a cause, VS Code's
//! own messages, and the sections of docs/troubleshooting.md that the advice
//! points to. Everything else doctor writes is its own.

use crate::auth::client_id::WhyRegistration;
use crate::auth::errors::SignInError;
use crate::catalogue::cli::CliWarning;
use crate::catalogue::{Cause, DoctorError, DoctorInfo, Level, Prefix, Scope};
use crate::log::line_of;
use crate::rules::results::ToolSchemaFix;
use crate::upstream::ConnectError;

/// A section of docs/troubleshooting.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Reach,
    SignIn,
    Revision,
    WhatVscodeGets,
    /// The lines of the start (the upstream command, server/discover).
    Start,
    /// The lines of the sign-in.
    SignInLines,
    /// The lines of the token stores.
    TokenStores,
    /// The lines of the listen stream.
    Listen,
    /// The errors that VS Code gets, by cause.
    Errors,
}

impl Section {
    #[cfg(test)]
    pub const ALL: [Section; 9] = [
        Self::Reach,
        Self::SignIn,
        Self::Revision,
        Self::WhatVscodeGets,
        Self::Start,
        Self::SignInLines,
        Self::TokenStores,
        Self::Listen,
        Self::Errors,
    ];

    /// The anchor of the section's heading (as GitHub makes it).
    pub fn anchor(self) -> &'static str {
        match self {
            Self::Reach => "doctor-reach",
            Self::SignIn => "doctor-sign-in",
            Self::Revision => "doctor-revision",
            Self::WhatVscodeGets => "doctor-what-vs-code-will-get",
            Self::Start => "the-start-and-the-upstream-server",
            Self::SignInLines => "the-url-form-sign-in-m4-m6",
            Self::TokenStores => "the-url-form-token-stores",
            Self::Listen => "the-listen-stream-list-changes-and-subscriptions-m3",
            Self::Errors => "the-errors-that-vs-code-gets",
        }
    }

    /// Where the advice points: the page and the anchor.
    pub fn link(self) -> String {
        format!("docs/troubleshooting.md#{}", self.anchor())
    }
}

/// A warning of the command line (a secret in `--header`), as a start writes it.
pub fn command_line_warning(warning: &CliWarning) -> String {
    line_of(warning)
}

/// The line of a link that could not be made or reached (the start of the
/// upstream, the connection, TLS, the HTTP client).
pub fn connect_line(error: &ConnectError) -> String {
    line_of(&error.log_line())
}

/// The line of a failed step of the sign-in, for the failures that have one.
pub fn sign_in_line(error: &SignInError) -> Option<String> {
    error.log_line().map(|line| line_of(&line))
}

/// The info line of a repair of an input schema (R6), or of one too deep.
pub fn schema_fix_line(fix: &ToolSchemaFix) -> String {
    line_of(&fix.log_line())
}

/// The info line that says why the bridge registers a client, when it has one.
pub fn registration_line(why: &WhyRegistration) -> Option<String> {
    why.line().map(|line| line_of(&line))
}

/// Whether a line is a warning of the routing of the upstream's frames (a frame
/// that the bridge dropped, such as a log line on stdout).
pub fn is_router_warning(text: &str) -> bool {
    text.starts_with(&Prefix::of(Scope::McpRouter, Level::Warning).to_string())
}

/// The line of `--sign-in` when no browser opened the URL of the sign-in.
pub fn open_sign_in(url: &str) -> String {
    line_of(&DoctorInfo::OpenSignInUrl { url })
}

/// The error line of doctor itself when it cannot run (no runtime).
pub fn cannot_run(error: &dyn std::fmt::Display) -> String {
    line_of(&DoctorError::CannotStart { error })
}

/// The error as VS Code shows it: `MPC <code>: <message>` (VS Code writes "MPC").
pub fn vscode_shows(cause: Cause) -> String {
    format!("MPC {}: {}", cause.code(), cause.message())
}

/// VS Code's own line when tools fail its draft-07 check of the input schemas.
pub fn invalid_schemas_line(count: usize) -> String {
    format!("{count} tools have invalid JSON schemas and will be omitted")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/troubleshooting.md"
    ));

    /// GitHub's anchor of a heading: lower case, only letters, digits, `-` and
    /// `_`, a space becomes `-`.
    fn anchor_of(heading: &str) -> String {
        heading
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_section_of_the_advice_is_a_heading_of_the_page() {
        let anchors: Vec<String> = PAGE
            .lines()
            .filter_map(|line| line.strip_prefix('#'))
            .map(|heading| anchor_of(heading.trim_start_matches('#')))
            .collect();
        for section in Section::ALL {
            assert!(
                anchors.iter().any(|anchor| anchor == section.anchor()),
                "docs/troubleshooting.md has no heading for #{}: {anchors:?}",
                section.anchor()
            );
        }
        assert_eq!(
            anchor_of("The URL form: sign-in (M4, M6)"),
            "the-url-form-sign-in-m4-m6"
        );
    }

    #[test]
    fn the_lines_are_those_of_the_bridge() {
        assert_eq!(
            connect_line(&ConnectError::Spawn("No such file or directory".into())),
            "mcp-bridge-vscode: bridge: warning: cannot start the upstream command: No such file or directory"
        );
        assert_eq!(
            vscode_shows(Cause::SpawnFailed),
            format!("MPC -32603: {}", Cause::SpawnFailed.message())
        );
        assert_eq!(
            sign_in_line(&SignInError::NoClientRegistration).unwrap(),
            "mcp-bridge-vscode: bridge: warning: the authorization server has no client registration that the bridge can use: give --client-id"
        );
        assert_eq!(registration_line(&WhyRegistration::NoDocuments), None);
        assert_eq!(
            registration_line(&WhyRegistration::MetadataUrlNotTaken).unwrap(),
            "mcp-bridge-vscode: bridge: info: the authorization server does not use client ID metadata documents: the bridge uses dynamic client registration"
        );
        assert!(is_router_warning(
            "mcp-bridge-vscode: mcp_router: warning: dropped x: y"
        ));
        assert!(!is_router_warning(
            "mcp-bridge-vscode: bridge: warning: dropped x: y"
        ));
        assert_eq!(
            cannot_run(&"no threads"),
            "mcp-bridge-vscode: vscode: error: doctor cannot start: no threads"
        );
    }
}
