//! `mcp-bridge-vscode logout` (docs/troubleshooting.md, "`logout`").

use std::fmt::Display;

lines! {
    group LOGOUT;

    /// What logout did.
    pub enum LogoutInfo<'a>: Vscode Info {
        Deleted { label: &'a str }
            => "logout deleted the stored sign-in of the account \"{label}\". Restart the server in VS Code to sign in again.",
        NothingFound { label: &'a str }
            => "logout found no stored sign-in of the account \"{label}\" for the URL",
        AllDeleted { n: usize, store: &'a str } => "logout --all deleted {n} stored sign-ins in {store}",
        DirectoryDeleted { dir: &'a dyn Display } => "logout --all deleted the token directory {dir}",
        NoDirectory { dir: &'a dyn Display }
            => "logout --all found no token directory {dir}: the encrypted files hold no sign-in",
        NothingInMemory
            => "logout has nothing to delete in memory (--token-store memory): the tokens of a bridge in memory end with its process",
        KeychainSkipped { why: &'a dyn Display } => "logout skipped the keychain of the host: {why}",
        FilesSkipped { why: &'a dyn Display } => "logout skipped the encrypted files: {why}",
    }

    /// Why logout looked no further.
    pub enum LogoutDebug<'a>: Vscode Debug {
        NoResourceMetadata { error: &'a dyn Display }
            => "logout read no protected resource metadata of the URL: {error}",
    }

    /// A deletion that failed: exit code 1.
    pub enum LogoutError<'a>: Vscode Error {
        DeletionFailed { label: &'a str, store: &'a str, error: &'a dyn Display }
            => "logout could not delete the stored sign-in of the account \"{label}\" in {store}: {error}",
        AllDeletionFailed { store: &'a str, error: &'a dyn Display }
            => "logout --all could not delete the stored sign-ins in {store}: {error}",
        DirectoryStays { dir: &'a dyn Display, error: &'a dyn Display }
            => "logout --all could not delete the token directory {dir}: {error}",
    }
}
