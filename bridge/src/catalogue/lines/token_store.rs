//! The token stores of the URL form (docs/troubleshooting.md, "The URL form: token
//! stores").

use std::fmt::Display;

lines! {
    group TOKEN_STORE;

    /// The start line that names the store that serves.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum TokenStoreInfo: Bridge Info {
        Keychain { service: &'static str }
            => "the tokens are in the keychain of the host (service \"{service}\")",
        Files { dir: String } => "the tokens are in encrypted files in {dir}",
        /// `--token-store memory`.
        MemoryChosen
            => "the tokens stay in memory (--token-store memory): each start needs a new sign-in",
        /// `auto` without a keychain or a key of the file store.
        MemoryWithoutKeychain { why: String, why_files as "why the file store did not open": String }
            => "the tokens stay in memory (no keychain: {why}; {why_files}): each start needs a new sign-in",
    }

    /// A store that fails after the start, and entries that are not valid.
    pub enum TokenStoreWarning<'a>: Bridge Warning {
        KeychainStopped { error: &'a dyn Display, next_store: &'a dyn Display }
            => "the keychain stopped to answer ({error}). For the rest of the process, {next_store}",
        LoadFailed { error: &'a dyn Display }
            => "the token store did not give the stored sign-in: {error}",
        SaveFailed { error: &'a dyn Display } => "the token store did not keep the sign-in: {error}",
        /// The stop of the bridge ended the task that saved.
        SaveTaskStopped => "the token store did not keep the sign-in: its task stopped",
        FileMoved { path: &'a dyn Display, why: &'a dyn Display, new_path: &'a dyn Display }
            => "the token file {path} is not valid ({why}): the bridge moved it to {new_path} and counts it as absent",
        FileNotValid { path: &'a dyn Display, why: &'a dyn Display }
            => "the token file {path} is not valid ({why}): the bridge counts it as absent",
        KeychainItemNotValid { name: &'a dyn Display, why: &'a dyn Display }
            => "the keychain item {name} is not valid ({why}): the bridge counts it as absent",
    }

    /// The store of `--token-store keychain` or `file` did not open: exit code 2.
    pub enum TokenStoreError<'a>: Vscode Error {
        DidNotOpen { cause: &'a dyn Display } => "the token store did not open: {cause}",
    }
}
