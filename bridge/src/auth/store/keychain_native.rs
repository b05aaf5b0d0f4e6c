//! The keychain of the host through keyring-core and the native store of each
//! system: the Secret Service on Linux (zbus, pure Rust), the macOS Keychain, the
//! Windows Credential Manager.
//!
//! An item has the service `mcp-bridge-rs/mcp-bridge-vscode` and the item name as
//! its user (`secret-tool search service mcp-bridge-rs/mcp-bridge-vscode` lists
//! them). On Windows the credential is named `mcp-bridge-rs/mcp-bridge-vscode/<name>`
//! and holds at most 2560 bytes, so large values come in parts.
//!
//! On Linux, the bridge asks the Secret Service first whether the collection is
//! locked: without a display (no `DISPLAY`, no `WAYLAND_DISPLAY`) a locked
//! collection is [`StoreError::Unavailable`], never an unlock prompt that nobody
//! can answer.

use super::keychain::is_entry_name;
use super::{KeychainBackend, StoreError};
use keyring_core::{Entry, Error};
use std::collections::HashMap;
use std::sync::Arc;
use zeroize::Zeroizing;

/// The keychain service of every item.
pub const SERVICE: &str = "mcp-bridge-rs/mcp-bridge-vscode";

/// The regular expression of the Windows store's `search` for the targets of
/// [`SERVICE`] (`SERVICE/<name>`, see `NativeKeychain::entry`): the service has
/// no character that a regular expression reads as more than itself.
const WINDOWS_TARGET_PATTERN: &str = "^mcp-bridge-rs/mcp-bridge-vscode/";

/// What keyring-core's `search` of this system takes to list the items of
/// [`SERVICE`]: the Windows store matches its pattern on the target names; the
/// Secret Service and the macOS Keychain take the service attribute.
fn service_search() -> HashMap<&'static str, &'static str> {
    if cfg!(windows) {
        HashMap::from([("pattern", WINDOWS_TARGET_PATTERN)])
    } else {
        HashMap::from([("service", SERVICE)])
    }
}

/// The item name of a found item: its user (the Secret Service, the macOS
/// Keychain), else its Windows target name after `SERVICE/`.
fn item_name(entry: &Entry) -> Option<String> {
    if let Some((_, user)) = entry.get_specifiers() {
        return Some(user);
    }
    let attributes = entry.get_attributes().ok()?;
    attributes
        .get("target_name")?
        .strip_prefix(SERVICE)?
        .strip_prefix('/')
        .map(str::to_owned)
}

/// The keychain of the host.
pub struct NativeKeychain {
    store: Arc<keyring_core::api::CredentialStore>,
    #[cfg(target_os = "linux")]
    lock_check: linux::LockCheck,
}

impl std::fmt::Debug for NativeKeychain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeKeychain")
            .field("service", &SERVICE)
            .finish()
    }
}

impl NativeKeychain {
    /// Connects to the keychain of the host. `has_display` tells whether an unlock
    /// prompt can show.
    pub fn connect(has_display: bool) -> Result<Self, StoreError> {
        #[cfg(target_os = "linux")]
        {
            let lock_check = linux::LockCheck::new(has_display);
            lock_check.check()?;
            let store = zbus_secret_service_keyring_store::Store::new().map_err(unavailable)?;
            Ok(Self { store, lock_check })
        }
        #[cfg(target_os = "macos")]
        {
            let _ = has_display;
            let store = apple_native_keyring_store::keychain::Store::new().map_err(unavailable)?;
            Ok(Self { store })
        }
        #[cfg(windows)]
        {
            let _ = has_display;
            let store = windows_native_keyring_store::Store::new().map_err(unavailable)?;
            Ok(Self { store })
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
        {
            let _ = has_display;
            Err(StoreError::Unavailable(
                "this system has no keychain that the bridge knows".into(),
            ))
        }
    }

    fn entry(&self, name: &str) -> Result<Entry, StoreError> {
        #[cfg(target_os = "linux")]
        self.lock_check.check()?;
        let result = if cfg!(windows) {
            let target = format!("{SERVICE}/{name}");
            let modifiers = HashMap::from([("target", target.as_str())]);
            Entry::new_in_store_with_modifiers(&self.store, SERVICE, name, &modifiers)
        } else {
            Entry::new_in_store(&self.store, SERVICE, name)
        };
        result.map_err(failed)
    }
}

/// The text of a keyring error. Never the data of an item: `BadEncoding` and
/// `BadDataFormat` carry it.
fn describe(error: &Error) -> String {
    match error {
        Error::PlatformFailure(inner) | Error::NoStorageAccess(inner) => inner.to_string(),
        Error::BadEncoding(_) | Error::BadDataFormat(_, _) => {
            "an item of the keychain holds data that the bridge did not write".into()
        }
        Error::NoEntry => "no such item".into(),
        Error::Ambiguous(_) => "the keychain has more than one item of that name".into(),
        Error::TooLong(what, limit) => format!("the {what} is longer than {limit}"),
        Error::Invalid(what, why) => format!("the {what} is not valid: {why}"),
        _ => "the keychain failed".into(),
    }
}

fn unavailable(error: Error) -> StoreError {
    StoreError::Unavailable(describe(&error))
}

/// An error of an operation: a keychain that no longer answers is `Unavailable`.
fn failed(error: Error) -> StoreError {
    match error {
        Error::PlatformFailure(_) | Error::NoStorageAccess(_) => unavailable(error),
        other => StoreError::Failed(describe(&other)),
    }
}

impl KeychainBackend for NativeKeychain {
    fn get(&self, name: &str) -> Result<Option<Zeroizing<Vec<u8>>>, StoreError> {
        match self.entry(name)?.get_secret() {
            Ok(secret) => Ok(Some(Zeroizing::new(secret))),
            Err(Error::NoEntry) => Ok(None),
            Err(error) => Err(failed(error)),
        }
    }

    fn set(&self, name: &str, value: &[u8]) -> Result<(), StoreError> {
        self.entry(name)?.set_secret(value).map_err(failed)
    }

    fn delete(&self, name: &str) -> Result<bool, StoreError> {
        match self.entry(name)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(Error::NoEntry) => Ok(false),
            Err(error) => Err(failed(error)),
        }
    }

    fn part_limit(&self) -> Option<usize> {
        // CRED_MAX_CREDENTIAL_BLOB_SIZE: 5 * 512 bytes.
        cfg!(windows).then_some(2560)
    }

    /// Every item of the service, found by keyring-core's search on each system.
    fn delete_service(&self) -> Result<Option<usize>, StoreError> {
        #[cfg(target_os = "linux")]
        self.lock_check.check()?;
        let items = self.store.search(&service_search()).map_err(failed)?;
        let mut entries = 0;
        for item in items {
            let is_entry = item_name(&item).is_some_and(|name| is_entry_name(&name));
            match item.delete_credential() {
                Ok(()) => entries += usize::from(is_entry),
                Err(Error::NoEntry) => {}
                Err(error) => return Err(failed(error)),
            }
        }
        Ok(Some(entries))
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::StoreError;
    use secret_service::EncryptionType;
    use secret_service::blocking::SecretService;
    use std::sync::Mutex;

    /// Whether the default collection is locked, asked before each operation.
    pub(super) struct LockCheck {
        has_display: bool,
        service: Mutex<Option<SecretService<'static>>>,
    }

    impl LockCheck {
        pub(super) fn new(has_display: bool) -> Self {
            Self {
                has_display,
                service: Mutex::new(None),
            }
        }

        pub(super) fn check(&self) -> Result<(), StoreError> {
            let mut service = self
                .service
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if service.is_none() {
                *service = Some(SecretService::connect(EncryptionType::Plain).map_err(text)?);
            }
            let Some(connected) = service.as_ref() else {
                return Err(StoreError::Unavailable(
                    "the Secret Service does not answer".into(),
                ));
            };
            let locked = connected
                .get_default_collection()
                .and_then(|collection| collection.is_locked());
            match locked {
                Ok(false) => Ok(()),
                Ok(true) if self.has_display => Ok(()),
                Ok(true) => Err(StoreError::Unavailable(
                    "the collection of the Secret Service is locked, and without a display the bridge shows no unlock prompt".into(),
                )),
                Err(error) => {
                    // A connection to a daemon that died is useless: connect anew next time.
                    *service = None;
                    Err(text(error))
                }
            }
        }
    }

    fn text(error: secret_service::Error) -> StoreError {
        StoreError::Unavailable(format!("the Secret Service does not answer: {error}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windows_pattern_matches_the_targets_of_the_service_and_no_other() {
        assert_eq!(WINDOWS_TARGET_PATTERN, format!("^{SERVICE}/"));
        // Only letters, digits, '-' and '/': each matches itself in a regular expression.
        assert!(
            SERVICE
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'/')
        );
        let spec = service_search();
        if cfg!(windows) {
            assert_eq!(spec.get("pattern"), Some(&WINDOWS_TARGET_PATTERN));
        } else {
            assert_eq!(spec.get("service"), Some(&SERVICE));
        }
    }

    /// A failure of the platform says what the platform said (the line of a
    /// keychain that stopped to answer names it); an item that the bridge did not
    /// write never shows its data.
    #[test]
    fn a_keychain_error_says_what_failed_and_never_the_data_of_an_item() {
        let platform = || Box::new(std::io::Error::other("the D-Bus connection closed"));
        assert_eq!(
            describe(&Error::PlatformFailure(platform())),
            "the D-Bus connection closed"
        );
        assert_eq!(
            describe(&Error::NoStorageAccess(platform())),
            "the D-Bus connection closed"
        );
        assert_eq!(
            describe(&Error::BadEncoding(b"secret-bytes".to_vec())),
            "an item of the keychain holds data that the bridge did not write"
        );
        assert_eq!(describe(&Error::NoEntry), "no such item");
        assert_eq!(
            describe(&Error::Ambiguous(Vec::new())),
            "the keychain has more than one item of that name"
        );
        assert_eq!(
            describe(&Error::TooLong("password".into(), 2560)),
            "the password is longer than 2560"
        );
        assert_eq!(
            describe(&Error::Invalid("service".into(), "it is empty".into())),
            "the service is not valid: it is empty"
        );
    }
}
