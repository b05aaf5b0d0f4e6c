//! The command line: the errors of its arguments, its warnings, and its usage
//! (docs/troubleshooting.md, "Errors of the command line"; docs/configuration.md).
//! An error line names the option, the header or the variable, never a value.

use std::fmt;

/// The forms of the serving command line.
pub const USAGE: &str =
    "mcp-bridge-vscode [options] -- <command> [args...]\n       mcp-bridge-vscode [options] <url>";

/// The forms of `logout`.
pub const LOGOUT_USAGE: &str = "mcp-bridge-vscode logout [--account <label>] [options] <url>\n       mcp-bridge-vscode logout --all [options]";

/// The forms of `doctor`.
pub const DOCTOR_USAGE: &str = "mcp-bridge-vscode doctor [options] <url>\n       mcp-bridge-vscode doctor [options] -- <command> [args...]";

/// What follows an error line of the arguments: the usage and where the options are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    Serving,
    Logout,
    Doctor,
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Serving => write!(
                f,
                "Usage: {USAGE}\nRun mcp-bridge-vscode --help for the options.\n"
            ),
            Self::Logout => write!(
                f,
                "Usage: {LOGOUT_USAGE}\nRun mcp-bridge-vscode logout --help for the options.\n"
            ),
            Self::Doctor => write!(
                f,
                "Usage: {DOCTOR_USAGE}\nRun mcp-bridge-vscode doctor --help for the options.\n"
            ),
        }
    }
}

/// What a value out of range must be, in the line `the value of the option <option>
/// is not valid: <rule>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueRule {
    LogLevel,
    Seconds,
    Bytes,
    Port,
    SeeHelp,
}

impl ValueRule {
    /// Every rule; docs/troubleshooting.md names each.
    pub const ALL: [ValueRule; 5] = [
        Self::LogLevel,
        Self::Seconds,
        Self::Bytes,
        Self::Port,
        Self::SeeHelp,
    ];

    pub const fn text(self) -> &'static str {
        match self {
            Self::LogLevel => "use err, warn, info or debug",
            Self::Seconds => "use a whole number of seconds from 1 to 86400",
            Self::Bytes => "use a whole number from 1 to 1073741824",
            Self::Port => "use a port from 1 to 65535",
            Self::SeeHelp => "see --help",
        }
    }
}

impl fmt::Display for ValueRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

lines! {
    group CLI;

    /// Arguments that are not valid: the line, then the [`Usage`] (but after
    /// [`CliError::CaFileUnusable`]), and exit code 2.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum CliError: Vscode Error {
        OptionNotKnown { option: String } => "the option {option} is not known",
        OptionHasNoValue { option: String } => "the option {option} has no value",
        /// A value for an option that takes none (`--no-browser=yes`).
        OptionTakesNoValue { option: String } => "the option {option} takes no value",
        ValueNotValid { option: String, rule: ValueRule }
            => "the value of the option {option} is not valid: {rule}",
        AccountNotValid
            => "the value of the option --account is not valid: use 1 to 64 letters, digits, -, ., _, @ or +",
        TokenStoreNotValid
            => "the value of the option --token-store is not valid: use auto, keychain, file or memory",
        /// `--client-issuer` or `--client-metadata-url`.
        NotAnHttpsUrl { option: &'static str }
            => "the value of the option {option} is not valid: use an https URL",
        /// `--client-metadata-url` without a path: the document's URL is the client ID.
        DocumentUrlWithoutPath
            => "the value of the option --client-metadata-url is not valid: use the URL of the document, with its path",
        /// Another error of the parser, such as a value that is not UTF-8.
        ArgumentsNotValid => "the arguments are not valid",
        CommandMissing => "the upstream command is missing: write -- and the command of the server",
        CommandEmpty => "the upstream command after -- is empty",
        NotAnOption => "an argument before -- is not an option: write -- before the upstream command",
        UrlAndCommand => "write either a URL or -- and a command, not both",
        OnlyForUrlForm { option: &'static str }
            => "the option --{option} is for the URL form, not for -- and a command",
        LogoutFirst => "write logout first, before its options",
        DoctorFirst => "write doctor first, before its options",
        /// `doctor --arguments` without `--call`.
        ArgumentsWithoutCall => "the option --arguments needs --call",
        ArgumentsNotAnObject
            => "the value of the option --arguments is not valid: use a JSON object",
        LogoutNeedsTarget => "logout needs the URL of the server, or --all",
        UrlAndAll => "write either a URL or --all, not both",
        AllWithAccount => "--all deletes every account: leave out --account",
        UrlNotValid => "the URL of the upstream server is not valid",
        UrlNotHttps => "the URL of the upstream server does not use https",
        UrlHttpNotLoopback
            => "the URL of the upstream server uses http to a host that is not a loopback host: use https",
        UrlUserInformation
            => "the URL of the upstream server has user information: give a token with --header-env",
        UrlFragment => "the URL of the upstream server has a fragment",
        HeaderWithoutColon => "the option --header takes <name>:<value>",
        HeaderEnvWithoutEquals => "the option --header-env takes <name>=<var>",
        HeaderNameNotValid { option: &'static str } => "the header name of {option} is not valid",
        HeaderRefused { name: String, option: &'static str }
            => "the header {name} of {option} is refused: the bridge or the HTTP connection sets it",
        HeaderEnvWithoutVariable { name: String }
            => "the header {name} of --header-env has no variable name",
        VariableNotSet { var: String } => "the variable {var} of --header-env is not set",
        HeaderValueWithControl { name: String }
            => "the value of the header {name} has a control character",
        AuthorizationExcludesSignIn { option: &'static str }
            => "a static Authorization header and --{option} exclude each other: the header disables the sign-in",
        SecretNeedsIssuer
            => "a client with a secret (MCP_BRIDGE_CLIENT_SECRET) needs --client-issuer, so that the secret goes only to that authorization server",
        /// The file cannot be read or has no PEM certificate (no usage follows).
        CaFileUnusable { error: String } => "cannot use the CA certificates of --ca-file: {error}",
    }

    /// Arguments that work but should change; the bridge still starts.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum CliWarning: Vscode Warning {
        /// A `--header` whose name usually carries a secret.
        HeaderOnCommandLine { name: String }
            => "the value of the header {name} is on the command line. VS Code writes the command line to its log, and the process list shows it: give a secret with --header-env",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Line as _;

    #[test]
    fn an_error_line_then_the_usage() {
        let error = CliError::OptionNotKnown {
            option: "--x".into(),
        };
        assert_eq!(
            format!("{}{error}\n{}", error.prefix(), Usage::Serving),
            "mcp-bridge-vscode: vscode: error: the option --x is not known\nUsage: mcp-bridge-vscode [options] -- <command> [args...]\n       mcp-bridge-vscode [options] <url>\nRun mcp-bridge-vscode --help for the options.\n"
        );
    }
}
