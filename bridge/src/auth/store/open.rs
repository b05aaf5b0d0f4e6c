//! Opening the store of `--token-store`, with the one start line that names it
//! ("Token storage" of the contract).
//!
//! `auto` takes the keychain of the host, then the encrypted files (only with a
//! key), then memory; with the keychain, a [`KeychainFallback`] takes over when it
//! stops to answer later. `keychain`, `file` and `memory` use only that store, and
//! one that does not open is an [`OpenError`]: exit 2 with
//! `the token store did not open: <cause>`.

use super::key::KEY_VARIABLE;
use super::{
    FileStore, KeychainBackend, KeychainFallback, KeychainStore, MemoryStore, NativeKeychain,
    SERVICE, StoreError, TokenKey, TokenStore, token_directory, token_key,
};
use crate::catalogue::TokenStoreInfo;
use crate::config::TokenStoreChoice;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The store that serves, and the start line that names it (for the `bridge`
/// scope at the info level).
#[derive(Debug, Clone)]
pub struct OpenedStore {
    pub store: Arc<dyn TokenStore>,
    pub line: TokenStoreInfo,
}

/// Why the store of `--token-store` did not open: the `<cause>` of
/// `the token store did not open: <cause>`. The text never holds the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The key (of `MCP_BRIDGE_TOKEN_KEY` or `--token-key-file`) is not 64 hex digits.
    #[error("the key of {0} is not 64 hexadecimal digits")]
    InvalidKey(String),
    #[error("cannot read the key file {0} of --token-key-file: {1}")]
    KeyFileUnreadable(String, String),
    #[error(
        "the key file {0} of --token-key-file can be read by other accounts (mode {1:o}): allow only your account, for example with chmod 600"
    )]
    KeyFileNotPrivate(String, u32),
    #[error(
        "the key file {0} of --token-key-file is inside the token directory {1}: keep the key apart from the tokens"
    )]
    KeyInTokenDirectory(String, String),
    #[error(
        "the file store needs a key: set MCP_BRIDGE_TOKEN_KEY to 64 hexadecimal digits, or give --token-key-file"
    )]
    KeyMissing,
    #[error("{}", no_directory_text())]
    NoTokenDirectory,
    /// The token directory cannot be made or used.
    #[error("{0}")]
    FileStore(String),
    #[error("the keychain of the host did not open: {0}")]
    Keychain(String),
}

fn no_directory_text() -> &'static str {
    if cfg!(windows) {
        "the file store has no token directory: LOCALAPPDATA is not set"
    } else {
        "the file store has no token directory: set XDG_STATE_HOME or HOME"
    }
}

/// The start line of the keychain.
fn keychain_line() -> TokenStoreInfo {
    TokenStoreInfo::Keychain { service: SERVICE }
}

/// The start line of the file store.
fn file_line(dir: &Path) -> TokenStoreInfo {
    TokenStoreInfo::Files {
        dir: dir.display().to_string(),
    }
}

/// What the opener of a store does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A start of the bridge, `logout`, `doctor --sign-in`.
    ReadWrite,
    /// `doctor` without `--sign-in`: a diagnostic reads and changes nothing (no
    /// directory made, no key check written, no file moved aside).
    ReadOnly,
}

/// Opens the store of `choice` with the keychain of the host, for `access`.
pub fn open_for(
    access: Access,
    choice: TokenStoreChoice,
    key_file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OpenedStore, OpenError> {
    open_with_access(access, choice, key_file, env, &|has_display| {
        NativeKeychain::connect(has_display)
            .map(|keychain| Box::new(keychain) as Box<dyn KeychainBackend>)
    })
}

/// Opens the store of `choice` with the keychain of the host.
pub fn open(
    choice: TokenStoreChoice,
    key_file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OpenedStore, OpenError> {
    open_with(choice, key_file, env, &|has_display| {
        NativeKeychain::connect(has_display)
            .map(|keychain| Box::new(keychain) as Box<dyn KeychainBackend>)
    })
}

/// [`open`] with another keychain (`has_display` → the backend).
pub fn open_with(
    choice: TokenStoreChoice,
    key_file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    keychain: &dyn Fn(bool) -> Result<Box<dyn KeychainBackend>, StoreError>,
) -> Result<OpenedStore, OpenError> {
    open_with_access(Access::ReadWrite, choice, key_file, env, keychain)
}

/// [`open_for`] with another keychain (`has_display` → the backend).
pub fn open_with_access(
    access: Access,
    choice: TokenStoreChoice,
    key_file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    keychain: &dyn Fn(bool) -> Result<Box<dyn KeychainBackend>, StoreError>,
) -> Result<OpenedStore, OpenError> {
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|name| env(name).is_some_and(|value| !value.is_empty()));
    let token_dir = token_directory(env);
    let open_keychain = || -> Result<Arc<KeychainStore>, StoreError> {
        let store = KeychainStore::new(keychain(has_display)?);
        store.probe()?;
        Ok(Arc::new(store))
    };
    match choice {
        TokenStoreChoice::Memory => Ok(OpenedStore {
            store: Arc::new(MemoryStore::default()),
            line: TokenStoreInfo::MemoryChosen,
        }),
        TokenStoreChoice::Keychain => {
            let store = open_keychain().map_err(|error| OpenError::Keychain(error.to_string()))?;
            Ok(OpenedStore {
                store,
                line: keychain_line(),
            })
        }
        TokenStoreChoice::File => {
            let dir = token_dir.ok_or(OpenError::NoTokenDirectory)?;
            let key = token_key(key_file, Some(&dir), env)?.ok_or(OpenError::KeyMissing)?;
            let store = open_files(access, &dir, key).map_err(OpenError::FileStore)?;
            Ok(OpenedStore {
                store: Arc::new(store),
                line: file_line(&dir),
            })
        }
        TokenStoreChoice::Auto => {
            let key = token_key(key_file, token_dir.as_deref(), env)?;
            match open_keychain() {
                Ok(keychain) => {
                    let next = next_store(access, token_dir, key);
                    Ok(OpenedStore {
                        store: Arc::new(KeychainFallback::new(keychain, next)),
                        line: keychain_line(),
                    })
                }
                Err(no_keychain) => Ok(auto_without_keychain(
                    access,
                    &no_keychain.to_string(),
                    token_dir,
                    key,
                )),
            }
        }
    }
}

/// The file store in `dir`, for `access`.
fn open_files(access: Access, dir: &Path, key: TokenKey) -> Result<FileStore, String> {
    match access {
        Access::ReadWrite => FileStore::open(dir, key),
        Access::ReadOnly => FileStore::open_to_read(dir, key),
    }
}

/// `auto` when the keychain did not open: the files with a key, else memory.
fn auto_without_keychain(
    access: Access,
    no_keychain: &str,
    token_dir: Option<PathBuf>,
    key: Option<TokenKey>,
) -> OpenedStore {
    let why = match (token_dir, key) {
        (Some(dir), Some(key)) => match open_files(access, &dir, key) {
            Ok(store) => {
                return OpenedStore {
                    store: Arc::new(store),
                    line: file_line(&dir),
                };
            }
            Err(error) => format!("the file store did not open: {error}"),
        },
        (None, Some(_)) => format!("the file store did not open: {}", no_directory_text()),
        (_, None) => format!("no key of the file store in {KEY_VARIABLE} or --token-key-file"),
    };
    OpenedStore {
        store: Arc::new(MemoryStore::default()),
        line: TokenStoreInfo::MemoryWithoutKeychain {
            why: no_keychain.to_owned(),
            why_files: why,
        },
    }
}

/// The store after a keychain that stopped to answer, and the end of its line.
fn next_store(
    access: Access,
    token_dir: Option<PathBuf>,
    key: Option<TokenKey>,
) -> super::fallback::MakeNext {
    Box::new(move || {
        if let (Some(dir), Some(key)) = (&token_dir, &key) {
            match open_files(access, dir, key.clone()) {
                Ok(store) => {
                    return (
                        Arc::new(store) as Arc<dyn TokenStore>,
                        file_line(dir).to_string(),
                    );
                }
                Err(error) => {
                    return (
                        Arc::new(MemoryStore::default()),
                        format!(
                            "the tokens stay in memory (the file store did not open: {error}), and the next start needs a new sign-in"
                        ),
                    );
                }
            }
        }
        (
            Arc::new(MemoryStore::default()),
            "the tokens stay in memory, and the next start needs a new sign-in".to_owned(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::store::StoreKind;

    fn no_keychain(_: bool) -> Result<Box<dyn KeychainBackend>, StoreError> {
        Err(StoreError::Unavailable("no session bus".into()))
    }

    #[test]
    fn auto_without_a_keychain_or_a_key_stays_in_memory_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().to_string_lossy().into_owned();
        let env = move |name: &str| (name == "XDG_STATE_HOME").then(|| state.clone());
        let opened = open_with(TokenStoreChoice::Auto, None, &env, &no_keychain).unwrap();
        assert_eq!(opened.store.kind(), StoreKind::Memory);
        assert_eq!(
            opened.line.to_string(),
            "the tokens stay in memory (no keychain: no session bus; no key of the file store in MCP_BRIDGE_TOKEN_KEY or --token-key-file): each start needs a new sign-in"
        );
    }

    #[test]
    fn auto_with_a_key_and_no_keychain_uses_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().to_string_lossy().into_owned();
        let env = move |name: &str| match name {
            "XDG_STATE_HOME" => Some(state.clone()),
            "MCP_BRIDGE_TOKEN_KEY" => Some("0f".repeat(32)),
            _ => None,
        };
        let opened = open_with(TokenStoreChoice::Auto, None, &env, &no_keychain).unwrap();
        assert_eq!(opened.store.kind(), StoreKind::File);
        let tokens = dir.path().join("mcp-bridge-rs/vscode/tokens");
        assert_eq!(
            opened.line.to_string(),
            format!("the tokens are in encrypted files in {}", tokens.display())
        );
    }

    #[test]
    fn an_explicit_store_that_does_not_open_is_an_error_without_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().to_string_lossy().into_owned();
        let env = move |name: &str| match name {
            "XDG_STATE_HOME" => Some(state.clone()),
            "MCP_BRIDGE_TOKEN_KEY" => Some("zz-secret-zz".into()),
            _ => None,
        };
        let error = open_with(TokenStoreChoice::File, None, &env, &no_keychain).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the key of MCP_BRIDGE_TOKEN_KEY is not 64 hexadecimal digits"
        );
        let error = open_with(TokenStoreChoice::Keychain, None, &env, &no_keychain);
        assert_eq!(
            error.unwrap_err().to_string(),
            "the keychain of the host did not open: no session bus"
        );
        let no_key = |name: &str| (name == "HOME").then(|| "/nonexistent".to_owned());
        assert_eq!(
            open_with(TokenStoreChoice::File, None, &no_key, &no_keychain).unwrap_err(),
            OpenError::KeyMissing
        );
        let opened = open_with(TokenStoreChoice::Memory, None, &no_key, &no_keychain).unwrap();
        assert_eq!(opened.line, TokenStoreInfo::MemoryChosen);
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_that_others_can_read_or_inside_the_token_directory_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().to_string_lossy().into_owned();
        let env = move |name: &str| (name == "XDG_STATE_HOME").then(|| state.clone());
        let key_file = dir.path().join("key");
        std::fs::write(&key_file, "1f".repeat(32)).unwrap();
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = open_with(TokenStoreChoice::File, Some(&key_file), &env, &no_keychain);
        assert_eq!(
            error.unwrap_err().to_string(),
            format!(
                "the key file {} of --token-key-file can be read by other accounts (mode 644): allow only your account, for example with chmod 600",
                key_file.display()
            )
        );
        let tokens = dir.path().join("mcp-bridge-rs/vscode/tokens");
        std::fs::create_dir_all(&tokens).unwrap();
        let inside = tokens.join("key");
        std::fs::write(&inside, "1f".repeat(32)).unwrap();
        std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o600)).unwrap();
        let error = open_with(TokenStoreChoice::File, Some(&inside), &env, &no_keychain);
        assert!(
            matches!(error, Err(OpenError::KeyInTokenDirectory(_, _))),
            "{error:?}"
        );
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let opened = open_with(TokenStoreChoice::File, Some(&key_file), &env, &no_keychain);
        assert_eq!(opened.unwrap().store.kind(), StoreKind::File);
    }
}
